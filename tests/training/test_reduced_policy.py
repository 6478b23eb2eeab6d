"""A learned policy on the reduced-deck trees (``twilight_env.training.reduced_policy``): every
node of one information set gives the same observation (nothing the seat may not know leaks
into it, R2.5, R7.1), two sets give two observations (nothing it knows is missing), a tabular
policy read back through observations round-trips, and NashConv of known policies is
OpenSpiel-consistent (the CFR+ solution near 0, the uniform policy equal to reduced_solve's).
"""

import numpy as np
import pytest

from twilight_env.rules.engine import NUM_ACTIONS
from twilight_env.training import reduced_solve as rs
from twilight_env.training.reduced_policy import (
    OBS_DIM, infoset_observations, learned_nash_conv, policy_table, representatives,
)


@pytest.fixture(scope="module", params=[3, 4], ids=["3p", "4p"])
def game(request):
    tree = rs.build_tree(1, request.param)
    return tree, rs.make_model(tree, "seats")


def _all_observations(tree, model, batch=97):
    dec = np.flatnonzero(tree.seat >= 0)
    out = {}
    for nodes, obs, mask in infoset_observations(tree, model, batch=batch, nodes=dec):
        assert obs.shape == (len(nodes), OBS_DIM) and obs.dtype == np.float32
        assert mask.shape == (len(nodes), NUM_ACTIONS) and mask.dtype == bool
        for n, o, m in zip(nodes, obs, mask):
            out[int(n)] = (o.tobytes(), m.tobytes())
    assert sorted(out) == dec.tolist()
    return out


def test_one_observation_per_information_set(game):
    tree, model = game
    obs = _all_observations(tree, model)
    by_set: dict[int, set] = {}
    for n, o in obs.items():
        by_set.setdefault(int(model.iset[n]), set()).add(o)
    assert len(by_set) == model.num_isets
    assert all(len(v) == 1 for v in by_set.values()), "two nodes of one set are told apart: a leak"
    for p in range(model.num_players):  # within one player, two sets are two observations
        mine = [next(iter(v)) for s, v in by_set.items() if model.iset_player[s] == p]
        assert len(set(mine)) == len(mine), "two sets share an observation: information is missing"
    # across players, only seats two apart in 4 players share observations (seats are relative:
    # the game is the same turned by two seats, R2.1), so a shared vector joins one set of
    # player p with one of player p + 2
    owners: dict[bytes, list] = {}
    for s, v in by_set.items():
        owners.setdefault(next(iter(v)), []).append(int(model.iset_player[s]))
    for who in owners.values():
        assert len(who) == 1 or (tree.num_players == 4 and len(who) == 2 and abs(who[0] - who[1]) == 2)
    some_set_has_two_nodes = max(np.bincount(model.iset[model.iset >= 0])) > 1
    assert some_set_has_two_nodes


def test_mask_is_the_tree_s_legal_actions(game):
    tree, model = game
    for nodes, _, mask in infoset_observations(tree, model, batch=64):
        for n, m in zip(nodes, mask):
            kids = np.flatnonzero(tree.parent == n)
            assert sorted(tree.action[kids].tolist()) == np.flatnonzero(m).tolist()
            assert tree.action[kids[np.argsort(tree.pos[kids])]].tolist() == np.flatnonzero(m).tolist()


def _observation_of_set(tree, model):
    """(I,) the observation (bytes) of each information set."""
    out = [None] * model.num_isets
    for nodes, obs, _ in infoset_observations(tree, model):
        for n, o in zip(nodes, obs):
            out[int(model.iset[n])] = o.tobytes()
    return out


def _table_probs_fn(tree, model, table):
    """A probs_fn that looks the observation up: a tabular policy as a function of observations
    (in 4 players, sets that share an observation must share their probabilities)."""
    lookup = {o: s for s, o in enumerate(_observation_of_set(tree, model))}

    def probs_fn(obs, mask):
        out = np.zeros((len(obs), NUM_ACTIONS))
        for k, (o, m) in enumerate(zip(obs, mask)):
            s = lookup[o.tobytes()]
            out[k, np.flatnonzero(m)] = table[model.iset_offset[s]:model.iset_offset[s + 1]]
        return out * 3.0  # unnormalised: policy_table normalises over the legal actions
    return probs_fn


def _by_observation(tree, model, table):
    """``table`` with each set's probabilities replaced by those of the last set sharing its observation."""
    obs = _observation_of_set(tree, model)
    last = {o: s for s, o in enumerate(obs)}
    out = table.copy()
    for s, o in enumerate(obs):
        t = last[o]
        out[model.iset_offset[s]:model.iset_offset[s + 1]] = table[model.iset_offset[t]:model.iset_offset[t + 1]]
    return out


def test_tabular_policy_round_trips(game):
    tree, model = game
    rng = np.random.default_rng(5)
    raw = rng.random(model.num_slots) + 0.01
    sizes = np.diff(model.iset_offset)
    owner = np.repeat(np.arange(model.num_isets), sizes)
    table = _by_observation(tree, model, raw / np.bincount(owner, weights=raw)[owner])
    got = policy_table(tree, model, _table_probs_fn(tree, model, table), batch=33)
    assert got.dtype == np.float64 and got.shape == (model.num_slots,)
    np.testing.assert_allclose(got, table, rtol=1e-12, atol=0)
    nc, per = learned_nash_conv(tree, model, _table_probs_fn(tree, model, table))
    want, on, br = rs.nash_conv(tree, model, table)
    assert nc == pytest.approx(want, abs=1e-9) and per.shape == (model.num_players,)
    np.testing.assert_allclose(per, br - on, atol=1e-9)
    assert nc > 1.0  # a random policy is far from an equilibrium


def test_cfr_plus_solution_has_small_nash_conv(game):
    tree, model = game
    solver = rs.CFR(tree, model, plus=True)
    for _ in range(200):
        solver.step()
    avg = _by_observation(tree, model, solver.average_policy())
    nc, per = learned_nash_conv(tree, model, _table_probs_fn(tree, model, avg))
    assert 0 <= nc < 0.01 and (per > -1e-9).all()
    nc_u, _ = learned_nash_conv(tree, model, lambda obs, mask: mask.astype(float))
    assert nc_u == pytest.approx(rs.nash_conv(tree, model, rs.uniform_policy(model))[0], abs=1e-9)
    assert len(representatives(tree, model)) == model.num_isets


def test_bad_input_is_refused(game):
    tree, model = game
    with pytest.raises(ValueError, match="seats"):
        policy_table(tree, rs.make_model(tree, "teams"), lambda o, m: m.astype(float))
    with pytest.raises(ValueError, match="shape"):
        policy_table(tree, model, lambda o, m: np.ones((len(o), 5)))
    with pytest.raises(ValueError, match="no probability"):
        policy_table(tree, model, lambda o, m: (~m).astype(float))
    with pytest.raises(ValueError, match="non-finite"):
        policy_table(tree, model, lambda o, m: np.where(m, np.nan, 0.0))
    with pytest.raises(ValueError, match="batch"):
        policy_table(tree, model, lambda o, m: m.astype(float), batch=0)
