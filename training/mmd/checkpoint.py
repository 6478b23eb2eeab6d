"""One small checkpoint per MMD training line: weights, magnet, Adam state, counters, RNG.

Written atomically with its content digest (:func:`twilight_env.agents.nn.checkpoint.save_checkpoint`:
temporary file, ``fsync``, ``os.replace``; the SHA-256 of the file in its zip comment) and read
back only after the digest and every entry are checked
(:func:`twilight_env.training.checkpoint.load_resume_checkpoint`). Beside it, ``policy.npz``
holds the policy alone in the shipped weights' format (``twilight-exit-npz``,
:func:`~twilight_env.agents.nn.numpy_pv.save_pv_npz`, with the config's ``tricks``: the deck the
network was trained on), which the ``mmd`` and ``policy`` agents read; ``mmd`` refuses to play
it on deals of another deck.

| key | content |
|---|---|
| ``format``, ``version`` | ``"twilight-mmd"``, 1 |
| ``num_players`` | 3 or 4 |
| ``net`` | ``PVConfig.to_dict()`` of the network (and of the magnet) |
| ``model``, ``magnet`` | ``state_dict`` of the policy network (float32) and of the magnet (``state_dtype`` [1]) |
| ``optimizer`` | Adam ``state_dict`` (moments in ``state_dtype`` [1]; read back as float32) |
| ``config`` | :meth:`MMDConfig.to_dict <twilight_env.training.mmd.config.MMDConfig.to_dict>` |
| ``counters`` | ``steps`` (updates), ``deals``, ``decisions`` (all made), ``seconds`` (wall seconds of training so far, evaluations included) |
| ``rng`` | the NumPy bit-generator state of the run's one generator (JSON text) |
| ``git`` | git hash of the code that wrote it |

[1] float32 in a file written off the line's checkpoint steps (:func:`write`'s ``exact``).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import torch

from twilight_env.agents.exit import PolicyValueNet, PVConfig
from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, load_checkpoint, save_checkpoint
from twilight_env.agents.nn.features import num_roles
from twilight_env.agents.nn.numpy_pv import save_pv_npz

from twilight_env.training.checkpoint import (check_bitgen_state, check_count, check_entries, check_finite,
                                               check_layers, check_number, check_optimizer, fail,
                                               load_resume_checkpoint)
from twilight_env.training.mmd.config import STATE_DTYPES, MMDConfig

FORMAT = "twilight-mmd"
VERSION = 1
POLICY_NAME = "policy.npz"
"""File name of the policy export inside a run directory."""
COUNTERS = ("steps", "deals", "decisions", "seconds")
MOMENTS = ("exp_avg", "exp_avg_sq")
"""The Adam state entries stored in ``state_dtype``."""
KEYS = ("format", "version", "num_players", "net", "model", "magnet", "optimizer", "config", "counters", "rng", "git")


def round_state(magnet, optimizer, state_dtype: str) -> None:
    """Round the magnet's weights and the Adam moments to ``state_dtype`` in place (kept as
    float32 tensors holding the rounded values): what the checkpoint will store, so that the
    running line and one resumed from the file go on from the same numbers. ``"float32"``:
    nothing changes.

    Raises:
        ValueError: a ``state_dtype`` not in :data:`~twilight_env.training.mmd.config.STATE_DTYPES`.
    """
    if state_dtype not in STATE_DTYPES:
        raise ValueError(f"state_dtype must be one of {', '.join(STATE_DTYPES)}, got {state_dtype!r}")
    dtype = getattr(torch, state_dtype)
    with torch.no_grad():
        for t in [*magnet.parameters(), *(st[k] for st in optimizer.state.values() for k in MOMENTS if k in st)]:
            t.copy_(t.to(dtype))


def _stored(tensors: dict, state_dtype: str) -> dict:
    """Copies of ``{name: tensor}`` in the storage type (floating tensors only)."""
    dtype = getattr(torch, state_dtype)
    return {k: v.detach().cpu().to(dtype) if v.is_floating_point() else v.detach().cpu().clone()
            for k, v in tensors.items()}


def _stored_optimizer(optimizer, state_dtype: str) -> dict:
    """Adam's ``state_dict`` with its moments in the storage type (Adam's ``load_state_dict``
    casts them back to the parameters' float32)."""
    sd = optimizer.state_dict()
    sd["state"] = {i: {k: (v.to(getattr(torch, state_dtype)) if k in MOMENTS else v)
                       for k, v in st.items()} for i, st in sd["state"].items()}
    return sd


def write(out: str | os.PathLike, model, magnet, optimizer, cfg: MMDConfig, counters: dict, rng,
          exact: bool = False) -> Path:
    """Write ``out/checkpoint.pt`` and ``out/policy.npz`` (module table), each atomically.

    At the line's own checkpoint steps (``exact`` False) the magnet and the Adam moments are
    first rounded to ``cfg.state_dtype`` (:func:`round_state`) and the line goes on from the
    rounded values; a write off those steps (``exact``: a stop by signal, or a ``steps``
    budget between two checkpoint steps) stores them as float32 and rounds nothing, so that
    the resumed line makes the same updates as one that was never stopped.

    Returns:
        the checkpoint's path.

    Raises:
        OSError: a folder that cannot be written (one line naming the file).
    """
    from twilight_env.util.report import git_hash

    out = Path(out)
    path = out / CHECKPOINT_NAME
    dtype = "float32" if exact else cfg.state_dtype
    round_state(magnet, optimizer, dtype)
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    save_checkpoint({"format": FORMAT, "version": VERSION, "num_players": cfg.players, "net": model.cfg.to_dict(),
                     "model": state,
                     "magnet": _stored(magnet.state_dict(), dtype),
                     "optimizer": _stored_optimizer(optimizer, dtype), "config": cfg.to_dict(),
                     "counters": dict(counters), "rng": json.dumps(rng.bit_generator.state), "git": git_hash()}, path)
    save_pv_npz(out / POLICY_NAME, {k: v.numpy() for k, v in state.items()}, model.cfg.to_dict(), cfg.players,
                cfg.tricks)
    return path


def check(ckpt: dict, path: str) -> None:
    """Check every entry of an MMD checkpoint (module table).

    Raises:
        ValueError: naming the file and the first bad entry.
    """
    check_entries(ckpt, path, "the checkpoint", KEYS)
    try:
        cfg = MMDConfig.from_dict(ckpt["config"])
    except (ValueError, TypeError, KeyError) as e:
        fail(path, f"'config': {e}")
    if ckpt["num_players"] != cfg.players:
        fail(path, f"'num_players' {ckpt['num_players']!r} differs from the config's {cfg.players}")
    if not isinstance(ckpt["net"], dict):
        fail(path, "'net' must be a dict")
    check_layers(ckpt["net"], path, "'net'")
    model = build(ckpt["net"], cfg.players, path)
    for key in ("model", "magnet"):
        check_finite(ckpt[key], path, f"'{key}'")
        try:
            model.load_state_dict(ckpt[key])
        except (RuntimeError, TypeError, AttributeError) as e:
            fail(path, f"'{key}' does not fit the network in 'net': {str(e)[:160]}")
    check_optimizer(ckpt["optimizer"], model, path)
    counters = check_entries(ckpt["counters"], path, "'counters'", COUNTERS)
    for k in COUNTERS[:3]:
        check_count(counters[k], path, f"'counters' {k!r}")
    check_number(counters["seconds"], path, "'counters' 'seconds'", 0.0, 1e9)
    try:
        state = json.loads(ckpt["rng"])
    except (TypeError, ValueError):
        fail(path, "'rng' must be the JSON text of a NumPy bit-generator state")
    check_bitgen_state(state, path, "'rng'")


def build(net: dict, num_players: int, path: str = "network") -> PolicyValueNet:
    """A :class:`~twilight_env.agents.exit.PolicyValueNet` of shape ``net`` for ``num_players``.

    Raises:
        ValueError: a shape that is not a policy-value network's, or heads for the other variant.
    """
    try:
        cfg = PVConfig.from_dict(net)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: 'net' is not a policy-value network shape ({e})") from None
    if cfg.num_roles != num_roles(num_players):
        raise ValueError(f"{path}: {cfg.num_roles} heads, but {num_players} players need {num_roles(num_players)}")
    return PolicyValueNet(cfg)


def load(path: str | os.PathLike) -> dict:
    """Read an MMD checkpoint to resume (a file or a run directory), digest and entries checked.

    Raises:
        ValueError: a path that does not exist or a folder without ``checkpoint.pt`` (saying
            which folder it takes), or as
            :func:`twilight_env.training.checkpoint.load_resume_checkpoint`.
    """
    p = Path(path)
    if not p.exists() or (p.is_dir() and not (p / CHECKPOINT_NAME).exists()):
        why = "the folder does not exist" if not p.exists() else f"no {CHECKPOINT_NAME}"
        raise ValueError(f"no MMD run in {str(path)!r}: {why}; give the --out folder of a run of "
                         "python -m twilight_env.training.mmd that has written its first checkpoint")
    reader = functools.partial(load_checkpoint, fmt=FORMAT, version=VERSION, kind="mmd",
                               writer="`python -m twilight_env.training.mmd`",
                               remedy="restore it from a copy, or start a new line in another folder")
    return load_resume_checkpoint(path, check=check, load=reader)


def restore(ckpt: dict):
    """``(model, magnet, optimizer, cfg, counters, rng)`` of a checked checkpoint dict."""
    import numpy as np

    cfg = MMDConfig.from_dict(ckpt["config"])
    model, magnet = build(ckpt["net"], cfg.players), build(ckpt["net"], cfg.players)
    model.load_state_dict(ckpt["model"])
    magnet.load_state_dict(ckpt["magnet"])  # copied into the float32 parameters
    for p in magnet.parameters():
        p.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    optimizer.load_state_dict(ckpt["optimizer"])
    rng = np.random.default_rng()
    rng.bit_generator.state = json.loads(ckpt["rng"])
    return model, magnet, optimizer, cfg, dict(ckpt["counters"]), rng


CURVE_NAME = "curve.jsonl"
"""The learning curve of a run folder, one JSON line per evaluation (``training/mmd/run.py`` writes it)."""
RUN_FILES = (CHECKPOINT_NAME, POLICY_NAME, CURVE_NAME)
"""The files of a run folder."""


def curve_lines(path: str | os.PathLike) -> list[tuple[int, str | None]]:
    """``(line number, text)`` of each non-blank line of a curve file (numbered from 1), the
    text None for a line that is not UTF-8, so a reader names that line as it names a line
    that is not JSON (a whole-file decode error would name neither).

    Raises:
        OSError: the file cannot be read.
    """
    out = []
    for number, raw in enumerate(Path(path).read_bytes().splitlines(), 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            out.append((number, None))
            continue
        if text.strip():
            out.append((number, text))
    return out


def check_run_folder(out: str | os.PathLike) -> Path:
    """``out`` as a :class:`~pathlib.Path` if it can be a run folder: a folder, or nothing yet.

    Raises:
        ValueError: ``out`` is a file; for one of :data:`RUN_FILES` (``RUN/checkpoint.pt``)
            the message names the run folder that holds it.
    """
    p = Path(out)
    if p.exists() and not p.is_dir():
        where = (f"the run folder, {str(p.parent)!r}" if p.name in RUN_FILES else
                 f"the folder for the run's {', '.join(RUN_FILES[:-1])} and {RUN_FILES[-1]}")
        raise ValueError(f"--out {str(p)!r} is a file, not a folder: give {where}")
    return p


def export_policy(out: str | os.PathLike) -> Path:
    """Write ``out/policy.npz`` (the ``mmd`` agent's file) from the checkpoint in ``out``
    (a folder that keeps only its checkpoint, as ``results/`` does), recording the deck of
    the checkpoint's config (``tricks``).

    Returns:
        the path written.

    Raises:
        ValueError: ``out`` a file (:func:`check_run_folder`), no checkpoint in ``out``, or a
            damaged one (:func:`load`).
    """
    ckpt = load(check_run_folder(out))
    path = Path(out) / POLICY_NAME
    save_pv_npz(path, {k: v.float().numpy() for k, v in ckpt["model"].items()}, ckpt["net"], ckpt["num_players"],
                ckpt["config"]["tricks"])
    return path


__all__ = ["CURVE_NAME", "FORMAT", "POLICY_NAME", "RUN_FILES", "VERSION", "build", "check", "check_run_folder",
           "curve_lines", "export_policy", "load", "restore", "round_state", "write"]
