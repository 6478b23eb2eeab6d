"""Validation curves of ``training.exit train`` runs side by side: table and PNG.

Usage::

    python -m twilight_env.training.plot_fit RUN_A RUN_B --labels mlp cards \\
        --out docs/exit_design_3p.png

Reads each run directory's TensorBoard scalars as ``training.exit train`` logs them, one
value per epoch: ``val/policy_loss`` (cross-entropy of the policy head against the
search's visit distribution, nats), ``val/value_loss`` (squared error of the value head
against the deal's outcome, in (deal points / 360) squared, R5), ``val/policy_accuracy``
(share of held-back decisions where the policy's argmax is the most visited action) and
the ``train/`` losses. Draws one panel per validation quantity (training losses dashed),
one line per run, and prints per run the last epoch and the best epoch of each quantity.
Runs compare only when they were trained on the same data with the same ``--holdout`` and
``--seed``: then their validation decisions are the same.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from twilight_env.training.plot_curve import read_scalars

PANELS = (("val/policy_loss", "train/policy_loss", "policy loss (nats)", min),
          ("val/value_loss", "train/value_loss", "value loss (squared error)", min),
          ("val/policy_accuracy", None, "accuracy of the most visited action", max))
"""(validation tag, training tag or None, axis label, which is best) per panel."""


def fit_curves(run_dir: str) -> dict[str, list[tuple[int, float]]]:
    """The run's per-epoch scalars that :data:`PANELS` names: tag -> [(epoch, value)].

    Raises:
        ValueError: no such directory, or it holds no ``val/policy_loss`` scalars (not a
            ``training.exit train`` run, or one trained with ``--holdout 0``).
    """
    if not Path(run_dir).is_dir():
        raise ValueError(f"{run_dir!r} is not a directory; give run directories of "
                         "`python -m twilight_env.training.exit train`")
    sc = read_scalars(run_dir)
    if not sc.get("val/policy_loss"):
        found = ", ".join(sorted(sc)) or "no scalars"
        raise ValueError(f"{run_dir!r} has no val/policy_loss scalars (found: {found}); give run "
                         "directories of `python -m twilight_env.training.exit train` with --holdout > 0")
    tags = {t for val, train, _, _ in PANELS for t in (val, train) if t}
    return {t: v for t, v in sc.items() if t in tags}


def report(curves: dict[str, dict[str, list[tuple[int, float]]]]) -> list[str]:
    """One line per run (``curves``: label -> :func:`fit_curves`): its epochs, last values and
    the best epoch of each validation quantity."""
    lines = []
    for label, sc in curves.items():
        parts = [f"{label}: {len(sc['val/policy_loss'])} epochs"]
        for val, _, _, best in PANELS:
            series = sc.get(val, [])
            if series:
                b = best(series, key=lambda p: p[1])
                parts.append(f"{val} last {series[-1][1]:.4f}, best {b[1]:.4f} at epoch {b[0]}")
        lines.append("; ".join(parts))
    return lines


def plot(curves: dict[str, dict[str, list[tuple[int, float]]]], out: str) -> None:
    """Write the PNG (``curves``: label -> :func:`fit_curves`): one panel per :data:`PANELS`
    entry, one colour per run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(PANELS), figsize=(5 * len(PANELS), 3.8))
    for i, (label, sc) in enumerate(curves.items()):
        colour = f"C{i}"
        for ax, (val, train, ylabel, _) in zip(axes, PANELS):
            if sc.get(val):
                ax.plot(*zip(*sc[val]), marker="o", ms=3, color=colour, label=f"{label} (validation)")
            if train and sc.get(train):
                ax.plot(*zip(*sc[train]), ls="--", color=colour, alpha=0.6, label=f"{label} (training)")
            ax.set_xlabel("epoch")
            ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.plot_fit", description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="run directories of `training.exit train`")
    p.add_argument("--labels", nargs="+", default=None, help="one name per run (default: the directory names)")
    p.add_argument("--out", required=True, help="PNG to write")
    args = p.parse_args(argv)
    labels = args.labels or [Path(r).name for r in args.runs]
    if len(labels) != len(args.runs) or len(set(labels)) != len(labels):
        p.error(f"--labels gives {labels} for {len(args.runs)} runs; give one distinct name per run")
    try:
        curves = {label: fit_curves(run) for label, run in zip(labels, args.runs)}
    except ValueError as e:
        p.error(str(e))
    plot(curves, args.out)
    print(f"wrote {args.out}")
    for line in report(curves):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
