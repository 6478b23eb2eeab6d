"""Compiled backend of the heuristic rollout (numba; :mod:`twilight_env.agents.fast_rollout` loads it).

The same decisions as :func:`twilight_env.agents.heuristic.decide_state` at every decision point, and
the same rules as :meth:`twilight_env.rules.engine.State.apply` (R3.2-R4.4), written for numba
over one small int64 array per rollout. The arithmetic of the heuristic's estimate is
done in the same order, in IEEE doubles, so every comparison (ties to the lowest action
id, the ``1e-9`` margin of the choose phase) comes out the same;
``tests/agents/test_fast_rollout.py`` checks decision by decision and whole rollouts
against the Python heuristic.

The heuristic's tuning constants (``LEAD``, ``TIP``, ``KEEP_BY_STRENGTH``, ...) are not
compiled in: they travel in the ``params`` array built from :mod:`twilight_env.agents.heuristic` at
call time, so numba's on-disk cache (``cache=True``, only the first process on a machine
compiles, a few seconds) never holds stale constants. The card tables (strength, souls,
multipliers, their half-mask sums, seat cults) are fixed facts of the game (R1, R2.1,
R5, R7.1) and are module constants read from :mod:`twilight_env.rules.tables`, as in
:mod:`twilight_env.agents._solver_nb`. The order weights ``_W`` are the heuristic's
``_order_weights()`` as an array (``tests/agents/test_card_tables.py`` checks them equal).

State layout (``st``, int64, length :data:`ST_SIZE`): hands 0..3 (28-bit masks), leader,
trick, place, phase (0 choose, 1 hold), holder (-1 when none), the current trick's cards
by place (-1 empty), pending pile, captured masks by seat, neutral pile, and the variant
(0: 4 players, 1: 3 players).
"""

from __future__ import annotations

from math import comb

import numba
import numpy as np

from twilight_env.rules.cards import PURGATORY_MASK
from twilight_env.rules.tables import HALF_COUNT as _POP
from twilight_env.rules.tables import HALF_MAX_STRENGTH as _HMAXSTR
from twilight_env.rules.tables import HALF_MULT as _HMULT
from twilight_env.rules.tables import HALF_SOULS as _HSOULS
from twilight_env.rules.tables import MULT_OF_CULT as _MULT_OF_CULT
from twilight_env.rules.tables import SANCTUARY as _SANCT
from twilight_env.rules.tables import SEAT_CULT as _SEAT_CULT
from twilight_env.rules.tables import SOULS as _SOUL
from twilight_env.rules.tables import STRENGTH as _STR

H0, LEADER, TRICK, PLACE, PHASE, HOLDER, CARDS, PENDING, CAPTURED, NEUTRAL, VAR = 0, 4, 5, 6, 7, 8, 9, 13, 14, 18, 19
"""Offsets of the fields in a state array."""
ST_SIZE = 20
MAX_ACTIONS = 64
"""Room for a deal's actions: at most 28 cards and 28 requests (R3.2)."""

# params: the heuristic's constants, in this order, then the 28 keep costs by card
P_LEAD, P_TIP, P_LATER_OWN, P_LATER_OTHER, P_DENY, P_UNSURE, P_KEEP = 0, 1, 2, 3, 4, 5, 6
PARAMS_SIZE = 6 + 28

_PURG = PURGATORY_MASK
_HALF = (1 << 14) - 1
_W = np.zeros((15, 15, 14), dtype=np.float64)
"""[n, k, i]: probability that the i-th smallest of n values is the minimum of a uniform
k-subset, C(n-1-i, k-1) / C(n, k) (the same Python division as the heuristic's)."""
for _n in range(1, 15):
    for _k in range(1, _n + 1):
        _t = comb(_n, _k)
        for _i in range(_n):
            _W[_n, _k, _i] = comb(_n - 1 - _i, _k - 1) / _t


@numba.njit(cache=True)
def _value(y, bstr, bplace, place, leader, k, ra0, ra1, ck, co, wsk, wso, wmk, wmo, dmk, dmo, kcult, ocult,
           lead_now, p_unsure):  # pragma: no cover - compiled
    """The heuristic's estimate E(y) for the chooser's side ``k`` of card ``y`` played now
    (the arguments after ``y``: the tuple :func:`_context` builds)."""
    st = _STR[y]
    if st > bstr:
        nb = st
        np_ = place
    else:
        nb = bstr
        np_ = bplace
    bs = (leader + np_) & 1
    if nb == 7:  # R4.3 pending; R4.4 neutral in the last trick
        return lead_now if bs == k else -lead_now
    sure = (ra1 if bs else ra0) <= nb
    sy = _SOUL[y]
    my = _MULT_OF_CULT[kcult, y]
    oy = _MULT_OF_CULT[ocult, y]
    if bs == k:
        pk = 1.0 if sure else p_unsure
    else:
        pk = 0.0 if sure else 1.0 - p_unsure
    return pk * (ck + wsk * sy + wmk * my + dmk * oy) - (1.0 - pk) * (co + wso * sy + wmo * oy + dmo * my)


@numba.njit(cache=True)
def _expected_extreme(vals, n, k, want_max):  # pragma: no cover - compiled
    """Expected min (or max) of ``k`` values drawn without replacement from ``vals[:n]``
    (sorts ``vals[:n]`` in place, ascending; equal values are interchangeable, so the sum
    is the heuristic's whatever order they end in)."""
    if n == 0:
        return 0.0
    for i in range(1, n):  # insertion sort: n <= 14, no allocation
        x = vals[i]
        j = i - 1
        while j >= 0 and vals[j] > x:
            vals[j + 1] = vals[j]
            j -= 1
        vals[j + 1] = x
    if k >= n:
        return vals[n - 1] if want_max else vals[0]
    if k < 1:
        k = 1
    t = 0.0
    for i in range(n):
        v = vals[n - 1 - i] if want_max else vals[i]
        t += _W[n, k, i] * v
    return t


@numba.njit(cache=True)
def legal_into(st, out):  # pragma: no cover - compiled
    """Write the sorted legal actions (R3.2, R3.5) into ``out``; return how many."""
    var = st[VAR]
    c = (st[LEADER] + st[PLACE]) & 3
    cult = _SEAT_CULT[var, c]
    shift = 14 * cult
    h = st[HOLDER]
    n = 0
    m = (st[H0 + (h if h >= 0 else c)] >> shift) & _HALF
    b = 0
    while m:
        if m & 1:
            out[n] = shift + b
            n += 1
        m >>= 1
        b += 1
    if h < 0:
        for o in range(1, 4):
            if (st[H0 + ((c + o) & 3)] >> shift) & _HALF:
                out[n] = 27 + o
                n += 1
    return n


@numba.njit(inline="always", cache=True)
def _viewer_knowledge(st, known):  # pragma: no cover - compiled
    """Fill ``known`` (int64, 4) with the hands the deciding seat sees (its own; in 3
    players the open new-moon hand, R7.1, R7.3) and return the unseen cards' mask."""
    var = st[VAR]
    acting = st[HOLDER] if st[PHASE] == 1 else (st[LEADER] + st[PLACE]) & 3
    d = 0 if (var == 1 and acting == 2) else acting
    known[0] = known[1] = known[2] = known[3] = 0
    known[d] = st[H0 + d]
    if var == 1:
        known[2] = st[H0 + 2]
    rem = st[H0] | st[H0 + 1] | st[H0 + 2] | st[H0 + 3]
    return rem & ~(known[0] | known[1] | known[2] | known[3])


@numba.njit(inline="always", cache=True)
def _context(st, known, unseen, params):  # pragma: no cover - compiled
    """The terms of the heuristic's estimate at this decision, as one tuple for
    :func:`_value`: the trick so far (best strength and its place), the weights of souls
    and multipliers for each side from what it took (R5.3), the trick's worth, the reach
    of the later places (the strongest card each may still play) and the constants."""
    var = st[VAR]
    leader = st[LEADER]
    place = st[PLACE]
    deny = params[P_DENY]
    later_own = params[P_LATER_OWN]
    later_other = params[P_LATER_OTHER]
    k = ((leader + place) & 3) & 1
    # the trick so far
    bstr = -1
    bplace = 0
    tp = st[PENDING]
    for p in range(place):
        x = st[CARDS + p]
        tp |= 1 << x
        s = _STR[x]
        if s > bstr:
            bstr = s
            bplace = p
    cult0 = _SEAT_CULT[var, 0]
    cult1 = _SEAT_CULT[var, 1]
    tsouls = _HSOULS[tp & _HALF] + _HSOULS[tp >> 14]
    tm0 = _HMULT[(tp >> (14 * cult0)) & _HALF]
    tm1 = _HMULT[(tp >> (14 * cult1)) & _HALF]
    cap0 = st[CAPTURED] | st[CAPTURED + 2]
    cap1 = st[CAPTURED + 1] | st[CAPTURED + 3]
    ws0 = 1.0 + _HMULT[(cap0 >> (14 * cult0)) & _HALF]
    ws1 = 1.0 + _HMULT[(cap1 >> (14 * cult1)) & _HALF]
    wm0 = 10.0 + (_HSOULS[cap0 & _HALF] + _HSOULS[cap0 >> 14])
    wm1 = 10.0 + (_HSOULS[cap1 & _HALF] + _HSOULS[cap1 >> 14])
    base0 = ws0 * tsouls + wm0 * tm0 + deny * wm1 * tm1
    base1 = ws1 * tsouls + wm1 * tm1 + deny * wm0 * tm0
    # reach of the later places
    ra0 = -1
    ra1 = -1
    cnt0 = 0
    cnt1 = 0
    for q in range(place + 1, 4):
        s = (leader + q) & 3
        j = s & 1
        if j == 0:
            cnt0 += 1
        else:
            cnt1 += 1
        vc = _SEAT_CULT[var, s]
        avail = unseen | known[j] | known[j + 2]
        r = _HMAXSTR[(avail >> (14 * vc)) & _HALF]
        if j == 0:
            if r > ra1:
                ra1 = r
        else:
            if r > ra0:
                ra0 = r
    if k == 0:
        ck = base0 + later_own * cnt0 + later_other * cnt1
        co = base1 + later_own * cnt1 + later_other * cnt0
        wsk, wso, wmk, wmo = ws0, ws1, wm0, wm1
        kcult, ocult = cult0, cult1
    else:
        ck = base1 + later_own * cnt1 + later_other * cnt0
        co = base0 + later_own * cnt0 + later_other * cnt1
        wsk, wso, wmk, wmo = ws1, ws0, wm1, wm0
        kcult, ocult = cult1, cult0
    lead_now = params[P_LEAD] if st[TRICK] != 6 else 0.0
    return (bstr, bplace, place, leader, k, ra0, ra1, ck, co, wsk, wso, wmk, wmo, deny * wmo, deny * wmk,
            kcult, ocult, lead_now, params[P_UNSURE])


@numba.njit(inline="always", cache=True)
def _hold_decision(st, legal, n_legal, params, ctx, known, unseen, keep_scale):  # pragma: no cover - compiled
    """The hold phase: the card the holder gives the chooser (R3.2, R3.5). For its own
    side (3 players: solo <-> new moon) the best for the side; for an opponent the
    weakest, least valuable card, and no sanctuary while another card will do unless the
    trick is surely the holder's side's already."""
    holder = st[HOLDER]
    leader = st[LEADER]
    place = st[PLACE]
    bstr = ctx[0]
    k = ctx[4]
    if (holder & 1) == k:  # for the partner (3 players: solo <-> new moon): best for the side
        best_a = legal[0]
        best_v = 0.0
        first = True
        for i in range(n_legal):
            y = legal[i]
            v = _value(y, *ctx) - keep_scale * params[P_KEEP + y]
            if first or v > best_v:
                best_a = y
                best_v = v
                first = False
        return best_a
    # for an opponent: the weakest, least valuable card for the chooser's side
    ours_sure = False
    if place > 0 and bstr >= 0 and bstr != 7:
        bs = (leader + ctx[1]) & 1
        rab = ctx[6] if bs else ctx[5]
        shift = 14 * _SEAT_CULT[st[VAR], (leader + place) & 3]
        ours_sure = bs == (holder & 1) and rab <= bstr and _HMAXSTR[
            ((unseen | known[k] | known[k + 2]) >> shift) & _HALF] <= bstr
    only_non_sanct = False
    if not ours_sure:
        for i in range(n_legal):
            if not _SANCT[legal[i]]:
                only_non_sanct = True
                break
    best_a = -1
    best_v = 0.0
    for i in range(n_legal):
        y = legal[i]
        if only_non_sanct and _SANCT[y]:
            continue
        v = _value(y, *ctx) + 0.01 * _STR[y]
        if best_a < 0 or v < best_v:
            best_a = y
            best_v = v
    return best_a


@numba.njit(cache=True)
def decide(st, legal, n_legal, params, iscratch, fscratch):  # pragma: no cover - compiled
    """The heuristic's action (:func:`twilight_env.agents.heuristic.decide_state`) in the world ``st``,
    from what the deciding seat knows there: its own hand, the open new-moon hand in 3
    players (R7.1, R7.3), the public counts (R2.5) and history. ``legal[:n_legal]``: the
    sorted legal actions (:func:`legal_into`); ``iscratch`` (int64, 18) and ``fscratch``
    (float64, 28): work space (see :func:`new_scratch`).

    Steps (helpers inlined by numba): what the seat sees (:func:`_viewer_knowledge`), the
    estimate's terms (:func:`_context`), the hold phase's card (:func:`_hold_decision`) or
    the choose phase's action, here: as an inlined helper too it measured 7% slower per
    rollout (36% as a plain compiled call; paired A/B of ``play_out``)."""
    if n_legal == 1:
        return legal[0]
    known = iscratch[:4]
    unseen = _viewer_knowledge(st, known)
    ctx = _context(st, known, unseen, params)
    (bstr, bplace, place, leader, k, ra0, ra1, ck, co, wsk, wso, wmk, wmo, dmk, dmo, kcult, ocult, lead_now,
     p_unsure) = ctx
    trick = st[TRICK]
    phase = st[PHASE]
    tip = params[P_TIP]
    chooser = (leader + place) & 3
    shift = 14 * _SEAT_CULT[st[VAR], chooser]
    keep_scale = 0.0 if trick == 6 else (1.0 if trick < 5 else 0.5)
    if phase == 1:  # hold phase: the decider gives a card for the chooser
        return _hold_decision(st, legal, n_legal, params, ctx, known, unseen, keep_scale)
    # choose phase
    opp_request = False
    for i in range(n_legal):
        a = legal[i]
        if a >= 28 and a != 29:
            opp_request = True
    best_a = legal[0]
    best_v = 0.0
    first = True
    pool_n = -1
    pool = iscratch[4:]
    pool_vals = fscratch[:14]
    tmp = fscratch[14:]
    for i in range(n_legal):
        a = legal[i]
        if a < 28:
            v = _value(a, bstr, bplace, place, leader, k, ra0, ra1, ck, co, wsk, wso, wmk, wmo, dmk, dmo,
                       kcult, ocult, lead_now, p_unsure) - keep_scale * params[P_KEEP + a]
        else:
            h = (chooser + a - 27) & 3
            hk = (known[h] >> shift) & _HALF
            partner = (h & 1) == k
            if partner and place == 1 and opp_request:
                continue  # the partner plays last: request an opponent instead (publisher's tip)
            if hk:  # a hand the decider sees: the holder's exact best (partner) or worst card
                v = 0.0
                got = False
                b = 0
                while hk:
                    if hk & 1:
                        y = shift + b
                        w = _value(y, bstr, bplace, place, leader, k, ra0, ra1, ck, co, wsk, wso, wmk, wmo, dmk,
                                   dmo, kcult, ocult, lead_now, p_unsure)
                        if partner:
                            w = w - keep_scale * params[P_KEEP + y]
                            if not got or w > v:
                                v = w
                        else:
                            if not got or w < v:
                                v = w
                        got = True
                    hk >>= 1
                    b += 1
            else:  # hidden hand: expected extreme of its cards among the unseen ones
                if pool_n < 0:
                    pool_n = 0
                    m = (unseen >> shift) & _HALF
                    b = 0
                    while m:
                        if m & 1:
                            y = shift + b
                            pool[pool_n] = y
                            pool_vals[pool_n] = _value(y, bstr, bplace, place, leader, k, ra0, ra1, ck, co, wsk,
                                                       wso, wmk, wmo, dmk, dmo, kcult, ocult, lead_now, p_unsure)
                            pool_n += 1
                        m >>= 1
                        b += 1
                n_h = _POP[(st[H0 + h] >> shift) & _HALF]
                if partner:
                    for j in range(pool_n):
                        tmp[j] = pool_vals[j] - keep_scale * params[P_KEEP + pool[j]]
                    v = _expected_extreme(tmp, pool_n, n_h, True)
                else:
                    for j in range(pool_n):
                        tmp[j] = pool_vals[j]
                    v = _expected_extreme(tmp, pool_n, n_h, False)
            if not partner and place == 1:
                v += tip
        if first or v > best_v + 1e-9:
            best_a = a
            best_v = v
            first = False
    return best_a


@numba.njit(cache=True)
def apply(st, a):  # pragma: no cover - compiled
    """Apply a legal action in place (R3.2-R4.4; no legality check)."""
    p = st[PLACE]
    leader = st[LEADER]
    c = (leader + p) & 3
    if a >= 28:  # a request of the seat at offset a - 27 (R3.2)
        st[PHASE] = 1
        st[HOLDER] = (c + a - 27) & 3
        return
    h = st[HOLDER]
    if h < 0:
        h = c
    st[H0 + h] ^= 1 << a
    st[PHASE] = 0
    st[HOLDER] = -1
    st[CARDS + p] = a
    if p != 3:
        st[PLACE] = p + 1
        return
    # the trick is full: settle it (R4.1-R4.4)
    c0, c1, c2, c3 = st[CARDS], st[CARDS + 1], st[CARDS + 2], st[CARDS + 3]
    tmask = (1 << c0) | (1 << c1) | (1 << c2) | (1 << c3)
    if tmask & _PURG:
        first = 0
        while not ((1 << st[CARDS + first]) & _PURG):
            first += 1
        st[PENDING] |= tmask
        st[LEADER] = (leader + first) & 3
        if st[TRICK] == 6:
            st[NEUTRAL] |= st[PENDING]
            st[PENDING] = 0
    else:
        w = 0
        best = _STR[c0]
        if _STR[c1] > best:
            best = _STR[c1]
            w = 1
        if _STR[c2] > best:
            best = _STR[c2]
            w = 2
        if _STR[c3] > best:
            w = 3
        taker = (leader + w) & 3
        st[CAPTURED + taker] |= tmask | st[PENDING]
        st[PENDING] = 0
        st[LEADER] = taker
    st[TRICK] += 1
    st[PLACE] = 0
    for i in range(4):
        st[CARDS + i] = -1


@numba.njit(cache=True)
def side_scores(st):  # pragma: no cover - compiled
    """Deal score of side 0 and side 1 (R5.3) from the captured masks."""
    var = st[VAR]
    m0 = st[CAPTURED] | st[CAPTURED + 2]
    m1 = st[CAPTURED + 1] | st[CAPTURED + 3]
    s0 = (_HSOULS[m0 & _HALF] + _HSOULS[m0 >> 14]) * _HMULT[(m0 >> (14 * _SEAT_CULT[var, 0])) & _HALF]
    s1 = (_HSOULS[m1 & _HALF] + _HSOULS[m1 >> 14]) * _HMULT[(m1 >> (14 * _SEAT_CULT[var, 1])) & _HALF]
    return s0, s1


@numba.njit(cache=True)
def seat_score(st, s):  # pragma: no cover - compiled
    """Deal score of seat ``s`` from only the tricks it took (R8 ``individual``)."""
    m = st[CAPTURED + s]
    return (_HSOULS[m & _HALF] + _HSOULS[m >> 14]) * _HMULT[(m >> (14 * _SEAT_CULT[st[VAR], s])) & _HALF]


@numba.njit(cache=True)
def new_scratch():  # pragma: no cover - compiled
    """Work space for :func:`decide`: (legal actions, int scratch, float scratch)."""
    return np.empty(17, dtype=np.int64), np.empty(18, dtype=np.int64), np.empty(28, dtype=np.float64)


@numba.njit(cache=True)
def play_out(st, acts, params):  # pragma: no cover - compiled
    """Play ``st`` to the end of the deal with the heuristic for every seat, in place;
    the actions go to ``acts``. Returns how many were played."""
    legal, iscratch, fscratch = new_scratch()
    n = 0
    while st[TRICK] != 7:
        nl = legal_into(st, legal)
        a = decide(st, legal, nl, params, iscratch, fscratch)
        acts[n] = a
        n += 1
        apply(st, a)
    return n


@numba.njit(cache=True)
def play_out_eps(st, acts, params, epsilon, rng):  # pragma: no cover - compiled
    """:func:`play_out` where each action is uniformly random with probability ``epsilon``,
    drawn from the numpy Generator ``rng`` in the order the Python rollout draws: one
    ``rng.random()`` per decision, then ``rng.integers(0, n_legal)`` when it is below
    ``epsilon`` (numba runs NumPy's algorithms on the Generator's own bit generator, so
    the stream and the Generator's state after the call are NumPy's)."""
    legal, iscratch, fscratch = new_scratch()
    n = 0
    while st[TRICK] != 7:
        nl = legal_into(st, legal)
        if rng.random() < epsilon:
            a = legal[rng.integers(0, nl)]
        else:
            a = decide(st, legal, nl, params, iscratch, fscratch)
        acts[n] = a
        n += 1
        apply(st, a)
    return n


@numba.njit(cache=True)
def rollout_scores(h0, h1, h2, h3, leader, trick, place, phase, holder, c0, c1, c2, c3, pending,
                   k0, k1, k2, k3, neutral, var, params):  # pragma: no cover - compiled
    """Side scores ``(side 0, side 1)`` (R5) at the end of a heuristic rollout from the
    state given field by field (no array to build on the caller's side)."""
    st = np.empty(ST_SIZE, dtype=np.int64)
    st[0], st[1], st[2], st[3] = h0, h1, h2, h3
    st[LEADER], st[TRICK], st[PLACE], st[PHASE], st[HOLDER] = leader, trick, place, phase, holder
    st[CARDS], st[CARDS + 1], st[CARDS + 2], st[CARDS + 3] = c0, c1, c2, c3
    st[PENDING] = pending
    st[CAPTURED], st[CAPTURED + 1], st[CAPTURED + 2], st[CAPTURED + 3] = k0, k1, k2, k3
    st[NEUTRAL] = neutral
    st[VAR] = var
    acts = np.empty(MAX_ACTIONS, dtype=np.int64)
    play_out(st, acts, params)
    return side_scores(st)
