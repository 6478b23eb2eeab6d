"""``twilight replay FILE``: check a game record with the engine and print it trick by trick.

FILE holds one record (``.json``, ``.json.gz``: a deal or a match) or many (``.jsonl``,
``.jsonl.gz``, as written by ``twilight arena --records`` and ``twilight edge
--records``); the format is ``docs/RECORDS.md``. The record is first replayed
(:func:`twilight_env.records.game_records.replay`): a record whose stored fields disagree with the
rules is refused with the step and the field at fault. Each deal is then printed by
:func:`twilight_env.records.deal_log.format_deal` (hands as dealt, every place's chooser,
request, holder and card, trick takers and the pending pile, R3-R5), preceded by the
agents by seat and followed by the match totals.

``--index K`` picks the K-th record (from 0) of a JSON-lines file, or the K-th deal of a
match record; without it the first record of a JSON-lines file and every deal of a
match are printed. ``--all`` prints every record of a JSON-lines file. Agent specs are
printed escaped (:func:`printable`): a record cannot send terminal escape sequences.

Damaged files: a file that cannot be read as records (missing, a folder, truncated or
damaged gzip, not JSON, nested too deeply, a malformed record) ends the command with one
line ``twilight replay: error: ...`` naming the file and what is wrong, exit status 2,
never a traceback. A JSON-lines file cut by a crash (a run killed while writing its
``--records``) is read up to the cut: the asked-for record (or, with ``--all``, every
whole record) is printed, then the line ``twilight replay: error: 'FILE' ends after record
N: truncated (...)``, and the exit status is 2; a file damaged after some records (a gzip
check that fails) is read the same way up to the damage (``... is damaged after record N
(from line L, byte B of its text): ...``).
"""

from __future__ import annotations

import argparse
import os
import sys

from twilight_env.records import game_records as records
from twilight_env.records.deal_log import format_deal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``twilight replay``."""
    parser.add_argument("file", metavar="FILE", help="a record file: .json/.json.gz (one) or .jsonl/.jsonl.gz (many)")
    parser.add_argument("--index", type=int, default=None, metavar="K",
                        help="the K-th record (from 0) of a .jsonl file, or the K-th deal of a match record")
    parser.add_argument("--all", action="store_true",
                        help="print every record of a .jsonl file (default: the first, or --index K)")


def _many(path: str) -> bool:
    return path.endswith(".jsonl") or path.endswith(".jsonl.gz")


def pick(path: str, index: int | None) -> tuple[dict, int | None]:
    """The record to print and, for a match record, the deal index to print (None: all).

    Raises:
        ValueError: no such record or deal (the message gives the range), or a file that
            cannot be read as records (:class:`~twilight_env.records.game_records.RecordFileError`, one
            line naming the file; a JSON-lines file cut before record K:
            :class:`~twilight_env.records.game_records.TruncatedRecordsError`).
    """
    if index is not None and index < 0:
        raise ValueError(f"--index must be 0 or more, got {index}")
    if _many(path):
        k = 0 if index is None else index
        count = 0
        for count, rec in enumerate(records.load_many(path), 1):
            if count - 1 == k:
                return rec, None
        raise ValueError(f"--index {k}: {path} holds {count} record(s), so K is 0..{count - 1}")
    rec = records.load(path)
    if rec["format"] == records.FORMAT_MATCH and index is not None:
        n = len(rec["deals"])
        if index >= n:
            raise ValueError(f"--index {index}: the match in {path} has {n} deal(s), so K is 0..{n - 1}")
        return rec, index
    if rec["format"] == records.FORMAT_DEAL and index not in (None, 0):
        raise ValueError(f"--index {index}: {path} holds one deal record; --index is for .jsonl files and matches")
    return rec, None


def format_record(rec: dict, deal: int | None = None) -> str:
    """The text of a (replayed, checked) record: each deal's log, agents and totals.

    Raises:
        RecordError: if the record disagrees with the engine (:func:`records.replay`).
    """
    records.replay(rec)
    if rec["format"] == records.FORMAT_DEAL:
        return _format_one(rec)
    deals = rec["deals"] if deal is None else [rec["deals"][deal]]
    first = 0 if deal is None else deal
    lines = [f"Twilight match: {rec['deals_played']} deal(s), target {rec['config']['target']}, "
             f"lines {', '.join(rec['lines'])}"]
    if rec["agents"] is not None:
        who = "seat" if rec["config"]["num_players"] == 4 else "player"
        lines.append("Agents: " + ", ".join(f"{who} {i}: {printable(a)}" for i, a in enumerate(rec["agents"])))
    for k, d in enumerate(deals, first):
        lines += ["", f"=== Deal {k + 1} of {rec['deals_played']} ===", _format_one(d)]
    lines += ["", "Match totals: " + _by_line(rec["lines"], rec["totals"])]
    if rec["done"]:
        lines.append("Winner(s): " + ", ".join(rec["lines"][w] for w in rec["winners"]) + " (R6.1, R7.5)")
    else:
        lines.append("The match is not decided.")
    return "\n".join(lines)


def printable(text: str | None) -> str:
    """``text`` safe to print on a terminal: every character that is not printable (control
    characters such as ESC and BEL, which start terminal escape sequences that set the
    window title, clear the screen or write the clipboard; Unicode format characters such
    as bidirectional overrides; separators other than the space) is written as a Python
    escape (``\\x1b``, ``\\u202e``), and a backslash as ``\\\\``, so the text shown is
    the text stored. None prints as ``None``.
    """
    if text is None:
        return "None"
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def _by_line(names, values) -> str:
    return ", ".join(f"{n} {v}" for n, v in zip(names, values))


def _format_one(rec: dict) -> str:
    match = records.to_match(rec)
    lines = []
    if rec["agents"] is not None:
        lines.append("Agents by seat: " + ", ".join(f"{s}: {printable(a)}" for s, a in enumerate(rec["agents"])))
    lines.append(format_deal(match, rec["seed"]))
    if any(rec["totals_before"]):
        lines.append("Totals: " + _by_line(rec["lines"], rec["totals_before"]) + " before, "
                     + _by_line(rec["lines"], rec["totals_after"]) + " after this deal")
    return "\n".join(lines)


def _print_many(path: str, index: int | None, every: bool) -> None:
    """Print record ``index`` (default 0), or every record, of a JSON-lines file, then
    check the rest of the file: a file cut by a crash raises its
    :class:`~twilight_env.records.game_records.TruncatedRecordsError` after the whole records are printed."""
    if index is not None and index < 0:
        raise ValueError(f"--index must be 0 or more, got {index}")
    k = 0 if index is None else index
    count, printed, cut = 0, 0, None
    try:
        for count, rec in enumerate(records.load_many(path), 1):
            if every:
                print(("\n" if printed else "") + f"=== Record {count - 1} of {path} ===")
            if every or count - 1 == k:
                print(format_record(rec), flush=True)
                printed += 1
    except records.PartialRecordsError as e:  # cut by a crash, or damaged after some records
        cut = e
    if not printed:
        if count == 0 and cut is None:
            raise ValueError(f"{path!r} holds no records")
        if cut is not None:
            raise ValueError(f"--index {k}: {cut}")
        raise ValueError(f"--index {k}: {path} holds {count} record(s), so K is 0..{count - 1}")
    if cut is not None:
        raise cut
    if index is None and not every and count > 1:
        print(f"(record 0 of the {count} in {path}; --index K prints record K, 0..{count - 1}; --all prints "
              "all)", file=sys.stderr)
    shown = "every record" if every or count == 1 else f"record {k}"
    print(f"\n{CHECKED.format(what=shown)}" + (f"; the other {count - 1} records' fields and ranges checked"
                                                 if not every and count > 1 else ""))


def run(args: argparse.Namespace) -> int:
    """Check and print a record; 0 on success (a ValueError, e.g. a damaged or truncated
    file, is printed by the CLI in one line, exit status 2)."""
    path = os.fspath(args.file)
    every = getattr(args, "all", False)
    if _many(path):
        if every and args.index is not None:
            raise ValueError("--all prints every record; give it without --index")
        _print_many(path, args.index, every)
        return 0
    if every:
        raise ValueError(f"--all is for .jsonl/.jsonl.gz files (many records); {path} holds one record")
    rec, deal = pick(path, args.index)
    print(format_record(rec, deal))
    print(f"\n{CHECKED.format(what='the record')}")
    return 0


CHECKED = ("checked: {what} replayed on the engine, every action legal and every stored trick, score and "
           "total equal to the engine's (R2-R7)")
"""The last line of a successful ``twilight replay`` (the printed records are replayed)."""


__all__ = ["add_arguments", "run", "pick", "format_record", "printable"]
