"""The Gymnasium single-agent wrapper."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from twilight_env.agents.random_agent import RandomAgent
from twilight_env.obs.encoding import OBS_SIZE, decode_observation
from twilight_env.envs.wrappers import SingleAgentEnv


@pytest.mark.parametrize("config", [dict(num_players=4), dict(num_players=3, learner=1),
                                    dict(num_players=3, episode="match", target=200, render_mode="ansi")])
def test_gymnasium_check_env_passes(config):
    """Gymnasium's checker passes, without a warning, on the env built through the registry
    (``twilight/SingleAgent-v0``: it has a spec, so the render modes are checked too)."""
    import warnings

    import gymnasium

    import twilight_env
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make(twilight_env.SINGLE_AGENT_ID, **config).unwrapped
        assert isinstance(env, SingleAgentEnv)
        check_env(env, skip_render_check=config.get("render_mode") is None)
    assert [str(w.message) for w in caught] == []


class FirstLegal:
    """A deterministic opponent that records what it was shown."""

    name = "first"

    def __init__(self):
        self.calls = 0

    def act(self, infoset, legal_actions, rng):
        self.calls += 1
        assert infoset.to_act and tuple(legal_actions) == tuple(infoset.legal_actions)
        return legal_actions[0]


@pytest.mark.parametrize("num_players", [4, 3])
def test_episodes_reward_and_masks(num_players):
    opp = FirstLegal()
    env = SingleAgentEnv(num_players=num_players, learner="player_1", opponents=opp)
    rng = np.random.default_rng(0)
    for ep in range(5):
        obs, info = env.reset(seed=ep)
        total = 0.0
        while True:
            assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
            assert decode_observation(obs)["to_act"]
            mask = env.action_masks()
            assert mask.dtype == bool and mask.shape == (31,)
            assert np.flatnonzero(mask).tolist() == list(env.infoset().legal_actions)
            assert np.array_equal(mask, info["action_mask"].astype(bool))
            obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += reward
            assert not trunc
            if term:
                break
        raw = env.aec_env
        st = raw._state
        assert st.done
        assert total == pytest.approx(st.returns()[raw.seat_of("player_1")] / 360.0)
        assert not env.action_masks().any()
        with pytest.raises(ValueError, match="over"):
            env.step(0)
    assert opp.calls > 0


def test_opponents_by_spec_mapping_and_sequence():
    for opponents in ("random", {"player_1": RandomAgent(), "player_2": "random"},
                      [None, RandomAgent(), RandomAgent()]):
        env = SingleAgentEnv(num_players=3, learner=0, opponents=opponents)
        obs, info = env.reset(seed=1)
        assert env.action_masks().any()


def test_illegal_action_modes():
    env = SingleAgentEnv(num_players=4, illegal_action="raise")
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    hist = list(env.aec_env._state.history)
    with pytest.raises(ValueError, match="illegal"):
        env.step(bad)
    assert env.aec_env._state.history == hist
    env = SingleAgentEnv(num_players=4)
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step(bad)
    assert term and reward == -1.0 and info["illegal_action"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(learner="player_7"), "learner"),
    (dict(num_players=3, learner=3), "learner"),
    (dict(opponents=42), "opponent"),
    (dict(opponents="nosuchagent"), "unknown agent"),
    (dict(opponents={"player_1": "random"}), "missing"),
    (dict(illegal_action="ignore"), "illegal_action"),
    (dict(num_players=5), "num_players"),
    (dict(colour="red"), "unknown config keyword"),
])
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SingleAgentEnv(**kwargs)
