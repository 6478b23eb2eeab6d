"""The world sampler draws only worlds consistent with the information set, exactly from
its target distribution (agents/worlds.py)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twilight_env.agents.worlds import (WorldSampler, allowed_seats, hidden_seats, infoset_features, true_locations,
                           uniform_log_prob)
from twilight_env.rules.cards import MOON_MASK, SUN_MASK
from twilight_env.rules.infoset import InfoSet

from positions import PLAYED, Spec, positions, viewer_seats


def _assert_consistent(info: InfoSet, hands: list[int]) -> None:
    # the uniform sampler's own check: seen hands, Sun/Moon counts (R2.5), no played card
    world = info.world_state(hands)
    for s in range(4):
        assert hands[s] & info.known_masks[s] == info.known_masks[s]
        assert (bin(hands[s] & SUN_MASK).count("1"), bin(hands[s] & MOON_MASK).count("1")) == info.hand_counts[s]
    # a partition of the cards not yet played
    assert sum(bin(h).count("1") for h in hands) == bin(((1 << 28) - 1) & ~info.played).count("1")
    assert hands[0] | hands[1] | hands[2] | hands[3] == ((1 << 28) - 1) & ~info.played
    # the viewer's information set in the sampled world is the same one
    again = InfoSet(world, info.seat)
    assert again.known_masks == info.known_masks and again.hand_counts == info.hand_counts
    assert again.history == info.history and again.legal_actions == info.legal_actions
    assert np.array_equal(infoset_features(again), infoset_features(info))


@settings(max_examples=40)
@given(seed=st.integers(0, 10_000), players=st.sampled_from([3, 4]), steps=st.integers(0, 40),
       skew=st.floats(0.0, 6.0))
def test_sampled_worlds_are_consistent(seed, players, steps, skew):
    state = positions(Spec(players, seed, steps=steps, heuristic=PLAYED))[0]
    rng = np.random.default_rng(seed + 1)
    for viewer in viewer_seats(state.num_players):
        info = InfoSet(state, viewer)
        probs = np.exp(skew * rng.standard_normal((28, 4)))  # far from uniform, as a model may be
        sampler = WorldSampler(info, probs)
        for _ in range(5):
            hands = sampler.sample_hands(rng)
            _assert_consistent(info, hands)
            assert math.isfinite(sampler.log_prob(hands))
        # the true deal is one of the worlds, with a finite probability
        assert math.isfinite(sampler.log_prob(state.hands))


def _all_worlds(info: InfoSet):
    """Every world consistent with ``info`` (small late positions only)."""
    hidden = hidden_seats(info.num_players, info.seat)
    per_cult = []
    for cult, cmask in ((0, SUN_MASK), (1, MOON_MASK)):
        cards = [c for c in range(28) if (info.unseen_mask & cmask) >> c & 1]
        counts = [info.hand_counts[s][cult] for s in hidden]
        options = []
        for assign in itertools.product(range(len(hidden)), repeat=len(cards)):
            if [assign.count(j) for j in range(len(hidden))] == counts:
                options.append(assign)
        per_cult.append((cards, options))
    for a_sun, a_moon in itertools.product(per_cult[0][1], per_cult[1][1]):
        hands = list(info.known_masks)
        for cards, assign in ((per_cult[0][0], a_sun), (per_cult[1][0], a_moon)):
            for c, j in zip(cards, assign):
                hands[hidden[j]] |= 1 << c
        yield hands


@pytest.mark.parametrize("players,seed", [(3, 5), (4, 6), (4, 8)])
def test_draws_follow_the_conditioned_product_exactly(players, seed):
    for steps in range(17, 28):  # the first position late enough to enumerate its worlds
        state = positions(Spec(players, seed, steps=steps, heuristic=PLAYED))[0]
        info = InfoSet(state, state.deciding_seat)
        worlds = list(_all_worlds(info))
        if len(worlds) <= 400:
            break
    rng = np.random.default_rng(seed)
    probs = np.exp(1.5 * rng.standard_normal((28, 4)))
    sampler = WorldSampler(info, probs)
    assert 3 <= len(worlds) <= 400
    # the exact target: prod_c q[c, seat_c] / Z; log_prob agrees with brute force
    v = info.seat
    w = np.array([np.prod([probs[c, (s - v) & 3] for s in range(4) for c in range(28)
                           if h[s] >> c & 1 and info.unseen_mask >> c & 1]) for h in worlds])
    target = w / w.sum()
    for h, t in zip(worlds, target):
        assert sampler.log_prob(h) == pytest.approx(math.log(t), abs=1e-9)
    index = {tuple(h): i for i, h in enumerate(worlds)}
    n = 6000
    freq = np.zeros(len(worlds))
    for _ in range(n):
        freq[index[tuple(sampler.sample_hands(rng))]] += 1
    # chi-square goodness of fit, pooled to cells with expected count >= 5
    from scipy.stats import chisquare
    exp = target * n
    big = exp >= 5
    f_obs = np.append(freq[big], freq[~big].sum())
    f_exp = np.append(exp[big], exp[~big].sum())
    if f_exp[-1] == 0:
        f_obs, f_exp = f_obs[:-1], f_exp[:-1]
    assert chisquare(f_obs, f_exp).pvalue > 1e-4


@pytest.mark.parametrize("players", [3, 4])
def test_equal_weights_are_the_uniform_sampler(players):
    state = positions(Spec(players, players, steps=9, heuristic=PLAYED))[0]
    for viewer in viewer_seats(state.num_players):
        info = InfoSet(state, viewer)
        sampler = WorldSampler(info)
        assert sampler.log_prob(state.hands) == pytest.approx(uniform_log_prob(info), abs=1e-9)
        assert -sampler.log_partition == pytest.approx(uniform_log_prob(info), abs=1e-9)


def test_inconsistent_worlds_have_zero_probability():
    state = positions(Spec(4, 3, steps=6, heuristic=PLAYED))[0]
    info = InfoSet(state, state.deciding_seat)
    sampler = WorldSampler(info)
    hidden = hidden_seats(4, info.seat)
    hands = list(state.hands)
    # swap one Sun card for a Moon card between two hidden seats: counts break
    a, b = hidden[0], hidden[1]
    sun_a = next(c for c in range(14) if hands[a] >> c & 1) if hands[a] & SUN_MASK else None
    moon_b = next(c for c in range(14, 28) if hands[b] >> c & 1) if hands[b] & MOON_MASK else None
    if sun_a is not None and moon_b is not None:
        hands[a] ^= (1 << sun_a) | (1 << moon_b)
        hands[b] ^= (1 << sun_a) | (1 << moon_b)
        assert sampler.log_prob(hands) == -math.inf


def test_bad_weights_are_refused():
    info = InfoSet(positions(Spec(4, 1, steps=3, heuristic=PLAYED))[0], 0)
    with pytest.raises(ValueError, match="shape"):
        WorldSampler(info, np.ones((28, 3)))
    probs = np.ones((28, 4))
    probs[allowed_seats(info)] = 0.0
    with pytest.raises(ValueError, match="> 0"):
        WorldSampler(info, probs)


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), players=st.sampled_from([3, 4]), steps=st.integers(0, 27))
def test_labels_lie_on_allowed_seats(seed, players, steps):
    state = positions(Spec(players, seed, steps=steps, heuristic=PLAYED))[0]
    for viewer in viewer_seats(state.num_players):
        info = InfoSet(state, viewer)
        y = true_locations(state, info)
        allowed = allowed_seats(info)
        for c in range(28):
            assert (y[c] >= 0) == bool(info.unseen_mask >> c & 1) == allowed[c].any()
            if y[c] >= 0:
                assert allowed[c, y[c]]
