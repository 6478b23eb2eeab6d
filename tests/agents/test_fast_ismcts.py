"""The compiled IS-MCTS (twilight_env.agents.fast_ismcts): its determinizations are exactly the
information set's uniform worlds, it reads nothing hidden, it is reproducible, it finds
the solver's dominant action near the end, it agrees with the Python search, the root
prior works, and ``ismcts:backend=numba`` plays whole deals."""

from __future__ import annotations

import itertools
from collections import Counter
from math import factorial, prod

import numpy as np
import pytest

from twilight_env.rules.cards import MOON_MASK, SUN_MASK, ids_of
from twilight_env.rules.engine import NUM_ACTIONS, NUM_TRICKS, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents import fast_rollout
from twilight_env.agents.base import make_agent
from twilight_env.agents.ismcts import ISMCTSAgent
from twilight_env.agents.solver import Solver

pytestmark = pytest.mark.skipif(not fast_rollout.HAVE_NUMBA, reason="numba is not installed")

from twilight_env.agents import fast_ismcts  # noqa: E402

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, strategies as hst  # noqa: E402
from positions import Spec, positions  # noqa: E402


def _position(seed: int, num_players: int, min_trick: int = 0, max_trick: int = 6) -> State:
    """A deal of ``num_players`` played by random legal actions to a random trick in
    ``min_trick..max_trick`` and a random number of actions into it (not over)."""
    return positions(Spec(num_players, seed, tricks_left=(7 - max_trick, 8 - min_trick)))[0]


def _viewers(st: State) -> list[int]:
    return [0, 1, 3] if st.num_players == 3 else [0, 1, 2, 3]


def _hidden(info: InfoSet) -> list[int]:
    return [s for s in range(4) if s != info.seat and not (info.num_players == 3 and s == 2)]


def _all_worlds(info: InfoSet) -> list[tuple[int, ...]]:
    """Every deal of the unseen cards consistent with ``info`` (4 hand masks each)."""
    hidden = _hidden(info)
    per_cult = []
    for cult, cmask in ((0, SUN_MASK), (1, MOON_MASK)):
        pool = ids_of(info.unseen_mask & cmask)
        opts = set()
        for perm in itertools.permutations(pool):
            i, hs = 0, []
            for s in hidden:
                n = info.hand_counts[s][cult]
                hs.append(sum(1 << c for c in perm[i:i + n]))
                i += n
            opts.add(tuple(hs))
        per_cult.append(sorted(opts))
    out = []
    for a, b in itertools.product(*per_cult):
        h = list(info.known_masks)
        for j, s in enumerate(hidden):
            h[s] |= a[j] | b[j]
        out.append(tuple(h))
    return out


# -- the sampler ------------------------------------------------------------------

@given(seed=hst.integers(0, 2**32 - 1), players=hst.sampled_from([3, 4]), viewer=hst.integers(0, 3))
def test_sampled_worlds_never_contradict_the_information_set(seed, players, viewer):
    st = _position(seed, players)
    seats = _viewers(st)
    info = InfoSet(st, seats[viewer % len(seats)])
    worlds = fast_ismcts.sample_hands(info, 40, np.random.default_rng(seed))
    assert worlds.shape == (40, 4) and worlds.dtype == np.int64
    unseen = info.unseen_mask
    hidden = _hidden(info)
    for row in worlds:
        hands = [int(x) for x in row]
        for s in range(4):
            assert hands[s] & info.known_masks[s] == info.known_masks[s]  # seen cards kept
            if s not in hidden:
                assert hands[s] == info.known_masks[s]  # nothing added to a seen hand
            assert (bin(hands[s] & SUN_MASK).count("1"), bin(hands[s] & MOON_MASK).count("1")) == info.hand_counts[s]
        union = hands[0] | hands[1] | hands[2] | hands[3]
        assert union & info.played == 0
        assert sum(bin(h).count("1") for h in hands) == bin(union).count("1")  # no card twice
        dealt = 0
        for s in hidden:
            dealt |= hands[s] & ~info.known_masks[s]
        assert dealt == unseen  # every unseen card dealt, exactly once
        info.world_state(hands)  # the engine's own consistency check accepts it


def _count_worlds(info: InfoSet) -> int:
    """How many deals of the unseen cards are consistent with ``info`` (the counts by cult)."""
    n_worlds = 1
    for c in (0, 1):
        counts = [info.hand_counts[s][c] for s in _hidden(info)]
        n_worlds *= factorial(sum(counts)) // prod(factorial(k) for k in counts)
    return n_worlds


def _uniform_position():
    """A 4-player position with three hidden seats and a few thousand consistent worlds."""
    for seed in range(100):
        st = _position(seed, 4, 4, 4)
        info = InfoSet(st, st.deciding_seat)
        n_worlds = _count_worlds(info)
        if 20 <= n_worlds <= 400:
            return info, n_worlds
    raise AssertionError("no position with 20..400 worlds")


def test_sampler_is_uniform_over_all_consistent_worlds():
    from scipy.stats import chi2_contingency, chisquare

    info, n_worlds = _uniform_position()
    worlds = _all_worlds(info)
    assert len(worlds) == n_worlds
    draws = 60 * n_worlds
    got = Counter(map(tuple, fast_ismcts.sample_hands(info, draws, np.random.default_rng(3)).tolist()))
    assert set(got) == set(worlds)  # every consistent world, and nothing else
    counts = np.array([got[w] for w in worlds])
    assert chisquare(counts).pvalue > 1e-4  # deterministic seed: no flake
    # one draw per call (each from the unshuffled pool): uniform too, and consecutive
    # draws of one stream are independent (the pair of worlds is uniform over pairs)
    rng = np.random.default_rng(4)
    single = Counter(tuple(fast_ismcts.sample_hands(info, 1, rng)[0].tolist()) for _ in range(draws))
    assert chisquare(np.array([single[w] for w in worlds])).pvalue > 1e-4
    stream = fast_ismcts.sample_hands(info, 2 * draws, np.random.default_rng(8))
    index = {w: i for i, w in enumerate(worlds)}
    ids = np.array([index[tuple(r)] for r in stream.tolist()])
    first_half = ids[0::2] < n_worlds // 2
    second_half = ids[1::2] < n_worlds // 2
    pairs = [[int(np.sum(first_half & second_half)), int(np.sum(first_half & ~second_half))],
             [int(np.sum(~first_half & second_half)), int(np.sum(~first_half & ~second_half))]]
    assert chi2_contingency(pairs).pvalue > 1e-4


def test_sampler_card_locations_match_infoset_sample_hands():
    from scipy.stats import chi2_contingency

    st = _position(11, 4, 2, 2)
    info = InfoSet(st, st.deciding_seat)
    hidden = _hidden(info)
    n = 6000
    nb = fast_ismcts.sample_hands(info, n, np.random.default_rng(5))
    rng = np.random.default_rng(6)
    py = np.array([info.sample_hands(rng) for _ in range(n)], dtype=np.int64)
    checked = 0
    for card in ids_of(info.unseen_mask):
        cult = card // 14
        slots = np.array([info.hand_counts[s][cult] for s in hidden], dtype=float)
        table = [[int(((w[:, s] >> card) & 1).sum()) for s in hidden] for w in (nb, py)]
        assert sum(table[0]) == n and sum(table[1]) == n
        assert all(table[0][i] == 0 for i in range(len(hidden)) if slots[i] == 0)  # no slot: never there
        cols = [i for i in range(len(hidden)) if slots[i] > 0]
        if len(cols) < 2:
            continue
        assert chi2_contingency([[row[i] for i in cols] for row in table]).pvalue > 1e-4
        # and both match the exact share: the seat's slots of that cult / the cult's unseen cards
        share = np.array(table[0]) / n
        assert np.abs(share - slots / slots.sum()).max() < 0.03
        checked += 1
    assert checked >= 4


# -- the search -------------------------------------------------------------------

def _decision(seed: int, players: int) -> InfoSet:
    for k in range(50):
        st = _position(seed * 100 + k, players, 1, 5)
        info = InfoSet(st, st.deciding_seat)
        if len(info.legal_actions) >= 2 and _count_worlds(info) >= 2:  # a choice, and something hidden
            return info
    raise AssertionError("no decision with two legal actions and two consistent worlds")


@pytest.mark.parametrize("players", [3, 4])
def test_same_rng_state_gives_the_same_result_and_visits_sum_to_iterations(players):
    info = _decision(1, players)
    v1, q1 = fast_ismcts.search(info, 700, 0.7, np.random.default_rng(42))
    v2, q2 = fast_ismcts.search(info, 700, 0.7, np.random.default_rng(42))
    assert v1.shape == q1.shape == (NUM_ACTIONS,)
    assert v1.dtype == np.int64 and q1.dtype == np.float64
    assert np.array_equal(v1, v2) and np.array_equal(q1, q2)
    # every iteration takes exactly one action at the root, and only legal ones
    assert v1.sum() == 700
    assert set(np.flatnonzero(v1)) <= set(info.legal_actions)
    assert np.all(q1[v1 == 0] == 0) and np.all(np.abs(q1) <= 1)
    v3, _ = fast_ismcts.search(info, 700, 0.7, np.random.default_rng(43))
    assert not np.array_equal(v1, v3)  # the seed matters


@pytest.mark.parametrize("players", [3, 4])
def test_no_leak_a_redeal_of_the_hidden_cards_gives_the_same_visits(players):
    for seed in range(3):
        info = _decision(seed + 10, players)
        real, _ = fast_ismcts.search(info, 400, 0.7, np.random.default_rng(seed))
        rng = np.random.default_rng(99)
        for _ in range(3):
            other = info.world_state(info.sample_hands(rng))  # another deal, same information set
            info2 = InfoSet(other, info.seat)
            assert info2.known_masks == info.known_masks and info2.unseen_mask == info.unseen_mask
            counter, _ = fast_ismcts.search(info2, 400, 0.7, np.random.default_rng(seed))
            assert np.array_equal(real, counter)


def _dominant_positions():
    """Positions with 2 tricks left where, in every consistent world, the exact solver
    values one legal action at least 10 deal points above every other (for the acting
    side), the legal actions being the same in every world."""
    out = []
    rng = np.random.default_rng(7)
    for i in range(160):
        n = 3 + i % 2
        st = State.random(rng, int(rng.integers(4)) if n == 4 else 0, n)
        while st.trick < 5:
            la = st.legal_actions()
            st.apply(la[int(rng.integers(len(la)))])
        for _ in range(int(rng.integers(0, 8))):
            if st.done:
                break
            la = st.legal_actions()
            st.apply(la[int(rng.integers(len(la)))])
        if st.done:
            continue
        info = InfoSet(st, st.deciding_seat)
        la = list(info.legal_actions)
        if len(la) < 2:
            continue
        solver = Solver(n)
        sign = 1 if st.acting_seat % 2 == 0 else -1
        vals, worlds = [], _all_worlds(info)
        for w in worlds:
            ws = info.world_state(list(w))
            if list(ws.legal_actions()) != la:
                break
            av = solver.action_values(ws)
            vals.append([sign * av[a] for a in la])
        else:
            v = np.array(vals)
            for j in range(len(la)):
                rest = np.delete(v, j, 1).max(1)
                if (v[:, j] - rest).min() >= 10:
                    out.append((info, la[j], len(worlds)))
    return out


def test_near_the_end_the_search_picks_the_action_the_solver_shows_dominant_in_every_world():
    # UCB needs enough iterations to find the refutations below the root (with 2000 one
    # of these positions still goes to the action the solver shows refuted, in the Python
    # search as well), so 20000: about 40 ms each compiled
    cases = _dominant_positions()
    assert len(cases) >= 20 and sum(1 for _, _, nw in cases if nw > 1) >= 5
    for k, (info, best, _) in enumerate(cases):
        visits, values = fast_ismcts.search(info, 20_000, 0.7, np.random.default_rng(k))
        la = list(info.legal_actions)
        assert la[int(np.argmax(visits[la]))] == best, (info, visits[la])
        assert values[best] == max(values[a] for a in la)


def test_compiled_and_python_searches_agree_statistically():
    """Root visit shares with 3000 iterations each: close in total variation on average,
    and the same most-visited action wherever the Python search has a clear favourite."""
    n_iter = 3000
    agent = ISMCTSAgent(iterations=n_iter, rollout_backend="numba")
    tvs, clear, same = [], 0, 0
    for k in range(10):
        info = _decision(200 + k, 3 + k % 2)
        la = list(info.legal_actions)
        root = agent.search(info, np.random.default_rng(k))
        py = np.array([root.visits.get(a, 0) for a in la]) / n_iter
        nb, _ = fast_ismcts.search(info, n_iter, 0.7, np.random.default_rng(k))
        nb = nb[la] / n_iter
        tvs.append(0.5 * np.abs(py - nb).sum())
        if py.max() >= 0.6:
            clear += 1
            same += int(np.argmax(py) == np.argmax(nb))
    assert np.mean(tvs) < 0.15, tvs
    assert clear >= 3 and same == clear, (clear, same)


def test_node_pool_cap_is_respected_and_the_search_still_counts_every_iteration():
    info = _decision(3, 4)
    nb = fast_ismcts._nb()
    base, hidden, counts, p0, p1 = fast_ismcts.infoset_arrays(info)
    prior = np.zeros(NUM_ACTIONS)
    for cap in (1, 7, 100_000):
        visits, _, nodes = nb.search(base, hidden, counts, p0.copy(), p1.copy(), 500, 0.7, fast_rollout.params(),
                                     0.0, prior, 0.0, cap, 1)
        assert visits.sum() == 500
        assert nodes <= min(cap, 501)
    assert nodes > 7  # uncapped, the tree does grow
    v, _ = fast_ismcts.search(info, 500, 0.7, np.random.default_rng(0), max_nodes=1)
    assert v.sum() == 500 and set(np.flatnonzero(v)) <= set(info.legal_actions)


@pytest.mark.parametrize("rollout,epsilon", [("random", 0.0), ("heuristic", 0.3)])
def test_random_and_epsilon_rollouts_run_and_are_reproducible(rollout, epsilon):
    info = _decision(4, 3)
    a, _ = fast_ismcts.search(info, 300, 0.7, np.random.default_rng(1), rollout=rollout, epsilon=epsilon)
    b, _ = fast_ismcts.search(info, 300, 0.7, np.random.default_rng(1), rollout=rollout, epsilon=epsilon)
    h, _ = fast_ismcts.search(info, 300, 0.7, np.random.default_rng(1))
    assert np.array_equal(a, b) and a.sum() == 300
    assert not np.array_equal(a, h)  # the rollout policy is used


# -- the root prior ---------------------------------------------------------------

def _least_visited(visits, la):
    return min(la, key=lambda a: (visits[a], a))


@pytest.mark.parametrize("players", [3, 4])
def test_a_huge_prior_weight_sends_most_visits_to_that_action(players):
    info = _decision(20, players)
    la = list(info.legal_actions)
    plain, _ = fast_ismcts.search(info, 1000, 0.7, np.random.default_rng(0))
    target = _least_visited(plain, la)
    prior = np.zeros(NUM_ACTIONS)
    prior[target] = 1.0
    biased, _ = fast_ismcts.search(info, 1000, 0.7, np.random.default_rng(0), prior, 1e6)
    assert biased[target] > 0.9 * 1000 > plain[target]
    # the Python search does the same
    agent = ISMCTSAgent(iterations=400, rollout_backend="numba")
    root = agent.search(info, np.random.default_rng(0), prior, 1e6)
    assert root.visits[target] > 0.9 * 400


def test_zero_prior_weight_equals_no_prior():
    info = _decision(21, 3)
    prior = np.random.default_rng(0).random(NUM_ACTIONS)
    a = fast_ismcts.search(info, 600, 0.7, np.random.default_rng(5))
    b = fast_ismcts.search(info, 600, 0.7, np.random.default_rng(5), prior, 0.0)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    agent = ISMCTSAgent(iterations=200, rollout_backend="numba")
    r1 = agent.search(info, np.random.default_rng(5))
    r2 = agent.search(info, np.random.default_rng(5), prior, 0.0)
    assert r1.visits == r2.visits


def test_bad_arguments_are_refused_with_clear_errors():
    info = _decision(22, 4)
    rng = np.random.default_rng(0)
    ok = np.zeros(NUM_ACTIONS)
    bad = [
        (dict(iterations=0), "iterations"), (dict(iterations=2.5), "iterations"), (dict(c=-1.0), "c must"),
        (dict(c=float("nan")), "c must"), (dict(rng=1), "rng"), (dict(root_prior=np.zeros(5)), "shape"),
        (dict(root_prior=-ok - 1), ">= 0"), (dict(prior_weight=1.0), "needs root_prior"),
        (dict(root_prior=ok, prior_weight=-1.0), "prior_weight"), (dict(rollout="nope"), "rollout"),
        (dict(epsilon=2.0), "epsilon"), (dict(max_nodes=0), "max_nodes"), (dict(infoset="x"), "InfoSet"),
    ]
    for change, words in bad:
        kw = dict(infoset=info, iterations=10, c=0.7, rng=rng) | change
        with pytest.raises(ValueError, match=words):
            fast_ismcts.search(**kw)
    st = _position(1, 4)
    while not st.done:
        st.apply(st.legal_actions()[0])
    assert st.trick == NUM_TRICKS
    with pytest.raises(ValueError, match="over"):
        fast_ismcts.search(InfoSet(st, 0), 10, 0.7, rng)
    with pytest.raises(ValueError, match="backend"):
        make_agent("ismcts:backend=cuda")
    with pytest.raises(ValueError, match="inference"):
        make_agent("ismcts:backend=numba,inference=model")
    with pytest.raises(ValueError, match="shape"):
        ISMCTSAgent(iterations=5).search(info, rng, np.zeros(3), 1.0)


# -- the agent --------------------------------------------------------------------

def test_numba_backend_decides_the_most_visited_legal_action():
    agent = make_agent("ismcts:backend=numba,iterations=300")
    assert agent.name == "ismcts:iterations=300,backend=numba"
    for k in range(6):
        info = _decision(30 + k, 3 + k % 2)
        visits, _ = fast_ismcts.search(info, 300, 0.7, np.random.default_rng(k))
        la = list(info.legal_actions)
        want = min(la, key=lambda a: (-visits[a], a))
        assert agent.act(info, la, np.random.default_rng(k)) == want


@pytest.mark.parametrize("players", [3, 4])
def test_numba_backend_plays_whole_deals_legally(players):
    from twilight_env.experiments.common import play_seeded

    spec = "ismcts:backend=numba,iterations=200"
    for deal in range(2):
        st = State.random(np.random.default_rng(deal), deal % 4 if players == 4 else 0, players)
        end = play_seeded(st, [spec] * 4, seed=5, deal_index=deal, play=0)  # illegal action -> ValueError
        assert end.done and end.trick == NUM_TRICKS
        again = play_seeded(State.random(np.random.default_rng(deal), deal % 4 if players == 4 else 0, players),
                            [spec] * 4, seed=5, deal_index=deal, play=0)
        assert again.history == end.history  # seeded play is reproducible
