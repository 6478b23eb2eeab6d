"""Subnormal weights play as 0 (:func:`twilight_env.agents.nn.npz_file.flush_subnormal`): the
forward passes of the shipped networks, NumPy and torch, hold none, give bitwise the outputs
of the weights as stored on real positions, and the search plays the same."""

from __future__ import annotations

import numpy as np
import pytest

from twilight_env.agents import guided
from twilight_env.agents.nn.features import infoset_row, role_of
from twilight_env.agents.nn.npz_file import flush_subnormal, read_weights_npz
from twilight_env.agents.nn.numpy_pv import load_pv_npz
from twilight_env.rules.engine import NUM_ACTIONS, State
from twilight_env.rules.infoset import InfoSet

TINY = np.finfo(np.float32).tiny


def _subnormal(a) -> int:
    a = np.asarray(a)
    return int(((np.abs(a) < np.finfo(a.dtype).tiny) & (a != 0)).sum())


def _positions(players: int, deals: int = 6):
    """Information sets with a choice, from random play (real rows: about one bit in ten set)."""
    rng = np.random.default_rng(players)
    out = []
    for _ in range(deals):
        state = State.random(rng, 0, players)
        while not state.done:
            info = InfoSet(state, state.deciding_seat)
            if len(info.legal_actions) > 1:
                out.append(info)
            state.apply(int(rng.choice(info.legal_actions)))
    return out


def test_flush_subnormal_sets_exactly_the_subnormal_entries_to_zero_in_place():
    a = np.array([TINY / 2, -TINY / 4, TINY, -TINY, 0.0, 1e-30, -3.5, np.inf, np.nan], dtype=np.float32)
    out = flush_subnormal(a)
    assert out is a
    assert a[0] == 0 and a[1] == 0 and a[2] == TINY and a[3] == -TINY and a[4] == 0 and a[5] == np.float32(1e-30)
    assert a[6] == -3.5 and a[7] == np.inf and np.isnan(a[8])
    b = np.array([np.finfo(np.float64).tiny / 8, 1e-300, TINY / 2], dtype=np.float64)  # float64's own bound
    flush_subnormal(b)
    assert b[0] == 0 and b[1] == 1e-300 and b[2] == TINY / 2
    ints = np.array([0, 1, 2])
    assert flush_subnormal(ints) is ints and ints.tolist() == [0, 1, 2]
    assert flush_subnormal(np.zeros(0, np.float32)).size == 0


@pytest.mark.parametrize("players", [3, 4])
def test_the_shipped_network_plays_its_subnormal_weights_as_zero_with_bitwise_the_same_outputs(players):
    path = guided.default_weights(players)
    _, stored_params = read_weights_npz(str(path), "weights")
    in_file = sum(_subnormal(v) for v in stored_params.values() if np.asarray(v).dtype.kind == "f")
    flushed, _ = load_pv_npz(path, players)
    kept, _ = load_pv_npz(path, players, keep_subnormal=True)
    assert sum(_subnormal(x) for x in kept.played_arrays()) == in_file > 0  # the weights as stored hold some
    assert sum(_subnormal(x) for x in flushed.played_arrays()) == 0
    for k, v in flushed.params.items():  # the weights as given are kept as given
        assert np.array_equal(v, stored_params[k])
    infos = _positions(players)
    rows = np.array([infoset_row(i) for i in infos], dtype=np.int64)
    roles = np.array([role_of(players, i.acting_seat) for i in infos])
    legal = np.zeros((len(infos), NUM_ACTIONS), bool)
    for j, i in enumerate(infos):
        legal[j, i.legal_actions] = True
    for a, b in zip(kept.forward(rows, roles, legal), flushed.forward(rows, roles, legal)):
        assert np.array_equal(a, b)
    for j in range(0, len(infos), 7):
        pa, va = kept.forward_one(rows[j], roles[j], legal[j])
        pb, vb = flushed.forward_one(rows[j], roles[j], legal[j])
        assert np.array_equal(pa, pb) and va == vb


@pytest.mark.parametrize("players", [3, 4])
def test_the_search_plays_the_same_with_the_subnormal_weights_as_zero(players):
    path = guided.default_weights(players)
    flushed, _ = load_pv_npz(path, players)
    kept, _ = load_pv_npz(path, players, keep_subnormal=True)
    for info in _positions(players, deals=1)[::5]:
        runs = [guided.search(info, info.legal_actions, net, 200, np.random.default_rng(3), batch=16)
                for net in (kept, flushed)]
        assert all(np.array_equal(a, b) for a, b in zip(*runs))


def test_the_torch_network_of_a_checkpoint_plays_its_subnormal_weights_as_zero():
    torch = pytest.importorskip("torch")
    from pathlib import Path

    from twilight_env.agents import policy
    from twilight_env.agents.exit import load_exit_checkpoint, load_model, model_from_exit_checkpoint

    path = Path(__file__).resolve().parents[2] / policy.DEFAULT_SOURCES[3]
    model, _ = load_model(path, 3)
    stored = model_from_exit_checkpoint(load_exit_checkpoint(path, 3), str(path))
    assert sum(_subnormal(p.numpy()) for p in stored.parameters()) > 0
    assert sum(_subnormal(p.numpy()) for p in model.parameters()) == 0
    infos = _positions(3, deals=3)
    rows = torch.tensor(np.array([infoset_row(i) for i in infos], dtype=np.int64))
    roles = torch.tensor([role_of(3, i.acting_seat) for i in infos])
    legal = torch.zeros((len(infos), NUM_ACTIONS), dtype=torch.bool)
    for j, i in enumerate(infos):
        legal[j, i.legal_actions] = True
    with torch.no_grad():
        for a, b in zip(stored(rows, roles, legal), model(rows, roles, legal)):
            assert torch.equal(a, b)


@pytest.mark.parametrize("keep", [False, True])
def test_the_torch_twin_of_a_numpy_network_plays_its_weights_as_the_numpy_network_does(keep):
    """``TorchForward.from_numpy`` (``guided:...,device=...``, the ``mmd`` agent's ``model_for``
    read by the search responder) takes the NumPy network's choice: subnormal weights as 0
    unless it keeps them."""
    torch = pytest.importorskip("torch")
    from twilight_env.agents.exit import TorchForward

    net, _ = load_pv_npz(guided.default_weights(3), 3, keep_subnormal=keep)
    twin = TorchForward.from_numpy(net, "cpu").model
    held = sum(_subnormal(p.detach().numpy()) for p in twin.parameters())
    assert (held > 0) if keep else (held == 0)
    infos = _positions(3, deals=1)
    rows = np.array([infoset_row(i) for i in infos], dtype=np.int64)
    roles = np.array([role_of(3, i.acting_seat) for i in infos])
    legal = np.zeros((len(infos), NUM_ACTIONS), bool)
    for j, i in enumerate(infos):
        legal[j, i.legal_actions] = True
    with torch.no_grad():
        logits, _ = twin(torch.from_numpy(rows), torch.from_numpy(roles), torch.from_numpy(legal))
    probs, _ = net.forward(rows, roles, legal)
    np.testing.assert_allclose(torch.softmax(logits, 1).numpy(), probs, atol=1e-5)
