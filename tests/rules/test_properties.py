"""Invariants over seeded random deals and random legal play (hypothesis), 3 and 4 players.

Each example draws a seed, deals with ``numpy.random.default_rng(seed)`` and plays
uniformly random legal actions, checking invariants of the rules at every step. The
engine's parity with the rules reference (``twilight_env/rules/reference.py``) is the
parity harness's, ``tests/rules/test_parity.py``.
"""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

from twilight_env.rules.cards import NUM_CARDS, souls_of  # noqa: E402
from twilight_env.rules.engine import NUM_ACTIONS, State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402

seeds = st.integers(min_value=0, max_value=2**32 - 1)
players = st.sampled_from([3, 4])


def play_checked(seed: int, num_players: int, infosets: bool = False) -> State:
    """Deal and play one random deal; at every step the legal actions are sorted, are
    exactly the actions ``is_legal`` accepts, and exist until the deal is done (R3.4)."""
    rng = np.random.default_rng(seed)
    leader = int(rng.integers(4))
    state = State.random(rng, leader=leader, num_players=num_players)
    while True:
        legal = state.legal_actions()
        assert list(legal) == sorted(set(legal))
        assert set(legal) == {a for a in range(NUM_ACTIONS) if state.is_legal(a)}
        if not legal:
            break  # R3.4: a legal action exists until the deal is done
        assert not state.done
        if infosets:
            check_infosets(state)
        state.apply(legal[int(rng.integers(len(legal)))])
    assert state.done
    return state


def check_infosets(state: State) -> None:
    """An information set hides the other hands: the true state and any other world
    consistent with it give the same information set."""
    rng = np.random.default_rng(len(state.history))
    for seat in (0, 1, 3) if state.num_players == 3 else (0, 1, 2, 3):
        info = InfoSet(state, seat)
        for s in range(4):
            visible = s == seat or (state.num_players == 3 and s == 2)
            assert info.known_masks[s] == (state.hands[s] if visible else 0)
        other = info.sample_state(rng)
        twin = InfoSet(other, seat)
        for name in InfoSet.__slots__:
            assert getattr(twin, name) == getattr(info, name), name


@given(seed=seeds, num_players=players)
def test_r3_4_two_sun_two_moon_per_trick_and_every_card_once(seed, num_players):
    state = play_checked(seed, num_players)
    played = [c for _, _, c in state.history]
    assert sorted(played) == list(range(NUM_CARDS))  # every card exactly once
    for t in range(7):
        trick = played[4 * t: 4 * t + 4]
        assert sum(c < 14 for c in trick) == 2 and sum(c >= 14 for c in trick) == 2
        choosers = [c for c, _, _ in state.history[4 * t: 4 * t + 4]]
        assert sorted(choosers) == [0, 1, 2, 3]  # R3.1
    for chooser, holder, card in state.history:  # the card is of the chooser's cult (R3.2)
        assert (card >= 14) == (state.seat_cult[chooser] == 1)
        assert state.initial_hands[holder] >> card & 1


@given(seed=seeds, num_players=players)
def test_r5_souls_add_up_to_60_and_scores_at_most_360(seed, num_players):
    rng = np.random.default_rng(seed)
    state = State.random(rng, leader=int(rng.integers(4)), num_players=num_players)
    while not state.done:
        taken = state.captured[0] | state.captured[1] | state.captured[2] | state.captured[3]
        in_play = state.hands[0] | state.hands[1] | state.hands[2] | state.hands[3]
        for c in state.cards:
            if c >= 0:
                in_play |= 1 << c
        parts = (taken, state.pending, state.neutral, in_play)
        assert sum(bin(p).count("1") for p in parts) == NUM_CARDS  # disjoint, all 28
        assert souls_of(taken | state.pending | state.neutral | in_play) == 60
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    side0 = state.captured[0] | state.captured[2]
    side1 = state.captured[1] | state.captured[3]
    assert state.pending == 0
    assert souls_of(side0) + souls_of(side1) + souls_of(state.neutral) == 60
    assert all(0 <= s <= 360 for s in state.side_scores())
    assert all(0 <= s <= 360 for s in state.seat_scores())


@given(seed=seeds, num_players=players)
def test_same_seed_same_deal_and_play(seed, num_players):
    a = play_checked(seed, num_players)
    b = play_checked(seed, num_players)
    assert a.initial_hands == b.initial_hands and a.history == b.history
    assert a.side_scores() == b.side_scores()


@settings(max_examples=15)
@given(seed=seeds, num_players=players)
def test_r2_5_infoset_hides_other_hands(seed, num_players):
    play_checked(seed, num_players, infosets=True)
