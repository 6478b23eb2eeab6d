"""The ``neural`` agent: always legal, batched, clear errors for bad checkpoints."""

import os

import numpy as np
import pytest
import torch

from twilight_env.agents.base import make_agent, play_deal
from twilight_env.agents.neural import NeuralAgent, default_weights
from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents.nn.checkpoint import load_checkpoint

from positions import Spec, positions


@pytest.mark.parametrize("num_players", [4, 3])
def test_never_picks_an_illegal_action_fuzzed(random_ckpt, num_players):
    """Fuzz: random states (random play to a random point), several random networks;
    every choice is one of the legal actions (R3.2, R3.5) and the best legal one."""
    rng = np.random.default_rng(num_players)
    for seed in range(3):
        agent = make_agent(f"neural:path={random_ckpt(num_players, seed)}")
        infos, legals = [], []
        for st in positions(Spec(num_players, 100 * num_players + seed, 60, steps=(0, 50))):
            info = InfoSet(st, st.deciding_seat)
            a = agent.act(info, info.legal_actions, rng)
            assert a in info.legal_actions
            infos.append(info)
            legals.append(info.legal_actions)
        batch = agent.act_batch(infos, legals)
        qs = agent.q_values(infos, legals)
        for a, q, legal in zip(batch, qs, legals):
            assert a in legal and q[legal.index(a)] == max(q)
        assert batch == [agent.act(i, l, rng) for i, l in zip(infos, legals)]


@pytest.mark.parametrize("num_players", [4, 3])
def test_plays_full_deals(random_ckpt, num_players):
    """play_deal raises on any illegal move; 20 deals finish (3p: the solo also plays the new moon, R7.3)."""
    agent = make_agent(f"neural:{random_ckpt(num_players)}")
    rnd = make_agent("random")
    rng = np.random.default_rng(0)
    for _ in range(10):
        for seats in ([agent, rnd, agent, rnd], [rnd, agent, rnd, agent]):
            st = play_deal(State.random(rng, 0, num_players), seats, rng)
            assert st.done


def test_missing_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        make_agent(f"neural:path={tmp_path / 'nope.pt'}")


def test_corrupt_checkpoint(tmp_path, random_ckpt):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"this is not a checkpoint" * 10)
    with pytest.raises(ValueError, match="corrupt"):
        make_agent(f"neural:path={bad}")
    # a truncated real checkpoint
    good = random_ckpt(4)
    data = open(good, "rb").read()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupt"):
        NeuralAgent(str(cut))


def test_not_a_dmc_checkpoint(tmp_path):
    p = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, p)
    with pytest.raises(ValueError, match="not a twilight-dmc checkpoint"):
        NeuralAgent(str(p))


def test_weights_that_do_not_fit(tmp_path, random_ckpt):
    ck = torch.load(random_ckpt(4), weights_only=True)
    ck["model"]["trunk.0.weight"] = torch.zeros(3, 3)
    p = tmp_path / "mismatch.pt"
    torch.save(ck, p)
    with pytest.raises(ValueError, match="do not fit"):
        NeuralAgent(str(p))


def test_wrong_variant(random_ckpt):
    agent = NeuralAgent(random_ckpt(3))
    rng = np.random.default_rng(0)
    st = State.random(rng, 0, 4)
    info = InfoSet(st, st.deciding_seat)
    with pytest.raises(ValueError, match="3 players"):
        agent.act(info, info.legal_actions, rng)
    with pytest.raises(ValueError, match="trained for 3 players"):
        load_checkpoint(random_ckpt(3), num_players=4)


@pytest.mark.parametrize("num_players", [4, 3])
def test_shipped_weights_load_by_name(num_players):
    path = default_weights(num_players)
    assert path.is_file(), f"shipped weights {path} missing"
    assert os.path.getsize(path) <= 5 * 1024 * 1024
    ck = load_checkpoint(path, num_players)
    assert "optimizer" not in ck
    agent = make_agent("neural:default")
    rng = np.random.default_rng(1)
    st = play_deal(State.random(rng, 0, num_players), [agent] * 4, rng)
    assert st.done
