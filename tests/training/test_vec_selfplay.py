"""Self-play on the batch engine (twilight_env.training.vec_selfplay): rows, choices and samples.

The batch rows' parity with ``features.state_row`` is ``tests/rules/test_parity.py``'s."""

import numpy as np
import pytest
import torch

from twilight_env.agents.nn.network import NetConfig, QNetwork, score_decisions
from twilight_env.training.selfplay import choose_greedy
from twilight_env.training.vec_selfplay import VecSelfPlay, greedy_actions, vector_rows
from twilight_env.rules.engine import NEW_MOON
from twilight_env.envs.vector import VectorEngine


def test_vector_rows_needs_numpy_backend():
    pytest.importorskip("torch")
    eng = VectorEngine(2, 4, backend="torch")
    with pytest.raises(ValueError, match="numpy backend"):
        vector_rows(eng)


@pytest.mark.parametrize("num_roles", [1, 4])
def test_greedy_actions_match_scalar_choice(num_roles):
    torch.manual_seed(0)
    model = QNetwork(NetConfig(num_roles=num_roles)).eval()
    rng = np.random.default_rng(1)
    eng = VectorEngine(64, 4 if num_roles == 1 else 3)
    eng.reset(rng=rng)
    for _ in range(7):
        eng.apply(eng.random_actions(rng))
    bits = eng.legal_bits()
    rows = vector_rows(eng)
    roles = eng.acting_seat if num_roles == 4 else np.zeros(64, dtype=np.int64)
    got = greedy_actions(model, rows, roles, bits, "cpu")
    legals = [tuple(int(a) for a in np.flatnonzero((b >> np.arange(31)) & 1)) for b in bits]
    qs = score_decisions(model, rows.tolist(), roles.tolist(), legals, "cpu")
    assert got.tolist() == [choose_greedy(q, legal) for q, legal in zip(qs, legals)]


@pytest.mark.parametrize("num_players", [4, 3])
def test_collect_samples_are_consistent(num_players):
    torch.manual_seed(0)
    model = QNetwork(NetConfig(num_roles=1 if num_players == 4 else 4)).eval()
    sp = VecSelfPlay(num_players, model, np.random.default_rng(0), num_games=32, pool_prob=0.0)
    batch, stats = sp.collect(6000)
    assert stats.decisions >= 6000 and stats.decisions % 32 == 0
    assert stats.episodes == len(stats.side0_points) > 0
    assert len(batch) == stats.recorded > 0
    pts = batch.targets * 360
    assert np.allclose(pts, np.round(pts), atol=1e-3) and np.abs(pts).max() <= 360
    rows = batch.rows
    acting_hand, phase = rows[:, 2], (rows[:, 23] >> 11) & 1
    card = batch.actions < 28
    # a card comes from the acting hand; a request only in the choose phase (R3.2)
    assert np.all((acting_hand[card] >> batch.actions[card]) & 1 == 1)
    assert np.all(phase[~card] == 0)
    if num_players == 3:
        viewer = np.argmax(((rows[:, 24][:, None] >> np.arange(4)) & 1), axis=1)
        rel_acting = np.argmax(((rows[:, 23][:, None] >> np.arange(16, 20)) & 1), axis=1)
        assert np.all(batch.roles == (viewer + rel_acting) % 4)
        assert not np.any(viewer == NEW_MOON)   # the solo decides for the new moon (R7.3)
    else:
        assert np.all(batch.roles == 0)
    # every sample's side gets +-(side 0 result): both signs occur, as both sides are recorded
    assert (pts > 0).any() and (pts < 0).any()


def test_collect_is_deterministic_and_carries_over():
    torch.manual_seed(0)
    model = QNetwork(NetConfig(num_roles=1)).eval()
    out = []
    for _ in range(2):
        sp = VecSelfPlay(4, model, np.random.default_rng(5), num_games=16, pool_prob=0.0)
        b1, _ = sp.collect(2000)
        b2, _ = sp.collect(2000)
        out.append((b1, b2))
    for x, y in zip(out[0], out[1]):
        assert np.array_equal(x.rows, y.rows) and np.array_equal(x.actions, y.actions)
        assert np.array_equal(x.targets, y.targets)


def test_pool_decisions_are_not_recorded():
    torch.manual_seed(0)
    model = QNetwork(NetConfig(num_roles=1)).eval()
    sp = VecSelfPlay(4, model, np.random.default_rng(2), num_games=32, pool_prob=1.0, snapshot_every=10**9)
    sp.add_snapshot()
    sp._new_deals(np.arange(32))   # every deal now plays a snapshot on one side
    assert np.all(sp.pool_side >= 0) and np.all(sp.pool_net == 0)
    side_of_episode = dict(zip(sp.episode.tolist(), sp.pool_side.tolist()))
    batch, stats = sp.collect(1200)   # fewer than one deal's decisions: none finished yet
    recs = sp._records
    seats = np.concatenate([r[4] for r in recs])
    eps = np.concatenate([r[0] for r in recs])
    assert len(seats) > 100
    assert all((s & 1) != side_of_episode[e] for s, e in zip(seats.tolist(), eps.tolist()))


@pytest.mark.parametrize("num_roles", [1, 4])
def test_split_head_equals_concatenated_head(num_roles):
    """QNetwork evaluates each head's first layer in a state part and an action part; the
    result equals the head applied to [trunk output, action features] pair by pair."""
    torch.manual_seed(0)
    m = QNetwork(NetConfig(num_roles=num_roles)).eval()
    rows = torch.randint(0, 1 << 28, (40, 25))
    roles = torch.randint(0, num_roles, (40,))
    owner = torch.randint(0, 40, (200,))
    acts = torch.randint(0, 31, (200,))
    with torch.no_grad():
        h = m.trunk(m.expand(rows))
        for o, a in ((owner, acts), (None, acts[:40])):
            q = m(rows, roles, a, o)
            own = torch.arange(40) if o is None else o
            x = torch.cat([h[own], m.action_table[a]], 1)
            ref = torch.stack([m.heads[int(roles[i])](x[k:k + 1]).squeeze() for k, i in enumerate(own.tolist())])
            assert torch.allclose(q, ref, atol=1e-5)
