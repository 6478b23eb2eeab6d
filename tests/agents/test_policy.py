"""``policy``: the expert-iteration network alone on a NumPy forward pass. It plays what
``exit`` plays on the same checkpoint, reads only the deciding seat's information set
(R2.5, R7.1), plays only legal actions (R3.2, R3.5), its shipped weights equal the
checkpoints they were exported from, and bad paths are refused. That it plays without torch
is tested in ``test_layering.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from twilight_env.agents import policy
from twilight_env.agents.base import make_agent, play_deal
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet
from positions import Spec, positions

ROOT = Path(__file__).resolve().parents[2]


def _decisions(num_players, seed, n):
    """``n`` (state, information set) pairs at random points of random deals, the deciding seat's view."""
    return [(st, InfoSet(st, st.deciding_seat)) for st in positions(Spec(num_players, seed, n, steps=(0, 24)))]


@pytest.mark.parametrize("players", [3, 4])
def test_plays_whole_deals_with_legal_actions_only(players):
    agent = make_agent("policy:default")
    assert agent.name == "policy"
    for seed in range(3):
        st = State.random(np.random.default_rng(seed), seed % 4, players)
        play_deal(st, [agent] * 4, np.random.default_rng(0))  # play_deal refuses an illegal action
        assert st.done


@pytest.mark.parametrize("players", [3, 4])
def test_it_plays_what_exit_plays_on_the_same_checkpoint(players):
    """The decision rule is ``exit``'s (greedy, lowest id on ties) on a forward pass equal to
    torch's within float32 tolerance: on 200 decisions the two agents agree except where
    the top two probabilities are within 1e-5."""
    pytest.importorskip("torch")
    src = ROOT / policy.DEFAULT_SOURCES[players]
    ours, theirs = make_agent(f"policy:{src}"), make_agent(f"exit:{src}")
    net = ours.net_for(players)
    differ = 0
    for _, info in _decisions(players, 7, 200):
        a, b = ours.act(info, info.legal_actions), theirs.act(info, info.legal_actions, np.random.default_rng(0))
        if a != b:
            differ += 1
            from twilight_env.agents.nn.features import infoset_row, role_of
            legal = np.zeros((1, 31), dtype=bool)
            legal[0, list(info.legal_actions)] = True
            p, _ = net.forward(np.array([infoset_row(info)]), np.array([role_of(players, info.acting_seat)]), legal)
            assert abs(p[0, a] - p[0, b]) < 1e-5, (a, b, p[0, a], p[0, b])
    assert differ <= 2


@pytest.mark.parametrize("players", [3, 4])
def test_act_batch_equals_act_one_by_one(players):
    agent = make_agent("policy")
    infos = [info for _, info in _decisions(players, 3, 40)]
    batch = agent.act_batch(infos, [i.legal_actions for i in infos])
    assert batch == [agent.act(i, i.legal_actions) for i in infos]
    assert all(a in i.legal_actions for a, i in zip(batch, infos))


@pytest.mark.parametrize("players", [3, 4])
def test_r2_5_hidden_cards_never_change_the_decision(players):
    """R2.5, R7.1: re-dealing the cards the deciding seat cannot see leaves the network's
    input, and so the action, unchanged; the decision does depend on what the seat sees."""
    agent = make_agent("policy")
    rng = np.random.default_rng(5)
    moved, acted = 0, set()
    for st, info in _decisions(players, 11, 30):
        a = agent.act(info, info.legal_actions)
        acted.add(a)
        for _ in range(3):
            other = info.sample_state(rng)
            moved += other.hands != st.hands
            info2 = InfoSet(other, info.seat)
            assert agent.act(info2, info2.legal_actions) == a
    assert moved >= 40  # the hidden cards really moved
    assert len(acted) >= 5  # and the action is not a constant


def test_the_shipped_weights_equal_the_checkpoints_they_were_exported_from():
    """``policy:default`` reads ``agents/weights/policy_3p.npz`` and ``policy_4p.npz``, exported from
    :data:`~twilight_env.agents.policy.DEFAULT_SOURCES`; the NumPy outputs equal torch's."""
    torch = pytest.importorskip("torch")
    from twilight_env.agents.exit import load_model

    rng = np.random.default_rng(2)
    for n in (3, 4):
        net, npl = policy.load_network("default", n)
        model, _ = load_model(ROOT / policy.DEFAULT_SOURCES[n], n)
        rows = ((rng.random((16, 25, 28)) < 0.1) * (1 << np.arange(28))).sum(axis=2).astype(np.int64)
        roles = rng.integers(0, 4 if n == 3 else 1, 16)
        legal = rng.random((16, 31)) < 0.4
        legal[:, 0] = True
        with torch.no_grad():
            logits, value = model(torch.from_numpy(rows), torch.from_numpy(roles), torch.from_numpy(legal))
        p, v = net.forward(rows, roles, legal)
        assert npl == n
        np.testing.assert_allclose(p, torch.softmax(logits, 1).numpy(), atol=1e-5)
        np.testing.assert_allclose(v, value.numpy(), atol=1e-5)


def test_a_weights_file_plays_only_its_own_number_of_players():
    agent = make_agent(f"policy:{policy.default_weights(3)}")
    assert agent.name == f"policy:{policy.default_weights(3)}"
    (_, info), = _decisions(4, 1, 1)
    with pytest.raises(ValueError, match="3 players; they cannot play a 4-player deal"):
        agent.act(info, info.legal_actions)


@pytest.mark.parametrize("content,match", [(None, "does not exist|No such file|not found|missing"),
                                           (b"not a weights file", "policy option path")])
def test_bad_weights_files_are_named_when_the_agent_is_built(tmp_path, content, match):
    path = tmp_path / "w.npz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        make_agent(f"policy:{path}")


def test_bad_options_and_decisions_are_refused():
    with pytest.raises(ValueError, match="unknown option|wrong"):
        make_agent("policy:wrong=1")
    with pytest.raises(ValueError, match="path must be"):
        policy.PolicyAgent(path="")
    with pytest.raises(ValueError, match="3 and 4 players"):
        policy.default_weights(5)
    (_, info), = _decisions(3, 2, 1)
    with pytest.raises(ValueError, match="no legal action"):
        make_agent("policy").act(info, ())


@pytest.mark.parametrize("players", [3, 4])
def test_the_single_decision_pass_equals_the_batch_pass(players):
    """``forward_one`` (first layer as a sum of the weight rows at the set bits) equals ``forward``."""
    net, _ = policy.load_network("default", players)
    rng = np.random.default_rng(4)
    rows = ((rng.random((32, 25, 28)) < 0.1) * (1 << np.arange(28))).sum(axis=2).astype(np.int64)
    roles = rng.integers(0, net.num_roles, 32)
    legal = rng.random((32, 31)) < 0.4
    legal[:, 3] = True
    p, v = net.forward(rows, roles, legal)
    for k in range(32):
        p1, v1 = net.forward_one(rows[k].tolist(), int(roles[k]), legal[k])
        np.testing.assert_allclose(p1, p[k], atol=1e-6)
        assert abs(v1 - v[k]) < 1e-6
    with pytest.raises(ValueError, match="roles must be"):
        net.forward_one(rows[0].tolist(), net.num_roles, legal[0])
    with pytest.raises(ValueError, match="legal action"):
        net.forward_one(rows[0].tolist(), 0, np.zeros(31, dtype=bool))
