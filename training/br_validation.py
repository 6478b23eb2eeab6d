"""Approximate best responders against the exact best response, on endgames small enough to enumerate.

A best responder's margin is a lower bound on a fixed agent's exploitability (Timbers et al.
2022); how far below the exact best response it stays can be measured where the exact
one can be computed. This module does so on endgames of a few tricks:

1. **Positions.** Deals are played with the fixed agent (the *target*) on every seat, the
   responder's decisions now and then replaced by a random legal action (so that the
   positions are not only the target's own lines), until ``tricks_left`` tricks remain and
   the responder is to decide with at least two legal actions.
2. **Every world.** Every deal of the unseen cards consistent with the responder's
   information set (R2.5: each hidden hand keeps its public Sun and Moon counts; R7.1: the
   new moon's hand is open) is enumerated and weighted by the likelihood of the target's
   play in it: the product over the target's past decisions of its probability of the
   action it took there (Bayes' rule; all deals of the unseen cards are equally likely a
   priori, R2.3). A greedy target's probabilities are 0 or 1: the worlds in which it would
   have made each of its past decisions as it did are kept, with equal weights. A sampled
   target (``temperature > 0``, :mod:`twilight_env.agents.sampling`) keeps every world of
   positive likelihood, weighted.
3. **The exact best response** over the rest of the deal: the responder chooses at each of
   its information sets (all plays are public, so the worlds it cannot tell apart are those
   with the same public actions), the target plays its policy in each world (a sampled
   target: each of its actions, weighted by its probability), and the value is the
   weighted mean over the kept worlds of the responder side's deal score minus the other's
   (deal points, R5), maximised by backward induction (``max`` at the responder's
   information sets, one action for all worlds in them).
4. **Each approximate responder** plays every responder decision of the same endgame (its
   action chosen from its information set), and its value is computed over the same worlds
   exactly. Its *gap* is the exact best response's value minus its own (>= 0).

Responder seats: ``solo`` (3 players: the solo, deciding for both Moon hands, R7.3), a
single seat (``seat=S``: the other seats, the partner included, play the target), or a team
(``team=S``: seat S and its partner S ^ 2, the 3-player Sun pair with ``team=1``). For a team
the exact best response of a team without communication (TMECor's setting) is not computed
by backward induction; the reference is the value of the team that shows each other its
hands below the root decision (:func:`tree_value` with ``partner``), an upper bound on it,
and each responder plays both seats, each from its own information set, so its gap to that
bound is at least its gap to the team's best response.

Usage (the last: the 3-player Sun pair as a team, ``team=joint`` against ``independent``)::

    python -m twilight_env.training.br_validation --target exit:default --players 3 --mode solo \\
        --positions 100 --tricks-left 2 --responder respond:target=exit:default --seed 5
    python -m twilight_env.training.br_validation --target policy:default,temperature=1 \\
        --positions 100 --tricks-left 2 --responder respond:target=policy:default,temperature=1
    python -m twilight_env.training.br_validation --target policy:default,temperature=1 --players 3 \\
        --mode team=1 --positions 40 --tricks-left 2 --seed 5 \\
        --responder respond:target=policy:default,temperature=1,exact_tricks=2 \\
        --responder respond:target=policy:default,temperature=1,exact_tricks=2,team=joint

It prints one row per responder (mean gap with a 95% interval, positions with no gap,
positions whose first action is a best one) and writes the per-position figures as JSON
with ``--out``.
"""

from __future__ import annotations

from twilight_env.util.extras import require

require("torch", "train", "twilight_env.training.br_validation", as_main=__name__ == "__main__")

import argparse  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.util.report import fmt_ci, mean_ci, write_json_atomic  # noqa: E402
from twilight_env.util.seeding import check_seed  # noqa: E402
from twilight_env.training.search_response import (NEW_MOON, Target, outcome, split_by_action,  # noqa: E402,F401
                                                    total_outcome,
                                                    consistent_worlds, enumerate_hands, exact_value,
                                                    target_branches, tree_value, weighted_worlds)

def responder_seats(mode: str, num_players: int) -> frozenset[int]:
    """The deciding seats the responder plays: ``solo`` (3 players: seat 0, which decides for
    both Moon hands, R7.3), ``seat=S`` (one seat; in 3 players 0, 1 or 3) or ``team=S``
    (seat S and its partner S ^ 2, both played by the responder from their own information
    sets: the 3-player Sun pair ``team=1``, or a 4-player side).

    Raises:
        ValueError: another mode, or a seat that does not decide in this variant.
    """
    if mode.startswith("team="):
        try:
            seat = int(mode[5:])
        except ValueError:
            seat = -1
        allowed = (1, 3) if num_players == 3 else (0, 1, 2, 3)
        if seat not in allowed:
            raise ValueError(f"mode {mode!r}: the seat must be one of {allowed} in {num_players} players "
                             "(a seat with a partner)")
        return frozenset({seat, seat ^ 2})
    if mode == "solo":
        if num_players != 3:
            raise ValueError("mode 'solo' is the 3-player solo; use seat=S in 4 players")
        return frozenset({0})
    if mode.startswith("seat="):
        try:
            seat = int(mode[5:])
        except ValueError:
            seat = -1
        allowed = (0, 1, 3) if num_players == 3 else (0, 1, 2, 3)
        if seat not in allowed:
            raise ValueError(f"mode {mode!r}: the seat must be one of {allowed} in {num_players} players")
        return frozenset({seat})
    raise ValueError(f"mode must be 'solo', 'seat=S' or 'team=S', got {mode!r}")


def policy_value(states: list[State], target: Target, resp: frozenset[int], side: int, responder,
                 rng: np.random.Generator, weights: np.ndarray | None = None) -> tuple[float, int | None]:
    """The total outcome over ``states`` (times ``weights``, the likelihood of the target's
    play in each world; None: all 1) when ``responder`` (an agent) plays every responder
    decision from its information set, the target's decisions taken in expectation over its
    probabilities; also the responder's action at the root (None unless it decides).
    ``responder`` None: the target's own policy on the responder seats too, in expectation."""
    if not target.deterministic:  # level by level, the target's probabilities in batches
        w = np.ones(len(states)) if weights is None else weights
        total, per = tree_value(states, w, target, resp, side, responder, rng, best=False)
        return total, (next(iter(per)) if per else None)
    if states[0].done:
        return total_outcome(states, weights, side), None
    dec = states[0].deciding_seat
    if dec in resp and responder is not None:
        info = InfoSet(states[0], dec)
        legal = info.legal_actions
        a = int(legal[0]) if len(legal) == 1 else int(responder.act(info, legal, rng))
        worlds = split_by_action(states, [a] * len(states))[a]
        return policy_value(worlds, target, resp, side, responder, rng, weights)[0], a
    return float(sum(policy_value(g, target, resp, side, responder, rng, w)[0]
                     for _, g, w in target_branches(states, weights, target))), None


def responder_value(states: list[State], weights: np.ndarray | None, target: Target, resp: frozenset[int], side: int,
                    responder, rng: np.random.Generator, partner: int | None = None) -> tuple[float, int | None]:
    """:func:`policy_value`, or with ``partner`` (``team=S``) the same with the worlds split by the
    partner's hand below the root (:func:`tree_value`), so that each of the partner's decisions
    is asked from its own information set (its hand) and the responder's own later decisions
    from the responder's; the total over the worlds times their weights."""
    if partner is None:
        return policy_value(states, target, resp, side, responder, rng, weights)
    w = np.ones(len(states)) if weights is None else weights
    total, per = tree_value(states, w, target, resp, side, responder, rng, best=False, partner=partner)
    return total, (next(iter(per)) if per else None)


def endgame_positions(target: Target, num_players: int, resp: frozenset[int], n: int, tricks_left: int,
                      seed: int, explore: float = 0.3) -> list[State]:
    """``n`` positions with ``tricks_left`` tricks to play and the responder to decide among
    two or more actions, from deals played by the target (a sampled target's actions drawn
    from its probabilities; the responder's decisions replaced by a random legal action with
    probability ``explore``)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        st = State.random(rng, 0 if num_players == 3 else int(rng.integers(4)), num_players)  # R7.2
        while not st.done:
            if st.trick >= 7 - tricks_left and st.deciding_seat in resp and len(st.legal_actions()) >= 2:
                out.append(st)
                break
            if st.trick > 7 - tricks_left:
                break
            la = st.legal_actions()
            if st.deciding_seat in resp and rng.random() < explore:
                a = int(la[int(rng.integers(len(la)))])
            else:
                a = target.actions([st], rng)[0]
            st.apply(a)
    return out


@dataclass
class PositionResult:
    """One endgame's figures (deal points per world, the responder side's view; for a sampled
    target, means over the worlds weighted by the likelihood of its play)."""

    worlds: float
    """Consistent worlds; for a sampled target their effective number ``(Σw)² / Σw²``."""
    exact: float
    exact_best_actions: list[int]
    target_value: float
    responders: dict[str, dict]
    positive_worlds: int
    """Worlds in which the target's play has a positive likelihood."""


def validate(target_spec: str, responder_specs: list[str], num_players: int, mode: str, positions: int,
             tricks_left: int, seed: int, progress: bool = True) -> dict:
    """Run the comparison of the module docstring.

    Returns:
        a JSON-ready dict: settings, per-position results and per-responder summaries
        (mean gap with a 95% t interval, share with no gap, share whose first action is a
        best one).

    Raises:
        ValueError: a bad mode, seat, count, seed or agent spec.
    """
    check_seed(seed)
    if not 1 <= tricks_left <= 3:
        raise ValueError(f"tricks_left must be 1, 2 or 3 (larger endgames do not enumerate quickly), got {tricks_left}")
    if positions < 1:
        raise ValueError(f"positions must be >= 1, got {positions}")
    resp = responder_seats(mode, num_players)
    target = Target(target_spec)
    responders = {s: make_agent(s) for s in responder_specs}
    t0 = time.perf_counter()
    rows = []
    for k, st in enumerate(endgame_positions(target, num_players, resp, positions, tricks_left, seed)):
        info = InfoSet(st, st.deciding_seat)
        side = st.deciding_seat & 1
        worlds, weights = weighted_worlds(info, target, resp)
        if not worlds:  # cannot happen for a target on its own play; kept as a check
            raise AssertionError(f"position {k}: no world is consistent with the target's play")
        if target.deterministic:
            weights = None  # all 1: the sums of integer outcomes, as before weights existed
            n = norm = float(len(worlds))
        else:
            n, norm = float(weights.sum() ** 2 / (weights ** 2).sum()), float(weights.sum())
        partner = st.deciding_seat ^ 2 if mode.startswith("team=") else None
        if partner is None:
            best, per = exact_value(worlds, target, resp, side, weights)
        else:  # the information-sharing team's value: an upper bound on the team's best response
            best, per = tree_value(worlds, np.ones(len(worlds)) if weights is None else weights, target, resp, side,
                                   partner=partner)
        best_actions = sorted(a for a, v in per.items() if v >= best - 1e-9 * max(1.0, abs(best)))
        tv, _ = policy_value(worlds, target, resp, side, None, np.random.default_rng(0), weights)
        res = {}
        for spec, agent in responders.items():
            v, first = responder_value(worlds, weights, target, resp, side, agent, np.random.default_rng((seed, k)),
                                       partner)
            res[spec] = {"value": v / norm, "gap": (best - v) / norm, "first_action": first,
                         "first_is_best": first in best_actions}
        rows.append(PositionResult(n, best / norm, best_actions, tv / norm, res, len(worlds)))
        if progress:
            print(f"position {k + 1}/{positions}: {n:.4g} worlds, {'bound' if partner is not None else 'exact'} {best / norm:+.1f}, target {tv / norm:+.1f}, "
                  + ", ".join(f"#{i + 1} gap {r['gap']:.1f}" for i, r in enumerate(res.values())), flush=True)
    summary = {}
    for spec in responder_specs:
        gaps = np.array([r.responders[spec]["gap"] for r in rows])
        summary[spec] = {"mean_gap": list(mean_ci(gaps)), "no_gap": float(np.mean(gaps < 1e-9)),
                         "first_is_best": float(np.mean([r.responders[spec]["first_is_best"] for r in rows]))}
    room = np.array([r.exact - r.target_value for r in rows])
    return {"target": target_spec, "players": num_players, "mode": mode, "positions": positions,
            "tricks_left": tricks_left, "seed": seed, "seconds": time.perf_counter() - t0,
            "mean_worlds": float(np.mean([r.worlds for r in rows])),
            "mean_positive_worlds": float(np.mean([r.positive_worlds for r in rows])),
            "exact_minus_target": list(mean_ci(room)),
            "summary": summary, "rows": [r.__dict__ for r in rows]}


def report(result: dict) -> str:
    """The summary table of :func:`validate`'s result (deal points per position)."""
    width = max([44, *(len(k) + 4 for k in result["summary"])])
    lines = [f"target {result['target']}, {result['players']} players, mode {result['mode']}, "
             f"{result['positions']} position{'s' if result['positions'] != 1 else ''} with {result['tricks_left']} "
             f"trick{'s' if result['tricks_left'] != 1 else ''} left "
             + (f"(mean {result['mean_worlds']:.1f} consistent worlds)" if result["mean_positive_worlds"]
                == result["mean_worlds"] else f"(mean {result['mean_positive_worlds']:.1f} worlds of positive "
                f"likelihood, effectively {result['mean_worlds']:.1f})") + f", {result['seconds']:.0f} s",
             ("the information-sharing team's value (an upper bound on the team's best response; the gaps are to "
              "it) minus the target on the responder seats: " if str(result["mode"]).startswith("team=") else
              "exact best response minus the target on the responder seats: ")
             + fmt_ci(*result["exact_minus_target"], digits=2, signed=True),
             f"{'responder':{width}s} {'mean gap [95% CI]':>24s} {'no gap':>7s} {'first best':>11s}"]
    for i, (spec, s) in enumerate(result["summary"].items()):
        lines.append(f"{f'#{i + 1} {spec}':{width}s} {fmt_ci(*s['mean_gap'], digits=2):>24s} "
                     f"{s['no_gap']:7.2f} {s['first_is_best']:11.2f}")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m twilight_env.training.br_validation",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="exit:default",
                    help="the fixed agent: exit, neural or policy (any temperature) or heuristic; default exit:default")
    ap.add_argument("--responder", action="append", required=True,
                    help="an approximate responder's agent spec (repeat for several)")
    ap.add_argument("--players", type=int, choices=(3, 4), default=3, help="3 or 4 players (default %(default)s)")
    ap.add_argument("--mode", default="solo",
                    help="solo (3 players), seat=S (0, 1 or 3 in 3 players), or team=S (seat S and its partner S ^ 2, "
                         "both played by each responder: S is 1 or 3 in 3 players, the Sun pair; default solo)")
    ap.add_argument("--positions", type=int, default=100, help="endgame positions checked (default %(default)s)")
    ap.add_argument("--tricks-left", type=int, default=2,
                    help="tricks left in each position, solved exactly (default %(default)s)")
    ap.add_argument("--seed", type=int, default=5, help="seed of the positions (default %(default)s)")
    ap.add_argument("--out", help="write the per-position figures to this JSON file")
    ap.add_argument("--quiet", action="store_true", help="no progress")
    args = ap.parse_args(argv)
    try:
        result = validate(args.target, args.responder, args.players, args.mode, args.positions, args.tricks_left,
                          args.seed, progress=not args.quiet)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    print(report(result))
    if args.out:
        write_json_atomic(args.out, result)


if __name__ == "__main__":
    main()
