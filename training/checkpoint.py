"""Inference-only copies of training checkpoints (the shipped ``agents/weights``).

The checkpoint format, atomic writes and checked loads are in :mod:`twilight_env.agents.nn.checkpoint`
(the ``neural`` agent reads what the trainer writes).
"""

from __future__ import annotations

import os

from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint, save_checkpoint


def export_weights(src: str | os.PathLike, dst: str | os.PathLike) -> dict:
    """Write a small inference-only copy of a checkpoint (no optimizer, no RNG states).

    Used to produce the shipped ``agents/weights/neural_{3,4}p.pt``. Returns the written dict.

    Raises:
        ValueError: as :func:`~twilight_env.agents.nn.checkpoint.load_checkpoint`.
    """
    ckpt = load_checkpoint(src)
    model_from_checkpoint(ckpt, str(src))  # check the weights fit
    small = {k: ckpt[k] for k in ("format", "version", "num_players", "net", "model", "decisions",
                                   "updates", "episodes", "config", "git") if k in ckpt}
    save_checkpoint(small, dst)
    return small


__all__ = ["export_weights"]
