"""``twilight replay FILE``: check a game record with the engine and print it trick by trick.

FILE holds one record (``.json``, ``.json.gz``: a deal or a match) or many (``.jsonl``,
``.jsonl.gz``, as written by ``twilight arena --records`` and ``twilight edge
--records``); the format is ``docs/RECORDS.md``. The record is first replayed
(:func:`twilight_env.records.replay`): a record whose stored fields disagree with the
rules is refused with the step and the field at fault. Each deal is then printed by
:func:`twilight_env.deal_log.format_deal` (hands as dealt, every place's chooser,
request, holder and card, trick takers and the pending pile, R3-R5), preceded by the
agents by seat and followed by the match totals.

``--index K`` picks the K-th record (from 0) of a JSON-lines file, or the K-th deal of a
match record; without it the first record of a JSON-lines file and every deal of a
match are printed.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import records
from .deal_log import format_deal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``twilight replay``."""
    parser.add_argument("file", metavar="FILE", help="a record file: .json/.json.gz (one) or .jsonl/.jsonl.gz (many)")
    parser.add_argument("--index", type=int, default=None, metavar="K",
                        help="the K-th record (from 0) of a .jsonl file, or the K-th deal of a match record")


def _many(path: str) -> bool:
    return path.endswith(".jsonl") or path.endswith(".jsonl.gz")


def pick(path: str, index: int | None) -> tuple[dict, int | None]:
    """The record to print and, for a match record, the deal index to print (None: all).

    Raises:
        ValueError: no such record or deal (the message gives the range), or a malformed
            record (:class:`~twilight_env.records.RecordError`); OSError: unreadable file.
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
        lines.append("Agents: " + ", ".join(f"{who} {i}: {a}" for i, a in enumerate(rec["agents"])))
    for k, d in enumerate(deals, first):
        lines += ["", f"=== Deal {k + 1} of {rec['deals_played']} ===", _format_one(d)]
    lines += ["", "Match totals: " + _by_line(rec["lines"], rec["totals"])]
    if rec["done"]:
        lines.append("Winner(s): " + ", ".join(rec["lines"][w] for w in rec["winners"]) + " (R6.1, R7.5)")
    else:
        lines.append("The match is not decided.")
    return "\n".join(lines)


def _by_line(names, values) -> str:
    return ", ".join(f"{n} {v}" for n, v in zip(names, values))


def _format_one(rec: dict) -> str:
    match = records.to_match(rec)
    lines = []
    if rec["agents"] is not None:
        lines.append("Agents by seat: " + ", ".join(f"{s}: {a}" for s, a in enumerate(rec["agents"])))
    lines.append(format_deal(match, rec["seed"]))
    if any(rec["totals_before"]):
        lines.append("Totals: " + _by_line(rec["lines"], rec["totals_before"]) + " before, "
                     + _by_line(rec["lines"], rec["totals_after"]) + " after this deal")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Check and print a record; 0 on success (ValueError or OSError -> the CLI prints it, exit 2)."""
    path = os.fspath(args.file)
    rec, deal = pick(path, args.index)
    print(format_record(rec, deal))
    if args.index is None and _many(path):
        count = sum(1 for _ in records.load_many(path))
        if count > 1:
            print(f"(record 0 of the {count} in {path}; --index K prints record K, 0..{count - 1})",
                  file=sys.stderr)
    return 0


__all__ = ["add_arguments", "run", "pick", "format_record"]
