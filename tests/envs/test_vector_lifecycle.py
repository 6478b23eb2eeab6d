"""The vector env as an object: action types, pickle and deepcopy, close, and the
Gymnasium vector-env attributes, on both backends."""

import copy
import pickle

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

from twilight_env.obs.encoding import OBS_SIZE
from twilight_env.rules.engine import NUM_ACTIONS
from twilight_env.envs.vector import TwilightVectorEnv, VectorEngine

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def backends():
    out = ["numpy"]
    try:
        import torch  # noqa: F401
    except ImportError:
        return out
    return out + ["torch"]


BACKENDS = backends()


def to_np(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def as_backend(env, a):
    if env.engine.backend == "torch":
        import torch

        return torch.as_tensor(a)
    return a


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=30)
@given(dtype=st.sampled_from(INT_DTYPES), seed=st.integers(0, 1000), form=st.sampled_from(["array", "list"]))
def test_step_takes_actions_of_any_integer_dtype(backend, dtype, seed, form):
    env = TwilightVectorEnv(5, 3 + seed % 2, seed=seed, backend=backend)
    ref = TwilightVectorEnv(5, 3 + seed % 2, seed=seed, backend=backend)
    env.reset()
    ref.reset()
    rng = np.random.default_rng(seed)
    for _ in range(30):
        a = np.array([rng.choice(np.flatnonzero(m)) for m in to_np(ref.engine.legal_mask())])
        typed = a.astype(dtype)
        if form == "list":
            typed = [dtype(x) for x in a]
        out = env.step(typed if form == "list" else as_backend(env, typed))
        want = ref.step(as_backend(ref, a))
        for x, y in zip(out[:4], want[:4]):
            np.testing.assert_array_equal(to_np(x), to_np(y))


def test_a_list_of_mixed_numpy_integer_scalars_is_read_value_by_value():
    # NumPy turns [np.int8, np.uint64] into float64; each value is read on its own instead
    env = TwilightVectorEnv(2, seed=0)
    env.reset()
    a = env.random_actions()
    env.step([np.int8(a[0]), np.uint64(a[1])])
    assert (env.engine.place + env.engine.phase > 0).all()


@pytest.mark.parametrize("bad", [[1.0, 2.0], [True, False], ["1", "2"], np.array([1.5, 2.0])], ids=repr)
def test_step_refuses_non_integer_actions(bad):
    env = TwilightVectorEnv(2, seed=0)
    env.reset()
    with pytest.raises(ValueError, match="integers 0..30"):
        env.step(bad)


def test_an_illegal_uint64_action_is_reported_as_given():
    env = TwilightVectorEnv(2, seed=0)
    env.reset()
    a = env.random_actions().astype(np.uint64)
    a[1] = np.uint64(2**63 + 3)  # -9223372036854775805 once cast to int64
    with pytest.raises(ValueError, match=r"row 1: action 9223372036854775811 not in legal actions"):
        env.step(a)


def play_same(a, b, steps, rng):
    """Step ``a`` and ``b`` with the same legal actions; their outputs must agree."""
    for _ in range(steps):
        mask = to_np(a.engine.legal_mask())
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        out_a = a.step(as_backend(a, acts))
        out_b = b.step(as_backend(b, acts))
        for x, y in zip(out_a[:4], out_b[:4]):
            np.testing.assert_array_equal(to_np(x), to_np(y))
        for k in out_a[4]:
            np.testing.assert_array_equal(to_np(out_a[4][k]), to_np(out_b[4][k]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("num_players", [4, 3])
def test_pickle_and_deepcopy_continue_identically(backend, how, num_players):
    env = TwilightVectorEnv(6, num_players, seed=3, backend=backend)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(25):  # mid-deal, some rows re-dealt
        env.step(env.random_actions())
    twin = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    assert twin.engine.backend == backend and twin.num_envs == 6
    play_same(env, twin, 60, rng)  # crosses deal ends: the dealing generators agree too
    # independent: stepping one does not move the other
    before = to_np(twin.engine.hands).copy()
    env.step(env.random_actions())
    np.testing.assert_array_equal(to_np(twin.engine.hands), before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_engine_alone_pickles(backend):
    e = VectorEngine(3, backend=backend)
    e.reset(rng=np.random.default_rng(1))
    back = pickle.loads(pickle.dumps(e))
    np.testing.assert_array_equal(to_np(back.hands), to_np(e.hands))
    np.testing.assert_array_equal(to_np(back.observe()), to_np(e.observe()))


@pytest.mark.parametrize("backend", BACKENDS)
def test_close_then_step_raises(backend):
    env = TwilightVectorEnv(2, seed=0, backend=backend)
    env.reset()
    assert env.closed is False
    env.close()
    assert env.closed is True
    env.close()  # closing twice is harmless
    for call in (lambda: env.step(np.zeros(2, np.int64)), lambda: env.step_packed(np.zeros(2, np.int64)),
                 lambda: env.reset(), lambda: env.random_actions()):
        with pytest.raises(RuntimeError, match="closed"):
            call()


@pytest.mark.parametrize("backend", BACKENDS)
def test_gymnasium_vector_env_attributes(backend):
    env = TwilightVectorEnv(7, 3, seed=0, backend=backend)
    assert env.num_envs == 7 and env.render_mode is None and env.closed is False
    assert env.single_action_space == spaces.Discrete(NUM_ACTIONS)
    assert env.action_space == spaces.MultiDiscrete(np.full(7, NUM_ACTIONS))
    so = env.single_observation_space
    assert isinstance(so, spaces.Box) and so.shape == (OBS_SIZE,) and so.dtype == np.float32
    assert env.observation_space.shape == (7, OBS_SIZE) and env.observation_space.dtype == np.float32
    assert getattr(env.metadata["autoreset_mode"], "value", env.metadata["autoreset_mode"]) == "SameStep"
    obs, mask, info = env.reset()
    assert env.observation_space.contains(to_np(obs))
    assert all(so.contains(row) for row in to_np(obs))
    assert env.action_space.contains(to_np(env.random_actions()).astype(np.int64))
