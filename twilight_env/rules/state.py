"""One deal in progress: the rules written once in Python, the pure-Python and compiled states, the game's settings.

:class:`PurePythonState` plays the rules of ``_Rules`` in plain Python; :class:`State` is the
same class with the compiled core ``twilight_env/rules/_engine_c.c`` when it is built
(:func:`backend`). :class:`Config` holds the settings of one game, :func:`as_action` reads
an action of any integer type. The design (mutable states, the action encoding, the choices
where the rules are silent, R9) is described in :mod:`twilight_env.rules.engine`, which
re-exports every public name of this module.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from twilight_env.rules.cards import (
    CULT_MASK,
    HALF_IDS,
    MOON,
    NUM_CARDS,
    PURGATORY_MASK,
    STRENGTH,
    SUN,
    SUN_MASK,
    codes_of,
)
from twilight_env.rules.hands import CARD_BIT, NUM_TRICKS, held_mask, random_hands, validate_deal
from twilight_env.rules.scoring import score_mask

CHOOSE, HOLD = 0, 1
"""Phases: the chooser decides (play own card or request), or the requested holder picks a card (R3.2)."""
PHASE_NAMES = ("choose", "hold")

REQUEST_BASE = 28
"""Action ``REQUEST_BASE + o - 1`` requests the seat at offset ``o`` (1..3) from the chooser."""
NUM_ACTIONS = 31
NEW_MOON = 2
"""The new-moon seat in 3 players (R7.1)."""

SEAT_CULT_4 = (SUN, MOON, SUN, MOON)
"""Cult of each seat in 4 players (R2.1): seats 0, 2 Sun; 1, 3 Moon."""
SEAT_CULT_3 = (MOON, SUN, MOON, SUN)
"""Cult of each seat in 3 players (R7.2): solo 0 and new moon 2 are Moon."""

_REQUESTS = ((), (28,), (29,), (28, 29), (30,), (28, 30), (29, 30), (28, 29, 30))
"""Request actions by a 3-bit mask of the seats at offsets +1, +2, +3 that may be requested."""
_SHIFT = (0, 14)
"""Bit offset of each cult's 14 cards in a hand mask."""
_ACTION_OF: tuple[dict, dict] = tuple(
    {**{i: i for i in range(14 * cult, 14 * cult + 14)}, 28: 29, 29: 30, 30: 31} for cult in (0, 1))
"""Per chooser cult: action -> plain int; a card id of that cult maps to itself, a request
28/29/30 to 28 + its seat offset 1/2/3. Other actions are missing (apply's legality check)."""
_REQUESTS_BY: tuple = tuple(
    tuple(tuple(_REQUESTS[sum(1 << (o - 1) for o in (1, 2, 3) if held >> (4 * cult + ((c + o) & 3)) & 1)]
                for held in range(256)) for c in range(4)) for cult in (0, 1))
"""``_REQUESTS_BY[cult][chooser][held]``: the legal requests of a chooser of that cult (R3.5)."""


@dataclass(frozen=True)
class Config:
    """Rules of one game, checked once when built.

    Attributes:
        num_players: 4 or 3 (R7).
        target: match target in points (R6.1, R8), a positive int.
        goals_333: the R6.2 variant (also end on exactly 333, 666 or 999).
        three_player_scoring: ``"team"`` (R7.5) or ``"individual"`` (R8).
        fixed_solo: 3 players: the same player is solo every deal (R7.6).
        tricks: tricks per deal, 1..7; 7 (the default) is the game of R1-R5. Fewer
            tricks play a reduced deck (:data:`~twilight_env.rules.cards.KEEP_ORDER`):
            ``tricks`` cards per hand, each cult ``2 * tricks`` cards, so every trick
            still holds two Sun and two Moon cards; the rules are R2-R5 unchanged, with
            the last trick's Purgatory rule (R4.4) on trick ``tricks``. Its deals are
            :class:`ReducedState` (pure Python; the compiled core, the batch engine and
            the agents' kernels play only the full deck).

    Raises:
        ValueError: on a bad value, naming the field and the allowed values.
    """

    num_players: int = 4
    target: int = 1000
    goals_333: bool = False
    three_player_scoring: str = "team"
    fixed_solo: bool = False
    tricks: int = NUM_TRICKS

    def __post_init__(self):
        if isinstance(self.num_players, bool) or self.num_players not in (3, 4):
            raise ValueError(f"num_players must be 3 or 4, got {self.num_players!r}")
        if isinstance(self.target, bool) or not isinstance(self.target, (int, np.integer)) or self.target < 1:
            raise ValueError(f"target must be a positive int (points), got {self.target!r}")
        if not isinstance(self.goals_333, (bool, np.bool_)):
            raise ValueError(f"goals_333 must be True or False, got {self.goals_333!r}")
        if self.three_player_scoring not in ("team", "individual"):
            raise ValueError(
                f"three_player_scoring must be 'team' or 'individual', got {self.three_player_scoring!r}")
        if not isinstance(self.fixed_solo, (bool, np.bool_)):
            raise ValueError(f"fixed_solo must be True or False, got {self.fixed_solo!r}")
        if isinstance(self.tricks, bool) or not isinstance(self.tricks, (int, np.integer)) \
                or not 1 <= self.tricks <= NUM_TRICKS:
            raise ValueError(f"tricks must be an int 1..7 (tricks per deal; 7 is the full deck), got {self.tricks!r}")

    @property
    def seat_cult(self) -> tuple[int, int, int, int]:
        """Cult (0 Sun, 1 Moon) of each seat 0..3."""
        return SEAT_CULT_4 if self.num_players == 4 else SEAT_CULT_3


_FIELDS = ("seat_cult", "num_players", "hands", "leader", "trick", "place", "phase",
           "holder", "cards", "holders", "pending", "captured", "neutral", "history",
           "initial_hands", "first_leader", "held")
"""The fields of a deal state, in slot order."""


class _Rules:
    """One deal in progress (R2-R5, R7.1-R7.3).

    Attributes (read them, change them only through :meth:`apply`):
        seat_cult: tuple of 4 ints, cult of each seat (0 Sun, 1 Moon).
        num_players: 3 or 4.
        hands: list of 4 int masks, the cards each seat holds.
        leader: seat leading the current trick.
        trick: number of tricks finished, 0..7.
        place: places filled in the current trick, 0..3.
        phase: ``CHOOSE`` or ``HOLD``.
        holder: requested seat in the hold phase, else -1.
        cards: list of 4 card ids of the current trick by place (-1 empty).
        holders: list of 4 seats whose hand each place's card came from (-1 empty).
        pending: mask of the pending Purgatory pile (R4.3).
        captured: list of 4 masks, cards taken by each seat (R4.2).
        neutral: mask of cards left neutral by a last-trick Purgatory (R4.4).
        history: list of ``(chooser, holder, card)`` per card played, in order.
        initial_hands: the 4 hands as dealt (masks).
        first_leader: seat that led the first trick.
        held: 8-bit mask derived from ``hands``, bit ``4 * cult + seat`` set while the seat
            holds a card of that cult (R3.5: who may be requested); :meth:`apply` keeps it
            in step. A state built field by field (``State.__new__``) may leave it unset:
            it is then computed from ``hands`` on first use. Set it with
            :func:`held_mask` after changing ``hands`` by hand.

    The constructor ``State(hands, leader, num_players)`` trusts ``hands`` (searches build
    many states from hands they know to be valid); :meth:`from_deal` checks a deal first.

    Raises:
        ValueError: (constructor) on a bad ``leader`` (not a seat 0..3) or
            ``num_players`` (not 3 or 4).
    """

    __slots__ = ()  # the fields live in the concrete classes below
    num_tricks = NUM_TRICKS
    """Tricks in this deal (7; a :class:`ReducedState` has fewer)."""
    deck = (1 << NUM_CARDS) - 1
    """Mask of the cards in this deal (all 28; a :class:`ReducedState` has fewer)."""

    def __init__(self, hands: Sequence[int], leader: int = 0, num_players: int = 4):
        if num_players.__class__ is not int or (num_players != 4 and num_players != 3):
            num_players = _check_players(num_players)
        if leader.__class__ is not int or not 0 <= leader <= 3:
            leader = _check_leader(leader)
        self.num_players = num_players
        self.seat_cult = SEAT_CULT_4 if num_players == 4 else SEAT_CULT_3
        self.hands = hands = list(hands)
        self.held = held_mask(hands)
        self.initial_hands = tuple(hands)
        self.leader = leader
        self.first_leader = leader
        self.trick = 0
        self.place = 0
        self.phase = CHOOSE
        self.holder = -1
        self.cards = [-1, -1, -1, -1]
        self.holders = [-1, -1, -1, -1]
        self.pending = 0
        self.captured = [0, 0, 0, 0]
        self.neutral = 0
        self.history = []

    # -- construction -------------------------------------------------------------
    @classmethod
    def from_deal(cls, deal: Sequence[Sequence[str | int]], leader: int = 0, num_players: int = 4) -> "State":
        """A fresh deal from four hands of card codes (or ids), by seat.

        Raises:
            ValueError: unless there are 4 hands of 7 distinct known cards holding all 28
                once, and ``leader`` is a seat 0..3 (R2.3).
        """
        return cls(validate_deal(deal), leader, num_players)

    @classmethod
    def random(cls, rng: np.random.Generator, leader: int = 0, num_players: int = 4) -> "State":
        """A shuffled deal (R2.3) drawn with ``rng`` (a ``numpy.random.Generator``)."""
        return cls(random_hands(rng), leader, num_players)

    def clone(self) -> "State":
        """An independent copy (lists copied, immutable parts shared), of the same class."""
        cls = self.__class__
        s = cls.__new__(cls)
        s.seat_cult = self.seat_cult
        s.num_players = self.num_players
        s.hands = self.hands[:]
        s.initial_hands = self.initial_hands
        s.leader = self.leader
        s.first_leader = self.first_leader
        s.trick = self.trick
        s.place = self.place
        s.phase = self.phase
        s.holder = self.holder
        s.cards = self.cards[:]
        s.holders = self.holders[:]
        s.pending = self.pending
        s.captured = self.captured[:]
        s.neutral = self.neutral
        s.history = self.history[:]
        try:
            s.held = self.held
        except AttributeError:  # built field by field without ``held``: computed on first use
            pass
        return s

    # -- queries ------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """True once all 7 tricks are played."""
        return self.trick == NUM_TRICKS

    @property
    def chooser(self) -> int:
        """Seat choosing the current place (R3.1): ``(leader + place) mod 4``."""
        return (self.leader + self.place) & 3

    @property
    def acting_seat(self) -> int:
        """Seat whose hand or choice the next action is about: the chooser, or the holder."""
        return self.holder if self.phase == HOLD else (self.leader + self.place) & 3

    @property
    def deciding_seat(self) -> int:
        """Seat that makes the next decision: the acting seat, except that in 3 players the
        solo (seat 0) decides for the new moon (seat 2) (R7.3)."""
        s = self.acting_seat
        if self.num_players == 3 and s == NEW_MOON:
            return 0
        return s

    def legal_actions(self) -> tuple[int, ...]:
        """Sorted legal actions in the 0..30 encoding (R3.2, R3.5); empty when done.

        Choose phase: the chooser's own-cult cards, then a request ``28 + o - 1`` for each
        seat at offset ``o`` holding a card of the chooser's cult. Hold phase: the
        holder's cards of the chooser's cult. When the deal is over every hand is empty,
        so both cases give ``()``.
        """
        c = (self.leader + self.place) & 3
        cult = self.seat_cult[c]
        h = self.holder
        if h >= 0:
            return HALF_IDS[cult][(self.hands[h] >> _SHIFT[cult]) & SUN_MASK]
        try:
            held = self.held
        except AttributeError:  # built field by field without ``held``
            held = self._held()
        return HALF_IDS[cult][(self.hands[c] >> _SHIFT[cult]) & SUN_MASK] + _REQUESTS_BY[cult][c][held]

    def _held(self) -> int:
        """``held`` computed from ``hands`` (and stored)."""
        self.held = held_mask(self.hands)
        return self.held

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal now (same answer as ``as_action(action) in legal_actions()``).

        Args:
            action: any integer type :func:`as_action` reads (a Python int or int subclass,
                a NumPy integer scalar of any width, a 0-d integer array).

        Returns:
            True or False, whatever ``action`` is: False for anything that is not a legal
            action, a bool, a float or any other non-integer included (no error).
        """
        if action.__class__ is not int:
            action = action_or_none(action)
            if action is None:
                return False
        if self.trick == NUM_TRICKS:
            return False
        c = (self.leader + self.place) & 3
        m = CULT_MASK[self.seat_cult[c]]
        if 0 <= action < NUM_CARDS:
            hand = self.hands[self.holder if self.phase == HOLD else c]
            return bool(hand & m & (1 << action))
        if self.phase == CHOOSE and REQUEST_BASE <= action < NUM_ACTIONS:
            return bool(self.hands[(c + action - 27) & 3] & m)
        return False

    def counts(self) -> tuple[tuple[int, int], ...]:
        """Public card-back counts (R2.5): per seat ``(sun, moon)`` cards held now."""
        return tuple((bin(h & SUN_MASK).count("1"), bin(h >> 14).count("1")) for h in self.hands)

    # -- transitions --------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Apply one action in place (R3.2-R4.4).

        Args:
            action: an action in the 0..30 encoding, of any integer type :func:`as_action`
                reads (a Python int or int subclass, a NumPy integer scalar, a 0-d integer
                array).

        Raises:
            ValueError: if the action is not legal here (including any action once the
                deal is over), or is not an integer (a bool, a float, a 1-element array:
                the message names the accepted types); the state is then unchanged.
        """
        # Hot path: one dict lookup checks the card's cult against the chooser's (R3.2)
        # and sorts cards (< 28) from requests.
        if action.__class__ is not int:
            value = action_or_none(action)  # 1.0 or True would pass the lookup below
            if value is None:
                raise ValueError(self._illegal(action))
            action = value
        p = self.place
        c = (self.leader + p) & 3
        cult = self.seat_cult[c]
        try:
            card = _ACTION_OF[cult][action]
        except KeyError:
            raise ValueError(self._illegal(action)) from None
        if card < 28:  # a card of the chooser's cult
            h = self.holder
            if h < 0:
                h = c
            hands = self.hands
            hand = hands[h]
            bit = CARD_BIT[card]
            if hand & bit:
                cards, holders, history = self.cards, self.holders, self.history  # all set before any change
                if p == 3:
                    self.captured, self.pending, self.neutral  # noqa: B018 (read: set before any change)
                hand -= bit  # the bit is set: ``-`` is ``^`` here, and cheaper in CPython
                hands[h] = hand
                if not hand & CULT_MASK[cult]:  # the seat's last card of this cult: clear its ``held`` bit
                    try:
                        self.held &= ~(1 << (4 * cult + h))
                    except AttributeError:  # built field by field without ``held``
                        self._held()
                if h != c:
                    self.phase = CHOOSE
                    self.holder = -1
                cards[p] = card
                holders[p] = h
                history.append((c, h, card))
                if p != 3:
                    self.place = p + 1
                else:
                    self._resolve()
                return
        elif self.holder < 0:
            h = (c + card - 28) & 3  # card = 28 + offset for a request
            if self.hands[h] & CULT_MASK[cult]:  # R3.5
                self.phase = HOLD
                self.holder = h
                return
        raise ValueError(self._illegal(action))

    def _illegal(self, action) -> str:
        if self.trick == NUM_TRICKS:
            return f"the deal is over: no action is legal (got {action!r})"
        if action_or_none(action) is None or not 0 <= action < NUM_ACTIONS:
            return (f"illegal action {action!r}: actions are ints 0..30 ({ACTION_TYPES}); legal now: "
                    f"{list(self.legal_actions())}")
        return (f"illegal action {action!r} for seat {self.acting_seat} in phase "
                f"{PHASE_NAMES[self.phase]}; legal actions: {list(self.legal_actions())}")

    def _play(self, chooser: int, holder: int, card: int) -> None:
        """Place ``card`` from ``holder``'s hand for ``chooser`` without checks (used to
        replay public history; :meth:`apply` inlines the same steps)."""
        self.hands[holder] ^= 1 << card
        self.held = held_mask(self.hands)
        p = self.place
        self.cards[p] = card
        self.holders[p] = holder
        self.history.append((chooser, holder, card))
        if p < 3:
            self.place = p + 1
            return
        self._resolve()

    def _resolve(self) -> None:
        """Settle the full trick in ``cards`` (R4.1-R4.4) and start the next one."""
        cards = self.cards
        c0, c1, c2, c3 = cards
        tmask = CARD_BIT[c0] + CARD_BIT[c1] + CARD_BIT[c2] + CARD_BIT[c3]  # distinct cards: + is |
        leader = self.leader
        if tmask & PURGATORY_MASK:
            # R4.3: the trick goes pending; the seat of the first Purgatory leads next.
            first = 0
            while not (1 << cards[first]) & PURGATORY_MASK:
                first += 1
            self.pending |= tmask
            self.leader = (leader + first) & 3
            if self.trick == NUM_TRICKS - 1:
                # R4.4: a Purgatory in the last trick leaves the whole pile neutral.
                self.neutral |= self.pending
                self.pending = 0
        else:
            # R4.1: highest strength wins, ties to the earliest place (strictly greater).
            st = STRENGTH
            w = 0
            best = st[c0]
            s = st[c1]
            if s > best:
                best = s
                w = 1
            s = st[c2]
            if s > best:
                best = s
                w = 2
            if st[c3] > best:
                w = 3
            taker = (leader + w) & 3
            self.captured[taker] |= tmask | self.pending
            self.pending = 0
            self.leader = taker
        self.trick += 1
        self.place = 0
        cards[0] = cards[1] = cards[2] = cards[3] = -1
        holders = self.holders
        holders[0] = holders[1] = holders[2] = holders[3] = -1

    def __reduce__(self):
        """Pickle and ``copy`` by class and the set fields (every pickle protocol; the
        compiled state has no ``__slots__`` for pickle to read)."""
        return _rebuild, (self.__class__, {f: getattr(self, f) for f in _FIELDS if hasattr(self, f)})

    # -- results ------------------------------------------------------------------
    def side_captured(self, side: int) -> int:
        """Mask of cards taken by side 0 (seats 0, 2) or side 1 (seats 1, 3)."""
        return self.captured[side] | self.captured[side + 2]

    def side_scores(self) -> tuple[int, int]:
        """Deal score of side 0 (seats 0, 2) and side 1 (seats 1, 3) (R5), in deal points."""
        sc = self.seat_cult
        return (score_mask(self.captured[0] | self.captured[2], sc[0]),
                score_mask(self.captured[1] | self.captured[3], sc[1]))

    def seat_scores(self) -> tuple[int, int, int, int]:
        """Each seat's score from only the tricks it took (R8 ``individual``)."""
        return tuple(score_mask(self.captured[s], self.seat_cult[s]) for s in range(4))

    def returns(self) -> tuple[int, int, int, int]:
        """Per seat: own side's deal score − the other side's (deal points)."""
        a, b = self.side_scores()
        return (a - b, b - a, a - b, b - a)

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(codes_of(h)) for h in self.hands)
        return (f"{self.__class__.__name__}(trick={self.trick}, place={self.place}, phase={PHASE_NAMES[self.phase]}, "
                f"leader={self.leader}, hands=[{hands}])")


def _rebuild(cls, fields: dict):
    """A state of class ``cls`` with ``fields`` set (the other half of ``__reduce__``)."""
    s = cls.__new__(cls)
    for name, value in fields.items():
        setattr(s, name, value)
    return s


class PurePythonState(_Rules):
    __doc__ = _Rules.__doc__
    __slots__ = _FIELDS


def _source_hash(path: str) -> str:
    """The first 16 hex digits of the SHA-256 of a file (``setup.py`` compiles the same
    digest of ``_engine_c.c`` into the core as ``SOURCE_HASH``)."""
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def pure_python_asked(value: str | None) -> bool:
    """Whether ``TWILIGHT_ENV_PURE_PYTHON`` asks for the pure-Python engine and encoder: set
    and not one of ``""``, ``"0"``, ``"false"``, ``"no"``, ``"off"`` (any case)."""
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "off")


def _load_core():
    """The compiled core (``twilight_env.rules._engine_c``), initialised with this module's
    tables, or None when it is not built or ``TWILIGHT_ENV_PURE_PYTHON=1``."""
    import os

    if pure_python_asked(os.environ.get("TWILIGHT_ENV_PURE_PYTHON")):
        return None
    try:
        from twilight_env.rules import _engine_c
    except ImportError:
        return None
    source = os.path.join(os.path.dirname(__file__), "_engine_c.c")
    if os.path.exists(source) and _engine_c.SOURCE_HASH != _source_hash(source):
        import warnings

        warnings.warn("twilight_env: the compiled engine core was built from another version of "
                      "twilight_env/rules/_engine_c.c; run `pip install -e .` again to rebuild it. Using the "
                      "pure-Python engine (same rules, slower).", RuntimeWarning, stacklevel=2)
        return None
    _engine_c._init(tuple(STRENGTH), PURGATORY_MASK, HALF_IDS, _REQUESTS,
                    _Rules.apply, _Rules.legal_actions, _Rules.done.fget)
    return _engine_c


_core = _load_core()

if _core is not None:
    class State(_core.StateCore, _Rules):
        __doc__ = _Rules.__doc__
        __slots__ = ()
else:
    State = PurePythonState


class DealState(abc.ABC):
    """The public type of a deal state, whichever engine runs: ``isinstance(x, DealState)``
    holds for a :class:`State` (compiled core or not) and a :class:`PurePythonState`
    alike; a check against ``State`` alone misses a ``PurePythonState`` when the core is
    built.

    Use it in checks and type hints; build states with :class:`State` (or
    :class:`PurePythonState`). Both are registered here; nothing else is.
    """

    __slots__ = ()


DealState.register(PurePythonState)
if State is not PurePythonState:
    DealState.register(State)


def backend() -> str:
    """``"compiled"`` when :class:`State` runs ``apply``, ``legal_actions`` and ``done`` in
    the C core ``twilight_env.rules._engine_c`` (built at install time; the environment
    variable ``TWILIGHT_ENV_PURE_PYTHON`` unset or ``0``), else ``"python"``. Both follow
    the same rules: the compiled core runs only the legal, plain-int cases and hands every
    other case to the Python methods of :class:`PurePythonState`."""
    return "python" if _core is None else "compiled"


ACTION_TYPES = "a Python int or int subclass, a NumPy integer scalar or a 0-d integer array; not a bool"
"""The integer types every entry point that takes an action accepts (:func:`as_action`)."""


def action_or_none(action) -> int | None:
    """The plain int of an action of any integer type (see :func:`as_action`), else None."""
    if isinstance(action, int):
        return None if isinstance(action, bool) else int(action)
    if isinstance(action, np.integer):
        return int(action)
    if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        return int(action)
    return None


def as_action(action) -> int:
    """An action of any integer type as a plain ``int``, the one reading every entry point
    that takes an action shares (``State.apply``/``is_legal``, :func:`apply_action`, the
    PettingZoo env's ``step``, the wrappers, the agents' runner).

    Accepted: a Python ``int`` or a subclass (``IntEnum``), a NumPy integer scalar of any
    width (``np.int8`` .. ``np.uint64``) and a 0-d NumPy integer array. Refused: ``bool``
    and ``np.bool_`` (True is not action 1), floats (even ``1.0``), arrays with a dimension,
    strings, None. The value is not range-checked here: an int outside 0..30 is simply
    not legal.

    Raises:
        ValueError: on a value that is not of an integer type, naming the accepted types.
    """
    value = action_or_none(action)
    if value is None:
        raise ValueError(f"an action must be an int 0..30 ({ACTION_TYPES}), got {action!r} "
                         f"({type(action).__name__})")
    return value


def apply_action(state: DealState, action: int) -> DealState:
    """Functional step: a new state with ``action`` applied; ``state`` is not changed.

    Args:
        state: the state to step from.
        action: an action in the 0..30 encoding, of any integer type :func:`as_action` reads.

    Raises:
        ValueError: on an illegal action or one that is not an integer.
    """
    s = state.clone()
    s.apply(action)
    return s


def legal_actions(state: DealState) -> tuple[int, ...]:
    """Sorted legal actions of ``state`` in the 0..30 encoding (R3.2)."""
    return state.legal_actions()


def _check_players(num_players) -> int:
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
            or num_players not in (3, 4):
        raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
    return int(num_players)


def _check_leader(leader) -> int:
    if isinstance(leader, bool) or not isinstance(leader, (int, np.integer)) or not 0 <= leader < 4:
        raise ValueError(f"leader must be a seat 0..3, got {leader!r}")
    return int(leader)
