"""The ``temperature`` option of the network agents (``agents/sampling.py``): temperature 0 is
the greedy play of before and draws nothing from the generator; a sampled agent plays the
distribution ``action_probs`` gives, only legal actions (R3.2, R3.5), and the same seed
plays the same deal again; bad temperatures are refused."""

from __future__ import annotations

import numpy as np
import pytest

from twilight_env.agents import sampling
from twilight_env.agents.base import make_agent, play_deal
from twilight_env.rules.engine import NUM_ACTIONS, State
from twilight_env.rules.infoset import InfoSet
from positions import Spec, positions

SPECS = ["policy:default", "exit:default", "neural:default"]
"""The network agents, each with its shipped weights."""


def _needs(spec):
    if not spec.startswith("policy"):
        pytest.importorskip("torch")


def _decisions(num_players, seed, n):
    """``n`` information sets at random points of random deals (the deciding seat's view)."""
    return [InfoSet(st, st.deciding_seat) for st in positions(Spec(num_players, seed, n, steps=(0, 30)))]


def _played(spec, seed, players, agent_seed):
    agent = make_agent(spec)
    st = State.random(np.random.default_rng(seed), seed % 4 if players == 4 else 0, players)
    rng = np.random.default_rng(agent_seed)
    out = []
    while not st.done:
        info = InfoSet(st, st.deciding_seat)
        a = agent.act(info, info.legal_actions, rng)
        out.append(a)
        st.apply(a)
    return out


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("players", [3, 4])
def test_temperature_0_is_the_greedy_play_and_draws_nothing(spec, players):
    """``temperature=0`` plays what the agent played before the option (the default spec),
    its distribution is all on that action, and the generator is left untouched (so an
    agent beside it in a deal draws the same numbers as before)."""
    _needs(spec)
    plain, zero = make_agent(spec), make_agent(f"{spec},temperature=0")
    assert zero.name == plain.name and hasattr(zero, "act_batch")
    infos = _decisions(players, 3, 60)
    legal = [i.legal_actions for i in infos]
    rng = np.random.default_rng(11)
    before = rng.bit_generator.state
    acts = [zero.act(i, i.legal_actions, rng) for i in infos]
    assert rng.bit_generator.state == before
    assert acts == [plain.act(i, i.legal_actions, np.random.default_rng(0)) for i in infos]
    assert acts == plain.act_batch(infos, legal)
    probs = zero.action_probs_batch(infos, legal)
    assert probs.shape == (len(infos), NUM_ACTIONS) and probs.dtype == np.float64
    assert (probs.argmax(1) == acts).all() and (probs.max(1) == 1.0).all()


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("players", [3, 4])
def test_a_sampled_agent_replays_with_its_seed_and_plays_legal_actions(spec, players):
    """The same agent seed plays the same deal again; other seeds play other deals (some of
    four differ); ``play_deal`` refuses any illegal action."""
    _needs(spec)
    t = "0.05" if spec.startswith("neural") else "1"
    sampled = f"{spec},temperature={t}"
    assert not hasattr(make_agent(sampled), "act_batch")  # batch callers decide one by one, with the rng
    first = _played(sampled, 5, players, 17)
    assert _played(sampled, 5, players, 17) == first
    assert any(_played(sampled, 5, players, s) != first for s in (18, 19, 20, 21))
    st = State.random(np.random.default_rng(6), 0, players)
    play_deal(st, [make_agent(sampled)] * 4, np.random.default_rng(2))
    assert st.done


@pytest.mark.parametrize("spec", SPECS)
def test_the_distribution_is_the_networks_at_temperature_1_and_sharper_below(spec):
    """At ``T = 1`` a policy network's distribution is its own policy (``neural``: the
    Boltzmann distribution of its Q-values); lower temperatures put more mass on the greedy
    action; every distribution is 0 outside the legal actions and sums to 1."""
    _needs(spec)
    infos = _decisions(3, 9, 40)
    legal = [i.legal_actions for i in infos]
    mask = sampling.legal_matrix(legal)
    t_hi, t_lo = ("0.1", "0.02") if spec.startswith("neural") else ("1", "0.3")
    hi, lo = make_agent(f"{spec},temperature={t_hi}"), make_agent(f"{spec},temperature={t_lo}")
    p_hi, p_lo = hi.action_probs_batch(infos, legal), lo.action_probs_batch(infos, legal)
    for p in (p_hi, p_lo):
        assert np.allclose(p.sum(1), 1.0) and (p[~mask] == 0).all()
    greedy = np.array(make_agent(spec).act_batch(infos, legal))
    rows = np.arange(len(infos))
    assert (p_lo[rows, greedy] >= p_hi[rows, greedy] - 1e-12).all()
    agent = make_agent(spec)
    if spec.startswith("neural"):
        q = np.full((len(infos), NUM_ACTIONS), -np.inf)
        for k, (qs, la) in enumerate(zip(agent.q_values(infos, legal), legal)):
            q[k, list(la)] = qs
        want = np.exp((q - q.max(1, keepdims=True)) / 0.1)
    elif spec.startswith("policy"):
        from twilight_env.agents.nn.features import infoset_row, role_of
        want = np.stack([agent.net_for(3).forward_one(infoset_row(i), role_of(3, i.acting_seat), m)[0]
                         for i, m in zip(infos, mask)]).astype(np.float64)
    else:
        from twilight_env.agents.exit import policy_value
        want = policy_value(agent.model_for(3), infos, legal)[0].astype(np.float64)
    want = want / want.sum(1, keepdims=True)
    assert np.allclose(p_hi, want, atol=1e-6)
    assert np.allclose(hi.action_probs(infos[0], legal[0]), p_hi[0])


def test_draws_follow_the_distribution():
    """Over 4,000 draws at one decision the sampled frequencies match ``action_probs``
    (each within 4 standard errors), and an action of probability 0 is never drawn."""
    agent = make_agent("policy:default,temperature=2")
    info = next(i for i in _decisions(3, 4, 50) if len(i.legal_actions) >= 3)
    p = agent.action_probs(info, info.legal_actions)
    rng = np.random.default_rng(8)
    n = 4000
    counts = np.bincount([agent.act(info, info.legal_actions, rng) for _ in range(n)], minlength=NUM_ACTIONS)
    assert (counts[p == 0] == 0).all()
    se = np.sqrt(p * (1 - p) / n)
    assert (np.abs(counts / n - p) <= 4 * se + 1e-12).all(), (counts / n, p)


def test_sample_takes_only_actions_with_mass():
    """``sampling.sample`` never draws a 0-probability action, even at the edges of [0, 1)."""
    dist = np.zeros((3, NUM_ACTIONS))
    dist[:, [2, 5]] = [0.25, 0.75]

    class Edge:
        def __init__(self, u):
            self.u = u

        def random(self, n):
            return np.full(n, self.u)
    for u, want in ((0.0, 2), (0.2499, 2), (0.25, 5), (1 - 1e-16, 5), (1.0, 5)):
        assert (sampling.sample(dist, Edge(u)) == want).all()
    with pytest.raises(ValueError, match="needs the numpy.random.Generator"):
        sampling.sample(dist, None)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("value", ["-0.5", "101", "nan", "inf", "hot", "true"])
def test_a_bad_temperature_is_refused(spec, value):
    _needs(spec)
    agent = spec.split(":")[0]
    with pytest.raises(ValueError, match=rf"{agent} option temperature must be a finite number in \[0, 100\]"):
        make_agent(f"{spec},temperature={value}")
