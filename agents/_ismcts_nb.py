"""Compiled single-observer IS-MCTS (numba; :mod:`twilight_env.agents.fast_ismcts` loads it).

The same algorithm as :meth:`twilight_env.agents.ismcts.ISMCTSAgent.search` (Cowling, Powley &
Whitehouse 2012, "Information Set Monte Carlo Tree Search", IEEE Trans. Comput. Intell.
AI Games 4(2)), with the determinization, the tree and the rollout all in compiled code.
The engine steps (:func:`twilight_env.agents._rollout_nb.apply`, :func:`~twilight_env.agents._rollout_nb.legal_into`)
and the heuristic rollout (:func:`~twilight_env.agents._rollout_nb.play_out`) are imported from
:mod:`twilight_env.agents._rollout_nb`, so the state array layout is the same (see there).

Determinization: the information set travels as a *base* state array (hidden hands
empty, the seen hands and every public field filled in), the hidden seats, their public
Sun and Moon counts (R2.5) and the unseen cards of each cult. Each world shuffles each
cult's unseen cards (Fisher-Yates) and deals them in order to the hidden seats' slots:
uniform over all consistent deals, the distribution of
:meth:`twilight_env.rules.infoset.InfoSet.sample_hands`.

Tree: preallocated arrays, one row per information-set node (the action sequence from
the root) and one column per action id (0..30, engine encoding): ``child`` (-1 untried,
-2 tried but the node pool was full, else the child's row), ``visits``, ``avail``
(the node's visits in which the action was legal, the subset-armed bandit) and ``value``
(sum of outcomes for side 0, deal score difference / 360). When the pool is full no
node is added; the iteration rolls out from there.

Random draws: NumPy's legacy generator as numba implements it (``np.random.seed``,
``randint``, ``random``), seeded once per search by the caller, so a search is a pure
function of its arguments.
"""

from __future__ import annotations

from math import log, sqrt

import numba

from twilight_env.agents._nb_options import NO_REFCOUNT
import numpy as np

from twilight_env.agents._rollout_nb import (HOLDER, LEADER, MAX_ACTIONS, PHASE, PLACE, ST_SIZE, TRICK, apply, decide,
                                legal_into, new_scratch, play_out, seat_score, side_scores)

NUM_ACTIONS = 31
"""Action ids 0..30 (engine encoding: cards 0..27, requests 28..30)."""
NO_CHILD = -1
FULL = -2
TEAM = 0
"""``scoring`` code: side 0 − side 1 (R5, R7.5)."""
INDIVIDUAL = 1
"""``scoring`` code, 3 players: each score line's own deal points − the mean of the other three (R8)."""
LOG_TABLE = 1 << 22
"""Logarithms of availability counts below this are looked up in a table built per search."""


@numba.njit(cache=True)
def sample_into(base, hidden, counts, pool0, pool1, st):  # pragma: no cover - compiled
    """Write one uniform determinization into ``st``: ``base`` copied, then each cult's
    pool (``pool0`` Sun ids, ``pool1`` Moon ids; shuffled in place) dealt in order to
    the seats ``hidden`` with ``counts[i, cult]`` slots each."""
    for i in range(ST_SIZE):
        st[i] = base[i]
    for cult in range(2):
        pool = pool0 if cult == 0 else pool1
        n = pool.shape[0]
        for i in range(n - 1, 0, -1):  # Fisher-Yates
            j = np.random.randint(0, i + 1)
            t = pool[i]
            pool[i] = pool[j]
            pool[j] = t
        k = 0
        for h in range(hidden.shape[0]):
            s = hidden[h]
            m = 0
            for _ in range(counts[h, cult]):
                m |= 1 << pool[k]
                k += 1
            st[s] |= m


@numba.njit(cache=True)
def sample_many(base, hidden, counts, pool0, pool1, n, seed):  # pragma: no cover - compiled
    """``n`` determinizations as hand masks, int64 array ``(n, 4)`` (after seeding)."""
    np.random.seed(seed)
    out = np.empty((n, 4), dtype=np.int64)
    st = np.empty(ST_SIZE, dtype=np.int64)
    for i in range(n):
        sample_into(base, hidden, counts, pool0, pool1, st)
        for s in range(4):
            out[i, s] = st[s]
    return out


@numba.njit(cache=True)
def _roll_out(st, acts, params, epsilon, legal, iscratch, fscratch):  # pragma: no cover - compiled
    """Play ``st`` to the end: the heuristic, or with chance ``epsilon`` a uniformly random
    legal action (``epsilon = 1``: the ``random`` rollout policy)."""
    if epsilon == 0.0:
        play_out(st, acts, params)
        return
    while st[TRICK] != 7:
        nl = legal_into(st, legal)
        if np.random.random() < epsilon:
            a = legal[np.random.randint(0, nl)] if nl > 1 else legal[0]
        else:
            a = decide(st, legal, nl, params, iscratch, fscratch)
        apply(st, a)


# The steps of an iteration take the tree's arrays; they are compiled without numba's
# reference counting (``_nrt=False``: they only index arrays, they allocate none). With it,
# each array argument costs a reference count update per call, and the search measured
# 1.5-4% slower (5.5% with the steps inlined, ``inline="always"``).


@numba.njit(cache=True, **NO_REFCOUNT)
def _ucb_child(node, legal, nl, sign, c, visits, avail, value, logs, prior, prior_weight):  # pragma: no cover
    """The legal action of a fully tried ``node`` with the highest UCB score (the
    subset-armed bandit: the log term counts the visits in which the action was legal);
    ties go to the first. ``sign``: +1 to maximize the stored values, -1 to minimize; the
    root adds ``prior_weight * prior[a] / (n + 1)`` when ``prior_weight`` is not 0."""
    n_log = logs.shape[0]
    best_a = legal[0]
    best_u = 0.0
    for i in range(nl):
        a = legal[i]
        n = visits[node, a]
        m = avail[node, a]
        u = sign * value[node, a] / n + c * sqrt((logs[m] if m < n_log else log(m)) / n)
        if prior_weight != 0.0 and node == 0:
            u += prior_weight * prior[a] / (n + 1)
        if i == 0 or u > best_u:
            best_a = a
            best_u = u
    return best_a


@numba.njit(cache=True, **NO_REFCOUNT)
def _descend(st, child, visits, avail, value, logs, n_nodes, max_depth, c, individual, prior, prior_weight,
             legal, untried, path_node, path_act, path_line):  # pragma: no cover - compiled
    """Selection and expansion of one iteration in the world ``st`` (played in place): from
    the root, the UCB child (:func:`_ucb_child`) while every legal action was tried, then
    one untried action at random, stored as a new node while the pool has room and the
    depth is below ``max_depth`` (else marked ``FULL``). The path (node, action, acting
    seat) goes to ``path_*``. Returns ``(depth, n_nodes)``: the path's length and the
    nodes in use."""
    node = 0
    depth = 0
    nn = child.shape[0]
    while st[TRICK] != 7:
        acting = st[HOLDER] if st[PHASE] == 1 else (st[LEADER] + st[PLACE]) & 3
        nl = legal_into(st, legal)
        nu = 0
        for i in range(nl):
            a = legal[i]
            avail[node, a] += 1
            if child[node, a] == NO_CHILD:
                untried[nu] = a
                nu += 1
        if nu > 0:
            a = untried[np.random.randint(0, nu)] if nu > 1 else untried[0]
            if n_nodes < nn and (max_depth == 0 or depth + 1 < max_depth):
                child[node, a] = n_nodes
                n_nodes += 1
            else:
                child[node, a] = FULL
            path_node[depth] = node
            path_act[depth] = a
            path_line[depth] = acting
            depth += 1
            apply(st, a)
            break
        sign = 1.0 if individual or (acting & 1) == 0 else -1.0
        best_a = _ucb_child(node, legal, nl, sign, c, visits, avail, value, logs, prior, prior_weight)
        path_node[depth] = node
        path_act[depth] = best_a
        path_line[depth] = acting
        depth += 1
        apply(st, best_a)
        nxt = child[node, best_a]
        if nxt < 0:  # tried, but no node was stored (pool full): roll out from here
            break
        node = nxt
    return depth, n_nodes


@numba.njit(cache=True, **NO_REFCOUNT)
def _backpropagate(st, individual, depth, path_node, path_act, path_line, visits, value,
                   line_value):  # pragma: no cover - compiled
    """Add the outcome of the finished deal ``st`` to each edge of the path: side 0's
    score difference / 360 (R5, R7.5), or under ``individual`` the acting seat's line
    against the mean of the other three / 360 (R8)."""
    if individual:
        total = 0.0
        for s in range(4):
            line_value[s] = seat_score(st, s)
            total += line_value[s]
        for s in range(4):
            line_value[s] = (line_value[s] - (total - line_value[s]) / 3.0) / 360.0
        for d in range(depth):
            visits[path_node[d], path_act[d]] += 1
            # the solo decides for seats 0 and 2 and owns seat 0's line (R7.3, R8)
            value[path_node[d], path_act[d]] += line_value[0 if path_line[d] == 2 else path_line[d]]
    else:
        s0, s1 = side_scores(st)
        z = (s0 - s1) / 360.0
        for d in range(depth):
            visits[path_node[d], path_act[d]] += 1
            value[path_node[d], path_act[d]] += z


@numba.njit(cache=True)
def search(base, hidden, counts, pool0, pool1, iterations, c, params, epsilon, prior, prior_weight, max_nodes,
           seed, scoring=TEAM, max_depth=0):  # pragma: no cover - compiled
    """Run ``iterations`` IS-MCTS iterations from the information set given as arrays.

    ``scoring``: :data:`TEAM` (values are side 0's outcome; selection flips the sign for
    side 1) or :data:`INDIVIDUAL` (3 players, R8: each value is the outcome of the score
    line of the seat that acted there, the solo's for seats 0 and 2, the Sun player's own
    for seats 1 and 3, as ``(own − mean of the other three lines) / 360``).

    ``max_depth`` > 0 keeps statistics for the first ``max_depth`` decisions below the
    root only: a node at that depth is never stored (its edge is marked ``FULL``), and
    the iteration rolls out from there. 0: no limit.

    Returns ``(visits, value, nodes)``: the root's visits (int64, 31) and value sums
    (float64, 31: side 0's under :data:`TEAM`, the root acting line's under
    :data:`INDIVIDUAL`), and the number of tree nodes used.

    Each iteration: a determinization (:func:`sample_into`), selection and expansion
    (:func:`_descend`), the rollout (:func:`_roll_out`) and the backup
    (:func:`_backpropagate`).
    """
    np.random.seed(seed)
    nn = iterations + 1
    if nn > max_nodes:
        nn = max_nodes
    child = np.full((nn, NUM_ACTIONS), NO_CHILD, dtype=np.int32)
    visits = np.zeros((nn, NUM_ACTIONS), dtype=np.int32)  # < 2**31: iterations is checked by the caller
    avail = np.zeros((nn, NUM_ACTIONS), dtype=np.int32)
    value = np.zeros((nn, NUM_ACTIONS), dtype=np.float64)
    n_log = iterations + 1 if iterations < LOG_TABLE else LOG_TABLE
    logs = np.empty(n_log, dtype=np.float64)  # log(k) for the UCB term, looked up
    logs[0] = 0.0
    for k in range(1, n_log):
        logs[k] = log(k)
    n_nodes = 1
    st = np.empty(ST_SIZE, dtype=np.int64)
    legal, iscratch, fscratch = new_scratch()
    untried = np.empty(NUM_ACTIONS, dtype=np.int64)
    path_node = np.empty(MAX_ACTIONS, dtype=np.int64)
    path_act = np.empty(MAX_ACTIONS, dtype=np.int64)
    path_line = np.empty(MAX_ACTIONS, dtype=np.int64)
    line_value = np.zeros(4, dtype=np.float64)
    individual = scoring == INDIVIDUAL
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    for _ in range(iterations):
        sample_into(base, hidden, counts, pool0, pool1, st)
        depth, n_nodes = _descend(st, child, visits, avail, value, logs, n_nodes, max_depth, c, individual, prior,
                                  prior_weight, legal, untried, path_node, path_act, path_line)
        _roll_out(st, acts, params, epsilon, legal, iscratch, fscratch)
        _backpropagate(st, individual, depth, path_node, path_act, path_line, visits, value, line_value)
    return visits[0].astype(np.int64), value[0].copy(), n_nodes
