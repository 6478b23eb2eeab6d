"""Smaller copies of training checkpoints: inference-only ones (the shipped
``agents/weights``) and resumable ones without the replay buffer (committed under ``results/``).

The checkpoint format, atomic writes and checked loads are in :mod:`twilight_env.agents.nn.checkpoint`
(the ``neural`` agent reads what the trainer writes).
"""

from __future__ import annotations

import math
import os

import torch

from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint, save_checkpoint


def export_weights(src: str | os.PathLike, dst: str | os.PathLike) -> dict:
    """Write a small inference-only copy of a checkpoint (no optimizer, no RNG states).

    Used to produce the shipped DMC weights (then exported to ``agents/weights/neural_{3,4}p.npz``
    by :func:`twilight_env.agents.nn.numpy_net.export_npz`). Returns the written dict.

    Raises:
        ValueError: as :func:`~twilight_env.agents.nn.checkpoint.load_checkpoint`.
    """
    ckpt = load_checkpoint(src)
    model_from_checkpoint(ckpt, str(src))  # check the weights fit
    small = {k: ckpt[k] for k in ("format", "version", "num_players", "net", "model", "decisions",
                                   "updates", "episodes", "config", "git") if k in ckpt}
    save_checkpoint(small, dst)
    return small


#: What :func:`compact_checkpoint` leaves out: the replay buffer and the in-process
#: generator's deals in progress and opponent pool (about 20 MB each at the default sizes).
BULKY_KEYS = ("buffer", "selfplay_state")


def compact_checkpoint(src: str | os.PathLike, dst: str | os.PathLike) -> dict:
    """Write a resumable copy of a DMC training checkpoint without its replay buffer and
    generator state (:data:`BULKY_KEYS`): weights, Adam state, counters, config, RNG states
    and last evaluations stay (about 5 MB for the shipped network's shape).

    ``twilight train --resume DIR`` continues such a copy (``DIR/checkpoint.pt``) from an
    empty replay buffer and new self-play deals: the step counts, optimizer state and
    learning rate carry on, but the run no longer equals an unstopped one. Written
    atomically. Returns the written dict.

    Raises:
        ValueError: as :func:`~twilight_env.agents.nn.checkpoint.load_checkpoint`, or the file
            has no optimizer state (an inference-only copy, which ``--init`` takes instead).
    """
    ckpt = load_checkpoint(src)
    if "optimizer" not in ckpt:
        raise ValueError(f"{os.fspath(src)!r} has no optimizer state (an inference-only copy?); "
                         "compact_checkpoint needs a training checkpoint; start a new run from it with --init")
    model_from_checkpoint(ckpt, str(src))  # check the weights fit
    small = {k: v for k, v in ckpt.items() if k not in BULKY_KEYS}
    save_checkpoint(small, dst)
    return small


# ---------------------------------------------------------------------------------
# resuming: every checkpoint checked in full before anything runs
# ---------------------------------------------------------------------------------

MAX_COUNT = 2 ** 62
"""Largest counter (decisions, updates, episodes, ...) a checkpoint may hold."""
MAX_TARGET = 10.0
"""Largest absolute replay-buffer target: targets are deal points / 360 (R5: at most 360), so
real ones lie in [-1, 1]."""
EVAL_KEYS = ("points", "ci95", "win_rate", "deals", "points_side0", "points_side1", "at_decisions")
"""The figures of each opponent in a checkpoint's ``last_eval`` (``train.evaluate``)."""
_DMC_REQUIRED = ("format", "version", "num_players", "net", "model", "optimizer", "decisions", "updates",
                 "episodes", "config")
_DMC_OPTIONAL = ("recorded", "resumes", "git", "rng", "buffer", "update_credit", "last_eval", "selfplay_state")


def fail(path: str, msg: str):
    """Raise the one-line error of a malformed checkpoint entry.

    Raises:
        ValueError: ``checkpoint PATH is malformed: MSG``.
    """
    raise ValueError(f"checkpoint {path!r} is malformed: {msg}")


def check_entries(obj, path: str, field: str, required, optional=()) -> dict:
    """``obj`` if it is a dict holding every ``required`` key and no key outside
    ``required`` and ``optional``.

    Raises:
        ValueError: naming the file, ``field`` and the missing or unknown keys.
    """
    if not isinstance(obj, dict):
        fail(path, f"{field} must be a dict, got {type(obj).__name__}")
    missing = [k for k in required if k not in obj]
    if missing:
        fail(path, f"{field} lacks {', '.join(map(repr, missing))}")
    unknown = sorted(str(k) for k in obj if k not in required and k not in optional)
    if unknown:
        fail(path, f"{field} holds unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
                    f"{', '.join(list(required) + list(optional))}")
    return obj


def check_count(value, path: str, field: str, high: int = MAX_COUNT) -> int:
    """``value`` if it is an int (not a bool) in ``0..high``.

    Raises:
        ValueError: naming the file, ``field`` and the range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        fail(path, f"{field} must be an integer in 0..{high:,}, got {value!r}")
    return value


def check_number(value, path: str, field: str, low: float = -math.inf, high: float = math.inf) -> float:
    """``float(value)`` if it is a finite number (or one-element tensor) in ``[low, high]``.

    Raises:
        ValueError: naming the file, ``field`` and the range.
    """
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or not low <= value <= high):
        fail(path, f"{field} must be a finite number in [{low:g}, {high:g}], got {value!r}")
    return float(value)


def check_finite(obj, path: str, field: str) -> None:
    """Every floating-point tensor and float inside ``obj`` (dicts, lists, tuples) is finite.

    Raises:
        ValueError: naming the file and the first entry holding NaN or inf.
    """
    if isinstance(obj, torch.Tensor):
        if obj.is_floating_point() and not bool(torch.isfinite(obj).all()):
            fail(path, f"{field} holds NaN or inf (weights or state from a diverged run are never resumed)")
    elif isinstance(obj, float):
        if not math.isfinite(obj):
            fail(path, f"{field} is {obj!r}; a finite number is needed")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            check_finite(v, path, f"{field}[{k!r}]")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            check_finite(v, path, f"{field}[{i}]")


def check_layers(net: dict, path: str, field: str) -> None:
    """``net["trunk"]`` and ``net["head"]`` are lists of at most ``MAX_LAYERS`` widths in
    ``1..MAX_WIDTH`` (:mod:`twilight_env.training.config`), so no edit builds a network no
    machine can hold.

    Raises:
        ValueError: naming the file and the part.
    """
    from twilight_env.training.config import MAX_LAYERS, MAX_WIDTH
    for part in ("trunk", "head"):
        v = net.get(part)
        if (not isinstance(v, (list, tuple)) or len(v) > MAX_LAYERS
                or any(isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= MAX_WIDTH for w in v)):
            fail(path, f"{field} {part!r} must be at most {MAX_LAYERS} layer widths in 1..{MAX_WIDTH:,}, got {v!r}")


def check_optimizer(state, model: torch.nn.Module, path: str) -> None:
    """An Adam ``state_dict`` that fits ``model``: one parameter group with a finite
    learning rate, betas and eps, and per parameter a step count and finite moments of
    the parameter's shape (second moments >= 0).

    Raises:
        ValueError: naming the file and the entry.
    """
    params = list(model.parameters())
    check_entries(state, path, "'optimizer'", ("state", "param_groups"))
    groups = state["param_groups"]
    if not isinstance(groups, list) or len(groups) != 1 or not isinstance(groups[0], dict):
        fail(path, "'optimizer' must hold one parameter group")
    g = groups[0]
    if g.get("params") != list(range(len(params))):
        fail(path, f"'optimizer' parameter group lists {g.get('params')!r}; the network has {len(params)} parameters")
    check_number(g.get("lr"), path, "'optimizer' lr", 0.0)
    check_number(g.get("eps"), path, "'optimizer' eps", 0.0)
    check_number(g.get("weight_decay", 0.0), path, "'optimizer' weight_decay", 0.0)
    betas = g.get("betas")
    if not isinstance(betas, (list, tuple)) or len(betas) != 2:
        fail(path, f"'optimizer' betas must be two numbers, got {betas!r}")
    for b in betas:
        check_number(b, path, "'optimizer' beta", 0.0, 1.0)
    st = state["state"]
    if not isinstance(st, dict) or any(k not in g["params"] for k in st):
        fail(path, "'optimizer' state must map parameter indices to their moments")
    for i, s in st.items():
        check_entries(s, path, f"'optimizer' state of parameter {i}", ("step", "exp_avg", "exp_avg_sq"))
        check_number(s["step"], path, f"'optimizer' step of parameter {i}", 0.0, float(MAX_COUNT))
        for k in ("exp_avg", "exp_avg_sq"):
            t = s[k]
            if not isinstance(t, torch.Tensor) or tuple(t.shape) != tuple(params[i].shape) or not t.is_floating_point():
                fail(path, f"'optimizer' {k} of parameter {i} must be a float tensor of shape "
                            f"{tuple(params[i].shape)}")
            check_finite(t, path, f"'optimizer' {k} of parameter {i}")
        if bool((s["exp_avg_sq"] < 0).any()):
            fail(path, f"'optimizer' exp_avg_sq of parameter {i} holds negative values")


def check_bitgen_state(state, path: str, field: str) -> None:
    """``state`` is a NumPy bit-generator state (it can be set on a fresh generator).

    Raises:
        ValueError: naming the file and ``field``.
    """
    import numpy as np
    try:
        np.random.default_rng().bit_generator.state = state
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError):
        fail(path, f"{field} is not a NumPy bit-generator state")


def _check_rng(rng, path: str) -> None:
    check_entries(rng, path, "'rng'", (), ("learner", "selfplay", "torch"))
    if "learner" in rng:
        check_bitgen_state(rng["learner"], path, "'rng' 'learner'")
    if rng.get("selfplay") is not None:
        check_bitgen_state(rng["selfplay"], path, "'rng' 'selfplay'")
    if "torch" in rng:
        t, now = rng["torch"], torch.get_rng_state()
        if not isinstance(t, torch.Tensor) or t.dtype != torch.uint8 or t.shape != now.shape:
            fail(path, f"'rng' 'torch' must be a uint8 tensor of shape {tuple(now.shape)}")
        try:
            torch.set_rng_state(t)
        except (RuntimeError, ValueError):
            fail(path, "'rng' 'torch' is not a torch generator state")
        finally:
            torch.set_rng_state(now)


def _check_buffer(buf, path: str, capacity: int) -> None:
    from twilight_env.agents.nn.features import NUM_MASKS
    check_entries(buf, path, "'buffer'", ("rows", "roles", "actions", "targets", "pos"))
    t = buf["targets"]
    if not isinstance(t, torch.Tensor) or t.dtype != torch.float32 or t.dim() != 1:
        fail(path, "'buffer' targets must be a 1-d float32 tensor")
    n = t.shape[0]
    if n > capacity:
        fail(path, f"'buffer' holds {n:,} samples, more than the run's buffer_size {capacity:,}")
    for name, dtype, shape, low, high in (("rows", torch.int32, (n, NUM_MASKS), 0, 2 ** 28 - 1),
                                          ("roles", torch.int8, (n,), 0, 3), ("actions", torch.int8, (n,), 0, 30)):
        v = buf[name]
        if not isinstance(v, torch.Tensor) or v.dtype != dtype or tuple(v.shape) != shape:
            fail(path, f"'buffer' {name} must be a {dtype} tensor of shape {shape}")
        if n and (int(v.min()) < low or int(v.max()) > high):
            fail(path, f"'buffer' {name} must lie in {low}..{high}")
    check_finite(t, path, "'buffer' targets")
    if n and float(t.abs().max()) > MAX_TARGET:
        fail(path, f"'buffer' targets must lie in [-{MAX_TARGET:g}, {MAX_TARGET:g}] (deal points / 360)")
    check_count(buf["pos"], path, "'buffer' pos", max(capacity - 1, 0))


def _check_last_eval(last, path: str, decisions: int) -> None:
    if not isinstance(last, dict):
        fail(path, "'last_eval' must be a dict")
    for name, figs in last.items():
        if not isinstance(name, str) or not isinstance(figs, dict):
            fail(path, "'last_eval' must map opponent names to their figures")
        check_entries(figs, path, f"'last_eval' {name!r}", EVAL_KEYS)
        for k, v in figs.items():
            if k in ("at_decisions", "deals"):
                check_count(v, path, f"'last_eval' {name!r} {k!r}", decisions if k == "at_decisions" else MAX_COUNT)
            else:
                check_number(v, path, f"'last_eval' {name!r} {k!r}")


def _check_selfplay_state(state, path: str, model: torch.nn.Module, cfg) -> None:
    if state is None:
        return
    if not isinstance(state, dict):
        fail(path, "'selfplay_state' must be a dict or None")
    if state.get("num_players") != cfg.players:
        fail(path, f"'selfplay_state' is for {state.get('num_players')!r} players, the run for {cfg.players}")
    check_count(state.get("num_games"), path, "'selfplay_state' num_games", 100_000)
    pool = state.get("pool", [])
    if not isinstance(pool, list) or len(pool) > cfg.pool_size:
        fail(path, f"'selfplay_state' pool must be a list of at most {cfg.pool_size} snapshots")
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    for i, snap in enumerate(pool):
        if not isinstance(snap, dict) or {k: tuple(getattr(v, "shape", ())) for k, v in snap.items()} != shapes:
            fail(path, f"'selfplay_state' pool snapshot {i} does not fit the network")
    check_finite(state, path, "'selfplay_state'")


def check_dmc_checkpoint(ckpt: dict, path: str, extra_keys: tuple = ()):
    """Check a DMC training checkpoint (``twilight train``; the best responder's with its
    ``extra_keys``, which :mod:`twilight_env.training.best_response` checks) in full,
    before anything runs: its keys (unknown ones refused), the settings
    (:meth:`TrainConfig.validate`, budget aside) and that they agree with the stored
    players and network shape,
    the counters (integers in 0..2^62), ``update_credit`` (finite, at most the updates a
    full buffer owes), weights, optimizer, replay buffer, RNG states, self-play state and
    last evaluation (types, shapes, ranges; every float finite).

    Returns:
        the :class:`~twilight_env.training.config.TrainConfig` stored in the checkpoint.

    Raises:
        ValueError: naming the file, the entry and what is allowed.
    """
    from twilight_env.agents.nn.features import num_roles
    from twilight_env.training.config import TrainConfig
    check_entries(ckpt, path, "the checkpoint", _DMC_REQUIRED + tuple(extra_keys), _DMC_OPTIONAL)
    players = ckpt["num_players"]
    if players not in (3, 4) or isinstance(players, bool):
        fail(path, f"'num_players' must be 3 or 4, got {players!r}")
    if not isinstance(ckpt["config"], dict):
        fail(path, "'config' must be a dict")
    try:
        cfg = TrainConfig.from_dict(ckpt["config"])
        cfg.minutes, cfg.decisions = 1.0, None  # the budget comes from the command line
        cfg.validate()
    except (TypeError, ValueError) as e:
        fail(path, f"'config': {e}")
    if cfg.players != players:
        fail(path, f"'num_players' is {players} but its config trains {cfg.players} players")
    net = check_entries(ckpt["net"], path, "'net'", ("num_roles", "trunk", "head"))
    check_layers(net, path, "'net'")
    roles = 1 if cfg.shared_head else num_roles(players)
    if net["num_roles"] != roles or list(net["trunk"]) != list(cfg.trunk) or list(net["head"]) != list(cfg.head):
        fail(path, f"'net' {net!r} is not the network its config builds (trunk {list(cfg.trunk)}, head "
                    f"{list(cfg.head)}, {roles} head(s))")
    model = model_from_checkpoint(ckpt, path)
    check_finite(ckpt["model"], path, "'model'")
    check_optimizer(ckpt["optimizer"], model, path)
    counts = {k: check_count(ckpt.get(k, 0), path, repr(k)) for k in ("decisions", "updates", "episodes", "recorded",
                                                                    "resumes")}
    if ckpt.get("git") is not None and not isinstance(ckpt["git"], str):
        fail(path, "'git' must be a string")
    credit_cap = cfg.reuse * cfg.buffer_size / cfg.batch_size + 1.0
    check_number(ckpt.get("update_credit", 0.0), path, "'update_credit'", 0.0, credit_cap)
    _check_rng(ckpt.get("rng", {}), path)
    if "buffer" in ckpt:
        _check_buffer(ckpt["buffer"], path, cfg.buffer_size)
    _check_last_eval(ckpt.get("last_eval", {}), path, counts["decisions"])
    _check_selfplay_state(ckpt.get("selfplay_state"), path, model, cfg)
    return cfg


def load_resume_checkpoint(path: str | os.PathLike, check=check_dmc_checkpoint, load=load_checkpoint) -> dict:
    """Load a training checkpoint to resume, after checking its content digest and every
    entry (nothing runs before this returns).

    Args:
        path: a checkpoint file or a run directory holding ``checkpoint.pt``.
        check: ``check(ckpt, path)`` raises ValueError on a bad entry (default
            :func:`check_dmc_checkpoint`, ``twilight train``'s; the best responder and
            expert iteration give theirs).
        load: reads the file (default :func:`~twilight_env.agents.nn.checkpoint.load_checkpoint`).

    Returns:
        the checkpoint dict.

    Raises:
        ValueError: naming the file: missing or unreadable, a digest that does not match
            its bytes (an edit or a flipped bit;
            :func:`~twilight_env.agents.nn.checkpoint.checkpoint_digest`), or any entry
            malformed or out of range. A file without a digest (written before
            checkpoints carried one) is checked entry by entry, after a one-line notice
            on stderr.
    """
    import sys
    from pathlib import Path

    from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, checkpoint_digest
    p = Path(path)
    if p.is_dir():
        p = p / CHECKPOINT_NAME
    verified = checkpoint_digest(p) if p.is_file() else None
    ckpt = load(p)
    if verified is False:
        print(f"note: checkpoint {str(p)!r} carries no content digest (written before checkpoints carried one); "
              "its entries are checked, but an edit to an in-range value cannot be detected", file=sys.stderr)
    check(ckpt, str(p))
    return ckpt


__all__ = ["BULKY_KEYS", "EVAL_KEYS", "MAX_COUNT", "MAX_TARGET", "check_bitgen_state", "check_count", "check_dmc_checkpoint",
           "check_entries", "check_finite", "check_layers", "check_number", "check_optimizer", "compact_checkpoint",
           "export_weights", "fail", "load_resume_checkpoint"]
