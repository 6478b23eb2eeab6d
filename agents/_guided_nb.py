"""Compiled steps of the network-guided IS-MCTS (numba; :mod:`twilight_env.agents.guided` drives them).

The search of :mod:`twilight_env.agents.guided` runs in rounds of ``K`` descents. One
round: :func:`descend_batch` (compiled) draws ``K`` determinizations and descends the
single-observer tree (Cowling, Powley & Whitehouse 2012) by PUCT (Silver et al. 2017;
subset-armed: the visit term counts the descents in which the action was legal) to a
leaf, with a virtual loss on every edge it passes so that the ``K`` descents spread; at
each leaf it writes the deciding seat's compact row (:func:`compact_row_into`, the
network's input, what that seat knows in that world), its legal actions and, when
``lam > 0``, the outcome of a heuristic rollout. The caller evaluates all ``K`` rows in
one forward pass; :func:`backup_batch` (compiled) stores the policy as the leaf node's
prior, removes the virtual losses and backs up ``(1 - lam) · value + lam · rollout``.

Tree arrays (one row per node, one column per action id 0..30): ``child`` (-1 untried,
-2 no node stored: the pool is full), ``visits``, ``avail`` (descents in which the
action was legal), ``value`` (sum of side 0's outcomes, deal score difference / 360,
R5), ``prior`` (float64, the network's policy at the node, from the first world that
reached it; the root's from the true information set) and ``evaluated`` (the node has
a prior).

History: the features need which cards were played *for* each seat (as chooser) and
*from* each seat's hand (as holder), R3.3. The state array of
:mod:`twilight_env.agents._rollout_nb` does not keep them, so each world carries ``hist``
(int64 ``(8,)``: masks by chooser seat 0..3, then by holder seat 0..3), updated by
:func:`apply_tracked`.
"""

from __future__ import annotations

from math import sqrt

import numba
import numpy as np

from twilight_env.agents._ismcts_nb import FULL, NO_CHILD, NUM_ACTIONS, sample_into
from twilight_env.agents._rollout_nb import (CAPTURED, CARDS, HOLDER, LEADER, MAX_ACTIONS, PENDING, PHASE, PLACE,
                                             ST_SIZE, TRICK, VAR, apply, legal_into, new_scratch, play_out,
                                             side_scores)
from twilight_env.rules.cards import PURGATORY_MASK
from twilight_env.rules.tables import HALF_COUNT as _POP
from twilight_env.rules.tables import STRENGTH as _STR

NUM_MASKS = 25
"""Entries of a compact row (``twilight_env.agents.nn.features``)."""
HIST_SIZE = 8
_ALL = (1 << 28) - 1
_PURG = PURGATORY_MASK
_HALF = (1 << 14) - 1
NEW_MOON = 2


@numba.njit(cache=True)
def acting_seat(st):  # pragma: no cover - compiled
    """The seat whose hand the next card comes from or who chooses (R3.1, R3.2)."""
    return st[HOLDER] if st[PHASE] == 1 else (st[LEADER] + st[PLACE]) & 3


@numba.njit(cache=True)
def deciding_seat(st):  # pragma: no cover - compiled
    """The seat that decides: the acting seat, or the solo (seat 0) for the new moon in 3 players (R7.3)."""
    a = acting_seat(st)
    if st[VAR] == 1 and a == NEW_MOON:
        return 0
    return a


@numba.njit(cache=True)
def apply_tracked(st, hist, a):  # pragma: no cover - compiled
    """Apply action ``a`` to ``st`` and record a card's chooser and holder in ``hist``."""
    if a < 28:
        chooser = (st[LEADER] + st[PLACE]) & 3
        holder = st[HOLDER] if st[PHASE] == 1 else chooser
        b = np.int64(1) << a
        hist[chooser] |= b
        hist[4 + holder] |= b
    apply(st, a)


@numba.njit(cache=True)
def compact_row_into(st, hist, viewer, out):  # pragma: no cover - compiled
    """The compact row of ``viewer`` in the world ``st`` (the table of
    ``twilight_env.agents.nn.features``; equal to ``features.state_row``, checked in
    ``tests/rules/test_parity.py``). Reads only what the viewer may know there: its own
    hand, the new moon's open hand in 3 players (R7.1), card counts (R2.5), the public
    history ``hist``, the trick, the pending pile and the taken cards."""
    three = st[VAR] == 1
    leader = st[LEADER]
    place = st[PLACE]
    phase = st[PHASE]
    trick = st[TRICK]
    acting = acting_seat(st)
    own = st[viewer]
    nm = st[NEW_MOON] if three else 0
    played = hist[0] | hist[1] | hist[2] | hist[3]
    seen = own | nm
    out[0] = own
    out[1] = nm
    if acting == viewer or (three and acting == NEW_MOON):
        out[2] = st[acting]
    else:
        out[2] = 0
    out[3] = _ALL & ~played & ~seen
    for s in range(4):
        r = (s - viewer) & 3
        out[4 + r] = hist[s]
        out[8 + r] = hist[4 + s]
    for p in range(4):
        out[12 + p] = (np.int64(1) << st[CARDS + p]) if p < place else 0
    out[16] = st[PENDING]
    side = viewer & 1
    out[17] = st[CAPTURED + side] | st[CAPTURED + side + 2]
    out[18] = st[CAPTURED + 1 - side] | st[CAPTURED + 3 - side]
    for s in range(4):
        h = st[s]
        sun = _POP[h & _HALF]
        moon = _POP[(h >> 14) & _HALF]
        out[19 + ((s - viewer) & 3)] = (np.int64(1) << sun) | (np.int64(1) << (8 + moon))
    chooser = (leader + place) & 3
    misc = (np.int64(1) << trick) if trick < 7 else np.int64(0)
    misc |= np.int64(1) << (7 + place)
    misc |= np.int64(phase) << 11
    misc |= np.int64(1) << (12 + ((chooser - viewer) & 3))
    misc |= np.int64(1) << (16 + ((acting - viewer) & 3))
    misc |= np.int64(1) << (20 + ((leader - viewer) & 3))
    if three:
        misc |= np.int64(1) << 24
    if ((viewer & 1) == 0) == three:
        misc |= np.int64(1) << 25
    if three and acting == NEW_MOON:
        misc |= np.int64(1) << 26
    out[23] = misc
    best = -1
    best_place = 0
    now = np.int64(0)
    for p in range(place):  # R4.1: the strongest so far, ties to the earlier place
        x = st[CARDS + p]
        now |= np.int64(1) << x
        if _STR[x] > best:
            best = _STR[x]
            best_place = p
    misc2 = np.int64(1) << viewer
    if best >= 0:
        misc2 |= np.int64(1) << (4 + ((leader + best_place - viewer) & 3))
        misc2 |= np.int64(1) << (8 + best)
    if (now & _PURG) != 0:
        misc2 |= np.int64(1) << 16
    if st[PENDING] != 0:
        misc2 |= np.int64(1) << 17
    out[24] = misc2


@numba.njit(cache=True)
def rows_of_states(states, hists, viewers):  # pragma: no cover - compiled
    """Compact rows ``(n, 25)`` of ``n`` worlds (for tests and batch callers)."""
    n = states.shape[0]
    out = np.empty((n, NUM_MASKS), dtype=np.int64)
    for i in range(n):
        compact_row_into(states[i], hists[i], viewers[i], out[i])
    return out


@numba.njit(cache=True)
def _puct_action(node, legal, nl, sign, c_puct, visits, avail, value, prior, fpu):  # pragma: no cover - compiled
    """The legal action with the highest ``sign · Q + c · P · sqrt(avail) / (1 + n)``:
    ``Q`` the edge's mean (``fpu`` while unvisited), ``P`` the node's prior renormalised
    over the legal actions of this world (uniform when they hold no prior mass); ties to
    the first legal action."""
    total = 0.0
    for i in range(nl):
        total += prior[node, legal[i]]
    best_a = legal[0]
    best_u = -1e300
    for i in range(nl):
        a = legal[i]
        n = visits[node, a]
        p = prior[node, a] / total if total > 0.0 else 1.0 / nl
        q = sign * value[node, a] / n if n > 0 else fpu
        u = q + c_puct * p * sqrt(avail[node, a]) / (1.0 + n)
        if u > best_u:
            best_a = a
            best_u = u
    return best_a


@numba.njit(cache=True)
def descend_batch(k, base, base_hist, hidden, counts, pool0, pool1, child, visits, avail, value, prior, evaluated,
                  n_nodes, c_puct, fpu, lam, params, paths, depths, leaf_node, rows, roles, sides, legal_out, z_out,
                  need):  # pragma: no cover - compiled
    """``k`` descents with virtual loss (module docstring). Per descent ``i``: ``paths[i, d]``
    = (node, action, acting seat) of its ``depths[i]`` edges; ``leaf_node[i]`` the leaf's
    row (-1 when no node was stored); ``need[i]``: the leaf wants a network evaluation
    (the deal is not over), then ``rows[i]``, ``roles[i]`` and ``legal_out[i]`` describe
    the deciding seat's decision there and ``sides[i]`` is that seat's side (0 or 1); ``z_out[i]``: side 0's outcome of the finished deal,
    or of the heuristic rollout when ``lam > 0`` (else 0). Returns the nodes in use."""
    st = np.empty(ST_SIZE, dtype=np.int64)
    ro = np.empty(ST_SIZE, dtype=np.int64)
    hist = np.empty(8, dtype=np.int64)
    legal, iscratch, fscratch = new_scratch()
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    nn = child.shape[0]
    for i in range(k):
        sample_into(base, hidden, counts, pool0, pool1, st)
        for j in range(8):
            hist[j] = base_hist[j]
        node = 0
        depth = 0
        leaf = 0
        while st[TRICK] != 7:
            acting = acting_seat(st)
            nl = legal_into(st, legal)
            for j in range(nl):
                avail[node, legal[j]] += 1
            sign = 1.0 if (acting & 1) == 0 else -1.0
            a = _puct_action(node, legal, nl, sign, c_puct, visits, avail, value, prior, fpu)
            visits[node, a] += 1  # virtual loss: a lost visit for the acting side
            value[node, a] -= sign
            paths[i, depth, 0] = node
            paths[i, depth, 1] = a
            paths[i, depth, 2] = acting
            depth += 1
            apply_tracked(st, hist, a)
            nxt = child[node, a]
            if nxt == NO_CHILD:
                if n_nodes < nn:
                    child[node, a] = n_nodes
                    leaf = n_nodes
                    n_nodes += 1
                else:
                    child[node, a] = FULL
                    leaf = -1
                break
            if nxt == FULL:
                leaf = -1
                break
            node = nxt
            leaf = node
            if not evaluated[node]:  # expanded by an earlier descent of this round: evaluate here too
                break
        depths[i] = depth
        leaf_node[i] = leaf
        if st[TRICK] == 7:
            s0, s1 = side_scores(st)
            z_out[i] = (s0 - s1) / 360.0
            need[i] = False
            continue
        need[i] = True
        dec = deciding_seat(st)
        sides[i] = dec & 1
        compact_row_into(st, hist, dec, rows[i])
        roles[i] = 0 if st[VAR] == 0 else acting_seat(st)
        nl = legal_into(st, legal)
        for j in range(NUM_ACTIONS):
            legal_out[i, j] = False
        for j in range(nl):
            legal_out[i, legal[j]] = True
        if lam > 0.0:
            for j in range(ST_SIZE):
                ro[j] = st[j]
            play_out(ro, acts, params)
            s0, s1 = side_scores(ro)
            z_out[i] = (s0 - s1) / 360.0
        else:
            z_out[i] = 0.0
    return n_nodes


@numba.njit(cache=True)
def backup_batch(k, paths, depths, leaf_node, need, probs, leaf_value, visits, value, prior,
                 evaluated):  # pragma: no cover - compiled
    """Undo each descent's virtual losses, add its leaf value (side 0's view) to every edge
    of its path, and give a newly evaluated leaf node its prior ``probs[i]``."""
    for i in range(k):
        z = leaf_value[i]
        for d in range(depths[i]):
            node = paths[i, d, 0]
            a = paths[i, d, 1]
            sign = 1.0 if (paths[i, d, 2] & 1) == 0 else -1.0
            value[node, a] += sign + z  # the virtual loss back, then the outcome (the visit stays)
        leaf = leaf_node[i]
        if need[i] and leaf >= 0 and not evaluated[leaf]:
            for j in range(NUM_ACTIONS):
                prior[leaf, j] = probs[i, j]
            evaluated[leaf] = True


@numba.njit(cache=True)
def seed(s):  # pragma: no cover - compiled
    """Seed the compiled generator (numba's NumPy legacy generator) that :func:`descend_batch` draws from."""
    np.random.seed(s)


@numba.njit(cache=True)
def first_layer(rows, n, w, b, out):  # pragma: no cover - compiled
    """``out[i] = b + sum of w[28 * m + j]`` over the set bits ``j`` of ``rows[i, m]``, for
    the first ``n`` rows: the network's first layer on the 0/1 expansion of compact rows
    (``expanded @ w + b``), adding only the rows of ``w`` whose input is 1."""
    width = w.shape[1]
    for i in range(n):
        for u in range(width):
            out[i, u] = b[u]
        for m in range(NUM_MASKS):
            x = rows[i, m]
            j = 0
            while x != 0:
                if x & 1:
                    r = 28 * m + j
                    for u in range(width):
                        out[i, u] += w[r, u]
                x >>= 1
                j += 1
