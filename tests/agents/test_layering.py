"""The agents layer runs without the training layer and without torch (the import order itself
is checked for every module by ``tests/test_layers.py``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, cwd=ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    """``python -c code`` in a fresh interpreter with the repository on the path."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_neural_agent_plays_with_training_blocked():
    """The ``neural`` agent loads the shipped weights and plays a deal of each variant while
    ``import training`` is made to fail."""
    pytest.importorskip("torch")
    code = (
        "import sys\n"
        "sys.modules['twilight_env.training'] = None\n"
        "import numpy as np\n"
        "from twilight_env.agents.base import make_agent, play_deal\n"
        "from twilight_env.rules.engine import State\n"
        "for n in (4, 3):\n"
        "    st = State.random(np.random.default_rng(n), 0, n)\n"
        "    play_deal(st, [make_agent('neural:default')] * 4, np.random.default_rng(0))\n"
        "    assert st.done\n"
        "assert not any(m == 'twilight_env.training' or m.startswith('twilight_env.training.') for m in sys.modules if sys.modules[m])\n"
        "print('ok')\n")
    r = _python(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_features_import_without_torch():
    """``twilight_env.agents.nn`` and its feature encoding import without torch (only the network needs it)."""
    code = ("import sys\nimport twilight_env.agents.nn, twilight_env.agents.nn.features\n"
            "assert 'torch' not in sys.modules\nprint('ok')\n")
    r = _python(code, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


@pytest.mark.parametrize("spec", ["guided:default,iterations=30,batch=8", "policy:default"])
def test_network_agents_with_numpy_weights_play_without_torch(spec):
    """``guided:default`` and ``policy:default`` read their NumPy weights (``agents/weights/*.npz``)
    and play a deal of each variant while ``import torch`` is made to fail."""
    if spec.startswith("guided"):
        pytest.importorskip("numba")
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "import numpy as np\n"
        "from twilight_env.agents.base import make_agent, play_deal\n"
        "from twilight_env.rules.engine import State\n"
        "for n in (4, 3):\n"
        "    st = State.random(np.random.default_rng(n), 0, n)\n"
        f"    play_deal(st, [make_agent({spec!r})] * 4, np.random.default_rng(0))\n"
        "    assert st.done\n"
        "print('ok')\n")
    r = _python(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_torch_agents_without_torch_name_torch_and_the_train_extra(tmp_path):
    """``exit``, ``exit-search`` and ``respond`` import torch: without it, building one raises
    an ImportError naming torch and the train extra's install command (not a bare
    ModuleNotFoundError from deep in the module), and ``twilight arena`` says the same in
    one line, exit status 2, before making its folder (the deprecated name's note was
    given once, when ``make_agent`` read it above)."""
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "import twilight_env.training  # declares respond\n"
        "from twilight_env.agents.base import make_agent\n"
        "from twilight_env.util.extras import install_hint\n"
        "for spec in ('exit', 'exit-search', 'respond'):\n"
        "    try:\n"
        "        make_agent(spec)\n"
        "    except ModuleNotFoundError as e:\n"
        "        raise AssertionError(f'a bare ModuleNotFoundError for {spec}: {e}')\n"
        "    except ImportError as e:\n"
        "        assert f\"agent '{spec}' needs torch\" in str(e) and install_hint('train') in str(e), str(e)\n"
        "    else:\n"
        "        raise AssertionError(f'{spec} was built without torch')\n"
        "from twilight_env.cli import main\n"
        "sys.exit(main(['arena', 'exit', 'random', '--deals', '2', '--workers', '1', '--quiet']))\n")
    r = _python(code, cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("twilight arena: error: agent 'exit'"), r.stderr[-2000:]
    assert "needs torch" in lines[0] and 'pip install torch==2.13.0 && pip install -e ".[train]"' in lines[0]
    assert list(tmp_path.iterdir()) == []  # no out/ folder


def test_the_main_command_plays_the_shipped_network_without_torch(tmp_path):
    """``twilight edge`` with no spec (the README's main job) plays ``policy`` (the shipped network,
    ``experiments.edge.core.DEFAULT_SPEC``) on all three chairs while ``import torch`` fails:
    the ``study`` install, which has no torch, runs it."""
    code = (
        "import sys, json\n"
        "class NoTorch:\n"  # an import hook (scipy trips over sys.modules['torch'] = None)
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ImportError('torch is not installed')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "from twilight_env.cli import main\n"
        f"assert main(['edge', '--deals', '4', '--workers', '1', '--quiet', '--out', {str(tmp_path / 'e')!r}]) == 0\n"
        f"doc = json.load(open({str(tmp_path / 'e' / 'edge.json')!r}))\n"
        "assert 'torch' not in sys.modules\n"
        "print(json.dumps(doc['configs']))\n")
    r = _python(code)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == '[{"solo": "policy", "sun": "policy"}]', r.stdout[-500:]
