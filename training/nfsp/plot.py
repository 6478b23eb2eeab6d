"""NashConv curves of NFSP lines beside CFR+ on the same reduced decks, as one PNG.

Usage::

    python -m twilight_env.training.nfsp.plot results/nfsp/curve_1t3p.jsonl results/nfsp/curve_1t4p.jsonl \\
        --exact results/reduced_decks/reduced_decks.json --out results/nfsp/nash_conv.png

One panel per curve file (``curve.jsonl`` of ``python -m twilight_env.training.nfsp``): the
average policy's NashConv (deal points, R5, log scale) against training wall seconds, and
the seats-model CFR+ curve of the same size from ``reduced_decks.json`` against its solving
seconds (the exact solution's NashConv is 0).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def read_curve(path: str | Path) -> list[dict]:
    """The rows of a ``curve.jsonl`` (one JSON object per line).

    Raises:
        ValueError: a line that is not a JSON object, naming the file and line.
    """
    rows = []
    for k, text in enumerate(Path(path).read_text().splitlines(), start=1):
        try:
            row = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{k}: not JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{k}: not a JSON object")
        rows.append(row)
    return rows


def main(argv=None) -> int:
    """Plot (module docstring); returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m twilight_env.training.nfsp.plot", description=__doc__.splitlines()[0])
    ap.add_argument("curves", nargs="+", help="curve.jsonl files (reduced decks)")
    ap.add_argument("--labels", nargs="*", default=None, help="panel titles (default: the file names)")
    ap.add_argument("--exact", default=None, help="reduced_decks.json with the CFR+ curves")
    ap.add_argument("--sizes", nargs="*", default=None, help="TRICKS:PLAYERS of each curve, for the CFR+ line")
    ap.add_argument("--out", required=True, help="PNG file")
    a = ap.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from twilight_env.util.atomic import save_figure

    exact = json.loads(Path(a.exact).read_text())["rows"] if a.exact else []
    fig, axes = plt.subplots(1, len(a.curves), figsize=(5.5 * len(a.curves), 4), squeeze=False)
    for k, (path, ax) in enumerate(zip(a.curves, axes[0])):
        rows = [r for r in read_curve(path) if r.get("nash_conv") is not None]
        ax.plot([max(r["seconds"], 0.01) for r in rows], [max(r["nash_conv"], 1e-4) for r in rows], label="NFSP average policy")
        if a.sizes and exact:
            t, n = (int(x) for x in a.sizes[k].split(":"))
            for row in exact:
                if row["tricks"] == t and row["players"] == n and row.get("seats_cfr_plus"):
                    c = row["seats_cfr_plus"]["curve"]
                    ax.plot([max(p["seconds"], 0.01) for p in c], [max(p["nash_conv"], 1e-4) for p in c],
                            "o-", ms=3, label="CFR+ (exact tree)")
        ax.set_yscale("log")
        ax.set_xscale("log")
        ax.set_xlabel("wall seconds (training or solving; 0 drawn at 0.01)")
        ax.set_ylabel("NashConv (deal points)")
        ax.set_title(a.labels[k] if a.labels else Path(path).name)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    save_figure(fig, a.out, dpi=90)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
