"""Worlds weighted by the likelihood of a sampled target's play (``training/search_response.py``,
``training/br_validation.py``): the weights equal an enumeration done by hand from the
agent's own ``action_probs``, the greedy target is the 0/1 special case, the sampled
responder's worlds depend only on its information set, and the exact value with a sampled
target lies between every responder's value and the clairvoyant one."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.training import br_validation as V  # noqa: E402
from twilight_env.training.search_response import (SearchResponder, initial_hands,  # noqa: E402
                                                   public_actions)

SAMPLED = "policy:default,temperature=1"


def _positions(spec, players, mode, n, tricks_left, seed):
    target = V.Target(spec)
    resp = V.responder_seats(mode, players)
    return target, resp, V.endgame_positions(target, players, resp, n, tricks_left, seed)


def _by_hand(info, world, agent, resp):
    """The likelihood of the deal's public actions in one world, from the agent's
    ``action_probs`` on each decision's information set (no batch engine, no vector rows)."""
    st = State([int(h) for h in initial_hands(info, np.array([world], dtype=np.int64))[0]],
               info.first_leader, info.num_players)
    like = 1.0
    for a in public_actions(info):
        if st.deciding_seat not in resp:
            seen = InfoSet(st, st.deciding_seat)
            like *= float(agent.action_probs(seen, seen.legal_actions)[a])
        st.apply(a)
    return like


@pytest.mark.parametrize("spec,players,mode", [(SAMPLED, 3, "solo"), ("policy:default,temperature=0.5", 4, "seat=0"),
                                               ("exit:default,temperature=1", 3, "solo")])
def test_the_weights_equal_an_enumeration_by_hand(spec, players, mode):
    """Small endgames (2 tricks left): every deal of the unseen cards is enumerated, its
    likelihood computed by hand as the product of the agent's probabilities of the actions
    it took, and the posterior (likelihood over their sum) compared with the exact
    responder's weights and with the sampled responder's (batch-engine) likelihoods."""
    target, resp, states = _positions(spec, players, mode, 3, 2, 4)
    agent = make_agent(spec)
    me = SearchResponder(spec.split(",")[0], temperature=float(spec.rsplit("=", 1)[1]))
    seen_spread = False
    for st in states:
        info = InfoSet(st, st.deciding_seat)
        every = V.enumerate_hands(info)
        hand = np.array([_by_hand(info, w, agent, resp) for w in every])
        assert hand[every.index(list(st.hands))] > 0  # the true deal is possible
        post = hand / hand.sum()
        kept, weights = V.weighted_worlds(info, target, resp)
        assert len(kept) == int((hand > 0).sum())
        got = dict(zip((tuple(k.hands) for k in kept), weights / weights.sum()))
        for w, p in zip(every, post):
            assert got.get(tuple(w), 0.0) == pytest.approx(p, rel=1e-4, abs=1e-12)
        if mode == "solo":  # the sampled responder weighs its whole side's decisions: the same seats here
            sampled = me.likelihoods(info, initial_hands(info, np.array(every, dtype=np.int64)))
            assert np.allclose(sampled / sampled.sum(), post, rtol=1e-4, atol=1e-12)
        seen_spread |= post.max() < 1 - 1e-6 and (post > 0).sum() > 1
    assert seen_spread  # some position keeps several worlds of unequal weight: the test can tell


def test_a_greedy_target_weighs_its_consistent_worlds_equally():
    """At temperature 0 the likelihood is 1 exactly on the worlds in which the target would
    have played as it did, and 0 elsewhere (the filter of before weights)."""
    target, resp, states = _positions("policy:default", 3, "solo", 4, 2, 6)
    agent = make_agent("policy:default")
    for st in states:
        info = InfoSet(st, st.deciding_seat)
        every = V.enumerate_hands(info)
        kept, weights = V.weighted_worlds(info, target, resp)
        assert (weights == 1.0).all()
        keep = []
        for w in every:  # the filter, by hand: the target's own action at each of its past decisions
            s = State([int(h) for h in initial_hands(info, np.array([w], dtype=np.int64))[0]],
                      info.first_leader, 3)
            ok = True
            for a in public_actions(info):
                if s.deciding_seat not in resp:
                    seen = InfoSet(s, s.deciding_seat)
                    ok &= agent.act(seen, seen.legal_actions) == a
                s.apply(a)
            keep.append(ok)
        assert sorted(tuple(k.hands) for k in kept) == sorted(tuple(w) for w, ok in zip(every, keep) if ok)
        me = SearchResponder("policy:default")
        like = me.likelihoods(info, initial_hands(info, np.array(every, dtype=np.int64)))
        assert set(np.unique(like)) <= {0.0, 1.0} and list(like == 1.0) == keep


def test_sampled_worlds_depend_only_on_the_information_set_and_carry_their_draws():
    """The responder's resampled worlds: ``worlds`` draws in all, each kept world of positive
    likelihood, the real hand of the responder in each, and the same worlds from another deal
    of the hidden cards with the same information set (no leak)."""
    target = make_agent(SAMPLED)
    me = SearchResponder("policy:default", worlds=16, candidates=4, temperature=1)
    rng = np.random.default_rng(11)
    st = State.random(rng, 0, 4)
    for _ in range(14):
        la = st.legal_actions()
        a = target.act(InfoSet(st, st.deciding_seat), la, rng) if st.deciding_seat & 1 else la[0]
        st.apply(a)
    info = InfoSet(st, 0 if st.deciding_seat & 1 else st.deciding_seat)
    kept, counts = me.weighted_worlds(info, np.random.default_rng(5))
    assert counts.sum() == 16 and len(kept) == len(counts) and (counts >= 1).all()
    assert (me.likelihoods(info, kept) > 0).all()
    assert (kept[:, info.seat] == st.initial_hands[info.seat]).all()
    redeal = InfoSet(info.world_state(info.sample_hands(np.random.default_rng(2))), info.seat)
    again, counts2 = me.weighted_worlds(redeal, np.random.default_rng(5))
    assert np.array_equal(kept, again) and np.array_equal(counts, counts2)


def _clairvoyant(state, target, resp, side):
    """Seeing every hand: max at the responder's decisions, the target's expectation at its own."""
    if state.done:
        return V.outcome(state, side)
    if state.deciding_seat in resp:
        return max(_clairvoyant(_child(state, a), target, resp, side) for a in state.legal_actions())
    p = target.probs([state])[0]
    return sum(p[a] * _clairvoyant(_child(state, a), target, resp, side) for a in np.flatnonzero(p > 0))


def _child(state, a):
    c = state.clone()
    c.apply(int(a))
    return c


def test_the_exact_value_with_a_sampled_target_lies_between_every_responder_and_the_clairvoyant_one():
    """With a sampled target the exact best response (one action per information set, the
    target's actions in expectation) is at least any responder's value, the target's own
    included, and at most the clairvoyant's, over the same weighted worlds (4 players, one
    responder seat, 1 trick left)."""
    _check_bounds(4, "seat=0", 6, 1, 12)


@pytest.mark.slow
def test_the_bounds_hold_for_the_3_player_solo_two_tricks_from_the_end():
    """The same for the 3-player solo with 2 tricks left (a few minutes on a loaded core):
    ``pytest -m slow tests/training/test_likelihood_weights.py``."""
    _check_bounds(3, "solo", 2, 2, 5)


def _check_bounds(players, mode, n, tricks_left, seed):
    target, resp, states = _positions(SAMPLED, players, mode, n, tricks_left, seed)
    others = [make_agent("random"), make_agent("policy:default")]
    for k, st in enumerate(states):
        info = InfoSet(st, st.deciding_seat)
        side = st.deciding_seat & 1
        worlds, w = V.weighted_worlds(info, target, resp)
        exact, per = V.exact_value(worlds, target, resp, side, w)
        assert max(per.values()) == exact and set(per) == set(st.legal_actions())
        clair = float(np.dot(w, [_clairvoyant(s, target, resp, side) for s in worlds]))
        assert exact <= clair + 1e-9 * max(1, abs(clair))
        own, _ = V.policy_value(worlds, target, resp, side, None, np.random.default_rng(0), w)
        assert own <= exact + 1e-9 * max(1, abs(exact))
        for agent in others:
            v, first = V.policy_value(worlds, target, resp, side, agent, np.random.default_rng(k), w)
            assert v <= exact + 1e-9 * max(1, abs(exact)) and first in st.legal_actions()


def test_validation_reports_a_sampled_targets_gap():
    """``validate`` with a sampled target: the exact responder has no gap, every gap is >= 0,
    and the target as its own responder scores about the target's value (it samples once per
    information set, the value is its expectation)."""
    spec = SAMPLED
    exact = "respond:target=policy:default,temperature=1,worlds=4,candidates=2,exact_tricks=1"
    r = V.validate(spec, [exact, "random"], 4, "seat=1", 4, 1, 8, progress=False)
    assert r["summary"][exact]["mean_gap"][0] == pytest.approx(0, abs=1e-9)
    assert all(row["responders"]["random"]["gap"] >= -1e-9 for row in r["rows"])
    assert r["mean_worlds"] <= r["mean_positive_worlds"] + 1e-9
    if r["mean_worlds"] < r["mean_positive_worlds"] - 1e-9:
        assert "worlds of positive likelihood" in V.report(r)


def test_the_progress_line_gives_the_weighted_means(capsys):
    """The progress line of a sampled target prints the same exact and target values (deal
    points per world, weighted) as the result rows."""
    r = V.validate(SAMPLED, ["random"], 4, "seat=1", 2, 1, 8, progress=True)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("position ")]
    for ln, row in zip(lines, r["rows"]):
        assert f"exact {row['exact']:+.1f}, target {row['target_value']:+.1f}" in ln
