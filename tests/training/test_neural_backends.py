"""The ``neural`` agent's backends: NumPy plays the shipped network without torch, and
plays what torch plays."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from twilight_env.agents.base import make_agent
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("n", [3, 4])
def test_numpy_backend_plays_what_torch_plays(n):
    pytest.importorskip("torch")
    a_np = make_agent("neural:backend=numpy")
    a_t = make_agent("neural:backend=torch")
    assert a_np.backend == "numpy" and a_t.backend == "torch"
    rng = np.random.default_rng(7)
    decided = 0
    for _ in range(30):
        st = State.random(rng, 0, n)
        while not st.done:
            info = InfoSet(st, st.deciding_seat)
            legal = st.legal_actions()
            q_np = a_np.q_values([info], [legal])[0]
            q_t = a_t.q_values([info], [legal])[0]
            np.testing.assert_allclose(q_np, q_t, rtol=1e-5, atol=1e-5)
            top = sorted(q_t, reverse=True)
            if len(top) == 1 or top[0] - top[1] > 1e-4:  # not a near tie: the same action
                assert a_np.act(info, legal, rng) == a_t.act(info, legal, rng)
                decided += 1
            st.apply(a_t.act(info, legal, rng))
    assert decided > 300


def test_auto_takes_torch_when_installed_and_numpy_for_npz():
    pytest.importorskip("torch")
    assert make_agent("neural").backend == "torch"
    npz = str(ROOT / "agents" / "weights" / "neural_4p.npz")
    agent = make_agent(f"neural:path={npz}")
    assert agent.backend == "numpy" and agent.num_players == 4


def test_backend_mismatches_are_refused_naming_the_option():
    with pytest.raises(ValueError, match="backend must be one of auto, torch, numpy"):
        make_agent("neural:backend=jax")

def test_a_checkpoint_is_refused_by_numpy_and_an_npz_plays_with_torch(tmp_path):
    """``backend=numpy`` reads only ``.npz`` files; ``backend=torch`` reads both (the shipped
    weights are one ``.npz`` per variant, which the torch backend loads)."""
    torch = pytest.importorskip("torch")
    from twilight_env.agents.nn.checkpoint import load_checkpoint, save_checkpoint

    npz = ROOT / "agents" / "weights" / "neural_4p.npz"
    pt = tmp_path / "neural_4p.pt"
    save_checkpoint(load_checkpoint(npz, 4), pt)
    with pytest.raises(ValueError, match=r"backend=numpy reads \.npz weights; export .*python -m twilight_env\.agents\.nn\.numpy_net"):
        make_agent(f"neural:path={pt},backend=numpy")
    agent = make_agent(f"neural:path={npz},backend=torch")
    assert agent.backend == "torch" and agent.num_players == 4
    assert isinstance(agent.model_for(4), torch.nn.Module)


NO_TORCH = (
    "import sys, importlib.abc\n"
    "class _NoTorch(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'torch' or name.startswith('torch.'):\n"
    "            raise ImportError('torch is blocked in this test')\n"
    "sys.meta_path.insert(0, _NoTorch())\n")
"""Makes ``import torch`` fail as on a machine without it (``torch`` never enters
``sys.modules``, so libraries that look there, such as SciPy, see no torch either)."""


def _run_without_torch(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", NO_TORCH + code], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def test_the_shipped_network_plays_without_torch():
    """``import torch`` made to fail: ``neural:default`` (auto) plays 3- and 4-player deals on
    NumPy, and asking for torch names the train extra."""
    r = _run_without_torch(
        "import numpy as np\n"
        "from twilight_env.agents.base import make_agent, play_deal\n"
        "from twilight_env.rules.engine import State\n"
        "a = make_agent('neural:default')\n"
        "assert a.backend == 'numpy', a.backend\n"
        "for n in (3, 4):\n"
        "    st = State.random(np.random.default_rng(n), 0, n)\n"
        "    play_deal(st, [a] * 4, np.random.default_rng(0))\n"
        "    assert st.done\n"
        "try:\n"
        "    make_agent('neural:backend=torch')\n"
        "except ValueError as e:\n"
        "    assert 'train extra' in str(e) and 'pip install torch==2.13.0' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('backend=torch without torch was accepted')\n"
        "assert 'torch' not in sys.modules\n"
        "print('ok')\n")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_edge_with_the_shipped_network_runs_without_torch(tmp_path):
    """The study's command with ``neural:default`` needs no torch."""
    r = _run_without_torch(
        "from twilight_env.cli import main\n"
        f"raise SystemExit(main(['edge', 'neural:default', '--deals', '12', '--workers', '1', '--boot', '20', "
        f"'--matches', '20', '--out', {str(tmp_path / 'e')!r}]))\n")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "neural" in r.stdout and (tmp_path / "e" / "edge.json").is_file()
