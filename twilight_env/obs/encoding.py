"""The observation vector: one player's information set as a float32 vector (R2.5, R7.1).

:func:`encode_observation` reads a deal :class:`~twilight_env.rules.engine.State` but only the
parts the viewer may know; :func:`encode_infoset` builds the identical vector from an
:class:`~twilight_env.rules.infoset.InfoSet`; :func:`decode_observation` turns a vector back
into a readable dict (tests use it to check every field).

Point of view
-------------
Seats are *relative*: ``rel = (seat - ego) mod 4``. The ego seat is the acting seat when
the viewer decides the pending action (in 3 players the solo deciding for the new moon
sees the new-moon seat 2 as relative seat 0, R7.3), and the viewer's own seat otherwise
(also once the deal is over). Relative seat 1 is the next seat in play order, 2 the
partner seat (the partner, or the solo's new moon), 3 the seat before. "Own side" is
the side of the ego seat. A viewer is identified by its own seat (3 players: the solo is
seat 0, R7.2).

What is read (and nothing else): the hands the viewer sees (its own; in 3 players the
new moon's open hand, which every viewer sees, R7.1), every seat's Sun and Moon card
counts (card backs, R2.5), the public history of plays (chooser, holder, card, R3.3),
the current trick, the pending pile (R4.3), the cards each seat took (R4.2), and the
match context given by the caller.

Reduced decks (``Config.tricks`` < 7, :class:`~twilight_env.rules.engine.ReducedState`): the
same vector; the cards left out of the deck are flagged in ``GONE`` from the first
decision (every player knows the deck), the phase reads "deal over" after trick
``tricks``, and ``TRICK_NO`` counts up to ``tricks``.

Layout
------
The first ``NUM_BITS`` entries are 0/1 flags, the last ``NUM_SCALARS`` are scalars in
``[0, 1]`` (match totals in ``[0, 4]``). Card fields are indexed by card id 0..27
(``twilight_env.rules.cards.CARDS``). ``SEATS`` holds one record of ``SEAT_SIZE`` flags per
relative seat, relative seat 0 first: record ``rel`` starts at ``SEATS + SEAT_SIZE * rel``.

| range | name | size | meaning |
|-------|------|------|---------|
LAYOUT_TABLE

Match scalars (``TOTALS``, ``TARGET``) are 0 in deal episodes (``MATCH`` flag 0).
``TOTALS[rel]`` is the running total of the score line the result of that seat is
credited to (4 players: its side; 3 players: the player sitting there, the new-moon
seat counting for the solo, or its own line under ``"individual"`` scoring, R7.5, R8),
divided by the target and capped at 4; ``TARGET`` is target / 1000, capped at 4.

Speed
-----
Two backends give the same bytes (:func:`backend` tells which one runs):

- ``"numba"``, used when numba is installed (``pip install twilight-env[fast]``; the
  ``study`` and ``test`` extras include it): :mod:`twilight_env.obs._encoding_nb` writes the
  vector in compiled code from the state's masks. It is loaded on the first call (on a
  machine's first use it compiles, a few seconds, then it is cached) and checked there
  against the Python encoder; if it fails or disagrees, a ``RuntimeWarning`` says so and
  the Python encoder is used. Setting the environment variable
  ``TWILIGHT_ENV_PURE_PYTHON=1`` selects the Python encoder (``0`` or empty does not).
- ``"python"``: all flags are assembled as one Python int (card masks are the engine's
  28-bit ints, shifted into place; the seat records in absolute seat order are rotated
  by the ego seat with one shift) and expanded to float32 by one table lookup per byte
  (a single ``numpy.take`` from a 256 x 8 table). The phase / role flags, the side
  scalars and the env's action masks are memoized (small key spaces).

Both extend the played-for / held-by / trick masks of a deal's history incrementally as
the history grows. :func:`encode_infoset` always runs the Python encoder. See
``benchmarks/env_speed.py`` and ``benchmarks/engine_speed.py`` for the cost.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twilight_env.rules.cards import ALL_MASK, CARDS, HALF_COUNT, SUN_MASK, multiplier_of, souls_of
from twilight_env.rules.engine import HOLD, NEW_MOON, NUM_ACTIONS, NUM_TRICKS, State, pure_python_asked

# Layout constants (flags first, then scalars; see the module table): one definition in
# twilight_env.obs.layout, read here, by the compiled encoder and by the batch encoder.
from twilight_env.obs.layout import (  # noqa: F401  (re-exported: the layout names)
    ACTING, CHOOSER, COUNT_SLOTS, COUNTS, GONE, HAND, HELD_BY, HOLDER, LEADER, MATCH, MOON_SEAT, NC, NEW_MOON_AT,
    NEW_MOON_DECISION, NUM_BITS, NUM_REL, NUM_SCALARS, OBS_SIZE, PENDING, PHASE, PLACE, PLAYED_FOR, ROLE, SEAT_SIZE,
    SEATS, SIDE, SIDE_FIELDS, TAKEN, TARGET, TO_ACT, TOTALS, TOTALS_CAP, TRICK, TRICK_NO, TRICK_OF, TRICK_PLACE_SIZE,
)
from twilight_env.obs.layout import MOON_SEATS_3P, MOON_SEATS_4P
from twilight_env.obs.layout import ROLE_3P as _ROLE_3P
from twilight_env.obs.layout import ROLE_4P as _ROLE_4P

SEAT_LAYOUT: tuple[tuple[str, int, int, str], ...] = (
    ("HAND", HAND, NC, "[card] cards the viewer sees in that seat's hand: its own; 3p the new moon's open hand (R7.1)"),
    ("PLAYED_FOR", PLAYED_FOR, NC, "[card] played for that seat as chooser (R3.3)"),
    ("HELD_BY", HELD_BY, NC, "[card] came from that seat's hand (own play, or as requested holder, R3.2)"),
    ("TAKEN", TAKEN, NC, "[card] taken by that seat (R4.2)"),
    ("COUNTS", COUNTS, 2 * COUNT_SLOTS, "[cult, n] one-hot: that seat holds n (0..7) Sun, then n Moon cards (R2.5)"),
)
"""Fields of one seat record: (name, offset in the record, size, meaning)."""

LAYOUT: tuple[tuple[str, int, int, str], ...] = (
    ("SEATS", SEATS, NUM_REL * SEAT_SIZE, f"[rel, {SEAT_SIZE}] one record per relative seat (fields below)"),
    ("TRICK", TRICK, 4 * TRICK_PLACE_SIZE, "[place, 36] current trick per place 0..3: card (28), chooser rel (4), holder rel (4) (R3.1-R3.3)"),
    ("GONE", GONE, NC, "[card] already played (current trick included)"),
    ("PENDING", PENDING, NC, "[card] in the pending Purgatory pile (R4.3)"),
    ("TRICK_OF", TRICK_OF, NUM_TRICKS * NC, "[trick, card] played in trick 0..6"),
    ("PHASE", PHASE, 3, "one-hot: choose, hold, deal over"),
    ("TO_ACT", TO_ACT, 1, "the viewer decides the pending action"),
    ("ACTING", ACTING, NUM_REL, "[rel] seat whose choice or card is pending (chooser, or holder); 0s when over"),
    ("CHOOSER", CHOOSER, NUM_REL, "[rel] chooser of the current place (R3.1); 0s when over"),
    ("HOLDER", HOLDER, NUM_REL, "[rel] requested holder in the hold phase (R3.2); 0s otherwise"),
    ("LEADER", LEADER, NUM_REL, "[rel] leader of the current trick (R2.4, R4.2, R4.3)"),
    ("TRICK_NO", TRICK_NO, NUM_TRICKS + 1, "one-hot: tricks finished, 0..7"),
    ("PLACE", PLACE, 4, "one-hot: places filled in the current trick, 0..3"),
    ("ROLE", ROLE, 5, "viewer's role: 4p Sun side, 4p Moon side, 3p solo, 3p left Sun, 3p right Sun (R2.1, R7.2)"),
    ("NEW_MOON_DECISION", NEW_MOON_DECISION, 1, "the pending decision is the new moon's, made by the solo (R7.3)"),
    ("NEW_MOON_AT", NEW_MOON_AT, NUM_REL, "[rel] where the new moon sits; 0s in 4 players (R7.1)"),
    ("MOON_SEAT", MOON_SEAT, NUM_REL, "[rel] that seat is of the Moon cult"),
    ("MATCH", MATCH, 1, "match episode: TOTALS and TARGET are filled"),
    ("SIDE", SIDE, 2 * SIDE_FIELDS, "[own, other side] souls/60, own-cult multiplier/6, denied multiplier/6, deal score/360 so far (R5)"),
    ("TOTALS", TOTALS, NUM_REL, "[rel] match total of that seat's score line / target, capped at 4 (R6, R7.5)"),
    ("TARGET", TARGET, 1, "match target / 1000, capped at 4 (R6.1, R8)"),
)
"""Top-level blocks: (name, start index, size, meaning), in index order."""


def layout_table() -> str:
    """The observation layout as a Markdown table (range, name, size, meaning)."""
    def rng(start, size):
        return f"{start}" if size == 1 else f"{start}..{start + size - 1}"

    rows = ["| range | name | size | meaning |", "|-------|------|------|---------|"]
    for name, start, size, meaning in LAYOUT:
        rows.append(f"| {rng(start, size)} | `{name}` | {size} | {meaning} |")
        if name == "SEATS":
            for fname, off, fsize, fmeaning in SEAT_LAYOUT:
                rows.append(f"| {SEAT_SIZE}·rel + {rng(off, fsize)} | `SEATS.{fname}` | {fsize} | {fmeaning} |")
    rows.append(f"| | total `OBS_SIZE` | {OBS_SIZE} | {NUM_BITS} flags + {NUM_SCALARS} scalars |")
    return "\n".join(rows)


__doc__ = __doc__.replace("| range | name | size | meaning |\n|-------|------|------|---------|\nLAYOUT_TABLE",
                          layout_table())

# ---------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------
_SUN_COUNT = tuple(1 << (COUNTS + p) for p in HALF_COUNT)                 # Sun half of a hand -> COUNTS flag
_MOON_COUNT = tuple(1 << (COUNTS + COUNT_SLOTS + p) for p in HALF_COUNT)  # Moon half of a hand -> COUNTS flag
_REC = tuple(SEAT_SIZE * s for s in range(4))                          # absolute seat -> its record's bit offset
_ALL_SEATS = (1 << (NUM_REL * SEAT_SIZE)) - 1
_ROTATE = tuple(SEAT_SIZE * e for e in range(4))
_SEATS_BITS = NUM_REL * SEAT_SIZE
# one play (chooser c, holder h, trick t, card x): PLAYED_FOR of c, HELD_BY of h (absolute seat
# records), and TRICK_OF above the seat records: _PLAY_BIT[c][h][t][x]
_PLAY_BIT = tuple(tuple(tuple(tuple(
    1 << (SEAT_SIZE * c + PLAYED_FOR + x) | 1 << (SEAT_SIZE * h + HELD_BY + x) | 1 << (_SEATS_BITS + NC * t + x)
    for x in range(NC)) for t in range(NUM_TRICKS)) for h in range(4)) for c in range(4))
# current trick: _TRICK_BIT[place][card][chooser rel * 4 + holder rel]
_TRICK_BIT = tuple(tuple(tuple(((1 << x) | (1 << (NC + cr)) | (1 << (NC + 4 + hr))) << (TRICK + TRICK_PLACE_SIZE * p)
                                for cr in range(4) for hr in range(4)) for x in range(NC)) for p in range(4))
# _ROLE_4P, _ROLE_3P: seat -> role flag, from twilight_env.obs.layout (the one definition)
_MOON_4P = MOON_SEATS_4P         # seats 1, 3 are Moon (R2.1)
_MOON_3P = MOON_SEATS_3P         # seats 0, 2 are Moon (R7.1)


def _rot4(bits4: int, ego: int) -> int:
    """Rotate a 4-bit seat set so that seat ``ego`` becomes bit 0."""
    return ((bits4 | bits4 << 4) >> ego) & 15


_MISC_CACHE: dict[tuple, int] = {}


def _misc_bits(key) -> int:
    """Flags PHASE..MATCH, shifted into place, memoized in ``_MISC_CACHE``.

    ``key = (seat, num_players, done, phase, acting, ego, to_act, leader, trick, place,
    holder, match)``; the key space is small (a few thousand values in practice).
    """
    seat, num_players, done, phase, acting, ego, to_act, leader, trick, place, holder, match = key
    misc = 1 << (TRICK_NO - PHASE + trick)
    misc |= 1 << (LEADER - PHASE + ((leader - ego) & 3))
    if done:
        misc |= 1 << 2
    else:
        misc |= 1 << phase
        misc |= 1 << (ACTING - PHASE + ((acting - ego) & 3))
        misc |= 1 << (CHOOSER - PHASE + ((leader + place - ego) & 3))
        misc |= 1 << (PLACE - PHASE + place)
        if phase == HOLD:
            misc |= 1 << (HOLDER - PHASE + ((holder - ego) & 3))
    if to_act:
        misc |= 1 << (TO_ACT - PHASE)
    if num_players == 4:
        misc |= 1 << (ROLE - PHASE + _ROLE_4P[seat])
        misc |= _rot4(_MOON_4P, ego) << (MOON_SEAT - PHASE)
    else:
        misc |= 1 << (ROLE - PHASE + _ROLE_3P[seat])
        misc |= 1 << (NEW_MOON_AT - PHASE + ((NEW_MOON - ego) & 3))
        misc |= _rot4(_MOON_3P, ego) << (MOON_SEAT - PHASE)
        if to_act and ego == NEW_MOON:
            misc |= 1 << (NEW_MOON_DECISION - PHASE)
    if match:
        misc |= 1 << (MATCH - PHASE)
    misc <<= PHASE
    if len(_MISC_CACHE) > 200_000:
        _MISC_CACHE.clear()
    _MISC_CACHE[key] = misc
    return misc


_SIDE_CACHE: dict[tuple, tuple] = {}


def _side_scalars(key) -> tuple[float, ...]:
    """SIDE scalars, 8 floats (stored as float32), for ``key = (own_taken, other_taken,
    own_cult)`` (masks of the cards each side took): souls/60, own-cult multiplier/6,
    denied multiplier/6, score/360, own side first (R5). Memoized in ``_SIDE_CACHE``."""
    a, b, cult = key
    sa, sb = souls_of(a), souls_of(b)
    ma, mb = multiplier_of(a, cult), multiplier_of(b, 1 - cult)
    da, db = multiplier_of(a, 1 - cult), multiplier_of(b, cult)
    vals = (sa / 60.0, ma / 6.0, da / 6.0, sa * ma / 360.0, sb / 60.0, mb / 6.0, db / 6.0, sb * mb / 360.0)
    if len(_SIDE_CACHE) > 100_000:
        _SIDE_CACHE.clear()
    _SIDE_CACHE[key] = vals
    return vals


_MATCH_CACHE: dict[tuple, np.ndarray] = {}


def _match_scalars(key) -> np.ndarray:
    """TOTALS and TARGET scalars, float32 (5,), for ``key = (ego, seat_totals, target)``."""
    ego, totals, target = key
    arr = np.array([min(totals[(ego + r) & 3] / target, TOTALS_CAP) for r in range(4)]
                   + [min(target / 1000.0, TOTALS_CAP)], dtype=np.float32)
    if len(_MATCH_CACHE) > 10_000:
        _MATCH_CACHE.clear()
    _MATCH_CACHE[key] = arr
    return arr


_HIST_CACHE: dict[int, list] = {}
"""id(history list) -> [history, plays seen, last play seen, flags]."""


def _history_entry(cache: dict, history, fresh) -> list:
    """``cache``'s entry ``[history, plays seen, last play seen, data]`` for a history list,
    or a new one with ``fresh()`` as data when the list is new to it, shrank, or no longer
    holds the last play seen (the engine only appends to a deal's history, so an entry
    that passes these checks describes a prefix of the list). At most 64 entries."""
    entry = cache.get(id(history))
    if (entry is None or entry[0] is not history or len(history) < entry[1]
            or (entry[1] and history[entry[1] - 1] is not entry[2])):
        if len(cache) >= 64:
            cache.clear()
        entry = cache[id(history)] = [history, 0, None, fresh()]
    return entry


def _history_bits(history) -> int:
    """Flags of a history of ``(chooser, holder, card)`` plays (R3.3), extended incrementally.

    Returns one int: bits ``0 .. 4 * SEAT_SIZE - 1`` hold the PLAYED_FOR / HELD_BY flags
    of the seat records in absolute seat order, the bits above them the TRICK_OF flags.
    The engine only appends to a deal's history list, so the flags of a list seen before
    are extended with the new plays only; a list that shrank, or whose last seen entry is
    no longer the same object, is scanned afresh.
    """
    entry = _history_entry(_HIST_CACHE, history, int)
    n = len(history)
    i = entry[1]
    bits = entry[3]
    if i < n:
        pb = _PLAY_BIT
        for k in range(i, n):
            c, h, x = history[k]
            bits |= pb[c][h][k >> 2][x]
        entry[1] = n
        entry[2] = history[n - 1]
        entry[3] = bits
    return bits


_NBYTES = (OBS_SIZE + 7) // 8                     # flags, then the zero scalar slots
_PADDED = 8 * _NBYTES
BYTE_FLOATS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float32)
"""[byte, 8] float32: the byte's bits, least significant first (a byte of flags -> 8 entries)."""
_frombuffer = np.frombuffer
_uint8 = np.uint8
_int8 = np.int8
_S0 = SIDE
_zeros = np.zeros
_empty = np.empty
_float32 = np.float32

_MASK_CACHE: dict[tuple, np.ndarray] = {}
"""legal actions (tuple) -> int8 action mask (31,), copied on use."""


def _mask_of(legal: tuple) -> np.ndarray:
    """A fresh int8 action mask ``(31,)`` of ``legal`` (memoized in ``_MASK_CACHE``)."""
    m = _MASK_CACHE.get(legal)
    if m is None:
        if len(_MASK_CACHE) > 100_000:
            _MASK_CACHE.clear()
        m = _MASK_CACHE[legal] = action_mask(legal)
    return m.copy()


def _encode(out, seat, num_players, done, phase, acting, deciding, leader, trick, place, holder,
            seat_bits, history, t_cards, t_holders, pending, captured, gone, totals, target, legal):
    """Shared core of :func:`encode_observation` and :func:`encode_infoset` (same inputs, same bytes).

    ``seat_bits``: the HAND and COUNTS flags of the 4 seat records in absolute seat order
    (record of seat s at bit ``SEAT_SIZE * s``). With ``legal`` (a sequence of actions,
    possibly empty, a tuple) also returns the int8 action mask of those actions.
    """
    if not done and deciding == seat:
        ego = acting
        to_act = True
    else:
        ego = seat
        to_act = False

    entry = _HIST_CACHE.get(id(history))
    n = len(history)
    if entry is not None and entry[0] is history and (not entry[1] or history[entry[1] - 1] is entry[2]):
        if entry[1] == n:
            hbits = entry[3]  # nothing played since the last call
        elif entry[1] == n - 1:  # one play since the last call (the env's case)
            c, h, x = last = history[-1]
            hbits = entry[3] | _PLAY_BIT[c][h][(n - 1) >> 2][x]
            entry[1] = n
            entry[2] = last
            entry[3] = hbits
        else:
            hbits = _history_bits(history)
    else:
        hbits = _history_bits(history)
    c0, c1, c2, c3 = captured
    s = (seat_bits | (hbits & _ALL_SEATS) | c0 << (TAKEN) | c1 << (SEAT_SIZE + TAKEN) | c2 << (2 * SEAT_SIZE + TAKEN)
         | c3 << (3 * SEAT_SIZE + TAKEN))
    big = ((s | s << (NUM_REL * SEAT_SIZE)) >> _ROTATE[ego]) & _ALL_SEATS  # relative seat 0 first

    x = t_cards[0]
    if x >= 0:
        lr = leader - ego
        tb = _TRICK_BIT
        big |= tb[0][x][((lr & 3) << 2) | ((t_holders[0] - ego) & 3)]
        x = t_cards[1]
        if x >= 0:
            big |= tb[1][x][(((lr + 1) & 3) << 2) | ((t_holders[1] - ego) & 3)]
            x = t_cards[2]
            if x >= 0:
                big |= tb[2][x][(((lr + 2) & 3) << 2) | ((t_holders[2] - ego) & 3)]
                x = t_cards[3]
                if x >= 0:
                    big |= tb[3][x][(((lr + 3) & 3) << 2) | ((t_holders[3] - ego) & 3)]

    key = (seat, num_players, done, phase, acting, ego, to_act, leader, trick, place, holder, totals is not None)
    misc = _MISC_CACHE.get(key)
    if misc is None:
        misc = _misc_bits(key)
    big |= (gone | pending << NC | (hbits >> _SEATS_BITS) << (2 * NC)) << GONE | misc
    # little-endian bytes, LSB-first bits: flag k lands at index k; each byte becomes its 8
    # float32 entries by one table lookup (the scalar slots are 0 for now)
    flags = BYTE_FLOATS.take(_frombuffer(big.to_bytes(_NBYTES, "little"), _uint8), axis=0).reshape(_PADDED)
    if out is None:
        out = flags if _PADDED == OBS_SIZE else flags[:OBS_SIZE]
    else:
        out[:] = flags[:OBS_SIZE]

    # scalars (R5): own side first; ego's cult: 4p seats 1, 3 Moon; 3p seats 0, 2 Moon
    if ego & 1:
        key = (c1 | c3, c0 | c2, (ego if num_players == 4 else ego + 1) & 1)
    else:
        key = (c0 | c2, c1 | c3, (ego if num_players == 4 else ego + 1) & 1)
    sc = _SIDE_CACHE.get(key)
    if sc is None:
        sc = _side_scalars(key)
    # eight item writes cost less than one slice write from an array (each rounds to float32)
    (out[_S0], out[_S0 + 1], out[_S0 + 2], out[_S0 + 3], out[_S0 + 4], out[_S0 + 5], out[_S0 + 6],
     out[_S0 + 7]) = sc
    if totals is not None:
        key = (ego, totals, target)
        sc = _MATCH_CACHE.get(key)
        if sc is None:
            sc = _match_scalars(key)
        out[TOTALS:] = sc
    if legal is None:
        return out
    return out, _mask_of(legal)


def seat_totals(totals: Sequence[int] | None, num_players: int) -> tuple[int, int, int, int] | None:
    """Per-seat match totals from what a caller passes as ``totals``.

    Args:
        totals: None (no match), 2 side totals ``(sun, moon)`` (4 players, as
            :class:`~twilight_env.rules.engine.Match` keeps them), or 4 totals by seat: the
            running total of the score line each seat's result is credited to.
        num_players: 3 or 4.

    Returns:
        4 numbers by seat, or None.

    Raises:
        ValueError: on another length, or a value that is not a non-negative number.
    """
    if totals is None:
        return None
    t = tuple(totals)
    if len(t) == 2 and num_players == 4:
        t = (t[0], t[1], t[0], t[1])  # side 0 = seats 0, 2 (Sun)
    if len(t) != 4:
        raise ValueError(f"totals must be 4 per-seat totals (or 2 side totals in 4 players), got {totals!r}")
    for v in t:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or v < 0:
            raise ValueError(f"totals must be non-negative numbers, got {totals!r}")
    return t


def _check_target(target, totals):
    if totals is None:
        return 1
    if target is None:
        raise ValueError("target is needed with totals (the match target in points)")
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or target < 1:
        raise ValueError(f"target must be a positive int (points), got {target!r}")
    return target


def encode_observation(state: State, seat: int, totals: Sequence[int] | None = None,
                       target: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """Observation vector of the player at ``seat`` (see the module layout table).

    Reads only what that player may know (R2.5, R7.1): its own hand, the open new-moon
    hand in 3 players, counts, the public history, current trick, pending pile and
    taken cards. The hidden hands are used only through their card counts.

    Args:
        state: a deal state (not changed).
        seat: the viewer's own seat 0..3; 3 players: 0 (solo, who also decides for the
            new moon), 1 or 3, never 2.
        totals: match context (see :func:`seat_totals`), or None in deal episodes.
        target: the match target (points); needed with ``totals``.
        out: optional float32 array of shape ``(OBS_SIZE,)`` to fill (no allocation).

    Returns:
        float32 array, shape ``(OBS_SIZE,)``: flags in {0, 1}, scalars in [0, 1] (match
        totals in [0, 4]).

    Raises:
        ValueError: on a bad seat, totals or target.
    """
    return _encode_state(state, seat, totals, target, out, False)


def observation_and_mask(state: State, seat: int, totals: Sequence[int] | None = None,
                         target: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`encode_observation` plus the action mask, expanded together (the env's fast path).

    Returns:
        ``(observation, mask)``: the float32 ``(OBS_SIZE,)`` vector, and an int8 ``(31,)``
        array with 1 at each legal action if ``seat`` decides the pending action
        (3 players: the solo, seat 0, also for the new moon, R7.3), else all 0.

    Raises:
        ValueError: as :func:`encode_observation`.
    """
    return _encode_state(state, seat, totals, target, None, True)


_NB_HIST: dict[int, list] = {}
"""id(history list) -> [history, plays seen, last play seen, (played-for masks (4), held-by
masks (4), trick masks (7))] for the compiled encoder (see :func:`_history_entry`)."""


def _no_masks() -> tuple[list, list, list]:
    return [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]


def _history_masks(history) -> list:
    """The compiled encoder's history entry of ``history``, extended to its current length."""
    entry = _history_entry(_NB_HIST, history, _no_masks)
    n = len(history)
    i = entry[1]
    if i < n:
        pf, hb, tm = entry[3]
        for k in range(i, n):
            c, h, x = history[k]
            bit = 1 << x
            pf[c] |= bit
            hb[h] |= bit
            tm[k >> 2] |= bit
        entry[1] = n
        entry[2] = history[n - 1]
    return entry


_ENCODE_INTO = None
"""The compiled encoder (:func:`twilight_env.obs._encoding_nb.encode_into`) once loaded, or
False when numba is missing or ``TWILIGHT_ENV_PURE_PYTHON=1`` (see :func:`backend`)."""


def backend() -> str:
    """``"numba"`` when :func:`encode_observation` runs compiled (numba installed, the
    environment variable ``TWILIGHT_ENV_PURE_PYTHON`` unset or ``0``), else ``"python"``. Both
    give the same bytes; the compiled one is loaded (and on a machine's first use
    compiled, a few seconds, then cached) on the first call."""
    global _ENCODE_INTO
    if _ENCODE_INTO is None:
        import importlib.util
        import os

        pure = pure_python_asked(os.environ.get("TWILIGHT_ENV_PURE_PYTHON"))
        if pure or importlib.util.find_spec("numba") is None:
            _ENCODE_INTO = False
        else:
            try:  # load (or compile) now, on a fresh deal, and check it against the Python encoder
                from twilight_env.obs._encoding_nb import encode_into

                st = State(list(_PROBE_HANDS), 0, 4)
                st.apply(st.legal_actions()[-1])
                _ENCODE_INTO = False  # the reference: the Python encoder
                ref, ref_mask = _encode_state(st, st.deciding_seat, None, None, None, True)
                _ENCODE_INTO = encode_into
                got, got_mask = _encode_state_nb(st, st.deciding_seat, None, None, None, True)
                if got.tobytes() != ref.tobytes() or got_mask.tobytes() != ref_mask.tobytes():
                    raise RuntimeError("the compiled encoder disagrees with the Python one")
            except Exception as e:  # a broken numba install must not break the env
                import warnings

                warnings.warn(f"twilight_env: compiled observation encoder unavailable ({e}); using the "
                              "pure-Python one (same observations, slower)", RuntimeWarning, stacklevel=2)
                _ENCODE_INTO = False
    return "numba" if _ENCODE_INTO else "python"


_PROBE_HANDS = (0x000007F, 0x0003F80, 0x01FC000, 0xFE00000)
"""A fixed deal for the compiled encoder's start-up check (seat s holds ids 7s..7s+6)."""


_EMPTY_MASK = np.zeros(NUM_ACTIONS, np.int8)


def _describe_buffer(out) -> str:
    """What is wrong with an ``out`` buffer, for the error message."""
    if not isinstance(out, np.ndarray):
        return f"a {type(out).__name__}, not a numpy array"
    wrong = []
    if out.dtype != _float32:
        wrong.append(f"dtype {out.dtype}")
    if out.shape != (OBS_SIZE,):
        wrong.append(f"shape {out.shape}")
    if not out.flags.c_contiguous:
        wrong.append("a non-contiguous view")
    if not out.flags.writeable:
        wrong.append("a read-only array")
    return ", ".join(wrong)


def _encode_state(state, seat, totals, target, out, want_mask):
    np_ = state.num_players
    if seat not in (0, 1, 2, 3) or (np_ == 3 and seat == NEW_MOON):
        raise ValueError(f"seat must be 0..3 (not the new moon 2 in 3 players), got {seat!r}")
    if totals is not None:
        totals = seat_totals(totals, np_)
        target = _check_target(target, totals)
    if out is not None and (not isinstance(out, np.ndarray) or out.shape != (OBS_SIZE,) or out.dtype != _float32
                            or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError(f"out must be a writeable, contiguous float32 array of shape ({OBS_SIZE},); got "
                         + _describe_buffer(out))
    if _ENCODE_INTO is None:
        backend()
    if _ENCODE_INTO:
        return _encode_state_nb(state, seat, totals, target, out, want_mask)
    h0, h1, h2, h3 = state.hands
    q, sc, mc = SUN_MASK, _SUN_COUNT, _MOON_COUNT
    seat_bits = ((sc[h0 & q] | mc[h0 >> 14]) | (sc[h1 & q] | mc[h1 >> 14]) << SEAT_SIZE
                 | (sc[h2 & q] | mc[h2 >> 14]) << (2 * SEAT_SIZE) | (sc[h3 & q] | mc[h3 >> 14]) << (3 * SEAT_SIZE)
                 | state.hands[seat] << _REC[seat])
    if np_ == 3:
        seat_bits |= h2 << (2 * SEAT_SIZE)  # the open hand (R7.1)
    done = state.trick == state.num_tricks
    phase = state.phase
    acting = state.holder if phase == HOLD else (state.leader + state.place) & 3
    deciding = 0 if (np_ == 3 and acting == NEW_MOON) else acting
    legal = None
    if want_mask:
        legal = state.legal_actions() if (not done and deciding == seat) else ()
    return _encode(out, seat, np_, done, phase, acting, deciding, state.leader, state.trick, state.place,
                   state.holder, seat_bits, state.history, state.cards, state.holders, state.pending,
                   state.captured, ALL_MASK ^ (h0 | h1 | h2 | h3), totals, target, legal)


def _encode_state_nb(state, seat, totals, target, out, want_mask):
    """:func:`_encode_state` through the compiled encoder (same bytes)."""
    np_ = state.num_players
    h0, h1, h2, h3 = state.hands
    done = state.trick == state.num_tricks
    phase = state.phase
    leader = state.leader
    place = state.place
    acting = state.holder if phase == HOLD else (leader + place) & 3
    deciding = 0 if (np_ == 3 and acting == NEW_MOON) else acting
    lb = 0
    if want_mask and not done and deciding == seat:
        for a in state.legal_actions():
            lb |= 1 << a
    pf, hb, tm = _history_masks(state.history)[3]
    if out is None:
        out = _empty(OBS_SIZE, _float32)
    mask = _empty(NUM_ACTIONS, _int8) if want_mask else _EMPTY_MASK
    _ENCODE_INTO(out, mask, seat, np_, done, phase, acting, deciding, leader, state.trick, place, state.holder,
                 (h0, h1, h2, h3), tuple(state.cards), tuple(state.holders), state.pending, tuple(state.captured),
                 tuple(pf), tuple(hb), tuple(tm), lb, totals is not None)
    if totals is not None:
        ego = acting if (not done and deciding == seat) else seat
        key = (ego, totals, target)
        sc = _MATCH_CACHE.get(key)
        if sc is None:
            sc = _match_scalars(key)
        out[TOTALS:] = sc
    if want_mask:
        return out, mask
    return out


def encode_infoset(infoset) -> np.ndarray:
    """The vector :func:`encode_observation` gives for the same player at the same moment,
    built from an :class:`~twilight_env.rules.infoset.InfoSet` (which holds only what it knows).

    ``infoset.totals`` is read as :func:`seat_totals` describes; ``infoset.target`` is the
    match target.
    """
    inf = infoset
    totals, target = inf.totals, inf.target
    if totals is not None:
        totals = seat_totals(totals, inf.num_players)
        target = _check_target(target, totals)
    seat_bits = 0
    for s in range(4):
        sun, moon = inf.hand_counts[s]
        seat_bits |= (inf.known_masks[s] | 1 << (COUNTS + sun) | 1 << (COUNTS + COUNT_SLOTS + moon)) << _REC[s]
    done = inf.trick == inf.num_tricks
    phase = HOLD if inf.phase == "hold" else 0
    return _encode(None, inf.seat, inf.num_players, done, phase, inf.acting_seat, inf.deciding_seat,
                   inf.leader, inf.trick, inf.place, inf.holder, seat_bits, inf.history, inf.trick_cards,
                   inf.trick_holders, inf.pending, inf.captured, inf.played | (ALL_MASK ^ inf.deck), totals, target, None)


def action_mask(legal: Sequence[int], out: np.ndarray | None = None) -> np.ndarray:
    """int8 array of shape ``(31,)``: 1 at each legal action (0..27 card ids, 28..30 requests).

    Raises:
        ValueError: on an action that is not an int 0..30.
    """
    if out is None:
        out = _zeros(NUM_ACTIONS, _int8)
    else:
        out[:] = 0
    for a in legal:
        if not 0 <= a < NUM_ACTIONS or a.__class__ is bool:
            raise ValueError(f"actions are ints 0..30, got {a!r} in {legal!r}")
        out[a] = 1
    return out


# ---------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------
_ROLE_NAMES = ("sun side", "moon side", "solo", "left sun", "right sun")
_PHASE_NAMES = ("choose", "hold", "over")


def _codes(bits: np.ndarray) -> list[str]:
    return [CARDS[i] for i in np.flatnonzero(bits)]


def _onehot(bits: np.ndarray, name: str, allow_empty: bool = True) -> int:
    idx = np.flatnonzero(bits)
    if len(idx) > 1 or (not allow_empty and len(idx) == 0):
        raise ValueError(f"field {name} must be one-hot, has {len(idx)} flags set")
    return int(idx[0]) if len(idx) else -1


def decode_observation(vec) -> dict:
    """Readable dict of an observation vector (inverse of :func:`encode_observation`).

    Seats are relative (0 = ego seat); cards are codes in id order.

    Returns:
        dict with keys ``known`` (4 lists of codes: the HAND fields), ``counts`` (4
        ``(sun, moon)``), ``trick`` (list of ``(code, chooser_rel, holder_rel)`` for the
        filled places), ``gone``, ``played_for`` (4 lists), ``held_by`` (4 lists),
        ``trick_of`` (7 lists), ``pending``, ``taken`` (4 lists), ``phase`` (``"choose"``,
        ``"hold"``, ``"over"``), ``to_act`` (bool), ``acting``, ``chooser``, ``holder``,
        ``leader`` (rel seat or -1), ``tricks_finished``, ``place``, ``role`` (str),
        ``new_moon_decision`` (bool), ``new_moon_at`` (rel or -1), ``moon_seats`` (list of
        rel seats), ``match`` (bool), ``souls``, ``multiplier``, ``denied``, ``score``
        (each ``(own side, other side)`` in souls / multiplier / deal points),
        ``totals`` (4 floats, fraction of the target), ``target`` (points, 0 if none).

    Raises:
        ValueError: if ``vec`` is not of shape ``(OBS_SIZE,)`` with 0/1 flags and
            well-formed one-hot fields.
    """
    v = np.asarray(vec)
    if v.shape != (OBS_SIZE,):
        raise ValueError(f"an observation has shape ({OBS_SIZE},), got {v.shape}")
    flags = v[:NUM_BITS]
    if not np.all((flags == 0) | (flags == 1)):
        raise ValueError(f"entries 0..{NUM_BITS - 1} must be 0 or 1")
    f = flags.astype(bool)

    def block(start, n):
        return f[start:start + n]

    def seat_field(offset, n=NC):
        return [block(SEATS + SEAT_SIZE * r + offset, n) for r in range(NUM_REL)]

    counts = [(_onehot(c[:COUNT_SLOTS], "COUNTS", False), _onehot(c[COUNT_SLOTS:], "COUNTS", False))
              for c in seat_field(COUNTS, 2 * COUNT_SLOTS)]
    trick = []
    for p in range(4):
        base = TRICK + TRICK_PLACE_SIZE * p
        card = _onehot(block(base, NC), "TRICK card")
        if card < 0:
            break
        trick.append((CARDS[card], _onehot(block(base + NC, 4), "TRICK chooser", False),
                      _onehot(block(base + NC + 4, 4), "TRICK holder", False)))
    s = v[NUM_BITS:].astype(np.float64)
    return {
        "known": [_codes(b) for b in seat_field(HAND)],
        "counts": counts,
        "trick": trick,
        "gone": _codes(block(GONE, NC)),
        "played_for": [_codes(b) for b in seat_field(PLAYED_FOR)],
        "held_by": [_codes(b) for b in seat_field(HELD_BY)],
        "trick_of": [_codes(block(TRICK_OF + NC * t, NC)) for t in range(NUM_TRICKS)],
        "pending": _codes(block(PENDING, NC)),
        "taken": [_codes(b) for b in seat_field(TAKEN)],
        "phase": _PHASE_NAMES[_onehot(block(PHASE, 3), "PHASE", False)],
        "to_act": bool(f[TO_ACT]),
        "acting": _onehot(block(ACTING, 4), "ACTING"),
        "chooser": _onehot(block(CHOOSER, 4), "CHOOSER"),
        "holder": _onehot(block(HOLDER, 4), "HOLDER"),
        "leader": _onehot(block(LEADER, 4), "LEADER", False),
        "tricks_finished": _onehot(block(TRICK_NO, NUM_TRICKS + 1), "TRICK_NO", False),
        "place": max(_onehot(block(PLACE, 4), "PLACE"), 0),
        "role": _ROLE_NAMES[_onehot(block(ROLE, 5), "ROLE", False)],
        "new_moon_decision": bool(f[NEW_MOON_DECISION]),
        "new_moon_at": _onehot(block(NEW_MOON_AT, 4), "NEW_MOON_AT"),
        "moon_seats": [int(i) for i in np.flatnonzero(block(MOON_SEAT, 4))],
        "match": bool(f[MATCH]),
        "souls": (int(round(s[0] * 60)), int(round(s[4] * 60))),
        "multiplier": (int(round(s[1] * 6)), int(round(s[5] * 6))),
        "denied": (int(round(s[2] * 6)), int(round(s[6] * 6))),
        "score": (int(round(s[3] * 360)), int(round(s[7] * 360))),
        "totals": [float(x) for x in s[TOTALS - NUM_BITS:TOTALS - NUM_BITS + 4]],
        "target": float(round(s[TARGET - NUM_BITS] * 1000.0)),
    }


__all__ = ["OBS_SIZE", "NUM_BITS", "NUM_SCALARS", "LAYOUT", "SEAT_LAYOUT", "layout_table", "backend", "encode_observation",
           "observation_and_mask", "encode_infoset", "decode_observation", "action_mask", "seat_totals"]
