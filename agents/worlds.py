"""Card-location features of an information set, and exact world sampling from per-card seat probabilities.

Determinized search (``pimc``, ``ismcts``) draws worlds, deals of the unseen cards
consistent with the searcher's information set. :meth:`InfoSet.sample_hands
<twilight_env.rules.infoset.InfoSet.sample_hands>` draws them uniformly; the only constraint
on a world is that each hidden seat holds exactly its public number of Sun and of Moon
cards (card backs, R2.5): plays and requests reveal no void, since the counts are
public (R3.2, R3.5). Players still reveal more through *what* they play, whom they
request and what they keep; a card-location model (:mod:`twilight_env.agents.inference`, after
Solinas, Rebstock & Buro, "Improving Search with Supervised Learning in Trick-Based
Card Games", AAAI 2019) turns that into, for every unseen card ``c`` and hidden seat
``s``, a probability ``q[c, s]``.

:class:`WorldSampler` draws worlds from the *product of these marginals restricted to
the consistent worlds*,

    P(world) = prod_c q[c, seat_c] / Z   over the worlds that fill every hidden seat
    with exactly its Sun and Moon counts,

exactly, not approximately: for each cult it computes by dynamic programming over
"room left per hidden seat" the total weight ``B_i(room)`` of completing cards
``i..n-1``, then draws card by card with ``P(seat) ∝ q[c_i, seat] · B_{i+1}(room -
e_seat)``. Every draw is a consistent world (a seat without room has weight 0 and a
dead end has weight 0), no importance weights are needed (the draws follow the target
itself), and with all ``q`` equal it is the uniform sampler. ``log Z`` gives the exact
log-likelihood of any world (:meth:`WorldSampler.log_prob`), used to compare the model
with the uniform sampler. Hidden seats per cult are at most 3 and cards per cult at
most 14, so the table has at most 15 · 8 · 8 entries; it is built once per decision
and shared by all worlds of that decision.

Only the standard library and NumPy are imported here (no torch).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from twilight_env.rules.cards import NUM_CARDS
from twilight_env.rules.engine import NEW_MOON, NUM_TRICKS, State

FEATURE_VERSION = 1
"""Version of :func:`infoset_features`' layout; stored in data files and checkpoints."""

_CARD_BLOCKS = 24
"""28-card bit blocks of the feature vector (module table of :func:`infoset_features`)."""
_SCALARS = 4 * 16 + (NUM_TRICKS + 1) + 4 + 2 + 4 + 4 + 4 + 4 + 1 + 16
FEATURE_SIZE = _CARD_BLOCKS * NUM_CARDS + _SCALARS
"""Length of :func:`infoset_features`: 24 × 28 card flags + 111 other entries = 783."""


def hidden_seats(num_players: int, viewer: int) -> tuple[int, ...]:
    """Seats whose hands ``viewer`` does not see: all but its own and, in 3 players, the
    new moon's open hand (R7.1)."""
    return tuple(s for s in range(4) if s != viewer and not (num_players == 3 and s == NEW_MOON))


def infoset_features(info) -> np.ndarray:
    """Features of what the viewer of an information set knows, from its point of view.

    Seats are relative: ``r = (seat - info.seat) mod 4`` (0 the viewer). Read only from
    the :class:`~twilight_env.rules.infoset.InfoSet` (own hand, open hand, counts, history,
    trick, piles), so two deals with the same information set give the same features.

    Layout (card blocks are 28 flags by card id):

    | blocks / entries | meaning |
    |---|---|
    | 0, 1, 2 | viewer's hand; new moon's open hand (3 players, R7.1); unseen cards |
    | 3..6 | cards relative seat r played as its own chooser (R3.1) |
    | 7..10 | cards relative seat r gave as requested holder (R3.2) |
    | 11..14 | cards relative seat r led (place 0 of a trick) |
    | 15..18 | cards relative seat r took (R4.2) |
    | 19 | pending Purgatory pile (R4.3) |
    | 20..23 | current trick: card at place 0..3 |
    | then 64 | per relative seat: one-hot Sun count 0..7, one-hot Moon count 0..7 (R2.5) |
    | then 8, 4, 2 | one-hot tricks finished 0..7, place 0..3, phase choose/hold |
    | then 4, 4, 4 | one-hot relative leader, chooser, acting seat |
    | then 4, 1 | one-hot absolute viewer seat; 1 if 3 players |
    | then 16 | requests made: [relative chooser, relative holder] count / 7 |

    Args:
        info: an :class:`~twilight_env.rules.infoset.InfoSet`.

    Returns:
        float32 array of shape ``(FEATURE_SIZE,)`` (783), entries in [0, 1].
    """
    v = info.seat
    f = np.zeros(FEATURE_SIZE, dtype=np.float32)
    blocks = [0] * _CARD_BLOCKS
    k = info.known_masks
    blocks[0] = k[v]
    blocks[1] = k[NEW_MOON] if info.num_players == 3 else 0
    blocks[2] = info.unseen_mask
    requests = np.zeros((4, 4), dtype=np.float32)
    for i, (chooser, holder, card) in enumerate(info.history):
        b = 1 << card
        rc, rh = (chooser - v) & 3, (holder - v) & 3
        if chooser == holder:
            blocks[3 + rc] |= b
        else:
            blocks[7 + rh] |= b
            requests[rc, rh] += 1.0
        if i % 4 == 0:
            blocks[11 + rc] |= b
    for s in range(4):
        blocks[15 + ((s - v) & 3)] = info.captured[s]
    blocks[19] = info.pending
    for p, card in enumerate(info.trick_cards):
        if card >= 0:
            blocks[20 + p] = 1 << card
    bits = np.array(blocks, dtype=np.int64)[:, None] >> np.arange(NUM_CARDS)
    f[:_CARD_BLOCKS * NUM_CARDS] = (bits & 1).reshape(-1)
    o = _CARD_BLOCKS * NUM_CARDS
    for s in range(4):
        sun, moon = info.hand_counts[s]
        r = (s - v) & 3
        f[o + 16 * r + sun] = 1.0
        f[o + 16 * r + 8 + moon] = 1.0
    o += 64
    f[o + min(info.trick, NUM_TRICKS)] = 1.0
    o += NUM_TRICKS + 1
    f[o + info.place % 4] = 1.0
    o += 4
    f[o + (1 if info.phase == "hold" else 0)] = 1.0
    o += 2
    f[o + ((info.leader - v) & 3)] = 1.0
    o += 4
    if info.chooser >= 0:
        f[o + ((info.chooser - v) & 3)] = 1.0
    o += 4
    if info.acting_seat >= 0:
        f[o + ((info.acting_seat - v) & 3)] = 1.0
    o += 4
    f[o + v] = 1.0
    o += 4
    f[o] = 1.0 if info.num_players == 3 else 0.0
    o += 1
    f[o:o + 16] = requests.reshape(-1) / 7.0
    return f


def allowed_seats(info) -> np.ndarray:
    """Which relative seats may hold each card in a world consistent with ``info``.

    A card may lie with relative seat ``r`` iff it is unseen, seat ``r`` is hidden and
    holds at least one card of the card's cult (R2.5). Every such pair occurs in some
    consistent world.

    Returns:
        bool array of shape ``(28, 4)`` indexed ``[card id, relative seat]``; all False
        for cards that are not unseen.
    """
    v = info.seat
    out = np.zeros((NUM_CARDS, 4), dtype=bool)
    unseen = info.unseen_mask
    for s in hidden_seats(info.num_players, v):
        sun, moon = info.hand_counts[s]
        r = (s - v) & 3
        for c in range(NUM_CARDS):
            if unseen >> c & 1 and (sun if c < 14 else moon) > 0:
                out[c, r] = True
    return out


def true_locations(state: State, info) -> np.ndarray:
    """Labels: the relative seat (0..3) holding each unseen card in the true deal, -1 elsewhere.

    Returns:
        int8 array of shape ``(28,)``.
    """
    v = info.seat
    out = np.full(NUM_CARDS, -1, dtype=np.int8)
    unseen = info.unseen_mask
    for s in range(4):
        h = state.hands[s] & unseen
        for c in range(NUM_CARDS):
            if h >> c & 1:
                out[c] = (s - v) & 3
    return out


class WorldSampler:
    """Exact sampler of ``P(world) ∝ prod_c q[c, seat_c]`` over the worlds consistent with an
    information set (module docstring).

    Args:
        info: the :class:`~twilight_env.rules.infoset.InfoSet` to determinize.
        probs: ``(28, 4)`` non-negative weights ``[card id, relative seat]``; only the
            entries of :func:`allowed_seats` are read, and each must be > 0 (pass the
            model's probabilities; ``None`` means all equal: the uniform sampler).

    Raises:
        ValueError: if ``probs`` has the wrong shape, a negative, non-finite or zero
            weight on an allowed pair, or the information set has no consistent world.
    """

    def __init__(self, info, probs: np.ndarray | None = None):
        self.info = info
        v = info.seat
        self.hidden = hidden_seats(info.num_players, v)
        allowed = allowed_seats(info)
        if probs is None:
            probs = allowed.astype(np.float64)
        probs = np.asarray(probs, dtype=np.float64)
        if probs.shape != (NUM_CARDS, 4):
            raise ValueError(f"probs must have shape (28, 4) [card id, relative seat], got {probs.shape}")
        sel = probs[allowed]
        if not np.all(np.isfinite(sel)) or np.any(sel <= 0):
            raise ValueError("probs must be finite and > 0 on every (card, seat) pair a consistent world allows")
        unseen = info.unseen_mask
        self._cults = []  # per cult: (cards, weights (n, H), DP table dict, start room)
        log_z = 0.0
        for cult in (0, 1):
            cards = [c for c in range(NUM_CARDS) if unseen >> c & 1 and (c < 14) == (cult == 0)]
            room = tuple(info.hand_counts[s][cult] for s in self.hidden)
            if sum(room) != len(cards):
                raise ValueError(f"card counts {room} of the hidden seats disagree with {len(cards)} unseen "
                                 f"{'Sun' if cult == 0 else 'Moon'} cards")
            w = np.array([[probs[c, (s - v) & 3] if allowed[c, (s - v) & 3] else 0.0 for s in self.hidden]
                          for c in cards], dtype=np.float64).reshape(len(cards), len(self.hidden))
            # scale each card's row to sum 1: the distribution is unchanged, the table stays in range
            scale = w.sum(axis=1) if len(cards) else np.zeros(0)
            scale[scale == 0] = 1.0
            w = w / scale[:, None]
            table = self._table(w, room)
            z = table[0].get(room, 0.0)
            if not z > 0:
                raise ValueError("no world is consistent with this information set and these weights")
            log_z += math.log(z) + float(np.log(scale).sum())
            self._cults.append((cards, w, table, room, np.log(scale)))
        self._steps: dict = {}
        self._n_cards = sum(len(c[0]) for c in self._cults)
        self.log_partition = log_z
        """log Z: the log of the total weight ``sum over consistent worlds of prod_c q[c, seat_c]``."""

    @staticmethod
    def _table(w: np.ndarray, room: tuple) -> list[dict]:
        """B[i][room] = total weight of placing cards i..n-1 filling ``room`` exactly."""
        n, h = w.shape
        table: list[dict] = [dict() for _ in range(n + 1)]
        table[n][(0,) * h] = 1.0
        # rooms reachable at step i have sum n - i and each entry <= the start room
        for i in range(n - 1, -1, -1):
            nxt = table[i + 1]
            cur = table[i]
            for r_next, val in nxt.items():
                for j in range(h):
                    if r_next[j] < room[j] and w[i, j] > 0:
                        r = r_next[:j] + (r_next[j] + 1,) + r_next[j + 1:]
                        cur[r] = cur.get(r, 0.0) + w[i, j] * val
        return table

    def _step(self, k: int, i: int, room: tuple) -> tuple:
        """Cumulative draw probabilities of card ``i`` of cult ``k`` over the hidden seats
        given the room left, and the room left after each choice (memoised per decision)."""
        key = (k, i, room)
        hit = self._steps.get(key)
        if hit is not None:
            return hit
        _, w, table, _, _ = self._cults[k]
        nxt = table[i + 1]
        weights, rooms = [], []
        for j in range(len(room)):
            r = room[:j] + (room[j] - 1,) + room[j + 1:]
            weights.append(w[i, j] * nxt.get(r, 0.0) if room[j] > 0 else 0.0)
            rooms.append(r)
        tot = sum(weights)
        cum, acc = [], 0.0
        for x in weights:
            acc += x
            cum.append(acc / tot)
        hit = self._steps[key] = (cum, rooms, [x > 0 for x in weights])
        return hit

    def sample_hands(self, rng: np.random.Generator) -> list[int]:
        """One world as 4 hand masks by seat (the seen hands as they are).

        Args:
            rng: numpy Generator (one uniform draw per unseen card).
        """
        hands = list(self.info.known_masks)
        hidden = self.hidden
        us = rng.random(self._n_cards).tolist()
        n = 0
        for k, (cards, _, _, room, _) in enumerate(self._cults):
            for i, c in enumerate(cards):
                cum, rooms, ok = self._step(k, i, room)
                u = us[n]
                n += 1
                j = 0
                last = len(cum) - 1
                while j < last and (u >= cum[j] or not ok[j]):
                    j += 1
                while not ok[j]:  # float edge: u beyond the last rounded sum
                    j -= 1
                room = rooms[j]
                hands[hidden[j]] |= 1 << c
        return hands

    def sample_state(self, rng: np.random.Generator) -> State:
        """A determinization: the engine state of :meth:`sample_hands` (``InfoSet.world_state``)."""
        return self.info.world_state(self.sample_hands(rng))

    def log_prob(self, hands: Sequence[int]) -> float:
        """Exact log-probability of a world (4 hand masks) under this sampler's distribution.

        Returns:
            the natural log; ``-inf`` for a world inconsistent with the information set.
        """
        total = -self.log_partition
        for cards, w, _, _, log_scale in self._cults:
            for i, c in enumerate(cards):
                seat = next((s for s in range(4) if hands[s] >> c & 1), None)
                if seat not in self.hidden:
                    return -math.inf
                wij = w[i, self.hidden.index(seat)]
                if wij <= 0:
                    return -math.inf
                total += math.log(wij) + log_scale[i]
        try:
            self.info.world_state(hands)
        except ValueError:
            return -math.inf
        return total


def uniform_log_prob(info) -> float:
    """log of 1 / (number of worlds consistent with ``info``): the uniform sampler's
    log-likelihood of any consistent world (R2.5: a product of multinomials per cult)."""
    total = 0.0
    for cult in (0, 1):
        counts = [info.hand_counts[s][cult] for s in hidden_seats(info.num_players, info.seat)]
        n = sum(counts)
        total -= math.lgamma(n + 1) - sum(math.lgamma(k + 1) for k in counts)
    return total


__all__ = ["FEATURE_VERSION", "FEATURE_SIZE", "hidden_seats", "infoset_features", "allowed_seats",
           "true_locations", "WorldSampler", "uniform_log_prob"]
