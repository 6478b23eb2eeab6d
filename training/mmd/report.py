"""Summary of finished MMD runs: their curves and the time each took to reach a NashConv.

``python -m twilight_env.training.mmd.report RUN_DIR... --out FOLDER`` copies each run's
``curve.jsonl`` to ``FOLDER/curve_<run>.jsonl`` and writes ``FOLDER/summary.json``: per run
its settings, the last curve point, the lowest NashConv, the first wall second and update
at which the NashConv fell to or below each of :data:`THRESHOLDS` (deal points; null: never),
the NashConv at :data:`WALL_MARKS` seconds and the 1-minute load average over the run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from twilight_env.util.atomic import write_json

from twilight_env.training.mmd import checkpoint as ckpt_io
from twilight_env.training.mmd.config import MMDConfig
from twilight_env.training.mmd.run import CURVE_NAME

THRESHOLDS = (10.0, 1.0, 0.1, 0.01, 0.001, 0.0001)
"""NashConv levels (deal points) whose first crossing is reported."""
WALL_MARKS = (60, 120, 300, 600, 900)
"""Wall seconds at which the NashConv of the last curve point so far is reported."""


CURVE_KEYS = ("seconds", "steps", "load")
"""The entries every curve point has (``training/mmd/run.py``)."""


def read_curve(run: str | Path) -> list[dict]:
    """The points of ``run/curve.jsonl``, one dict per non-blank line.

    Raises:
        ValueError: no curve file, or a line that is not a JSON object with :data:`CURVE_KEYS`
            or not UTF-8 (naming the file and the line number).
    """
    path = Path(run) / CURVE_NAME
    if not path.is_file():
        raise ValueError(f"{str(run)!r} holds no {CURVE_NAME} (the curve a run writes from its start)")
    points = []
    for number, line in ckpt_io.curve_lines(path):  # a line that is not UTF-8: None, named below
        try:
            point = json.loads(line)
        except (ValueError, TypeError):
            point = None
        if not isinstance(point, dict) or any(not isinstance(point.get(k), (int, float)) for k in CURVE_KEYS):
            shown = "not UTF-8" if line is None else repr(line[:80])
            raise ValueError(f"{str(path)!r} line {number} is not a curve point (JSON with "
                             f"{', '.join(CURVE_KEYS)}): {shown}")
        points.append(point)
    return points


def summarise(run: str | Path) -> dict:
    """The summary of one run directory (module docstring).

    Raises:
        ValueError: a run without a checked checkpoint or a curve with a NashConv, or a
            damaged curve (:func:`read_curve`).
    """
    run = Path(run)
    cfg = MMDConfig.from_dict(ckpt_io.load(run)["config"]).to_dict()  # fields added later: their old value
    points = read_curve(run)
    scored = [p for p in points if "nash_conv" in p]
    if not scored:
        raise ValueError(f"{str(run)!r}: the curve holds no NashConv (a full-deck run?)")
    best = min(scored, key=lambda p: p["nash_conv"])
    first = {}
    for t in THRESHOLDS:
        hit = next((p for p in scored if p["nash_conv"] <= t), None)
        first[str(t)] = None if hit is None else {"seconds": hit["seconds"], "steps": hit["steps"]}
    at = {str(t): next((p["nash_conv"] for p in reversed(scored) if p["seconds"] <= t), None) for t in WALL_MARKS}
    loads = [p["load"] for p in points]
    return {"run": run.name, "config": cfg, "last": scored[-1], "lowest": best, "first_at_or_below": first, "at_seconds": at,
            "load_1min": {"min": min(loads), "max": max(loads), "mean": round(sum(loads) / len(loads), 2)}}


def _checked_rows(runs: list[str], out: Path) -> list[dict]:
    """The summary of every run, each checked before anything is written (:func:`main`)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, not a folder")
    rows = [summarise(r) for r in runs]
    names = [row["run"] for row in rows]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two runs are named {twice[0]!r} ({', '.join(r for r in runs if Path(r).name == twice[0])}): "
                         f"each would write {'curve_' + twice[0] + '.jsonl'!r}; give each run once, from folders "
                         "of different names")
    return rows


def main(argv=None) -> int:
    """Command line (module docstring); returns the exit status (2 on a bad run or --out, one
    line on stderr, before anything is written)."""
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.mmd.report", description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="MMD run directories")
    p.add_argument("--out", required=True, help="folder for summary.json and the curves")
    args = p.parse_args(argv)
    out = Path(args.out)
    try:
        rows = _checked_rows(args.runs, out)
        out.mkdir(parents=True, exist_ok=True)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for r, row in zip(args.runs, rows):
        shutil.copyfile(Path(r) / CURVE_NAME, out / f"curve_{row['run']}.jsonl")
    write_json(out / "summary.json", {"thresholds": list(THRESHOLDS), "runs": rows}, indent=1)
    for row in rows:
        print(f"{row['run']}: last {row['last']['nash_conv']:.4f} at {row['last']['seconds']:.0f} s "
              f"({row['last']['steps']} updates), lowest {row['lowest']['nash_conv']:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["CURVE_KEYS", "THRESHOLDS", "WALL_MARKS", "main", "read_curve", "summarise"]
