"""Policies evaluated on a reduced-deck game tree: reach, values, best responses, NashConv.

A policy is an (S,) float64 array over the slots (information set, action) of a
:class:`~twilight_env.training.reduced_tree.Model`. Everything runs level by level over the
arrays of the :class:`~twilight_env.training.reduced_tree.GameTree`. Values are in deal
points (R5), averaged over the uniform deal (R2.3) and, in 4 players, the uniform first
leader; NashConv is OpenSpiel's (the sum over players of what a best response gains), in deal
points too (OpenSpiel's returns are these divided by 360).
"""

from __future__ import annotations

import numpy as np

from twilight_env.training.reduced_tree import GameTree, Model, utilities


def reach(tree: GameTree, model: Model, policy: np.ndarray) -> np.ndarray:
    """(P, N) float64: each player's own probability of its actions on the way to each node."""
    r = np.ones((model.num_players, tree.num_nodes))
    for lo, hi in tree.levels[1:]:
        par = tree.parent[lo:hi]
        r[:, lo:hi] = r[:, par]
        who = model.player[par]
        r[who, np.arange(lo, hi)] *= policy[model.slot[lo:hi]]
    return r


def values(tree: GameTree, model: Model, policy: np.ndarray, util: np.ndarray, player: int | None = None):
    """Expected utility from each node under ``policy``: (P, N) float64, or (N,) for one ``player``."""
    if player is not None:
        return _values_row(tree, model, policy, util[player])
    return np.stack([_values_row(tree, model, policy, util[p]) for p in range(model.num_players)])


def _values_row(tree: GameTree, model: Model, policy: np.ndarray, util_row: np.ndarray) -> np.ndarray:
    v = np.where(tree.seat < 0, util_row, 0.0)
    edge = policy[np.maximum(model.slot, 0)]
    _back_up(tree, v, edge)
    return v


def _back_up(tree: GameTree, v: np.ndarray, edge: np.ndarray) -> None:
    """``v`` of every decision node += sum over its children of ``edge`` x child's ``v``, level by level."""
    for d in range(len(tree.levels) - 1, 0, -1):
        lo, hi = tree.levels[d]
        plo, phi = tree.levels[d - 1]
        v[plo:phi] += np.bincount(tree.parent[lo:hi] - plo, weights=edge[lo:hi] * v[lo:hi], minlength=phi - plo)


def root_value(tree: GameTree, v: np.ndarray) -> np.ndarray:
    """(P,) expected utility at the root chance node (uniform over roots)."""
    lo, hi = tree.levels[0]
    return v[..., lo:hi].sum(axis=-1) * tree.root_prob


def _argmax_sets(sets: np.ndarray, q: np.ndarray, offset: np.ndarray, out: np.ndarray, base: int = 0) -> None:
    """For each information set in ``sets``: ``out`` 1 at its first action of largest ``q``
    (``q[k]`` for slot ``base + k``), 0 at its other actions."""
    if len(sets) == 0:
        return
    sizes = offset[sets + 1] - offset[sets]
    starts = np.zeros(len(sets), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    idx = np.repeat(offset[sets] - starts, sizes) + np.arange(int(sizes.sum()))
    vals = q[idx - base]
    seg = np.repeat(np.arange(len(sets)), sizes)
    top = np.maximum.reduceat(vals, starts)
    cand = np.flatnonzero(vals >= top[seg])
    _, first = np.unique(seg[cand], return_index=True)
    out[idx] = 0.0
    out[idx[cand[first]]] = 1.0


def best_response_value(tree: GameTree, model: Model, policy: np.ndarray, util: np.ndarray, player: int) -> float:
    """Value (at the root, deal points) of ``player``'s best response to the others' ``policy``."""
    return best_response(tree, policy[np.maximum(model.slot, 0)], model.player == player, model, util[player])


def best_response(tree: GameTree, edge_prob: np.ndarray, responder: np.ndarray, resp_model: Model,
                  util_row: np.ndarray) -> float:
    """Value of a best response, the other decisions fixed.

    Bottom-up over the levels: at each of the responder's information sets (of
    ``resp_model``), the action with the largest sum over the set's nodes of (chance and the
    others' reach) x value; every node of a set lies on one level, since a set's public
    sequence fixes its depth. The responder's sets must have perfect recall (both models'
    do: a team that shares information remembers both members' hands).

    Args:
        tree: the game.
        edge_prob: (N,) probability of the action into each node where someone else decides
            (ignored where the responder decides).
        responder: (N,) bool, the decision nodes of the responder.
        resp_model: the model whose ``iset`` and ``slot`` are the responder's sets and actions.
        util_row: (N,) the responder's utility at the end nodes.

    Returns:
        the best response's value (deal points).
    """
    n = tree.num_nodes
    others = np.full(n, tree.root_prob)
    for lo, hi in tree.levels[1:]:
        par = tree.parent[lo:hi]
        others[lo:hi] = others[par] * np.where(responder[par], 1.0, edge_prob[lo:hi])
    v = np.where(tree.seat < 0, util_row, 0.0)
    br = np.zeros(resp_model.num_slots)
    for d in range(len(tree.levels) - 1, 0, -1):
        lo, hi = tree.levels[d]
        plo, phi = tree.levels[d - 1]
        par = tree.parent[lo:hi]
        mine = responder[par]
        slots = resp_model.slot[lo:hi]
        slo, shi = resp_model.slot_levels[d - 1]
        q = np.bincount(slots[mine] - slo, weights=others[par[mine]] * v[lo:hi][mine], minlength=shi - slo)
        _argmax_sets(np.unique(resp_model.iset[par[mine]]), q, resp_model.iset_offset, br, slo)
        w = np.where(mine, br[np.maximum(slots, 0)], edge_prob[lo:hi])
        v[plo:phi] += np.bincount(par - plo, weights=w * v[lo:hi], minlength=phi - plo)
    lo, hi = tree.levels[0]
    return float(v[lo:hi].sum() * tree.root_prob)


def team_bounds(tree: GameTree, seats: Model, teams: Model, policy: np.ndarray) -> tuple[float, float]:
    """Bounds (Moon - Sun, deal points) from a seats-model ``policy``: the Sun side's best
    response with shared information to the Moon seats' strategies (lower), and the Moon
    side's to the Sun seats' (upper). Module docstring."""
    edge = policy[np.maximum(seats.slot, 0)]
    util = utilities(tree, teams)
    lower = -best_response(tree, edge, teams.player == 1, teams, util[1])
    upper = best_response(tree, edge, teams.player == 0, teams, util[0])
    return lower, upper


def nash_conv(tree: GameTree, model: Model, policy: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """NashConv of ``policy`` (OpenSpiel's: sum over players of best response value minus
    the policy's value), in deal points; also the policy's values and the best responses'."""
    util = utilities(tree, model)
    on = np.array([root_value(tree, values(tree, model, policy, util, p)) for p in range(model.num_players)])
    br = np.array([best_response_value(tree, model, policy, util, p) for p in range(model.num_players)])
    return float((br - on).sum()), on, br
