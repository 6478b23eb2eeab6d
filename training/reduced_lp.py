"""The two-player (``"teams"``) reduced-deck games solved exactly by the sequence-form linear program.

Koller, Megiddo and von Stengel (1996), solved with SciPy's HiGHS; values in deal points (R5).
"""

from __future__ import annotations

import numpy as np

from twilight_env.training.reduced_tree import GameTree, Model, uniform_policy, utilities


def solve_lp(tree: GameTree, model: Model) -> tuple[float, np.ndarray, np.ndarray]:
    """The exact value and an equilibrium of a two-player zero-sum model (``"teams"``).

    Sequence form (Koller, Megiddo and von Stengel 1996): the Moon player's realisation
    plan ``x`` and one dual value per Sun information set; maximise the Moon value subject
    to every Sun sequence's counterfactual constraint. Solved twice (each side as the
    maximiser) with SciPy's HiGHS to get both sides' strategies.

    Returns:
        ``(value, moon_policy, sun_policy)``: the Moon side's value (deal points) and the
        two strategies as one (S,) policy each (entries of the other side's sets uniform).

    Raises:
        ValueError: unless the model has 2 players.
        RuntimeError: when the solver does not report an optimum.
    """
    if model.num_players != 2:
        raise ValueError("solve_lp needs a two-player model (model='teams')")
    util = utilities(tree, model)
    val0, x = _lp_side(tree, model, util, 0)
    val1, y = _lp_side(tree, model, util, 1)
    if abs(val0 + val1) > 1e-6 * max(1.0, abs(val0)):
        raise RuntimeError(f"the two linear programs disagree: {val0} and {-val1}")
    return val0, x, y


def _sequences(tree: GameTree, model: Model, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node, player ``p``'s last sequence on the way to it (slot + 1; 0 = empty
    sequence), and per information set of ``p`` its parent sequence."""
    seq = np.zeros(tree.num_nodes, dtype=np.int64)
    for lo, hi in tree.levels[1:]:
        par = tree.parent[lo:hi]
        own = model.player[par] == p
        seq[lo:hi] = np.where(own, model.slot[lo:hi] + 1, seq[par])
    dec = model.iset >= 0
    parent_seq = np.full(model.num_isets, -1, dtype=np.int64)
    parent_seq[model.iset[dec]] = seq[dec]
    return seq, parent_seq


def _lp_side(tree: GameTree, model: Model, util: np.ndarray, p: int) -> tuple[float, np.ndarray]:
    """Maximise player ``p``'s value; returns it and ``p``'s behaviour policy."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, hstack, vstack

    o = 1 - p
    S = model.num_slots
    seq_p, par_p = _sequences(tree, model, p)
    seq_o, par_o = _sequences(tree, model, o)
    own_sets = np.flatnonzero(model.iset_player == p)
    opp_sets = np.flatnonzero(model.iset_player == o)
    end = np.flatnonzero(tree.seat < 0)
    # payoff: A[seq_p, seq_o] = sum of chance x utility of p
    A = coo_matrix((util[p, end] * tree.root_prob, (seq_p[end], seq_o[end])), shape=(S + 1, S + 1)).tocsr()
    # p's constraints E x = e: x_empty = 1; per own set: sum of its slots - parent = 0
    rows, cols, vals = [0], [0], [1.0]
    for k, i in enumerate(own_sets, start=1):
        a, b = model.iset_offset[i], model.iset_offset[i + 1]
        rows += [k] * (b - a + 1)
        cols += list(range(a + 1, b + 1)) + [par_p[i]]
        vals += [1.0] * (b - a) + [-1.0]
    E = coo_matrix((vals, (rows, cols)), shape=(len(own_sets) + 1, S + 1)).tocsr()
    # opponent's F: same form; q has one entry per opponent set plus the empty sequence
    rows, cols, vals = [0], [0], [1.0]
    for k, i in enumerate(opp_sets, start=1):
        a, b = model.iset_offset[i], model.iset_offset[i + 1]
        rows += [k] * (b - a + 1)
        cols += list(range(a + 1, b + 1)) + [par_o[i]]
        vals += [1.0] * (b - a) + [-1.0]
    F = coo_matrix((vals, (rows, cols)), shape=(len(opp_sets) + 1, S + 1)).tocsr()
    # only the opponent's own sequences (and the empty one) are constraints; drop the others
    opp_cols = np.concatenate([[0], np.flatnonzero(np.isin(np.arange(S), _slots_of(model, opp_sets))) + 1])
    own_cols = np.concatenate([[0], np.flatnonzero(np.isin(np.arange(S), _slots_of(model, own_sets))) + 1])
    A_sub = A[own_cols][:, opp_cols]
    E_sub = E[:, own_cols]
    F_sub = F[:, opp_cols]
    nq = F_sub.shape[0]
    nx = len(own_cols)
    c = np.concatenate([np.zeros(nx), -np.eye(1, nq, 0).ravel()])
    A_ub = hstack([-A_sub.T, F_sub.T]).tocsr()
    A_eq = hstack([E_sub, coo_matrix((E_sub.shape[0], nq))]).tocsr()
    b_eq = np.zeros(E_sub.shape[0])
    b_eq[0] = 1.0
    bounds = [(0, None)] * nx + [(None, None)] * nq
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"the linear program did not solve: {res.message}")
    x = np.zeros(S + 1)
    x[own_cols] = res.x[:nx]
    # realisation plan -> behaviour: x(slot) / x(parent sequence of its set)
    policy = uniform_policy(model)
    for i in own_sets:
        a, b = model.iset_offset[i], model.iset_offset[i + 1]
        tot = x[par_p[i]]
        if tot > 1e-12:
            policy[a:b] = np.maximum(x[a + 1:b + 1], 0.0) / max(x[a + 1:b + 1].sum(), 1e-300)
    return float(-res.fun), policy


def _slots_of(model: Model, sets: np.ndarray) -> np.ndarray:
    sizes = model.iset_offset[sets + 1] - model.iset_offset[sets]
    starts = np.zeros(len(sets), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:]) if len(sets) else None
    return np.repeat(model.iset_offset[sets] - starts, sizes) + np.arange(int(sizes.sum()))
