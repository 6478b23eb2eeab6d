"""Compiled single-observer IS-MCTS: :func:`search` (numba, :mod:`twilight_env.agents._ismcts_nb`).

The algorithm of :meth:`twilight_env.agents.ismcts.ISMCTSAgent.search` (Cowling, Powley & Whitehouse
2012): per iteration a fresh determinization drawn uniformly from the information set
(each cult's unseen cards shuffled among the hidden seats with their public Sun and Moon
counts, R2.5: the distribution of :meth:`twilight_env.rules.infoset.InfoSet.sample_hands`),
descent by the subset-armed UCB ``sign · mean + c · sqrt(ln(availability) / visits)``
(untried legal actions first, one of them at random), expansion of one node, a heuristic
rollout to the end of the deal (:func:`twilight_env.agents._rollout_nb.play_out`, the actions of
:func:`twilight_env.agents.heuristic.decide_state`) and backup of ``z = (side 0 − side 1) / 360``.
Everything runs compiled, so at the time per decision of the Python search it affords
many more iterations (``python benchmarks/ismcts_speed.py`` measures how many).

Optional root prior (progressive bias, Chaslot, Winands, van den Herik, Uiterwijk &
Bouzy 2008, "Progressive strategies for Monte-Carlo tree search"): at the root only,
``prior_weight · P(a) / (n_a + 1)`` is added to the UCB value of action ``a``.

Random draws come from numba's NumPy legacy generator, seeded with one integer drawn
from the caller's Generator, so the same Generator state gives the same result (the
tree differs from the Python search's for the same seed: the draws are different).

``ismcts:backend=numba`` (:class:`twilight_env.agents.ismcts.ISMCTSAgent`) plays with this search.
"""

from __future__ import annotations

from math import isfinite

import numpy as np

from twilight_env.rules.cards import MOON_MASK, SUN_MASK, ids_of
from twilight_env.rules.engine import NEW_MOON, NUM_ACTIONS, NUM_TRICKS

from twilight_env.agents import fast_rollout

DEFAULT_MAX_NODES = 200_000
"""Tree nodes kept at most (about 0.6 KB each); beyond it the search stops expanding and
rolls out from the last stored node. A search allocates ``min(iterations + 1, max_nodes)``."""

SCORINGS = {"team": 0, "individual": 1}
"""What a search's deciders maximize (see :func:`search`) and its code in the compiled search."""

_NB = None


def _nb():
    global _NB
    if _NB is None:
        fast_rollout.resolve_backend("numba")
        from twilight_env.agents import _ismcts_nb

        _NB = _ismcts_nb
    return _NB


def infoset_arrays(infoset) -> tuple:
    """The information set as the compiled search reads it.

    Returns:
        ``(base, hidden, counts, pool_sun, pool_moon)``: ``base`` int64 ``(20,)``, a state
        array (layout of :mod:`twilight_env.agents._rollout_nb`) with the seen hands and all public
        fields and the hidden hands empty; ``hidden`` int64 ``(k,)``, the hidden seats;
        ``counts`` int64 ``(k, 2)``, their public (Sun, Moon) counts; the unseen card ids
        of each cult (int64).

    Raises:
        ValueError: if ``infoset`` is not an :class:`~twilight_env.rules.infoset.InfoSet`, the
            deal is over, or its counts and unseen cards disagree.
    """
    from twilight_env.rules.infoset import InfoSet

    if not isinstance(infoset, InfoSet):
        raise ValueError(f"infoset must be a twilight_env.rules.infoset.InfoSet, got {type(infoset).__name__}")
    if infoset.trick == NUM_TRICKS:
        raise ValueError("the deal is over: there is no decision to search (infoset.trick == 7)")
    k = infoset.known_masks
    three = infoset.num_players == 3
    base = np.array([k[0], k[1], k[2], k[3], infoset.leader, infoset.trick, infoset.place,
                     0 if infoset.phase == "choose" else 1, infoset.holder, *infoset.trick_cards,
                     infoset.pending, *infoset.captured, infoset.neutral, 1 if three else 0], dtype=np.int64)
    hidden = [s for s in range(4) if s != infoset.seat and not (three and s == NEW_MOON)]
    counts = np.array([infoset.hand_counts[s] for s in hidden], dtype=np.int64).reshape(len(hidden), 2)
    unseen = infoset.unseen_mask
    pool0 = np.array(ids_of(unseen & SUN_MASK), dtype=np.int64)
    pool1 = np.array(ids_of(unseen & MOON_MASK), dtype=np.int64)
    if counts[:, 0].sum() != len(pool0) or counts[:, 1].sum() != len(pool1):
        raise ValueError("the information set's hidden card counts and unseen cards disagree")
    return base, np.array(hidden, dtype=np.int64), counts, pool0, pool1


def draw_seed(rng) -> int:
    """A seed in [0, 2**32 - 1) drawn from ``rng`` for a compiled kernel's own generator.

    Raises:
        ValueError: ``rng`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return int(rng.integers(0, 2**32 - 1))


def sample_hands(infoset, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` determinizations drawn by the compiled sampler (the search's own).

    Returns:
        int64 array ``(n, 4)``: hand masks by seat, each row uniform over the deals of
        the unseen cards consistent with ``infoset`` (as
        :meth:`~twilight_env.rules.infoset.InfoSet.sample_hands`).

    Raises:
        ValueError: on a bad ``n`` or ``rng``, or as :func:`infoset_arrays`.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    base, hidden, counts, pool0, pool1 = infoset_arrays(infoset)
    return _nb().sample_many(base, hidden, counts, pool0, pool1, int(n), draw_seed(rng))


def most_visited(visits: np.ndarray, legal_actions) -> int:
    """The legal action with the most root visits (lowest id on ties): how the searches
    (``ismcts``, ``exit-search``, ``guided``) turn root visits into a move."""
    return max(sorted(int(a) for a in legal_actions), key=lambda a: (visits[a], -a))


def check_tree_options(max_depth, trees, iterations=None) -> None:
    """Check ``max_depth`` (int >= 0) and ``trees`` (int >= 1, at most ``iterations``).

    Raises:
        ValueError: naming the bad value and the allowed ones.
    """
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) or max_depth < 0:
        raise ValueError(f"max_depth must be an int >= 0 (0: no limit), got {max_depth!r}")
    if isinstance(trees, bool) or not isinstance(trees, (int, np.integer)) or trees < 1:
        raise ValueError(f"trees must be an int >= 1, got {trees!r}")
    if iterations is not None and trees > iterations:
        raise ValueError(f"trees must be at most iterations ({iterations}): each tree needs an iteration, "
                         f"got trees={trees!r}")


def search(infoset, iterations: int, c: float, rng: np.random.Generator, root_prior: np.ndarray | None = None,
           prior_weight: float = 0.0, *, rollout: str = "heuristic", epsilon: float = 0.0,
           max_nodes: int = DEFAULT_MAX_NODES, scoring: str = "team", max_depth: int = 0,
           trees: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Compiled IS-MCTS from ``infoset`` (see the module docstring).

    Args:
        infoset: the searching player's :class:`~twilight_env.rules.infoset.InfoSet`; the deal
            must not be over. The root's acting seat is public, so its side is fixed.
        iterations: determinizations (tree descents), >= 1. Every iteration takes one
            action at the root, so ``visits.sum() == iterations``.
        c: UCB exploration constant (>= 0, finite), for values in [-1, 1].
        rng: numpy Generator; one integer is drawn from it to seed the search (one per
            tree with ``trees=K``: K, in turn), so the
            same Generator state gives the same result.
        root_prior: None, or float array of shape ``(31,)`` over action ids, finite and
            >= 0 (e.g. a policy's probabilities); used only when ``prior_weight > 0``.
        prior_weight: progressive-bias weight ``w`` (>= 0, finite): the root adds
            ``w · P(a) / (n_a + 1)`` to action ``a``'s UCB value. 0: plain IS-MCTS.
        rollout: ``"heuristic"`` or ``"random"`` (uniformly random legal actions).
        epsilon: with ``"heuristic"``, the chance of a uniformly random action at each
            rollout decision (0..1).
        max_nodes: tree nodes kept at most (>= 1); see :data:`DEFAULT_MAX_NODES`.
        scoring: what a node's decider maximizes. ``"team"`` (R5, R7.5): its side's deal
            score minus the other side's. ``"individual"`` (3 players only, R8): its own
            score line's deal points (the tricks its own seat took; the solo owns seat 0's
            line and also decides for the new moon, seat 2, whose tricks form a fourth
            line) minus the mean of the other three lines, / 360, as the environment's
            reward under ``three_player_scoring="individual"``. The rollout policy stays
            the team heuristic.
        max_depth: decisions from the root on which the tree keeps statistics (>= 0):
            with ``D > 0`` no node deeper than ``D - 1`` decisions below the root is
            stored, and each iteration rolls out from its first ``D`` tree actions
            (``D = 1``: bandit over the root's actions with rollouts, no tree below).
            Opponents' and the partner's nodes deep in a single-observer tree average
            over determinizations they could not tell apart (Cowling et al. 2012,
            strategy fusion); a shallow tree keeps the search to the statistics near
            the root. 0: no limit (the plain search).
        trees: root-parallel ensemble (>= 1, at most ``iterations``): ``trees``
            independent searches of ``iterations // trees`` iterations each (the first
            ``iterations % trees`` one more), each seeded with its own integer from
            ``rng``, and the root statistics summed (Cowling et al. 2012 discuss
            ensembles of determinized searches). 1: one search.

    Returns:
        ``(visits, values)``, both of shape ``(31,)`` over action ids: ``visits`` int64,
        the root's visits per action (summed over the ``trees``); ``values`` float64, the mean outcome
        ``(side 0 − side 1 deal score) / 360`` after each action from the view of the
        root acting seat's side (a holder decides for its own side; 3 players: the solo
        and the new moon are side 0, R7.3), 0 where unvisited; under ``"individual"``
        scoring the mean outcome of the root acting seat's score line.

    Raises:
        ValueError: on a bad argument (the message names it and the allowed values), or
            numba missing.
    """
    from twilight_env.agents.pimc import check_rollout_options

    if (isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or not
            1 <= iterations < 2**31 - 1):
        raise ValueError(f"iterations must be an int in [1, 2**31 - 2], got {iterations!r}")
    if isinstance(c, bool) or not isinstance(c, (int, float, np.floating)) or not isfinite(c) or c < 0:
        raise ValueError(f"c must be a finite number >= 0, got {c!r}")
    prior, w = check_prior(root_prior, prior_weight)
    prior = np.zeros(NUM_ACTIONS, dtype=np.float64) if prior is None else np.ascontiguousarray(prior)
    check_rollout_options(rollout, epsilon)
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer)) or max_nodes < 1:
        raise ValueError(f"max_nodes must be an int >= 1, got {max_nodes!r}")
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {sorted(SCORINGS)}, got {scoring!r}")
    check_tree_options(max_depth, trees, iterations)
    eps = 1.0 if rollout == "random" else float(epsilon)
    base, hidden, counts, pool0, pool1 = infoset_arrays(infoset)
    if scoring == "individual" and infoset.num_players != 3:
        raise ValueError("scoring='individual' is a 3-player variant (R8) and this is a "
                         f"{infoset.num_players}-player deal; play it with 3 players (e.g. --players 3) or use "
                         "scoring='team'")
    nb = _nb()
    visits = np.zeros(NUM_ACTIONS, dtype=np.int64)
    value = np.zeros(NUM_ACTIONS, dtype=np.float64)
    per, extra = divmod(int(iterations), int(trees))
    for t in range(int(trees)):
        try:
            # fresh pools per tree (the search shuffles them in place): trees are independent searches
            v, s, _ = nb.search(base, hidden, counts, pool0.copy(), pool1.copy(), per + (t < extra), float(c),
                                fast_rollout.params(), eps, prior, w, int(max_nodes), draw_seed(rng), SCORINGS[scoring],
                                int(max_depth))
        except SystemError as e:
            fast_rollout.reraise_interrupt(e)
            raise
        visits += v
        value += s
    acting = base[8] if base[7] == 1 else (base[4] + base[6]) & 3
    sign = 1.0 if acting % 2 == 0 or scoring == "individual" else -1.0
    values = np.zeros(NUM_ACTIONS, dtype=np.float64)
    seen = visits > 0
    values[seen] = sign * value[seen] / visits[seen]
    return visits, values


def check_prior(root_prior, prior_weight) -> tuple[np.ndarray | None, float]:
    """``(prior array or None, weight)`` after checking them: ``root_prior`` None or a
    finite, non-negative float array of shape ``(NUM_ACTIONS,)``, ``prior_weight`` a finite
    number >= 0 (> 0 only with a prior). Used by :func:`search` and by
    :meth:`twilight_env.agents.ismcts.ISMCTSAgent.search`.

    Raises:
        ValueError: naming the argument and what is allowed.
    """
    if (isinstance(prior_weight, bool) or not isinstance(prior_weight, (int, float, np.floating))
            or not isfinite(prior_weight) or prior_weight < 0):
        raise ValueError(f"prior_weight must be a finite number >= 0, got {prior_weight!r}")
    if root_prior is None:
        if prior_weight > 0:
            raise ValueError(f"prior_weight > 0 needs root_prior, a float array of shape ({NUM_ACTIONS},)")
        return None, 0.0
    try:
        prior = np.asarray(root_prior, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"root_prior must be None or a float array of shape ({NUM_ACTIONS},), got "
                         f"{type(root_prior).__name__} {root_prior!r:.40}") from None
    if prior.shape != (NUM_ACTIONS,):
        raise ValueError(f"root_prior must have shape ({NUM_ACTIONS},) (one entry per action id), got {prior.shape}")
    if not np.all(np.isfinite(prior)) or np.any(prior < 0):
        raise ValueError("root_prior must be finite and >= 0")
    return prior, float(prior_weight)


__all__ = ["DEFAULT_MAX_NODES", "SCORINGS", "check_prior", "check_tree_options", "infoset_arrays", "most_visited", "sample_hands",
           "search"]
