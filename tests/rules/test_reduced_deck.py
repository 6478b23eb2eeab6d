"""Reduced decks (``Config.tricks`` < 7): the deck rule, the invariants of R3.4 and R5 over
seeded random deals, the last trick's Purgatory (R4.4 on trick ``tricks``), matches, and the
full deck left as it was."""

import pickle

import numpy as np
import pytest

from twilight_env.rules.cards import (CARDS, CARDS_PER_CULT, KEEP_ORDER, KINDS, MOON, SOULS, SUN, card_id,
                                      codes_of, deck_mask, ids_of)
from twilight_env.rules.engine import (Config, Match, NUM_TRICKS, PurePythonState, ReducedState, State,
                                       random_hands, validate_deal)
from twilight_env.rules.infoset import InfoSet


def test_keep_order_is_each_cults_fourteen_kinds_once():
    assert sorted(KEEP_ORDER) == sorted(KINDS)
    assert deck_mask(7) == (1 << 28) - 1


@pytest.mark.parametrize("tricks", range(1, 8))
def test_deck_has_two_cards_of_each_cult_per_trick_and_scores(tricks):
    """Each cult keeps 2 x tricks cards (R3.4); both cults the same kinds; a sanctuary and
    souls always stay, so a side can score (R5.3)."""
    ids = ids_of(deck_mask(tricks))
    sun = [c for c in ids if c < CARDS_PER_CULT]
    moon = [c for c in ids if c >= CARDS_PER_CULT]
    assert len(sun) == len(moon) == 2 * tricks
    assert [c + CARDS_PER_CULT for c in sun] == moon
    codes = codes_of(deck_mask(tricks))
    assert any(c[1:] in ("A", "T", "O") for c in codes) and sum(SOULS[c] for c in ids) > 0


def test_small_decks_are_the_documented_ones():
    assert codes_of(deck_mask(1)) == ["S7", "SO", "M7", "MO"]
    assert codes_of(deck_mask(2)) == ["SP", "SC1", "S7", "SO", "MP", "MC1", "M7", "MO"]


@pytest.mark.parametrize("bad", [0, 8, -1, 2.0, True, "2", None])
def test_bad_tricks_are_refused(bad):
    with pytest.raises(ValueError, match="tricks must be an int 1..7"):
        Config(tricks=bad)
    with pytest.raises(ValueError, match="tricks must be an int 1..7"):
        deck_mask(bad)


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("tricks", [1, 2, 3, 5])
def test_random_play_invariants(players, tricks):
    """Seeded random deals played by random legal actions: a legal action always exists
    (R3.4), every trick holds 2 Sun and 2 Moon cards, every card is played once, the
    deal ends after ``tricks`` tricks with nothing pending, and the souls taken plus
    the neutral pile are the deck's souls (R5.1)."""
    rng = np.random.default_rng(100 * players + tricks)
    deck = deck_mask(tricks)
    souls = sum(SOULS[c] for c in ids_of(deck))
    for _ in range(60):
        st = ReducedState.random(rng, int(rng.integers(4)) if players == 4 else 0, players, tricks)
        assert [bin(h).count("1") for h in st.hands] == [tricks] * 4
        assert st.hands[0] | st.hands[1] | st.hands[2] | st.hands[3] == deck
        while not st.done:
            legal = st.legal_actions()
            assert legal, st
            st.apply(int(rng.choice(legal)))
        assert st.trick == tricks and st.pending == 0 and not any(st.hands)
        played = [c for _, _, c in st.history]
        assert sorted(played) == list(ids_of(deck))
        for t in range(tricks):
            cults = [c // CARDS_PER_CULT for c in played[4 * t:4 * t + 4]]
            assert cults.count(SUN) == 2 and cults.count(MOON) == 2
        taken = st.captured[0] | st.captured[1] | st.captured[2] | st.captured[3]
        assert taken | st.neutral == deck and not taken & st.neutral
        got = sum(SOULS[c] for c in ids_of(taken)) + sum(SOULS[c] for c in ids_of(st.neutral))
        assert got == souls
        assert st.legal_actions() == ()
        with pytest.raises(ValueError, match="the deal is over"):
            st.apply(played[0])


def test_r4_4_purgatory_in_the_last_reduced_trick_is_neutral():
    """2 tricks: the Purgatories played in trick 2 leave the pile neutral (R4.4 on the
    last trick); in trick 1 they go pending and the next taker takes them (R4.3)."""
    deal = [["SP", "S7"], ["MP", "M7"], ["SC1", "SO"], ["MC1", "MO"]]
    st = ReducedState.from_deal(deal, leader=0)
    for code in ("S7", "M7", "SO", "MO", "SP", "MP", "SC1", "MC1"):
        st.apply(card_id(code))
    assert st.done and st.neutral == deck_mask(2) - sum(1 << card_id(c) for c in ("S7", "M7", "SO", "MO"))
    assert st.captured[0] | st.captured[2] == sum(1 << card_id(c) for c in ("S7", "M7", "SO", "MO"))
    st = ReducedState.from_deal(deal, leader=0)
    for code in ("SP", "MP", "SC1", "MC1", "S7", "M7", "SO", "MO"):
        st.apply(card_id(code))
    assert st.done and st.neutral == 0 and st.captured[0] == deck_mask(2)
    assert st.side_scores() == (3 * sum(SOULS[c] for c in ids_of(deck_mask(2))), 0)


def test_reduced_deals_are_checked():
    with pytest.raises(ValueError, match="not in the deck of 1 tricks"):
        validate_deal([["S7"], ["SO"], ["M7"], ["SC1"]], 1)
    with pytest.raises(ValueError, match="hand of seat 1 must be a list of 1 card"):
        validate_deal([["S7"], ["SO", "M7"], ["MO"], []], 1)
    with pytest.raises(ValueError, match="dealt twice"):
        validate_deal([["S7"], ["S7"], ["M7"], ["MO"]], 1)
    assert validate_deal([["S7"], ["SO"], ["M7"], ["MO"]], 1) == tuple(1 << card_id(c) for c in ("S7", "SO", "M7", "MO"))


def test_full_deck_is_unchanged_by_the_new_field():
    """tricks=7 (the default) deals the engine's State as before: the same hands for a seed."""
    assert Config().tricks == NUM_TRICKS
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    m = Match(Config(), rng_a)
    assert type(m.state) is State and m.state.hands == list(random_hands(rng_b))
    assert State.num_tricks == 7 and State.deck == (1 << 28) - 1


def test_reduced_state_clone_pickle_and_the_seven_trick_copy():
    rng = np.random.default_rng(3)
    st = ReducedState.random(rng, 1, 4, 3)
    st.apply(st.legal_actions()[0])
    for copy in (st.clone(), pickle.loads(pickle.dumps(st))):
        assert type(copy) is ReducedState and copy.num_tricks == 3 and copy.deck == st.deck
        assert copy.hands == st.hands and copy.history == st.history
    # a ReducedState of the whole deck plays exactly as the engine's own states
    hands = random_hands(np.random.default_rng(9))
    a, b = ReducedState(hands, 2, 3), PurePythonState(hands, 2, 3)
    assert a.num_tricks == 7
    rng = np.random.default_rng(0)
    while not b.done:
        legal = b.legal_actions()
        assert a.legal_actions() == legal
        x = int(rng.choice(legal))
        a.apply(x)
        b.apply(x)
    assert a.done and a.captured == b.captured and a.neutral == b.neutral and a.side_scores() == b.side_scores()


@pytest.mark.parametrize("players", [3, 4])
def test_match_of_reduced_deals(players):
    m = Match(Config(num_players=players, tricks=2, target=50), np.random.default_rng(1))
    rng = np.random.default_rng(2)
    while not m.done:
        st = m.state
        assert type(st) is ReducedState and st.num_tricks == 2
        while not st.done:
            st.apply(int(rng.choice(st.legal_actions())))
        m.finish_deal()
        if not m.done:
            m.next_deal(rng)
    assert max(m.totals) >= 50


def test_infoset_worlds_stay_in_the_reduced_deck():
    """sample_hands draws only cards of the deck; world_state plays on as a ReducedState."""
    rng = np.random.default_rng(4)
    for players in (3, 4):
        st = ReducedState.random(rng, 0, players, 2)
        st.apply(st.legal_actions()[0])
        info = InfoSet(st, 1)
        assert info.num_tricks == 2 and info.deck == deck_mask(2)
        for _ in range(20):
            hands = info.sample_hands(rng)
            assert (hands[0] | hands[1] | hands[2] | hands[3]) & ~deck_mask(2) == 0
            w = info.world_state(hands)
            assert type(w) is ReducedState and w.num_tricks == 2
            while not w.done:
                w.apply(int(rng.choice(w.legal_actions())))
    assert CARDS[card_id("MO")] == "MO"
