"""``observe()`` and ``last()`` hand out arrays the caller owns: changing them in place
(normalising the vector, editing the mask, replacing a key) never reaches a later read."""

import numpy as np
import pytest
from pettingzoo.utils.wrappers import OrderEnforcingWrapper, TerminateIllegalWrapper

import twilight_env


def spoil(obs):
    obs["observation"] -= obs["observation"].mean()  # an in-place normalisation
    obs["observation"] /= 7.0
    obs["action_mask"][:] = 1 - obs["action_mask"]
    obs["action_mask"] = np.ones(31, np.int8)


@pytest.mark.parametrize("make", [twilight_env.env, twilight_env.raw_env])
@pytest.mark.parametrize("num_players", [4, 3])
def test_in_place_changes_never_reach_later_reads(make, num_players):
    env = make(num_players=num_players)
    ref = make(num_players=num_players)
    env.reset(seed=11)
    ref.reset(seed=11)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        want = ref.observe(agent)
        want = {k: v.copy() for k, v in want.items()}
        obs, _, term, trunc, _ = env.last()
        spoil(obs)
        for read in (env.last()[0], env.observe(agent), env.last()[0]):
            np.testing.assert_array_equal(read["observation"], want["observation"])
            np.testing.assert_array_equal(read["action_mask"], want["action_mask"])
            assert read["observation"].flags.writeable and read["action_mask"].flags.writeable
            spoil(read)
        for other in env.agents:  # the others' views are not touched either
            o = env.observe(other)
            np.testing.assert_array_equal(o["observation"], ref.observe(other)["observation"])
            spoil(o)
        a = None if term or trunc else int(rng.choice(np.flatnonzero(want["action_mask"])))
        env.step(a)
        ref.step(a)


def test_each_call_returns_new_arrays():
    env = twilight_env.raw_env()
    env.reset(seed=0)
    a, b = env.observe("player_0"), env.observe("player_0")
    assert a is not b
    assert not np.shares_memory(a["observation"], b["observation"])
    assert not np.shares_memory(a["action_mask"], b["action_mask"])


def terminate_illegal_env():
    return OrderEnforcingWrapper(TerminateIllegalWrapper(twilight_env.raw_env(num_players=4), illegal_reward=-1))


def test_terminate_illegal_wrapper_still_plays_legal_actions_to_the_end():
    env = terminate_illegal_env()
    env.reset(seed=5)
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1])
        env.step(action)
        steps += 1
    assert steps >= 28 + 4 and env.unwrapped._match.deals_played == 1  # a whole deal, no illegal ending


def test_terminate_illegal_wrapper_still_ends_on_an_illegal_action():
    env = terminate_illegal_env()
    env.reset(seed=5)
    obs, *_ = env.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    first = env.agent_selection
    env.step(bad)  # PettingZoo's EnvLogger reports the illegal move
    assert all(env.terminations.values())
    assert env.rewards[first] == -1
    # a fresh read after the ending: masks are all zeros, and the caller's edits did not matter
    spoil(obs)
    assert not env.observe(env.agent_selection)["action_mask"].any()
