"""Strength of each expert-iteration network against a fixed opponent: table, plateau test, PNG.

Usage::

    python -m twilight_env.training.plot_exit_iterations \\
        --point 1:197767:ARENA_FOLDER_1 --point 2:64502:ARENA_FOLDER_2 ... \\
        --opponent ismcts --out docs/exit_iterations_3p.png

Each ``--point ITERATION:DECISIONS:FOLDER`` names one finished ``twilight arena`` run
(``FOLDER/arena.json``) in which the iteration's network played the fixed opponent on
duplicate deals; ``DECISIONS`` is the number of search-labelled decisions that iteration
added. The network is the other side of the one pairing whose spec is ``--opponent``;
its points per deal (network side minus opponent side, R5) and the 95% Student-t
interval are read from the file, never recomputed. Compare runs on the same deal seed
and deal count only: the script refuses points whose seeds or deal counts differ.

Plateau ("flat"): the last ``--window`` evaluations (default 3) lie within each other's
intervals, i.e. every pair of them overlaps (:func:`plateau`).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Point:
    """One iteration's strength: points per deal for the network against the opponent."""

    iteration: int
    decisions: int
    network: str
    mean: float
    low: float
    high: float
    deals: int
    seed: int
    folder: str


def read_point(iteration: int, decisions: int, folder: str | Path, opponent: str) -> Point:
    """The network-vs-``opponent`` pairing of one arena run, from the network's side.

    Raises:
        FileNotFoundError: no ``FOLDER/arena.json`` (an unfinished or wrong folder).
        ValueError: not exactly one pairing has ``opponent`` on one side and another spec
            on the other (the message lists the pairings found).
    """
    path = Path(folder) / "arena.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no arena.json; --point needs the folder of a finished `twilight arena` run")
    d = json.loads(path.read_text())
    pairs = d["results"]["pairings"]
    hits = [p for p in pairs if (p["a"] == opponent) != (p["b"] == opponent)]
    if len(hits) != 1:
        found = ", ".join(f"{p['a']} vs {p['b']}" for p in pairs)
        raise ValueError(f"{path}: {len(hits)} pairings against {opponent!r} (need exactly 1); pairings: {found}")
    p = hits[0]
    if p["b"] == opponent:
        net, mean, lo, hi = p["a"], p["mean"], p["ci_low"], p["ci_high"]
    else:  # the network is B: A's figures from B's side
        net, mean, lo, hi = p["b"], -p["mean"], -p["ci_high"], -p["ci_low"]
    return Point(iteration, decisions, net, float(mean), float(lo), float(hi), int(p["deals"]), int(d["seed"]),
                 str(folder))


def plateau(points: list[Point], window: int = 3) -> bool:
    """True when the last ``window`` points' intervals overlap pairwise (fewer points: False).

    ``points`` may be any objects with ``low`` and ``high`` (the 95% interval's ends), in
    order; ``training.plot_curve`` passes the DMC curve's evaluations."""
    if window < 2:
        raise ValueError(f"window must be >= 2, got {window}")
    last = points[-window:]
    if len(last) < window:
        return False
    return all(a.low <= b.high and b.low <= a.high for i, a in enumerate(last) for b in last[i + 1:])


def check_same_deals(points: list[Point]) -> None:
    """Raise ValueError unless every point was measured on the same deal seed and count."""
    keys = {(p.seed, p.deals) for p in points}
    if len(keys) > 1:
        raise ValueError("the points were measured on different deals (seed, deals): "
                         + ", ".join(f"iteration {p.iteration}: ({p.seed}, {p.deals})" for p in points))


def table(points: list[Point]) -> str:
    """A Markdown table of the points, one row per iteration."""
    rows = ["| iteration | decisions added | total decisions | network | points per deal [95% CI] |",
            "|---|---|---|---|---|"]
    total = 0
    for p in points:
        total += p.decisions
        rows.append(f"| {p.iteration} | {p.decisions:,} | {total:,} | `{p.network}` | "
                    f"{p.mean:+.1f} [{p.low:+.1f}, {p.high:+.1f}] |")
    return "\n".join(rows)


def plot(points: list[Point], opponent: str, out: str | Path, title: str = "") -> None:
    """Write the PNG: points per deal against iteration, 95% error bars, the zero line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [p.iteration for p in points]
    ys = [p.mean for p in points]
    err = [[p.mean - p.low for p in points], [p.high - p.mean for p in points]]
    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, label=f"network alone vs {opponent}")
    total = 0
    for p in points:
        total += p.decisions
        ax.annotate(f"{total / 1000:.0f}k", (p.iteration, p.high), textcoords="offset points", xytext=(0, 4),
                    ha="center", fontsize=7)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xticks(xs)
    ax.set_xlabel("expert iteration (label: search-labelled decisions so far)")
    ax.set_ylabel(f"deal points per deal vs {opponent}\n(duplicate, {points[0].deals} deals, seed {points[0].seed})")
    ax.set_title(title or "expert iteration: the network alone against a fixed search")
    ax.legend(loc="lower right")
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _point_arg(text: str) -> tuple[int, int, str]:
    try:
        it, dec, folder = text.split(":", 2)
        return int(it), int(dec), folder
    except ValueError:
        raise argparse.ArgumentTypeError(f"--point needs ITERATION:DECISIONS:FOLDER (two integers and a folder), "
                                         f"got {text!r}") from None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.plot_exit_iterations",
                                description=__doc__.splitlines()[0])
    p.add_argument("--point", type=_point_arg, action="append", required=True, metavar="ITERATION:DECISIONS:FOLDER")
    p.add_argument("--opponent", default="ismcts", help="the fixed opponent's spec as written in the arena run")
    p.add_argument("--window", type=int, default=3, help="plateau: the last N intervals overlap pairwise")
    p.add_argument("--title", default="")
    p.add_argument("--out", required=True, help="PNG path")
    a = p.parse_args(argv)
    points = sorted((read_point(it, dec, f, a.opponent) for it, dec, f in a.point), key=lambda q: q.iteration)
    check_same_deals(points)
    plot(points, a.opponent, a.out, a.title)
    print(table(points))
    flat = plateau(points, a.window)
    print(f"\nplateau (last {a.window} intervals overlap pairwise): {'yes' if flat else 'no'}")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
