"""R5: souls, own-cult multipliers, deal score (and the publisher's 51 example)."""

import pytest

from twilight_env.rules.engine import Config, Match
from twilight_env.rules.scoring import deal_score

from engine_helpers import SWEEP_DEAL, SWEEP_TRICKS, codes, play, play_tricks


def test_r5_4_publisher_example_scores_51():
    assert deal_score(["S7", "M3", "SO", "MT", "SC4", "M4", "SC1", "MC5"], "sun") == 51


def test_r5_4_example_with_ids_and_as_moon():
    from twilight_env.rules.cards import card_id
    cards = ["S7", "M3", "SO", "MT", "SC4", "M4", "SC1", "MC5"]
    assert deal_score([card_id(c) for c in cards], "sun") == 51
    # as the Moon side the same cards carry only the Temple (2): 17 souls × 2
    assert deal_score(cards, "moon") == 34


def test_r5_1_souls_count_every_cult():
    # souls of both cults count; clerics 1; Purgatory and sanctuaries 0
    assert deal_score(["SA", "M7", "S7", "MC1", "SP", "MP", "MO"], "sun") == (7 + 7 + 1) * 1


@pytest.mark.parametrize("sanctuaries, multiplier", [
    (["A"], 1), (["T"], 2), (["O"], 3), (["A", "T"], 3), (["A", "O"], 4), (["T", "O"], 5),
    (["A", "T", "O"], 6),
])
@pytest.mark.parametrize("cult", ["sun", "moon"])
def test_r5_2_sanctuary_multipliers_1_to_6(sanctuaries, multiplier, cult):
    letter = cult[0].upper()
    souls_cards = ["S3", "M4", "SC2"]  # 3 + 4 + 1 = 8 souls
    assert deal_score(souls_cards + [letter + k for k in sanctuaries], cult) == 8 * multiplier


def test_r5_2_other_cult_sanctuaries_count_for_nobody():
    assert deal_score(["S7", "M6", "MA", "MT", "MO"], "sun") == 0
    assert deal_score(["S7", "M6", "MA", "MT", "MO", "SA"], "sun") == 13


def test_r5_3_no_own_sanctuary_scores_zero_and_max_is_360():
    assert deal_score(["S7", "S6", "S5", "M7", "M6"], "sun") == 0
    from twilight_env.rules.cards import CARDS
    assert deal_score(CARDS, "sun") == 360 and deal_score(CARDS, "moon") == 360


def test_r5_scoring_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown cult"):
        deal_score(["S7"], "stars")
    with pytest.raises(ValueError, match="repeat"):
        deal_score(["S7", "S7"], "sun")
    with pytest.raises(ValueError, match="unknown card"):
        deal_score(["S9"], "sun")


def test_r5_engine_sweep_scores_360_to_0():
    m = Match(Config(), deal=SWEEP_DEAL, dealer=3)
    st = play_tricks(m.state, SWEEP_TRICKS)
    assert st.done
    assert codes(st.captured[0]) == {c for hand in SWEEP_DEAL for c in hand}
    assert st.side_scores() == (360, 0)
    assert st.returns() == (360, -360, 360, -360)
    assert max(st.side_scores()) <= 360


def test_r5_2_engine_taking_other_cult_sanctuaries_only_denies():
    """Moon takes the Sun Obelisk: Sun loses 3 of its multiplier, Moon gains nothing from it."""
    m = Match(Config(), deal=SWEEP_DEAL, dealer=3)
    st = m.state
    play_tricks(st, SWEEP_TRICKS[:5])
    play(st, "S4", "MC5", "SO", "M5")  # MC5 (a cleric) beats souls and SO: seat 1 takes the Obelisk
    assert codes(st.captured[1]) == {"S4", "MC5", "SO", "M5"}
    assert st.leader == 1
    play(st, "M6", "S6", "M7", "SC5")  # seat 1 leads: M6, S6 (seat 2), M7 (seat 3), SC5 (seat 0)
    assert codes(st.captured[0]) >= {"M6", "S6", "M7", "SC5"}
    sun = st.captured[0] | st.captured[2]
    moon = st.captured[1] | st.captured[3]
    assert codes(sun) & {"SA", "ST", "SO"} == {"SA", "ST"}
    from twilight_env.rules.cards import souls_of
    assert souls_of(sun) == 60 - 10 and souls_of(moon) == 4 + 1 + 5  # S4, MC5, M5
    assert st.side_scores() == (50 * (1 + 2), 0)  # Moon holds SO but none of its own sanctuaries
