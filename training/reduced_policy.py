"""A learned policy on a reduced-deck game tree: its behaviour table and its NashConv.

A network agent reads the env observation (:func:`twilight_env.obs.encoding.observation_and_mask`,
``OBS_SIZE`` float32 entries, and the 31 action flags) of the deciding seat (R2.5, R7.1;
3 players: the solo for the new moon, R7.3). The exact tools of
:mod:`twilight_env.training.reduced_solve` read a policy as one probability per
(information set, action) slot of the ``"seats"`` model. This module links the two:

- :func:`infoset_observations` replays, for every information set, one of its nodes from its
  deal and first leader (``tree.hands``, ``tree.leaders``, the actions on the way,
  ``tree.action`` / ``tree.parent``) with the engine
  (:class:`~twilight_env.rules.engine.ReducedState`) and encodes that seat's observation,
  as the env does with ``tricks=T``. Every node of a set gives the same vector, and two
  sets give two vectors (tests on the 1-trick games), so the table holds exactly the
  network's policy.
- :func:`policy_table` asks a ``probs_fn`` for the action probabilities at those vectors,
  batch by batch, and writes them as the behaviour policy of each set.
- :func:`learned_nash_conv` is :func:`~twilight_env.training.reduced_solve.nash_conv` of that
  table: the sum over players of what a best response to the others gains (OpenSpiel's
  NashConv), in deal points (R5).

The replay walks each deal's tree depth first, through the representative nodes and their
ancestors only, so the cost is one engine step per such node and one encoding per set
(the 1-trick games: well under a second; 2 tricks in 3 players, 7,913,610 sets:
:func:`learned_nash_conv` took 465-478 s and 1.7 GiB on a shared 2-core machine, the tree
built beforehand in 112 s).
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

from twilight_env.obs.encoding import OBS_SIZE, observation_and_mask
from twilight_env.rules.engine import NUM_ACTIONS, ReducedState
from twilight_env.training.reduced_solve import GameTree, Model, nash_conv

OBS_DIM = OBS_SIZE
"""Length of the observation vector a ``probs_fn`` receives (the env's ``OBS_SIZE``)."""

ProbsFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``probs_fn(obs (B, OBS_DIM) float32, mask (B, 31) bool) -> (B, 31)`` action probabilities."""


def representatives(tree: GameTree, model: Model) -> np.ndarray:
    """(I,) int64: for each information set of ``model``, its first node in the tree's order.

    Raises:
        ValueError: when ``model`` is not the ``"seats"`` model of ``tree`` (the teams
            model's sets join two seats' hands, which no single observation shows).
    """
    _check(tree, model)
    dec = np.flatnonzero(model.iset >= 0)
    _, first = np.unique(model.iset[dec], return_index=True)
    return dec[first].astype(np.int64)


def _check(tree: GameTree, model: Model) -> None:
    if model.name != "seats":
        raise ValueError(f"a learned policy is read on the 'seats' model (one seat's observation per set); "
                         f"got model {model.name!r}")
    if len(model.iset) != tree.num_nodes:
        raise ValueError(f"the model has {len(model.iset)} nodes and the tree {tree.num_nodes}: "
                         "the model must come from make_model(tree, 'seats')")


def _children(tree: GameTree, needed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR lists of the ``needed`` children of every node: ``(start (N+1,), child ids)``."""
    kids = np.flatnonzero(needed & (tree.parent >= 0))
    kids = kids[np.argsort(tree.parent[kids], kind="stable")]
    start = np.zeros(tree.num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(tree.parent[kids], minlength=tree.num_nodes), out=start[1:])
    return start, kids


def infoset_observations(tree: GameTree, model: Model, batch: int = 4096,
                         nodes: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The observation of the deciding seat at chosen nodes, in batches.

    Args:
        tree: a reduced-deck game (:func:`~twilight_env.training.reduced_solve.build_tree`).
        model: ``make_model(tree, "seats")``.
        batch: at most this many rows per batch (>= 1).
        nodes: decision nodes to encode (default: :func:`representatives`, one per set).

    Yields:
        ``(node ids (b,) int64, obs (b, OBS_DIM) float32, mask (b, 31) bool)``; the mask
        flags the legal actions (R3.2, R3.5). Each node appears once, in no fixed order.

    Raises:
        ValueError: a bad ``batch``, a model other than the tree's seats model, or a node
            that is not a decision node.
    """
    if not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch must be a positive int, got {batch!r}")
    nodes = representatives(tree, model) if nodes is None else np.asarray(nodes, dtype=np.int64)
    _check(tree, model)
    if len(nodes) and (nodes.min() < 0 or nodes.max() >= tree.num_nodes or (tree.seat[nodes] < 0).any()):
        raise ValueError("nodes must be decision nodes of the tree (seat >= 0)")
    want = np.zeros(tree.num_nodes, dtype=bool)
    want[nodes] = True
    needed = want.copy()
    for lo, hi in reversed(tree.levels[1:]):  # ancestors of wanted nodes
        sel = np.flatnonzero(needed[lo:hi]) + lo
        needed[tree.parent[sel]] = True
    start, kids = _children(tree, needed)
    ids, obs, mask = [], np.empty((batch, OBS_DIM), np.float32), np.empty((batch, NUM_ACTIONS), bool)
    lo, hi = tree.levels[0]
    for r in np.flatnonzero(needed[lo:hi]) + lo:
        root_state = ReducedState(tuple(int(h) for h in tree.hands[tree.root[r]]), int(tree.leaders[tree.root[r]]),
                                  tree.num_players)
        stack = [(int(r), root_state)]
        while stack:
            node, st = stack.pop()
            if want[node]:
                vec, m = observation_and_mask(st, int(tree.seat[node]))
                obs[len(ids)] = vec
                mask[len(ids)] = m != 0
                ids.append(node)
                if len(ids) == batch:
                    yield np.array(ids, dtype=np.int64), obs.copy(), mask.copy()
                    ids = []
            for child in kids[start[node]:start[node + 1]]:
                nxt = st.clone()
                nxt.apply(int(tree.action[child]))
                stack.append((int(child), nxt))
    if ids:
        n = len(ids)
        yield np.array(ids, dtype=np.int64), obs[:n].copy(), mask[:n].copy()


def policy_table(tree: GameTree, model: Model, probs_fn: ProbsFn, batch: int = 4096) -> np.ndarray:
    """The behaviour policy of ``probs_fn`` at every information set of ``model``.

    Args:
        tree: a reduced-deck game (``build_tree``).
        model: ``make_model(tree, "seats")``.
        probs_fn: ``(obs (B, OBS_DIM) float32, mask (B, 31) bool) -> (B, 31)`` action
            probabilities (any float dtype); only the legal entries are read, and they are
            normalised to sum to 1 over the legal actions.
        batch: rows per call of ``probs_fn`` (>= 1).

    Returns:
        (model.num_slots,) float64: at slot ``iset_offset[i] + k`` the probability of the
        ``k``-th legal action (ascending id) of set ``i``, as
        :func:`~twilight_env.training.reduced_solve.nash_conv` reads a policy.

    Raises:
        ValueError: a model other than the tree's seats model, a bad ``batch``, or a
            ``probs_fn`` answer of the wrong shape, with a negative or non-finite legal
            entry, or with no mass on the legal actions.
    """
    _check(tree, model)
    table = np.full(model.num_slots, np.nan)
    for nodes, obs, mask in infoset_observations(tree, model, batch):
        p = np.asarray(probs_fn(obs, mask), dtype=np.float64)
        if p.shape != (len(nodes), NUM_ACTIONS):
            raise ValueError(f"probs_fn must return shape ({len(nodes)}, {NUM_ACTIONS}), got {p.shape}")
        legal = np.where(mask, p, 0.0)
        if not np.isfinite(legal).all() or (legal < 0).any():
            raise ValueError("probs_fn returned a negative or non-finite probability on a legal action")
        total = legal.sum(axis=1)
        if (total <= 0).any():
            raise ValueError("probs_fn put no probability on the legal actions of some observation")
        legal /= total[:, None]
        sets = model.iset[nodes]
        sizes = model.iset_offset[sets + 1] - model.iset_offset[sets]
        bad = np.flatnonzero(mask.sum(axis=1) != sizes)
        if len(bad):
            raise ValueError(f"the observation's legal actions at node {nodes[bad[0]]} differ from the tree's")
        # a set's slots are its legal actions in ascending id, as the mask's True entries row by row
        starts = np.zeros(len(sets), dtype=np.int64)
        np.cumsum(sizes[:-1], out=starts[1:])
        idx = np.repeat(model.iset_offset[sets] - starts, sizes) + np.arange(int(sizes.sum()))
        table[idx] = legal[mask]
    return table


def learned_nash_conv(tree: GameTree, model: Model, probs_fn: ProbsFn,
                      batch: int = 4096) -> tuple[float, np.ndarray]:
    """NashConv of the policy of ``probs_fn`` on a reduced-deck game (OpenSpiel's definition).

    Args:
        tree, model, probs_fn, batch: as :func:`policy_table`.

    Returns:
        ``(nash_conv, per_player)``: the sum over the model's players of (best response
        value - the policy's value), and the (P,) float64 terms, in deal points (R5; divide
        by 360 for OpenSpiel's units). 0 exactly at a Nash equilibrium.

    Raises:
        ValueError: as :func:`policy_table`.
    """
    _, on, br = nash_conv(tree, model, policy_table(tree, model, probs_fn, batch))
    per_player = br - on
    return float(per_player.sum()), per_player
