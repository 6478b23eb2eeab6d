"""Output files written whole or not at all, and write errors in one line naming the file.

Every result file of a run (``arena.json``, ``edge.md``, ``edge.png``, a ``--record`` file,
a saved deal file, a study checkpoint) is written through :func:`atomic_file`: the bytes go
to a temporary file in the same folder (``NAME.tmpPID-K``), which is flushed, ``fsync``-ed
and then renamed onto ``NAME`` with ``os.replace``. A reader, a crash or a full disk
therefore finds the previous file or the new one, never a half-written one; on an error
the temporary file is removed and an existing ``NAME`` is left as it was.

A failed write (``ENOSPC``: no space left on the device, ``EDQUOT``, ``EIO``, permission
denied, ...) raises :class:`WriteError`, an ``OSError`` whose message is one line naming
the file, e.g. ``cannot write 'out/arena.json': no space left on the device (errno 28)``.

Standard library only (this is a lowest-layer module, below records and experiments).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
from typing import Any, Iterator

_COUNTER = itertools.count()


class WriteError(OSError):
    """An output file that could not be written: one line naming the file and the cause.

    Attributes:
        errno: the system's error number (e.g. ``errno.ENOSPC``, 28), as for any ``OSError``.
        filename: the file that was being written.
    """

    def __init__(self, path: str, error: OSError):
        super().__init__(error.errno, _reason(error), os.fspath(path))

    def __str__(self) -> str:
        code = f" (errno {self.errno})" if self.errno else ""
        return f"cannot write {self.filename!r}: {self.strerror}{code}"


def _reason(error: OSError) -> str:
    """The cause of ``error`` in words, lower case (``no space left on the device``)."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return "no space left on the device" if error.errno == errno.ENOSPC else "disk quota exceeded"
    text = error.strerror or str(error) or type(error).__name__
    return text[:1].lower() + text[1:]


def write_error(path: str | os.PathLike, error: OSError) -> WriteError:
    """``error`` (met writing ``path``) as a :class:`WriteError`; one already is returned as it is."""
    return error if isinstance(error, WriteError) else WriteError(os.fspath(path), error)


def _temporary(path: str) -> tuple[str, int]:
    """A new temporary file beside ``path`` (``NAME.tmpPID-K``), opened for writing."""
    while True:
        tmp = f"{path}.tmp{os.getpid()}-{next(_COUNTER)}"
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "w", *, encoding: str = "utf-8",
                newline: str | None = None) -> Iterator[Any]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it replaces ``path``.

    Usage: ``with atomic_file("out/arena.json") as f: json.dump(doc, f)``.

    Args:
        path: the file to write (its folder must exist).
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        encoding, newline: as for :func:`open` in text mode.

    Raises:
        WriteError: (an ``OSError``) creating, writing, syncing or renaming failed, e.g. a
            full disk; the temporary file is removed and ``path`` is unchanged.
        Any exception of the ``with`` body, after the temporary file is removed.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = os.fspath(path)
    try:
        tmp, fd = _temporary(path)
    except OSError as e:
        raise write_error(path, e) from None
    done = False
    try:
        f = os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": encoding, "newline": newline}))
    except BaseException:
        os.close(fd)
        _remove(tmp)
        raise
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        done = True
    except OSError as e:
        raise write_error(path, e) from None
    finally:
        if not done:
            _remove(tmp)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_file`). Raises WriteError."""
    with atomic_file(path, "wb") as f:
        f.write(data)


def write_text(path: str | os.PathLike, text: str, *, newline: str | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_file`). Raises WriteError."""
    with atomic_file(path, "w", newline=newline) as f:
        f.write(text)


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = None, arrays_inline: bool = False) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (:func:`atomic_file`).

    The JSON text is made before the file is opened, so a value that is not JSON
    (``TypeError``) leaves no file behind.

    Args:
        indent: as ``json.dumps`` (None: one line).
        arrays_inline: the form of the result files with per-deal arrays
            (:func:`twilight_env.util.compact_json.dumps`: objects one key a line, arrays of
            numbers on one line); ``indent`` is then not used.

    Raises:
        WriteError: the file could not be written (e.g. a full disk); ``path`` unchanged.
        TypeError, ValueError: ``obj`` is not JSON data.
    """
    if arrays_inline:
        from twilight_env.util.compact_json import dumps

        write_text(path, dumps(obj) + "\n")
        return
    write_text(path, json.dumps(obj, indent=indent) + ("\n" if indent is not None else ""))


def save_figure(fig, path: str | os.PathLike, **options) -> None:
    """``fig.savefig`` onto ``path`` atomically (the format from the name's extension).

    Raises:
        WriteError: the file could not be written (e.g. a full disk); ``path`` unchanged.
    """
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lstrip(".").lower() or None
    with atomic_file(path, "wb") as f:
        fig.savefig(f, format=fmt, **options)


def check_can_write(path: str | os.PathLike, size: int = 1 << 16) -> None:
    """Check, before a long run, that a file of ``size`` bytes can be written beside ``path``:
    a temporary file there is filled, ``fsync``-ed and removed (``path`` itself is not
    touched). Catches a folder that cannot be written and a disk that is already full.

    Raises:
        WriteError: naming ``path`` and the cause.
    """
    path = os.fspath(path)
    try:
        tmp, fd = _temporary(path)
    except OSError as e:
        raise write_error(path, e) from None
    try:
        view = memoryview(b"\0" * size)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as e:
        raise write_error(path, e) from None
    finally:
        os.close(fd)
        _remove(tmp)


__all__ = ["WriteError", "atomic_file", "check_can_write", "save_figure", "write_bytes", "write_error", "write_json",
           "write_text"]
