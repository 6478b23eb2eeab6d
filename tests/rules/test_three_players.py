"""R7 (three players) and the R8 individual scoring."""

import numpy as np
import pytest

from twilight_env.rules.cards import card_id
from twilight_env.rules.engine import HOLD, NEW_MOON, Config, Match, State
from twilight_env.rules.infoset import InfoSet

from engine_helpers import SWEEP_DEAL, SWEEP_TRICKS, codes, ids, play, play_tricks, random_play, swap_cults

SOLO, SUN_LEFT, SUN_RIGHT = 0, 1, 3
# 3-player seats: 0 solo (Moon), 1 Sun left, 2 new moon (Moon, open), 3 Sun right
MIXED_DEAL = [
    ["SP", "SC1", "SC2", "S3", "MP", "MC1", "MC2"],   # solo
    ["SC3", "SC4", "S4", "MC3", "MC4", "M3", "M4"],   # Sun left
    ["SC5", "S5", "S6", "S7", "M5", "M6", "M7"],      # new moon
    ["SA", "ST", "SO", "MC5", "MA", "MT", "MO"],      # Sun right
]


def test_r7_1_solo_and_new_moon_are_moon():
    st = State.from_deal(MIXED_DEAL, leader=0, num_players=3)
    assert st.seat_cult == (1, 0, 1, 0) and NEW_MOON == 2
    assert Config(num_players=3).seat_cult == (1, 0, 1, 0)


def test_r7_1_new_moon_hand_is_open_to_everyone():
    st = State.from_deal(MIXED_DEAL, leader=0, num_players=3)
    for seat in (SOLO, SUN_LEFT, SUN_RIGHT):
        info = InfoSet(st, seat)
        assert set(info.open_hand) == set(MIXED_DEAL[NEW_MOON])
        assert set(info.hand) == set(MIXED_DEAL[seat])
    with pytest.raises(ValueError, match="new moon"):
        InfoSet(st, NEW_MOON)


def test_r7_2_play_order_and_solo_leads():
    m = Match(Config(num_players=3), np.random.default_rng(0))
    st = m.state
    assert st.leader == SOLO
    choosers = []
    rng = np.random.default_rng(1)
    while len(st.history) < 4:
        if st.phase == 0:
            choosers.append(st.chooser)
        st.apply(st.legal_actions()[int(rng.integers(len(st.legal_actions())))])
    assert list(dict.fromkeys(choosers)) == [SOLO, SUN_LEFT, NEW_MOON, SUN_RIGHT]


def test_r7_3_solo_decides_for_the_new_moon():
    st = State.from_deal(MIXED_DEAL, leader=0, num_players=3)
    assert st.deciding_seat == SOLO and st.acting_seat == SOLO
    # the solo may take any Moon card of either hand: own, or request the new moon (+2)
    assert set(st.legal_actions()) == ids("MP", "MC1", "MC2") | {28, 29, 30}
    play(st, "MC2")
    # a Sun player requests the new moon: the solo picks which of its Sun cards is played
    assert st.chooser == SUN_LEFT and st.deciding_seat == SUN_LEFT
    st.apply(28)  # Sun left requests seat 2 (+1)
    assert st.phase == HOLD and st.acting_seat == NEW_MOON and st.deciding_seat == SOLO
    assert set(st.legal_actions()) == ids("SC5", "S5", "S6", "S7")
    assert InfoSet(st, SOLO).to_act and not InfoSet(st, SUN_LEFT).to_act
    st.apply(card_id("S6"))
    # the new moon as chooser: the solo decides, own Moon cards or requests
    assert st.chooser == NEW_MOON and st.deciding_seat == SOLO
    assert set(st.legal_actions()) == ids("M5", "M6", "M7") | {28, 29, 30}
    play(st, "0:MC1")  # the new moon requests the solo's hand (partner hand)
    assert st.history[-1] == (NEW_MOON, SOLO, card_id("MC1"))
    assert st.deciding_seat == SUN_RIGHT
    play(st, "SO")
    # MC1 (played for the new moon) wins: the Moon side (solo + new moon) takes the trick
    assert codes(st.captured[NEW_MOON]) == {"MC2", "S6", "MC1", "SO"}
    assert st.leader == NEW_MOON and st.deciding_seat == SOLO


def test_r7_4_solo_rotation_p0_p2_p1_p0():
    rng = np.random.default_rng(2)
    m = Match(Config(num_players=3, target=10**9), rng)
    solos, seats = [], []
    for _ in range(7):
        solos.append(m.solo)
        s = m.solo
        seats.append([m.seat_of_player(p) for p in range(3)])
        # play order in a deal with solo s: s, (s+1) mod 3, new moon, (s+2) mod 3
        assert [m.player_of_seat(seat) for seat in range(4)] == [s, (s + 1) % 3, s, (s + 2) % 3]
        assert m.state.leader == 0
        random_play(m.state, rng)
        m.finish_deal()
        m.next_deal(rng)
    assert solos == [0, 2, 1, 0, 2, 1, 0]
    assert seats[0] == [0, 1, 3] and seats[1] == [1, 3, 0] and seats[2] == [3, 0, 1]


def test_r7_4_first_solo_can_be_chosen():
    m = Match(Config(num_players=3), np.random.default_rng(0), solo=1)
    assert m.solo == 1 and m.seat_of_player(1) == 0
    with pytest.raises(ValueError, match="solo must be a player 0..2"):
        Match(Config(num_players=3), np.random.default_rng(0), solo=3)
    with pytest.raises(ValueError, match="dealer is only for 4 players"):
        Match(Config(num_players=3), np.random.default_rng(0), dealer=1)


def sweep_3p(**config):
    """3-player deal in which the solo takes every trick: Moon side 360, Sun side 0."""
    m = Match(Config(num_players=3, **config), deal=swap_cults(SWEEP_DEAL))
    play_tricks(m.state, [swap_cults([t])[0] for t in SWEEP_TRICKS])
    assert m.state.side_scores() == (360, 0)
    return m


def test_r7_5_team_scoring_solo_gets_moon_side_score():
    m = sweep_3p()
    assert m.deal_points() == [360, 0, 0]
    m.finish_deal()
    assert m.totals == [360, 0, 0]
    rng = np.random.default_rng(5)
    for _ in range(4):  # random deals: solo gets Moon (seats 0 + 2), both Sun players Sun
        m.next_deal(rng)
        random_play(m.state, rng)
        moon, sun = m.state.side_scores()
        expected = [sun] * 3
        expected[m.solo] = moon
        assert m.deal_points() == expected
        m.finish_deal()


def test_r7_5_match_end_highest_total_and_ties_play_on():
    m = Match(Config(num_players=3), deal=swap_cults(SWEEP_DEAL), scores=[640, 0, 0])
    play_tricks(m.state, [swap_cults([t])[0] for t in SWEEP_TRICKS])
    m.finish_deal()
    assert m.totals == [1000, 0, 0] and m.done and m.winners == (0,)
    m = Match(Config(num_players=3), deal=swap_cults(SWEEP_DEAL), scores=[700, 1060, 5])
    play_tricks(m.state, [swap_cults([t])[0] for t in SWEEP_TRICKS])
    m.finish_deal()
    assert m.totals == [1060, 1060, 5] and not m.done  # tie at the top: play on
    m = Match(Config(num_players=3), deal=swap_cults(SWEEP_DEAL), scores=[700, 1050, 5])
    play_tricks(m.state, [swap_cults([t])[0] for t in SWEEP_TRICKS])
    m.finish_deal()
    assert m.done and m.winners == (0,)


def test_r7_6_fixed_solo():
    rng = np.random.default_rng(6)
    m = Match(Config(num_players=3, fixed_solo=True, target=10**9), rng, solo=2)
    for _ in range(4):
        assert m.solo == 2 and m.seat_of_player(2) == 0
        random_play(m.state, rng)
        m.finish_deal()
        m.next_deal(rng)


def test_r7_6_fixed_solo_sun_players_form_one_party():
    # the two Sun players always score the same: they must not "tie" each other
    m = Match(Config(num_players=3, fixed_solo=True), deal=swap_cults(SWEEP_DEAL), scores=[0, 1000, 1000])
    play_tricks(m.state, [swap_cults([t])[0] for t in SWEEP_TRICKS])
    m.finish_deal()
    assert m.done and m.winners == (1, 2)


def test_r8_individual_scoring_new_moon_is_a_fourth_line():
    m = sweep_3p(three_player_scoring="individual")
    # the solo's own seat took every trick: the new moon line scores 0
    assert m.line_names() == ["player 0", "player 1", "player 2", "new moon"]
    assert m.deal_points() == [360, 0, 0, 0]
    rng = np.random.default_rng(7)
    m.finish_deal()
    for _ in range(5):
        m.next_deal(rng)
        random_play(m.state, rng)
        seat = m.state.seat_scores()
        pts = m.deal_points()
        assert pts[3] == seat[NEW_MOON]
        for p in range(3):
            assert pts[p] == seat[m.seat_of_player(p)]
        m.finish_deal()


def test_r8_individual_scoring_counts_only_own_tricks():
    st = State.from_deal(MIXED_DEAL, leader=0, num_players=3)
    play(st, "MC2", "2:S6", "0:MC1", "SO")  # new moon takes the trick
    random_play(st, np.random.default_rng(0))
    from twilight_env.rules.scoring import score_mask
    assert st.seat_scores() == tuple(score_mask(st.captured[s], st.seat_cult[s]) for s in range(4))
    assert st.seat_scores()[NEW_MOON] == score_mask(st.captured[NEW_MOON], 1)


NEW_MOON_TRICKS = [
    ["M4", "S6", "0:MC1", "S3"],     # the new moon requests the solo's Hierarch and wins
    ["0:MC2", "S4", "2:M3", "SC2"],  # the new moon leads; equal clerics: the first wins
    ["0:MC3", "S5", "2:M5", "SC3"],
    ["0:MC4", "S7", "2:M7", "SC4"],
    ["0:MC5", "SA", "2:MA", "SC5"],  # the new moon takes the Moon Altar
    ["0:MP", "ST", "2:MT", "SP"],    # two Purgatories: pending, the new moon leads
    ["M6", "SO", "2:MO", "SC1"],     # Sun left takes the last trick and the pending pile
]


def test_r8_individual_new_moon_can_win():
    m = Match(Config(num_players=3, three_player_scoring="individual"), deal=swap_cults(SWEEP_DEAL),
              scores=[0, 0, 0, 990])
    play_tricks(m.state, NEW_MOON_TRICKS)
    # new moon: (14 + 9 + 12 + 16 + 2) souls × Altar 1; Sun left: 7 souls × (Temple + Obelisk)
    assert m.deal_points() == [0, 35, 0, 53]
    m.finish_deal()
    assert m.totals == [0, 35, 0, 1043] and m.done and m.winners == (3,)
    with pytest.raises(ValueError, match="scores must be 4 ints"):
        Match(Config(num_players=3, three_player_scoring="individual"), np.random.default_rng(0),
              scores=[0, 0, 0])


def test_r7_5_team_scoring_of_the_new_moon_deal():
    m = Match(Config(num_players=3), deal=swap_cults(SWEEP_DEAL), solo=1)
    play_tricks(m.state, NEW_MOON_TRICKS)
    # Moon side = the solo seat and the new moon seat: the new moon took 53 souls × Altar
    moon, sun = m.state.side_scores()
    assert (moon, sun) == (53 * 1, 7 * 5)
    assert m.deal_points() == [sun, moon, sun]  # player 1 is the solo


@pytest.mark.parametrize("solo, scores", [(0, [0, 0, 2000]), (0, [0, 2000, 0]), (1, [5, 0, 6]), (2, [0, 1, 0])])
def test_r7_6_fixed_solo_refuses_unequal_sun_starting_totals(solo, scores):
    # the two Sun players share one score line: only equal starting totals describe it
    with pytest.raises(ValueError, match=r"scores.*fixed_solo.*Sun players.*one score line \(R7\.6, R7\.5\)"):
        Match(Config(num_players=3, fixed_solo=True), np.random.default_rng(0), solo=solo, scores=scores)


@pytest.mark.parametrize("sun_total", [0, 990, 2000])
@pytest.mark.parametrize("solo", [0, 1, 2])
def test_r7_6_fixed_solo_equal_sun_totals_are_read_whichever_index(solo, sun_total):
    scores = [sun_total] * 3
    scores[solo] = 0
    m = Match(Config(num_players=3, fixed_solo=True), np.random.default_rng(1), solo=solo, scores=scores)
    random_play(m.state, np.random.default_rng(2))
    m.finish_deal()
    sun = [p for p in range(3) if p != solo]
    assert m.totals[sun[0]] == m.totals[sun[1]]
    assert m.done == (max(m.totals) >= 1000 and m.totals[solo] != m.totals[sun[0]])
    if sun_total == 2000:
        assert m.winners == tuple(sun)


def test_unequal_sun_totals_are_fine_without_fixed_solo():
    m = Match(Config(num_players=3), np.random.default_rng(0), solo=0, scores=[0, 0, 2000])
    random_play(m.state, np.random.default_rng(1))
    m.finish_deal()
    assert m.done and m.winners == (2,)
