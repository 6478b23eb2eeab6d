"""The network-guided IS-MCTS (``guided``): its NumPy network equals torch's, its compiled
first layer equals the product, the search is a pure function of the information set
and the seed (no leak), it finds a dominant move, and bad options are refused."""

from __future__ import annotations

import functools

import numpy as np
import pytest

pytest.importorskip("numba")
torch = pytest.importorskip("torch")

from twilight_env.agents import _guided_nb as G  # noqa: E402
from twilight_env.agents import guided  # noqa: E402
from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.agents.exit import PolicyValueNet, PVConfig, default_weights, load_model  # noqa: E402
from twilight_env.agents.nn.numpy_pv import NumpyPolicyValueNet, load_pv_npz, save_pv_npz  # noqa: E402
from twilight_env.rules.engine import NUM_ACTIONS, State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402

from tests.agents.test_fast_ismcts import _decision  # noqa: E402
from tests.agents.test_fast_ismcts import _dominant_positions as _dominant  # noqa: E402

_dominant_positions = functools.cache(_dominant)


def _rows(rng, n):
    """Compact rows with about one bit in ten set (as real rows), and random roles and legal masks."""
    bits = rng.random((n, 25, 28)) < 0.1
    return (bits * (1 << np.arange(28))).sum(axis=2).astype(np.int64)


@pytest.mark.parametrize("players,head", [(3, (16,)), (4, (16,)), (3, (16, 8)), (4, ())])
def test_numpy_network_equals_torch(players, head):
    torch.manual_seed(players)
    cfg = PVConfig(num_roles=4 if players == 3 else 1, trunk=(32, 24), head=head)
    model = PolicyValueNet(cfg).eval()
    net = NumpyPolicyValueNet({k: v.numpy() for k, v in model.state_dict().items()}, cfg.to_dict())
    rng = np.random.default_rng(0)
    rows = _rows(rng, 40)
    roles = rng.integers(0, cfg.num_roles, 40)
    legal = rng.random((40, NUM_ACTIONS)) < 0.3
    legal[:, 5] = True
    with torch.no_grad():
        logits, value = model(torch.from_numpy(rows), torch.from_numpy(roles), torch.from_numpy(legal))
    p, v = net.forward(rows, roles, legal)
    assert p.dtype == v.dtype == np.float32 and p.shape == (40, NUM_ACTIONS) and v.shape == (40,)
    np.testing.assert_allclose(p, torch.softmax(logits, 1).numpy(), atol=1e-5)
    np.testing.assert_allclose(v, value.numpy(), atol=1e-5)
    assert np.all(p[~legal] == 0) and np.allclose(p.sum(1), 1)
    # the compiled first layer (a sum of weight rows at the set bits) equals the dense product
    w, b = net.first_layer
    pre = np.zeros((40, w.shape[1]), np.float32)
    G.first_layer(rows, 40, w, b, pre)
    dense = ((rows[:, :, None] >> np.arange(28)) & 1).reshape(40, 700).astype(np.float32) @ w + b
    np.testing.assert_allclose(pre, dense, atol=1e-4)
    p2, v2 = net.forward_first(pre, roles, legal)
    np.testing.assert_allclose(p2, p, atol=1e-5)
    np.testing.assert_allclose(v2, v, atol=1e-5)


def test_numpy_network_refuses_weights_that_do_not_fit():
    cfg = PVConfig(num_roles=1, trunk=(8,), head=(4,))
    params = {k: v.numpy() for k, v in PolicyValueNet(cfg).state_dict().items()}
    with pytest.raises(ValueError, match="missing"):
        NumpyPolicyValueNet({k: v for k, v in params.items() if "value_heads" not in k}, cfg.to_dict())
    params["trunk.0.weight"] = params["trunk.0.weight"][:, :10]
    with pytest.raises(ValueError, match="trunk.0.weight"):
        NumpyPolicyValueNet(params, cfg.to_dict())
    net = NumpyPolicyValueNet({k: v.numpy() for k, v in PolicyValueNet(cfg).state_dict().items()}, cfg.to_dict())
    with pytest.raises(ValueError, match="roles"):
        net.forward(np.zeros((1, 25), np.int64), np.array([2]), np.ones((1, NUM_ACTIONS), bool))
    with pytest.raises(ValueError, match="legal"):
        net.forward(np.zeros((1, 25), np.int64), np.array([0]), np.zeros((1, NUM_ACTIONS), bool))


@pytest.mark.parametrize("players", [3, 4])
def test_search_is_a_function_of_the_information_set_and_the_seed(players):
    net, _ = guided.numpy_model("default", players)
    for seed in range(2):
        info = _decision(seed + 20, players)
        legal = info.legal_actions
        v1, q1 = guided.search(info, legal, net, 300, np.random.default_rng(seed), batch=8)
        v2, q2 = guided.search(info, legal, net, 300, np.random.default_rng(seed), batch=8)
        assert np.array_equal(v1, v2) and np.array_equal(q1, q2)
        assert v1.dtype == np.int64 and v1.sum() == 300 and set(np.flatnonzero(v1)) <= set(legal)
        assert np.all(np.abs(q1) <= 1) and np.all(q1[v1 == 0] == 0)
        # no leak: another deal of the hidden cards, the same information set, the same search
        rng = np.random.default_rng(5)
        for _ in range(2):
            other = InfoSet(info.world_state(info.sample_hands(rng)), info.seat)
            assert other.known_masks == info.known_masks
            v3, q3 = guided.search(other, legal, net, 300, np.random.default_rng(seed), batch=8)
            assert np.array_equal(v1, v3) and np.array_equal(q1, q3)


def test_with_network_searches_with_the_network_it_is_given():
    """``GuidedAgent.with_network``: the shipped network handed over searches as
    ``guided:default`` does (same visits), a network of other weights searches otherwise, and a
    variant other than 3 or 4 is refused."""
    net, _ = guided.numpy_model("default", 3)
    info = _decision(21, 3)
    given = guided.GuidedAgent.with_network(net, 3, iterations=200, batch=8)
    shipped = guided.GuidedAgent(iterations=200, batch=8)
    v1, _ = given.search(info, info.legal_actions, np.random.default_rng(1))
    assert np.array_equal(v1, shipped.search(info, info.legal_actions, np.random.default_rng(1))[0])
    other = NumpyPolicyValueNet({k: np.zeros_like(v) for k, v in net.params.items()}, net.net)
    v2, _ = guided.GuidedAgent.with_network(other, 3, iterations=200, batch=8).search(
        info, info.legal_actions, np.random.default_rng(1))
    assert not np.array_equal(v1, v2)
    with pytest.raises(ValueError, match="num_players must be 3 or 4"):
        guided.GuidedAgent.with_network(net, 5)


@pytest.mark.parametrize("batch,lam", [(1, 0.0), (16, 0.5), (64, 1.0)])
def test_the_search_finds_the_dominant_move(batch, lam):
    """With 2 tricks left and one action at least 10 points better in every world (exact
    solver), the search plays it, whatever the batch and the rollout weight. 2,000 descents:
    at ``batch=64`` a search of 400 is only 7 rounds, too few for the virtual losses of a
    round to wash out where the network's prior is split (46/54 at the first position)."""
    agent = make_agent(f"guided:default,iterations=2000,batch={batch},lam={lam}")
    positions = _dominant_positions()[:6]
    assert positions
    for info, best, _ in positions:
        assert agent.act(info, info.legal_actions, np.random.default_rng(3)) == best


@pytest.mark.parametrize("players", [3, 4])
def test_agent_plays_whole_deals_legally(players):
    _play_legally(make_agent("guided:default,iterations=40,batch=8"), players)


def _play_legally(agent, players):
    """One whole deal (seeded by ``players``) with ``agent`` deciding everywhere; every action legal."""
    rng = np.random.default_rng(players)
    st = State.random(rng, 0, players)
    while not st.done:
        legal = st.legal_actions()
        a = agent.act(InfoSet(st, st.deciding_seat), legal, rng)
        assert a in legal
        st.apply(a)


def test_the_shipped_weights_equal_the_checkpoints_they_were_exported_from():
    """``guided:default`` searches with ``policy:default``'s network (``agents/weights/policy_{3,4}p.npz``),
    exported from the committed expert-iteration checkpoints of ``policy.DEFAULT_SOURCES``; NumPy
    gives torch's outputs."""
    from pathlib import Path

    from twilight_env.agents import policy

    root = Path(__file__).resolve().parents[2]
    rng = np.random.default_rng(1)
    for n in (3, 4):
        assert guided.default_weights(n) == policy.default_weights(n)
        npz, npl = guided.numpy_model("default", n)
        model, _ = load_model(root / policy.DEFAULT_SOURCES[n], n)
        rows, roles = _rows(rng, 16), rng.integers(0, 4 if n == 3 else 1, 16)
        legal = rng.random((16, NUM_ACTIONS)) < 0.4
        legal[:, 0] = True
        with torch.no_grad():
            logits, value = model(torch.from_numpy(rows), torch.from_numpy(roles), torch.from_numpy(legal))
        p, v = npz.forward(rows, roles, legal)
        assert npl == n
        np.testing.assert_allclose(p, torch.softmax(logits, 1).numpy(), atol=1e-5)
        np.testing.assert_allclose(v, value.numpy(), atol=1e-5)


def test_npz_weights_round_trip_and_bad_files_are_named(tmp_path):
    cfg = PVConfig(num_roles=4, trunk=(16,), head=(8,))
    params = {k: v.numpy() for k, v in PolicyValueNet(cfg).state_dict().items()}
    save_pv_npz(tmp_path / "w.npz", params, cfg.to_dict(), 3)
    net, npl = load_pv_npz(tmp_path / "w.npz")
    assert npl == 3 and net.num_roles == 4 and net.tricks == 7  # the full deck by default
    save_pv_npz(tmp_path / "w2.npz", params, cfg.to_dict(), 3, tricks=2)  # the deck it was trained on
    assert load_pv_npz(tmp_path / "w2.npz")[0].tricks == 2
    with pytest.raises(ValueError, match="must be an int 1..7 .*got 8"):
        save_pv_npz(tmp_path / "w8.npz", params, cfg.to_dict(), 3, tricks=8)
    from twilight_env.agents.nn.npz_file import read_weights_npz, write_weights_npz
    meta, raw = read_weights_npz(tmp_path / "w.npz")
    write_weights_npz(tmp_path / "t0.npz", {**meta, "tricks": 0}, raw)
    with pytest.raises(ValueError, match="t0.npz.*tricks .*must be an int 1..7, or absent for the full deck; got 0"):
        load_pv_npz(tmp_path / "t0.npz")
    with pytest.raises(ValueError, match="4-player"):
        load_pv_npz(tmp_path / "w.npz", 4)
    (tmp_path / "bad.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="bad.npz"):
        load_pv_npz(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="does not exist"):
        load_pv_npz(tmp_path / "none.npz")
    agent = make_agent(f"guided:{tmp_path / 'w.npz'},iterations=10")
    info = _decision(3, 3)
    assert agent.act(info, info.legal_actions, np.random.default_rng(0)) in info.legal_actions


def test_the_checkpoint_path_loads_now_and_plays_its_own_number_of_players(tmp_path):
    path = default_weights(3)
    agent = make_agent(f"guided:{path},iterations=20")
    assert agent.name == f"guided:{path},iterations=20"
    info = _decision(30, 4)
    with pytest.raises(ValueError, match="4-player"):
        agent.act(info, info.legal_actions, np.random.default_rng(0))
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="guided option path"):
        make_agent(f"guided:{bad}")


@pytest.mark.parametrize("spec,match", [("guided:iterations=0", "iterations"), ("guided:batch=0", "batch"),
                                        ("guided:c=-1", "c"), ("guided:lam=1.5", "lam"), ("guided:fpu=nan", "fpu"),
                                        ("guided:wrong=1", "wrong"), ("guided:device=tpu", "'cpu' or 'cuda'")])
def test_bad_options_are_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        make_agent(spec)


def test_a_forced_action_is_played_without_search():
    agent = make_agent("guided:default")
    st = State.random(np.random.default_rng(0), 0, 4)
    info = InfoSet(st, st.deciding_seat)
    assert agent.act(info, (info.legal_actions[0],), np.random.default_rng(0)) == info.legal_actions[0]
    with pytest.raises(ValueError, match="legal action"):
        agent.act(info, (), np.random.default_rng(0))


def test_default_weights_exist_for_both_variants():
    for n in (3, 4):
        model, npl = load_model(default_weights(n), n)
        assert npl == n


def test_the_variant_defaults_reach_the_search(monkeypatch):
    """Without ``iterations`` and ``lam`` the search runs each variant's measured settings."""
    seen = []

    def spy(infoset, legal, net, iterations, rng, **kw):
        seen.append((infoset.num_players, iterations, kw["lam"]))
        return np.ones(NUM_ACTIONS, np.int64), np.zeros(NUM_ACTIONS)

    monkeypatch.setattr(guided, "search", spy)
    agent = make_agent("guided:default")
    assert agent.name == "guided:default"
    for n in (3, 4):
        info = _decision(40, n)
        agent.act(info, info.legal_actions, np.random.default_rng(0))
    assert seen == [(n, guided.VARIANT_DEFAULTS[n]["iterations"], guided.VARIANT_DEFAULTS[n]["lam"]) for n in (3, 4)]
    make_agent("guided:iterations=7,lam=0.25").act(info, info.legal_actions, np.random.default_rng(0))
    assert seen[-1] == (4, 7, 0.25)


@pytest.mark.parametrize("players", [3, 4])
def test_the_torch_forward_on_a_device_equals_the_numpy_forward(players):
    """``device=cuda`` evaluates the leaves with :class:`TorchForward` (here on the CPU): the
    same probabilities and values as the NumPy forward pass of the same shipped weights."""
    from twilight_env.agents.exit import TorchForward

    net, _ = guided.numpy_model("default", players)
    rng = np.random.default_rng(players)
    rows = _rows(rng, 48)
    roles = rng.integers(0, net.num_roles, 48)
    legal = rng.random((48, NUM_ACTIONS)) < 0.3
    legal[:, 3] = True
    p, v = net.forward(rows, roles, legal)
    q, w = TorchForward.from_numpy(net, "cpu").forward(rows, roles, legal)
    assert q.dtype == w.dtype == np.float32 and q.shape == (48, NUM_ACTIONS) and w.shape == (48,)
    np.testing.assert_allclose(q, p, atol=1e-5)
    np.testing.assert_allclose(w, v, atol=1e-5)
    # a search with it visits like the NumPy one (identical draws; ties of near-equal floats aside)
    info = _decision(30, players)
    a, _ = guided.search(info, info.legal_actions, net, 200, np.random.default_rng(1), batch=16)
    b, _ = guided.search(info, info.legal_actions, TorchForward.from_numpy(net, "cpu"), 200,
                         np.random.default_rng(1), batch=16)
    assert a.sum() == b.sum() == 200 and np.abs(a - b).sum() <= 8


def test_device_cuda_without_a_gpu_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is usable here")
    with pytest.raises(ValueError, match="device='cuda'.*no usable CUDA device.*use device=cpu"):
        make_agent("guided:default,device=cuda")
    assert make_agent("guided:default,device=cpu").name == "guided:default"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a usable CUDA device")
@pytest.mark.parametrize("players", [3, 4])
def test_guided_on_cuda_plays_whole_deals_and_searches_as_on_the_cpu(players):
    agent = make_agent("guided:default,iterations=200,batch=16,device=cuda")
    assert agent.name == "guided:default,iterations=200,batch=16,device=cuda"
    net = agent.net_for(players)
    assert next(net.model.parameters()).device.type == "cuda"
    info = _decision(30, players)
    a, _ = guided.search(info, info.legal_actions, guided.numpy_model("default", players)[0], 200,
                         np.random.default_rng(1), batch=16)
    b, _ = guided.search(info, info.legal_actions, net, 200, np.random.default_rng(1), batch=16)
    assert a.sum() == b.sum() == 200 and np.abs(a - b).sum() <= 8
    _play_legally(agent, players)
