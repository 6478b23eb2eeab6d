"""Game records: one JSON schema for a played deal and for a match, checked by the engine.

A **deal record** holds everything needed to see and to re-derive one deal: the config
and variants, the hands as dealt by seat (card codes), the dealer (4 players) or the solo
(3 players), every action with its deciding seat, chooser, holder and card, the trick
takers and the pending pile after each trick (R4.3), the deal scores by side and the
points by score line with the match totals before and after the deal, the agent specs
by seat, the seed, the package version and a creation time. A **match record** holds
its deals' records in order, the match config, the agents by player and the final
totals and winners (R6, R7.5). The field tables, with types and rule numbers, are in
``docs/RECORDS.md``; ``twilight_env/records/record.schema.json`` is the same schema as a JSON
Schema (draft 2020-12).

Only the hands, the dealer or solo, the starting totals and the raw actions are
inputs; every other game field is *derived*. :func:`replay` plays the actions again with
the engine and compares each derived field with the stored one, so an edited record (an
illegal action, another card, another trick taker, another score) is refused with a
:class:`RecordError` naming the step and the field.

Pure module: the standard library and NumPy (through the engine) only, like the engine.

Example::

    from twilight_env.records import game_records as records
    from twilight_env.rules.engine import State
    state = State.from_deal(deal, leader=0)            # deal: 4 lists of 7 codes by seat
    ...                                                # play it, keeping the actions
    rec = records.deal_record(state, actions, agents=["random"] * 4, seed=7)
    records.dump(rec, "deal.json")
    states = records.replay(records.load("deal.json"))  # initial .. final State
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
import zlib
from typing import Any, Iterable, Iterator

from twilight_env.rules.engine import Match
from twilight_env.util.atomic import write_bytes, write_error
from twilight_env.util.jsonfile import JsonFileError, open_binary, os_error_message, parse_json, read_json

from twilight_env.records.record_core import CONFIG_KEYS, FORMAT_DEAL, FORMAT_MATCH, RecordError, replay_deal, validate
# building, replaying and checking records live in twilight_env.records.record_core; their names
# stay importable here, the documented place of the whole record format
from twilight_env.records.record_core import (ACTION_KEYS, DEAL_KEYS, MATCH_KEYS, MAX_AGENT_CHARS,  # noqa: F401
                                              MAX_DEAL_SCORE, SCHEMA_FILE, TRICK_KEYS, VERSION, actions_of_history,
                                              deal_record, match_record, replay)

# ---------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------

class RecordFileError(RecordError, JsonFileError):
    """A record file that cannot be read as records: missing, a folder, unreadable, a
    damaged or truncated gzip stream, not UTF-8, not JSON, nested too deeply, or holding a
    malformed record. Both a :class:`RecordError` and a
    :class:`~twilight_env.util.jsonfile.JsonFileError` (so a ``ValueError``); the message is
    one line naming the file (and the line of a JSON-lines file).

    Attributes: as :class:`RecordError` (``reason`` is the whole message here).
    """

    def __init__(self, reason: str, *, step: int | None = None, field: str | None = None,
                 deal: int | None = None):
        super().__init__(reason, step=step, field=field, deal=deal)
        self.args = (reason,)  # the message is the reason alone: it starts with the file

    def __str__(self) -> str:
        return self.reason


class PartialRecordsError(RecordFileError):
    """A JSON-lines records file whose whole records before some point read back, and then
    it is cut or damaged. :func:`load_many` raises it after yielding those records.

    Attributes:
        path: the file.
        count: how many whole records the file holds before the cut or the damage.
        line: the line (from 1) where the cut or the damage starts.
        offset: the byte offset in the file's text (after gzip) where it starts.
    """

    def __init__(self, message: str, path: str, count: int, line: int, offset: int):
        self.path = path
        self.count = count
        self.line = line
        self.offset = offset
        super().__init__(message)


class TruncatedRecordsError(PartialRecordsError):
    """A JSON-lines records file that ends in the middle of a record, as a run killed
    while writing leaves it (a gzip stream cut short, or a last line without its end).

    :func:`load_many` raises it after yielding every whole record before the cut.
    """

    def __init__(self, path: str, count: int, how: str, *, line: int | None = None, offset: int = 0):
        super().__init__(f"{path!r} ends after record {count}: truncated ({how}); the {count} whole "
                         f"record(s) before the cut read back", path, count, count + 1 if line is None else line,
                         offset)


class DamagedRecordsError(PartialRecordsError):
    """A JSON-lines records file whose compressed data is damaged at some point (a gzip
    check that fails, data that does not decompress, bytes after the last gzip member
    that are not gzip). :func:`load_many` raises it after yielding every whole record
    before the damage; its message names the file, the line and the byte offset (in the
    text after gzip) where the damage starts.
    """

    def __init__(self, path: str, count: int, line: int, offset: int, how: str):
        super().__init__(f"{path!r} is damaged after record {count} (from line {line}, byte {offset:,} of its "
                         f"text): {how}; the {count} whole record(s) before the damage read back", path, count,
                         line, offset)


def dump(record: dict, path: str | os.PathLike) -> None:
    """Write one record as JSON to ``path`` (gzip-compressed when it ends in ``.gz``),
    atomically: a temporary file beside ``path`` is written, synced and renamed onto it
    (:mod:`twilight_env.util.atomic`), so a full disk or a crash never leaves a partial or
    empty file, and an existing file stays as it was on an error.

    Raises:
        RecordError: if the record is malformed (:func:`validate`).
        WriteError: (an ``OSError``) the file cannot be written, one line naming it.
    """
    validate(record)
    data = (json.dumps(record, indent=1) + "\n").encode("utf-8")
    write_bytes(path, gzip.compress(data, mtime=0) if os.fspath(path).endswith(".gz") else data)


def _checked(record, where: str):
    """``record`` after :func:`validate`; a fault becomes a :class:`RecordFileError` naming ``where``."""
    try:
        validate(record)
    except RecordError as e:
        at = str(e)[:-len(e.reason) - 2] if str(e) != e.reason else ""  # "deal 1, step 3, field 'card'"
        raise RecordFileError(f"{where}: {e.reason}" + (f" ({at})" if at else ""), step=e.step, field=e.field,
                              deal=e.deal) from None
    return record


def load(path: str | os.PathLike) -> dict:
    """Read one record written by :func:`dump` (``.gz``: gzip) and :func:`validate` it.

    A UTF-8 byte-order mark is accepted (:mod:`twilight_env.util.jsonfile`).

    Raises:
        RecordFileError: (a ``RecordError`` and a ``ValueError``) in one line naming the
            file: missing, a folder, unreadable, a truncated or damaged gzip stream, not
            UTF-8, not JSON (line and column), nested deeper than
            :data:`~twilight_env.util.jsonfile.MAX_DEPTH`, larger than
            :data:`MAX_RECORD_BYTES` (after gzip; reading stops at the limit), or a
            malformed record (the field).
    """
    p = os.fspath(path)
    try:
        record = read_json(p, "record file", max_bytes=MAX_RECORD_BYTES)
    except JsonFileError as e:
        raise RecordFileError(str(e)) from None
    return _checked(record, f"record file {p!r}")


BLOCK_BYTES = 256 << 10
"""Records text (bytes, before gzip) that :class:`RecordWriter` gathers before it writes a block."""
BLOCK_SECONDS = 5.0
"""Most seconds a record waits in :class:`RecordWriter` before its block is written."""


class RecordWriter:
    """Append records to a JSON-lines file, one compact record per line (``.gz``: gzip).

    A context manager: ``with RecordWriter(path) as w: w.write(record)``. Each record is
    validated before it is written. :func:`dump_many` is the one-call form.

    The records are written in **blocks** (every :data:`BLOCK_BYTES` of text or
    :data:`BLOCK_SECONDS` seconds, and on :meth:`flush` and :meth:`close`). A block of a
    ``.gz`` file is one complete gzip member (a gzip file may hold several one after the
    other, and every gzip reader reads them as one stream), made in memory and then
    written at the end of the file's last whole block; until that write returns, the
    block's records stay in memory. An interruption anywhere (Ctrl-C landing inside a
    write, an error, a full disk) therefore never touches what is already on disk: the
    next :meth:`flush` or :meth:`close` cuts the unfinished block off and writes it
    again, and a process killed in the middle of a write leaves whole blocks followed by
    a part of one, which :func:`load_many` reads up to the cut.

    Raises:
        WriteError: (an ``OSError``) from the constructor, :meth:`write`, :meth:`flush` or
            :meth:`close` when the file cannot be written (e.g. a full disk), one line
            naming the file; the records already in whole blocks stay readable.
    """

    def __init__(self, path: str | os.PathLike, *, block_bytes: int = BLOCK_BYTES,
                 block_seconds: float = BLOCK_SECONDS):
        self.path = os.fspath(path)
        self.block_bytes = block_bytes
        self.block_seconds = block_seconds
        self._gzip = self.path.endswith(".gz")
        # (bytes on disk in whole blocks, records in them, lines waiting): replaced in one
        # assignment once a block is on disk, so an interruption never half-updates it
        self._state: tuple[int, int, list[bytes]] = (0, 0, [])
        self._waiting_bytes = 0
        self._since = time.monotonic()
        try:
            self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        except OSError as e:
            raise write_error(self.path, e) from None

    @property
    def count(self) -> int:
        """Records accepted so far (on disk or waiting for their block)."""
        return self._state[1] + len(self._state[2])

    def write(self, record: dict) -> None:
        """Validate and append one record (RecordError if malformed; WriteError if a
        block it completes cannot be written)."""
        if self._fd is None:
            raise ValueError(f"records file {self.path!r} is closed")
        validate(record)
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
        self._state[2].append(line)
        self._waiting_bytes += len(line)
        if self._waiting_bytes >= self.block_bytes or time.monotonic() - self._since >= self.block_seconds:
            self.flush()

    def flush(self) -> None:
        """Write the waiting records as one block (one gzip member for ``.gz``).

        Raises:
            WriteError: the block cannot be written (the file then ends with its whole
                blocks; the records stay waiting for the next flush).
        """
        if self._fd is None:
            return
        size, count, lines = self._state
        try:
            os.ftruncate(self._fd, size)  # drops a block cut off by an interruption
            if lines:
                data = b"".join(lines)
                block = gzip.compress(data, compresslevel=6, mtime=0) if self._gzip else data
                view = memoryview(block)
                while view:
                    view = view[os.pwrite(self._fd, view, size + len(block) - len(view)):]
                self._state = (size + len(block), count + len(lines), [])
        except OSError as e:
            raise write_error(self.path, e) from None
        self._waiting_bytes = 0
        self._since = time.monotonic()

    def close(self) -> None:
        """Write the waiting records, sync and close the file (a second call does nothing).

        Raises:
            WriteError: the last block cannot be written; the file is closed and ends with
                its whole blocks.
        """
        if self._fd is None:
            return
        try:
            self.flush()
            os.fsync(self._fd)
        except OSError as e:
            raise write_error(self.path, e) from None
        finally:
            fd, self._fd = self._fd, None
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self._state[0])
                os.close(fd)

    def __enter__(self) -> "RecordWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def dump_many(records: Iterable[dict], path: str | os.PathLike) -> int:
    """Write records as JSON lines to ``path`` (``.jsonl.gz``: gzip); returns how many.

    Raises:
        RecordError: on a malformed record (the file then holds those before it).
    """
    with RecordWriter(path) as w:
        for r in records:
            w.write(r)
        return w.count


def nearest_existing(path: str) -> str:
    """``path`` (made absolute) or its nearest existing parent: where a file or folder to be
    created would go, for the checks before a run (also ``twilight_env.experiments.common``'s)."""
    path = os.path.abspath(path)
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def _check_can_create(path: str, flag: str) -> None:
    """Refuse ``path`` (a file or folder to be created) when a parent of it is a file or
    its nearest existing parent folder cannot be written."""
    above = nearest_existing(os.path.dirname(os.path.abspath(path)))
    if not os.path.isdir(above):
        raise ValueError(f"{flag} {path!r} cannot be written: {above!r} is a file, not a folder")
    if not os.access(above, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path!r} cannot be written: no permission to create files in {above!r}")


def check_record_file(path: str | os.PathLike, flag: str = "--record", force: bool = False) -> str:
    """Check, before anything is played, that a record file can be written at ``path``.

    Args:
        path: the file to be written (``.gz``: gzip).
        flag: the option that named it, for the messages.
        force: allow replacing an existing file.

    Returns:
        ``path`` as a string.

    Raises:
        ValueError: naming ``flag``: ``path`` is a folder, a parent of it is a file, it
            exists and ``force`` is false, or it (or the folder it would go in) cannot be
            written.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path!r} is a folder; {flag} takes a file path (e.g. "
                         f"{os.path.join(path, 'deal.json')!r})")
    if os.path.lexists(path):
        if not force:
            raise ValueError(f"{flag} {path!r} exists already; give --force to replace it, or choose another file")
        if not os.path.isfile(path) or not os.access(path, os.W_OK):
            raise ValueError(f"{flag} {path!r} cannot be written (not a regular file, or no permission)")
        return path
    _check_can_create(path, flag)
    return path


def check_records_folder(folder: str | os.PathLike, file_name: str, flag: str = "--records",
                         force: bool = False) -> str:
    """Check, before anything is played, that ``folder/file_name`` can be written (the
    folder is created later, by the run).

    Args:
        folder: the folder given to ``flag`` (``arena``/``edge --records DIR``); it may not
            exist yet.
        file_name: the records file the run writes in it (e.g. ``arena.records.jsonl.gz``).
        flag: the option, for the messages. force: allow replacing an existing records file.

    Returns:
        the records file's path, ``folder/file_name``.

    Raises:
        ValueError: naming ``flag``: ``folder`` is a file, a parent of it is a file, the
            records file exists and ``force`` is false, or nothing can be written there
            (e.g. ``/proc/sys/x``).
    """
    folder = os.fspath(folder)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise ValueError(f"{flag} {folder!r} is a file; {flag} takes a folder, where the run writes {file_name}")
    if os.path.isdir(folder):
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ValueError(f"{flag} {folder!r} cannot be written: no permission to create files in it")
    else:
        _check_can_create(folder, flag)
    return check_record_file(os.path.join(folder, file_name), flag, force)


MAX_RECORD_BYTES = 16 << 20
"""Largest single record read (bytes of JSON text, after gzip): 16 MiB, for a ``.json``
record file and for one line of a JSON-lines file. A deal record is about 6 KB (4 KB on
one line), a match record about 6 KB per deal: 16 MiB holds a match of over 2,500 deals.
A larger file (a gzip bomb: 0.9 MB that grows to 1 GB) is refused as soon as the limit
is passed, before it fills the memory."""
MAX_RECORDS_FILE_BYTES = 16 << 30
"""Largest JSON-lines records file read (bytes of text, after gzip): 16 GiB, over four
million deal records. :func:`load_many` reads line by line, so the memory stays within
one line (:data:`MAX_RECORD_BYTES`) whatever the size; the limit bounds the time."""
MAX_BLANK_LINES = 1000
"""Most blank lines a JSON-lines records file may hold (the writer writes none): a gzip
bomb of newlines would otherwise cost seconds per megabyte without holding a record."""
MAX_LINE_BYTES = MAX_RECORD_BYTES
"""Longest line :func:`load_many` reads (bytes): :data:`MAX_RECORD_BYTES`."""


def _raw_lines(path: str, offsets: list[int]) -> Iterator[bytes]:
    """The lines of ``path`` as bytes, each with its ending ``\\n`` (gzip for ``.gz``).
    ``offsets[0]`` is kept at the byte offset (in the text) after the last line yielded.

    Raises:
        RecordFileError: missing, a folder, unreadable or not gzip at its start, a line
            longer than :data:`MAX_LINE_BYTES`, more text than :data:`MAX_RECORDS_FILE_BYTES`;
        EOFError: a gzip stream that ends early (after every whole line decompressed);
        gzip.BadGzipFile, zlib.error: damage after the start (after every line before it).
    """
    what = f"records file {path!r}"
    try:
        f = open_binary(path, "records file")
    except JsonFileError as e:
        raise RecordFileError(str(e)) from None
    with f:
        try:
            while True:
                line = f.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_LINE_BYTES:
                    raise RecordFileError(f"{what} has a line of more than {MAX_LINE_BYTES:,} bytes; no record "
                                          "is so long")
                if offsets[0] + len(line) > MAX_RECORDS_FILE_BYTES:
                    raise RecordFileError(f"{what} holds more than {MAX_RECORDS_FILE_BYTES:,} bytes"
                                          f"{' uncompressed' if path.endswith('.gz') else ''}; no records file "
                                          "is so large")
                offsets[0] += len(line)
                yield line
        except (gzip.BadGzipFile, zlib.error):  # an OSError and a ValueError: load_many says where
            raise
        except OSError as e:
            raise RecordFileError(os_error_message("records file", path, e)) from None


def load_many(path: str | os.PathLike) -> Iterator[dict]:
    """Iterate over the records of a JSON-lines file (``.gz``: gzip), each validated.

    Blank lines are skipped (at most :data:`MAX_BLANK_LINES`) and a UTF-8 byte-order mark
    is accepted. A ``.gz`` file may hold several gzip members one after the other (as
    :class:`RecordWriter` writes it). A file cut by a crash (a run killed while writing: a
    gzip stream that ends early, or a last line without its ``\\n`` that is not a whole
    record) yields every whole record before the cut and then raises
    :class:`TruncatedRecordsError`; a file whose gzip data is damaged after its start (a
    failed gzip check, data that does not decompress) yields every whole record before
    the damage and then raises :class:`DamagedRecordsError`. Both say after which record,
    from which line and at which byte of the text the cut or damage starts (``count``,
    ``line``, ``offset``).

    Raises:
        TruncatedRecordsError: the file ends in the middle of a record (after yielding
            the whole ones).
        DamagedRecordsError: the gzip data is damaged after some whole records.
        RecordFileError: (a ``RecordError``) in one line naming the file, and the line
            for a fault in a line: missing, a folder, unreadable, not gzip, not UTF-8, a
            line that is not JSON or nested too deeply, or not a valid record, a line or
            a file over its size limit (:data:`MAX_RECORD_BYTES`,
            :data:`MAX_RECORDS_FILE_BYTES`), too many blank lines.
    """
    p = os.fspath(path)
    count = lineno = blank = 0
    offsets = [0]
    lines = _raw_lines(p, offsets)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except EOFError:
            raise TruncatedRecordsError(p, count, "the gzip stream ends early, as when the run writing it "
                                        "was killed", line=lineno + 1, offset=offsets[0]) from None
        except (gzip.BadGzipFile, zlib.error) as e:
            if offsets[0] == 0:
                raise RecordFileError(f"records file {p!r} is not a valid gzip file ({e})") from None
            raise DamagedRecordsError(p, count, lineno + 1, offsets[0], f"its gzip data is damaged ({e})") from None
        lineno += 1
        if not line.strip():
            blank += 1
            if blank > MAX_BLANK_LINES:
                raise RecordFileError(f"records file {p!r} holds more than {MAX_BLANK_LINES:,} blank lines (line "
                                      f"{lineno}); a records file holds one record per line")
            continue
        where = f"records file {p!r}, line {lineno}"
        try:
            record = parse_json(line, where)
        except JsonFileError as e:
            if not line.endswith(b"\n"):  # the last line, cut before its end
                raise TruncatedRecordsError(p, count, f"line {lineno} stops in the middle of a record",
                                            line=lineno, offset=offsets[0] - len(line)) from None
            raise RecordFileError(str(e)) from None
        yield _checked(record, where)
        count += 1


def load_any(path: str | os.PathLike) -> list[dict]:
    """The records of a file: one record (``.json``, ``.json.gz``) or many (``.jsonl``,
    ``.jsonl.gz``).

    Raises:
        RecordFileError: as :func:`load` or :func:`load_many`; a truncated JSON-lines file
            raises :class:`TruncatedRecordsError` (use :func:`load_many` to keep the whole
            records before the cut).
    """
    p = os.fspath(path)
    if p.endswith(".jsonl") or p.endswith(".jsonl.gz"):
        return list(load_many(p))
    return [load(p)]


# ---------------------------------------------------------------------------------
# the PettingZoo environment
# ---------------------------------------------------------------------------------

def env_config(record: dict, *, episode: str = "deal") -> dict:
    """Keyword arguments of ``twilight_env.env`` for a record's rules (R6-R8).

    ``episode="deal"`` (default) replays one deal with deal rewards; ``"match"`` starts a
    match episode from the record's ``totals_before`` (:func:`to_env_options`).

    Raises:
        RecordError: a malformed record; ValueError: another ``episode``.
    """
    if episode not in ("deal", "match"):
        raise ValueError(f"episode must be 'deal' or 'match', got {episode!r}")
    validate(record)
    return {**{k: record["config"][k] for k in CONFIG_KEYS}, "episode": episode}


def to_env_options(record: dict, *, index: int = 0, episode: str = "deal") -> dict:
    """``reset`` options of the PettingZoo env that deal a record's deal again.

    With ``env = twilight_env.env(**env_config(record))`` and
    ``env.reset(options=to_env_options(record))``, stepping the record's ``action``
    values in order reproduces every step, the acting agent of each (4 players:
    ``player_{seat}``; 3 players: the player at the deciding seat, the solo deciding for
    the new moon, R7.3), the rewards and the ``deal_points``/``totals`` infos.

    Args:
        record: a deal record, or a match record (then its deal ``index``).
        index: which deal of a match record (ignored for a deal record).
        episode: ``"deal"``: options ``deal`` and ``dealer`` (4 players) or ``solo`` (3
            players); ``"match"``: also ``scores``, the totals before the deal.

    Returns:
        dict with keys ``"deal"`` (4 lists of 7 codes by seat), ``"dealer"`` or ``"solo"``
        and, for ``episode="match"``, ``"scores"``.

    Raises:
        RecordError: a malformed record; ValueError: a bad ``index`` or ``episode``.
    """
    if episode not in ("deal", "match"):
        raise ValueError(f"episode must be 'deal' or 'match', got {episode!r}")
    validate(record)
    if record["format"] == FORMAT_MATCH:
        deals = record["deals"]
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(deals):
            raise ValueError(f"index must be a deal 0..{len(deals) - 1} of the match, got {index!r}")
        record = deals[index]
    opts: dict[str, Any] = {"deal": [list(h) for h in record["deal"]]}
    if record["config"]["num_players"] == 4:
        opts["dealer"] = record["dealer"]
    else:
        opts["solo"] = record["solo"]
    if episode == "match":
        opts["scores"] = list(record["totals_before"])
    return opts


def to_match(record: dict) -> Match:
    """An engine :class:`~twilight_env.rules.engine.Match` holding a deal record's finished,
    credited deal (for printing with :func:`twilight_env.records.deal_log.format_deal`).

    Raises:
        RecordError: as :func:`replay`.
    """
    validate(record)
    if record["format"] != FORMAT_DEAL:
        raise RecordError(f"to_match takes a {FORMAT_DEAL!r} record; pick one of a match's deals", field="format")
    return replay_deal(record)[0]


__all__ = ["RecordError", "RecordFileError", "PartialRecordsError", "TruncatedRecordsError", "DamagedRecordsError",
           "RecordWriter", "MAX_AGENT_CHARS", "MAX_RECORD_BYTES", "MAX_RECORDS_FILE_BYTES", "FORMAT_DEAL", "FORMAT_MATCH",
           "VERSION", "SCHEMA_FILE", "MAX_DEAL_SCORE", "deal_record", "match_record", "replay", "validate", "dump",
           "load", "dump_many", "load_many", "load_any", "check_record_file", "check_records_folder", "nearest_existing",
           "to_env_options", "env_config", "to_match", "actions_of_history"]
