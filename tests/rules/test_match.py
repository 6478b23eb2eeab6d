"""R6 and R8: match totals, target, ties play on, the goals_333 variant (4 players)."""

import numpy as np
import pytest

from twilight_env.rules.engine import Config, Match

from engine_helpers import NEUTRAL_END_TRICKS, SWEEP_DEAL, SWEEP_TRICKS, play_tricks, random_play


def sweep_match(scores=None, **config):
    """A 4-player match whose first deal ends Sun 360, Moon 0 (seat 0 takes every trick)."""
    m = Match(Config(**config), deal=SWEEP_DEAL, dealer=3, scores=scores)
    play_tricks(m.state, SWEEP_TRICKS)
    assert m.deal_points() == [360, 0]
    m.finish_deal()
    return m


def test_r6_1_scores_accumulate_per_side():
    rng = np.random.default_rng(4)
    m = Match(Config(target=10**6), rng)
    expected = [0, 0]
    for _ in range(5):
        random_play(m.state, rng)
        pts = list(m.state.side_scores())
        m.finish_deal()
        expected = [expected[0] + pts[0], expected[1] + pts[1]]
        assert m.totals == expected and m.last_deal_points == pts
        m.next_deal(rng)
    assert m.deals_played == 5 and not m.done


@pytest.mark.parametrize("start, done, winners", [
    ([0, 0], False, ()),            # 360 : 0, below the target
    ([640, 0], True, (0,)),         # Sun reaches exactly 1000
    ([639, 999], False, ()),        # 999 : 999, nobody at the target
    ([0, 1000], True, (1,)),        # Moon already at the target, Sun 360
    ([700, 1100], True, (1,)),      # both over: 1060 < 1100, the higher total wins
    ([800, 1100], True, (0,)),      # 1160 > 1100
    ([740, 1100], False, ()),       # tie 1100 : 1100 at or above the target: play on
])
def test_r6_1_target_and_ties_play_on(start, done, winners):
    m = sweep_match(scores=start)
    assert m.totals == [start[0] + 360, start[1]]
    assert m.done is done and m.winners == winners


def test_r6_1_tie_then_next_deal_decides():
    m = sweep_match(scores=[740, 1100])
    assert not m.done
    rng = np.random.default_rng(0)
    m.next_deal(rng)
    random_play(m.state, rng)
    pts = m.deal_points()
    m.finish_deal()
    sun, moon = 1100 + pts[0], 1100 + pts[1]
    assert m.totals == [sun, moon]
    assert m.done is (sun != moon)
    assert m.winners == (() if sun == moon else ((0,) if sun > moon else (1,)))


def test_r6_1_match_over_refuses_next_deal():
    m = sweep_match(scores=[640, 0])
    with pytest.raises(ValueError, match="match is over"):
        m.next_deal(np.random.default_rng(0))
    with pytest.raises(ValueError, match="not finished"):
        Match(Config(), np.random.default_rng(0)).finish_deal()


def low_match(scores, **config):
    """A 4-player match whose first deal ends Sun 96, Moon 0."""
    m = Match(Config(**config), deal=SWEEP_DEAL, dealer=3, scores=scores)
    play_tricks(m.state, NEUTRAL_END_TRICKS)
    assert m.deal_points() == [96, 0]
    m.finish_deal()
    return m


@pytest.mark.parametrize("start, done, winners", [
    ([237, 0], True, (0,)),          # Sun exactly 333
    ([570, 0], True, (0,)),          # Sun exactly 666
    ([903, 0], True, (0,)),          # Sun exactly 999
    ([0, 333], True, (1,)),          # Moon stays at exactly 333 after the deal
    ([570, 333], True, (1,)),        # Sun 666, Moon 333: 333 is listed first
    ([903, 666], True, (1,)),        # Sun 999, Moon 666: 666 before 999
    ([903, 1200], True, (0,)),       # Sun 999, Moon 1200: 999 before >= 1000
    ([237, 333], False, ()),         # both exactly 333: tied on the same goal, play on
    ([0, 10], False, ()),            # 96 : 10, no goal
    ([1000, 1100], True, (1,)),      # both >= 1000: the higher total
    ([1004, 1100], False, ()),       # 1100 : 1100, tied at or above the target: play on
])
def test_r6_2_goals_333(start, done, winners):
    m = low_match(start, goals_333=True)
    assert m.done is done and m.winners == winners


def test_r6_2_goals_off_by_default():
    m = low_match([237, 0])
    assert m.totals == [333, 0] and not m.done


@pytest.mark.parametrize("target, start, done", [(333, [0, 0], True), (361, [0, 0], False),
                                                 (666, [306, 0], True), (999, [0, 0], False)])
def test_r8_target_variant(target, start, done):
    m = sweep_match(scores=start, target=target)
    assert m.done is done


def test_r6_match_validates_its_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="dealer must be a seat 0..3"):
        Match(Config(), rng, dealer=4)
    with pytest.raises(ValueError, match="solo is only for 3 players"):
        Match(Config(), rng, solo=1)
    with pytest.raises(ValueError, match="scores must be 2 ints"):
        Match(Config(), rng, scores=[1, 2, 3])
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        Match(Config())


@pytest.mark.parametrize("field, value, message", [
    ("num_players", 5, "num_players must be 3 or 4"),
    ("num_players", True, "num_players must be 3 or 4"),
    ("target", 0, "target must be a positive int"),
    ("target", 10.5, "target must be a positive int"),
    ("goals_333", "yes", "goals_333 must be True or False"),
    ("three_player_scoring", "solo", "three_player_scoring must be 'team' or 'individual'"),
    ("fixed_solo", 1, "fixed_solo must be True or False"),
])
def test_r8_config_rejects_bad_values(field, value, message):
    with pytest.raises(ValueError, match=message):
        Config(**{field: value})


def test_r9_choices_where_the_sources_are_silent():
    """R9: Sun seats, dealer passing left, ties playing on (above), perfect recall."""
    from twilight_env.rules.infoset import InfoSet
    rng = np.random.default_rng(9)
    assert Config(num_players=4).seat_cult == (0, 1, 0, 1)  # seats 0, 2 are Sun
    m3 = Match(Config(num_players=3), rng, solo=1)
    # in 3 players the two non-solo players sit at the Sun seats 1 and 3
    assert [m3.state.seat_cult[m3.seat_of_player(p)] for p in range(3)] == [0, 1, 0]
    m = Match(Config(), rng, dealer=2)
    random_play(m.state, rng)
    m.finish_deal()
    m.next_deal(rng)
    assert m.dealer == 3  # the dealer passes to the left
    # every card played stays public history for every seat (perfect recall)
    st = m.state
    while st.trick < 5:
        legal = st.legal_actions()
        st.apply(legal[int(rng.integers(len(legal)))])
    for seat in range(4):
        assert InfoSet(st, seat).history == st.history and len(st.history) >= 20
