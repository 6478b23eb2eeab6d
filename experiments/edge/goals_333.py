"""``python -m twilight_env.experiments.edge.goals_333 FOLDER ...``: the solo's match chances under the
``goals_333`` variant (R6.2), from finished ``twilight edge`` runs, without playing again.

Deal play does not depend on the match rules for this package's agents (none reads the
match totals), so a run's per-deal points (``edge.json``) serve both rule sets: for each
configuration this prints P(solo wins a fixed-solo match to the run's target) under the
plain rules (R6.1, as stored) and under ``goals_333`` (a match also ends when exactly one
side's total is exactly 333, 666 or 999), each with its bootstrap interval
(:func:`twilight_env.experiments.edge.matches.match_figures`, the run's seed, 200 resamples × 1000 matches).
Runs made before the goals figure existed get it here; newer ``edge.json`` files hold it
under ``figures.matches.fixed_solo_goals_333``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from twilight_env.experiments.edge.core import config_key, load_result
from twilight_env.experiments.edge.matches import match_figures


def figures(folder: str) -> list[dict]:
    """Per configuration of the run in ``folder``: label, N and both fixed-solo figures.

    Raises:
        ValueError: no readable edge.json in the folder.
    """
    doc = load_result(folder)
    out = []
    for r in doc["results"]:
        f = match_figures(np.asarray(r["moon_points"]), np.asarray(r["sun_points"]), int(doc["seed"]),
                          config_key(r["solo_spec"], r["sun_spec"]), int(doc["target"]))
        out.append({"label": r["label"], "deals": int(doc["deals"]), "plain": f["fixed_solo"],
                    "goals_333": f["fixed_solo_goals_333"]})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.experiments.edge.goals_333", description=" ".join(__doc__.split("\n\n")[0].split()))
    p.add_argument("folders", nargs="+", metavar="FOLDER", help="output folders of finished twilight edge runs")
    args = p.parse_args(argv)
    for folder in args.folders:
        try:
            rows = figures(folder)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        for r in rows:
            a, g = r["plain"], r["goals_333"]
            print(f"{os.path.basename(os.path.normpath(folder))}  {r['label']}  N={r['deals']}  "
                  f"P(solo wins) plain {a['p_solo_wins']:.3f} [{a['ci_low']:.3f}, {a['ci_high']:.3f}]  "
                  f"goals_333 {g['p_solo_wins']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}], "
                  f"{g['mean_deals']:.1f} deals per match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
