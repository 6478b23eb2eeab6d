"""The rules of Twilight (docs/RULES.md, R1-R9) written plainly: the specification.

This module states every rule once, in the words of the rulebook, with card codes
(``"SC1"``, ``"M5"``) and plain sets and lists. It is slow on purpose: nothing is
precomputed, nothing is packed into bits. The engine (:mod:`twilight_env.rules.engine`)
is the fast implementation every other module uses; it and every faster copy of a rule
(the C core, the batch engine, the solvers, the compiled rollout and search, the edge
study's match simulators, the observation encoders) are played against this module by
one parity harness, ``tests/rules/test_parity.py``.

Standard library only. Every function names the rule it implements.

Contents:

- cards (R1): :data:`CARDS`, :func:`cult_of`, :func:`strength`, :func:`souls`,
  :func:`multiplier`;
- seats and the deal (R2, R7.1, R7.2): :func:`seat_cults`, :func:`deal`,
  :func:`first_leader`;
- one deal, trick by trick (R3, R4, R7.3): :class:`Deal`, :func:`best_place`;
- the deal score (R5, R8): :func:`deal_score`;
- matches (R6, R7.4-R7.6, R8): :func:`solo_of_deal`, :func:`seat_of_player`,
  :func:`deal_points`, :func:`parties`, :func:`match_winner`, :class:`MatchScore`;
- the value of a position under perfect play (for the solvers): :func:`minimax_value`.

Actions use the encoding of ``docs/API.md`` (section Actions): 0..27 plays the card of
that canonical id (R1) from the acting hand; 28, 29, 30 request the seat 1, 2, 3 places
after the chooser (R3.2).
"""

from __future__ import annotations

import random

# ---------------------------------------------------------------------------------
# R1. Cards
# ---------------------------------------------------------------------------------

KINDS = ("P", "C1", "C2", "C3", "C4", "C5", "3", "4", "5", "6", "7", "A", "T", "O")
"""R1: the 14 kinds of one cult, in canonical order: Purgatory, the clerics I..V, the
soul cards 3..7, the sanctuaries Altar, Temple, Obelisk."""

CARDS = tuple(cult + kind for cult in ("S", "M") for kind in KINDS)
"""R1: the 28 card codes by canonical id: Sun 0..13 (``"SP"`` .. ``"SO"``), Moon 14..27."""

SUN, MOON = "S", "M"
"""R1: the two cults, by the letter on the card back."""


def cult_of(card: str) -> str:
    """R1: the cult letter of a card, ``"S"`` or ``"M"``."""
    return card[0]


def kind_of(card: str) -> str:
    """R1: the kind code of a card (``"P"``, ``"C1"`` .. ``"C5"``, ``"3"`` .. ``"7"``,
    ``"A"``, ``"T"``, ``"O"``)."""
    return card[1:]


def strength(card: str) -> int:
    """R1, R4.1: trick strength. Purgatory is highest; then the clerics I > II > III >
    IV > V; then all soul cards, equal; then all sanctuaries, equal, lowest. Cult plays
    no part. Returned as a rank: Purgatory 7, clerics 6..2, souls 1, sanctuaries 0."""
    kind = kind_of(card)
    if kind == "P":
        return 7
    if kind.startswith("C"):
        return 7 - int(kind[1])  # C1 6, C2 5, ..., C5 2
    if kind.isdigit():
        return 1
    return 0


def souls(card: str) -> int:
    """R1, R5.1: souls counted when scored: a soul card its number, a cleric 1, Purgatory
    and sanctuaries 0."""
    kind = kind_of(card)
    if kind.isdigit():
        return int(kind)
    if kind.startswith("C"):
        return 1
    return 0


def multiplier(card: str) -> int:
    """R1, R5.2: the multiplier of a sanctuary (Altar 1, Temple 2, Obelisk 3); 0 for any
    other card."""
    return {"A": 1, "T": 2, "O": 3}.get(kind_of(card), 0)


def card_id(card: str) -> int:
    """R1: the canonical id 0..27 of a card code.

    Raises:
        ValueError: if ``card`` is not one of :data:`CARDS`.
    """
    if card not in CARDS:
        raise ValueError(f"unknown card {card!r}; the cards are {' '.join(CARDS)}")
    return CARDS.index(card)


# ---------------------------------------------------------------------------------
# R2, R7.1, R7.2. Seats, sides and the deal
# ---------------------------------------------------------------------------------

def seat_cults(num_players: int) -> tuple[str, str, str, str]:
    """The cult of seats 0..3. 4 players (R2.1): seats 0 and 2 are Sun, 1 and 3 Moon.
    3 players (R7.1, R7.2): seat 0 is the solo (Moon), seat 2 the new moon (Moon, the
    solo's second hand), seats 1 and 3 the Sun players.

    Raises:
        ValueError: unless ``num_players`` is 3 or 4.
    """
    if num_players == 4:
        return (SUN, MOON, SUN, MOON)
    if num_players == 3:
        return (MOON, SUN, MOON, SUN)
    raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")


def side_of(seat: int) -> int:
    """R2.1: partners sit opposite, so seats 0 and 2 form side 0, seats 1 and 3 side 1
    (in 3 players side 0 is the solo with the new moon, R7.1)."""
    return seat % 2


def deal(rng: random.Random) -> list[list[str]]:
    """R2.3: shuffle all 28 cards and deal 7 to each seat, 0..3.

    Args:
        rng: a ``random.Random``.

    Returns:
        four lists of 7 card codes, by seat.
    """
    deck = list(CARDS)
    rng.shuffle(deck)
    return [deck[7 * seat: 7 * seat + 7] for seat in range(4)]


def first_leader(num_players: int, dealer: int = 3) -> int:
    """Who leads the first trick: in 4 players the seat left of the dealer (R2.4); in 3
    players the solo, seat 0 (R7.2)."""
    return (dealer + 1) % 4 if num_players == 4 else 0


# ---------------------------------------------------------------------------------
# R3, R4, R7.3. One deal
# ---------------------------------------------------------------------------------

def best_place(cards: list[str]) -> int:
    """R4.1: the place (0-based) of the card that takes a trick, or of the best card so
    far in a trick not yet full: the highest strength; among equals the one played first.

    Raises:
        ValueError: on an empty list.
    """
    if not cards:
        raise ValueError("best_place needs at least one card")
    best = 0
    for place in range(1, len(cards)):
        if strength(cards[place]) > strength(cards[best]):  # strictly higher: ties go to the earlier card
            best = place
    return best


class Deal:
    """One deal played by the rules (R3, R4, R7.1-R7.3).

    Args:
        hands: four hands of card codes, by seat (any sizes: a position may be built
            mid-deal by :meth:`play` from the deal's start only, so give the dealt hands).
        leader: the seat that leads the first trick (R2.4, R7.2).
        num_players: 4 or 3.

    Attributes:
        hands: four sets of card codes.
        cults: the cult of each seat (:func:`seat_cults`).
        leader: the seat leading the current trick.
        tricks_done: tricks finished, 0..7.
        places: the current trick so far, a list of ``(chooser, holder, card)``.
        requested: the seat asked for a card in this place (the holder), or None.
        pending: the pending pile of Purgatory tricks (R4.3), a list of codes.
        taken: the cards each seat took, four lists of codes (R4.2).
        neutral: the cards left to nobody by a last-trick Purgatory (R4.4).
        history: every card played, ``(chooser, holder, card)`` in order.

    Raises:
        ValueError: on a bad ``leader`` or ``num_players``.
    """

    def __init__(self, hands: list[list[str]], leader: int, num_players: int = 4):
        if leader not in (0, 1, 2, 3):
            raise ValueError(f"leader must be a seat 0..3, got {leader!r}")
        self.cults = seat_cults(num_players)
        self.num_players = num_players
        self.hands = [set(hand) for hand in hands]
        self.leader = leader
        self.tricks_done = 0
        self.places: list[tuple[int, int, str]] = []
        self.requested: int | None = None
        self.pending: list[str] = []
        self.taken: list[list[str]] = [[], [], [], []]
        self.neutral: list[str] = []
        self.history: list[tuple[int, int, str]] = []

    def copy(self) -> "Deal":
        """An independent copy."""
        other = Deal.__new__(Deal)
        other.cults = self.cults
        other.num_players = self.num_players
        other.hands = [set(hand) for hand in self.hands]
        other.leader = self.leader
        other.tricks_done = self.tricks_done
        other.places = list(self.places)
        other.requested = self.requested
        other.pending = list(self.pending)
        other.taken = [list(cards) for cards in self.taken]
        other.neutral = list(self.neutral)
        other.history = list(self.history)
        return other

    # -- who acts -----------------------------------------------------------------
    @property
    def done(self) -> bool:
        """The deal is over after 7 tricks (R2.3: 28 cards, 4 per trick)."""
        return self.tricks_done == 7

    def chooser(self) -> int:
        """R3.1: the chooser of place k is seat (leader + k) mod 4."""
        return (self.leader + len(self.places)) % 4

    def acting_seat(self) -> int:
        """The seat the next action is about: the requested holder, else the chooser (R3.2)."""
        return self.chooser() if self.requested is None else self.requested

    def deciding_seat(self) -> int:
        """The seat that decides the next action: the acting seat, except that in 3
        players the solo (seat 0) decides for the new moon (seat 2) (R7.3)."""
        seat = self.acting_seat()
        if self.num_players == 3 and seat == 2:
            return 0
        return seat

    def card_backs(self) -> list[tuple[int, int]]:
        """R2.5: what is public about every hand: how many Sun and how many Moon cards it
        holds, ``(sun, moon)`` by seat."""
        return [(sum(cult_of(c) == SUN for c in hand), sum(cult_of(c) == MOON for c in hand)) for hand in self.hands]

    # -- what is legal --------------------------------------------------------------
    def legal_actions(self) -> list[int]:
        """The legal actions, sorted (R3.2, R3.5); empty once the deal is over.

        The chooser plays a card of its own cult from its own hand, or requests another
        seat that holds a card of the chooser's cult (R3.2, R3.5). A requested holder
        plays any card of the chooser's cult from its own hand (R3.2). In 3 players the
        solo decides for the new moon, from the same choices (R7.3).
        """
        if self.done:
            return []
        chooser = self.chooser()
        cult = self.cults[chooser]
        if self.requested is not None:
            return sorted(card_id(c) for c in self.hands[self.requested] if cult_of(c) == cult)
        actions = [card_id(c) for c in self.hands[chooser] if cult_of(c) == cult]
        for offset in (1, 2, 3):
            other = (chooser + offset) % 4
            if any(cult_of(c) == cult for c in self.hands[other]):
                actions.append(27 + offset)
        return sorted(actions)

    # -- playing --------------------------------------------------------------------
    def play(self, action: int) -> None:
        """Take one action (R3.2-R4.4).

        Raises:
            ValueError: if ``action`` is not legal now, naming the legal ones.
        """
        legal = self.legal_actions()
        if action not in legal:
            raise ValueError(f"illegal action {action!r}; legal now: {legal}")
        chooser = self.chooser()
        if action >= 28:  # R3.2 (b): request the seat at offset 1..3
            self.requested = (chooser + action - 27) % 4
            return
        holder = chooser if self.requested is None else self.requested
        card = CARDS[action]
        self.hands[holder].remove(card)
        self.places.append((chooser, holder, card))  # R3.3: the card counts as the chooser's
        self.history.append((chooser, holder, card))
        self.requested = None
        if len(self.places) == 4:
            self._finish_trick()

    def _finish_trick(self) -> None:
        """R4.1-R4.4: who takes the full trick, and who leads the next one."""
        cards = [card for _, _, card in self.places]
        purgatory_places = [p for p, card in enumerate(cards) if kind_of(card) == "P"]
        if purgatory_places:
            # R4.3: nobody takes it now; its cards join the pending pile, and the seat for
            # which the first Purgatory was played leads next.
            self.pending += cards
            self.leader = self.places[purgatory_places[0]][0]
            if self.tricks_done == 6:
                # R4.4: a Purgatory in the last trick leaves the pile neutral.
                self.neutral += self.pending
                self.pending = []
        else:
            # R4.1, R4.2: the best card's chooser takes the trick, and the pending pile
            # with it (R4.3), and leads next.
            taker = self.places[best_place(cards)][0]
            self.taken[taker] += cards + self.pending
            self.pending = []
            self.leader = taker
        self.tricks_done += 1
        self.places = []

    # -- scores ---------------------------------------------------------------------
    def side_scores(self) -> tuple[int, int]:
        """R5: the deal score of side 0 (seats 0, 2) and side 1 (seats 1, 3), each from the
        tricks its two seats took, with its own cult's sanctuaries."""
        side0 = self.taken[0] + self.taken[2]
        side1 = self.taken[1] + self.taken[3]
        return deal_score(side0, self.cults[0]), deal_score(side1, self.cults[1])

    def seat_scores(self) -> tuple[int, int, int, int]:
        """R8 ``individual``: each seat's score from only the tricks it took."""
        return tuple(deal_score(self.taken[seat], self.cults[seat]) for seat in range(4))


def replay(hands: list[list[str]], leader: int, num_players: int, actions) -> Deal:
    """A :class:`Deal` with ``actions`` played from the deal's start.

    Raises:
        ValueError: on the first illegal action.
    """
    d = Deal(hands, leader, num_players)
    for action in actions:
        d.play(action)
    return d


# ---------------------------------------------------------------------------------
# R5. The deal score
# ---------------------------------------------------------------------------------

def deal_score(cards, cult: str) -> int:
    """R5.1-R5.3: souls of every card a side took (either cult) times the multipliers of
    the sanctuaries of its own cult among them. R5.4:
    ``deal_score(["S7","M3","SO","MT","SC4","M4","SC1","MC5"], "S") == 51``."""
    total_souls = sum(souls(card) for card in cards)
    total_multiplier = sum(multiplier(card) for card in cards if cult_of(card) == cult)
    return total_souls * total_multiplier


# ---------------------------------------------------------------------------------
# Perfect play (the value the solvers compute)
# ---------------------------------------------------------------------------------

def minimax_value(d: Deal) -> int:
    """Side 0's deal score minus side 1's under perfect play by both sides with every card
    seen: the side of the acting seat (the chooser, or the requested holder, R3.2)
    picks the action best for it. Exponential: a few tricks left only."""
    if d.done:
        a, b = d.side_scores()
        return a - b
    values = []
    for action in d.legal_actions():
        child = d.copy()
        child.play(action)
        values.append(minimax_value(child))
    return max(values) if side_of(d.acting_seat()) == 0 else min(values)


def action_values(d: Deal) -> dict[int, int]:
    """:func:`minimax_value` after each legal action."""
    out = {}
    for action in d.legal_actions():
        child = d.copy()
        child.play(action)
        out[action] = minimax_value(child)
    return out


# ---------------------------------------------------------------------------------
# R6, R7.4-R7.6, R8. Matches
# ---------------------------------------------------------------------------------

GOALS_333 = (333, 666, 999)
"""R6.2: the exact totals that also end a match under ``goals_333``, in the order they
win."""


def solo_of_deal(k: int, first_solo: int = 0, fixed_solo: bool = False) -> int:
    """R7.4: the solo of deal k (0-based) of a 3-player match. The role passes to the
    player on the previous solo's right: players p0, p1, p2 seated in play order, p0
    first, the solos are p0, p2, p1, p0, ... R7.6 ``fixed_solo``: always the first."""
    if fixed_solo:
        return first_solo
    return (first_solo - k) % 3


def seat_of_player(player: int, solo: int) -> int:
    """R7.4: a player's seat in a 3-player deal with solo ``solo``: the play order is
    solo, (solo+1) mod 3, new moon, (solo+2) mod 3, so the solo sits at seat 0, the next
    player at seat 1, the new moon at seat 2 and the last player at seat 3."""
    return {0: 0, 1: 1, 2: 3}[(player - solo) % 3]


def score_lines(num_players: int, scoring: str = "team") -> int:
    """How many totals a match keeps: 4 players, one per side (R6.1); 3 players, one per
    player (R7.5); R8 ``individual``: the three players and the new moon."""
    if num_players == 4:
        return 2
    return 4 if scoring == "individual" else 3


def deal_points(num_players: int, side_scores: tuple[int, int], seat_scores=None, solo: int = 0,
                scoring: str = "team") -> list[int]:
    """The points of one deal by score line.

    4 players (R6.1): line 0 the Sun side (seats 0, 2), line 1 the Moon side.
    3 players, team (R7.5): the solo gets the Moon side's score (its tricks and the new
    moon's together, side 0), each Sun player the Sun side's score (side 1).
    3 players, R8 ``individual``: every player its own seat's score, and line 3 the new
    moon's.
    """
    if num_players == 4:
        return [side_scores[0], side_scores[1]]
    if scoring == "team":
        return [side_scores[0] if player == solo else side_scores[1] for player in range(3)]
    return [seat_scores[seat_of_player(player, solo)] for player in range(3)] + [seat_scores[2]]


def parties(num_players: int, scoring: str = "team", fixed_solo: bool = False, solo: int = 0) -> list[list[int]]:
    """Who competes, as groups of score lines. R7.6 with team scoring: the solo against
    the two Sun players together (one side, their lines always equal). Otherwise every
    line for itself (4 players: the two sides; R7.5; R8)."""
    if num_players == 3 and fixed_solo and scoring == "team":
        return [[solo], [p for p in range(3) if p != solo]]
    return [[line] for line in range(score_lines(num_players, scoring))]


def match_winner(totals: list[int], target: int = 1000, goals_333: bool = False) -> int | None:
    """The index of the party that has won, or None while the match goes on.

    R6.1, R7.5: once some total is at least the target, the strictly highest total wins;
    a tie for the highest plays another deal (R9).
    R6.2 ``goals_333``: first, the goals 333, 666, 999 below the target, in that order: a
    goal reached exactly by one party wins; reached by several, the match plays on.
    """
    if goals_333:
        for goal in GOALS_333:
            if goal >= target:
                break
            on_goal = [i for i, total in enumerate(totals) if total == goal]
            if len(on_goal) == 1:
                return on_goal[0]
            if len(on_goal) > 1:
                return None
    if max(totals) < target:
        return None
    top = [i for i, total in enumerate(totals) if total == max(totals)]
    return top[0] if len(top) == 1 else None


class MatchScore:
    """The running score of a match, deal by deal (R6, R7.4-R7.6, R8).

    Args:
        num_players: 4 or 3.
        target: the match target (R6.1, R8 ``target=N``).
        goals_333: the R6.2 variant.
        scoring: 3 players: ``"team"`` (R7.5) or ``"individual"`` (R8).
        fixed_solo: 3 players: the same player is solo every deal (R7.6).
        first_solo: 3 players: the solo of the first deal.
        dealer: 4 players: the dealer of the first deal (R2.4).
        totals: the starting totals by score line (default all 0).

    Attributes:
        totals: one total per score line (:func:`score_lines`).
        deals: deals finished.
        winners: the winning party's lines once the match is decided, else ``()``.
    """

    def __init__(self, num_players: int = 4, target: int = 1000, goals_333: bool = False, scoring: str = "team",
                 fixed_solo: bool = False, first_solo: int = 0, dealer: int = 3, totals=None):
        self.num_players = num_players
        self.target = target
        self.goals_333 = goals_333
        self.scoring = scoring
        self.fixed_solo = fixed_solo
        self.first_solo = first_solo
        self.first_dealer = dealer
        self.totals = [0] * score_lines(num_players, scoring) if totals is None else list(totals)
        self.deals = 0
        self.winners: tuple[int, ...] = ()

    @property
    def solo(self) -> int:
        """3 players: the solo of the current deal (R7.4, R7.6)."""
        return solo_of_deal(self.deals, self.first_solo, self.fixed_solo)

    @property
    def dealer(self) -> int:
        """4 players: the dealer of the current deal; the role passes left (R2.4)."""
        return (self.first_dealer + self.deals) % 4

    @property
    def leader(self) -> int:
        """The seat that leads the current deal's first trick (R2.4, R7.2)."""
        return first_leader(self.num_players, self.dealer)

    def add_deal(self, side_scores: tuple[int, int], seat_scores=None) -> tuple[int, ...]:
        """Credit one finished deal (:func:`deal_points`) and decide (:func:`match_winner`).

        Returns:
            the winning party's lines, or ``()`` while the match goes on.

        Raises:
            ValueError: if the match is already decided.
        """
        if self.winners:
            raise ValueError("the match is over")
        points = deal_points(self.num_players, side_scores, seat_scores, self.solo, self.scoring)
        for line, p in enumerate(points):
            self.totals[line] += p
        groups = parties(self.num_players, self.scoring, self.fixed_solo, self.solo)
        winner = match_winner([self.totals[g[0]] for g in groups], self.target, self.goals_333)
        self.deals += 1
        if winner is not None:
            self.winners = tuple(groups[winner])
        return self.winners
