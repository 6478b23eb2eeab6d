"""Batched observation vectors for :class:`~twilight_env.envs.vector.VectorEngine`.

``observe(engine, seats)`` returns, for every row, exactly the float32 vector that
:func:`twilight_env.obs.encoding.encode_observation` gives for the same state and viewer
(deal episodes: no match totals). The layout is not restated here: every offset is taken
from ``encoding``'s named constants, and the parity harness (``tests/rules/test_parity.py``)
checks equality element by element, so a change of the layout there shows up as a failing test, not a silent drift.

With numba installed, on the NumPy backend, :func:`observe` writes the rows with the
scalar env's compiled encoder instead (``_encoding_nb.encode_batch``, one compiled loop
over the rows); ``observe(..., compiled=False)``, :func:`observe_packed` and the torch
backend take the array passes below. Both give the same vectors (tested).

How the array passes work, per batch (no Python loop over rows):

1. ``_build``: for each field of 0/1 flags compute one (B,) int64 value per row, held in
   a 64-bit slot: a 28-bit card mask (hand, played-for, held-by, taken per relative seat;
   trick-of, pending, gone), a one-hot (card counts), a current-trick place (card, chooser,
   holder), or all the small one-hots from ``PHASE`` to ``MATCH`` in one slot.
2. NumPy: shift the slots into little-endian 64-bit words of the flag layout
   (``pack_slots``), then turn every byte into 8 float32 with one table lookup written
   straight into the output (``unpack_slots``); torch: expand the slots' bits and move
   them into place with one ``index_select``.
3. Write the SIDE scalars (R5), computed in float64 and rounded to float32 like the
   scalar encoder does.

The ego seat follows ``encoding``: the acting seat when the viewer decides the pending
action (3 players: the solo deciding for the new moon sees seat 2 as relative seat 0,
R7.3), else the viewer's own seat.
"""

from __future__ import annotations

import numpy as np

from twilight_env.obs import encoding as E
from twilight_env.obs.layout import MOON_SEATS_3P, MOON_SEATS_4P, ROLE_3P
from twilight_env.rules.engine import HOLD, NEW_MOON, NUM_TRICKS
from twilight_env.rules.tables import HALF_COUNT

_ROLE_3P = np.array(ROLE_3P, dtype=np.int64)
"""3 players: role flag of seats 0 (solo), 1 (left Sun), 3 (right Sun) (R7.2), from the
scalar encoder's table; seat 2 never views (``_checked_seats`` refuses it)."""


def _rot_table(moon_bits: int) -> np.ndarray:
    """(4,) int64: the 4-bit seat set ``moon_bits`` seen from each ego seat (bit r = seat ego + r)."""
    return np.array([((moon_bits | moon_bits << 4) >> e) & 15 for e in range(4)], dtype=np.int64)


_MOON_ROT = {4: _rot_table(MOON_SEATS_4P), 3: _rot_table(MOON_SEATS_3P)}
"""Moon seats (4p: 1, 3, R2.1; 3p: 0, 2, R7.1) relative to each ego seat."""


def _seat_field(name: str, rel: int) -> int:
    """Flag offset of a per-seat field (HAND, PLAYED_FOR, HELD_BY, TAKEN, COUNTS) of relative
    seat ``rel`` in the seat records: ``SEATS + SEAT_SIZE * rel + field``."""
    return E.SEATS + E.SEAT_SIZE * rel + getattr(E, name)


class _Slots:
    """Where each flag field goes: 64-bit slots, one field per slot.

    Attributes:
        fields: ``(slot, dest, width)`` per slot: the low ``width`` (<= 63) bits of slot
            ``slot`` are flags ``dest .. dest + width - 1``; the fields tile all flags.
        first: name -> first slot of that field (seat fields: 4 consecutive slots, by
            relative seat; TRICK: 4 by place; TRICK_OF: 7 by trick).
        src: (NUM_BITS,) int64, flag ``k`` comes from bit ``src[k]`` of the slots
            flattened as ``slot * 64 + bit``.

    Raises:
        ImportError: if ``encoding``'s layout no longer fits this scheme (so the mismatch
            shows at import, not as wrong observations).
    """

    def __init__(self):
        NC, R = E.NC, E.NUM_REL
        fields = []  # (name, dest, width); the 4 relative seats of a seat field in consecutive slots
        for name in ("HAND", "PLAYED_FOR", "HELD_BY", "TAKEN"):
            fields += [(name, _seat_field(name, r), NC) for r in range(R)]
        fields += [("COUNTS", _seat_field("COUNTS", r), 2 * E.COUNT_SLOTS) for r in range(R)]
        fields += [("TRICK", E.TRICK + E.TRICK_PLACE_SIZE * p, E.TRICK_PLACE_SIZE) for p in range(4)]
        fields += [("GONE", E.GONE, NC), ("PENDING", E.PENDING, NC)]
        fields += [("TRICK_OF", E.TRICK_OF + NC * t, NC) for t in range(NUM_TRICKS)]
        misc_width = E.NUM_BITS - E.PHASE
        fields += [("MISC", E.PHASE, misc_width)]
        if misc_width > 63 or E.TRICK_PLACE_SIZE > 63 or 2 * E.COUNT_SLOTS > 63:
            raise ImportError("observation layout changed: a flag field no longer fits a 64-bit slot")
        self.nbits = E.NUM_BITS
        self.first = {}
        for j, (name, _, _) in enumerate(fields):
            self.first.setdefault(name, j)
        self.n = len(fields)
        covered = sorted((d, w) for _, d, w in fields)
        pos = 0
        for d, w in covered:
            if d != pos:
                raise ImportError(f"observation layout changed: flag {pos} is not covered by the batch encoder")
            pos = d + w
        if pos != E.NUM_BITS:
            raise ImportError("observation layout changed: the batch encoder does not cover all flags")
        if E.SIDE != E.NUM_BITS or E.OBS_SIZE - E.NUM_BITS < 2 * E.SIDE_FIELDS:
            raise ImportError("observation layout changed: the SIDE scalars no longer follow the flags")
        self.fields = tuple((j, d, w) for j, (_, d, w) in enumerate(fields))
        # source of flag k in the slots' bits: slot * 64 + bit (for a one-gather expansion)
        src = np.zeros(E.NUM_BITS, dtype=np.int64)
        for j, d, w in self.fields:
            src[d:d + w] = j * 64 + np.arange(w)
        self.src = src


_SLOTS = _Slots()


def _checked_seats(eng, seats):
    """``seats`` as (B,) int64 on the engine's backend, or None for the default.

    Raises:
        ValueError: unless ``seats`` is (B,) ints in 0..3 (3 players: 0, 1 or 3).
    """
    if seats is None:
        return None
    o = eng.ops
    B = eng.num_envs
    seat = o.asarray(seats)
    if tuple(seat.shape) != (B,) or not o.is_int(seat):
        raise ValueError(f"seats must be ({B},) ints, got shape {tuple(seat.shape)} dtype {seat.dtype}")
    seat = o.cast(seat, o.int64)
    bad = (seat < 0) | (seat > 3)
    if eng.num_players == 3:
        bad = bad | (seat == NEW_MOON)
    if bool(bad.any()):
        raise ValueError("seats must be 0..3 (3 players: 0, 1 or 3; the new moon 2 is no viewer)")
    return seat


def _build(eng, seats):
    """The flag fields as (B, S) int64 slots (see :class:`_Slots`) and the SIDE numerators
    (B, 8) int64: souls, own-cult multiplier, denied multiplier, deal score of the own side,
    then the same of the other side (R5)."""
    if not hasattr(eng, "_side_scale"):
        attach_tables(eng)
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
    seat = _checked_seats(eng, seats)
    if seat is None:
        seat = deciding
    to_act = live & (deciding == seat)
    ego = o.where(to_act, acting, seat)

    S = _SLOTS
    f = S.first
    slots = o.empty((B, S.n), o.int64)
    NC = E.NC
    # flat indices of the 4 relative seats' entries in (B, 4) arrays: seat (ego + r) mod 4
    rel = (ego[:, None] + eng._rel4) & 3                      # (B, 4) seat at relative r
    fi = eng._rows4[:, None] + rel
    hands = o.gather(eng.hands, fi)                          # (B, 4) rotated hands
    # HAND: own hand; in 3 players also the new moon's open hand (R7.1)
    seen = rel == seat[:, None]
    if three:
        seen = seen | (rel == NEW_MOON)
    slots[:, f["HAND"]:f["HAND"] + 4] = hands * seen
    # COUNTS: one-hot Sun count, one-hot Moon count per relative seat (R2.5)
    slots[:, f["COUNTS"]:f["COUNTS"] + 4] = (o.lookup(eng._sun_count1h, hands & 0x3FFF)
                                             | o.lookup(eng._moon_count1h, hands >> 14))
    # TRICK: card, chooser and holder (relative) per filled place (R3.1-R3.3)
    cp = eng.trick_code[:, None] >> eng._place_shift         # (B, 4)
    card1 = cp & 31                                          # card id + 1, 0 when empty
    meta = (1 << ((leader[:, None] + eng._rel4 - ego[:, None]) & 3)) | (16 << (((cp >> 5) - ego[:, None]) & 3))
    slots[:, f["TRICK"]:f["TRICK"] + 4] = o.lookup(eng._pow2, (card1 - 1) & 31) | ((meta * (card1 != 0)) << NC)
    slots[:, f["GONE"]] = (hands[:, 0] | hands[:, 1] | hands[:, 2] | hands[:, 3]) ^ ((1 << NC) - 1)
    slots[:, f["PLAYED_FOR"]:f["PLAYED_FOR"] + 4] = o.gather(eng.played_for, fi)
    slots[:, f["HELD_BY"]:f["HELD_BY"] + 4] = o.gather(eng.held_by, fi)
    slots[:, f["TRICK_OF"]:f["TRICK_OF"] + NUM_TRICKS] = eng.trick_of
    slots[:, f["PENDING"]] = eng.pending
    slots[:, f["TAKEN"]:f["TAKEN"] + 4] = o.gather(eng.captured, fi)
    # MISC: one-hots from PHASE to MATCH, bit k = flag PHASE + k
    P = E.PHASE
    misc = 1 << (eng.phase + done * 2)                       # choose, hold, over (a finished deal's phase is 0)
    misc = misc | (to_act * (1 << (E.TO_ACT - P)))
    misc = misc | (live * (1 << (((acting - ego) & 3) + (E.ACTING - P))))
    misc = misc | (live * (1 << (((c - ego) & 3) + (E.CHOOSER - P))))
    misc = misc | ((live & hold) * (1 << (((eng.holder - ego) & 3) + (E.HOLDER - P))))
    misc = misc | (1 << (((leader - ego) & 3) + (E.LEADER - P)))
    misc = misc | (1 << (trick + (E.TRICK_NO - P)))
    misc = misc | (live * (1 << (place + (E.PLACE - P))))
    if three:
        misc = misc | (1 << (o.lookup(eng._role3, seat) + (E.ROLE - P)))
        misc = misc | ((to_act & (ego == NEW_MOON)) * (1 << (E.NEW_MOON_DECISION - P)))
        misc = misc | (1 << (((NEW_MOON - ego) & 3) + (E.NEW_MOON_AT - P)))
    else:
        misc = misc | (1 << ((seat & 1) + (E.ROLE - P)))
    misc = misc | (o.lookup(eng._moon_rot, ego) << (E.MOON_SEAT - P))
    slots[:, f["MISC"]] = misc                               # MATCH stays 0: deal episodes

    # SIDE scalars (R5): own side (the ego seat's) first
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
    return slots, o.stack([sa, ma, da, sa * ma, sb, mb, db, sb * mb], 1)


def _scalars_into(eng, num, dest) -> None:
    """SIDE scalars (numerators / 60, 6, 6, 360, computed in float64 as the scalar encoder
    does) into ``dest`` (B, NUM_SCALARS); TOTALS and TARGET stay 0 (deal episodes)."""
    o = eng.ops
    dest[:, :2 * E.SIDE_FIELDS] = o.cast(num, o.float64) / eng._side_scale
    dest[:, 2 * E.SIDE_FIELDS:] = 0


def observe(eng, seats=None, out=None, compiled: bool = True):
    """Observation vectors of the whole batch (see the module docstring).

    On the NumPy backend with the compiled encoder (numba installed, see
    :func:`twilight_env.obs.encoding.backend`), the rows are written by the scalar env's own
    compiled encoder, one row after another (``_encoding_nb.encode_batch``): the same
    vectors, and at small B much faster than the array passes. ``compiled=False`` (or the
    torch backend) takes the array passes.

    Args:
        eng: a :class:`~twilight_env.envs.vector.VectorEngine`.
        seats: (B,) ints, the viewer's seat per row (0..3; 3 players: 0, 1 or 3); default
            the deciding seat.
        out: optional (B, OBS_SIZE) float32 array (tensor on the torch backend) to fill.
        compiled: use the compiled encoder where it is available (default True).

    Returns:
        (B, OBS_SIZE) float32: row ``i`` equals ``encode_observation(eng.to_state(i), seat_i)``.

    Raises:
        ValueError: on bad seats or a bad ``out``.
    """
    o = eng.ops
    B = eng.num_envs
    if out is None:
        out = o.empty((B, E.OBS_SIZE), o.float32)
    elif tuple(out.shape) != (B, E.OBS_SIZE) or out.dtype != o.float32:
        raise ValueError(f"out must be a ({B}, {E.OBS_SIZE}) float32 array")
    if compiled and o.name == "numpy" and E.backend() == "numba":
        from twilight_env.obs._encoding_nb import encode_batch

        seat = _checked_seats(eng, seats)
        encode_batch(out, eng.leader if seat is None else seat, seat is not None, eng.num_players,
                     eng.hands, eng.leader, eng.trick, eng.place, eng.phase, eng.holder,
                     eng.trick_code, eng.pending, eng.captured, eng.played_for, eng.held_by,
                     eng.trick_of)
        return out
    slots, num = _build(eng, seats)
    o.unpack_slots(slots, _SLOTS, out)
    _scalars_into(eng, num, out[:, E.NUM_BITS:])
    return out


PACKED_BYTES = (E.NUM_BITS + 7) // 8
"""Bytes per row of :func:`observe_packed`'s flags."""


def observe_packed(eng, seats=None):
    """The same observations in compact form (NumPy backend): ship these to an accelerator
    and expand them there with :func:`unpack_observation`.

    Returns:
        ``(flags, scalars)``: (B, PACKED_BYTES) uint8, flag ``k`` is bit ``k % 8``
        (little-endian) of byte ``k // 8``; and (B, NUM_SCALARS) float32.

    Raises:
        ValueError: on bad seats, or on the torch backend (use :func:`observe` there).
    """
    o = eng.ops
    if o.name != "numpy":
        raise ValueError("observe_packed is for the numpy backend; on torch use observe()")
    slots, num = _build(eng, seats)
    packed = o.pack_slots(slots, _SLOTS, (E.NUM_BITS + 63) // 64)
    flags = np.ascontiguousarray(packed.view(np.uint8)[:, :PACKED_BYTES])
    scalars = np.empty((eng.num_envs, E.NUM_SCALARS), dtype=np.float32)
    _scalars_into(eng, num, scalars)
    return flags, scalars


def unpack_observation(flags, scalars):
    """Expand :func:`observe_packed` output into (B, OBS_SIZE) float32 observations.

    Args:
        flags: (B, PACKED_BYTES) uint8 (NumPy array or torch tensor, any device).
        scalars: (B, NUM_SCALARS) float32, same kind.

    Returns:
        (B, OBS_SIZE) float32 of the same kind as the inputs.
    """
    if isinstance(flags, np.ndarray):
        bits = np.unpackbits(flags, axis=1, count=E.NUM_BITS, bitorder="little")
        return np.concatenate([bits.astype(np.float32), np.asarray(scalars, np.float32)], axis=1)
    import torch

    shifts = torch.arange(8, device=flags.device, dtype=torch.uint8)
    bits = ((flags[:, :, None] >> shifts) & 1).reshape(flags.shape[0], -1)[:, :E.NUM_BITS]
    return torch.cat([bits.to(torch.float32), scalars.to(torch.float32)], dim=1)


def attach_tables(eng) -> None:
    """Copy the small observation tables to the engine's backend (called once per engine)."""
    o = eng.ops
    eng._role3 = o.table(_ROLE_3P)
    eng._moon_rot = o.table(_MOON_ROT[eng.num_players])
    eng._rel4 = o.table(np.arange(4, dtype=np.int64))[None, :]
    # COUNTS field of a hand from its Sun / Moon half: one-hot of the number of cards (R2.5)
    count = HALF_COUNT
    eng._sun_count1h = o.table(1 << count)
    eng._moon_count1h = o.table(1 << (count + E.COUNT_SLOTS))
    # divisors of the SIDE scalars: souls/60, multipliers/6, deal score/360 (R5)
    eng._side_scale = o.table(np.array([60.0, 6.0, 6.0, 360.0] * 2))[None, :]
