"""The fair handicap of the 3-player game: points per deal that, credited to the solo's
line, make a fixed-solo match an even bet.

From a finished ``twilight edge`` run's own plays (each deal's Moon and Sun deal points,
R5), the handicap ``h`` is the number of points added to the solo's (Moon) line after every
deal such that P(the solo wins a fixed-solo match to the target) = 0.5 (R6.1, R7.5, R7.6:
a match ends after a deal in which a total reaches the target and the two totals differ).
A negative ``h`` is taken from the solo's line. Matches are simulated as
:func:`twilight_env.experiments.edge.matches.simulate_fixed_solo` does for the study's own match figures
(each deal of a match drawn from the run's deal pool), with ``h`` in quarter points: every
score is multiplied by 4, the target too, and ``4 h`` added to the solo's deal score
(whole points under goals_333, whose goals are exact totals).

- **Estimate:** bisection on the whole deal pool, 50 × ``matches`` simulated matches per
  step, each step with the same random stream (common random numbers: P(solo wins)
  is then close to monotone in ``h``), to a quarter point.
- **Interval:** percentile bootstrap over deals, as the study's: ``boot`` resamples of the N
  deals, the bisection run on every resample at once (each with its own bracket), 95%.
- **goals_333** (R6.2): the same under the publisher's variant in which a match also ends
  when exactly one line reaches exactly 333, 666 or 999 points; the variant moves no rung's
  P(solo wins) (docs/RESULTS.md), and this column says whether it moves the handicap.

Usage::

    python -m twilight_env.experiments.edge.handicap results/edge_vs_strength/edge_* [--out FILE.md] [--boot 200]

prints one row per run (and writes a Markdown table with ``--out``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

from twilight_env.experiments.common import markdown_table, text_table
from twilight_env.util.report import fmt_ci, fmt_number
from twilight_env.util.atomic import write_json, write_text
from twilight_env.experiments.edge.core import finished_run
from twilight_env.experiments.edge.matches import check_match_settings, percentile_ci, simulate_fixed_solo

QUARTER = 4
"""Scores are scaled by this, so the handicap moves in quarter points."""
MAX_HANDICAP = 90
"""The search bracket, ±90 points per deal (a deal scores at most 360, R5). The equal-agent
runs of the study lie within ±20; runs in which one side is exploited (the bracket's, some
±120) lie outside it: their handicap prints as ``outside ±90``, and bootstrap resamples
outside it are counted (``unbracketed_resamples``) and reported under the table."""
HANDICAP_STREAM = 5
"""Tag of the handicap's random stream (distinct from the study's bootstrap, 2)."""


def _p_solo(moon4: np.ndarray, sun4: np.ndarray, h4: np.ndarray, seed_seq, matches: int, target4: int,
            goals_333: bool) -> np.ndarray:
    """P(solo wins) of every pool (row) with ``h4[b]`` quarter points credited per deal; the
    same random stream for every call (common random numbers)."""
    rng = np.random.default_rng(seed_seq)
    out = simulate_fixed_solo(moon4 + h4[:, None], sun4, rng, matches, target4,
                              goals_333=goals_333)
    return out["p_solo"]


def _bisect(moon4, sun4, seed_seq, matches: int, target4: int, goals_333: bool, q: int) -> np.ndarray:
    """Midway between the largest handicap step of each pool with P(solo wins) < 0.5 and the
    smallest with P >= 0.5 (steps of ``1/q`` points; scores already scaled by ``q``):
    ``(B,)`` floats in points."""
    B = moon4.shape[0]
    lo = np.full(B, -MAX_HANDICAP * q, dtype=np.int64)  # P < 0.5 here (checked)
    hi = np.full(B, MAX_HANDICAP * q, dtype=np.int64)   # P >= 0.5 here (checked)
    p_lo = _p_solo(moon4, sun4, lo, seed_seq, matches, target4, goals_333)
    p_hi = _p_solo(moon4, sun4, hi, seed_seq, matches, target4, goals_333)
    out_of_range = (p_lo >= 0.5) | (p_hi < 0.5)
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        p = _p_solo(moon4, sun4, mid, seed_seq, matches, target4, goals_333)
        up = p >= 0.5
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    h = (lo + hi) / 2 / q
    h[out_of_range] = math.nan
    return h


def fair_handicap(moon, sun, seed: int, target: int = 1000, boot: int = 200, matches: int = 1000,
                  goals_333: bool = False, confidence: float = 0.95) -> dict:
    """The fair handicap of one configuration's plays (module docstring).

    Args:
        moon, sun: ``(N, 3)`` int deal points per deal and play (``edge.json``'s
            ``moon_points``, ``sun_points``), N >= 2.
        seed: the random stream (with :data:`HANDICAP_STREAM`); the same seed gives the
            same figures.
        target: match target (R6.1), 1..100,000.
        boot, matches: bootstrap resamples and simulated matches per resample (the study's
            bounds, :func:`twilight_env.experiments.edge.matches.check_match_settings`).
        goals_333: the publisher's goals variant (R6.2).

    Returns:
        ``{"handicap", "ci_low", "ci_high"}`` in points per deal credited to the solo's
        line: midway between the last step (a quarter point; a whole point under
        goals_333) with P(solo wins) < 0.5 and the first with P >= 0.5 (NaN where P stays
        on one side of 0.5 within ±``MAX_HANDICAP``); ``"p_solo_wins_at_handicap"`` (P at
        that first step: a check, at or just above 0.5), ``"p_solo_wins_plain"``, and the
        settings.

    Raises:
        ValueError: arrays of the wrong shape or values, or settings out of range.
    """
    moon = np.asarray(moon)
    sun = np.asarray(sun)
    if moon.ndim != 2 or moon.shape != sun.shape or moon.shape[0] < 2 or moon.shape[1] < 1:
        raise ValueError(f"moon and sun must be int arrays of one shape (N >= 2 deals, plays), got "
                         f"{moon.shape} and {sun.shape}")
    if not (np.issubdtype(moon.dtype, np.integer) and np.issubdtype(sun.dtype, np.integer)):
        raise ValueError("moon and sun must hold integer deal points (R5)")
    if moon.min() < 0 or sun.min() < 0 or moon.max() > 360 or sun.max() > 360:
        raise ValueError("deal points must be in 0..360 (R5)")
    check_match_settings(target, boot, matches, lambda k: k)
    seq = np.random.SeedSequence((int(seed), HANDICAP_STREAM, int(goals_333)))
    s_full, s_boot, s_idx = seq.spawn(3)
    # quarter points under the plain rules; whole points under goals_333, whose goals are
    # exact totals of whole points (R6.2)
    q = 1 if goals_333 else QUARTER
    n = moon.shape[0]
    m4, u4 = (q * moon.reshape(1, -1)).astype(np.int64), (q * sun.reshape(1, -1)).astype(np.int64)
    full = _bisect(m4, u4, s_full, 50 * matches, q * target, goals_333, q)[0]
    idx = np.random.default_rng(s_idx).integers(n, size=(boot, n))
    bm4 = (q * moon[idx].reshape(boot, -1)).astype(np.int64)
    bu4 = (q * sun[idx].reshape(boot, -1)).astype(np.int64)
    hb = _bisect(bm4, bu4, s_boot, matches, q * target, goals_333, q)
    lo, hi = percentile_ci(hb, confidence)
    check = np.array([0 if math.isnan(full) else int(math.floor(full * q + 0.5))])  # the step with P >= 0.5
    p_at = float(_p_solo(m4, u4, check, s_full, 50 * matches, q * target, goals_333)[0])
    p_plain = float(_p_solo(m4, u4, np.zeros(1, dtype=np.int64), s_full, 50 * matches, q * target,
                            goals_333)[0])
    return {"handicap": float(full), "ci_low": lo, "ci_high": hi, "p_solo_wins_at_handicap": p_at,
            "p_solo_wins_plain": p_plain, "deals": int(n), "target": int(target), "boot": int(boot),
            "matches": int(matches), "goals_333": bool(goals_333),
            "unbracketed_resamples": int(np.isnan(hb).sum())}


def handicap_rows(folders: list[str], boot: int, matches: int, seed: int | None = None) -> list[dict]:
    """One row per configuration of each finished edge run: the fair handicap under the
    plain rules and under goals_333, each with its interval.

    Raises:
        ValueError: a folder without a finished team-scoring edge run (naming it).
    """
    rows = []
    for folder in folders:
        doc = finished_run("FOLDER", folder, "`twilight edge`")
        for r in doc["results"]:
            moon, sun = np.asarray(r["moon_points"], dtype=np.int64), np.asarray(r["sun_points"], dtype=np.int64)
            s = doc["seed"] if seed is None else seed
            plain = fair_handicap(moon, sun, s, doc.get("target", 1000), boot, matches)
            goals = fair_handicap(moon, sun, s, doc.get("target", 1000), boot, matches, goals_333=True)
            rows.append({"folder": folder, "label": r["label"], "deals": int(moon.shape[0]),
                         "moon_minus_sun": float((moon - sun).mean()), "plain": plain, "goals_333": goals})
    return rows


NOTE = ("Fair handicap: points per deal credited to the solo's (Moon) line that make P(solo wins a fixed-solo "
        "match) = 0.5; positive: the solo is credited, negative: points are taken from it. P(solo wins) comes "
        "from this script's own simulated matches (its own random stream), so it may differ from the edge "
        "run's figure in the third decimal.")
"""Printed under the table (and written under it with ``--out``)."""
MIN_DEALS = 100
"""Below this many deals a run's handicap interval is flagged as unreliable."""


def _fmt(f: dict) -> str:
    if math.isnan(f["handicap"]):
        return "outside ±90"
    return fmt_ci(f["handicap"], f["ci_low"], f["ci_high"], digits=2, signed=True)  # no -0.00


def table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the handicap table."""
    header = ["agents", "N", "Moon − Sun per deal", "P(solo wins), no handicap", "fair handicap [95% CI]",
              "P(solo wins) at it", "fair handicap, goals_333 [95% CI]"]
    out = []
    for r in rows:
        at = "–" if math.isnan(r["plain"]["handicap"]) else f"{r['plain']['p_solo_wins_at_handicap']:.3f}"
        out.append([r["label"], r["deals"], fmt_number(r["moon_minus_sun"], 1, signed=True),
                    f"{r['plain']['p_solo_wins_plain']:.3f}", _fmt(r["plain"]), at, _fmt(r["goals_333"])])
    return header, out


def unbracketed_lines(rows: list[dict]) -> list[str]:
    """One warning per handicap whose bootstrap left resamples outside ±MAX_HANDICAP: its
    interval is taken over the others only, so it is too narrow."""
    out = []
    for r in rows:
        for key, name in (("plain", "fair handicap"), ("goals_333", "goals_333 handicap")):
            f = r[key]
            k = f.get("unbracketed_resamples", 0)
            if k and not math.isnan(f["handicap"]):
                out.append(f"{r['label']}: {k} of {f['boot']} bootstrap resamples put the {name} outside "
                           f"±{MAX_HANDICAP}; its interval leaves them out and is too narrow")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m twilight_env.experiments.edge.handicap",
        description="the fair handicap: points per deal credited to the solo's line that make a fixed-solo "
                    "match to the target an even bet, from finished edge runs' plays")
    parser.add_argument("folders", nargs="+", metavar="FOLDER", help="output folders of finished `twilight edge` runs")
    parser.add_argument("--boot", type=int, default=200, help="bootstrap resamples of the deals (default 200)")
    parser.add_argument("--matches", type=int, default=1000, help="simulated matches per resample (default 1000)")
    parser.add_argument("--out", help="also write the table (Markdown) and the figures (OUT with .json) here")
    args = parser.parse_args(argv)
    try:
        rows = handicap_rows(args.folders, args.boot, args.matches)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    header, body = table(rows)
    print(text_table(header, body))
    print(f"\n{NOTE}")
    for line in unbracketed_lines(rows):
        print(line)
    few = [r["label"] for r in rows if r["deals"] < MIN_DEALS]
    if few:
        print(f"fewer than {MIN_DEALS} deals ({', '.join(few)}): the interval is wide and the bootstrap unreliable; "
              "use more deals")
    if args.out:
        write_text(args.out, markdown_table(header, body) + "\n\n" + NOTE + "\n")  # atomically
        write_json(os.path.splitext(args.out)[0] + ".json", rows, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
