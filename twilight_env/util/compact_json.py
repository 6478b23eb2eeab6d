"""JSON text for result files that hold per-deal arrays: objects one key a line, arrays of
numbers on one line.

The studies' outputs (``edge.json``, ``arena.json``, ``ladder.json``, ``individual.json``)
hold per-deal scores for thousands of deals; ``json.dump(doc, indent=1)`` gives every number a
line of its own, three times the bytes of the values. :func:`dumps` keeps the objects readable
(one key a line, nested by one space) and writes each array of scalars, or of arrays of
scalars (a deal's points by play), on one line: the same values, read back by any JSON reader.

``python -m twilight_env.util.compact_json FILE [FILE ...]`` rewrites files in place (each
checked to read back equal) and prints the bytes before and after.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


def _flat(value: list) -> bool:
    """Whether an array holds only scalars, or arrays of scalars."""
    return all(isinstance(x, _SCALARS) or (isinstance(x, list) and all(isinstance(y, _SCALARS) for y in x))
               for x in value)


def dumps(doc: Any, level: int = 0) -> str:
    """``doc`` as JSON text: objects one key a line (indented one space a level), arrays of
    scalars or of arrays of scalars on one line, other arrays one element a line.

    The text reads back to ``doc`` (``json.loads(dumps(doc)) == doc``; tuples become lists,
    NaN and infinities are written as ``json.dumps`` writes them).

    Raises:
        TypeError: a value JSON cannot hold (as ``json.dumps``).
    """
    pad = " " * (level + 1)
    if isinstance(doc, dict):
        if not doc:
            return "{}"
        items = (f"{pad}{json.dumps(str(k) if not isinstance(k, str) else k)}: {dumps(v, level + 1)}"
                 for k, v in doc.items())
        return "{\n" + ",\n".join(items) + "\n" + " " * level + "}"
    if isinstance(doc, (list, tuple)):
        doc = [list(x) if isinstance(x, tuple) else x for x in doc]
        if not doc or _flat(doc):
            return json.dumps(doc, separators=(",", ":"))
        return "[\n" + ",\n".join(pad + dumps(v, level + 1) for v in doc) + "\n" + " " * level + "]"
    return json.dumps(doc)


def rewrite(path: str | os.PathLike) -> tuple[int, int]:
    """Rewrite a JSON file with :func:`dumps` (through a temporary file, ``os.replace``) after
    checking that the new text reads back to the same document.

    Returns:
        ``(bytes before, bytes after)``.

    Raises:
        ValueError: the file is not JSON, or the new text would not read back equal (then the
            file is left as it was).
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path!r} is not JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    text = dumps(doc) + "\n"
    if json.dumps(json.loads(text), sort_keys=True) != json.dumps(doc, sort_keys=True):
        raise ValueError(f"{path!r}: the compact text would not read back equal; left as it was")
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return len(raw.encode("utf-8")), len(text.encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    """``python -m twilight_env.util.compact_json FILE [FILE ...]``: rewrite each file in place."""
    args = sys.argv[1:] if argv is None else argv
    if not args or any(a.startswith("-") for a in args):
        print("usage: python -m twilight_env.util.compact_json FILE [FILE ...] (JSON files, rewritten in place)",
              file=sys.stderr)
        return 2
    status = 0
    for a in args:
        try:
            before, after = rewrite(a)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
            continue
        print(f"{a}: {before:,} -> {after:,} bytes")
    return status


__all__ = ["dumps", "rewrite", "main"]

if __name__ == "__main__":
    sys.exit(main())
