"""Learning curve PNG from a run's TensorBoard scalars.

Usage::

    python -m twilight_env.training.plot_curve RUN_DIR [RUN_DIR ...] --out results/learning_curve.png

Plots ``eval/points_vs_X`` (deal points per deal in duplicate deals, network side minus
agent X's side) with its 95% band (``eval/ci95_vs_X``) against self-play decisions seen,
one panel per run (title: the run's variant), one line per opponent.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def read_scalars(run_dir: str) -> dict[str, list[tuple[int, float]]]:
    """All scalars of a run directory: tag -> [(step, value)] in step order."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


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
            steps = [s for s, _ in sc[tag]]
            vals = [v for _, v in sc[tag]]
            ax.plot(steps, vals, marker="o", label=f"vs {name}")
            ci = dict(sc.get(f"eval/ci95_vs_{name}", []))
            if ci:
                lo = [v - ci.get(s, 0.0) for s, v in zip(steps, vals)]
                hi = [v + ci.get(s, 0.0) for s, v in zip(steps, vals)]
                ax.fill_between(steps, lo, hi, alpha=0.2)
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
    args = p.parse_args(argv)
    marks = []
    for m in args.mark:
        panel, step, label = m.split(":", 2)
        marks.append((int(panel), int(step), label))
    plot(args.runs, args.out, args.titles, marks)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
