"""Reading JSON that a person or a crashed run may have damaged: one clear line, never a traceback.

Every reader of the project's files (records, deal files, study checkpoints, the web
server's request bodies) goes through :func:`parse_json` or :func:`read_json`, so that a
truncated gzip stream, JSON nested deeper than any file of ours, a byte-order mark, a
folder where a file belongs or a file that is not JSON at all gives a
:class:`JsonFileError` naming the file and what is wrong.

Standard library only (this is a lowest-layer module, below records and experiments).
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import stat
import zlib
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted. The deepest file the project writes (a
match record) nests 6 levels; 64 leaves room for any hand-made file and stays far below
Python's recursion limit, so a hostile file is refused in one line instead of a
``RecursionError``."""

BOM = "\ufeff"


class JsonFileError(ValueError):
    """A file or text that is not the JSON it should be.

    The message names the source (a path, or a description such as ``"the request body"``)
    and what is wrong: missing, unreadable, truncated, not UTF-8, not JSON (with line and
    column), or nested deeper than :data:`MAX_DEPTH`.
    """


# A string from its opening quote to its closing quote, or to the end of the text when it is
# never closed (then the text is not JSON and json.loads says so). Possessive, DOTALL and the
# end-of-text alternative make every quote start one match that never backtracks, so the
# scan is linear: a pattern that fails on an unclosed string is retried from every later
# quote, which costs time quadratic in the text (65 '[', a '"', then '\\"' repeated:
# 17 s for 32 KB).
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_SLICE = 1 << 16


def nesting_depth(text: str, stop_above: int | None = None) -> int:
    """How deep arrays and objects nest in JSON ``text`` (brackets inside strings ignored).

    Linear in the text on every input (each character is looked at a bounded number of
    times by compiled regular expressions); a string that is never closed hides the rest
    of the text, which is then not JSON. A text that is not JSON gives some number, and
    :func:`json.loads` then says what is wrong.

    Args:
        text: the JSON text.
        stop_above: stop counting once the depth passes this (the result is then a depth
            reached, above ``stop_above``, not necessarily the deepest); None: count all.
    """
    brackets = _STRING.sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKET)
    depth = deepest = 0
    for start in range(0, len(brackets), _SLICE):  # slices: other threads run in between
        steps = list(itertools.accumulate(map(_STEP.__getitem__, brackets[start:start + _SLICE]), initial=depth))
        deepest = max(deepest, max(steps))
        depth = steps[-1]
        if stop_above is not None and deepest > stop_above:
            break
    return deepest


def parse_json(text: str | bytes, source: str, *, max_depth: int = MAX_DEPTH, max_size: int | None = None) -> Any:
    """Parse JSON text, refusing damage in one line; time and memory linear in the text.

    The standard library's C parser reads the text first (linear; it stops at the first
    error, and at Python's recursion limit, about 1,000 levels, with a ``RecursionError``),
    then a text with more than ``max_depth`` opening brackets has its nesting measured by
    :func:`nesting_depth` (linear on every input). So a text that is not JSON is refused
    after one pass of the C parser, and a 4 MiB text of any form is read or refused in well
    under a second (``benchmarks/json_parse.py`` prints the times).

    Args:
        text: the JSON text (``str``, or UTF-8 ``bytes``); a leading UTF-8 byte-order mark
            is accepted and dropped (editors on some systems write one).
        source: what the text is, for the message (a path, ``"the request body"``, ...).
        max_depth: deepest nesting of arrays and objects accepted.
        max_size: longest text accepted (bytes for ``bytes``, characters for ``str``), or
            None for no limit besides the caller's.

    Returns:
        The parsed value (dict, list, str, int, float, bool or None).

    Raises:
        JsonFileError: longer than ``max_size``, not UTF-8, not JSON (with line and
            column), nested deeper than ``max_depth``, or holding a number Python will not
            convert (an integer of more than 4,300 digits).
    """
    if max_size is not None and len(text) > max_size:
        unit = "bytes" if isinstance(text, (bytes, bytearray)) else "characters"
        raise JsonFileError(f"{source} is {len(text):,} {unit} long; at most {max_size:,} are accepted")
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise JsonFileError(f"{source} is not UTF-8 text (byte {e.start}: {e.reason})") from None
    if text.startswith(BOM):
        text = text[1:]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        msg = e.msg[:-3] if e.msg.endswith(" at") else e.msg  # "Unterminated string starting at"
        raise JsonFileError(f"{source} is not valid JSON: {msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:
        _check_depth(text, source, max_depth)
        raise JsonFileError(f"{source} nests arrays/objects too deeply to read") from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits (sys.get_int_max_str_digits)
        raise JsonFileError(f"{source} holds a value that cannot be read ({e})") from None
    # only texts with more opening brackets than the limit can be too deep
    if text.count("[") + text.count("{") > max_depth:
        _check_depth(text, source, max_depth)
    return value


def _check_depth(text: str, source: str, max_depth: int) -> None:
    if nesting_depth(text, stop_above=max_depth) > max_depth:
        raise JsonFileError(f"{source} nests arrays/objects more than {max_depth} levels deep; at most "
                            f"{max_depth} are accepted (no valid file of this kind nests so deep)")


def os_error_message(what: str, path: str, error: OSError) -> str:
    """One line for an ``OSError`` met opening or reading ``path``: missing, a folder,
    permission denied, or the system's own words."""
    if isinstance(error, FileNotFoundError):
        return f"{what} {path!r} does not exist"
    if isinstance(error, IsADirectoryError):
        return f"{what} {path!r} is a folder, not a file"
    if isinstance(error, PermissionError):
        return f"{what} {path!r} cannot be read (permission denied)"
    return f"{what} {path!r} cannot be read ({error.strerror or error})"


def open_binary(path: str | os.PathLike, what: str = "file"):
    """``path`` opened for reading bytes (through gzip when the name ends in ``.gz``), after
    checking that it is a regular file: a device such as ``/dev/zero`` or a pipe would never
    end.

    Raises:
        JsonFileError: missing, a folder, not a regular file, or not readable (naming ``path``).
    """
    path = os.fspath(path)
    try:
        if os.path.exists(path) and not os.path.isdir(path) and not stat.S_ISREG(os.stat(path).st_mode):
            raise JsonFileError(f"{what} {path!r} is not a regular file (a device, pipe or socket)")
        return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")
    except OSError as e:
        raise JsonFileError(os_error_message(what, path, e)) from None


MAX_BYTES = 1 << 30
"""Largest file :func:`read_text` reads whole (bytes, after gzip): 1 GiB. The project's largest
whole-read files (study checkpoints of tens of thousands of deals, match records) are a few
MB; line-by-line readers (``records.load_many``) have no such limit."""


def read_text(path: str | os.PathLike, what: str = "file", *, max_bytes: int = MAX_BYTES) -> str:
    """The whole text of ``path`` (gzip-decompressed when the name ends in ``.gz``).

    Args:
        path: the file.
        what: what the file should be, for the message (e.g. ``"record file"``).
        max_bytes: most bytes read (after decompression); a larger file is refused.

    Raises:
        JsonFileError: missing, a folder, not a regular file (``/dev/zero``, a pipe),
            larger than ``max_bytes``, unreadable, a damaged or truncated gzip stream, or not
            UTF-8; the message names ``path``.
    """
    path = os.fspath(path)
    gz = path.endswith(".gz")
    try:
        with open_binary(path, what) as f:
            raw = f.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise JsonFileError(f"{what} {path!r} holds more than {max_bytes:,} bytes"
                                f"{' uncompressed' if gz else ''}; no file of this kind is so large")
    except MemoryError:
        raise JsonFileError(f"{what} {path!r} is too large to read into memory") from None
    except EOFError:
        raise JsonFileError(f"{what} {path!r} is a truncated gzip file (it ends in the middle of "
                            "its compressed data, as after a crash)") from None
    except (gzip.BadGzipFile, zlib.error) as e:
        raise JsonFileError(f"{what} {path!r} is not a valid gzip file ({e})") from None
    except OSError as e:
        raise JsonFileError(os_error_message(what, path, e)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise JsonFileError(f"{what} {path!r} is not UTF-8 text (byte {e.start}: {e.reason})") from None


def read_json(path: str | os.PathLike, what: str = "file", *, max_depth: int = MAX_DEPTH,
              max_bytes: int = MAX_BYTES) -> Any:
    """Read and parse one JSON document from ``path`` (``.gz``: gzip).

    Args:
        path: the file.
        what: what the file should be, for the message (``"record file"``, ``"checkpoint"``).
        max_depth: deepest nesting accepted (:data:`MAX_DEPTH`).

    Returns:
        The parsed value.

    Raises:
        JsonFileError: as :func:`read_text` and :func:`parse_json`, naming ``path``.
    """
    text = read_text(path, what, max_bytes=max_bytes)
    return parse_json(text, f"{what} {os.fspath(path)!r}", max_depth=max_depth)


__all__ = ["BOM", "JsonFileError", "MAX_BYTES", "MAX_DEPTH", "nesting_depth", "open_binary", "os_error_message", "parse_json", "read_json", "read_text"]
