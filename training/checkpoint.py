"""Checkpoints of the Deep Monte-Carlo trainer: atomic writes and checked loads.

A checkpoint is a plain dict readable with ``torch.load(path, weights_only=True)``:

| key | content |
|-----|---------|
| ``format`` | ``"twilight-dmc"`` |
| ``version`` | 1 |
| ``num_players`` | 3 or 4: the variant the network plays |
| ``net`` | network shape, ``NetConfig.to_dict()`` |
| ``model`` | ``state_dict`` of the :class:`~training.networks.QNetwork` (CPU tensors) |
| ``optimizer`` | optimizer ``state_dict`` (absent in shipped weights) |
| ``decisions``, ``updates``, ``episodes`` | counters (decisions seen, gradient updates, deals) |
| ``config`` | ``TrainConfig.to_dict()`` |
| ``rng`` | NumPy bit-generator states and the torch CPU RNG state |
| ``buffer`` | the learner's replay buffer (rows int32, roles/actions int8, targets float32, ring position), so a resumed run does not restart from an empty buffer (absent in shipped weights) |
| ``git`` | git hash of the code that trained it |
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from .networks import NetConfig, QNetwork

FORMAT = "twilight-dmc"
VERSION = 1
CHECKPOINT_NAME = "checkpoint.pt"
"""File name of the last checkpoint inside a run directory."""


def save_checkpoint(obj: dict, path: str | os.PathLike) -> None:
    """Write ``obj`` with ``torch.save`` to a temporary file, then ``os.replace`` it onto ``path``
    (atomic on POSIX: readers see the old or the new file, never a partial one)."""
    path = Path(path)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str | os.PathLike, num_players: int | None = None) -> dict:
    """Load and check a checkpoint (``weights_only=True``).

    Args:
        path: a checkpoint file, or a run directory holding ``checkpoint.pt``.
        num_players: if given, the variant the caller needs (3 or 4).

    Returns:
        the checkpoint dict (module table).

    Raises:
        ValueError: if the file is missing, unreadable or corrupt, not a ``twilight-dmc``
            checkpoint, or trained for another number of players.
    """
    p = Path(path)
    if p.is_dir():
        p = p / CHECKPOINT_NAME
    if not p.is_file():
        raise ValueError(f"neural checkpoint not found: {str(p)!r} (give a checkpoint file written by "
                         f"`twilight train`, a run directory, or 'default')")
    try:
        ckpt = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds on a damaged file
        raise ValueError(f"cannot read neural checkpoint {str(p)!r}: the file is corrupt, truncated or not a "
                         f"checkpoint written by `twilight train` ({type(e).__name__} while loading); give a "
                         f"checkpoint file, a run directory, or 'default'") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"{str(p)!r} is not a twilight-dmc checkpoint (expected a dict with format={FORMAT!r})")
    if ckpt.get("version") != VERSION:
        raise ValueError(f"{str(p)!r} has checkpoint version {ckpt.get('version')!r}; this code reads version {VERSION}")
    for key in ("num_players", "net", "model"):
        if key not in ckpt:
            raise ValueError(f"checkpoint {str(p)!r} lacks {key!r}: corrupt")
    if num_players is not None and ckpt["num_players"] != num_players:
        raise ValueError(f"checkpoint {str(p)!r} was trained for {ckpt['num_players']} players, "
                         f"but a {num_players}-player network is needed")
    return ckpt


def model_from_checkpoint(ckpt: dict, path: str = "checkpoint") -> QNetwork:
    """Build the network stored in a checkpoint dict.

    Raises:
        ValueError: if the weights do not fit the stored shape (corrupt checkpoint).
    """
    try:
        net = NetConfig.from_dict(ckpt["net"])
        model = QNetwork(net)
        model.load_state_dict({k: v.float() for k, v in ckpt["model"].items()})
    except (KeyError, TypeError, RuntimeError, AttributeError) as e:
        raise ValueError(f"checkpoint {path!r} has weights that do not fit its network: "
                         f"{type(e).__name__}: {str(e)[:200]}") from None
    expected_roles = (1,) if ckpt["num_players"] == 4 else (1, 4)
    if net.num_roles not in expected_roles:
        raise ValueError(f"checkpoint {path!r}: {net.num_roles} heads for {ckpt['num_players']} players "
                         f"(expected {expected_roles})")
    return model.eval()


def export_weights(src: str | os.PathLike, dst: str | os.PathLike) -> dict:
    """Write a small inference-only copy of a checkpoint (no optimizer, no RNG states).

    Used to produce the shipped ``agents/weights/neural_{3,4}p.pt``. Returns the written dict.

    Raises:
        ValueError: as :func:`load_checkpoint`.
    """
    ckpt = load_checkpoint(src)
    model_from_checkpoint(ckpt, str(src))  # check the weights fit
    small = {k: ckpt[k] for k in ("format", "version", "num_players", "net", "model", "decisions",
                                   "updates", "episodes", "config", "git") if k in ckpt}
    save_checkpoint(small, dst)
    return small


__all__ = ["FORMAT", "VERSION", "CHECKPOINT_NAME", "save_checkpoint", "load_checkpoint", "model_from_checkpoint",
           "export_weights"]
