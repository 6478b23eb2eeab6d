"""The MMD training loop and its command line (``python -m twilight_env.training.mmd``).

Each update plays ``deals`` fresh deals with the current policy
(:mod:`twilight_env.training.mmd.rollout`), takes one MMD step on them
(:mod:`twilight_env.training.mmd.learner`) and, every ``magnet_every`` updates, moves the
magnet. Every ``eval_every`` updates it appends a line to ``OUT/curve.jsonl`` (wall seconds
of training so far, updates, deals, decisions, the last update's losses, the 1-minute load
average and, on reduced decks, the exact NashConv in deal points,
:mod:`twilight_env.training.mmd.evaluate`) and writes the checkpoint
(:mod:`twilight_env.training.mmd.checkpoint`); it writes one more when the budget is spent
or on Ctrl-C / SIGTERM (after the update in progress).

Resuming (``--resume``) reads ``OUT/checkpoint.pt`` (digest and entries checked), drops curve
lines written after it, and continues with the same settings, weights, Adam state and random
generator: a run stopped and resumed makes the same updates as one that was not
(``tests/training/test_mmd.py``). The deals, the sampled actions and a new network's weights
come from ``--seed``; on CPU with a fixed ``threads`` a seed gives the same run.

While it trains, the CPU treats subnormal floats (below about 1.2e-38 in magnitude, in
float32) as 0 (``torch.set_flush_denormal``, flush-to-zero and denormals-are-zero, this
thread's torch and NumPy arithmetic): the networks that start from the shipped weights hold
tens of thousands of subnormal weights, and arithmetic on them takes a slow path, so an
update takes a fraction of the time (``python benchmarks/subnormal_weights.py --mmd-steps 4``
measures both, with the updates' losses side by side); the caller's setting is put back when the
call ends. The setting belongs to a thread: with ``threads`` above 1, torch's worker threads
take the one they were started under and keep it (the updates' worker threads compute with
subnormals as 0 only if the first parallel work of the process runs inside :func:`train`, and
keep doing so after it returns).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME
from twilight_env.util.atomic import write_text

from twilight_env.training.mmd import checkpoint as ckpt_io
from twilight_env.training.mmd.config import FLOAT_RANGES, INT_RANGES, MAX_WIDTH, STATE_DTYPES, MMDConfig, range_words
from twilight_env.training.mmd.learner import move_magnet, update
from twilight_env.training.mmd.rollout import play

CURVE_NAME = ckpt_io.CURVE_NAME
"""The curve file inside a run directory (JSON lines)."""


def initial_network(cfg: MMDConfig, init_weights: str | None):
    """A new network: ``init_weights`` (``"default"``: the shipped ``policy:default`` network;
    a ``.npz`` or expert-iteration checkpoint, an MMD run's ``policy.npz``) or fresh weights
    from ``cfg.seed`` of shape ``cfg.trunk`` / ``cfg.head``.

    Raises:
        ValueError: weights that are missing, damaged or for the other number of players, an
            empty ``init_weights``, or an MMD checkpoint (the message names its ``policy.npz``).
    """
    torch.manual_seed(cfg.seed)
    if init_weights is not None and (not isinstance(init_weights, str) or not init_weights.strip()):
        raise ValueError(f"--init-weights is empty: give 'default', a .npz weights file (an MMD run's "
                         f"{ckpt_io.POLICY_NAME}) or an expert-iteration checkpoint, got {init_weights!r}")
    if init_weights is None:
        return ckpt_io.build({"num_roles": 1 if cfg.players == 4 else 4, "trunk": list(cfg.trunk),
                              "head": list(cfg.head)}, cfg.players)
    from twilight_env.agents.exit import load_exit_checkpoint
    from twilight_env.agents.policy import default_weights

    path = default_weights(cfg.players) if init_weights == "default" else init_weights
    try:
        ckpt = load_exit_checkpoint(path, cfg.players)
    except ValueError:
        _refuse_mmd_checkpoint(path)
        raise
    model = ckpt_io.build(ckpt["net"], cfg.players, str(path))
    model.load_state_dict({k: v.float() for k, v in ckpt["model"].items()})
    return model


def _refuse_mmd_checkpoint(path) -> None:
    """Raise ValueError naming the run's ``policy.npz`` if ``path`` (a file or run folder) is an
    MMD checkpoint, which ``--init-weights`` does not read; return if it is none."""
    p = Path(path)
    p = p / CHECKPOINT_NAME if p.is_dir() else p
    if not p.is_file() or p.suffix == ".npz":
        return
    try:
        ckpt_io.load(p)
    except ValueError:
        return
    raise ValueError(f"{str(path)!r} is an MMD run's checkpoint: --init-weights reads its policy, "
                     f"{str(p.parent / ckpt_io.POLICY_NAME)!r} (where the checkpoint is kept alone, "
                     f"python -m twilight_env.training.mmd --out {p.parent} --export writes it)")


def _curve_point(out: Path, counters: dict, figures: dict, evaluator, model) -> dict:
    """Append one curve line (module docstring) and return it."""
    point = {"seconds": round(counters["seconds"], 2), "steps": counters["steps"], "deals": counters["deals"],
             "decisions": counters["decisions"], "load": round(os.getloadavg()[0], 2),
             **{k: round(v, 6) for k, v in figures.items()}}
    if evaluator is not None:
        nc, per = evaluator.nash_conv(model)
        point["nash_conv"] = round(nc, 6)
        point["per_player"] = [round(x, 6) for x in per]
    with open(out / CURVE_NAME, "a", encoding="utf-8") as f:
        f.write(json.dumps(point) + "\n")
    return point


def _trim_curve(out: Path, steps: int) -> None:
    """Drop curve lines written after the checkpoint being resumed (``steps`` updates), and a
    last line cut short (a stop while it was written: after the checkpoint, which is written
    after each curve point). Raises ValueError naming a damaged line before the last."""
    path = out / CURVE_NAME
    if not path.is_file():
        return
    lines = ckpt_io.curve_lines(path)  # a line that is not UTF-8: None, named below
    keep = []
    for i, (number, line) in enumerate(lines):
        try:
            at = json.loads(line)["steps"]
        except (ValueError, TypeError, KeyError):  # TypeError: None, or JSON that is no object
            at = None
        if isinstance(at, bool) or not isinstance(at, int):
            if i == len(lines) - 1:
                break
            shown = "not UTF-8" if line is None else repr(line[:80])
            raise ValueError(f"{str(path)!r} line {number} is not a curve point (JSON with 'steps'): {shown}; "
                             "the checkpoint is whole: remove that line, then resume")
        if at <= steps:
            keep.append(line)
    if len(keep) != len(lines):
        write_text(path, "".join(ln + "\n" for ln in keep))


def _start(cfg: MMDConfig | None, out: Path, resume: bool, init_weights: str | None, state_dtype: str | None = None):
    """``(model, magnet, optimizer, cfg, counters, rng)`` of a new or resumed line
    (``state_dtype``: on resume, the storage type of the checkpoints from now on)."""
    ckpt_io.check_run_folder(out)  # a file (RUN/checkpoint.pt) is refused naming its folder
    if resume:
        if out.is_dir() and not (out / CHECKPOINT_NAME).exists() or not out.exists():
            why = "the folder does not exist" if not out.exists() else f"no {CHECKPOINT_NAME}"
            raise ValueError(f"no MMD run in {str(out)!r} to resume: {why}; --resume takes the --out folder of a run "
                             "that has written its first checkpoint (to start a new line there, leave out --resume)")
        state = ckpt_io.restore(ckpt_io.load(out))
        _trim_curve(out, state[4]["steps"])
        if state_dtype is not None:
            state[3].state_dtype = state_dtype
            state[3].validate()
        return state
    if (out / CHECKPOINT_NAME).exists():
        raise ValueError(f"{str(out)!r} already holds a run; add --resume to continue it, or give another --out")
    cfg.validate()
    model = initial_network(cfg, init_weights)  # bad weights fail before the folder is made
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot make the run folder {str(out)!r} ({e.strerror}); give a folder that can be "
                         "created") from None
    (out / CURVE_NAME).unlink(missing_ok=True)
    magnet = copy.deepcopy(model)
    for p in magnet.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    counters = {"steps": 0, "deals": 0, "decisions": 0, "seconds": 0.0}
    return model, magnet, optimizer, cfg, counters, np.random.default_rng(cfg.seed)


def _step(model, magnet, optimizer, cfg: MMDConfig, counters: dict, rng) -> dict:
    """One update: fresh deals, the MMD step at this update's learning rate, the counters, and
    the magnet move when due. Returns the update's figures (empty when no decision had a choice)."""
    traj = play(model, cfg.players, cfg.tricks, cfg.deals, rng, cfg.explore)
    figures = {}
    if len(traj.actions):
        for group in optimizer.param_groups:
            group["lr"] = cfg.lr_at(counters["steps"])
        figures = update(model, magnet, optimizer, traj, cfg)
    counters["steps"] += 1
    counters["deals"] += traj.deals
    counters["decisions"] += traj.decisions
    if counters["steps"] % cfg.magnet_every == 0:
        move_magnet(magnet, model, cfg.magnet_tau)
    return figures


def _saves_at(cfg: MMDConfig, steps: int) -> bool:
    """Whether the line writes its checkpoint (rounded, ``state_dtype``) after update ``steps``."""
    return steps % cfg.eval_every == 0 or steps % cfg.checkpoint_every == 0


def _check_call(cfg, minutes, steps, resume: bool) -> None:
    """Refuse a :func:`train` call without a budget or with a bad one (``steps`` an integer
    >= 1, ``minutes`` a finite number > 0), or a new line without an :class:`MMDConfig`."""
    if minutes is None and steps is None:
        raise ValueError("give a budget: minutes or steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"steps must be an integer >= 1 (updates in all) or None, got {steps!r}")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, (int, float))
                                or not math.isfinite(minutes) or minutes <= 0):
        raise ValueError(f"minutes must be a finite number > 0 or None, got {minutes!r}")
    if not resume and not isinstance(cfg, MMDConfig):
        raise ValueError(f"a new line needs cfg, an MMDConfig (or resume=True), got "
                         f"{'None' if cfg is None else 'a ' + type(cfg).__name__}")


def flushes_subnormals() -> bool:
    """Whether this thread's CPU arithmetic treats subnormal floats as 0 (``torch.set_flush_denormal``
    on: a product whose operand or result is below ``np.finfo(np.float32).tiny`` gives 0); torch
    offers no reader of the setting, so this multiplies one such float32."""
    return float(np.float32(1e-38) * np.float32(0.5)) == 0.0


def train(out, cfg: MMDConfig | None = None, *, minutes: float | None = None, steps: int | None = None,
          resume: bool = False, init_weights: str | None = None, state_dtype: str | None = None, log=print) -> dict:
    """Train one MMD line in ``out`` until ``minutes`` of wall time or ``steps`` updates in all.

    A ``minutes`` budget ends at the first checkpoint step after it is spent (so the call
    leaves the small checkpoint, :attr:`MMDConfig.state_dtype`); ``steps`` and a signal end
    at once (their checkpoint stores the state whole, :func:`~twilight_env.training.mmd.checkpoint.write`).

    Args:
        out: the run directory (created; holds ``checkpoint.pt``, ``policy.npz``, ``curve.jsonl``).
        cfg: the settings of a new line (ignored with ``resume``: the checkpoint's are used).
        minutes: wall minutes for this call (None: no limit). steps: stop at this many
            updates in all (None: no limit); at least one of the two.
        resume: continue the line in ``out``. init_weights: see :func:`initial_network`.
        state_dtype: with ``resume``, change how the line's checkpoints store the magnet and
            the Adam moments from its next checkpoint on (:attr:`MMDConfig.state_dtype`;
            the one setting a resumed line may change); None keeps the checkpoint's.
        log: called with one line per curve point.

    Returns:
        the counters at the end (``steps``, ``deals``, ``decisions``, ``seconds``).

    Raises:
        ValueError: no budget or a bad one, no config for a new line or a bad one, ``out``
            holding a run without ``resume`` (or none with it), or a damaged checkpoint.
            FloatingPointError: a diverged loss.
    """
    _check_call(cfg, minutes, steps, resume)
    out = Path(out)
    model, magnet, optimizer, cfg, counters, rng = _start(cfg, out, resume, init_weights, state_dtype)
    torch.set_num_threads(cfg.threads)
    evaluator = None
    if cfg.tricks < 7:
        from twilight_env.training.mmd.evaluate import ReducedEvaluator
        evaluator = ReducedEvaluator(cfg.players, cfg.tricks)
    stop = {"signal": None}
    old = {s: signal.signal(s, lambda signum, frame: stop.update(signal=signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    t0, base, first = time.monotonic(), counters["seconds"], counters["steps"]
    figures: dict = {}
    flushing = flushes_subnormals()
    torch.set_flush_denormal(True)  # subnormal floats as 0 (FTZ/DAZ): several times faster (module docstring)
    try:
        if counters["steps"] == 0:
            log(json.dumps(_curve_point(out, counters, figures, evaluator, model)))
        last_saved = counters["steps"]
        while stop["signal"] is None and (steps is None or counters["steps"] < steps) \
                and (minutes is None or time.monotonic() - t0 < minutes * 60 or not _saves_at(cfg, counters["steps"])):
            figures = _step(model, magnet, optimizer, cfg, counters, rng) or figures
            counters["seconds"] = base + time.monotonic() - t0
            if counters["steps"] % cfg.eval_every == 0:
                log(json.dumps(_curve_point(out, counters, figures, evaluator, model)))
            if _saves_at(cfg, counters["steps"]):
                ckpt_io.write(out, model, magnet, optimizer, cfg, counters, rng)
                last_saved = counters["steps"]
        counters["seconds"] = base + time.monotonic() - t0
        if counters["steps"] != last_saved or not (out / CHECKPOINT_NAME).exists():
            if counters["steps"] % cfg.eval_every:
                log(json.dumps(_curve_point(out, counters, figures, evaluator, model)))
            ckpt_io.write(out, model, magnet, optimizer, cfg, counters, rng, exact=True)
    finally:
        torch.set_flush_denormal(flushing)  # the caller's setting
        for s, h in old.items():
            signal.signal(s, h)
    if steps is not None and first >= steps:
        log(f"the line was already at {first} update{'' if first == 1 else 's'} (--steps {steps} is the total "
            "to reach): nothing to do")
    if stop["signal"] is not None:
        log(f"stopped by signal {stop['signal']} at {counters['steps']} updates; continue with "
            f"python -m twilight_env.training.mmd --out {out} --resume --minutes M")
    return counters


def _in_range(kind: type, lo: float, hi: float, words: str):
    """argparse type: ``kind(text)`` within ``[lo, hi]``, or an error ``"must be WORDS, got
    'TEXT'"`` that argparse prefixes with the flag (NaN is refused: no comparison holds)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be {words}, got {text!r}")
        return value

    return parse


def _ranged(field: str):
    """argparse type of a config field: its value within its range (:data:`INT_RANGES`,
    :data:`FLOAT_RANGES`)."""
    kind, (lo, hi) = (int, INT_RANGES[field]) if field in INT_RANGES else (float, FLOAT_RANGES[field])
    return _in_range(kind, lo, hi, range_words(field))


_width = _in_range(int, 1, MAX_WIDTH, f"an integer in 1..{MAX_WIDTH} (each layer width)")
"""argparse type of one layer width of ``--trunk``/``--head``."""


def _parser() -> argparse.ArgumentParser:
    from twilight_env.util.argtypes import positive_float, positive_int

    p = argparse.ArgumentParser(prog="python -m twilight_env.training.mmd",
                                description="Magnetic Mirror Descent self-play (training/mmd/__init__.py).")
    p.add_argument("--out", required=True, help="run directory (checkpoint.pt, policy.npz, curve.jsonl)")
    p.add_argument("--minutes", type=positive_float, help="wall minutes for this call")
    p.add_argument("--steps", type=positive_int, help="stop at this many updates in all")
    p.add_argument("--resume", action="store_true", help="continue the run in --out with its own settings")
    p.add_argument("--init-weights", help="'default' (policy:default), a .npz or exit checkpoint (new runs only)")
    d = MMDConfig()
    for f in [*INT_RANGES, *FLOAT_RANGES]:
        p.add_argument("--" + f.replace("_", "-"), type=_ranged(f),
                       help=f"new runs only ({range_words(f)}; default {getattr(d, f)})")
    for f in ("trunk", "head"):
        p.add_argument("--" + f, type=_width, nargs="+", metavar="UNITS", help=f"new runs only (default {' '.join(map(str, getattr(d, f)))})")
    p.add_argument("--state-dtype", choices=STATE_DTYPES,
                   help=f"how checkpoints store the magnet and Adam moments (default {d.state_dtype}; "
                        "also with --resume, from the next checkpoint on)")
    p.add_argument("--export", action="store_true",
                   help="only write OUT/policy.npz from OUT's checkpoint (a folder that keeps the checkpoint alone)")
    return p


def main(argv=None) -> int:
    """Command line (module docstring); returns the exit status (2 on a bad argument or checkpoint,
    1 on a file that cannot be written)."""
    args = _parser().parse_args(argv)
    given = {k: v for k, v in vars(args).items()
             if k not in ("out", "minutes", "steps", "resume", "init_weights", "export")
             and v is not None and not (args.resume and k == "state_dtype")}
    try:
        if not args.out.strip():
            raise ValueError("--out is empty: give the run folder (new, or a run's to --resume or --export)")
        if args.export:
            _export_only(args, given)
            print(ckpt_io.export_policy(args.out))
            return 0
        if args.minutes is None and args.steps is None:
            raise ValueError("give --minutes or --steps")
        shaped = [f for f in ("trunk", "head") if getattr(args, f) is not None]
        if args.init_weights is not None and shaped:
            raise ValueError(f"--init-weights keeps its network's shape; drop {', '.join('--' + f for f in shaped)}")
        if args.resume and (given or args.init_weights):
            raise ValueError(f"--resume continues with the checkpoint's settings; drop "
                             f"{', '.join('--' + k.replace('_', '-') for k in [*given, *(['init_weights'] if args.init_weights else [])])}")
        cfg = None if args.resume else MMDConfig(**{k: tuple(v) if k in ("trunk", "head") else v
                                                    for k, v in given.items()})
        train(args.out, cfg, minutes=args.minutes, steps=args.steps, resume=args.resume,
              init_weights=args.init_weights, state_dtype=args.state_dtype if args.resume else None,
              log=lambda line: print(line, flush=True))
    except (ValueError, FloatingPointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a folder or file that cannot be written
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _export_only(args, given: dict) -> None:
    """Refuse the training flags given with ``--export``, which only writes ``OUT/policy.npz``."""
    extra = [*(["--resume"] if args.resume else []), *(["--minutes"] if args.minutes is not None else []),
             *(["--steps"] if args.steps is not None else []),
             *(["--init-weights"] if args.init_weights is not None else []),
             *("--" + k.replace("_", "-") for k in given), *(["--state-dtype"] if args.resume and args.state_dtype else [])]
    if extra:
        raise ValueError(f"--export only writes {str(Path(args.out) / ckpt_io.POLICY_NAME)!r} from the checkpoint; "
                         f"drop {', '.join(extra)}")


__all__ = ["flushes_subnormals", "CURVE_NAME", "initial_network", "main", "train"]
