"""Deep Monte-Carlo features: what the deciding seat knows, as 25 bit masks, and action features.

A decision is described compactly by ``NUM_MASKS`` non-negative ints below ``2**28``
(a *compact row*); the network expands each into 28 bits (``STATE_SIZE`` = 25 × 28 =
700 inputs, float 0/1). Compact rows are cheap to build in Python, cheap to store in a
replay buffer (25 int64 per decision) and expand in one tensor operation on CPU or GPU.

Everything is laid out from the point of view of the *viewer*, the seat that makes the
decision (the deciding seat; in 3 players the solo, seat 0, also decides for the new
moon, R7.3). "Relative seat" ``r = (seat - viewer) mod 4``: 0 the viewer, 1 the next
seat in play order, 2 the partner (or, for the solo, the new moon), 3 the seat before.
Only what the viewer may know is read (R2.5, R7.1): its own hand, the new moon's open
hand in 3 players, card-back counts, the public history of plays, the current trick,
the pending pile and the taken cards. :func:`state_row` (self-play, from an engine
state) and :func:`infoset_row` (agents, from an :class:`~twilight_env.rules.infoset.InfoSet`)
share :func:`compact_row`, and ``tests/training`` checks that they agree.

Compact row layout (index → mask meaning; card masks use bit = card id 0..27):

| index | meaning |
|-------|---------|
| 0 | viewer's own hand |
| 1 | open hand of the new moon (3 players, R7.1); 0 in 4 players |
| 2 | acting hand: the hand the next card comes from (chooser, holder, or new moon) |
| 3 | unseen cards: not played and in no hand the viewer sees |
| 4..7 | cards played *for* relative seat r (r as chooser, R3.3) |
| 8..11 | cards played *from* relative seat r's hand (r as holder) |
| 12..15 | current trick: card at place 0..3 (empty 0) |
| 16 | pending Purgatory pile (R4.3) |
| 17 | cards taken by the viewer's side |
| 18 | cards taken by the other side |
| 19..22 | card-back counts of relative seat r: bit ``n`` = n Sun cards (0..7), bit ``8 + n`` = n Moon cards (R2.5) |
| 23 | bits 0..6 trick one-hot, 7..10 place one-hot, 11 hold phase, 12..15 relative chooser, 16..19 relative acting seat, 20..23 relative leader, 24 three players, 25 viewer is Moon, 26 acting for the new moon |
| 24 | bits 0..3 viewer's seat one-hot, 4..7 relative seat currently best in the trick, 8..15 best strength so far one-hot (R4.1), 16 Purgatory in trick, 17 pending pile non-empty |

Action features (``ACTION_FEATURES``, shape ``(31, ACTION_SIZE)`` float32): a one-hot of the
31 actions (0..27 card id, 28..30 request offset +1..+3, R3.2) followed by the card's
strength / 7, souls / 7, multiplier / 3, cult (0 Sun, 1 Moon) and a request flag (all 0
for the request part except the flag).
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules.cards import (CULT, HALF_COUNT, MULTIPLIER, NUM_CARDS, PURGATORY_MASK, SOULS, STRENGTH,
                                      SUN_MASK, trick_so_far)
from twilight_env.rules.engine import HOLD, NEW_MOON, NUM_ACTIONS, State

BITS_PER_MASK = 28
"""Bits expanded from every compact-row entry."""
NUM_MASKS = 25
"""Entries in a compact row (see the module table)."""
STATE_SIZE = NUM_MASKS * BITS_PER_MASK
"""Network state input width: 700 floats (0/1)."""
NUM_CARD_PROPS = 5
"""Per-action card properties: strength, souls, multiplier, cult, request flag."""
ACTION_SIZE = NUM_ACTIONS + NUM_CARD_PROPS
"""Action feature width: 31 one-hot + 5 properties = 36."""


def _action_table() -> np.ndarray:
    t = np.zeros((NUM_ACTIONS, ACTION_SIZE), dtype=np.float32)
    for a in range(NUM_ACTIONS):
        t[a, a] = 1.0
        if a < NUM_CARDS:
            t[a, NUM_ACTIONS:NUM_ACTIONS + 4] = (STRENGTH[a] / 7, SOULS[a] / 7, MULTIPLIER[a] / 3, CULT[a])
        else:
            t[a, NUM_ACTIONS + 4] = 1.0
    return t


ACTION_FEATURES: np.ndarray = _action_table()
"""``(31, 36)`` float32: features of each action id (module table)."""


def role_of(num_players: int, acting_seat: int) -> int:
    """Network head used for a decision: 4 players 0 (one shared head from the viewer's
    seat); 3 players the acting seat: 0 solo for itself, 1 Sun left, 2 solo for the new
    moon (R7.3), 3 Sun right."""
    return 0 if num_players == 4 else acting_seat


def num_roles(num_players: int) -> int:
    """Heads of the network: 1 in 4 players, 4 in 3 players."""
    return 1 if num_players == 4 else 4


def compact_row(num_players: int, viewer: int, acting: int, phase: int, leader: int, trick: int,
                place: int, known: tuple, hand_counts: tuple, history: list, cards: list,
                pending: int, captured: tuple) -> list[int]:
    """The compact row (module table) from the facts the viewer knows.

    Args:
        num_players: 3 or 4.
        viewer: deciding seat (0..3; never the new moon in 3 players).
        acting: acting seat (chooser, holder, or the new moon).
        phase: 0 choose, 1 hold.
        leader, trick, place: as in the engine.
        known: 4 masks, the hands the viewer sees (own; new moon in 3 players).
        hand_counts: 4 ``(sun, moon)`` pairs (R2.5).
        history: ``(chooser, holder, card_id)`` per card played.
        cards: 4 card ids of the current trick by place, -1 empty.
        pending: pending pile mask; captured: 4 masks by seat.

    Returns:
        ``NUM_MASKS`` ints, each < 2**28.
    """
    by_chooser = [0, 0, 0, 0]
    by_holder = [0, 0, 0, 0]
    played = 0
    for c, h, x in history:
        b = 1 << x
        by_chooser[(c - viewer) & 3] |= b
        by_holder[(h - viewer) & 3] |= b
        played |= b
    seen = known[0] | known[1] | known[2] | known[3]
    unseen = ((1 << 28) - 1) & ~played & ~seen
    side = viewer & 1
    own_taken = captured[side] | captured[side + 2]
    other_taken = captured[1 - side] | captured[3 - side]
    counts = [0, 0, 0, 0]
    for s in range(4):
        sun, moon = hand_counts[s]
        counts[(s - viewer) & 3] = (1 << sun) | (1 << (8 + moon))
    chooser = (leader + place) & 3
    misc = ((1 << trick) if trick < 7 else 0) | (1 << (7 + place)) | (phase << 11) \
        | (1 << (12 + ((chooser - viewer) & 3))) | (1 << (16 + ((acting - viewer) & 3))) \
        | (1 << (20 + ((leader - viewer) & 3))) | ((num_players == 3) << 24) \
        | ((((viewer & 1) == 0) == (num_players == 3)) << 25) \
        | ((num_players == 3 and acting == NEW_MOON) << 26)
    t = [0, 0, 0, 0]
    for p in range(place):
        t[p] = 1 << cards[p]
    best, best_place, played_now = trick_so_far(cards, place)  # R4.1: the best card so far
    misc2 = 1 << viewer
    if best >= 0:
        misc2 |= (1 << (4 + ((leader + best_place - viewer) & 3))) | (1 << (8 + best))
    misc2 |= (((played_now & PURGATORY_MASK) != 0) << 16) | ((pending != 0) << 17)
    return [known[viewer], known[NEW_MOON] if num_players == 3 else 0, known[acting], unseen,
            *by_chooser, *by_holder, *t, pending, own_taken, other_taken, *counts, misc, misc2]


def state_row(state: State, viewer: int | None = None) -> list[int]:
    """Compact row for the deciding seat of an engine state, reading only what it may know.

    Args:
        state: a deal in progress (not done).
        viewer: defaults to ``state.deciding_seat``.
    """
    if viewer is None:
        viewer = state.deciding_seat
    hands = state.hands
    known = [0, 0, 0, 0]
    known[viewer] = hands[viewer]
    if state.num_players == 3:
        known[NEW_MOON] = hands[NEW_MOON]
    counts = tuple((HALF_COUNT[h & SUN_MASK], HALF_COUNT[h >> 14]) for h in hands)
    return compact_row(state.num_players, viewer, state.acting_seat, state.phase, state.leader,
                       state.trick, state.place, known, counts, state.history, state.cards,
                       state.pending, state.captured)


def infoset_row(info) -> list[int]:
    """Compact row of an :class:`~twilight_env.rules.infoset.InfoSet` whose viewer is to act.

    Raises:
        ValueError: if the information set's viewer does not decide next.
    """
    if not info.to_act:
        raise ValueError(f"seat {info.seat} is not to act in this information set; features "
                         f"describe decisions of the deciding seat ({info.deciding_seat})")
    return compact_row(info.num_players, info.seat, info.acting_seat, 1 if info.phase == "hold" else 0,
                       info.leader, info.trick, info.place, info.known_masks, info.hand_counts,
                       info.history, info.trick_cards, info.pending, info.captured)


def expand_rows(rows: np.ndarray) -> np.ndarray:
    """Expand compact rows to 0/1 features with NumPy (reference for the network's expansion).

    Args:
        rows: ``(B, NUM_MASKS)`` int64.

    Returns:
        ``(B, STATE_SIZE)`` float32, index ``28 * k + b`` = bit ``b`` of entry ``k``.
    """
    rows = np.asarray(rows, dtype=np.int64)
    bits = (rows[:, :, None] >> np.arange(BITS_PER_MASK)) & 1
    return bits.reshape(len(rows), STATE_SIZE).astype(np.float32)


__all__ = ["NUM_MASKS", "STATE_SIZE", "ACTION_SIZE", "ACTION_FEATURES", "compact_row", "state_row",
           "infoset_row", "expand_rows", "role_of", "num_roles", "HOLD"]
