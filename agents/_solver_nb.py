"""Compiled backend of :mod:`agents.solver` (numba, ``Solver(backend="numba")``).

The same exact alpha-beta search as the pure-Python backend (R3-R5, R7.3), written for
numba: the four hands and the trick and score totals travel as plain int64 arguments,
the card tables are module constants, and the only array argument is the
transposition table. Two things differ from the Python search, neither changes the
value:

- **Last trick in closed form.** At the start of the last trick two cards of each cult
  remain. At each of the first two places the chooser's side picks which of its cult's
  two cards is played (by playing it, or by requesting the seat holding it) unless both
  lie in one opponent hand, in which case that opponent's side picks (R3.2, R3.5); the
  last two places are forced. So the trick is a max/min over at most 2 × 2 card orders,
  resolved by R4.1/R4.2 or, with a Purgatory, left neutral (R4.4).
- The table has fixed size (``2**TT_BITS`` rows: key, key, value, bound flag |
  generation << 2; one probe, always replace, rows of an older generation ignored);
  its last row holds the node counter.

Compiled functions are cached on disk (``cache=True``), so only the first process on a
machine pays the compile time.
"""

from __future__ import annotations

import numba
import numpy as np

from twilight_env.cards import MULTIPLIER, SOULS, STRENGTH

TT_BITS = 19
"""log2 of the table rows (16 MiB of int64)."""

_STR = np.array(STRENGTH, dtype=np.int64)
_SOUL = np.array(SOULS, dtype=np.int64)
_SEAT_CULT = np.array([[0, 1, 0, 1], [1, 0, 1, 0]], dtype=np.int64)
"""Seat cults by variant: 0 = 4 players (R2.1), 1 = 3 players (R7.1)."""
_MULT = np.zeros((2, 2, 28), dtype=np.int64)
"""[variant, side, card]: the card's multiplier when side takes it (own cult only, R5.2)."""
for _v in (0, 1):
    for _side in (0, 1):
        for _i in range(28):
            if _i // 14 == _SEAT_CULT[_v, _side]:
                _MULT[_v, _side, _i] = MULTIPLIER[_i]
_KEY = [(-STRENGTH[i], -SOULS[i], -MULTIPLIER[i], i) for i in range(28)]
_HOLD_ORDER = np.zeros(28, dtype=np.int64)
"""Card ids strongest, most valuable first (an opponent holder's order); cult c at 14c..14c+13."""
_OWN_ORDER = np.zeros(28, dtype=np.int64)
"""Weakest, least valuable first (a choosing side's own cards)."""
for _c in (0, 1):
    _ids = sorted(range(14 * _c, 14 * _c + 14), key=lambda i: _KEY[i])
    _HOLD_ORDER[14 * _c:14 * _c + 14] = _ids
    _OWN_ORDER[14 * _c:14 * _c + 14] = _ids[::-1]
_HSOULS = np.array([sum(SOULS[b] for b in range(14) if m >> b & 1) for m in range(1 << 14)], dtype=np.int64)
_HMULT = np.array([sum(MULTIPLIER[b] for b in range(14) if m >> b & 1) for m in range(1 << 14)], dtype=np.int64)

_i8 = numba.int64


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8), cache=True)
def _owner(h0, h1, h2, h3, x):  # pragma: no cover - compiled
    """Seat holding card ``x``."""
    bit = 1 << x
    if h0 & bit:
        return 0
    if h1 & bit:
        return 1
    if h2 & bit:
        return 2
    return 3


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8), cache=True)
def _last_trick(h0, h1, h2, h3, leader, ps, pm0, pm1, s0, m0, s1, m1, var):  # pragma: no cover
    """Exact value for side 0 of the last trick from its start (closed form, see the module
    docstring)."""
    rem = h0 | h1 | h2 | h3
    cx = _SEAT_CULT[var, leader]
    cy = 1 - cx
    # the two cards of each cult
    xs0 = -1
    xs1 = -1
    ys0 = -1
    ys1 = -1
    for i in range(28):
        if (rem >> i) & 1:
            if i // 14 == cx:
                if xs0 < 0:
                    xs0 = i
                else:
                    xs1 = i
            else:
                if ys0 < 0:
                    ys0 = i
                else:
                    ys1 = i
    # who picks at places 0 and 1: the chooser's side, unless one opponent hand holds both
    c0 = leader
    c1 = (leader + 1) & 3
    o0 = _owner(h0, h1, h2, h3, xs0)
    o1 = _owner(h0, h1, h2, h3, xs1)
    d0 = c0 & 1
    if o0 == o1 and (o0 & 1) != d0:
        d0 = o0 & 1
    p0 = _owner(h0, h1, h2, h3, ys0)
    p1 = _owner(h0, h1, h2, h3, ys1)
    d1 = c1 & 1
    if p0 == p1 and (p0 & 1) != d1:
        d1 = p0 & 1
    ts = _SOUL[xs0] + _SOUL[xs1] + _SOUL[ys0] + _SOUL[ys1] + ps
    tm0 = _MULT[var, 0, xs0] + _MULT[var, 0, xs1] + _MULT[var, 0, ys0] + _MULT[var, 0, ys1] + pm0
    tm1 = _MULT[var, 1, xs0] + _MULT[var, 1, xs1] + _MULT[var, 1, ys0] + _MULT[var, 1, ys1] + pm1
    neutral = s0 * m0 - s1 * m1
    win0 = (s0 + ts) * (m0 + tm0) - s1 * m1
    win1 = s0 * m0 - (s1 + ts) * (m1 + tm1)
    best0 = 0
    for i in range(2):
        xa = xs0 if i == 0 else xs1
        xb = xs1 if i == 0 else xs0
        best1 = 0
        for j in range(2):
            ya = ys0 if j == 0 else ys1
            yb = ys1 if j == 0 else ys0
            # R4.1: highest strength, ties to the earlier place
            bs = _STR[xa]
            bp = 0
            if _STR[ya] > bs:
                bs = _STR[ya]
                bp = 1
            if _STR[xb] > bs:
                bs = _STR[xb]
                bp = 2
            if _STR[yb] > bs:
                bs = _STR[yb]
                bp = 3
            if bs == 7:  # R4.4: Purgatory in the last trick, the pile is neutral
                v = neutral
            elif ((leader + bp) & 1) == 0:
                v = win0
            else:
                v = win1
            if j == 0 or (d1 == 0 and v > best1) or (d1 == 1 and v < best1):
                best1 = v
        if i == 0 or (d0 == 0 and best1 > best0) or (d0 == 1 and best1 < best0):
            best0 = best1
    return best0


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8,
                _i8, _i8, _i8, _i8, _i8, _i8[:, ::1]), cache=True)
def search(h0, h1, h2, h3, leader, place, hold, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
           s0, m0, s1, m1, left, alpha, beta, var, gen, T):  # pragma: no cover - compiled
    """Minimax value for side 0 (deal points): a choose node at ``place`` (``hold`` -1),
    the opponent holder ``hold`` picking the card there, or a finished trick (place 4).
    ``var``: 0 = 4 players, 1 = 3 players. ``T``: the table (last row: node counter)."""
    if place == 4:
        if bstr == 7:  # R4.3 pending; R4.4 neutral in the last trick
            if left == 1:
                return s0 * m0 - s1 * m1
            ps += ts
            pm0 += tm0
            pm1 += tm1
            leader = (leader + bplace) & 3
        else:  # R4.1, R4.2
            leader = (leader + bplace) & 3
            if leader & 1:
                s1 += ts + ps
                m1 += tm1 + pm1
            else:
                s0 += ts + ps
                m0 += tm0 + pm0
            ps = 0
            pm0 = 0
            pm1 = 0
        left -= 1
        if left == 0:
            return s0 * m0 - s1 * m1
        rem = h0 | h1 | h2 | h3
        # exact bounds (R5.3 is monotone in souls and multipliers)
        rs = _HSOULS[rem & 16383] + _HSOULS[rem >> 14] + ps
        r0 = _HMULT[(rem >> (14 * _SEAT_CULT[var, 0])) & 16383] + pm0
        r1 = _HMULT[(rem >> (14 * _SEAT_CULT[var, 1])) & 16383] + pm1
        hi = (s0 + rs) * (m0 + r0) - s1 * m1
        if hi <= alpha:
            return hi
        lo = s0 * m0 - (s1 + rs) * (m1 + r1)
        if lo >= beta:
            return lo
        if left == 1:
            T[T.shape[0] - 1, 0] += 1
            return _last_trick(h0, h1, h2, h3, leader, ps, pm0, pm1, s0, m0, s1, m1, var)
        # the table, keyed at trick starts
        # owner planes (odd seat, seat >= 2) plus the remaining cards identify every hand
        k1 = (h1 | h3) | ((h2 | h3) << 28)
        k2 = (rem | (leader << 28) | (ps << 30) | (pm0 << 36) | (pm1 << 39) | (s0 << 42)
              | (m0 << 48) | (s1 << 51) | (m1 << 57))
        hsh = k1 * 6364136223846793005 + k2 * 1442695040888963407
        n = T.shape[0] - 1
        idx = (hsh >> 17) & (n - 1)
        meta = T[idx, 3]
        if (meta >> 2) == gen and T[idx, 0] == k1 and T[idx, 1] == k2:
            v = T[idx, 2]
            f = meta & 3
            if f == 0:
                return v
            if f == 1:
                if v >= beta:
                    return v
                if v > alpha:
                    alpha = v
            else:
                if v <= alpha:
                    return v
                if v < beta:
                    beta = v
        a0 = alpha
        v = search(h0, h1, h2, h3, leader, 0, -1, -1, 0, 0, 0, 0, ps, pm0, pm1, s0, m0, s1, m1, left,
                   alpha, beta, var, gen, T)
        T[idx, 0] = k1
        T[idx, 1] = k2
        T[idx, 2] = v
        if v <= a0:
            T[idx, 3] = 2 | (gen << 2)
        elif v >= beta:
            T[idx, 3] = 1 | (gen << 2)
        else:
            T[idx, 3] = gen << 2
        return v
    T[T.shape[0] - 1, 0] += 1
    c = (leader + place) & 3
    cult = _SEAT_CULT[var, c]
    off = 14 * cult
    if hold >= 0:
        maximize = (hold & 1) == 0
        hand = h0 if hold == 0 else h1 if hold == 1 else h2 if hold == 2 else h3
        best = -1000000 if maximize else 1000000
        for i in range(14):
            x = _HOLD_ORDER[off + i]
            bit = 1 << x
            if hand & bit:
                st = _STR[x]
                nb = bstr
                nbp = bplace
                if st > bstr:
                    nb = st
                    nbp = place
                v = search(h0 ^ bit if hold == 0 else h0, h1 ^ bit if hold == 1 else h1,
                           h2 ^ bit if hold == 2 else h2, h3 ^ bit if hold == 3 else h3,
                           leader, place + 1, -1, nb, nbp, ts + _SOUL[x], tm0 + _MULT[var, 0, x],
                           tm1 + _MULT[var, 1, x], ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta, var, gen, T)
                if maximize:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                else:
                    if v < best:
                        best = v
                        if v < beta:
                            beta = v
                if alpha >= beta:
                    return best
        return best
    maximize = (c & 1) == 0
    best = -1000000 if maximize else 1000000
    cmask = 16383 << off
    # requests of an opponent first (R3.2, R3.5): the holder's side picks the card
    for j in range(2):
        h = c ^ 1 if j == 0 else c ^ 3
        hand = h0 if h == 0 else h1 if h == 1 else h2 if h == 2 else h3
        if hand & cmask:
            v = search(h0, h1, h2, h3, leader, place, h, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                       s0, m0, s1, m1, left, alpha, beta, var, gen, T)
            if maximize:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            else:
                if v < best:
                    best = v
                    if v < beta:
                        beta = v
            if alpha >= beta:
                return best
    # own side: the chooser's hand, then the partner's (a request of the partner)
    for j in range(2):
        h = c if j == 0 else c ^ 2
        hand = h0 if h == 0 else h1 if h == 1 else h2 if h == 2 else h3
        if not hand & cmask:
            continue
        for i in range(14):
            x = _OWN_ORDER[off + i]
            bit = 1 << x
            if hand & bit:
                st = _STR[x]
                nb = bstr
                nbp = bplace
                if st > bstr:
                    nb = st
                    nbp = place
                v = search(h0 ^ bit if h == 0 else h0, h1 ^ bit if h == 1 else h1,
                           h2 ^ bit if h == 2 else h2, h3 ^ bit if h == 3 else h3,
                           leader, place + 1, -1, nb, nbp, ts + _SOUL[x], tm0 + _MULT[var, 0, x],
                           tm1 + _MULT[var, 1, x], ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta, var, gen, T)
                if maximize:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                else:
                    if v < best:
                        best = v
                        if v < beta:
                            beta = v
                if alpha >= beta:
                    return best
    return best


def new_table() -> np.ndarray:
    """A zeroed table: ``2**TT_BITS`` rows of 4 int64, plus the node-counter row."""
    return np.zeros(((1 << TT_BITS) + 1, 4), dtype=np.int64)
