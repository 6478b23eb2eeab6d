"""Smaller copies of training checkpoints: inference-only ones (the shipped
``agents/weights``) and resumable ones without the replay buffer (committed under ``results/``).

The checkpoint format, atomic writes and checked loads are in :mod:`twilight_env.agents.nn.checkpoint`
(the ``neural`` agent reads what the trainer writes).
"""

from __future__ import annotations

import os

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


__all__ = ["BULKY_KEYS", "compact_checkpoint", "export_weights"]
