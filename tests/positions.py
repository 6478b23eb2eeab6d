"""The one random-position generator of the tests, seeded by a spec.

Every test that needs random positions takes them from here, from a seed alone:

- :func:`position` (the parity harness, ``tests/rules/test_parity.py``): a whole deal made
  through the rules reference (:mod:`twilight_env.rules.reference`) and Python's
  ``random``: the deal (R2.3), the first leader (R2.4, R7.2) and uniformly random legal
  actions chosen from the reference's legal actions. No fast copy takes part in making
  it, so a copy with a broken rule cannot bend the positions it is tested on. A fast copy
  replays its actions and is compared with the reference after each one
  (:func:`reference_fields`, :func:`engine_fields`, :func:`first_difference`);
  :meth:`Position.state` and :meth:`Position.endgame_cut` give the engine's state at any
  point of it.
- :func:`positions` (every other layer's tests): engine states described by a
  :class:`Spec` (players, seed, how many, how deep, played by whom), the same states for
  the same spec. :func:`random_points` walks whole deals for tests that look at every
  decision.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from twilight_env.rules import reference as R
from twilight_env.rules.engine import DealState, State

PLAYERS = (4, 3)
PLAYED = 0.7
"""The heuristic's share of actions in positions that should look like played ones
(:attr:`Spec.heuristic`; the card-location model and its sampler are tested on them)."""

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


def random_points(spec: Spec, every: int = 1):
    """Yield the states at every ``every``-th decision (and the end) of ``spec.count`` whole
    deals of ``spec.players``, each a separate clone; the first leader as in
    :func:`positions` (R2.4, R7.2), the actions uniformly random among the legal ones or,
    for ``spec.heuristic``'s share, the heuristic's. ``spec.steps`` and ``spec.tricks_left``
    must be None (a whole deal is walked)."""
    if spec.steps is not None or spec.tricks_left is not None:
        raise ValueError(f"random_points walks whole deals: steps and tricks_left must be None, got {spec!r}")
    if not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be an int >= 1, got {every!r}")
    rng = np.random.default_rng(spec.seed)
    for _ in range(spec.count):
        st = _deal(rng, spec)
        k = 0
        while True:
            if k % every == 0 or st.done:
                yield st.clone()
            if st.done:
                break
            _step(st, rng, spec.heuristic)
            k += 1


@dataclass(frozen=True)
class Spec:
    """Which engine positions :func:`positions` makes; the same spec gives the same states.

    Attributes:
        players: 4 or 3 (R7). The first leader is drawn in 4 players (R2.4) and is the
            solo, seat 0, in 3 (R7.2).
        seed: seed of the ``numpy.random.Generator`` every draw comes from, in order.
        count: how many positions (>= 1).
        steps: actions played from the deal (requests included): a number, a range
            ``(lo, hi)`` to draw it from uniformly (``lo..hi-1``) per position, or None for
            ``(0, 60)``. A deal that ends before is dealt again and played for half as
            many actions, so a position is never a finished deal.
        tricks_left: instead of ``steps``, an endgame: play to the trick that leaves
            ``tricks_left`` tricks (1..7, the current one counted; or a range ``(lo, hi)``
            to draw it from per position, ``lo..hi-1``), then 0..6 actions more inside it
            (a random place and phase).
        heuristic: the share of actions (0..1) chosen by the heuristic
            (``agents.heuristic.decide_state``) instead of uniformly at random among the
            legal ones: positions that look like played ones.
        state_class: the engine class of the states, ``State`` (the compiled core when
            built) or ``PurePythonState``; the same spec deals and plays the same in both.
    """

    players: int
    seed: int
    count: int = 1
    steps: int | tuple[int, int] | None = None
    tricks_left: int | tuple[int, int] | None = None
    heuristic: float = 0.0
    state_class: type = State

    def __post_init__(self):
        if self.players not in PLAYERS:
            raise ValueError(f"players must be 4 or 3, got {self.players!r}")
        if not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"count must be an int >= 1, got {self.count!r}")
        ok = (self.steps is None or (isinstance(self.steps, int) and self.steps >= 0)
              or (isinstance(self.steps, tuple) and len(self.steps) == 2 and all(isinstance(s, int) for s in self.steps)
                  and 0 <= self.steps[0] < self.steps[1]))
        if not ok:
            raise ValueError(f"steps must be None, an int >= 0 or a range (lo, hi) with 0 <= lo < hi, got {self.steps!r}")
        left = self.tricks_left
        ok = left is None or (self.steps is None and (
            (isinstance(left, int) and 1 <= left <= 7)
            or (isinstance(left, tuple) and len(left) == 2 and all(isinstance(k, int) for k in left)
                and 1 <= left[0] < left[1] <= 8)))
        if not ok:
            raise ValueError(f"tricks_left must be 1..7 or a range (lo, hi) with 1 <= lo < hi <= 8, and steps "
                             f"None with it; got {self.tricks_left!r}, steps {self.steps!r}")
        if not 0.0 <= self.heuristic <= 1.0:
            raise ValueError(f"heuristic must be a share in 0..1, got {self.heuristic!r}")
        if not (isinstance(self.state_class, type) and issubclass(self.state_class, DealState)):
            raise ValueError(f"state_class must be an engine class (a DealState), got {self.state_class!r}")


def positions(spec: Spec) -> list[State]:
    """The ``spec.count`` engine states of ``spec`` (none finished), in order."""
    rng = np.random.default_rng(spec.seed)
    if spec.tricks_left is not None:
        return [_endgame(rng, spec) for _ in range(spec.count)]
    return [_played(rng, spec, spec.steps) for _ in range(spec.count)]


def _deal(rng: np.random.Generator, spec: Spec) -> State:
    leader = int(rng.integers(4)) if spec.players == 4 else 0
    return spec.state_class.random(rng, leader, spec.players)


def _step(st: State, rng: np.random.Generator, heuristic: float) -> None:
    la = st.legal_actions()
    if heuristic and rng.random() < heuristic:
        from twilight_env.agents.heuristic import decide_state

        st.apply(decide_state(st))
    else:
        st.apply(la[int(rng.integers(len(la)))])


def _played(rng: np.random.Generator, spec: Spec, steps: int | tuple[int, int] | None) -> State:
    st = _deal(rng, spec)
    if not isinstance(steps, int):
        steps = int(rng.integers(*(steps or (0, 60))))
    for _ in range(steps):
        _step(st, rng, spec.heuristic)
        if st.done:
            return _played(rng, spec, steps // 2)
    return st


def _endgame(rng: np.random.Generator, spec: Spec) -> State:
    st = _deal(rng, spec)
    left = spec.tricks_left if isinstance(spec.tricks_left, int) else int(rng.integers(*spec.tricks_left))
    while st.trick < 7 - left:
        _step(st, rng, spec.heuristic)
    for _ in range(int(rng.integers(0, 7))):
        after = st.clone()
        _step(after, rng, spec.heuristic)
        if after.trick > 7 - left:
            break  # that action would finish the trick: stay inside it
        st = after
    if st.done:
        return _endgame(rng, spec)
    return st
