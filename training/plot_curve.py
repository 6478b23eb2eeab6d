"""Learning curve PNG from a run's TensorBoard scalars.

Usage::

    python -m twilight_env.training.plot_curve RUN_DIR [RUN_DIR ...] --out results/learning_curve.png

Plots ``eval/points_vs_X`` (deal points per deal in duplicate deals, network side minus
agent X's side) with its 95% band (``eval/ci95_vs_X``) against self-play decisions seen,
one panel per run (title: the run's variant), one line per opponent.

It also prints, per run and opponent, the plateau test of the expert-iteration curves
(:func:`twilight_env.training.plot_exit_iterations.plateau`): the curve is "flat" when
the last ``--window`` evaluations (default 3) lie within each other's 95% intervals, i.e.
every pair of them overlaps.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path


def read_scalars(run_dir: str) -> dict[str, list[tuple[int, float]]]:
    """All scalars of a run directory: tag -> [(step, value)] in step order."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@dataclass(frozen=True)
class Evaluation:
    """One duplicate-deal evaluation of a run against one opponent (deal points per deal)."""

    decisions: int
    mean: float
    low: float
    high: float


def evaluations(scalars: dict[str, list[tuple[int, float]]], opponent: str) -> list[Evaluation]:
    """The evaluations against ``opponent`` in step order, each with its 95% interval
    (``eval/points_vs_X`` ± ``eval/ci95_vs_X``; a point without a logged half-width gets 0)."""
    ci = dict(scalars.get(f"eval/ci95_vs_{opponent}", []))
    return [Evaluation(step, v, v - ci.get(step, 0.0), v + ci.get(step, 0.0))
            for step, v in scalars.get(f"eval/points_vs_{opponent}", [])]


def plateau_report(run_dirs: list[str], window: int = 3) -> list[str]:
    """One line per run and opponent: the last ``window`` evaluations and whether they pass
    the plateau test (module docstring).

    Raises:
        ValueError: ``window`` below 2.
    """
    from twilight_env.training.plot_exit_iterations import plateau
    if window < 2:
        raise ValueError(f"window must be >= 2, got {window}")
    lines = []
    for run in run_dirs:
        sc = read_scalars(run)
        for name in sorted(t.rsplit("_vs_", 1)[1] for t in sc if t.startswith("eval/points_vs_")):
            evs = evaluations(sc, name)
            last = ", ".join(f"{e.mean:+.1f} [{e.low:+.1f}, {e.high:+.1f}] at {e.decisions:,}" for e in evs[-window:])
            verdict = "yes" if plateau(evs, window) else ("no" if len(evs) >= window else f"no (only {len(evs)})")
            lines.append(f"{Path(run).name} vs {name}: last {min(window, len(evs))} evaluations {last}; "
                         f"flat: {verdict}")
    return lines


def plot(run_dirs: list[str], out: str, titles: list[str] | None = None,
         marks: list[tuple[int, int, str]] | None = None) -> None:
    """Write the PNG (see the module docstring).

    Args:
        marks: ``(panel, step, label)``: a dashed vertical line with a label in that panel.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(run_dirs), figsize=(6 * len(run_dirs), 4), squeeze=False)
    for i, run in enumerate(run_dirs):
        ax = axes[0, i]
        sc = read_scalars(run)
        for tag in sorted(t for t in sc if t.startswith("eval/points_vs_")):
            name = tag.rsplit("_vs_", 1)[1]
            evs = evaluations(sc, name)
            steps = [e.decisions for e in evs]
            ax.plot(steps, [e.mean for e in evs], marker="o", label=f"vs {name}")
            if f"eval/ci95_vs_{name}" in sc:
                ax.fill_between(steps, [e.low for e in evs], [e.high for e in evs], alpha=0.2)
        ax.axhline(0.0, color="grey", lw=0.8)
        for panel, step, label in marks or []:
            if panel == i:
                ax.axvline(step, color="black", ls="--", lw=0.8)
                ax.annotate(label, (step, ax.get_ylim()[1]), fontsize=7, ha="right", va="top", rotation=90)
        ax.set_xlabel("self-play decisions seen")
        ax.set_ylabel("deal points per deal (duplicate, 95% CI)")
        ax.set_title(titles[i] if titles else Path(run).name)
        ax.legend()
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.plot_curve", description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--titles", nargs="*", default=None)
    p.add_argument("--mark", action="append", default=[], metavar="PANEL:STEP:LABEL",
                   help="dashed vertical line with a label, e.g. 0:3637248:resumed")
    p.add_argument("--window", type=int, default=3,
                   help="plateau test: the last N evaluations' intervals overlap pairwise (N >= 2; default 3)")
    args = p.parse_args(argv)
    if args.window < 2:
        p.error(f"--window must be at least 2, got {args.window}")
    marks = []
    for m in args.mark:
        panel, step, label = m.split(":", 2)
        marks.append((int(panel), int(step), label))
    plot(args.runs, args.out, args.titles, marks)
    print(f"wrote {args.out}")
    for line in plateau_report(args.runs, args.window):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
