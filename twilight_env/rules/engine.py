"""The Twilight rules engine: deal state, legal actions, tricks, scoring, matches.

Pure module: imports only the standard library, NumPy and the sibling ``cards`` and
``scoring`` modules. The engine speaks in seats (0..3) and phases; agent names exist
only in the PettingZoo adapter.

Representation
--------------
Hands, piles and captured cards are 28-bit int masks (bit ``i`` = card id ``i``), and
legal-move lists come from precomputed tables: ``cards.HALF_IDS`` (card ids of a
14-bit half mask) and ``_REQUESTS_BY`` (requests allowed by ``State.held``, an 8-bit
mask of which seat holds which cult, R3.5). A state is a small mutable object: its
:meth:`apply` changes it in place and :meth:`clone` copies it (a handful of ints and four
short lists). The functional :func:`apply_action` (clone, then apply) is there for callers
that want a new state. We chose a mutable state over a frozen dataclass for speed: a
random-play step then allocates only the history record, and searches clone only where
they branch; building a frozen dataclass per step runs ``object.__setattr__`` for every
field. ``benchmarks/engine_speed.py`` measures random play and clone cost against
OpenSpiel, and the design choice itself: the allocation one frozen-dataclass step cannot
avoid (``dataclasses.replace``) costs several times our whole in-place ``apply``.

Two classes hold the same fields and follow the same rules, written once, in Python, in
``_Rules``:

- :class:`PurePythonState`: the rules as written here, in plain Python;
- :class:`State` (what every other module uses): the same class with a compiled core,
  ``twilight_env/rules/_engine_c.c``, built at install time when a C compiler is present. The
  core runs the hot path of ``apply``, ``legal_actions`` and ``done``: a legal plain-int
  action on a state whose fields are all set. It hands every other case (an illegal
  action, a NumPy integer, a state built field by field without ``held``) to the Python
  methods, so errors and odd inputs behave exactly as in :class:`PurePythonState`.
  Without the core (no compiler, or ``TWILIGHT_ENV_PURE_PYTHON=1``), ``State`` is
  :class:`PurePythonState`; :func:`backend` says which. The parity harness,
  ``tests/rules/test_parity.py``, plays both against the rules reference
  (:mod:`twilight_env.rules.reference`) and compares every field after every action.

When the core is built these are two classes, so a check of the type of a state, in
either engine, is ``isinstance(x, DealState)`` (an ABC registered for both).

Action encoding (``docs/API.md``, Actions)
------------------------------------------
| action | meaning |
|--------|---------|
| 0..27  | play that card id from the acting hand (the chooser's own hand in the choose phase, the holder's in the hold phase) |
| 28, 29, 30 | as chooser, request the seat at offset +1, +2, +3 in play order (R3.2) |

Choices where the rule texts are silent (R9)
-------------------------------------------
- 4 players: the dealer passes to the left after each deal (R2.4); the seat after the
  dealer leads. Seats 0 and 2 are Sun, seats 1 and 3 Moon (R2.1).
- 3 players: seats per deal are 0 = solo (Moon), 1 = Sun player on the solo's left,
  2 = new moon (Moon, open hand), 3 = Sun player on the solo's right (R7.2). The solo
  leads the first trick and decides for the new-moon seat (R7.3). Solo rotation
  p0, p2, p1, ... (R7.4).
- A tie at or above the target plays another deal (R6.1, R7.5). In 3 players the two
  Sun players of a ``fixed_solo`` match form one side, so they never "tie" each other;
  they share one score line, so their starting totals must be equal.
- All played cards are public history (perfect recall).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from twilight_env.rules.cards import (
    CARDS,
    CULT_MASK,
    HALF_IDS,
    MOON,
    NUM_CARDS,
    PURGATORY_MASK,
    STRENGTH,
    SUN,
    SUN_MASK,
    card_id,
    codes_of,
    deck_mask,
)
from twilight_env.rules.scoring import score_mask

CHOOSE, HOLD = 0, 1
"""Phases: the chooser decides (play own card or request), or the requested holder picks a card (R3.2)."""
PHASE_NAMES = ("choose", "hold")

REQUEST_BASE = 28
"""Action ``REQUEST_BASE + o - 1`` requests the seat at offset ``o`` (1..3) from the chooser."""
NUM_ACTIONS = 31
NUM_SEATS = 4
NUM_TRICKS = 7
HAND_SIZE = 7
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
_BIT = tuple(1 << i for i in range(NUM_CARDS))
"""``_BIT[card] == 1 << card`` (a tuple lookup; CPython 3.11 specializes it, not ``<<``)."""
_DECK = tuple(range(NUM_CARDS))
_ACTION_OF: tuple[dict, dict] = tuple(
    {**{i: i for i in range(14 * cult, 14 * cult + 14)}, 28: 29, 29: 30, 30: 31} for cult in (0, 1))
"""Per chooser cult: action -> plain int; a card id of that cult maps to itself, a request
28/29/30 to 28 + its seat offset 1/2/3. Other actions are missing (apply's legality check)."""
_REQUESTS_BY: tuple = tuple(
    tuple(tuple(_REQUESTS[sum(1 << (o - 1) for o in (1, 2, 3) if held >> (4 * cult + ((c + o) & 3)) & 1)]
                for held in range(256)) for c in range(4)) for cult in (0, 1))
"""``_REQUESTS_BY[cult][chooser][held]``: the legal requests of a chooser of that cult (R3.5)."""

GOALS_333 = (333, 666, 999)


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
            bit = _BIT[card]
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
        tmask = _BIT[c0] + _BIT[c1] + _BIT[c2] + _BIT[c3]  # distinct cards: + is |
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


class ReducedState(PurePythonState):
    """A deal of a reduced deck: ``num_tricks`` tricks (1..7) of the cards of
    :func:`~twilight_env.rules.cards.deck_mask` (see :class:`Config`, ``tricks``).

    The rules are those of :class:`PurePythonState` (R2-R5, R7.1-R7.3), with two fields
    more: ``num_tricks`` (the deal ends after that many tricks) and ``deck`` (the mask of
    the cards in play). A Purgatory in trick ``num_tricks`` leaves the pending pile
    neutral (R4.4 on the last trick). Every trick holds two Sun and two Moon cards, since
    each cult has ``2 * num_tricks`` cards (R3.4). Actions keep the 0..30 encoding: the
    cards keep their ids. Pure Python: the compiled core plays the full deck only.

    The constructor ``ReducedState(hands, leader, num_players)`` trusts ``hands`` (4 masks
    of equal size, together a deck of :func:`deck_mask`); :meth:`from_deal` and
    :meth:`random` build checked deals.
    """

    __slots__ = ("num_tricks", "deck")

    def __init__(self, hands: Sequence[int], leader: int = 0, num_players: int = 4):
        super().__init__(hands, leader, num_players)
        self.deck = deck = self.hands[0] | self.hands[1] | self.hands[2] | self.hands[3]
        self.num_tricks = bin(deck).count("1") // NUM_SEATS

    @classmethod
    def from_deal(cls, deal: Sequence[Sequence[str | int]], leader: int = 0, num_players: int = 4,
                  tricks: int | None = None) -> "ReducedState":
        """A fresh deal from four hands of card codes (or ids), by seat.

        Args:
            deal: 4 hands of ``tricks`` cards each, together the deck of :func:`deck_mask`.
            leader: the first leader, a seat 0..3.
            num_players: 4 or 3.
            tricks: 1..7; None reads it from the hand size.

        Raises:
            ValueError: on a deal that is not the reduced deck of ``tricks`` tricks dealt
                to 4 hands of ``tricks`` cards, or a bad ``leader``.
        """
        if tricks is None:
            first = deal[0] if hasattr(deal, "__getitem__") and len(deal) else ()
            tricks = len(first) if hasattr(first, "__len__") and not isinstance(first, str) else 0
        return cls(validate_deal(deal, tricks), leader, num_players)

    @classmethod
    def random(cls, rng: np.random.Generator, leader: int = 0, num_players: int = 4,
               tricks: int = NUM_TRICKS) -> "ReducedState":
        """A shuffled deal of the reduced deck of ``tricks`` tricks (R2.3) drawn with ``rng``."""
        return cls(random_hands(rng, tricks), leader, num_players)

    def clone(self) -> "ReducedState":
        s = _Rules.clone(self)
        s.num_tricks = self.num_tricks
        s.deck = self.deck
        return s

    @property
    def done(self) -> bool:
        """True once all ``num_tricks`` tricks are played."""
        return self.trick == self.num_tricks

    def _resolve(self) -> None:
        """The full deck's trick resolution (R4.1-R4.3); then a Purgatory in the last
        trick, ``num_tricks``, leaves the pending pile neutral (R4.4)."""
        _Rules._resolve(self)
        if self.trick == self.num_tricks and self.pending:
            self.neutral |= self.pending
            self.pending = 0

    def _illegal(self, action) -> str:
        if self.trick == self.num_tricks:
            return f"the deal is over: no action is legal (got {action!r})"
        return _Rules._illegal(self, action)

    def __reduce__(self):
        fields = {f: getattr(self, f) for f in _FIELDS + self.__slots__ if hasattr(self, f)}
        return _rebuild, (self.__class__, fields)


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


def validate_deal(deal: Sequence[Sequence[str | int]], tricks: int = NUM_TRICKS) -> tuple[int, int, int, int]:
    """Check an explicit deal and return its 4 hand masks.

    Args:
        deal: four hands by seat, each 7 card codes (``"SC1"``) or ids.
        tricks: 1..7; fewer than 7 checks a deal of the reduced deck of that many tricks
            (:func:`~twilight_env.rules.cards.deck_mask`): hands of ``tricks`` cards.

    Raises:
        ValueError: saying what is wrong (not 4 hands, a hand not of 7, an unknown card,
            a card twice, a card missing, a card not in the reduced deck).
    """
    if tricks != NUM_TRICKS:
        return _validate_reduced(deal, tricks)
    if isinstance(deal, (str, bytes)) or not hasattr(deal, "__len__") or len(deal) != NUM_SEATS:
        raise ValueError(f"a deal must be 4 hands (one per seat) of 7 cards, got {deal!r}")
    masks = []
    seen: dict[int, int] = {}
    for seat, hand in enumerate(deal):
        if isinstance(hand, (str, bytes)) or not hasattr(hand, "__len__"):
            raise ValueError(f"hand of seat {seat} must be a list of 7 card codes, got {hand!r}")
        if len(hand) != HAND_SIZE:
            raise ValueError(f"hand of seat {seat} has {len(hand)} cards; each hand must have 7")
        m = 0
        for c in hand:
            try:
                i = card_id(c) if isinstance(c, str) else _check_id(c)
            except ValueError as e:
                raise ValueError(f"hand of seat {seat}: {e}") from None
            if i in seen:
                raise ValueError(f"card {CARDS[i]} is dealt twice (seats {seen[i]} and {seat})")
            seen[i] = seat
            m |= 1 << i
        masks.append(m)
    return tuple(masks)


def _validate_reduced(deal, tricks: int) -> tuple[int, int, int, int]:
    """:func:`validate_deal` for a reduced deck of ``tricks`` tricks."""
    deck = deck_mask(tricks)
    if isinstance(deal, (str, bytes)) or not hasattr(deal, "__len__") or len(deal) != NUM_SEATS:
        raise ValueError(f"a deal must be 4 hands (one per seat) of {tricks} cards, got {deal!r}")
    masks = []
    for seat, hand in enumerate(deal):
        if isinstance(hand, (str, bytes)) or not hasattr(hand, "__len__") or len(hand) != tricks:
            raise ValueError(f"hand of seat {seat} must be a list of {tricks} card codes (a deal of {tricks} "
                             f"tricks), got {hand!r}")
        m = 0
        for c in hand:
            try:
                i = card_id(c) if isinstance(c, str) else _check_id(c)
            except ValueError as e:
                raise ValueError(f"hand of seat {seat}: {e}") from None
            if not deck >> i & 1:
                raise ValueError(f"card {CARDS[i]} is not in the deck of {tricks} tricks; its cards: "
                                 f"{' '.join(codes_of(deck))}")
            if m >> i & 1 or any(x >> i & 1 for x in masks):
                raise ValueError(f"card {CARDS[i]} is dealt twice")
            m |= 1 << i
        masks.append(m)
    return tuple(masks)


def _check_id(c) -> int:
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 <= c < NUM_CARDS:
        raise ValueError(f"unknown card {c!r}; use a code of twilight_env.rules.cards.CARDS or an id 0..27")
    return int(c)


def random_hands(rng: np.random.Generator, tricks: int = NUM_TRICKS) -> tuple[int, int, int, int]:
    """Four 7-card hand masks of a uniformly shuffled deck (R2.3).

    With ``tricks`` < 7: four hands of ``tricks`` cards of the reduced deck
    (:func:`~twilight_env.rules.cards.deck_mask`), uniformly shuffled.

    Raises:
        TypeError: if ``rng`` is not a ``numpy.random.Generator``.
        ValueError: if ``tricks`` is not an int 1..7.
    """
    if rng.__class__ is not np.random.Generator and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
                        f"got {type(rng).__name__}")
    if tricks != NUM_TRICKS:
        ids = [i for i in _DECK if deck_mask(tricks) >> i & 1]
        rng.shuffle(ids)
        return tuple(sum(1 << c for c in ids[tricks * s:tricks * s + tricks]) for s in range(NUM_SEATS))
    # ``rng.shuffle`` of a list draws exactly as ``rng.permutation(28)`` does (the same
    # Fisher-Yates steps), so a seed gives the same deal either way; it skips the array.
    p = list(_DECK)
    rng.shuffle(p)
    b = _BIT  # distinct cards: + is |
    return (b[p[0]] + b[p[1]] + b[p[2]] + b[p[3]] + b[p[4]] + b[p[5]] + b[p[6]],
            b[p[7]] + b[p[8]] + b[p[9]] + b[p[10]] + b[p[11]] + b[p[12]] + b[p[13]],
            b[p[14]] + b[p[15]] + b[p[16]] + b[p[17]] + b[p[18]] + b[p[19]] + b[p[20]],
            b[p[21]] + b[p[22]] + b[p[23]] + b[p[24]] + b[p[25]] + b[p[26]] + b[p[27]])


def held_mask(hands: Sequence[int]) -> int:
    """8-bit mask, bit ``4 * cult + seat`` set when ``hands[seat]`` holds a card of ``cult``."""
    h0, h1, h2, h3 = hands
    return ((h0 & SUN_MASK != 0) | (h1 & SUN_MASK != 0) << 1 | (h2 & SUN_MASK != 0) << 2
            | (h3 & SUN_MASK != 0) << 3 | (h0 >> 14 != 0) << 4 | (h1 >> 14 != 0) << 5
            | (h2 >> 14 != 0) << 6 | (h3 >> 14 != 0) << 7)


def _check_players(num_players) -> int:
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
            or num_players not in (3, 4):
        raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
    return int(num_players)


def _check_leader(leader) -> int:
    if isinstance(leader, bool) or not isinstance(leader, (int, np.integer)) or not 0 <= leader < 4:
        raise ValueError(f"leader must be a seat 0..3, got {leader!r}")
    return int(leader)


def hands_to_codes(hands: Sequence[int]) -> list[list[str]]:
    """Card codes of 4 hand masks, by seat."""
    return [codes_of(h) for h in hands]


# ---------------------------------------------------------------------------------
# Matches (R2.4, R6, R7.4-R7.6, R8)
# ---------------------------------------------------------------------------------

def fixed_solo_scores_problem(config: Config, solo: int, totals: Sequence[int]) -> str | None:
    """Why ``totals`` cannot start a ``fixed_solo`` match with ``solo``, or None if they can.

    Under ``fixed_solo`` with ``"team"`` scoring (R7.6, R7.5) the two Sun players form one
    side: every deal credits both with the same Sun score, and the match reads one total
    for the side. Their two score lines must therefore start equal; unequal totals would
    make the side's total depend on which line is read.

    Args:
        config: the match rules; only 3 players, ``fixed_solo``, ``"team"`` scoring is checked.
        solo: the solo player 0..2.
        totals: starting totals by score line (players 0..2).
    """
    if config.num_players != 3 or not config.fixed_solo or config.three_player_scoring != "team":
        return None
    a, b = [p for p in range(3) if p != solo]
    if totals[a] == totals[b]:
        return None
    return (f"under fixed_solo the two Sun players share one score line (R7.6, R7.5), so their starting "
            f"totals must be equal; got player {a}: {totals[a]} and player {b}: {totals[b]} "
            f"(solo: player {solo})")


class Match:
    """A match: deals until the target (R6, R7.5), with dealer or solo rotation.

    Score lines (``totals``, a list of ints):
        4 players: one per side, index 0 = Sun (seats 0, 2), 1 = Moon (seats 1, 3).
        3 players, ``"team"``: one per player 0..2 (R7.5).
        3 players, ``"individual"``: one per player 0..2 plus index 3, the new-moon line (R8).

    Starting totals (``scores``): any non-negative ints by line; under 3-player
    ``fixed_solo`` (team scoring) the two Sun players' totals must be equal, since they
    share one score line (R7.6, R7.5; :func:`fixed_solo_scores_problem`).

    Raises:
        ValueError: (constructor) on malformed ``scores``, ``dealer`` or ``solo``, unequal
            Sun starting totals under ``fixed_solo``, or a random deal without ``rng``.

    Attributes:
        config: the :class:`Config`.
        totals: running totals by line (see above).
        dealer: 4 players: the dealer's seat of the current deal.
        solo: 3 players: the solo player (0..2) of the current deal.
        state: the current deal :class:`State`.
        deals_played: finished deals.
        done: True when the match is decided.
        winners: lines that won (empty until done).
        last_deal_points: deal points by line of the last finished deal.
    """

    def __init__(self, config: Config, rng: np.random.Generator | None = None, *,
                 deal: Sequence[Sequence[str]] | None = None, dealer: int | None = None,
                 solo: int | None = None, scores: Sequence[int] | None = None):
        self.config = config
        self.num_lines = 2 if config.num_players == 4 else (4 if config.three_player_scoring == "individual" else 3)
        if scores is None:
            self.totals = [0] * self.num_lines
        else:
            if len(scores) != self.num_lines or not all(
                    isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in scores):
                raise ValueError(f"scores must be {self.num_lines} ints ({self.line_names()}), got {scores!r}")
            self.totals = [int(x) for x in scores]
        if config.num_players == 4:
            if solo is not None:
                raise ValueError("solo is only for 3 players")
            if dealer is None:
                dealer = 3  # seat 0 leads the first deal
            if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < 4:
                raise ValueError(f"dealer must be a seat 0..3, got {dealer!r}")
            self.dealer = int(dealer)
            self.solo = -1
        else:
            if dealer is not None:
                raise ValueError("dealer is only for 4 players; in 3 players give solo")
            if solo is None:
                solo = 0
            if isinstance(solo, bool) or not isinstance(solo, (int, np.integer)) or not 0 <= solo < 3:
                raise ValueError(f"solo must be a player 0..2, got {solo!r}")
            self.solo = int(solo)
            self.dealer = -1
            why = fixed_solo_scores_problem(config, self.solo, self.totals)
            if why is not None:
                raise ValueError(f"scores: {why}")
        self.deals_played = 0
        self.done = False
        self.winners: tuple[int, ...] = ()
        self.last_deal_points = [0] * self.num_lines
        self._start_deal(rng, deal)

    def line_names(self) -> list[str]:
        """Names of the score lines: ``["sun", "moon"]`` or ``["player 0", ..., "new moon"]``."""
        if self.config.num_players == 4:
            return ["sun", "moon"]
        return [f"player {i}" for i in range(3)] + (["new moon"] if self.num_lines == 4 else [])

    # players <-> seats in 3 players (R7.4)
    def seat_of_player(self, player: int) -> int:
        """Seat of a player in the current deal (4p: the same; 3p: solo 0, left 1, right 3)."""
        if self.config.num_players == 4:
            return player
        return (0, 1, 3)[(player - self.solo) % 3]

    def player_of_seat(self, seat: int) -> int:
        """Player at a seat in the current deal; 3 players: the new moon (2) maps to the solo."""
        if self.config.num_players == 4:
            return seat
        return (self.solo + (0, 1, 0, 2)[seat]) % 3

    def _start_deal(self, rng, deal) -> None:
        leader = (self.dealer + 1) % 4 if self.config.num_players == 4 else 0
        if deal is None and rng is None:
            raise ValueError("a random deal needs a numpy.random.Generator")
        tricks = self.config.tricks
        if tricks != NUM_TRICKS:
            if deal is not None:
                self.state = ReducedState.from_deal(deal, leader, self.config.num_players, tricks)
            else:
                self.state = ReducedState.random(rng, leader, self.config.num_players, tricks)
        elif deal is not None:
            self.state = State.from_deal(deal, leader, self.config.num_players)
        else:
            self.state = State.random(rng, leader, self.config.num_players)

    def deal_points(self) -> list[int]:
        """Deal points by score line of the finished current deal (R5, R7.5, R8)."""
        st = self.state
        s0, s1 = st.side_scores()
        if self.config.num_players == 4:
            return [s0, s1]  # side 0 is Sun
        if self.num_lines == 3:
            pts = [s1] * 3  # Sun side's score for the two Sun players
            pts[self.solo] = s0
            return pts
        seat = st.seat_scores()
        pts = [0, 0, 0, seat[NEW_MOON]]
        for p in range(3):
            pts[p] = seat[self.seat_of_player(p)]
        return pts

    def finish_deal(self) -> None:
        """Credit the finished deal and decide the match (R6, R7.5); call once per deal."""
        if not self.state.done:
            raise ValueError("the current deal is not finished")
        pts = self.deal_points()
        self.last_deal_points = pts
        for i, p in enumerate(pts):
            self.totals[i] += p
        self.deals_played += 1
        self.winners = self._decide()
        self.done = bool(self.winners)

    def next_deal(self, rng: np.random.Generator | None, deal=None) -> None:
        """Rotate dealer (R2.4) or solo (R7.4, unless ``fixed_solo``) and deal again."""
        if self.done:
            raise ValueError("the match is over")
        if self.config.num_players == 4:
            self.dealer = (self.dealer + 1) % 4
        elif not self.config.fixed_solo:
            self.solo = (self.solo + 2) % 3
        self._start_deal(rng, deal)

    def _groups(self) -> list[list[int]]:
        """Competing parties as groups of lines (3p fixed_solo: solo vs the two Sun players)."""
        if self.config.num_players == 3 and self.config.fixed_solo and self.num_lines == 3:
            return [[self.solo], [p for p in range(3) if p != self.solo]]
        return [[i] for i in range(self.num_lines)]

    def _decide(self) -> tuple[int, ...]:
        groups = self._groups()
        # one total per group: the lines of a group are equal (the fixed_solo Sun lines start
        # equal, fixed_solo_scores_problem, and every deal credits both the same)
        tot = [self.totals[g[0]] for g in groups]
        target = self.config.target
        if self.config.goals_333:
            for goal in GOALS_333:
                if goal >= target:
                    break
                hit = [i for i, t in enumerate(tot) if t == goal]
                if len(hit) == 1:
                    return tuple(groups[hit[0]])
                if hit:
                    return ()  # tie on the same goal: play on (R9)
        over = [i for i, t in enumerate(tot) if t >= target]
        if not over:
            return ()
        best = max(tot)
        top = [i for i, t in enumerate(tot) if t == best]
        if len(top) > 1:
            return ()  # tie: play on (R6.1)
        return tuple(groups[top[0]])
