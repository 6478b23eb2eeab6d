"""One finished arena run's margin minus another's, paired by deal:
``python -m twilight_env.experiments.arena_compare FOLDER_A FOLDER_B``.

Two ``twilight arena`` runs of two agents each on the same deals (the same ``--seed`` and
deal source: e.g. a trained agent against ``ismcts`` now and its starting point against
``ismcts`` before) give, deal by deal, A's side points minus B's (``pair_scores`` of the
run's one pairing, the mean of its duplicate plays: deal points per deal, R5). Each run's
first agent's margin is compared (e.g. two agents against ``ismcts``, or two responders
against their own targets); runs of the same two agents in the other order are refused.
This prints the difference
of those per-deal margins over the deals both played (the first deals of the seed), with its 95% Student-t
interval (:func:`twilight_env.util.report.mean_ci`), and the same for the plays as the solo
and as the Sun side in 3 players: paired by deal, the deal-to-deal spread of the cards
cancels, so the interval is narrower than the two runs' intervals side by side.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from twilight_env.agents.base import same_agent
from twilight_env.util.jsonfile import JsonFileError, read_json
from twilight_env.util.report import fmt_ci, mean_ci

RESULT = "arena.json"


def _pairing(folder: str) -> tuple[dict, dict]:
    """``(doc, its one pairing)`` of a finished two-agent arena run.

    Raises:
        ValueError: no readable ``arena.json``, or a run of more than one pairing.
    """
    path = os.path.join(folder, RESULT)
    try:
        doc = read_json(path, "arena output")
    except JsonFileError as e:
        raise ValueError(f"no finished arena run in {folder!r}: {e}") from None
    pairings = doc.get("results", {}).get("pairings") if isinstance(doc, dict) else None
    if not isinstance(pairings, list) or len(pairings) != 1:
        raise ValueError(f"{path!r} must hold one pairing (a run of two agents), got "
                         f"{len(pairings) if isinstance(pairings, list) else 'none'}")
    return doc, pairings[0]


def _side(pair: dict, k: int) -> np.ndarray:
    """Per deal, A's margin in play ``k`` (0: A as the solo, 1: A on the Sun side; the
    run's ``points[d][k]``, A's side deal score minus B's)."""
    return np.array([pts[k] for pts in pair["points"]], dtype=float)


def compare(folder_a: str, folder_b: str) -> dict:
    """The paired difference of two arena runs (module docstring).

    Returns:
        ``{"a", "b": (A spec, B spec) of each run, "deals": deals both played, "margin":
        (mean, low, high) of run A's per-deal margin minus run B's, "solo", "sun": the same
        for the plays as the solo / as the Sun side (3 players; absent in 4)}``, in deal
        points per deal.

    Raises:
        ValueError: a folder without a finished two-agent run, runs on different deals
            (seed, deal source or number of players), or runs of the same two agents in the
            other order (compared by :func:`~twilight_env.agents.base.same_agent`, naming the
            specs of both runs).
    """
    da, pa = _pairing(folder_a)
    db, pb = _pairing(folder_b)
    if da.get("num_players") != db.get("num_players"):
        raise ValueError(f"the runs are of {da.get('num_players')} and {db.get('num_players')} players; paired by "
                         "deal needs the same game and deals")
    sa, sb = da.get("deals_source") or {}, db.get("deals_source") or {}
    if sa != sb:
        raise ValueError(f"the runs played other deals (--seed {sa.get('seed')} from {sa.get('source')}, and --seed "
                         f"{sb.get('seed')} from {sb.get('source')}); paired by deal needs the same --seed")
    n = min(len(pa["pair_scores"]), len(pb["pair_scores"]))
    if n < 2:
        raise ValueError(f"the runs share {n} deal(s); a paired interval needs at least 2")
    if (same_agent(pa["a_spec"], pb["b_spec"]) and same_agent(pa["b_spec"], pb["a_spec"])
            and not same_agent(pa["a_spec"], pa["b_spec"])):
        raise ValueError(f"the runs hold the same two agents in the other order ({pa['a_spec']!r} and "
                         f"{pa['b_spec']!r} in one, {pb['a_spec']!r} and {pb['b_spec']!r} in the other: "
                         f"{pa['a_spec']!r} and {pb['b_spec']!r} are the same agent, and so are {pa['b_spec']!r} and "
                         f"{pb['a_spec']!r}, once every option's default is filled in): each run's first agent's "
                         "margin is compared, so the difference would be twice one margin; give runs of the agents "
                         "to compare first")
    out = {"a": (pa["a_spec"], pa["b_spec"]), "b": (pb["a_spec"], pb["b_spec"]), "deals": n,
           "margin": mean_ci(np.subtract(pa["pair_scores"][:n], pb["pair_scores"][:n]))}
    if da.get("num_players") == 3:
        for k, name in ((0, "solo"), (1, "sun")):
            out[name] = mean_ci(_side(pa, k)[:n] - _side(pb, k)[:n])
    return out


def compare_lines(r: dict) -> list[str]:
    """The lines the command prints (:func:`compare`)."""
    lines = [f"{r['a'][0]} - {r['a'][1]}  minus  {r['b'][0]} - {r['b'][1]}, paired by deal over {r['deals']} deals:",
             f"  margin {fmt_ci(*r['margin'], signed=True)} deal points per deal"]
    for name, words in (("solo", "as the solo"), ("sun", "as the Sun side")):
        if name in r:
            lines.append(f"  {words}: {fmt_ci(*r[name], signed=True)}")
    return lines


def main(argv=None) -> int:
    """Command line (module docstring); exit status 2 on bad input."""
    p = argparse.ArgumentParser(prog="python -m twilight_env.experiments.arena_compare",
                                description="one arena run's margin minus another's, paired by deal")
    p.add_argument("folder_a", help="a finished two-agent `twilight arena` output folder")
    p.add_argument("folder_b", help="another, on the same deals (same --seed and --players)")
    args = p.parse_args(argv)
    try:
        print("\n".join(compare_lines(compare(args.folder_a, args.folder_b))))
    except ValueError as e:
        print(f"arena_compare: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["compare", "compare_lines", "main"]
