"""The NumPy forward pass of the DMC Q-network equals torch's, and needs no torch."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from twilight_env.agents.nn.numpy_net import load_npz, save_npz
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = ROOT / "agents" / "weights"


def _decisions(n, deals=20, seed=0):
    from twilight_env.agents.nn.features import infoset_row, role_of
    rng = np.random.default_rng(seed)
    rows, roles, legals = [], [], []
    for _ in range(deals):
        st = State.random(rng, 0, n)
        while not st.done:
            legal = st.legal_actions()
            rows.append(infoset_row(InfoSet(st, st.deciding_seat)))
            roles.append(role_of(n, st.acting_seat))
            legals.append(tuple(int(a) for a in legal))
            st.apply(int(rng.choice(legal)))
    return rows, roles, legals


@pytest.mark.parametrize("n", [3, 4])
def test_shipped_npz_weights_play_the_same_q_values_in_torch_and_numpy(n):
    """The one shipped file per variant (``neural_{3,4}p.npz``) read by torch (the trainer's
    checkpoint loader) and by NumPy: the same parameters, the same Q-values."""
    torch = pytest.importorskip("torch")
    from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint
    from twilight_env.agents.nn.network import score_decisions
    ckpt = load_checkpoint(WEIGHTS / f"neural_{n}p.npz", n)
    assert ckpt["format"] == "twilight-dmc" and ckpt["num_players"] == n
    model = model_from_checkpoint(ckpt)
    net = load_npz(WEIGHTS / f"neural_{n}p.npz", n)
    sd = model.state_dict()
    assert set(sd) == set(net.params)
    for k, v in sd.items():
        assert np.array_equal(v.numpy(), net.params[k]), k
    rows, roles, legals = _decisions(n)
    with torch.no_grad():
        a = score_decisions(model, rows, roles, legals, "cpu")
    b = net.score_decisions(rows, roles, legals)
    assert len(a) == len(b) == len(rows) > 500
    for qa, qb in zip(a, b):
        np.testing.assert_allclose(qb, qa, rtol=1e-5, atol=1e-5)
        assert int(np.argmax(qa)) == int(np.argmax(qb)) or abs(max(qa) - qa[int(np.argmax(qb))]) < 1e-5


def test_random_weights_round_trip_through_save_and_equal_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from twilight_env.agents.nn.network import NetConfig, QNetwork
    torch.manual_seed(3)
    model = QNetwork(NetConfig(num_roles=4, trunk=(64, 32), head=(16, 8)))
    params = {k: v.numpy() for k, v in model.state_dict().items()}
    save_npz(tmp_path / "w.npz", params, model.cfg.to_dict(), 3)
    net = load_npz(tmp_path / "w.npz", 3)
    rows, roles, legals = _decisions(3, deals=5, seed=1)
    acts = [a for l in legals for a in l]
    owner = [i for i, l in enumerate(legals) for _ in l]
    with torch.no_grad():
        q_t = model(torch.tensor(rows), torch.tensor(roles), torch.tensor(acts), torch.tensor(owner)).numpy()
    q_n = net(np.array(rows), roles, acts, owner)
    np.testing.assert_allclose(q_n, q_t, rtol=1e-5, atol=1e-6)


def test_bad_weights_files_are_refused_naming_the_file(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_npz(tmp_path / "none.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="damaged or not an .npz file"):
        load_npz(bad)
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="not a twilight network weights file"):
        load_npz(tmp_path / "other.npz")
    with pytest.raises(ValueError, match="are for 4 players, but a 3-player network is needed"):
        load_npz(WEIGHTS / "neural_4p.npz", 3)
    net = load_npz(WEIGHTS / "neural_4p.npz")
    params = dict(net.params)
    params["trunk.0.weight"] = params["trunk.0.weight"][:, :10]
    with pytest.raises(ValueError, match="has shape"):
        save_npz(tmp_path / "w.npz", params, net.net, 4)


def test_numpy_network_plays_with_torch_blocked():
    """Loading and scoring need only NumPy: ``import torch`` is made to fail."""
    code = ("import sys\nsys.modules['torch'] = None\n"
            "from tests.training.test_numpy_net import _decisions, WEIGHTS\n"
            "from twilight_env.agents.nn.numpy_net import load_npz\n"
            "net = load_npz(WEIGHTS / 'neural_3p.npz', 3)\n"
            "rows, roles, legals = _decisions(3, deals=2)\n"
            "q = net.score_decisions(rows, roles, legals)\n"
            "assert len(q) == len(rows) and all(len(a) == len(b) for a, b in zip(q, legals))\n"
            "print('ok')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
