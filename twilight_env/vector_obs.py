"""Batched observation vectors for :class:`~twilight_env.vector.VectorEngine`.

``observe(engine, seats)`` returns, for every row, exactly the float32 vector that
:func:`twilight_env.encoding.encode_observation` gives for the same state and viewer
(deal episodes: no match totals). The layout is not restated here: every offset is taken
from ``encoding``'s named constants, and ``tests/vector/`` checks equality element by
element, so a change of the layout there shows up as a failing test, not a silent drift.

How it works, per batch (no Python loop over rows):

1. For each field of 0/1 flags, compute one (B,) int64 value per row: a 28-bit card mask
   (hands, played-for, held-by, taken, trick-of, pending, gone), or a small one-hot
   (counts, seats relative to the ego seat, phase, trick number, ...).
2. OR each value into 32-bit words at the field's bit offset (``_Words``); a field that
   crosses a word boundary is split into two.
3. Expand the words into the flag block of the output in one call (``numpy.unpackbits``
   on the NumPy backend, shifts on torch) and write the side scalars (R5) after it.

The ego seat follows ``encoding``: the acting seat when the viewer decides the pending
action (3 players: the solo deciding for the new moon sees seat 2 as relative seat 0,
R7.3), else the viewer's own seat.
"""

from __future__ import annotations

import numpy as np

from . import encoding as E
from .engine import HOLD, NEW_MOON, NUM_TRICKS

_M32 = 0xFFFFFFFF
_ROLE_3P = np.array([2, 3, 0, 4], dtype=np.int64)
"""3 players: role flag of seats 0 (solo), 1 (left Sun), 3 (right Sun) (R7.2); seat 2 never views."""


def _rot_table(moon_bits: int) -> np.ndarray:
    """(4,) int64: the 4-bit seat set ``moon_bits`` seen from each ego seat (bit r = seat ego + r)."""
    return np.array([((moon_bits | moon_bits << 4) >> e) & 15 for e in range(4)], dtype=np.int64)


_MOON_ROT = {4: _rot_table(0b1010), 3: _rot_table(0b0101)}
"""Moon seats (4p: 1, 3, R2.1; 3p: 0, 2, R7.1) relative to each ego seat."""


class _Words:
    """32-bit words (each a (B,) int64 array) that flag fields are ORed into."""

    def __init__(self, nbits: int):
        self.n = (nbits + 31) // 32
        self.w = [None] * self.n

    def _or(self, k: int, v):
        self.w[k] = v if self.w[k] is None else self.w[k] | v

    def put(self, offset: int, value, width: int) -> None:
        """OR ``value`` (< 2**width, width <= 32) in at bit ``offset``."""
        k, sh = offset >> 5, offset & 31
        x = value << sh if sh else value
        if sh + width <= 32:
            self._or(k, x)
        else:
            self._or(k, x & _M32)
            self._or(k + 1, x >> 32)

    def onehot(self, start: int, var, size: int, on=None) -> None:
        """Set bit ``start + var`` (``var`` in 0..size-1, size <= 32); only where ``on``."""
        k, sh = start >> 5, start & 31
        x = 1 << (var + sh)
        if on is not None:
            x = x * on
        if sh + size <= 32:
            self._or(k, x)
        else:
            self._or(k, x & _M32)
            self._or(k + 1, x >> 32)

    def finish(self, zeros):
        return [zeros if x is None else (x if hasattr(x, "shape") else zeros + x) for x in self.w]


def observe(eng, seats=None, out=None):
    """Observation vectors of the whole batch (see the module docstring).

    Args:
        eng: a :class:`~twilight_env.vector.VectorEngine`.
        seats: (B,) ints, the viewer's seat per row (0..3; 3 players: 0, 1 or 3); default
            the deciding seat.
        out: optional (B, OBS_SIZE) float32 array (tensor on the torch backend) to fill.

    Returns:
        (B, OBS_SIZE) float32: row ``i`` equals ``encode_observation(eng.to_state(i), seat_i)``.

    Raises:
        ValueError: on bad seats or a bad ``out``.
    """
    o = eng.ops
    B = eng.num_envs
    three = eng.num_players == 3
    leader, place, trick = eng.leader, eng.place, eng.trick
    c = (leader + place) & 3
    hold = eng.phase == HOLD
    acting = o.where(hold, eng.holder, c)
    deciding = acting & ~((acting == NEW_MOON) * 2) if three else acting
    done = trick == NUM_TRICKS
    live = ~done
    if seats is None:
        seat = deciding
    else:
        seat = o.asarray(seats)
        if tuple(seat.shape) != (B,) or not o.is_int(seat):
            raise ValueError(f"seats must be ({B},) ints, got shape {tuple(seat.shape)} dtype {seat.dtype}")
        seat = o.cast(seat, o.int64)
        bad = (seat < 0) | (seat > 3)
        if three:
            bad = bad | (seat == NEW_MOON)
        if bool(bad.any()):
            raise ValueError("seats must be 0..3 (3 players: 0, 1 or 3; the new moon 2 is no viewer)")
    if out is None:
        out = o.empty((B, E.OBS_SIZE), o.float32)
    elif tuple(out.shape) != (B, E.OBS_SIZE) or out.dtype != o.float32:
        raise ValueError(f"out must be a ({B}, {E.OBS_SIZE}) float32 array")
    to_act = live & (deciding == seat)
    ego = o.where(to_act, acting, seat)

    W = _Words(E.NUM_BITS)
    NC = E.NC
    hands = eng.hands
    r4 = eng._rows4
    fi = [r4 + ((ego + r) & 3) if r else r4 + ego for r in range(4)]
    rel_seat = [(ego + r) & 3 for r in range(4)]
    half_count = eng._half_count
    gone = 0
    for r in range(4):
        h = o.gather(hands, fi[r])
        gone = gone | h
        # KNOWN: own hand; in 3 players also the new moon's open hand (R7.1)
        seen = rel_seat[r] == seat
        if three:
            seen = seen | (rel_seat[r] == NEW_MOON)
        W.put(E.KNOWN + NC * r, h * seen, NC)
        # COUNTS: one-hot Sun count, one-hot Moon count (R2.5)
        sun = o.lookup(half_count, h & 0x3FFF)
        moon = o.lookup(half_count, h >> 14)
        W.put(E.COUNTS + 2 * E.COUNT_SLOTS * r, (1 << sun) | (1 << (moon + E.COUNT_SLOTS)), 2 * E.COUNT_SLOTS)
        W.put(E.PLAYED_FOR + NC * r, o.gather(eng.played_for, fi[r]), NC)
        W.put(E.HELD_BY + NC * r, o.gather(eng.held_by, fi[r]), NC)
        W.put(E.TAKEN + NC * r, o.gather(eng.captured, fi[r]), NC)
    W.put(E.GONE, gone ^ ((1 << NC) - 1), NC)
    # TRICK: card, chooser and holder (relative) per filled place (R3.1-R3.3)
    code = eng.trick_code
    pow2 = eng._pow2
    for p in range(4):
        cp = code >> (8 * p)
        card1 = cp & 31                      # card id + 1, 0 when empty
        base = E.TRICK + E.TRICK_PLACE_SIZE * p
        W.put(base, o.lookup(pow2, (card1 - 1) & 31), NC)
        meta = (1 << ((leader + p - ego) & 3)) | (16 << (((cp >> 5) - ego) & 3))
        W.put(base + NC, meta * (card1 != 0), 8)
    trick_of = eng.trick_of
    for t in range(NUM_TRICKS):
        W.put(E.TRICK_OF + NC * t, trick_of[:, t], NC)
    W.put(E.PENDING, eng.pending, NC)
    # PHASE one-hot: choose, hold, over (a finished deal's phase is choose, 0)
    W.onehot(E.PHASE, eng.phase + done * 2, 3)
    W.onehot(E.TO_ACT, 0, 1, to_act)
    W.onehot(E.ACTING, (acting - ego) & 3, 4, live)
    W.onehot(E.CHOOSER, (c - ego) & 3, 4, live)
    W.onehot(E.HOLDER, (eng.holder - ego) & 3, 4, live & hold)
    W.onehot(E.LEADER, (leader - ego) & 3, 4)
    W.onehot(E.TRICK_NO, trick, NUM_TRICKS + 1)
    W.onehot(E.PLACE, place, 4, live)
    if three:
        W.onehot(E.ROLE, o.lookup(eng._role3, seat), 5)
        W.onehot(E.NEW_MOON_DECISION, 0, 1, to_act & (ego == NEW_MOON))
        W.onehot(E.NEW_MOON_AT, (NEW_MOON - ego) & 3, 4)
    else:
        W.onehot(E.ROLE, seat & 1, 5)
    W.put(E.MOON_SEAT, o.lookup(eng._moon_rot, ego), 4)
    # MATCH stays 0: the batch engine plays deal episodes
    o.unpack_words(W.finish(o.zeros((B,), o.int64)), E.NUM_BITS, out)

    # SIDE scalars (R5): own side first. Own side = side of the ego seat.
    cap = eng.captured
    s0 = cap[:, 0] | cap[:, 2]
    s1 = cap[:, 1] | cap[:, 3]
    own = (ego & 1) == 1
    a = o.where(own, s1, s0)
    b = o.where(own, s0, s1)
    cult = (ego + 1) & 1 if three else ego & 1   # ego seat's cult: 4p seats 1, 3 Moon; 3p seats 0, 2 Moon
    sh_own = cult * 14
    sh_other = 14 - sh_own
    hs, hm = eng._half_souls, eng._half_mult
    sa = o.lookup(hs, a & 0x3FFF) + o.lookup(hs, a >> 14)
    sb = o.lookup(hs, b & 0x3FFF) + o.lookup(hs, b >> 14)
    ma = o.lookup(hm, (a >> sh_own) & 0x3FFF)
    da = o.lookup(hm, (a >> sh_other) & 0x3FFF)
    mb = o.lookup(hm, (b >> sh_other) & 0x3FFF)
    db = o.lookup(hm, (b >> sh_own) & 0x3FFF)
    f = o.float64
    scal = o.stack([o.cast(sa, f) / 60.0, o.cast(ma, f) / 6.0, o.cast(da, f) / 6.0, o.cast(sa * ma, f) / 360.0,
                    o.cast(sb, f) / 60.0, o.cast(mb, f) / 6.0, o.cast(db, f) / 6.0, o.cast(sb * mb, f) / 360.0], 1)
    out[:, E.SIDE:E.SIDE + 2 * E.SIDE_FIELDS] = scal
    out[:, E.SIDE + 2 * E.SIDE_FIELDS:] = 0  # TOTALS, TARGET: match episodes only
    return out


def attach_tables(eng) -> None:
    """Copy the small observation tables to the engine's backend (called once per engine)."""
    eng._role3 = eng.ops.table(_ROLE_3P)
    eng._moon_rot = eng.ops.table(_MOON_ROT[eng.num_players])
