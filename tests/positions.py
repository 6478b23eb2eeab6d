"""The one random-position generator of the parity harness (``test_parity.py``).

Every position comes from a seed alone, through the rules reference
(:mod:`twilight_env.rules.reference`) and Python's ``random``: the deal (R2.3), the first
leader (R2.4, R7.2) and a whole deal of uniformly random legal actions chosen from the
reference's legal actions. No fast copy takes part in making a position, so a copy with a
broken rule cannot bend the positions it is tested on.

A fast copy replays a position's actions and is compared with the reference after each
one (:func:`reference_fields`, :func:`engine_fields`, :func:`first_difference`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from twilight_env.rules import reference as R
from twilight_env.rules.engine import State

FIELDS = ("hands", "leader", "trick", "place", "phase", "holder", "cards", "holders", "pending", "captured",
          "neutral", "history", "deciding")
"""The fields of a deal compared, in the engine's representation (``docs/API.md``);
``deciding`` is the seat that decides next (R7.3), -1 once the deal is over."""


@dataclass(frozen=True)
class Position:
    """One random deal and the random legal actions of its whole play.

    Attributes:
        seed: the seed it was made from.
        num_players: 4 or 3.
        leader: the first leader.
        hands: the dealt hands, card codes by seat.
        actions: every action of the deal, in order (requests included).
        tricks: ``tricks[k]``: tricks finished before action ``k``.
    """

    seed: int
    num_players: int
    leader: int
    hands: tuple[tuple[str, ...], ...]
    actions: tuple[int, ...]
    tricks: tuple[int, ...]

    @property
    def masks(self) -> tuple[int, int, int, int]:
        """The dealt hands as 28-bit masks (bit = canonical card id, R1)."""
        return tuple(sum(1 << R.card_id(c) for c in hand) for hand in self.hands)

    def reference(self, upto: int | None = None) -> R.Deal:
        """The reference deal after the first ``upto`` actions (all when None)."""
        return R.replay([list(h) for h in self.hands], self.leader, self.num_players, self.actions[:upto])

    def state(self, cls, upto: int = 0):
        """An engine state of class ``cls`` (``State`` or ``PurePythonState``) after the
        first ``upto`` actions, played by the engine itself."""
        st = cls(self.masks, self.leader, self.num_players)
        for a in self.actions[:upto]:
            st.apply(a)
        return st

    def endgame_cut(self, tricks_left: int, rng: random.Random) -> int:
        """A number of actions after which exactly ``tricks_left`` tricks are left (the
        current one counted), at a random place and phase of that trick."""
        first = self.tricks.index(7 - tricks_left)
        inside = [k for k in range(first, len(self.actions)) if self.tricks[k] == 7 - tricks_left]
        return rng.choice(inside)


@lru_cache(maxsize=4096)
def position(seed: int, num_players: int | None = None) -> Position:
    """The position of ``seed``: 3 or 4 players (by the seed's parity unless given), a
    shuffled deal, a random first leader in 4 players, and uniformly random legal play
    to the end of the deal, all by the reference."""
    rng = random.Random(seed)
    n = num_players if num_players is not None else (4 if seed % 2 == 0 else 3)
    leader = rng.randrange(4) if n == 4 else 0
    hands = R.deal(rng)
    d = R.Deal(hands, leader, n)
    actions, tricks = [], []
    while not d.done:
        tricks.append(d.tricks_done)
        a = rng.choice(d.legal_actions())
        actions.append(a)
        d.play(a)
    return Position(seed, n, leader, tuple(tuple(sorted(h, key=R.card_id)) for h in hands), tuple(actions),
                    tuple(tricks))


def reference_fields(d: R.Deal) -> dict:
    """The reference deal's fields in the engine's representation (:data:`FIELDS`)."""
    def mask(cards):
        return sum(1 << R.card_id(c) for c in cards)

    p = len(d.places)
    return {
        "hands": [mask(h) for h in d.hands],
        "leader": d.leader,
        "trick": d.tricks_done,
        "place": p,
        "phase": 0 if d.requested is None else 1,
        "holder": -1 if d.requested is None else d.requested,
        "cards": [R.card_id(d.places[i][2]) if i < p else -1 for i in range(4)],
        "holders": [d.places[i][1] if i < p else -1 for i in range(4)],
        "pending": mask(d.pending),
        "captured": [mask(t) for t in d.taken],
        "neutral": mask(d.neutral),
        "history": [(c, h, R.card_id(x)) for c, h, x in d.history],
        "deciding": -1 if d.done else d.deciding_seat(),
    }


def engine_fields(st) -> dict:
    """An engine state's fields (:data:`FIELDS`), as plain ints and lists."""
    return {
        "hands": [int(h) for h in st.hands],
        "leader": int(st.leader),
        "trick": int(st.trick),
        "place": int(st.place),
        "phase": int(st.phase),
        "holder": int(st.holder),
        "cards": [int(c) for c in st.cards],
        "holders": [int(h) for h in st.holders],
        "pending": int(st.pending),
        "captured": [int(c) for c in st.captured],
        "neutral": int(st.neutral),
        "history": [(int(c), int(h), int(x)) for c, h, x in st.history],
        "deciding": -1 if st.done else int(st.deciding_seat),
    }


def first_difference(got: dict, want: dict) -> str | None:
    """The first field (in ``want``'s order) whose values differ, with both values; None
    when all are equal."""
    for name, value in want.items():
        if got.get(name, "<missing>") != value:
            return f"field {name}: got {got.get(name, '<missing>')!r}, reference {value!r}"
    return None


# ---------------------------------------------------------------------------------
# match outcomes
# ---------------------------------------------------------------------------------

_GOAL_STEPS = (0, 111, 222, 333)
"""Deal points whose sums land exactly on 333, 666 or 999 (R6.2), often for both sides."""
_THIRDS = (37, 74, 148, 185, 296)
"""Multiples of 37 (a third of 111): sums that reach a goal by other roads."""


def deal_outcomes(seed: int, pools: int, per_pool: int, lines: int) -> np.ndarray:
    """Random deal points, int64 ``(pools, per_pool, lines)``: half of them multiples of
    111, a quarter multiples of 37, so that totals hit the goals of R6.2 exactly (both
    sides after the same deal included); a quarter uniform in 0..360 (R5.3: a deal scores
    at most 360)."""
    rng = random.Random(seed)
    out = np.zeros((pools, per_pool, lines), np.int64)
    for b in range(pools):
        for j in range(per_pool):
            for line in range(lines):
                u = rng.random()
                out[b, j, line] = (rng.choice(_GOAL_STEPS) if u < 0.5 else rng.choice(_THIRDS) if u < 0.75
                                   else rng.randrange(361))
    return out


def lockstep_draws(rng: np.random.Generator, per_pool: int, pools: int, ended, max_deals: int) -> list[list[int]]:
    """The deal each match draws, in the order of the edge study's vectorised simulators
    (one match per pool; at every deal the matches still being played draw
    ``rng.integers(per_pool, size=live)`` in pool order): ``ended(b, draws)`` says whether
    pool ``b``'s match is over after the draws so far. Returns each pool's draws."""
    draws = [[] for _ in range(pools)]
    live = list(range(pools))
    for _ in range(max_deals):
        if not live:
            break
        js = rng.integers(per_pool, size=len(live))
        for b, j in zip(live, js):
            draws[b].append(int(j))
        live = [b for b in live if not ended(b, draws[b])]
    return draws


# ---------------------------------------------------------------------------------
# engine positions along whole deals
# ---------------------------------------------------------------------------------

def viewer_seats(num_players: int) -> tuple[int, ...]:
    """Seats of the players (3 players: the new moon, seat 2, is nobody's own seat)."""
    return (0, 1, 2, 3) if num_players == 4 else (0, 1, 3)


def random_points(rng: np.random.Generator, num_players: int, deals: int, every: int = 1):
    """Yield states at every ``every``-th decision (and the end) of ``deals`` random deals,
    each a separate clone (leader drawn at random, R2.4)."""
    for _ in range(deals):
        st = State.random(rng, int(rng.integers(4)) if num_players == 4 else 0, num_players)
        k = 0
        while True:
            if k % every == 0 or st.done:
                yield st.clone()
            if st.done:
                break
            legal = st.legal_actions()
            st.apply(legal[int(rng.integers(len(legal)))])
            k += 1
