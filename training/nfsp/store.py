"""The checkpoint of an NFSP training line: one small file (``checkpoint.pt``: config,
counters, weights, Adam states, RNG states, the buffers' counters) and the buffers' arrays
beside it (``buffers_<rounds>.npz``, kept out of git), both written atomically.

``checkpoint.pt`` is written by :func:`~twilight_env.agents.nn.checkpoint.save_checkpoint`
(temporary file, ``fsync``, ``os.replace``, the content digest in the zip comment) after the
buffers' file it names, whose SHA-256 it records; older buffer files are removed after.
A ``kill -9`` at any moment leaves a checkpoint and the buffers it names. A resume reads
nothing before both are checked (:func:`load_line`): the checkpoint's digest and every entry
(:func:`check_checkpoint`: keys, format, config ranges, counters, finite weights of the
config's shapes, the Adam states, the RNG states), then the buffers' SHA-256 and shapes.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import numpy as np
import torch

from twilight_env.agents.nn.checkpoint import save_checkpoint
from twilight_env.training.checkpoint import (check_bitgen_state, check_count, check_entries, check_finite,
                                              check_optimizer, fail, load_resume_checkpoint)
from twilight_env.training.nfsp.config import NfspConfig
from twilight_env.training.nfsp.learner import COUNTERS, NfspLine, make_net
from twilight_env.util.atomic import write_bytes

CHECKPOINT = "checkpoint.pt"
"""File name of a line's checkpoint in its run folder."""
KEYS = ("format", "version", "config", "counts", "qnet", "qtarget", "avgnet", "q_opt", "avg_opt", "rng",
        "torch_rng", "replay", "reservoir", "buffers_file", "buffers_sha256", "extra")


def save_line(line: NfspLine, folder: str | os.PathLike, extra: dict | None = None) -> Path:
    """Write the line's buffers, then its checkpoint, into ``folder`` (module docstring).

    Args:
        line: the training line.
        folder: the run folder (created if missing).
        extra: small JSON-like data kept with the checkpoint (e.g. the curve's clock).

    Returns:
        the checkpoint's path.

    Raises:
        OSError: a file that cannot be written (the previous checkpoint stays).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ckpt, bufs = line.state()
    buf = io.BytesIO()
    np.savez(buf, **bufs)
    data = buf.getvalue()
    name = f"buffers_{line.counts['rounds']}.npz"
    write_bytes(folder / name, data)
    ckpt.update(buffers_file=name, buffers_sha256=hashlib.sha256(data).hexdigest(), extra=dict(extra or {}))
    save_checkpoint(ckpt, folder / CHECKPOINT)
    for old in folder.glob("buffers_*.npz"):
        if old.name != name:
            old.unlink(missing_ok=True)
    return folder / CHECKPOINT


def check_checkpoint(ckpt: dict, path: str) -> None:
    """Every entry of an NFSP checkpoint (module docstring).

    Raises:
        ValueError: naming the file and the entry.
    """
    check_entries(ckpt, path, "the checkpoint", KEYS)
    if ckpt["format"] != "twilight-nfsp" or ckpt["version"] != 1:
        fail(path, f"format {ckpt['format']!r} version {ckpt['version']!r}; expected 'twilight-nfsp' version 1")
    try:
        cfg = NfspConfig.from_dict(ckpt["config"])
    except (ValueError, TypeError) as e:
        fail(path, f"'config': {e}")
    check_entries(ckpt["counts"], path, "'counts'", COUNTERS)
    for k in COUNTERS:
        check_count(ckpt["counts"][k], path, f"'counts' {k!r}")
    net = make_net(cfg.hidden, 0)
    for name in ("qnet", "qtarget", "avgnet"):
        sd = ckpt[name]
        ref = net.state_dict()
        if not isinstance(sd, dict) or set(sd) != set(ref) or any(
                not isinstance(sd[k], torch.Tensor) or sd[k].shape != ref[k].shape for k in ref):
            fail(path, f"{name!r} does not hold the weights of the config's network {tuple(cfg.hidden)}")
        check_finite(sd, path, repr(name))
    for name in ("q_opt", "avg_opt"):
        check_optimizer(ckpt[name], net, path)
    check_bitgen_state(ckpt["rng"], path, "'rng'")
    t = ckpt["torch_rng"]
    if not isinstance(t, torch.Tensor) or t.dtype != torch.uint8 or t.shape != torch.get_rng_state().shape:
        fail(path, "'torch_rng' is not a torch generator state")
    check_entries(ckpt["replay"], path, "'replay'", ("size", "cursor"))
    check_entries(ckpt["reservoir"], path, "'reservoir'", ("size", "offered"))
    if not 0 <= ckpt["replay"]["size"] <= cfg.rl_buffer or not 0 <= ckpt["reservoir"]["size"] <= cfg.sl_buffer:
        fail(path, "a buffer's size exceeds its capacity")
    for part in ("replay", "reservoir"):
        for k, v in ckpt[part].items():
            check_count(v, path, f"{part!r} {k!r}")
    name = ckpt["buffers_file"]
    if not isinstance(name, str) or "/" in name or not name.startswith("buffers_") or not name.endswith(".npz"):
        fail(path, f"'buffers_file' must be a buffers_<rounds>.npz name, got {name!r}")
    if not isinstance(ckpt["buffers_sha256"], str) or len(ckpt["buffers_sha256"]) != 64:
        fail(path, "'buffers_sha256' must be 64 hex digits")


def _torch_load(p: Path) -> dict:
    try:
        return torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several kinds on a bad file
        raise ValueError(f"checkpoint {str(p)!r} cannot be read: {str(e).splitlines()[0][:200]}") from None


def load_line(folder: str | os.PathLike) -> tuple[NfspLine, dict]:
    """The training line saved in ``folder`` and its ``extra`` data, after every check.

    Raises:
        ValueError: a missing, edited or malformed checkpoint, or a buffers file that is
            missing or does not match its recorded SHA-256 or the checkpoint's counters.
    """
    folder = Path(folder)
    ckpt = load_resume_checkpoint(folder / CHECKPOINT, check=check_checkpoint, load=_torch_load)
    bpath = folder / ckpt["buffers_file"]
    try:
        data = bpath.read_bytes()
    except OSError as e:
        raise ValueError(f"the buffers file {str(bpath)!r} of the checkpoint cannot be read: {e.strerror}") from None
    if hashlib.sha256(data).hexdigest() != ckpt["buffers_sha256"]:
        raise ValueError(f"{str(bpath)!r} does not match the SHA-256 its checkpoint records (edited or damaged)")
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        bufs = {k: z[k] for k in z.files}
    line = NfspLine(NfspConfig.from_dict(ckpt["config"]))
    line.load(ckpt, bufs)
    return line, ckpt["extra"]
