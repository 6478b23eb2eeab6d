"""PIMC and IS-MCTS on positions whose hidden cards are forced: they must agree with
the exact solver, from either side's point of view (value signs, R7.3)."""

from __future__ import annotations

import numpy as np
import pytest

from twilight_env.rules.cards import ALL_MASK, ids_of, mask_of
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents.base import make_agent
from twilight_env.agents.pimc import PIMCAgent
from twilight_env.agents.solver import Solver


def _last_trick(hands_codes, leader, captured_seat1, pending_codes=()):
    """3 players, last trick (R4.4), seat 3 empty so every hidden card is forced."""
    hands = [mask_of(h) for h in hands_codes]
    pending = mask_of(pending_codes)
    st = State(hands, leader, 3)
    st.trick = 6
    rest = ALL_MASK & ~(hands[0] | hands[1] | hands[2] | hands[3] | pending)
    st.pending = pending
    st.captured = [rest & ~captured_seat1, captured_seat1 & rest, 0, 0]
    st.history = [(1, 1, c) for c in ids_of(rest | pending)]
    return st


def _positions():
    """Two last tricks where the order decides the taker: SC3 and MC3 tie, and the
    earlier one takes (R4.1). Sun holds SC3, S5 (seat 1); Moon MC3 (solo), M4 (new moon)."""
    sun_cards = mask_of(["SA", "ST", "S7", "S6", "S4"])
    pending = ["SO", "S3", "MO", "M7"]
    # Sun seat 1 leads: SC3 takes the trick, S5 lets the new moon ask the solo for MC3
    sun_leads = _last_trick([["MC3"], ["SC3", "S5"], ["M4"], []], 1, sun_cards, pending)
    # the solo leads: MC3 takes the trick, a request for the new moon's M4 loses it
    solo_leads = _last_trick([["MC3"], ["SC3", "S5"], ["M4"], []], 0, sun_cards, pending)
    return [sun_leads, solo_leads]


@pytest.mark.parametrize("index", [0, 1])
def test_pimc_equals_solver_when_nothing_is_hidden(index):
    st = _positions()[index]
    info = InfoSet(st, st.deciding_seat)
    exact = Solver(3).action_values(st)
    sign = 1 if st.deciding_seat % 2 == 0 else -1
    means = PIMCAgent(worlds=3).action_means(info, info.legal_actions, np.random.default_rng(0))
    assert means == {a: sign * v for a, v in exact.items()}
    # rollouts instead of the solver still score each world from the deciding side's view
    rolled = PIMCAgent(worlds=2, solver_tricks=0).action_means(info, info.legal_actions, np.random.default_rng(0))
    assert set(rolled) == set(exact)


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("spec", ["pimc:worlds=4", "ismcts:iterations=300", "ismcts:iterations=300,rollout=random"])
def test_search_picks_an_exactly_best_action(index, spec):
    st = _positions()[index]
    info = InfoSet(st, st.deciding_seat)
    exact = Solver(3).action_values(st)
    side0 = st.deciding_seat % 2 == 0
    best = max(exact.values()) if side0 else min(exact.values())
    assert len(set(exact.values())) > 1, "the position should have a better and a worse action"
    a = make_agent(spec).act(info, info.legal_actions, np.random.default_rng(1))
    assert exact[a] == best


def test_ismcts_statistics():
    """Root visits add up to the iterations; an action is never visited more often
    than it was available (subset-armed bandit)."""
    from twilight_env.agents.ismcts import ISMCTSAgent
    rng = np.random.default_rng(3)
    st = State.random(rng, 0, 4)
    for _ in range(9):
        st.apply(st.legal_actions()[0])
    info = InfoSet(st, st.deciding_seat)
    root = ISMCTSAgent(iterations=200).search(info, rng)
    assert sum(root.visits.values()) == 200
    assert set(root.visits) <= set(info.legal_actions)
    stack = [root]
    while stack:
        node = stack.pop()
        for a, n in node.visits.items():
            assert 0 <= n <= node.avail[a]
        stack.extend(node.children.values())
