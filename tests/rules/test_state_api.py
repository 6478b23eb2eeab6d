"""The engine's contract: deal validation, illegal actions, clone, functional apply."""

import numpy as np
import pytest

from twilight_env.rules.cards import CARDS, card_id
from twilight_env.rules.engine import (NUM_ACTIONS, State, apply_action, held_mask, legal_actions,
                                 validate_deal)

from engine_helpers import SWEEP_DEAL, SWEEP_TRICKS, play, play_tricks, random_play

FIELDS = ("hands", "leader", "trick", "place", "phase", "holder", "cards", "holders", "pending",
          "captured", "neutral", "history", "initial_hands", "first_leader", "held")


def snapshot(st):
    return {f: (list(v) if isinstance(v := getattr(st, f), list) else v) for f in FIELDS}


def good_deal():
    return [list(h) for h in SWEEP_DEAL]


@pytest.mark.parametrize("deal, message", [
    (lambda d: d[:3], "a deal must be 4 hands"),
    (lambda d: d + [[]], "a deal must be 4 hands"),
    (lambda d: "SP SC1", "a deal must be 4 hands"),
    (lambda d: [d[0], d[1][:6], d[2], d[3]], "hand of seat 1 has 6 cards; each hand must have 7"),
    (lambda d: [d[0], d[1], d[2] + ["M7"], d[3][:6]], "hand of seat 2 has 8 cards"),
    (lambda d: [d[0], d[1], d[2], d[3][:6] + ["MX"]], "hand of seat 3: unknown card code 'MX'"),
    (lambda d: [d[0][:6] + ["MA"], d[1], d[2], d[3]], "card MA is dealt twice \\(seats 0 and 3\\)"),
    (lambda d: [d[0][:6] + [99], d[1], d[2], d[3]], "hand of seat 0: unknown card 99"),
    (lambda d: [d[0], "SP", d[2], d[3]], "hand of seat 1 must be a list of 7 card codes"),
])
def test_r2_3_explicit_deal_validation_errors(deal, message):
    with pytest.raises(ValueError, match=message):
        validate_deal(deal(good_deal()))
    with pytest.raises(ValueError, match=message):
        State.from_deal(deal(good_deal()))


def test_r2_3_explicit_deal_accepts_codes_and_ids():
    by_id = [[card_id(c) for c in h] for h in SWEEP_DEAL]
    assert validate_deal(by_id) == validate_deal(SWEEP_DEAL)
    st = State.from_deal(SWEEP_DEAL, leader=2)
    assert st.leader == 2 and st.chooser == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"leader": 4}, "leader must be a seat 0..3"),
    ({"leader": -1}, "leader must be a seat 0..3"),
    ({"leader": "0"}, "leader must be a seat 0..3"),
    ({"num_players": 2}, "num_players must be 3 or 4"),
])
def test_state_rejects_bad_leader_or_players(kwargs, message):
    with pytest.raises(ValueError, match=message):
        State.from_deal(SWEEP_DEAL, **kwargs)
    with pytest.raises(ValueError, match=message):
        State.random(np.random.default_rng(0), **kwargs)


def test_illegal_action_raises_and_leaves_state_unchanged():
    rng = np.random.default_rng(12)
    for num_players in (3, 4):
        st = State.random(rng, num_players=num_players)
        while not st.done:
            legal = set(st.legal_actions())
            before = snapshot(st)
            for a in [*range(-3, NUM_ACTIONS + 3), 2**40, np.int64(99), "SP", None, 1.5, (1,), True, False]:
                if type(a) is int and a in legal:
                    continue
                with pytest.raises(ValueError):
                    st.apply(a)
                assert snapshot(st) == before
            st.apply(sorted(legal)[int(rng.integers(len(legal)))])
        before = snapshot(st)
        for a in range(NUM_ACTIONS):
            with pytest.raises(ValueError, match="deal is over"):
                st.apply(a)
        assert snapshot(st) == before and st.legal_actions() == ()


def test_float_or_bool_action_is_illegal():
    st = State.from_deal(SWEEP_DEAL, leader=0)
    for a in (1.0, True, False, np.float64(0.0)):  # SC1 and SP are legal as ints
        with pytest.raises(ValueError, match="illegal action"):
            st.apply(a)
        assert not st.is_legal(a)
    assert st.history == []


def test_illegal_action_message_lists_legal_actions():
    st = State.from_deal(SWEEP_DEAL, leader=0)
    with pytest.raises(ValueError, match=r"illegal action 14 for seat 0 in phase choose; legal actions: \[0,"):
        st.apply(card_id("MP"))


def test_numpy_integer_actions_are_plain_ints_in_history():
    st = State.from_deal(SWEEP_DEAL, leader=0)
    st.apply(np.int64(card_id("SP")))
    st.apply(np.int32(29))  # seat 1 requests its partner, seat 3
    st.apply(np.int16(card_id("MA")))
    assert st.history == [(0, 0, 0), (1, 3, card_id("MA"))]
    assert all(type(x) is int for rec in st.history for x in rec)
    assert all(type(h) is int for h in st.hands)


def test_clone_is_independent():
    rng = np.random.default_rng(1)
    st = State.random(rng)
    play(st, CARDS[st.legal_actions()[0]])
    copy = st.clone()
    assert snapshot(copy) == snapshot(st)
    before = snapshot(st)
    random_play(copy, rng)
    assert copy.done and snapshot(st) == before
    random_play(st, np.random.default_rng(2))
    assert st.done


def test_apply_action_is_functional():
    st = State.from_deal(SWEEP_DEAL, leader=0)
    before = snapshot(st)
    nxt = apply_action(st, card_id("SP"))
    assert snapshot(st) == before and nxt is not st
    assert nxt.history == [(0, 0, 0)] and nxt.place == 1
    assert legal_actions(nxt) == nxt.legal_actions()
    with pytest.raises(ValueError):
        apply_action(st, card_id("MP"))
    assert snapshot(st) == before


def copy_without_held(st: State) -> State:
    """A copy of ``st`` built field by field, as outside code may build one, without ``held``."""
    bare = State.__new__(State)
    for f in FIELDS:
        if f != "held":
            v = getattr(st, f)
            setattr(bare, f, list(v) if isinstance(v, list) else v)
    bare.seat_cult, bare.num_players = st.seat_cult, st.num_players
    return bare


def test_held_mask_tracks_hands():
    # R3.5: ``held`` (who may be requested) is kept in step by apply, bit by bit
    rng = np.random.default_rng(3)
    for n in (3, 4):
        for _ in range(20):
            st = State.random(rng, num_players=n)
            random_play(st, rng, check=lambda s: (s.held == held_mask(s.hands)) or pytest.fail("held"))
            assert st.held == 0


def test_apply_on_a_state_without_held_computes_it_when_needed():
    # a state built field by field (no ``held``) that only ever sees apply: the same deal
    # as a normal state, action by action
    rng = np.random.default_rng(17)
    for n in (3, 4):
        for _ in range(10):
            ref = State.random(rng, num_players=n)
            bare = copy_without_held(ref)
            while not ref.done:
                legal = ref.legal_actions()
                a = legal[int(rng.integers(len(legal)))]
                ref.apply(a)
                bare.apply(a)
                if hasattr(bare, "held"):
                    assert bare.held == held_mask(bare.hands)
            assert bare.hands == ref.hands and bare.captured == ref.captured
            assert bare.side_scores() == ref.side_scores()


def test_state_built_field_by_field_computes_held():
    st = State.from_deal(SWEEP_DEAL, leader=0)
    bare = copy_without_held(st)
    assert bare.legal_actions() == st.legal_actions()
    play_tricks(bare, SWEEP_TRICKS)
    assert bare.side_scores() == (360, 0)


def test_repr_shows_hands():
    st = State.from_deal(SWEEP_DEAL, leader=0)
    assert "SP SC1" in repr(st) and "trick=0" in repr(st)


def test_engine_is_pure_stdlib_and_numpy():
    """cards, scoring, engine, infoset and the deal log import neither PettingZoo,
    Gymnasium, torch, numba nor scipy (STYLE.md: the engine is pure)."""
    import ast
    import os
    import subprocess
    import sys
    code = ("import sys, types, importlib.util; _pkg = types.ModuleType('twilight_env'); "
            "_pkg.__path__ = list(importlib.util.find_spec('twilight_env').submodule_search_locations); "
            "sys.modules['twilight_env'] = _pkg; "  # the package's __init__ (env registration) not run
            "import twilight_env.rules.cards, twilight_env.rules.scoring, twilight_env.rules.engine, "
            "twilight_env.rules.infoset, twilight_env.records.deal_log; "
            "print(sorted({m.split('.')[0] for m in sys.modules}))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True).stdout
    loaded = set(ast.literal_eval(out))
    assert not loaded & {"pettingzoo", "gymnasium", "torch", "numba", "scipy"}, loaded
    assert "numpy" in loaded


def test_out_of_range_action_message_names_the_range():
    st = State.random(np.random.default_rng(3))
    for bad in (31, -1, 99):
        with pytest.raises(ValueError, match="0..30"):
            st.apply(bad)
