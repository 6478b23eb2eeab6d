"""R1: the 28 cards, their ids, strengths, souls and multipliers."""

import pytest

from twilight_env.rules import cards
from twilight_env.rules.cards import CARDS, card_code, card_id


def test_r1_canonical_codes_and_ids():
    assert len(CARDS) == 28 and len(set(CARDS)) == 28
    expected = [c + k for c in "SM" for k in ("P", "C1", "C2", "C3", "C4", "C5", "3", "4", "5", "6", "7",
                                              "A", "T", "O")]
    assert list(CARDS) == expected
    assert card_id("SP") == 0 and card_id("SO") == 13 and card_id("MP") == 14 and card_id("MO") == 27
    for i, code in enumerate(CARDS):
        assert card_id(code) == i and card_code(i) == code


@pytest.mark.parametrize("bad", ["X1", "S8", "sc1", "", "SC6", None, 3])
def test_r1_unknown_code_raises_naming_it(bad):
    with pytest.raises(ValueError, match="unknown card code"):
        card_id(bad)


@pytest.mark.parametrize("bad", [-1, 28, 100, "3", 2.0, True])
def test_r1_unknown_id_raises(bad):
    with pytest.raises(ValueError, match="unknown card id"):
        card_code(bad)


def test_r1_each_cult_has_the_same_fourteen_cards():
    sun = [c[1:] for c in CARDS if c[0] == "S"]
    moon = [c[1:] for c in CARDS if c[0] == "M"]
    assert sun == moon and len(sun) == 14
    assert [cards.CULT[card_id(c)] for c in CARDS] == [0] * 14 + [1] * 14


def test_r1_trick_strength_order():
    s = lambda code: cards.STRENGTH[card_id(code)]  # noqa: E731
    for cult in "SM":
        chain = [cult + k for k in ("P", "C1", "C2", "C3", "C4", "C5")]
        for hi, lo in zip(chain, chain[1:]):
            assert s(hi) > s(lo)  # Purgatory > I > II > III > IV > V
        souls = [s(cult + k) for k in "34567"]
        sanctuaries = [s(cult + k) for k in "ATO"]
        assert len(set(souls)) == 1 and len(set(sanctuaries)) == 1  # all equal within the group
        assert s(cult + "C5") > souls[0] > sanctuaries[0]
    # cult plays no part in strength (R4.1)
    assert all(s("S" + c[1:]) == s("M" + c[1:]) for c in CARDS)


def test_r1_souls_and_multipliers():
    for code in CARDS:
        kind = code[1:]
        souls = cards.SOULS[card_id(code)]
        mult = cards.MULTIPLIER[card_id(code)]
        if kind.isdigit():
            assert souls == int(kind)
        elif kind.startswith("C"):
            assert souls == 1
        else:
            assert souls == 0
        assert mult == {"A": 1, "T": 2, "O": 3}.get(kind, 0)
    assert sum(cards.SOULS) == 60  # R5.1: a full deal holds 60 souls


def test_r1_masks_round_trip():
    some = ["SP", "MC3", "S7", "MO"]
    m = cards.mask_of(some)
    assert cards.codes_of(m) == sorted(some, key=card_id)
    assert cards.ids_of(m) == tuple(sorted(card_id(c) for c in some))
    assert cards.souls_of(m) == 0 + 1 + 7 + 0
    assert cards.multiplier_of(m, 1) == 3 and cards.multiplier_of(m, 0) == 0
    assert cards.souls_of(cards.ALL_MASK) == 60
