"""The command line of NFSP training (``python -m twilight_env.training.nfsp``).

Usage::

    python -m twilight_env.training.nfsp --players 3 --tricks 1 --minutes 15 --out runs/nfsp_1t3p
    python -m twilight_env.training.nfsp --out runs/nfsp_1t3p --minutes 10 --resume

writes into ``--out``: ``checkpoint.pt`` and ``buffers_<rounds>.npz`` (the line, resumable;
:mod:`~twilight_env.training.nfsp.store`), ``avg_policy.npz`` (the average policy, for the
``nfsp`` agent: ``twilight arena nfsp:path=OUT/avg_policy.npz ...``) and ``curve.jsonl``, one
JSON object per evaluation: ``seconds`` (training wall time so far, self-play and gradient
steps, summed over sessions; evaluations not counted), ``decisions``, ``deals``,
``rl_steps``, ``sl_steps``, the last losses, and on a reduced deck (``--tricks`` < 7)
``nash_conv`` and ``per_player`` of the average policy
(:func:`~twilight_env.training.reduced_policy.learned_nash_conv`, deal points, R5) with
``eval_seconds``. The line is checkpointed at each evaluation and at the end; a resume
continues from the checkpoint (the curve cut back to it) and, with the same budget in
decisions, ends with the weights an unstopped run ends with.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from twilight_env.training.nfsp.config import NfspConfig
from twilight_env.training.nfsp.learner import NfspLine
from twilight_env.training.nfsp.store import CHECKPOINT, load_line, save_line
from twilight_env.util.atomic import write_bytes, write_text

CURVE = "curve.jsonl"
"""File name of the curve in the run folder."""


def parse_args(argv=None) -> argparse.Namespace:
    """The command line (module docstring); ``--help`` lists every option with its unit."""
    d = NfspConfig()
    ap = argparse.ArgumentParser(prog="python -m twilight_env.training.nfsp",
                                 description="Neural Fictitious Self-Play (Heinrich & Silver 2016)")
    ap.add_argument("--out", required=True, help="run folder (checkpoint, buffers, avg_policy.npz, curve.jsonl)")
    ap.add_argument("--resume", action="store_true", help="continue the line saved in --out (its settings)")
    ap.add_argument("--minutes", type=float, default=None, help="stop after this much training wall time")
    ap.add_argument("--decisions", type=int, default=None, help="stop at this many decisions in all")
    ap.add_argument("--eval-every", type=int, default=20_000,
                    help="decisions between evaluations and checkpoints (NashConv on a reduced deck)")
    ap.add_argument("--no-nash-conv", action="store_true",
                    help="skip NashConv during training (large reduced decks: evaluate the kept policies "
                         "afterwards with python -m twilight_env.training.nfsp.evaluate)")
    ap.add_argument("--keep-policies", action="store_true",
                    help="keep the average policy of every evaluation as avg_policy_<decisions>.npz")
    for name in ("players", "tricks", "seed", "eta", "games", "rl_buffer", "sl_buffer", "batch", "learn_every",
                 "rl_lr", "sl_lr", "target_every", "eps_start", "eps_end", "eps_decay", "min_buffer"):
        v = getattr(d, name)
        ap.add_argument("--" + name.replace("_", "-"), type=type(v), default=None,
                        help=f"{NfspConfig.__dataclass_fields__[name].type}; default {v} (new lines only)")
    ap.add_argument("--hidden", type=int, nargs="+", default=None, help=f"hidden widths; default {list(d.hidden)}")
    a = ap.parse_args(argv)
    if a.minutes is None and a.decisions is None:
        ap.error("give a budget: --minutes and/or --decisions")
    if (a.minutes is not None and not a.minutes > 0) or (a.decisions is not None and a.decisions < 1):
        ap.error("--minutes must be above 0 and --decisions at least 1")
    if a.eval_every < 1:
        ap.error("--eval-every must be at least 1 decision")
    return a


def _new_config(a: argparse.Namespace) -> NfspConfig:
    cfg = NfspConfig()
    for name in NfspConfig.__dataclass_fields__:
        v = getattr(a, name, None)
        if v is not None:
            setattr(cfg, name, tuple(v) if name == "hidden" else v)
    return cfg.validate()


class Evaluator:
    """NashConv of the average policy on the line's reduced deck (None on the full deck)."""

    def __init__(self, players: int, tricks: int, nash_conv: bool = True):
        self.tree = self.model = None
        if tricks < 7 and nash_conv:
            from twilight_env.training.reduced_solve import build_tree, make_model
            t0 = time.perf_counter()
            self.tree = build_tree(tricks, players)
            self.model = make_model(self.tree, "seats")
            self.build_seconds = time.perf_counter() - t0

    def __call__(self, line: NfspLine) -> dict:
        if self.tree is None:
            return {}
        from twilight_env.training.reduced_policy import learned_nash_conv
        t0 = time.perf_counter()
        nc, per = learned_nash_conv(self.tree, self.model, line.probs_fn)
        return {"nash_conv": nc, "per_player": [float(x) for x in per],
                "eval_seconds": round(time.perf_counter() - t0, 2)}


def _record(line: NfspLine, out: Path, seconds: float, curve: list, evaluate: Evaluator, keep: bool = False) -> None:
    """Evaluate, append the curve line, write the average policy and the checkpoint."""
    losses = {f"{k}_loss": (v if v == v else None) for k, v in line.losses.items()}  # None before the first step
    row = {"seconds": round(seconds, 2), **line.counts, **losses, **evaluate(line)}
    curve.append(json.dumps(row))
    write_text(out / CURVE, "\n".join(curve) + "\n")
    write_bytes(out / "avg_policy.npz", line.avg_policy_bytes())
    if keep:
        write_bytes(out / f"avg_policy_{line.counts['decisions']}.npz", line.avg_policy_bytes())
    save_line(line, out, {"seconds": seconds, "curve_lines": len(curve)})
    print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                   if k != "per_player"), flush=True)


def main(argv=None) -> int:
    """Train (module docstring); returns the exit status (0)."""
    a = parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.resume:
        line, extra = load_line(out)
        seconds = float(extra.get("seconds", 0.0))
        curve = (out / CURVE).read_text().splitlines()[:int(extra.get("curve_lines", 0))] if (out / CURVE).exists() else []
        print(f"resumed {out} at {line.counts['decisions']} decisions", flush=True)
    else:
        if (out / CHECKPOINT).exists():
            raise SystemExit(f"{out} already holds a line; add --resume to continue it, or choose another --out")
        line, seconds, curve = NfspLine(_new_config(a)), 0.0, []
    evaluate = Evaluator(line.cfg.players, line.cfg.tricks, not a.no_nash_conv)
    if not curve:
        _record(line, out, seconds, curve, evaluate, a.keep_policies)
    next_eval = (line.counts["decisions"] // a.eval_every + 1) * a.eval_every
    while (a.decisions is None or line.counts["decisions"] < a.decisions) and (
            a.minutes is None or seconds < 60 * a.minutes):
        t0 = time.perf_counter()
        line.round()
        seconds += time.perf_counter() - t0
        if line.counts["decisions"] >= next_eval:
            _record(line, out, seconds, curve, evaluate, a.keep_policies)
            next_eval = (line.counts["decisions"] // a.eval_every + 1) * a.eval_every
    if json.loads(curve[-1])["decisions"] != line.counts["decisions"]:
        _record(line, out, seconds, curve, evaluate, a.keep_policies)
    return 0
