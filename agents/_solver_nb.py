"""Compiled backend of :mod:`twilight_env.agents.solver` (numba, ``Solver(backend="numba")``).

The same exact alpha-beta search as the pure-Python backend (R3-R5, R7.3), written for
numba as an iterative search over an explicit stack of frames (numba caches the compiled
code on disk, ``cache=True``, which it cannot do for recursive functions: only the first
process on a machine compiles, for about 5-10 s). The card tables are module constants
read from :mod:`twilight_env.rules.tables` (the search's own card orders derived from
them at import time), and the only array argument is the transposition table. What differs from the Python
search (none of it changes the value; tested against brute force and against the
Python backend in ``tests/agents/test_solver.py``):

- **Last trick in closed form.** At the start of the last trick two cards of each cult
  remain, and whoever takes the trick gets everything left, so its value is one of the
  exact bounds (or, with a Purgatory in it, the neutral value, R4.4). The leader's cult
  lands at places 0 and 2 (its side), the other cult at places 1 and 3. The side of the
  stronger top card takes the trick (R4.1). With equal tops the earlier place wins: the
  leader's side leads its top unless both its cult's cards lie in one opponent hand and
  differ in strength (that opponent's side picks then, R3.2, R3.5); the weaker card then
  leads, and place 1's side plays its top at place 1 unless both its cards lie in one
  hand of the leader's side and differ in strength.
- **A request of an opponent holding one card of the cult** is that card played (no
  holder node).
- **The last two places of the second-last trick** are searched in plain nested loops
  (:func:`_place2`, :func:`_place3`) rather than with frames: each candidate card at
  place 3 resolves the trick and the last trick in closed form, with alpha-beta
  cut-offs at both places.
- **Move ordering**: the table keeps each trick start's best move, tried first.
  Elsewhere a killer move is tried first: the last move that caused a cut-off at the
  same number of tricks left, place and phase, kept across the driver's passes (Akl and
  Newborn 1977). When the other side is winning the trick, the chooser's side tries its
  cheapest winning card first, then the others weakest first.
- **Null-window driver** (in :meth:`twilight_env.agents.solver.Solver._node`): a full-window value is
  found by null-window searches (MTD, Plaat et al. 1996), stepping the test value out
  from 1 and then bisecting; the table carries bounds between passes.
- The table has fixed size (``2**TT_BITS`` rows: three key words, value, bound flag |
  (best move + 1) << 2 | generation << 10; one probe, always replace) and is shared by
  every numba Solver of the process; a Solver reads only rows of its own generation.
  After it come the killer-move rows (a killer is checked for legality before use, so
  one left by another search is harmless) and the node counter, the last row.
"""

from __future__ import annotations

import numba

from twilight_env.agents._nb_options import NO_REFCOUNT
import numpy as np

from twilight_env.rules.cards import PURGATORY_MASK
from twilight_env.rules.tables import HALF_MULT as _HMULT
from twilight_env.rules.tables import HALF_SOULS as _HSOULS
from twilight_env.rules.tables import LOWBIT as _LOWBIT
from twilight_env.rules.tables import MULT_OF_CULT, STRONG_FIRST
from twilight_env.rules.tables import SEAT_CULT as _SEAT_CULT
from twilight_env.rules.tables import SOULS as _SOUL
from twilight_env.rules.tables import STRENGTH as _STR

TT_BITS = 20
"""log2 of the table rows (40 MiB: 5 int64 per row)."""
_KILLER_ROWS = 13
"""Rows after the table that hold the 64 killer moves (5 per row), one per
``8 * tricks left + 2 * place + (1 in the hold phase)``."""

# The card tables come from twilight_env.rules.tables (strength, souls, half-mask souls
# and multipliers, lowest bit, seat cults by variant: 0 = 4 players R2.1, 1 = 3 players
# R7.1); the search's own layouts below are derived from them at import time.
_MULT = np.ascontiguousarray(MULT_OF_CULT[_SEAT_CULT[:, :2]])
"""[variant, side, card]: the card's multiplier when side takes it (own cult only, R5.2)."""
_HOLD_ORDER = np.array(STRONG_FIRST, dtype=np.int64)
"""Card ids strongest, most valuable first (an opponent holder's order); cult c at 14c..14c+13."""
_OWN_ORDER = np.concatenate([_HOLD_ORDER[13::-1], _HOLD_ORDER[:13:-1]])
"""Weakest, least valuable first (a choosing side's own cards)."""
_OWN_BEAT = np.zeros(28, dtype=np.int64)
"""[14 * cult + strength]: the first position in the own order (cult c) of a card
stronger than ``strength``, 0 if none (order starts there when the other side is winning)."""
for _c in (0, 1):
    for _b in range(8):
        _pos = [k for k in range(14) if _STR[_OWN_ORDER[14 * _c + k]] > _b]
        _OWN_BEAT[14 * _c + _b] = _pos[0] if _pos else 0
_RANK_OWN = np.zeros(2 << 14, dtype=np.int64)
"""[cult << 14 | half mask]: bit k set when the card at position k of the own order is in
the half mask (so set bits are visited in that order)."""
_RANK_HOLD = np.zeros(2 << 14, dtype=np.int64)
"""The same for the holder order."""
_m = np.arange(1 << 14, dtype=np.int64)
for _c in (0, 1):
    for _k in range(14):
        _RANK_OWN[_c << 14:(_c + 1) << 14] |= ((_m >> (int(_OWN_ORDER[14 * _c + _k]) - 14 * _c)) & 1) << _k
        _RANK_HOLD[_c << 14:(_c + 1) << 14] |= ((_m >> (int(_HOLD_ORDER[14 * _c + _k]) - 14 * _c)) & 1) << _k

_i8 = numba.int64


@numba.njit(numba.types.UniTuple(_i8, 8)(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8),
            cache=True)
def _resolve(leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1):  # pragma: no cover - compiled
    """A finished trick that is not the last one: ``(next leader, pending souls and
    multipliers, souls and multipliers of both sides)``. With a Purgatory the trick joins
    the pending pile and the first Purgatory's seat leads (R4.3); otherwise the taker's
    side gets the trick and the pile, and the taker leads (R4.1, R4.2)."""
    nl = (leader + bplace) & 3
    if bstr == 7:
        return nl, ps + ts, pm0 + tm0, pm1 + tm1, s0, m0, s1, m1
    if nl & 1:
        return nl, 0, 0, 0, s0, m0, s1 + ts + ps, m1 + tm1 + pm1
    return nl, 0, 0, 0, s0 + ts + ps, m0 + tm0 + pm0, s1, m1


@numba.njit(numba.types.UniTuple(_i8, 2)(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8), cache=True)
def _bounds(rem, ps, pm0, pm1, s0, m0, s1, m1, var):  # pragma: no cover - compiled
    """Exact bounds ``(hi, lo)`` for side 0 at a trick start, whatever is played from the
    remaining cards ``rem``: side 0 takes every remaining soul, own sanctuary and the
    pending pile, or side 1 does (R5.3 is monotone in souls and multipliers)."""
    rs = _HSOULS[rem & 16383] + _HSOULS[rem >> 14] + ps
    r0 = _HMULT[(rem >> (14 * _SEAT_CULT[var, 0])) & 16383] + pm0
    r1 = _HMULT[(rem >> (14 * _SEAT_CULT[var, 1])) & 16383] + pm1
    return (s0 + rs) * (m0 + r0) - s1 * m1, s0 * m0 - (s1 + rs) * (m1 + r1)


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8, _i8), cache=True)
def _last_taker(h0, h1, h2, h3, leader, var):  # pragma: no cover - compiled
    """Side (0 or 1) that takes the last trick under perfect play, from its start, when
    no Purgatory remains (closed form, see the module docstring)."""
    rem = h0 | h1 | h2 | h3
    ox = 14 * _SEAT_CULT[var, leader]
    oy = 14 - ox
    hx = (rem >> ox) & 16383
    hy = (rem >> oy) & 16383
    # ids run strongest first within a cult, so the lower id of each cult's pair is its top
    sx = _STR[ox + _LOWBIT[hx]]
    sy = _STR[oy + _LOWBIT[hy]]
    lead = leader & 1  # the leader's cult lands at places 0 and 2 (its side), the other at 1 and 3
    if sx > sy:
        return lead
    if sy > sx:
        return lead ^ 1
    # equal tops: the earlier place wins (R4.1). The leader's side wins by leading its top
    # card, which it can unless both its cult's cards lie in one opponent hand (R3.2,
    # R3.5) and they are not equally strong.
    if _STR[ox + _LOWBIT[hx & (hx - 1)]] == sx:
        return lead
    if lead:
        e0 = h0
        e2 = h2
        o1 = h1
        o3 = h3
    else:
        e0 = h1
        e2 = h3
        o1 = h0
        o3 = h2
    if ((e0 >> ox) & 16383) != hx and ((e2 >> ox) & 16383) != hx:
        return lead
    # the weaker card leads and the top comes at place 2: place 1's side wins by playing
    # its top there, unless both its cards lie in one hand of the leader's side
    if _STR[oy + _LOWBIT[hy & (hy - 1)]] == sy:
        return lead ^ 1
    if ((o1 >> oy) & 16383) == hy or ((o3 >> oy) & 16383) == hy:
        return lead
    return lead ^ 1


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8), cache=True)
def _last_trick(h0, h1, h2, h3, leader, ps, pm0, pm1, s0, m0, s1, m1, var):  # pragma: no cover
    """Exact value for side 0 of the last trick from its start (closed form, see the module
    docstring)."""
    rem = h0 | h1 | h2 | h3
    if rem & PURGATORY_MASK:  # R4.4: a Purgatory in the last trick, the pile is neutral
        return s0 * m0 - s1 * m1
    hi, lo = _bounds(rem, ps, pm0, pm1, s0, m0, s1, m1, var)
    return hi if _last_taker(h0, h1, h2, h3, leader, var) == 0 else lo


@numba.njit(numba.types.UniTuple(_i8, 3)(numba.boolean, _i8, _i8, _i8, _i8), cache=True)
def _backup(maximize, v, best, alpha, beta):  # pragma: no cover - compiled
    """Fail-soft alpha-beta update of a max (``maximize``) or min node by a child's value
    ``v``: the new ``(best, alpha, beta)``."""
    if maximize:
        if v > best:
            best = v
            if v > alpha:
                alpha = v
    elif v < best:
        best = v
        if v < beta:
            beta = v
    return best, alpha, beta


@numba.njit(numba.types.UniTuple(_i8, 4)(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8), cache=True)
def _group(h0, h1, h2, h3, c, j, leader, bstr, bplace, var):  # pragma: no cover - compiled
    """Group ``j`` of the choose node of seat ``c`` in the plain loops: 0 and 1 request
    the opponent at offset +1 or +3, whose side then picks the card (R3.2, R3.5); 2 are
    the chooser's own cards, 3 the partner's. Returns ``(seat, 1 for a request, candidate
    bits, rotation)``: :func:`_candidate` takes the bits in turn."""
    h = c ^ 1 if j == 0 else c ^ 3 if j == 1 else c if j == 2 else c ^ 2
    hand = h0 if h == 0 else h1 if h == 1 else h2 if h == 2 else h3
    off = 14 * _SEAT_CULT[var, c]
    m = (hand >> off) & 16383
    if j < 2:  # the holder's order: strongest, most valuable first
        return h, 1, _RANK_HOLD[((off // 14) << 14) | m], 0
    # the own order, weakest first, from the cheapest winner when the other side is winning
    rm = _RANK_OWN[((off // 14) << 14) | m]
    start = 0
    if m and bstr >= 0 and ((leader + bplace) & 1) != (c & 1):
        start = _OWN_BEAT[off + bstr]
        if start:
            rm = ((rm >> start) | (rm << (14 - start))) & 16383
    return h, 0, rm, start


@numba.njit(numba.types.UniTuple(_i8, 2)(_i8, _i8, _i8, _i8), cache=True)
def _candidate(rm, start, opp, off):  # pragma: no cover - compiled
    """The next card of a group's candidate bits ``rm`` (see :func:`_group`), and the
    bits left."""
    q = _LOWBIT[rm] + start
    if q >= 14:
        q -= 14
    return (_HOLD_ORDER[off + q] if opp else _OWN_ORDER[off + q]), rm & (rm - 1)


@numba.njit(numba.types.UniTuple(_i8, 6)(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8), cache=True)
def _play(h0, h1, h2, h3, h, x, bstr, bplace, place):  # pragma: no cover - compiled
    """The hands after seat ``h`` plays card ``x`` at ``place``, and the trick's new best
    strength and its place (R4.1: a later card must be strictly stronger)."""
    bit = 1 << x
    if _STR[x] > bstr:
        bstr = _STR[x]
        bplace = place
    return (h0 ^ bit if h == 0 else h0, h1 ^ bit if h == 1 else h1, h2 ^ bit if h == 2 else h2,
            h3 ^ bit if h == 3 else h3, bstr, bplace)


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8),
            cache=True)
def _place3(h0, h1, h2, h3, leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
            s0, m0, s1, m1, var, alpha, beta):  # pragma: no cover - compiled
    """Fail-soft value for side 0 (window ``alpha``, ``beta``) of the choose node at place 3
    of the second-last trick, without frames: each card the place can take is valued by
    resolving the trick (R4.1-R4.3) and the last trick in closed form; the chooser's side
    picks among its own and its partner's cards or requests an opponent, whose side then
    picks among that hand's cards (R3.2, R3.5). Requests come first."""
    c = (leader + 3) & 3
    off = 14 * _SEAT_CULT[var, c]
    k = c & 1
    rem = h0 | h1 | h2 | h3
    best = -1000000 if k == 0 else 1000000
    for j in range(4):
        h, opp, rm, start = _group(h0, h1, h2, h3, c, j, leader, bstr, bplace, var)
        if rm == 0:  # the seat holds no card of the chooser's cult
            continue
        pmax = (k == 1) if opp else (k == 0)  # the group's picker (R3.2)
        ga = alpha
        gb = beta
        grp = -1000000 if pmax else 1000000
        while rm:
            x, rm = _candidate(rm, start, opp, off)
            n0, n1, n2, n3, nb, nbp = _play(h0, h1, h2, h3, h, x, bstr, bplace, 3)
            nl, a_ps, a_p0, a_p1, a_s0, a_m0, a_s1, a_m1 = _resolve(
                leader, nb, nbp, ts + _SOUL[x], tm0 + _MULT[var, 0, x], tm1 + _MULT[var, 1, x],
                ps, pm0, pm1, s0, m0, s1, m1)
            left = rem ^ (1 << x)
            if left & PURGATORY_MASK:  # R4.4: a Purgatory in the last trick, neutral
                v = a_s0 * a_m0 - a_s1 * a_m1
            else:
                # the last trick's taker gets all that is left: the bounds are its values
                hi, lo = _bounds(left, a_ps, a_p0, a_p1, a_s0, a_m0, a_s1, a_m1, var)
                v = hi if _last_taker(n0, n1, n2, n3, nl, var) == 0 else lo
            grp, ga, gb = _backup(pmax, v, grp, ga, gb)
            if ga >= gb:
                break
        best, alpha, beta = _backup(k == 0, grp, best, alpha, beta)
        if alpha >= beta:
            break
    return best


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8),
            cache=True)
def _place2(h0, h1, h2, h3, leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
            s0, m0, s1, m1, var, alpha, beta):  # pragma: no cover - compiled
    """As :func:`_place3`, for the choose node at place 2 of the second-last trick: each
    card the place can take is followed by :func:`_place3`."""
    c = (leader + 2) & 3
    off = 14 * _SEAT_CULT[var, c]
    k = c & 1
    best = -1000000 if k == 0 else 1000000
    for j in range(4):
        h, opp, rm, start = _group(h0, h1, h2, h3, c, j, leader, bstr, bplace, var)
        if rm == 0:  # the seat holds no card of the chooser's cult
            continue
        pmax = (k == 1) if opp else (k == 0)
        ga = alpha
        gb = beta
        grp = -1000000 if pmax else 1000000
        while rm:
            x, rm = _candidate(rm, start, opp, off)
            n0, n1, n2, n3, nb, nbp = _play(h0, h1, h2, h3, h, x, bstr, bplace, 2)
            v = _place3(n0, n1, n2, n3, leader, nb, nbp, ts + _SOUL[x], tm0 + _MULT[var, 0, x],
                        tm1 + _MULT[var, 1, x], ps, pm0, pm1, s0, m0, s1, m1, var, ga, gb)
            grp, ga, gb = _backup(pmax, v, grp, ga, gb)
            if ga >= gb:
                break
        best, alpha, beta = _backup(k == 0, grp, best, alpha, beta)
        if alpha >= beta:
            break
    return best


@numba.njit(_i8(_i8, _i8, _i8), cache=True)
def _killer_slot(left, place, hold):  # pragma: no cover - compiled
    """Index of the killer move for frames with ``left`` tricks left at ``place``, in the
    choose phase (``hold`` -1) or the hold phase."""
    return left * 8 + place * 2 + (1 if hold >= 0 else 0)


@numba.njit(numba.boolean(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8), cache=True)
def _move_legal(code, h0, h1, h2, h3, leader, place, hold, var):  # pragma: no cover - compiled
    """Whether a move ``code`` (stage << 4 | position, as the frames number their moves:
    stage 0, 1 a request of the opponent at +1, +3; 2, 3 a card of the chooser's own or
    partner's hand; 4 a card of the holder ``hold``) is legal in this node (R3.2, R3.5)."""
    stage = code >> 4
    c = (leader + place) & 3
    off = 14 * _SEAT_CULT[var, c]
    if stage < 2:
        h = c ^ 1 if stage == 0 else c ^ 3
        hand = h0 if h == 0 else h1 if h == 1 else h2 if h == 2 else h3
        return ((hand >> off) & 16383) != 0
    if stage == 4:
        h = hold
        x = _HOLD_ORDER[off + (code & 15)]
    else:
        h = c if stage == 2 else c ^ 2
        x = _OWN_ORDER[off + (code & 15)]
    hand = h0 if h == 0 else h1 if h == 1 else h2 if h == 2 else h3
    return ((hand >> x) & 1) != 0


_MAX_DEPTH = 80
"""Frames on the explicit stack: at most 2 per place (a choose node and a hold node)."""
# frame fields
_H0, _LEADER, _PLACE, _HOLD, _BSTR, _BPLACE, _TS, _TM0, _TM1 = 0, 4, 5, 6, 7, 8, 9, 10, 11
_PS, _PM0, _PM1, _S0, _M0, _S1, _M1, _LEFT = 12, 13, 14, 15, 16, 17, 18, 19
_ALPHA, _BETA, _BEST, _STAGE, _I, _TTI, _A0, _B0, _K1, _K2 = 20, 21, 22, 23, 24, 25, 26, 27, 28, 29
_FIRST, _CUR, _BCODE, _K3 = 30, 31, 32, 33
_NFIELDS = 34
_END = 5


_N_TT = 1 << TT_BITS
"""Rows of the table proper (the killer rows and the node counter come after them)."""

# The steps of :func:`search`. Those on scalars only are inlined into it by numba
# (``inline="always"``). Those that take an array (the table, the frames) are compiled
# without numba's reference counting (``_nrt=False``: they only index arrays): inlined,
# or compiled with it, each array argument costs a reference count update per call in the
# innermost loop, and the search measured 14-50% slower.


@numba.njit(inline="always", cache=True)
def _settle(c0, c1, c2, c3, leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta,
            var):  # pragma: no cover - compiled
    """Enter a finished trick (place 4): resolve it (R4.1-R4.4) and value the next trick's
    start at once where it can: the deal's end, the exact bounds outside the window, or
    the last trick in closed form. Returns ``(have value, value, 1 if a node was counted,
    leader, ps, pm0, pm1, s0, m0, s1, m1, left)``: the state at the next trick's start."""
    have_val = False
    val = 0
    counted = 0
    if bstr == 7 and left == 1:  # R4.4: Purgatory in the last trick, neutral
        val = s0 * m0 - s1 * m1
        have_val = True
    else:
        leader, ps, pm0, pm1, s0, m0, s1, m1 = _resolve(leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0,
                                                        s1, m1)
        left -= 1
        if left == 0:
            val = s0 * m0 - s1 * m1
            have_val = True
        else:
            hi, lo = _bounds(c0 | c1 | c2 | c3, ps, pm0, pm1, s0, m0, s1, m1, var)
            if hi <= alpha:
                val = hi
                have_val = True
            elif lo >= beta:
                val = lo
                have_val = True
            elif left == 1:
                counted = 1
                val = _last_trick(c0, c1, c2, c3, leader, ps, pm0, pm1, s0, m0, s1, m1, var)
                have_val = True
    return have_val, val, counted, leader, ps, pm0, pm1, s0, m0, s1, m1, left


@numba.njit(cache=True, **NO_REFCOUNT)
def _probe(T, gen, c0, c1, c2, c3, leader, place, hold, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1,
           alpha, beta):  # pragma: no cover - compiled
    """Look a trick start up in the table ``T`` (rows of generation ``gen`` only): the owner
    planes (odd seat, seat >= 2) plus the remaining cards identify every hand; the trick
    so far matters only through ``k3``. An exact value, or a bound outside the window,
    ends the node; a bound inside narrows the window. Returns ``(row, k1, k2, k3, the
    stored best move or -1, have value, value, alpha, beta)``."""
    rem = c0 | c1 | c2 | c3
    k1 = (c1 | c3) | ((c2 | c3) << 28) | (place << 56) | ((hold + 1) << 58)
    k2 = (rem | (leader << 28) | (ps << 30) | (pm0 << 36) | (pm1 << 39) | (s0 << 42)
          | (m0 << 48) | (s1 << 51) | (m1 << 57))
    k3 = (bstr + 1) | (bplace << 4) | (ts << 6) | (tm0 << 12) | (tm1 << 16)
    hsh = k1 * 6364136223846793005 + k2 * 1442695040888963407 + k3 * 2862933555777941757
    tti = (hsh >> 17) & (_N_TT - 1)
    have_val = False
    val = 0
    tmove = -1
    meta = T[tti, 4]
    if (meta >> 10) == gen and T[tti, 0] == k1 and T[tti, 1] == k2 and T[tti, 2] == k3:
        tmove = ((meta >> 2) & 255) - 1
        v = T[tti, 3]
        f = meta & 3
        if f == 0:
            val = v
            have_val = True
        elif f == 1:
            if v >= beta:
                val = v
                have_val = True
            elif v > alpha:
                alpha = v
        else:
            if v <= alpha:
                val = v
                have_val = True
            elif v < beta:
                beta = v
    return tti, k1, k2, k3, tmove, have_val, val, alpha, beta


@numba.njit(cache=True, **NO_REFCOUNT)
def _push(F, sp, c0, c1, c2, c3, leader, place, hold, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1,
          left, alpha, beta, tmove, tti, k1, k2, k3):  # pragma: no cover - compiled
    """Write the node into frame row ``sp`` of ``F``: its fields, the window, the worst
    value for its picker as the best so far, the first move (``tmove``: the table's or a
    killer, -1 none; stage -1 tries it first) and, at a trick start, the table row and
    keys with the window as entered (to tell an exact value from a bound)."""
    F[sp, 0] = c0
    F[sp, 1] = c1
    F[sp, 2] = c2
    F[sp, 3] = c3
    F[sp, _LEADER] = leader
    F[sp, _PLACE] = place
    F[sp, _HOLD] = hold
    F[sp, _BSTR] = bstr
    F[sp, _BPLACE] = bplace
    F[sp, _TS] = ts
    F[sp, _TM0] = tm0
    F[sp, _TM1] = tm1
    F[sp, _PS] = ps
    F[sp, _PM0] = pm0
    F[sp, _PM1] = pm1
    F[sp, _S0] = s0
    F[sp, _M0] = m0
    F[sp, _S1] = s1
    F[sp, _M1] = m1
    F[sp, _LEFT] = left
    F[sp, _ALPHA] = alpha
    F[sp, _BETA] = beta
    if hold >= 0:
        F[sp, _BEST] = -1000000 if (hold & 1) == 0 else 1000000
        F[sp, _STAGE] = 4 if tmove < 0 else -1
    else:
        F[sp, _BEST] = -1000000 if (((leader + place) & 3) & 1) == 0 else 1000000
        F[sp, _STAGE] = 0 if tmove < 0 else -1
    F[sp, _FIRST] = tmove
    F[sp, _BCODE] = -1
    F[sp, _I] = -1
    F[sp, _TTI] = tti
    if tti >= 0:
        F[sp, _A0] = alpha
        F[sp, _B0] = beta
        F[sp, _K1] = k1
        F[sp, _K2] = k2
        F[sp, _K3] = k3


@numba.njit(inline="always", cache=True)
def _next_move(stage, first, rm, h0, h1, h2, h3, leader, place, hold, bstr, bplace,
               var):  # pragma: no cover - compiled
    """The next move of a frame (its fields as arguments: ``stage``, the ``first`` move,
    ``rm`` the cards of the stage still to try, -1 before the stage starts, the hands, the
    node and the trick's best card so far) in the search's order (the module docstring):
    stage -1 the first move (table or killer), 0 and 1 requests of the opponent at +1, +3
    (its side picks the card, R3.2, R3.5), 2 the chooser's own cards, 3 the partner's, 4
    a requested opponent holder's cards. Returns ``(found, card or -1, its seat, requested
    seat or -1, move code, stage, rm)``."""
    found = False
    c = (leader + place) & 3
    off = 14 * _SEAT_CULT[var, c]
    cmask = 16383 << off
    x = -1
    rh = -1
    h = 0
    code = -1
    while stage < _END and not found:
        if stage == -1:  # the table's best move for this node, first
            stage = 4 if hold >= 0 else 0
            code = first
            st = code >> 4
            if st < 2:
                rh = c ^ 1 if st == 0 else c ^ 3
            elif st == 4:
                h = hold
                x = _HOLD_ORDER[off + (code & 15)]
            else:
                h = c if st == 2 else c ^ 2
                x = _OWN_ORDER[off + (code & 15)]
            found = True
        elif stage < 2:  # requests of an opponent (R3.2, R3.5): its side picks the card
            code = stage << 4
            h = c ^ 1 if stage == 0 else c ^ 3
            stage += 1
            hand = h0 if h == 0 else h1 if h == 1 else h2 if h == 2 else h3
            if (hand & cmask) and code != first:
                rh = h
                found = True
        else:
            # 2: the chooser's own cards, 3: the partner's (a request of the partner),
            # 4: a requested opponent holder's cards
            if stage == 2:
                h = c
                order_own = True
            elif stage == 3:
                h = c ^ 2
                order_own = True
            else:
                h = hold
                order_own = False
            start = 0
            if order_own:
                if bstr >= 0 and ((leader + bplace) & 1) != (c & 1):
                    start = _OWN_BEAT[off + bstr]  # the other side is winning: cheapest winner first
            if rm < 0:
                hand = h0 if h == 0 else h1 if h == 1 else h2 if h == 2 else h3
                hm = (hand >> off) & 16383
                if order_own:
                    rm = _RANK_OWN[(off // 14 << 14) | hm]
                    if start:
                        rm = ((rm >> start) | (rm << (14 - start))) & 16383
                else:
                    rm = _RANK_HOLD[(off // 14 << 14) | hm]
            while rm:
                k = _LOWBIT[rm] + start
                rm &= rm - 1
                if k >= 14:
                    k -= 14
                code = (stage << 4) | k
                if code != first:
                    found = True
                    x = _OWN_ORDER[off + k] if order_own else _HOLD_ORDER[off + k]
                    break
            if not found:
                rm = -1
                stage = _END if stage == 3 or stage == 4 else stage + 1
    return found, x, h, rh, code, stage, rm


@numba.njit(inline="always", cache=True)
def _child(x, h, rh, h0, h1, h2, h3, leader, place, bstr, bplace, ts, tm0, tm1, var):  # pragma: no cover - compiled
    """The hands and trick after the move of a node at ``place`` (hands ``h0..h3``, trick
    so far ``bstr``, ``bplace``, ``ts``, ``tm0``, ``tm1``): card ``x`` played from seat
    ``h`` (R4.1: a later card must be strictly stronger to lead the trick), or a request
    of seat ``rh`` (R3.2): a hold node, unless that seat holds a single card of the cult,
    which is then played. Returns ``(h0, h1, h2, h3, place, hold, bstr, bplace, ts, tm0,
    tm1)`` of the child."""
    hold = -1
    if rh >= 0:
        off = 14 * _SEAT_CULT[var, (leader + place) & 3]
        m = ((h0 if rh == 0 else h1 if rh == 1 else h2 if rh == 2 else h3) >> off) & 16383
        if m & (m - 1) == 0:  # a single card of the cult: no choice to make
            x = off + _LOWBIT[m]
            h = rh
        else:
            hold = rh
    if x < 0:
        return h0, h1, h2, h3, place, hold, bstr, bplace, ts, tm0, tm1
    h0, h1, h2, h3, bstr, bplace = _play(h0, h1, h2, h3, h, x, bstr, bplace, place)
    return (h0, h1, h2, h3, place + 1, hold, bstr, bplace, ts + _SOUL[x], tm0 + _MULT[var, 0, x],
            tm1 + _MULT[var, 1, x])


@numba.njit(cache=True, **NO_REFCOUNT)
def _store(T, F, sp, val, gen):  # pragma: no cover - compiled
    """Write frame ``sp``'s value ``val`` to its table row, if it is a trick start: exact,
    or a lower (1) or upper (2) bound against the window it was entered with, with its
    best move and ``gen`` (always replace)."""
    t = F[sp, _TTI]
    if t >= 0:
        T[t, 0] = F[sp, _K1]
        T[t, 1] = F[sp, _K2]
        T[t, 2] = F[sp, _K3]
        T[t, 3] = val
        meta = ((F[sp, _BCODE] + 1) << 2) | (gen << 10)
        if val <= F[sp, _A0]:
            T[t, 4] = 2 | meta
        elif val >= F[sp, _B0]:
            T[t, 4] = 1 | meta
        else:
            T[t, 4] = meta


@numba.njit(_i8(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8,
                _i8, _i8, _i8, _i8, _i8, _i8[:, ::1]), cache=True)
def search(h0, h1, h2, h3, leader, place, hold, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
           s0, m0, s1, m1, left, alpha, beta, var, gen, T):  # pragma: no cover - compiled
    """Minimax value for side 0 (deal points) of a choose node at ``place`` (``hold``
    -1), of the opponent holder ``hold`` picking the card there, or of a finished trick
    (``place`` 4), searched with the window (``alpha``, ``beta``); fail-soft.

    The node: the hands ``h0..h3``, the trick so far (best strength ``bstr`` at place
    ``bplace``, souls ``ts`` and multipliers ``tm0``, ``tm1`` by side), the pending pile
    (``ps``, ``pm0``, ``pm1``), each side's souls and multipliers (``s0``, ``m0``, ``s1``,
    ``m1``) and the tricks ``left``. ``var``: 0 = 4 players, 1 = 3 players. ``gen``: the
    Solver's generation. ``T``: the table (:func:`new_table`); its last row's first column
    counts nodes. The search is iterative (an explicit stack of frames) so that numba can
    cache it (steps: :func:`_settle`, :func:`_place2`, :func:`_probe`, :func:`_push`,
    :func:`_next_move`, :func:`_child`, :func:`_store`).
    """
    vv = var & 1
    F = np.empty((_MAX_DEPTH, _NFIELDS), dtype=np.int64)
    KL = T[_N_TT:_N_TT + _KILLER_ROWS].reshape(-1)  # killer moves, a view into the table
    nodes = 0
    sp = -1
    val = 0
    c0, c1, c2, c3 = h0, h1, h2, h3  # the child about to be entered starts as the root
    while True:
        # ---- enter the child: a value at once, or a new frame -------------------------
        have_val = False
        tti = -1
        tmove = -1
        k1 = k2 = k3 = 0
        if place == 4:
            have_val, val, counted, leader, ps, pm0, pm1, s0, m0, s1, m1, left = _settle(
                c0, c1, c2, c3, leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta,
                vv)
            nodes += counted
            place, hold, bstr, bplace, ts, tm0, tm1 = 0, -1, -1, 0, 0, 0, 0
        if not have_val and left == 2 and (place == 2 or place == 3) and hold < 0:
            nodes += 1
            if place == 2:
                val = _place2(c0, c1, c2, c3, leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                              s0, m0, s1, m1, vv, alpha, beta)
            else:
                val = _place3(c0, c1, c2, c3, leader, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                              s0, m0, s1, m1, vv, alpha, beta)
            have_val = True
        if not have_val and left >= 2 and place == 0:
            tti, k1, k2, k3, tmove, have_val, val, alpha, beta = _probe(
                T, gen, c0, c1, c2, c3, leader, place, hold, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1,
                m1, alpha, beta)
        if not have_val:
            if tmove < 0:
                kc = KL[_killer_slot(left, place, hold)]
                if kc >= 0 and _move_legal(kc, c0, c1, c2, c3, leader, place, hold, vv):
                    tmove = kc
            sp += 1
            nodes += 1
            _push(F, sp, c0, c1, c2, c3, leader, place, hold, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1,
                  m1, left, alpha, beta, tmove, tti, k1, k2, k3)
        # ---- back up values and pick the next child ------------------------------------
        while True:
            if have_val:
                if sp < 0:
                    T[T.shape[0] - 1, 0] += nodes
                    return val
                # the child's value (fail-soft; side 0 maximizes); a cut-off ends the frame and
                # its move becomes the killer of its slot
                side = F[sp, _HOLD] & 1 if F[sp, _HOLD] >= 0 else (F[sp, _LEADER] + F[sp, _PLACE]) & 1
                best, a, b = _backup(side == 0, val, F[sp, _BEST], F[sp, _ALPHA], F[sp, _BETA])
                if best != F[sp, _BEST]:
                    F[sp, _BEST], F[sp, _BCODE] = best, F[sp, _CUR]
                F[sp, _ALPHA], F[sp, _BETA] = a, b
                if a >= b:
                    F[sp, _STAGE] = _END
                    KL[_killer_slot(F[sp, _LEFT], F[sp, _PLACE], F[sp, _HOLD])] = F[sp, _CUR]
                have_val = False
            found, x, h, rh, code, stage, F[sp, _I] = _next_move(
                F[sp, _STAGE], F[sp, _FIRST], F[sp, _I], F[sp, 0], F[sp, 1], F[sp, 2], F[sp, 3], F[sp, _LEADER],
                F[sp, _PLACE], F[sp, _HOLD], F[sp, _BSTR], F[sp, _BPLACE], vv)
            F[sp, _CUR] = code
            F[sp, _STAGE] = stage
            if found:
                c0, c1, c2, c3, place, hold, bstr, bplace, ts, tm0, tm1 = _child(
                    x, h, rh, F[sp, 0], F[sp, 1], F[sp, 2], F[sp, 3], F[sp, _LEADER], F[sp, _PLACE], F[sp, _BSTR],
                    F[sp, _BPLACE], F[sp, _TS], F[sp, _TM0], F[sp, _TM1], vv)
                leader, left, alpha, beta = F[sp, _LEADER], F[sp, _LEFT], F[sp, _ALPHA], F[sp, _BETA]
                ps, pm0, pm1 = F[sp, _PS], F[sp, _PM0], F[sp, _PM1]
                s0, m0, s1, m1 = F[sp, _S0], F[sp, _M0], F[sp, _S1], F[sp, _M1]
                break
            # every child searched (or a cut-off): the frame's value goes to its parent
            val = F[sp, _BEST]
            _store(T, F, sp, val, gen)
            sp -= 1
            have_val = True


def new_table() -> np.ndarray:
    """A zeroed table: ``2**TT_BITS`` rows of 5 int64, the killer rows (-1: none) and the
    node-counter row."""
    table = np.empty(((1 << TT_BITS) + _KILLER_ROWS + 1, 5), dtype=np.int64)
    _reset(table)  # touches every page now rather than inside the first searches
    return table


def _reset(table: np.ndarray) -> None:
    """Empty ``table``: rows and node counter zero, no killer moves (-1)."""
    table.fill(0)
    table[1 << TT_BITS:(1 << TT_BITS) + _KILLER_ROWS] = -1


_TABLE: np.ndarray | None = None
_GENERATION = 0


def shared_table() -> np.ndarray:
    """The process's table, shared by every numba-backed Solver (one search runs at a
    time; a Solver only reads rows of its own generation)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = new_table()
    return _TABLE


def new_generation() -> int:
    """A generation number no Solver of this process has used: rows written under any
    other generation are ignored, so taking one empties the table for its Solver."""
    global _GENERATION
    _GENERATION += 1
    if _GENERATION >= 1 << 40:  # the 64-bit row metadata holds 61 bits of generation
        _reset(shared_table())
        _GENERATION = 1
    return _GENERATION
