"""R2-R4 in 4 players: seats, deal, tricks, requests, who takes the trick, Purgatory."""

import numpy as np
import pytest

from twilight_env.rules.cards import CARDS, card_id
from twilight_env.rules.engine import CHOOSE, HOLD, Config, Match, State, random_hands

from engine_helpers import (NEUTRAL_END_TRICKS, SWEEP_DEAL, SWEEP_TRICKS, codes, ids, play, play_tricks,
                            random_play, request_action)

# The publisher's worked example (R3): Doris 0 (Sun, dealer), Anton 1 (Moon),
# Birgit 2 (Sun), Christian 3 (Moon).
DORIS, ANTON, BIRGIT, CHRISTIAN = 0, 1, 2, 3
R3_DEAL = [
    ["SP", "SC1", "SC2", "S3", "MP", "MC1", "MC2"],   # Doris
    ["SC3", "SC4", "S4", "MC3", "MC4", "M3", "M4"],   # Anton
    ["SC5", "S5", "S6", "S7", "M5", "M6", "M7"],      # Birgit
    ["SA", "ST", "SO", "MC5", "MA", "MT", "MO"],      # Christian
]


def sweep_state():
    return Match(Config(), deal=SWEEP_DEAL, dealer=3).state


def test_r2_1_seat_cults_and_sides():
    st = sweep_state()
    assert st.seat_cult == (0, 1, 0, 1)  # seats 0, 2 Sun; 1, 3 Moon
    play_tricks(st, SWEEP_TRICKS)
    # side 0 = seats 0 and 2 together
    assert st.side_captured(0) == st.captured[0] | st.captured[2]


def test_r2_2_seat_cult_never_changes_in_a_match():
    m = Match(Config(), np.random.default_rng(0))
    for _ in range(4):
        assert m.state.seat_cult == (0, 1, 0, 1)
        random_play(m.state, np.random.default_rng(1))
        m.finish_deal()
        if m.done:
            break
        m.next_deal(np.random.default_rng(2))


def test_r2_3_random_deal_is_seven_each_of_all_28():
    rng = np.random.default_rng(0)
    for _ in range(50):
        hands = random_hands(rng)
        assert [bin(h).count("1") for h in hands] == [7, 7, 7, 7]
        assert hands[0] | hands[1] | hands[2] | hands[3] == (1 << 28) - 1
    st = State.random(np.random.default_rng(5))
    assert st.initial_hands == tuple(st.hands)


def test_r2_3_seeded_deal_is_reproducible():
    a = State.random(np.random.default_rng(123))
    b = State.random(np.random.default_rng(123))
    c = State.random(np.random.default_rng(124))
    assert a.hands == b.hands and a.hands != c.hands


def test_r2_3_seeded_deal_is_the_permutation_of_the_seed():
    """A seed deals the cards of ``rng.permutation(28)`` in order, 7 per seat (the
    engine shuffles a list, which draws the same numbers)."""
    for seed in range(200):
        perm = np.random.default_rng(seed).permutation(28).tolist()
        expected = tuple(sum(1 << c for c in perm[7 * s: 7 * s + 7]) for s in range(4))
        rng = np.random.default_rng(seed)
        assert random_hands(rng) == expected
        ref = np.random.default_rng(seed)
        ref.permutation(28)
        assert rng.random() == ref.random()  # the generator is left in the same state too


def test_r2_4_dealer_rotation():
    """The seat after the dealer leads; the dealer passes left after each deal."""
    rng = np.random.default_rng(3)
    m = Match(Config(target=10**9), rng, dealer=1)
    dealers, leaders = [], []
    for _ in range(6):
        dealers.append(m.dealer)
        leaders.append(m.state.leader)
        assert m.state.chooser == (m.dealer + 1) % 4
        random_play(m.state, rng)
        m.finish_deal()
        m.next_deal(rng)
    assert dealers == [1, 2, 3, 0, 1, 2]
    assert leaders == [2, 3, 0, 1, 2, 3]
    assert Match(Config(), rng).state.leader == 0  # default dealer 3: seat 0 leads


def test_r2_5_counts_are_public_and_track_plays():
    st = State.from_deal(R3_DEAL, leader=ANTON)
    assert st.counts() == ((4, 3), (3, 4), (4, 3), (3, 4))
    play(st, "3:MC5")  # Christian loses a Moon card
    assert st.counts()[CHRISTIAN] == (3, 3)


def test_r3_publisher_worked_example():
    m = Match(Config(), deal=R3_DEAL, dealer=DORIS)
    st = m.state
    assert st.leader == ANTON
    play(st,
         "3:MC5",   # Anton requests Christian, who plays a Moon card for Anton
         "1:SC3",   # Birgit requests Anton, who plays a Sun card for Birgit
         "0:MC1",   # Christian requests Doris, who plays a Moon card for Christian
         "S3")      # Doris plays a Sun card herself
    chooser_holder = [(c, h) for c, h, _ in st.history]
    assert chooser_holder == [(ANTON, CHRISTIAN), (BIRGIT, ANTON), (CHRISTIAN, DORIS), (DORIS, DORIS)]
    # every seat has one card in front of it; Doris played twice, Birgit not at all
    assert sorted(c for c, _, _ in st.history) == [0, 1, 2, 3]
    assert [h for _, h, _ in st.history].count(DORIS) == 2
    assert BIRGIT not in [h for _, h, _ in st.history]
    sizes = [bin(h).count("1") for h in st.hands]
    assert sizes == [5, 6, 7, 6]  # Doris, Anton, Birgit, Christian
    # MC1 (a Hierarch) is the strongest: the trick goes to Christian, the chooser (R3.3)
    assert codes(st.captured[CHRISTIAN]) == {"MC5", "SC3", "MC1", "S3"}
    assert st.leader == CHRISTIAN


def test_r3_1_each_seat_is_chooser_once_per_trick():
    st = State.random(np.random.default_rng(8), leader=2)
    rng = np.random.default_rng(9)
    while not st.done:
        start = len(st.history)
        lead = st.leader
        choosers = []
        while len(st.history) < start + 4:
            if st.phase == CHOOSE:
                choosers.append(st.chooser)
            legal = st.legal_actions()
            st.apply(legal[int(rng.integers(len(legal)))])
        assert list(dict.fromkeys(choosers)) == [(lead + k) % 4 for k in range(4)]


def test_r3_2_request_or_play_own_cult():
    st = State.from_deal(R3_DEAL, leader=ANTON)
    # Anton (Moon) may play his own Moon cards or request any seat holding Moon cards
    assert set(st.legal_actions()) == ids("MC3", "MC4", "M3", "M4") | {28, 29, 30}
    assert not st.is_legal(card_id("SC3"))  # his Sun card is not his cult's
    st.apply(request_action(ANTON, BIRGIT))
    assert st.phase == HOLD and st.holder == BIRGIT and st.acting_seat == BIRGIT
    assert st.chooser == ANTON
    # the holder picks any of its cards of the chooser's cult (Moon), not its own cult
    assert set(st.legal_actions()) == ids("M5", "M6", "M7")
    st.apply(card_id("M6"))
    assert st.history[-1] == (ANTON, BIRGIT, card_id("M6"))
    assert st.phase == CHOOSE and st.chooser == BIRGIT


def test_r3_2_partner_may_be_requested():
    st = State.from_deal(R3_DEAL, leader=ANTON)
    assert request_action(ANTON, CHRISTIAN) == 29  # +2 is the partner
    play(st, "3:MA")
    assert st.history[-1] == (ANTON, CHRISTIAN, card_id("MA"))


def test_r3_3_card_counts_as_the_choosers():
    st = State.from_deal(R3_DEAL, leader=ANTON)
    # Anton requests Doris, who plays her Moon Purgatory: it counts as Anton's card
    play(st, "0:MP", "S5", "MC5", "SC1")
    assert st.trick == 1 and st.leader == ANTON  # the Purgatory was played for Anton (R4.3)
    st2 = State.from_deal(R3_DEAL, leader=ANTON)
    play(st2, "0:MC1", "S5", "MC5", "SC2")  # Doris's MC1 wins for Anton, not for Doris
    assert codes(st2.captured[ANTON]) == {"MC1", "S5", "MC5", "SC2"}
    assert st2.captured[DORIS] == 0


ONE_CULT_WRONG_SEAT = [
    ["SP", "SC1", "SC2", "SC3", "SC4", "SC5", "S3"],   # Sun seat, Sun cards
    ["S4", "S5", "S6", "S7", "SA", "ST", "SO"],        # Moon seat holding no Moon card
    ["MP", "MC1", "MC2", "MC3", "MC4", "MC5", "M3"],   # Sun seat holding no Sun card
    ["M4", "M5", "M6", "M7", "MA", "MT", "MO"],        # Moon seat, Moon cards
]


def test_r3_4_hand_sizes_drift_and_empty_chooser_must_request():
    st = State.from_deal(ONE_CULT_WRONG_SEAT, leader=0)
    play(st, "SC1")
    # seat 1 (Moon) holds no Moon card: it must request, and only seats holding Moon cards
    assert st.legal_actions() == (28, 29)  # seat 2 (+1) and seat 3 (+2); not seat 0 (+3)
    play(st, "3:M4")
    assert st.legal_actions() == (29, 30)  # seat 2 (Sun) may request seat 0 or seat 1
    play(st, "1:S4", "M5")
    assert [bin(h).count("1") for h in st.hands] == [6, 6, 7, 5]
    assert st.leader == 0  # SC1 took the trick


def test_r3_4_two_sun_two_moon_per_trick():
    rng = np.random.default_rng(11)
    for _ in range(20):
        st = State.random(rng, leader=int(rng.integers(4)))
        random_play(st, rng)
        for t in range(7):
            trick = [CARDS[c] for _, _, c in st.history[4 * t: 4 * t + 4]]
            assert sorted(x[0] for x in trick) == ["M", "M", "S", "S"]


def test_r3_5_seat_without_the_cult_cannot_be_requested():
    deal = [list(h) for h in SWEEP_DEAL]  # Moon cards only at seats 1 and 3
    st = State.from_deal(deal, leader=0)
    # seat 0 (Sun) may request seat 2 only: seats 1 and 3 hold no Sun card
    assert st.legal_actions() == tuple(sorted(ids(*SWEEP_DEAL[0]))) + (29,)
    for a in (28, 30):
        assert not st.is_legal(a)
        with pytest.raises(ValueError, match="illegal action"):
            st.apply(a)


def test_r4_1_highest_wins_ties_to_the_first_and_cult_irrelevant():
    st = sweep_state()
    play_tricks(st, SWEEP_TRICKS[:1])  # the Purgatories go pending
    play(st, "SC1", "MC1", "S5", "MT")  # SC1 and MC1 are equal: the first (seat 0) wins
    assert codes(st.captured[0]) >= {"SC1", "MC1", "S5", "MT"}
    st = sweep_state()
    play(st, "SC2", "MC1", "S3", "MA")  # MC1 (Moon) outranks SC2 (Sun): cult plays no part
    assert codes(st.captured[1]) == {"SC2", "MC1", "S3", "MA"}
    st = sweep_state()
    play(st, "S4", "M6", "SA", "MT")  # souls beat sanctuaries; equal souls: the first
    assert codes(st.captured[0]) == {"S4", "M6", "SA", "MT"}
    st = sweep_state()
    play(st, "S4", "3:MT", "SA", "1:M6")  # S4 and M6 are equal souls: S4 came first
    assert codes(st.captured[0]) == {"S4", "MT", "SA", "M6"}
    st = sweep_state()
    play(st, "S4", "3:MT", "0:SC5", "M3")  # a cleric V beats souls (for seat 2, its chooser)
    assert codes(st.captured[2]) == {"S4", "MT", "SC5", "M3"}


def test_r4_2_winner_leads_the_next_trick():
    st = sweep_state()
    play(st, "SC2", "MC1", "S3", "MA")
    assert st.leader == 1 and st.chooser == 1 and st.trick == 1


def test_r4_3_purgatory_pending():
    """A single Purgatory: the trick goes pending; its seat leads; the next taker takes all."""
    st = sweep_state()
    play(st, "SC1", "MP", "S3", "MA")
    assert codes(st.pending) == {"SC1", "MP", "S3", "MA"}
    assert st.captured == [0, 0, 0, 0]
    assert st.leader == 1  # MP was played for seat 1, even though SC1 came first
    play(st, "MC1", "S5", "MT", "SC2")  # seat 1 leads: MC1 wins
    assert st.pending == 0
    assert codes(st.captured[1]) == {"SC1", "MP", "S3", "MA", "MC1", "S5", "MT", "SC2"}


def test_r4_3_purgatory_played_on_request_counts_for_the_chooser():
    st = State.from_deal(R3_DEAL, leader=ANTON)
    play(st, "0:MP", "S5", "MC5", "SC1")
    assert st.leader == ANTON and codes(st.pending) == {"MP", "S5", "MC5", "SC1"}


def test_r4_3_two_purgatories_in_one_trick_first_purgatory_leads():
    st = sweep_state()
    play(st, "SC1", "MP", "0:SP", "MA")  # Purgatories at place 1 (seat 1) and place 2 (seat 2)
    assert st.leader == 1 and codes(st.pending) == {"SC1", "MP", "SP", "MA"}
    st = sweep_state()
    play(st, "SP", "MP", "S3", "MA")  # both Purgatories: the first one's seat (0) leads
    assert st.leader == 0 and codes(st.pending) == {"SP", "MP", "S3", "MA"}
    st = sweep_state()
    play(st, "SC1", "MC1", "S3", "1:MP")  # seat 3 requests seat 1's MP: seat 3 leads next
    assert st.leader == 3 and st.captured == [0, 0, 0, 0]


def test_r4_3_purgatory_in_two_consecutive_tricks_pile_accumulates():
    st = sweep_state()
    play(st, "SP", "MC1", "S3", "MA")   # pending; seat 0 leads
    assert st.leader == 0
    play(st, "SC1", "MP", "S5", "MT")   # pending again; seat 1 leads
    assert st.leader == 1 and bin(st.pending).count("1") == 8 and st.captured == [0, 0, 0, 0]
    play(st, "MC2", "S7", "MO", "SC2")  # MC2 = SC2 in strength: seat 1 (first) takes all 12
    assert st.pending == 0
    assert codes(st.captured[1]) == {"SP", "MC1", "S3", "MA", "SC1", "MP", "S5", "MT",
                                     "MC2", "S7", "MO", "SC2"}


def test_r4_4_purgatory_in_last_trick_leaves_pile_neutral():
    st = sweep_state()
    # trick 6 goes pending, and trick 7 holds a Purgatory: both tricks stay neutral
    order = NEUTRAL_END_TRICKS
    play_tricks(st, order)
    assert st.done
    assert codes(st.neutral) == {"S4", "MP", "SO", "M5", "M6", "S6", "M7", "SP"}
    assert st.pending == 0
    from twilight_env.rules.cards import souls_of
    taken = st.captured[0] | st.captured[1] | st.captured[2] | st.captured[3]
    assert souls_of(taken) + souls_of(st.neutral) == 60
    # the Obelisk is neutral: Sun keeps only Altar and Temple
    assert souls_of(st.captured[0] | st.captured[2]) == 32
    assert st.side_scores() == (32 * 3, 0)


def test_r4_4_single_purgatory_in_last_trick():
    st = sweep_state()
    order = [
        ["SC1", "MP", "S3", "MA"],   # pending: seat 1 leads
        ["MC1", "S5", "MT", "SC2"],  # seat 1 takes this trick and the pending pile
        ["MC2", "S7", "MO", "SC3"],
        ["MC3", "SA", "M3", "SC4"],
        ["MC4", "ST", "M4", "SC5"],
        ["MC5", "SO", "M5", "S4"],
        ["M6", "S6", "M7", "SP"],    # the last trick holds one Purgatory: neutral
    ]
    play_tricks(st, order)
    assert st.done and st.pending == 0
    assert codes(st.neutral) == {"M6", "S6", "M7", "SP"}
    assert st.leader == 0
    assert codes(st.captured[1]) == {c for hand in SWEEP_DEAL for c in hand} - codes(st.neutral)
    assert st.side_scores() == (0, (60 - 6 - 6 - 7) * 6)
