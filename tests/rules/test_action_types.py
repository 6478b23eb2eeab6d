"""Actions of any integer type: every entry point that takes an action reads a Python int
(or subclass), any NumPy integer scalar and a 0-d integer array as the same action, and
refuses non-integers (bool included) with an error naming what is allowed."""

import enum

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import twilight_env
from twilight_env.agents.base import apply_checked
from twilight_env.rules.engine import NUM_ACTIONS, PurePythonState, State, apply_action, as_action
from twilight_env.envs.wrappers import SingleAgentEnv

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
CLASSES = [State, PurePythonState]
NOT_ACTIONS = [1.0, np.float64(2.0), np.float32(0.0), True, False, np.bool_(True), "3", None,
               np.array([3]), np.array(3.0), np.array(True), [3], 3 + 0j]


def wrap(kind: str, dtype, value: int):
    """``value`` as a NumPy scalar of ``dtype``, a 0-d array of it, or an int subclass."""
    if kind == "scalar":
        return dtype(value)
    if kind == "array":
        return np.array(value, dtype=dtype)
    return enum.IntEnum("A", {"X": value}).X


kinds = st.sampled_from(["scalar", "array", "intenum"])
dtypes = st.sampled_from(INT_DTYPES)


@pytest.mark.parametrize("cls", CLASSES)
@given(seed=st.integers(0, 2**32 - 1), kind=kinds, dtype=dtypes, steps=st.integers(0, 27))
def test_is_legal_and_apply_read_any_integer_type_as_its_value(cls, seed, kind, dtype, steps):
    rng = np.random.default_rng(seed)
    s = cls.random(rng, num_players=int(rng.integers(3, 5)))
    for _ in range(steps):
        legal = s.legal_actions()
        s.apply(legal[int(rng.integers(len(legal)))])
    legal = set(s.legal_actions())
    for a in range(NUM_ACTIONS):
        assert s.is_legal(wrap(kind, dtype, a)) == (a in legal)
    for a in sorted(legal):
        ref = s.clone()
        ref.apply(a)
        other = s.clone()
        other.apply(wrap(kind, dtype, a))
        key = lambda x: (x.history, x.hands, x.phase, x.holder)  # noqa: E731
        assert key(other) == key(ref) and key(apply_action(s, wrap(kind, dtype, a))) == key(ref)
        assert all(type(v) is int for rec in other.history for v in rec)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_small_numpy_integers_past_their_dtype_shift_range(cls, dtype):
    # 1 << np.int8(14) overflows int8: the card MP (14) must still be read as 14
    s2 = cls.from_deal([["SP", "SC1", "SC2", "SC3", "SC4", "SC5", "S3"],
                        ["MP", "MC1", "MC2", "MC3", "MC4", "MC5", "M3"],
                        ["S4", "S5", "S6", "S7", "SA", "ST", "SO"],
                        ["M4", "M5", "M6", "M7", "MA", "MT", "MO"]], leader=1)
    assert s2.is_legal(dtype(14)) and s2.is_legal(np.array(14, dtype=dtype))
    assert not s2.is_legal(dtype(0))
    s2.apply(dtype(14))
    assert s2.history[-1] == (1, 1, 14)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("bad", NOT_ACTIONS, ids=repr)
def test_non_integers_are_refused_naming_what_is_allowed(cls, bad):
    s = cls.random(np.random.default_rng(0))
    before = s.clone()
    assert s.is_legal(bad) is False  # a predicate: anything that is not a legal action is False
    with pytest.raises(ValueError, match="illegal action .*: actions are ints 0..30 .*NumPy integer"):
        s.apply(bad)
    assert s.history == before.history and s.hands == before.hands
    with pytest.raises(ValueError, match="NumPy integer scalar or a 0-d integer array"):
        as_action(bad)


def test_both_engines_give_the_same_message_for_a_non_integer():
    msgs = []
    for cls in CLASSES:
        s = cls.random(np.random.default_rng(3))
        with pytest.raises(ValueError) as e:
            s.apply(np.float32(1.0))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@given(kind=kinds, dtype=dtypes, value=st.integers(0, 127))
def test_as_action_returns_the_plain_int(kind, dtype, value):
    a = as_action(wrap(kind, dtype, value))
    assert a == value and type(a) is int


@pytest.mark.parametrize("config", [dict(num_players=4), dict(num_players=3)])
@given(seed=st.integers(0, 1000), kind=kinds, dtype=dtypes)
def test_aec_env_step_takes_any_integer_type(config, seed, kind, dtype):
    env = twilight_env.env(**config)
    env.reset(seed=seed)
    ref = twilight_env.env(**config)
    ref.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(12):
        mask = env.last()[0]["action_mask"]
        a = int(rng.choice(np.flatnonzero(mask)))
        env.step(wrap(kind, dtype, a))
        ref.step(a)
        assert env.unwrapped._state.history == ref.unwrapped._state.history


@pytest.mark.parametrize("bad", NOT_ACTIONS, ids=repr)
def test_aec_env_refuses_non_integers(bad):
    env = twilight_env.env()
    env.reset(seed=1)
    with pytest.raises(ValueError, match="NumPy integer scalar or a 0-d integer array"):
        env.step(bad)
    assert env.unwrapped._state.history == []


@given(kind=kinds, dtype=dtypes, seed=st.integers(0, 100))
def test_single_agent_env_takes_any_integer_type(kind, dtype, seed):
    env = SingleAgentEnv(num_players=3, illegal_action="raise")
    ref = SingleAgentEnv(num_players=3, illegal_action="raise")
    obs, info = env.reset(seed=seed)
    ref.reset(seed=seed)
    a = int(np.flatnonzero(info["action_mask"])[0])
    o1 = env.step(wrap(kind, dtype, a))
    o2 = ref.step(a)
    assert np.array_equal(o1[0], o2[0]) and o1[1] == o2[1]


@pytest.mark.parametrize("bad", [1.0, True, np.float64(0.0)], ids=repr)
def test_single_agent_env_refuses_non_integers(bad):
    env = SingleAgentEnv(num_players=4, illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="NumPy integer"):
        env.step(bad)


class FixedAgent:
    name = "fixed"

    def __init__(self, value):
        self.value = value

    def act(self, infoset, legal, rng):
        return self.value


@given(kind=kinds, dtype=dtypes)
def test_apply_checked_takes_any_integer_type(kind, dtype):
    s = State.random(np.random.default_rng(5))
    a = s.legal_actions()[-1]
    ref = s.clone()
    ref.apply(a)
    apply_checked(s, wrap(kind, dtype, a), s.legal_actions(), FixedAgent(a), 0)
    assert (s.history, s.holder, s.phase) == (ref.history, ref.holder, ref.phase)


@pytest.mark.parametrize("bad", [1.0, True, np.float64(2.0), np.array([1])], ids=repr)
def test_apply_checked_refuses_a_float_equal_to_a_legal_action(bad):
    s = State.from_deal([["SP", "SC1", "SC2", "SC3", "SC4", "SC5", "S3"],
                         ["MP", "MC1", "MC2", "MC3", "MC4", "MC5", "M3"],
                         ["S4", "S5", "S6", "S7", "SA", "ST", "SO"],
                         ["M4", "M5", "M6", "M7", "MA", "MT", "MO"]])
    assert 1 in s.legal_actions() and 2 in s.legal_actions()
    with pytest.raises(ValueError, match="agent 'fixed' at seat 0 chose illegal action"):
        apply_checked(s, bad, s.legal_actions(), FixedAgent(bad), 0)
    assert s.history == []


def test_single_agent_env_refuses_an_opponent_float_action():
    env = SingleAgentEnv(num_players=4, learner="player_3", opponents=FixedAgent(1.0))
    with pytest.raises(ValueError, match="chose illegal action 1.0"):
        env.reset(options={"dealer": 3, "deal": [["SP", "SC1", "SC2", "SC3", "SC4", "SC5", "S3"],
                                                 ["MP", "MC1", "MC2", "MC3", "MC4", "MC5", "M3"],
                                                 ["S4", "S5", "S6", "S7", "SA", "ST", "SO"],
                                                 ["M4", "M5", "M6", "M7", "MA", "MT", "MO"]]})
