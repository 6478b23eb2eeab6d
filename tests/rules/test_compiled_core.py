"""The compiled core (``twilight_env.rules._engine_c``) on the cases it hands to Python.

``State`` runs ``apply``, ``legal_actions`` and ``done`` in C when the core is built;
``PurePythonState`` is the same rules in plain Python (R3.2-R4.4). Both play the rules
reference's positions in the parity harness (``tests/rules/test_parity.py``: every field
after every action, every illegal action refused alike). These tests check that every
case the core hands over to Python (odd action types, NumPy integers, states built
field by field, odd field types, pickles) behaves exactly as in Python.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from twilight_env.rules import engine, state
from twilight_env.rules.engine import PurePythonState, State, held_mask, random_hands
from twilight_env.rules.state import _FIELDS

compiled = pytest.mark.skipif(engine.backend() != "compiled",
                              reason="the compiled core is not built (or TWILIGHT_ENV_PURE_PYTHON=1)")


def fields(s) -> dict:
    """Every field by name; a missing one as the string "<unset>"."""
    return {f: (getattr(s, f) if hasattr(s, f) else "<unset>") for f in _FIELDS}


def pair(hands, leader: int, n: int):
    return State(list(hands), leader, n), PurePythonState(list(hands), leader, n)


def outcome(s, action):
    """``("ok", None)`` or ``("error", message)`` of ``s.apply(action)``."""
    try:
        s.apply(action)
    except ValueError as e:
        return "error", str(e)
    return "ok", None


@compiled
def test_state_uses_the_compiled_core():
    assert issubclass(State, state._core.StateCore)
    assert not issubclass(PurePythonState, state._core.StateCore)
    core_fields = [n for n, v in vars(state._core.StateCore).items() if type(v).__name__ == "member_descriptor"]
    assert sorted(core_fields) == sorted(_FIELDS)


@compiled
def test_odd_actions_are_handed_to_python():
    a, b = pair(random_hands(np.random.default_rng(5)), 0, 4)
    legal = b.legal_actions()
    for bad in (True, False, 1.0, "3", None, -1, 31, 2**70, np.float32(legal[0])):
        assert outcome(a, bad) == outcome(b, bad)
        assert fields(a) == fields(b)
    for ok in (np.int64(legal[0]), np.int8(legal[-1])):
        assert outcome(a, ok) == outcome(b, ok) == ("ok", None)
        assert fields(a) == fields(b)


def bare_copy(s, cls, drop=("held",)):
    """``s`` rebuilt field by field in ``cls``, without the fields in ``drop``."""
    out = cls.__new__(cls)
    for f in _FIELDS:
        if f not in drop:
            v = getattr(s, f)
            setattr(out, f, list(v) if isinstance(v, list) else v)
    return out


@compiled
def test_states_built_field_by_field_behave_as_in_python():
    rng = np.random.default_rng(11)
    for n in (3, 4):
        for _ in range(10):
            ref = PurePythonState(random_hands(rng), 0, n)
            a, b = bare_copy(ref, State), bare_copy(ref, PurePythonState)
            while not ref.done:
                assert a.legal_actions() == b.legal_actions() == ref.legal_actions()
                x = ref.legal_actions()[int(rng.integers(len(ref.legal_actions())))]
                for s in (a, b, ref):
                    s.apply(x)
                assert fields(a) == fields(b)
                assert a.captured == ref.captured and a.leader == ref.leader
            assert a.held == held_mask(a.hands) == 0


def test_clone_of_a_state_without_held():
    # ``held`` may be left unset (built field by field): clone keeps it unset, and both
    # the clone and the original compute it on first use
    for cls in (State, PurePythonState):
        ref = cls.random(np.random.default_rng(6))
        bare = bare_copy(ref, cls)
        twin = bare.clone()
        assert not hasattr(twin, "held")
        assert twin.legal_actions() == ref.legal_actions() and twin.held == ref.held


@compiled
def test_hands_held_as_numpy_integers_are_handed_to_python():
    hands = [np.int64(h) for h in random_hands(np.random.default_rng(2))]
    a, b = pair(hands, 1, 4)
    rng = np.random.default_rng(0)
    while not b.done:
        assert a.legal_actions() == b.legal_actions()
        x = b.legal_actions()[int(rng.integers(len(b.legal_actions())))]
        a.apply(x)
        b.apply(x)
        assert fields(a) == fields(b)


@compiled
def test_unset_fields_raise_attribute_error_as_in_python():
    a, b = State.__new__(State), PurePythonState.__new__(PurePythonState)
    for s in (a, b):
        with pytest.raises(AttributeError):
            s.done
        with pytest.raises(AttributeError):
            s.legal_actions()
        with pytest.raises(AttributeError):
            s.apply(0)


def test_clone_pickle_and_copy_keep_class_and_fields():
    rng = np.random.default_rng(4)
    for cls in (State, PurePythonState):
        s = cls(random_hands(rng), 2, 3)
        for _ in range(9):
            s.apply(s.legal_actions()[0])
        for other in (s.clone(), pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
            assert type(other) is cls and fields(other) == fields(s)
        c = s.clone()
        c.apply(c.legal_actions()[0])
        assert fields(c) != fields(s)  # independent lists


def test_backend_names_the_engine_in_use():
    assert engine.backend() in ("compiled", "python")
    assert (engine.backend() == "compiled") == (State is not PurePythonState)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_pickle_protocol_round_trips(protocol):
    for cls in (State, PurePythonState):
        s = cls.random(np.random.default_rng(protocol))
        s.apply(s.legal_actions()[-1])
        back = pickle.loads(pickle.dumps(s, protocol=protocol))
        assert type(back) is cls and fields(back) == fields(s)
        assert back.legal_actions() == s.legal_actions()


def test_int_subclass_actions_apply_as_their_value():
    import enum

    for cls in (State, PurePythonState):
        s = cls.random(np.random.default_rng(8))
        a = s.legal_actions()[0]
        Act = enum.IntEnum("Act", {"A": a})
        assert s.is_legal(Act.A)
        s.apply(Act.A)
        assert s.history[-1][2] == a and type(s.history[-1][2]) is int


def test_a_missing_field_raises_before_any_change():
    # a state built by hand without ``history`` (or ``captured`` at a trick's last place):
    # AttributeError, and the set fields unchanged
    rng = np.random.default_rng(21)
    for cls in (State, PurePythonState):
        for drop, plays in (("history", 0), ("captured", 3)):
            ref = cls.random(rng)
            for _ in range(plays):
                ref.apply([x for x in ref.legal_actions() if x < 28][0])
            bare = bare_copy(ref, cls, drop=(drop,))
            before = fields(bare)
            with pytest.raises(AttributeError):
                bare.apply([x for x in ref.legal_actions() if x < 28][0])
            assert fields(bare) == before


def test_random_needs_a_generator():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        State.random(5)


@compiled
def test_a_core_older_than_its_source_is_not_used(monkeypatch):
    monkeypatch.setattr(state, "_source_hash", lambda path: "0" * 16)
    with pytest.warns(RuntimeWarning, match="pip install -e"):
        assert state._load_core() is None
    monkeypatch.undo()
    assert state._load_core() is state._core
