"""Checkpoints of Deep Monte-Carlo Q-networks: atomic writes and checked loads.

The ``neural`` agent reads these files; ``twilight train`` (``twilight_env.training.train``) writes them.
A checkpoint is a plain dict readable with ``torch.load(path, weights_only=True)``:

| key | content |
|-----|---------|
| ``format`` | ``"twilight-dmc"`` |
| ``version`` | 1 |
| ``num_players`` | 3 or 4: the variant the network plays |
| ``net`` | network shape, ``NetConfig.to_dict()`` |
| ``model`` | ``state_dict`` of the :class:`~twilight_env.agents.nn.network.QNetwork` (CPU tensors) |
| ``optimizer`` | optimizer ``state_dict`` (absent in shipped weights) |
| ``decisions``, ``updates``, ``episodes`` | counters (decisions seen, gradient updates, deals) |
| ``config`` | ``TrainConfig.to_dict()`` |
| ``rng`` | NumPy bit-generator states and the torch CPU RNG state |
| ``buffer`` | the learner's replay buffer (rows int32, roles/actions int8, targets float32, ring position), so a resumed run does not restart from an empty buffer (absent in shipped weights) |
| ``update_credit``, ``recorded``, ``resumes`` | learner bookkeeping: fractional updates owed, samples recorded, times resumed (absent in shipped weights) |
| ``last_eval`` | the last evaluation logged: per opponent its figures and ``at_decisions`` (absent in shipped weights and in checkpoints written before it was added) |
| ``git`` | git hash of the code that trained it |

Only ``format``, ``version``, ``num_players``, ``net`` and ``model`` are needed to play.

Every file :func:`save_checkpoint` writes ends with its content digest: the zip archive's
comment (which ``torch.load`` and every zip reader skip) is ``twilight-sha256:`` and the
SHA-256 of the file's bytes without that comment, so an edit or a flipped bit anywhere in
the file is seen by :func:`checkpoint_digest` (``twilight train --resume`` and the other
trainers' resumes check it).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np
import torch

from twilight_env.agents.nn.network import NetConfig, QNetwork

FORMAT = "twilight-dmc"
VERSION = 1
CHECKPOINT_NAME = "checkpoint.pt"
"""File name of the last checkpoint inside a run directory."""


DIGEST_PREFIX = b"twilight-sha256:"
"""Start of the zip comment that carries a checkpoint's digest (64 hex digits follow)."""
_EOCD = b"PK\x05\x06"  # zip end-of-central-directory record: 22 bytes, then the comment
_TRAILER = len(DIGEST_PREFIX) + 64


def _stamp_digest(f) -> None:
    """Append the content digest to a checkpoint just written by ``torch.save`` into ``f``
    (opened ``w+b``): the SHA-256 of every byte so far becomes the zip comment. A file that
    does not end with a comment-free zip directory (not written by ``torch.save``) is left as is."""
    import hashlib

    f.flush()
    size = f.seek(0, os.SEEK_END)
    if size < 22:
        return
    f.seek(size - 22)
    if (tail := f.read(22))[:4] != _EOCD or tail[20:22] != b"\0\0":
        return
    h = hashlib.sha256()
    f.seek(0)
    while block := f.read(1 << 20):
        h.update(block)
    f.seek(size - 2)
    f.write(_TRAILER.to_bytes(2, "little") + DIGEST_PREFIX + h.hexdigest().encode("ascii"))


def checkpoint_digest(path: str | os.PathLike) -> bool:
    """Check the content digest a checkpoint file ends with (module docstring).

    Returns:
        True if it matches; False for a file without one (written before checkpoints
        carried one, or by another program).

    Raises:
        ValueError: naming the file: a digest that does not match the bytes (an edit, a
            flipped bit, a truncated file), a damaged digest, or an unreadable file.
    """
    import hashlib

    p = os.fspath(path)
    try:
        with open(p, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - 22 - _TRAILER))
            tail = f.read()
            stamped = DIGEST_PREFIX in tail or (len(tail) == 22 + _TRAILER and tail[:4] == _EOCD
                                                 and tail[20:22] == _TRAILER.to_bytes(2, "little"))
            if not stamped:
                return False  # no digest (a zip without a comment, or not a zip: torch.load says so)
            body = size - _TRAILER - 2
            if (len(tail) != 22 + _TRAILER or tail[:4] != _EOCD
                    or tail[20:22] != _TRAILER.to_bytes(2, "little") or not tail[22:].startswith(DIGEST_PREFIX)):
                raise ValueError(f"checkpoint {p!r} is damaged: it does not end with a zip directory and its "
                                 "twilight-sha256 digest (edited, truncated or not written by this package); "
                                 "restore it, or start a new run")
            saved = tail[22 + len(DIGEST_PREFIX):]
            h = hashlib.sha256()
            f.seek(0)
            left = body
            while left > 0 and (block := f.read(min(1 << 20, left))):
                h.update(block)
                left -= len(block)
            h.update(b"\0\0")
    except OSError as e:
        raise ValueError(f"cannot read checkpoint {p!r}: {e.strerror or e}") from None
    if h.hexdigest().encode("ascii") != saved:
        raise ValueError(f"checkpoint {p!r} does not match its sha256 digest: the file was edited or damaged after "
                         "it was written; restore it, or start a new run")
    return True


def save_checkpoint(obj: dict, path: str | os.PathLike) -> None:
    """Write ``obj`` with ``torch.save`` so that ``path`` always holds a whole checkpoint.

    The bytes go to a temporary file in the same folder (``{name}.tmp{pid}``), end with
    their content digest (module docstring), are flushed and ``fsync``-ed, and the file is then renamed onto ``path`` with ``os.replace`` (atomic
    on POSIX; the folder is ``fsync``-ed after it). A reader, a crash or a ``kill -9`` at any
    moment sees the previous checkpoint or the new one, never a partial file. If the write
    fails, the temporary file is removed and the error is raised; ``path`` is untouched.

    Raises:
        OSError: if the folder is not writable or the disk is full (one line naming ``path``).
    """
    path = Path(path)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        with open(tmp, "w+b") as f:
            torch.save(obj, f)
            _stamp_digest(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError):  # e.g. a full disk: one line naming the file
            raise OSError(e.errno, f"cannot write checkpoint {str(path)!r}: {e.strerror or e}") from None
        if isinstance(e, RuntimeError):  # torch's writer reports a failed write (full disk) as RuntimeError
            raise OSError(f"cannot write checkpoint {str(path)!r}: the write failed (disk full, or the file "
                          f"system refused it; {str(e).strip()[:120]})") from None
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (not possible on every OS)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _torch_load(p: Path, kind: str, writer: str, remedy: str):
    """``torch.load`` of a checkpoint file (``weights_only=True``), its failures as one ``ValueError``
    ending with ``remedy``."""
    try:
        return torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds on a damaged file
        raise ValueError(f"cannot read {kind} checkpoint {str(p)!r}: the file is corrupt, truncated or not a "
                         f"checkpoint written by {writer} ({type(e).__name__} while loading); {remedy}") from None


def _from_npz(p: Path, fmt: str, kind: str) -> dict:
    """The checkpoint dict (``format``, ``version``, ``num_players``, ``net``, ``model``) of a
    torch-free ``.npz`` export of a ``fmt`` checkpoint: the shipped weights are stored so
    (``agents/weights/*.npz``; format ``fmt + "-npz"``, :mod:`twilight_env.agents.nn.numpy_net` and
    :mod:`twilight_env.agents.nn.numpy_pv`), and the torch agents and trainers read them here.

    Raises:
        ValueError: a damaged file, or an ``.npz`` of another format (naming the file).
    """
    from twilight_env.agents.nn.npz_file import read_weights_npz

    meta, params = read_weights_npz(p, f"{kind} weights")
    if not isinstance(meta, dict) or meta.get("format") != f"{fmt}-npz":
        found = meta.get("format") if isinstance(meta, dict) else None
        raise ValueError(f"{str(p)!r} is not a {fmt}-npz weights file (the .npz export of a {fmt} checkpoint); "
                         f"its format is {found!r}")
    return {"format": fmt, "version": meta.get("version"), "num_players": meta.get("num_players"),
            "net": meta.get("net"), "model": {k: torch.from_numpy(np.array(v, dtype=np.float32))
                                             for k, v in params.items()}}


def load_checkpoint(path: str | os.PathLike, num_players: int | None = None, fmt: str = FORMAT,
                    version: int = VERSION, kind: str = "neural", writer: str = "`twilight train`",
                    remedy: str = "give a checkpoint file, a run directory, or 'default'") -> dict:
    """Load and check a checkpoint (``weights_only=True``).

    Args:
        path: a checkpoint file, a run directory holding ``checkpoint.pt``, or a torch-free
            ``.npz`` export of such a checkpoint (the shipped weights; no optimizer state).
        num_players: if given, the variant the caller needs (3 or 4).
        fmt, version: the ``format`` and ``version`` the file must carry (default the
            ``twilight-dmc`` checkpoints of this module; ``twilight_env.agents.exit`` reads its own).
        kind, writer: words for the error messages (the agent and the command that
            writes such files).
        remedy: what the message of an unreadable file ends with (what to do instead; a
            resume says how to go on without the file).

    Returns:
        the checkpoint dict (module table).

    Raises:
        ValueError: if the file is missing, unreadable or corrupt, not a ``fmt``
            checkpoint, or trained for another number of players.
    """
    p = Path(path)
    if p.is_dir():
        p = p / CHECKPOINT_NAME
        if not p.is_file():
            raise ValueError(f"{kind} checkpoint not found: the run directory {str(p.parent)!r} holds no "
                             f"{CHECKPOINT_NAME} (the run stopped before writing its first checkpoint; "
                             f"start a new run)")
    if p.exists() and not p.is_file():
        raise ValueError(f"{kind} checkpoint {str(p)!r} is not a regular file (a device, a pipe, ...); give a "
                         f"checkpoint file written by {writer}, a run directory, or 'default'")
    if not p.is_file():
        raise ValueError(f"{kind} checkpoint not found: {str(path)!r} (give a checkpoint file written by "
                         f"{writer}, its .npz export, a run directory, or 'default')")
    if p.suffix == ".npz":
        ckpt = _from_npz(p, fmt, kind)
    else:
        ckpt = _torch_load(p, kind, writer, remedy)
    if not isinstance(ckpt, dict) or ckpt.get("format") != fmt:
        found = f"its format is {ckpt.get('format')!r}" if isinstance(ckpt, dict) else "it is no dict"
        raise ValueError(f"{str(p)!r} is not a {fmt} checkpoint (expected a dict with format={fmt!r}; {found})")
    if ckpt.get("version") != version:
        raise ValueError(f"{str(p)!r} has checkpoint version {ckpt.get('version')!r}; this code reads version {version}")
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
        ValueError: if the weights do not fit the stored shape (corrupt checkpoint), in one
            line naming the first weight that differs. The shapes are compared on torch's
            ``meta`` device before the network is built, so an edited ``net`` larger than
            the stored weights allocates nothing.
    """
    try:
        net = NetConfig.from_dict(ckpt["net"])
        with torch.device("meta"):
            wanted = {k: tuple(v.shape) for k, v in QNetwork(net).state_dict().items()}
        stored = {k: tuple(getattr(v, "shape", ())) for k, v in ckpt["model"].items()}
        if stored != wanted:
            k = next((k for k in wanted if stored.get(k) != wanted[k]), None)
            k = k if k is not None else next(k for k in stored if k not in wanted)
            raise ValueError(f"checkpoint {path!r} has weights that do not fit its network: {k} is "
                             f"{list(stored[k]) if k in stored else 'missing'}, the network {ckpt['net']!r} "
                             f"needs {list(wanted[k]) if k in wanted else 'no such weight'}")
        model = QNetwork(net)
        model.load_state_dict({k: v.float() for k, v in ckpt["model"].items()})
    except (KeyError, TypeError, RuntimeError, AttributeError) as e:
        raise ValueError(f"checkpoint {path!r} has weights that do not fit its network: "
                         f"{type(e).__name__}: {' '.join(str(e).split())[:200]}") from None
    expected_roles = (1,) if ckpt["num_players"] == 4 else (1, 4)
    if net.num_roles not in expected_roles:
        raise ValueError(f"checkpoint {path!r}: {net.num_roles} heads for {ckpt['num_players']} players "
                         f"(expected {expected_roles})")
    return model.eval()


__all__ = ["FORMAT", "VERSION", "CHECKPOINT_NAME", "DIGEST_PREFIX", "checkpoint_digest", "save_checkpoint",
           "load_checkpoint", "model_from_checkpoint"]
