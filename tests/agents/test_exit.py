"""The expert-iteration network and agents (agents/exit.py): information-set inputs only,
masks, checkpoints, and the ``exit`` / ``exit-search`` agents playing by name."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from twilight_env.agents.base import make_agent, parse_spec, play_deal  # noqa: E402
from twilight_env.agents.exit import (ENCODERS, PolicyValueNet, PVConfig, default_weights, legal_mask,  # noqa: E402
                                      load_exit_checkpoint, new_checkpoint, policy_value, resolve_backend, root_search)
from twilight_env.agents.nn.checkpoint import save_checkpoint  # noqa: E402
from twilight_env.agents.nn.features import infoset_row, num_roles, role_of  # noqa: E402
from twilight_env.rules.engine import NUM_ACTIONS, State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from positions import Spec, positions  # noqa: E402

HAVE_FAST = resolve_backend("auto") == "numba"


def small_net(num_players, seed=0, encoder="mlp"):
    torch.manual_seed(seed)
    model = PolicyValueNet(PVConfig(num_roles=num_roles(num_players), trunk=(32,), head=(16,), encoder=encoder,
                                    card_width=8)).eval()
    # a random net's value head is near 0; scale it so values spread over [-1, 1]
    with torch.no_grad():
        for head in model.value_heads:
            head[-1].weight.mul_(20)
    return model


def write_net(path, num_players, seed=0):
    save_checkpoint(new_checkpoint(small_net(num_players, seed), num_players), path)
    return str(path)


def decisions(num_players, seed, n):
    """``n`` information sets of random deals at random points (deciding seat's view)."""
    return [(st, InfoSet(st, st.deciding_seat)) for st in positions(Spec(num_players, seed, n, steps=(0, 20)))]


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("num_players", [3, 4])
def test_r2_5_net_never_sees_hidden_cards(num_players, encoder):
    """R2.5, R7.1: redealing the cards the deciding seat cannot see gives the same policy and value."""
    model = small_net(num_players, encoder=encoder)
    rng = np.random.default_rng(3)
    changed = 0
    for st, info in decisions(num_players, 11, 12):
        p0, v0 = policy_value(model, [info], [info.legal_actions])
        for _ in range(3):
            other = info.sample_state(rng)
            changed += other.hands != st.hands
            info2 = InfoSet(other, info.seat)
            p1, v1 = policy_value(model, [info2], [info2.legal_actions])
            assert np.array_equal(p0, p1) and np.array_equal(v0, v1)
    assert changed >= 20  # the hidden cards really moved


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("num_players", [3, 4])
def test_net_reads_what_the_seat_sees(num_players, encoder):
    """The equality above can fail: a different own hand gives a different value."""
    model = small_net(num_players, encoder=encoder)
    (_, a), (_, b) = decisions(num_players, 5, 2)
    while a.known_masks[a.seat] == b.known_masks[b.seat]:
        (_, b), = decisions(num_players, 6, 1)
    _, va = policy_value(model, [a], [a.legal_actions])
    _, vb = policy_value(model, [b], [b.legal_actions])
    assert va[0] != vb[0]


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("num_players", [3, 4])
def test_r3_2_illegal_actions_get_zero_probability(num_players, encoder):
    model = small_net(num_players, encoder=encoder)
    infos = [i for _, i in decisions(num_players, 2, 20)]
    probs, values = policy_value(model, infos, [i.legal_actions for i in infos])
    assert probs.shape == (20, NUM_ACTIONS) and values.shape == (20,)
    for p, info in zip(probs, infos):
        illegal = [a for a in range(NUM_ACTIONS) if a not in info.legal_actions]
        assert np.all(p[illegal] == 0.0)
        assert np.all(p[list(info.legal_actions)] > 0)
        assert p.sum() == pytest.approx(1.0, abs=1e-5)
    assert np.all(np.abs(values) <= 1.0) and np.ptp(values) > 0


def test_policy_value_refuses_an_empty_legal_set():
    (_, info), = decisions(4, 1, 1)
    with pytest.raises(ValueError, match="no legal action"):
        policy_value(small_net(4), [info], [()])


def test_spec_path_shorthand():
    assert parse_spec("exit:/a/b.pt") == ("exit", {"path": "/a/b.pt"})
    assert parse_spec("exit-search:/a/b.pt,iterations=5,w=2.5") == \
        ("exit-search", {"path": "/a/b.pt", "iterations": 5, "w": 2.5})


def _specs(path):
    specs = [f"exit:{path}", f"exit-search:{path},iterations=12,backend=python"]
    if HAVE_FAST:
        specs.append(f"exit-search:{path},iterations=12,backend=numba")
    return specs


@pytest.mark.parametrize("num_players", [3, 4])
def test_agents_load_by_name_and_play_full_deals(tmp_path, num_players):
    path = write_net(tmp_path / "net.pt", num_players)
    for spec in _specs(path):
        agent = make_agent(spec)
        for seed in range(2):
            rng = np.random.default_rng(seed)
            st = State.random(rng, seed, num_players)
            play_deal(st, [agent] * 4, rng)  # play_deal refuses any illegal action
            assert st.done and len(st.history) == 28


def test_exit_agent_plays_the_most_probable_legal_action(tmp_path):
    path = write_net(tmp_path / "net.pt", 3)
    agent = make_agent(f"exit:{path}")
    model = small_net(3)
    infos = [i for _, i in decisions(3, 9, 15)]
    legals = [i.legal_actions for i in infos]
    probs, _ = policy_value(model, infos, legals)
    expected = [max(sorted(la), key=lambda a, p=p: (p[a], -a)) for p, la in zip(probs, legals)]
    assert agent.act_batch(infos, legals) == expected
    assert [agent.act(i, la, np.random.default_rng(0)) for i, la in zip(infos, legals)] == expected
    assert len(set(expected)) > 1


@pytest.mark.parametrize("backend", ["python", pytest.param("numba", marks=pytest.mark.skipif(
    not HAVE_FAST, reason="numba / twilight_env.agents.fast_ismcts not available"))])
def test_root_prior_steers_the_search(backend):
    """A large progressive-bias weight on one action makes it the most visited; w=0 ignores the prior."""
    found = 0
    for _, info in decisions(3, 21, 8):
        legal = info.legal_actions
        if len(legal) < 3:
            continue
        plain, _ = root_search(info, 120, 0.7, np.random.default_rng(1), backend=backend)
        least = min(legal, key=lambda a: (plain[a], a))
        prior = np.zeros(NUM_ACTIONS)
        prior[least] = 1.0
        off, _ = root_search(info, 120, 0.7, np.random.default_rng(1), root_prior=prior, prior_weight=0.0,
                             backend=backend)
        on, values = root_search(info, 120, 0.7, np.random.default_rng(1), root_prior=prior, prior_weight=1000.0,
                                 backend=backend)
        assert np.array_equal(off, plain)
        assert on.sum() == 120 and on[least] == on.max() > plain[least]
        assert np.all(np.abs(values) <= 1.0)
        found += 1
    assert found >= 2


def test_exit_search_plays_the_most_visited_action(tmp_path):
    path = write_net(tmp_path / "net.pt", 4)
    agent = make_agent(f"exit-search:{path},iterations=40,backend=python")
    for _, info in decisions(4, 4, 6):
        legal = info.legal_actions
        if len(legal) < 2:
            continue
        visits, _ = agent.search(info, legal, np.random.default_rng(7))
        assert visits.sum() == 40 and all(visits[a] == 0 for a in range(NUM_ACTIONS) if a not in legal)
        best = max(sorted(legal), key=lambda a: (visits[a], -a))
        assert agent.act(info, legal, np.random.default_rng(7)) == best


def test_bad_options_are_refused(tmp_path):
    path = write_net(tmp_path / "net.pt", 4)
    with pytest.raises(ValueError, match="backend must be one of"):
        make_agent(f"exit-search:{path},backend=gpu")
    with pytest.raises(ValueError, match="iterations must be"):
        make_agent(f"exit-search:{path},iterations=0")
    with pytest.raises(ValueError, match="w must be"):
        make_agent(f"exit-search:{path},w=-1")
    with pytest.raises(ValueError, match="has no option"):
        make_agent(f"exit:{path},iterations=3")


def test_corrupt_and_mismatched_checkpoints_are_refused(tmp_path):
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="corrupt.pt.*corrupt, truncated"):
        make_agent(f"exit:{bad}")
    good = write_net(tmp_path / "net4.pt", 4)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(open(good, "rb").read()[:300])
    with pytest.raises(ValueError, match="truncated.pt"):
        make_agent(f"exit-search:{truncated}")
    with pytest.raises(ValueError, match="exit checkpoint not found.*missing.pt"):
        make_agent(f"exit:{tmp_path / 'missing.pt'}")
    with pytest.raises(ValueError, match="trained for 4 players, but a 3-player"):
        load_exit_checkpoint(good, 3)
    agent = make_agent(f"exit:{good}")
    st = State.random(np.random.default_rng(0), 0, 3)
    with pytest.raises(ValueError, match="trained for 4 players; it cannot play a 3-player deal"):
        play_deal(st, [agent] * 4, np.random.default_rng(0))
    from twilight_env.agents.nn.checkpoint import FORMAT as DMC, VERSION as DMC_VERSION  # a neural (DMC) checkpoint
    from twilight_env.agents.nn.network import NetConfig, QNetwork
    dmc = tmp_path / "dmc.pt"
    save_checkpoint({"format": DMC, "version": DMC_VERSION, "num_players": 4, "net": NetConfig().to_dict(),
                     "model": QNetwork(NetConfig(trunk=(8,), head=(4,))).state_dict()}, dmc)
    with pytest.raises(ValueError, match="not a twilight-exit checkpoint"):
        make_agent(f"exit:{dmc}")
    ck = load_exit_checkpoint(good)
    ck["model"] = {k: v[:1] for k, v in ck["model"].items()}
    save_checkpoint(ck, tmp_path / "shape.pt")
    with pytest.raises(ValueError, match="shape.pt.*do not fit"):
        make_agent(f"exit:{tmp_path / 'shape.pt'}")


@pytest.mark.parametrize("num_players", [3, 4])
@pytest.mark.parametrize("spec", ["exit:default", "exit-search:default,iterations=50"])
def test_shipped_weights_load_by_name_and_play(num_players, spec):
    """The shipped networks exist, are expert-iteration checkpoints of their variant, and
    both agents play whole deals with them."""
    weights = default_weights(num_players)
    assert weights.is_file(), f"shipped weights {weights} are missing"
    assert load_exit_checkpoint(weights, num_players)["num_players"] == num_players
    agent = make_agent(spec)
    st = State.random(np.random.default_rng(0), 0, num_players)
    play_deal(st, [agent] * 4, np.random.default_rng(0))
    assert st.done


def test_missing_shipped_weights_give_a_clear_error(tmp_path, monkeypatch):
    import twilight_env.agents.exit as ex

    monkeypatch.setattr(ex, "WEIGHTS_DIR", tmp_path)
    agent = make_agent("exit:default")
    st = State.random(np.random.default_rng(0), 0, 3)
    with pytest.raises(ValueError, match="policy_3p.npz.*do not exist"):
        play_deal(st, [agent] * 4, np.random.default_rng(0))


@pytest.mark.parametrize("num_players", [3, 4])
def test_exit_default_reads_the_network_of_policy_default(num_players):
    """One shipped file per network: ``exit:default`` loads ``policy:default``'s ``.npz`` with
    torch (the same weights, the subnormal ones played as 0 by both), so the two play the same
    greedy action."""
    from twilight_env.agents import policy
    from twilight_env.agents.nn.npz_file import flush_subnormal
    from twilight_env.agents.nn.numpy_pv import load_pv_npz

    assert default_weights(num_players) == policy.default_weights(num_players)
    model = make_agent("exit:default").model_for(num_players)
    net, _ = load_pv_npz(policy.default_weights(num_players), num_players)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), flush_subnormal(np.array(net.params[k])))
    ex, po = make_agent("exit:default"), make_agent("policy:default")
    rng = np.random.default_rng(3)
    for _ in range(3):
        st = State.random(rng, 0, num_players)
        while not st.done:
            info, legal = InfoSet(st, st.deciding_seat), st.legal_actions()
            a = ex.act(info, legal, rng)
            if len(legal) > 1:
                p = net.forward(np.array([infoset_row(info)]), np.array([role_of(num_players, info.acting_seat)]),
                                np.array([legal_mask(legal)]))[0][0]
                top = np.sort(p[list(legal)])[::-1]
                if top[0] - top[1] > 1e-4:  # not a near tie: torch and NumPy choose alike
                    assert a == po.act(info, legal, rng)
            st.apply(a)


def test_an_npz_of_another_format_is_refused_naming_the_file(tmp_path):
    """A DMC ``.npz`` given where an expert-iteration network is expected."""
    from twilight_env.agents import neural

    with pytest.raises(ValueError, match=r"neural_3p\.npz.*not a twilight-exit-npz weights file.*'twilight-dmc-npz'"):
        load_exit_checkpoint(neural.default_weights(3))
