"""IS-MCTS depth limit (``max_depth``) and root-parallel ensemble (``trees``): without
them the search is unchanged, the depth limit bounds the tree, an ensemble is the sum of
its independent searches, and bad values are refused."""

from __future__ import annotations

import numpy as np
import pytest

from twilight_env.rules.engine import NUM_ACTIONS, NUM_TRICKS, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents import fast_rollout
from twilight_env.agents.base import make_agent
from twilight_env.agents.ismcts import ISMCTSAgent

pytestmark = pytest.mark.skipif(not fast_rollout.HAVE_NUMBA, reason="numba is not installed")

from twilight_env.agents import fast_ismcts  # noqa: E402
from positions import Spec, positions  # noqa: E402


def _decision(seed: int, players: int, actions_played: int = 3) -> InfoSet:
    """An information set early in a deal (a deep tree below it), with >= 2 legal actions."""
    infos = (InfoSet(st, st.deciding_seat) for st in positions(Spec(players, seed, 50, steps=actions_played)))
    return next(info for info in infos if len(info.legal_actions) >= 2)


def _compiled(info: InfoSet, iterations: int, max_depth: int, seed: int = 1):
    """The compiled search's raw result ``(visits, value sums, nodes)``."""
    base, hidden, counts, p0, p1 = fast_ismcts.infoset_arrays(info)
    nb = fast_ismcts._nb()
    return nb.search(base, hidden, counts, p0, p1, iterations, 0.7, fast_rollout.params(), 0.0, np.zeros(NUM_ACTIONS),
                     0.0, 100_000, seed, nb.TEAM, max_depth)


def _stat_depth(node, depth: int = 0) -> int:
    """1 + the deepest depth (root 0) of a Python-search node holding action statistics; 0 if none."""
    deepest = depth + 1 if node.visits and sum(node.visits.values()) else 0
    for child in node.children.values():
        deepest = max(deepest, _stat_depth(child, depth + 1))
    return deepest


@pytest.mark.parametrize("players", [3, 4])
def test_no_depth_limit_and_one_tree_is_the_plain_search(players):
    info = _decision(1, players)
    plain = fast_ismcts.search(info, 800, 0.7, np.random.default_rng(3))
    for kw in (dict(max_depth=0), dict(max_depth=60), dict(trees=1), dict(max_depth=0, trees=1)):
        v, q = fast_ismcts.search(info, 800, 0.7, np.random.default_rng(3), **kw)
        assert np.array_equal(v, plain[0]) and np.array_equal(q, plain[1]), kw  # bit for bit
    agent, limited = ISMCTSAgent(iterations=150), ISMCTSAgent(iterations=150, max_depth=60)
    assert agent.search(info, np.random.default_rng(4)).visits == limited.search(info, np.random.default_rng(4)).visits


def test_max_depth_bounds_the_compiled_tree():
    info = _decision(2, 4)
    n_legal = len(info.legal_actions)
    nodes = {}
    for d in (1, 2, 3, 0):
        visits, _, nodes[d] = _compiled(info, 1500, d)
        assert visits.sum() == 1500 and set(np.flatnonzero(visits)) == set(info.legal_actions)
    assert nodes[1] == 1                  # the root only: a bandit over its actions with rollouts
    assert nodes[2] == 1 + n_legal         # the root and one node per root action
    assert nodes[2] < nodes[3] < nodes[0]  # deeper limits, bigger trees; unlimited the biggest
    assert nodes[0] == 1501                # unlimited: one node per iteration (plus the root)


def test_max_depth_bounds_the_python_tree():
    info = _decision(5, 4)
    for d in (1, 2, 3):
        root = ISMCTSAgent(iterations=300, max_depth=d, rollout_backend="numba").search(info, np.random.default_rng(0))
        assert sum(root.visits.values()) == 300
        assert _stat_depth(root) == d  # statistics on exactly the first d decisions
    root = ISMCTSAgent(iterations=300, rollout_backend="numba").search(info, np.random.default_rng(0))
    assert _stat_depth(root) > 3


@pytest.mark.parametrize("iterations,trees", [(900, 3), (901, 4)])
def test_trees_sums_independent_searches_seeded_in_turn_from_the_rng(iterations, trees):
    info = _decision(3, 4)
    v, q = fast_ismcts.search(info, iterations, 0.7, np.random.default_rng(8), trees=trees, max_depth=3)
    rng = np.random.default_rng(8)
    sv, sq = np.zeros(NUM_ACTIONS, dtype=np.int64), np.zeros(NUM_ACTIONS)
    per, extra = divmod(iterations, trees)
    for t in range(trees):
        vt, qt = fast_ismcts.search(info, per + (t < extra), 0.7, rng, max_depth=3)
        sv += vt
        sq += qt * vt  # mean -> sum
    assert v.sum() == iterations and np.array_equal(v, sv)
    seen = v > 0
    assert np.allclose(q[seen], sq[seen] / v[seen]) and np.all(q[~seen] == 0)
    one, _ = fast_ismcts.search(info, iterations, 0.7, np.random.default_rng(8), max_depth=3)
    assert not np.array_equal(v, one)  # an ensemble is not one big tree


def test_agent_spec_options_and_whole_deals():
    from twilight_env.experiments.common import play_seeded

    agent = make_agent("ismcts:backend=numba,iterations=120,max_depth=2,trees=3")
    assert (agent.max_depth, agent.trees) == (2, 3)
    assert agent.name == "ismcts:iterations=120,backend=numba,max_depth=2,trees=3"
    assert make_agent("ismcts:max_depth=2").name == "ismcts:iterations=1000,max_depth=2"
    info = _decision(6, 4)
    la = list(info.legal_actions)
    visits, _ = fast_ismcts.search(info, 120, 0.7, np.random.default_rng(2), max_depth=2, trees=3)
    assert agent.act(info, la, np.random.default_rng(2)) == min(la, key=lambda a: (-visits[a], a))
    for spec in ("ismcts:backend=numba,iterations=100,max_depth=2,trees=2", "ismcts:iterations=40,max_depth=1"):
        end = play_seeded(State.random(np.random.default_rng(0), 1, 4), [spec] * 4, seed=5, deal_index=0, play=0)
        assert end.done and end.trick == NUM_TRICKS


def test_bad_depth_and_tree_values_are_refused():
    info = _decision(7, 3)
    rng = np.random.default_rng(0)
    for kw, words in [(dict(max_depth=-1), "max_depth"), (dict(max_depth=1.5), "max_depth"),
                      (dict(max_depth=True), "max_depth"), (dict(trees=0), "trees"), (dict(trees=2.0), "trees"),
                      (dict(trees=11), "at most iterations")]:
        with pytest.raises(ValueError, match=words):
            fast_ismcts.search(info, 10, 0.7, rng, **kw)
    with pytest.raises(ValueError, match="max_depth"):
        make_agent("ismcts:max_depth=-2")
    with pytest.raises(ValueError, match="trees=2 needs backend=numba"):
        make_agent("ismcts:trees=2")
    with pytest.raises(ValueError, match="at most iterations"):
        make_agent("ismcts:backend=numba,iterations=4,trees=5")
