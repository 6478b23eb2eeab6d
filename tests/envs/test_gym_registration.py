"""``gymnasium.make("twilight/SingleAgent-v0")``: registered on ``import twilight_env`` in
either import order without an import hook, named in the ``gymnasium.envs`` entry point
group, and clean under Gymnasium's ``check_env``."""

import ast
import importlib.metadata
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


def _child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ROOT})


def test_module_colon_id_imports_the_package_first():
    """Gymnasium 1.x reads no entry points; its ``module:id`` form imports twilight_env, which
    registers the id, in an interpreter that never imported it."""
    r = _child("import gymnasium as gym\n"
               "env = gym.make('twilight_env:twilight/SingleAgent-v0', num_players=3)\n"
               "print(type(env.unwrapped).__name__)\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "SingleAgentEnv"


def test_the_package_init_defines_no_import_hook():
    """No finder or loader in ``twilight_env/__init__.py``, and none added to ``sys.meta_path``
    by importing it."""
    path = os.path.join(ROOT, "twilight_env", "__init__.py")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    classes = [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    assert classes == [], classes
    assert "meta_path" not in source and "importlib.abc" not in source
    r = _child("import sys\nbefore = list(sys.meta_path)\nimport twilight_env\n"
               "print([type(f).__module__ for f in sys.meta_path if f not in before])\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_the_gymnasium_entry_point_registers_the_id(monkeypatch):
    """``pyproject.toml`` names :func:`twilight_env.register_gymnasium` in the
    ``gymnasium.envs`` group (read by Gymnasium 0.29 on ``import gymnasium``); loading and
    calling it registers the id, once."""
    try:
        with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
            import tomllib
            declared = tomllib.load(f)["project"]["entry-points"]["gymnasium.envs"]
    except ModuleNotFoundError:  # Python 3.10 has no tomllib
        pytest.skip("tomllib needs Python 3.11")
    assert declared == {"twilight": "twilight_env:register_gymnasium"}
    installed = {ep.name: ep for ep in importlib.metadata.entry_points(group="gymnasium.envs")}
    if "twilight" in installed:  # the installed metadata matches (reinstall after editing pyproject)
        assert installed["twilight"].value == declared["twilight"]
    register = importlib.metadata.EntryPoint("twilight", declared["twilight"], "gymnasium.envs").load()
    monkeypatch.delitem(gym.registry, twilight_env.SINGLE_AGENT_ID)
    register()
    register()
    assert gym.registry[twilight_env.SINGLE_AGENT_ID].entry_point == "twilight_env.envs.wrappers:SingleAgentEnv"
