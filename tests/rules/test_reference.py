"""The rules reference (twilight_env/rules/reference.py) on the rulebook's own examples and
on hand-made cases, rule by rule; the fast copies are held to it by ``test_parity.py``."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from twilight_env.rules import reference as R


def test_it_imports_only_the_standard_library():
    tree = ast.parse(Path(R.__file__).read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "random"}, imported


def test_every_public_function_cites_a_rule_or_says_what_it_serves():
    for name in dir(R):
        obj = getattr(R, name)
        if name.startswith("_") or not callable(obj) or getattr(obj, "__module__", "") != R.__name__:
            continue
        doc = obj.__doc__ or ""
        assert "R" in doc and any(f"R{k}" in doc for k in range(1, 10)) or name in (
            "minimax_value", "action_values", "replay", "card_id"), f"{name}: its docstring cites no rule"


def test_r1_cards_and_their_order():
    assert len(R.CARDS) == 28 and R.CARDS[0] == "SP" and R.CARDS[13] == "SO" and R.CARDS[14] == "MP"
    assert [R.strength(c) for c in ("SP", "SC1", "SC5", "S3", "S7", "SA", "MO")] == [7, 6, 2, 1, 1, 0, 0]
    assert sum(R.souls(c) for c in R.CARDS if R.cult_of(c) == "S") == 30  # R5.1: 60 in the deal
    assert [R.multiplier(c) for c in ("SA", "ST", "SO", "S7")] == [1, 2, 3, 0]
    with pytest.raises(ValueError, match="unknown card"):
        R.card_id("SX")


def test_r2_seats_and_deal():
    assert R.seat_cults(4) == ("S", "M", "S", "M") and R.seat_cults(3) == ("M", "S", "M", "S")
    hands = R.deal(random.Random(1))
    assert [len(h) for h in hands] == [7] * 4 and sorted(sum(hands, [])) == sorted(R.CARDS)
    assert R.first_leader(4, dealer=3) == 0 and R.first_leader(4, dealer=1) == 2 and R.first_leader(3) == 0
    with pytest.raises(ValueError, match="3 or 4"):
        R.seat_cults(5)


def test_r3_worked_example_of_the_rulebook():
    """R3 worked example: Anton (1) leads; holders in place order Christian, Anton, Doris,
    Doris; afterwards Doris, Anton, Birgit, Christian hold 5, 6, 7, 6 cards."""
    hands = [["SC1", "S3", "S4", "M5", "M6", "ST", "SA"],  # Doris, seat 0 (dealer)
             ["S5", "S6", "M3", "M4", "MA", "MT", "MO"],   # Anton, seat 1
             ["S7", "SO", "SC2", "SC3", "M7", "MC1", "MC2"],  # Birgit, seat 2
             ["MC3", "MC4", "MC5", "MP", "SP", "SC4", "SC5"]]  # Christian, seat 3
    d = R.Deal(hands, leader=1)
    d.play(27 + 2)          # Anton requests Christian (offset 2)
    d.play(R.card_id("MC3"))
    d.play(27 + 3)          # Birgit requests Anton (offset 3)
    d.play(R.card_id("S5"))
    d.play(27 + 1)          # Christian requests Doris (offset 1)
    d.play(R.card_id("M5"))
    d.play(R.card_id("S3"))  # Doris plays her own Sun card
    assert [h for _, h, _ in d.history] == [3, 1, 0, 0]
    assert [len(d.hands[s]) for s in (0, 1, 2, 3)] == [5, 6, 7, 6]
    assert [c for c, _, _ in d.history] == [1, 2, 3, 0]  # one card in front of every seat (R3.3)


def test_r3_5_and_r3_2_legal_actions():
    hands = [["SP", "S3", "M3", "M4", "M5", "M6", "M7"], ["MP", "MC1", "MC2", "MC3", "MC4", "MC5", "MA"],
             ["SC1", "SC2", "SC3", "SC4", "SC5", "SA", "ST"], ["SO", "S4", "S5", "S6", "S7", "MT", "MO"]]
    d = R.Deal(hands, leader=0)
    # seat 0 (Sun): its two Sun cards, or request seat 2 or 3 (seat 1 holds no Sun card, R3.5)
    assert d.legal_actions() == [0, 6, 29, 30]
    d.play(30)  # request seat 3
    assert d.legal_actions() == sorted(R.card_id(c) for c in ("SO", "S4", "S5", "S6", "S7"))
    with pytest.raises(ValueError, match="illegal action"):
        d.play(0)


def test_r4_1_ties_go_to_the_earlier_card():
    assert R.best_place(["S3", "M7", "SA", "M4"]) == 0
    assert R.best_place(["SA", "M7", "SC5", "MC5"]) == 2
    assert R.best_place(["SA", "MP", "SP", "M7"]) == 1
    with pytest.raises(ValueError):
        R.best_place([])


def _trick(d: R.Deal, cards: list[str]) -> None:
    """Play one trick in which every chooser plays its own card (R3.2 (a))."""
    for c in cards:
        d.play(R.card_id(c))


def test_r4_3_pending_pile_goes_to_the_next_taker_and_r4_4_last_trick_is_neutral():
    hands = [["S3", "S4", "S5", "S6", "S7", "SA", "SO"], ["M3", "M4", "M5", "M6", "M7", "MA", "MO"],
             ["SP", "SC1", "SC2", "SC3", "SC4", "SC5", "ST"], ["MP", "MC1", "MC2", "MC3", "MC4", "MC5", "MT"]]
    d = R.Deal(hands, leader=0)
    _trick(d, ["S3", "M3", "SC1", "MP"])  # R4.3: seat 3 played the Purgatory, leads next
    assert d.pending and d.leader == 3 and not any(d.taken)
    _trick(d, ["MC1", "S4", "M4", "SC2"])  # seat 3 leads; MC1 wins: seat 3 takes the pile too
    assert len(d.taken[3]) == 8 and not d.pending and d.leader == 3
    for _ in range(4):
        lead = d.leader
        _trick(d, [sorted((c for c in d.hands[(lead + k) % 4] if R.cult_of(c) == d.cults[(lead + k) % 4]
                           and R.kind_of(c) != "P"), key=R.card_id)[0] for k in range(4)])
    assert d.tricks_done == 6
    lead = d.leader
    last = [next(iter(d.hands[(lead + k) % 4])) for k in range(4)]
    _trick(d, last)
    assert "SP" in last and d.done and len(d.neutral) == 4 and not d.pending  # R4.4


def test_r5_4_worked_example():
    assert R.deal_score(["S7", "M3", "SO", "MT", "SC4", "M4", "SC1", "MC5"], "S") == 51
    assert R.deal_score(["S7", "MO"], "S") == 0  # R5.2, R5.3: no own sanctuary


def test_r6_1_and_r6_2_match_end():
    assert R.match_winner([999, 400]) is None
    assert R.match_winner([1000, 400]) == 0 and R.match_winner([1100, 1200]) == 1
    assert R.match_winner([1100, 1100]) is None  # R9: a tie plays on
    assert R.match_winner([333, 400], goals_333=True) == 0
    assert R.match_winner([666, 333], goals_333=True) == 1  # 333 before 666
    assert R.match_winner([333, 333], goals_333=True) is None
    assert R.match_winner([333, 20], target=300, goals_333=True) == 0  # a goal at or above the target is the target rule


def test_r7_4_solo_rotation_and_seats():
    assert [R.solo_of_deal(k) for k in range(6)] == [0, 2, 1, 0, 2, 1]
    assert [R.solo_of_deal(k, 1, fixed_solo=True) for k in range(3)] == [1, 1, 1]
    # solo s: play order s, s+1, new moon, s+2
    assert [R.seat_of_player(p, 2) for p in range(3)] == [1, 3, 0]


def test_r7_5_r7_6_r8_deal_points_and_parties():
    assert R.deal_points(4, (10, 20)) == [10, 20]
    assert R.deal_points(3, (30, 40), solo=1) == [40, 30, 40]
    assert R.deal_points(3, (0, 0), (1, 2, 3, 4), solo=0, scoring="individual") == [1, 2, 4, 3]
    assert R.parties(3, "team", True, solo=2) == [[2], [0, 1]]
    assert R.parties(3, "individual", True) == [[0], [1], [2], [3]]
    m = R.MatchScore(3, target=100, fixed_solo=True)
    assert m.add_deal((60, 50)) == () and m.add_deal((50, 40)) == (0,)
    with pytest.raises(ValueError, match="over"):
        m.add_deal((0, 0))
