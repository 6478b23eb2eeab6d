"""The heuristic's documented rules, on built positions and random ones (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from agent_positions import positions
from twilight_env.cards import MULTIPLIER, card_id
from twilight_env.engine import HOLD, State
from twilight_env.infoset import InfoSet
from agents.base import make_agent, play_deal
from agents.heuristic import HeuristicAgent, decide_infoset, decide_state


def _act(st: State) -> int:
    info = InfoSet(st, st.deciding_seat)
    return HeuristicAgent().act(info, info.legal_actions, np.random.default_rng(0))


def test_leads_a_sure_winner_to_take_the_pending_pile():
    """Last trick, a pending pile with souls and a Sun sanctuary (R4.3): Sun seat 0 leads
    SC1, which nothing left can beat (both Purgatories are gone), rather than S3, which
    the Moon side's MC5 could beat."""
    from twilight_env.cards import ALL_MASK, ids_of, mask_of
    hands = [mask_of(["SC1", "S3"]), mask_of(["MC5"]), 0, mask_of(["M4"])]
    pending = mask_of(["S6", "ST", "M7", "M5"])
    st = State(hands, 0, 4)
    st.trick = 6
    rest = ALL_MASK & ~(hands[0] | hands[1] | hands[3] | pending)
    st.pending = pending
    st.captured = [0, rest, 0, 0]
    st.history = [(1, 1, c) for c in ids_of(rest | pending)]  # only the played set matters here
    assert _act(st) == card_id("SC1")


def test_publishers_tip_partner_plays_last():
    """Place 1, the partner (seat 2) plays last: request an opponent, not the partner."""
    deal = [["SC3", "S3", "S5", "MP", "MC1", "M3", "MA"],
            ["SP", "SC2", "S4", "MC2", "M4", "M5", "MT"],
            ["SC1", "SA", "ST", "MC3", "M6", "M7", "MO"],
            ["SC4", "SC5", "S6", "S7", "SO", "MC4", "MC5"]]
    st = State.from_deal(deal, 3, 4)
    st.apply(card_id("MC5"))
    assert st.chooser == 0 and st.place == 1
    assert _act(st) in (28, 30)


@pytest.mark.parametrize("num_players", [4, 3])
def test_never_gives_an_opponent_its_sanctuary_when_another_card_will_do(num_players):
    """Hold phase for an opponent chooser at place 0 (nothing of its own side in the
    trick yet): with a non-sanctuary card of the chooser's cult, never a sanctuary (R5.2)."""
    checked = 0
    rng = np.random.default_rng(1)
    for _ in range(3000):
        st = State.random(rng, int(rng.integers(4)) if num_players == 4 else 0, num_players)
        for _ in range(int(rng.integers(0, 24)) * 4):
            la = st.legal_actions()
            st.apply(la[int(rng.integers(len(la)))])
            if st.done:
                break
        if st.done or st.place != 0:
            continue
        opp = [a for a in st.legal_actions() if a in (28, 30)]
        if not opp:
            continue
        st.apply(opp[0])
        legal = st.legal_actions()
        if all(MULTIPLIER[c] for c in legal) or not any(MULTIPLIER[c] for c in legal):
            continue
        assert st.phase == HOLD and (st.holder & 1) != (st.chooser & 1)
        assert not MULTIPLIER[_act(st)], st
        checked += 1
    assert checked >= 20


def test_dumps_a_low_card_into_a_lost_trick():
    """Last place, the opponents' MC1 holds the trick; only SP could stop it (R4.3) and
    an opponent holds it: the chooser does not add its 7 souls or its Obelisk."""
    deal = [["SC5", "S7", "SO", "MP", "M3", "MA", "M4"],
            ["MC1", "SP", "SC1", "SC2", "M5", "MT", "M6"],
            ["SC3", "S5", "ST", "MC3", "SC4", "M7", "MO"],
            ["S3", "S4", "S6", "SA", "MC2", "MC4", "MC5"]]
    st = State.from_deal(deal, 1, 4)
    st.apply(card_id("MC1"))        # seat 1 leads MC1
    st.apply(28)                     # seat 2 (Sun) requests seat 3
    st.apply(card_id("S3"))          # seat 3 gives S3
    st.apply(card_id("MC2"))         # seat 3 (Moon) plays MC2
    assert st.chooser == 0 and st.place == 3
    a = _act(st)
    assert a not in (card_id("S7"), card_id("SO"))


def test_decide_state_matches_the_infoset_decision():
    """The rollout entry point sees only what the deciding seat knows: the same action
    as from the information set."""
    for num_players in (4, 3):
        for st in positions(9 + num_players, 150, num_players):
            info = InfoSet(st, st.deciding_seat)
            assert decide_state(st) == decide_infoset(info, info.legal_actions)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [4, 3])
def test_heuristic_beats_random_in_duplicate_deals(num_players):
    """Duplicate format: each deal twice with the seats swapped; the mean paired
    difference (heuristic side minus random side, deal points) has a 95% CI above 30."""
    rng = np.random.default_rng(2024 + num_players)
    h, r = make_agent("heuristic"), make_agent("random")
    diffs = []
    for i in range(300):
        hands = State.random(rng, 0, num_players).hands
        leader = i % 4 if num_players == 4 else 0
        a = play_deal(State(hands, leader, num_players), [h, r, h, r], rng).returns()[0]
        b = play_deal(State(hands, leader, num_players), [r, h, r, h], rng).returns()[1]
        diffs.append((a + b) / 2)
    d = np.asarray(diffs, dtype=float)
    low = d.mean() - 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    assert low > 30, (d.mean(), low)
