"""The heuristic's documented rules, on built positions and random ones, and its decisions
pinned to recorded ones (``heuristic_decisions.json``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from positions import Spec, positions
from twilight_env.rules.cards import MULTIPLIER, card_id
from twilight_env.rules.engine import HOLD, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents.base import make_agent, play_deal
from twilight_env.agents.heuristic import HeuristicAgent, decide, decide_infoset, decide_state


def _act(st: State) -> int:
    info = InfoSet(st, st.deciding_seat)
    return HeuristicAgent().act(info, info.legal_actions, np.random.default_rng(0))


def test_leads_a_sure_winner_to_take_the_pending_pile():
    """Last trick, a pending pile with souls and a Sun sanctuary (R4.3): Sun seat 0 leads
    SC1, which nothing left can beat (both Purgatories are gone), rather than S3, which
    the Moon side's MC5 could beat."""
    from twilight_env.rules.cards import ALL_MASK, ids_of, mask_of
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
        for st in positions(Spec(num_players, 9 + num_players, 150)):
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


# ---------------------------------------------------------------------------------
# decisions pinned to recorded ones
# ---------------------------------------------------------------------------------
DECISIONS = Path(__file__).with_name("heuristic_decisions.json")
"""Recorded decisions of :func:`twilight_env.agents.heuristic.decide` along fixed deals: each deal is
``[num_players, leader, hands (4 masks), actions played, decisions with the public
counts, decisions without them]``. Regenerate only for an intended change of play:
``python -c "import sys; sys.path[:0] = ['.', 'tests', 'tests/agents']; import test_heuristic as t; t.record_decisions()"``."""


def _decisions_at(st: State) -> tuple[int, int]:
    """``decide`` from the deciding seat's information set, with and without ``counts``."""
    info = InfoSet(st, st.deciding_seat)
    counts_tab = info.hand_counts
    args = (info.num_players, info.seat_cult, info.deciding_seat, info.leader, info.place,
            HOLD if info.phase == "hold" else 0, info.holder, info.trick_cards, info.pending,
            info.known_masks, info.unseen_mask, info.captured, info.trick, tuple(info.legal_actions))
    return decide(*args, lambda seat, cult: counts_tab[seat][cult]), decide(*args)


def record_decisions(path: Path = DECISIONS, deals: int = 120, seed: int = 2026) -> None:
    """Write the fixture: ``deals`` deals per player count, each played by a mix of the
    heuristic's and random actions (so its usual positions and odd ones both occur)."""
    rng = np.random.default_rng(seed)
    out = []
    for num_players in (4, 3):
        for _ in range(deals):
            leader = int(rng.integers(4)) if num_players == 4 else 0
            st = State.random(rng, leader, num_players)
            row = [num_players, leader, list(st.hands), [], [], []]
            while not st.done:
                with_counts, without = _decisions_at(st)
                legal = st.legal_actions()
                a = with_counts if rng.random() < 0.6 else legal[int(rng.integers(len(legal)))]
                row[3].append(a)
                row[4].append(with_counts)
                row[5].append(without)
                st.apply(a)
            out.append(row)
    path.write_text(json.dumps({"format": "heuristic-decisions", "version": 1, "deals": out},
                               separators=(",", ":")) + "\n")


def test_decisions_equal_the_recorded_ones():
    """Along every recorded deal, ``decide`` gives the recorded decision at every decision
    point, with and without the public counts (R2.5): rewriting the heuristic must not
    change its play."""
    data = json.loads(DECISIONS.read_text())
    assert data["format"] == "heuristic-decisions" and len(data["deals"]) >= 200
    checked = 0
    for num_players, leader, hands, actions, with_counts, without in data["deals"]:
        st = State(tuple(hands), leader, num_players)
        for i, a in enumerate(actions):
            assert _decisions_at(st) == (with_counts[i], without[i]), (num_players, hands, leader, actions[:i])
            st.apply(a)
            checked += 1
        assert st.done
    assert checked > 200 * 28
