"""``gymnasium.make("twilight/SingleAgent-v0")``: registered on ``import twilight_env`` in
either import order, and clean under Gymnasium's ``check_env``."""

import os
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import twilight_env
from twilight_env.envs.wrappers import SingleAgentEnv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_make_builds_the_single_agent_wrapper_with_its_keywords():
    env = gym.make(twilight_env.SINGLE_AGENT_ID, num_players=3, learner="player_1", opponents="heuristic")
    assert isinstance(env.unwrapped, SingleAgentEnv)
    assert env.unwrapped.learner == "player_1" and env.unwrapped.aec_env.num_players == 3
    assert env.spec.id == "twilight/SingleAgent-v0"
    obs, info = env.reset(seed=3)
    assert obs.shape == (968,) and obs.dtype == np.float32
    a = int(np.flatnonzero(info["action_mask"])[0])
    env.step(a)
    with pytest.raises(ValueError, match="num_players"):
        gym.make(twilight_env.SINGLE_AGENT_ID, num_players=5)


def test_check_env_gives_no_warning_for_the_registered_env():
    env = gym.make(twilight_env.SINGLE_AGENT_ID, num_players=4, opponents="random")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("imports", ["import gymnasium as gym; import twilight_env",
                                     "import twilight_env; import gymnasium as gym",
                                     "import twilight_env; import pettingzoo; import gymnasium as gym"])
def test_registered_in_any_import_order(imports):
    code = (f"{imports}\n"
            "env = gym.make('twilight/SingleAgent-v0', num_players=3)\n"
            "print(type(env.unwrapped).__name__)\n")
    if "pettingzoo" in imports:
        code += "assert 'twilight/Twilight-v0' in pettingzoo.aec_registry\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "SingleAgentEnv"
