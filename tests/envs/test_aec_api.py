"""PettingZoo's own API, seed and render tests, registration, and import hygiene."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import warnings

import pytest
from pettingzoo.test import api_test, render_test, seed_test

import twilight_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = [
    dict(num_players=4),
    dict(num_players=3),
    dict(num_players=4, episode="match", target=300),
    dict(num_players=3, episode="match", target=300),
    dict(num_players=3, episode="match", target=300, three_player_scoring="individual", goals_333=True),
    dict(num_players=3, episode="match", target=300, fixed_solo=True),
]
IDS = ["4p-deal", "3p-deal", "4p-match", "3p-match", "3p-match-individual", "3p-match-fixed-solo"]


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pettingzoo_api_test(config):
    env = twilight_env.env(**config)
    with warnings.catch_warnings():
        # api_test passes options={"options": 1}; the env ignores unknown keys with a warning
        warnings.filterwarnings("ignore", message="ignoring unknown reset option")
        api_test(env, num_cycles=400)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pettingzoo_seed_test(config):
    seed_test(functools.partial(twilight_env.env, **config), num_cycles=100)


@pytest.mark.parametrize("config", CONFIGS[:4], ids=IDS[:4])
def test_pettingzoo_render_test(config, capsys):
    render_test(functools.partial(twilight_env.env, **config),
                custom_tests={"ansi": lambda text: "Pending pile" in text and "seat" in text})


def test_raw_env_passes_api_test():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="ignoring unknown reset option")
        api_test(twilight_env.raw_env(num_players=3), num_cycles=200)


def test_pettingzoo_make_from_registry():
    import pettingzoo

    assert twilight_env.ENV_ID in pettingzoo.aec_registry
    env = pettingzoo.make("aec", "twilight/Twilight-v0", num_players=3)
    env.reset(seed=1)
    assert env.agents == ["player_0", "player_1", "player_2"]
    assert isinstance(env.unwrapped, twilight_env.raw_env)


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


BARE_PACKAGE = ("import sys, types, importlib.util\n"
                "_pkg = types.ModuleType('twilight_env')\n"
                "_pkg.__path__ = list(importlib.util.find_spec('twilight_env').submodule_search_locations)\n"
                "sys.modules['twilight_env'] = _pkg\n")
"""Child-process prelude: ``twilight_env`` as a bare package, its ``__init__`` (which
registers the envs, so imports Gymnasium and PettingZoo) not run, so what a submodule
import loads is that submodule's own doing."""


def test_engine_modules_do_not_import_pettingzoo():
    """The engine, the information sets and the observation encoder import neither
    PettingZoo nor Gymnasium; the package's ``__init__`` does, to register the envs."""
    assert _run(BARE_PACKAGE + "import twilight_env.rules.engine, twilight_env.rules.infoset, twilight_env.obs.encoding\n"
                "print('pettingzoo' in sys.modules, 'gymnasium' in sys.modules)") == "False False"
    assert _run("import sys, twilight_env\n"
                "print('pettingzoo' in sys.modules, 'gymnasium' in sys.modules)") == "True True"


@pytest.mark.parametrize("order", ["twilight_env, pettingzoo", "pettingzoo, twilight_env",
                                   "twilight_env, gymnasium, pettingzoo", "gymnasium, pettingzoo, twilight_env"])
def test_registration_in_either_import_order(order):
    code = (f"import {order}\n"
            "e = pettingzoo.make('aec', 'twilight/Twilight-v0', num_players=3)\n"
            "e.reset(seed=0); print(len(e.agents))")
    assert _run(code) == "3"


def test_dir_and_star_import_list_env_and_raw_env():
    """``env`` and ``raw_env`` load on first use (module ``__getattr__``), yet ``dir()`` and
    ``from twilight_env import *`` show them like the other public names."""
    assert {"env", "raw_env", "ENV_ID", "SINGLE_AGENT_ID", "register_gymnasium", "register_pettingzoo"} \
        <= set(dir(twilight_env))
    names: dict = {}
    exec("from twilight_env import *", names)
    assert names["env"] is twilight_env.env and names["raw_env"] is twilight_env.raw_env
    assert "annotations" not in dir(twilight_env)  # the __future__ import is no public name


def test_asking_for_parallel_env_says_why_there_is_none():
    with pytest.raises(AttributeError, match="sequential.*AEC only.*twilight_env.env"):
        twilight_env.parallel_env  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'$"):
        twilight_env.nope  # noqa: B018
