"""Helpers every run report needs: confidence intervals, plain and markdown tables, atomic
JSON files and the git commit of the source.

Statistics (95% by default):

| helper | interval | used for |
|---|---|---|
| :func:`mean_ci` | Student t over independent values (``scipy.stats.t``) | mean deal points over deals or duplicate pairs |
| :func:`wilson_ci` | Wilson score interval of a binomial proportion | P(one side outscores the other in a deal) |

The lowest layer: training and experiments both use it, and it imports neither.
"""

from __future__ import annotations

import math
import os
from typing import Any, Sequence

import numpy as np

from twilight_env.util.atomic import write_json



def mean_ci(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of independent values.

    Args:
        values: 1-d array-like of floats (e.g. deal points per duplicate pair).
        confidence: coverage, in (0, 1).

    Returns:
        ``(mean, low, high)``; low and high are NaN with fewer than 2 values. With zero
        spread the interval is the mean itself.

    Raises:
        ValueError: on an empty input or a confidence outside (0, 1).
    """
    from scipy import stats

    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("mean_ci needs at least one value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    se = float(x.std(ddof=1)) / math.sqrt(x.size)
    h = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1)) * se
    return m, m - h, m + h


def wilson_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """Proportion ``successes / n`` with its Wilson score interval.

    Returns:
        ``(p, low, high)``; all NaN when ``n == 0``.

    Raises:
        ValueError: unless ``0 <= successes <= n`` are ints and confidence is in (0, 1).
    """
    from scipy import stats

    if not 0 <= successes <= n or int(successes) != successes or int(n) != n:
        raise ValueError(f"need integers 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n == 0:
        return math.nan, math.nan, math.nan
    p = successes / n
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return p, max(0.0, center - half), min(1.0, center + half)


# ---------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------

def fmt_number(x: float, digits: int = 1, signed: bool = False) -> str:
    """``x`` with ``digits`` decimals (``"-4.1"``; with ``signed``, ``"+4.1"``), never a
    negative zero: a value that rounds to 0 (``-0.0``, ``-0.004``) prints as ``0.00``
    (signed: ``+0.00``)."""
    f = f"+.{digits}f" if signed else f".{digits}f"
    # round first and add 0.0, so that a tiny negative (-2e-13) prints as 0, not -0
    return f"{round(x, digits) + 0.0:{f}}"


def fmt_ci(mean: float, low: float, high: float, digits: int = 1, signed: bool = False) -> str:
    """``"12.3 [10.1, 14.5]"``; ``"12.3"`` when the interval is undefined; with ``signed``
    every number carries its sign (``"+12.3 [+10.1, +14.5]"``), for differences; no
    negative zero (:func:`fmt_number`)."""
    if math.isnan(low):
        return fmt_number(mean, digits, signed)
    return " ".join((fmt_number(mean, digits, signed),
                     f"[{fmt_number(low, digits, signed)}, {fmt_number(high, digits, signed)}]"))


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain aligned table (first column left-aligned, the others right-aligned)."""
    cells = [list(map(str, header))] + [list(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(r):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule] + [line(r) for r in cells[1:]])


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table."""
    out = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    return "\n".join(out)


def write_json_atomic(path: str, obj) -> None:
    """Write ``obj`` as JSON to a temporary file beside ``path``, then ``os.replace`` it
    onto ``path``: a reader (or a crash) sees the old file or the new one, never half
    (:func:`twilight_env.util.atomic.write_json`).

    Raises:
        WriteError: (an ``OSError``) the file cannot be written, e.g. a full disk: one line
            naming ``path``; the temporary file is removed and ``path`` is unchanged.
    """
    write_json(path, obj)


def git_hash(root: str | os.PathLike | None = None) -> str | None:
    """The git commit of the source tree, with ``-dirty`` when tracked files differ from it;
    None outside a git checkout (or without git).

    Reads without writing into the checkout: ``git --no-optional-locks`` makes ``git status``
    skip refreshing ``.git/index`` (no ``.git/index.lock``, no rewritten index), so a run
    never touches the repository it was started from.

    Args:
        root: a folder inside the checkout (default: this package's folder).
    """
    import subprocess

    root = os.path.dirname(os.path.abspath(__file__)) if root is None else os.fspath(root)
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        r = subprocess.run(["git", "--no-optional-locks", "rev-parse", "HEAD"], capture_output=True, text=True,
                           timeout=10, cwd=root, env=env)
        if r.returncode != 0 or not r.stdout.strip():
            return None
        dirty = subprocess.run(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, cwd=root, env=env).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() + ("-dirty" if dirty else "")
