"""The scripts in ``examples/`` run, with tiny budgets, and what they print holds."""

import importlib.util
import logging
import os
import sys

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # as a script's __main__ is (dataclasses look their module up there)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("players", [3, 4])
def test_tianshou_collector_returns_are_the_engines_deal_scores(players, caplog):
    """... and Tianshou logs no warning: its statistics are kept per player, not computed
    on the flattened (episodes, players) array."""
    pytest.importorskip("tianshou")
    with caplog.at_level(logging.WARNING):
        out = _load("tianshou_collect").main(episodes=4, num_players=players, seed=players, verbose=False)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert out["collector"].shape == out["engine"].shape == (4, players)
    np.testing.assert_allclose(out["collector"], out["engine"], atol=1e-12)
    np.testing.assert_allclose(out["mean_by_player"], out["engine"].mean(axis=0), atol=1e-12)
    assert np.abs(out["engine"]).max() > 0  # some deal scored
    if players == 4:  # partners share the reward, sides are opposite
        np.testing.assert_allclose(out["collector"][:, 0], out["collector"][:, 2])
        np.testing.assert_allclose(out["collector"][:, 0], -out["collector"][:, 1])


@pytest.mark.parametrize("players", [3, 4])
def test_openspiel_ismcts_match_returns_are_the_envs_rewards(players):
    out = _load("openspiel_ismcts").main(deals=2, iterations=5, num_players=players, seed=1, verbose=False)
    ours, env = out["openspiel"], out["env"]
    assert ours.shape == (2, players)
    np.testing.assert_allclose(ours, env, atol=1e-12)
    if players == 3:  # team scoring: both Sun players get the negative of the solo's return
        np.testing.assert_allclose(ours[:, 1], -ours[:, 0])
        np.testing.assert_allclose(ours[:, 2], -ours[:, 0])
    else:
        np.testing.assert_allclose(ours.sum(axis=1), 0.0, atol=1e-12)


def test_maskable_ppo_learns_to_beat_a_random_policy():
    """MaskablePPO as the 3-player solo against random Sun players, 30,000 steps (about
    35 s of one core): on the same 200 deals the trained policy's mean reward is above a
    random policy's. Seeds 0 and 1 gave paired differences of +0.086 [+0.013, +0.158] and
    +0.079 [+0.009, +0.149]; the test asserts the mean difference only, a weaker property
    than the interval, because the interval's lower end is close to 0."""
    pytest.importorskip("sb3_contrib")
    out = _load("maskable_ppo").main(timesteps=30000, eval_deals=200, num_players=3, opponents="random",
                                     seed=0, solo=True, verbose=False)
    assert out["diff"] > 0 and out["trained"] > out["random"], out


@pytest.mark.parametrize("players", [3, 4])
def test_rllib_wrapper_returns_are_the_engines_deal_scores(players):
    """RLlib's PettingZoo wrapper over the env: the rewards it hands each agent sum to the
    engine's deal scores (skipped where RLlib cannot be imported: the ``rllib`` extra)."""
    try:
        import ray.rllib.env.wrappers.pettingzoo_env  # noqa: F401
        import ray.tune.registry  # noqa: F401
    except ImportError as e:  # RLlib raises ImportError, not only ModuleNotFoundError, for missing parts
        pytest.skip(f"RLlib is not importable (pip install -e \".[rllib]\"): {e}")
    mod = _load("rllib_random_rollout")
    out = mod.main(episodes=3, num_players=players, seed=players, verbose=False)
    assert out["rllib"].shape == out["engine"].shape == (3, players)
    np.testing.assert_allclose(out["rllib"], out["engine"], atol=1e-12)
    assert np.abs(out["engine"]).max() > 0 and out["steps"] >= 3 * 28 * players // 4
    env = mod.make_env({"num_players": players})
    assert sorted(env.possible_agents) == [f"player_{i}" for i in range(players)]
    with pytest.raises(ValueError, match="episodes"):
        mod.main(episodes=0)
