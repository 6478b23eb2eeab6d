"""A slow, plain reference of the deal rules (R3-R5, R7.1), written straight from
RULES.md with sets of card codes and no engine tables. Property tests play random deals
through both this and the engine and compare them action by action.
"""

from __future__ import annotations

KIND_STRENGTH = {"P": 7, "C1": 6, "C2": 5, "C3": 4, "C4": 3, "C5": 2,
                 "3": 1, "4": 1, "5": 1, "6": 1, "7": 1, "A": 0, "T": 0, "O": 0}
SANCTUARY_MULTIPLIER = {"A": 1, "T": 2, "O": 3}
ALL_CODES = [cult + kind for cult in "SM" for kind in KIND_STRENGTH]


def strength(code: str) -> int:
    return KIND_STRENGTH[code[1:]]


def souls(code: str) -> int:
    """R5.1: soul cards their number, clerics 1, Purgatory and sanctuaries 0."""
    kind = code[1:]
    if kind.isdigit():
        return int(kind)
    return 1 if kind.startswith("C") else 0


def deal_score(cards, cult_letter: str) -> int:
    """R5.1-R5.3: souls of all cards × multipliers of own-cult sanctuaries."""
    mult = sum(SANCTUARY_MULTIPLIER.get(c[1:], 0) for c in cards if c[0] == cult_letter)
    return sum(souls(c) for c in cards) * mult


class ReferenceDeal:
    """One deal by the rules, in card codes. Actions use the encoding of docs/API.md, Actions."""

    def __init__(self, hands: list[list[str]], leader: int, num_players: int = 4):
        self.hands = [set(h) for h in hands]
        self.cult = ["S", "M", "S", "M"] if num_players == 4 else ["M", "S", "M", "S"]
        self.leader = leader
        self.tricks_done = 0
        self.places: list[tuple[int, int, str]] = []  # (chooser, holder, card) this trick
        self.requested: int | None = None
        self.pending: list[str] = []
        self.taken: list[list[str]] = [[], [], [], []]
        self.neutral: list[str] = []

    @property
    def done(self) -> bool:
        return self.tricks_done == 7

    def chooser(self) -> int:
        return (self.leader + len(self.places)) % 4  # R3.1

    def legal(self) -> set[int]:
        """R3.2, R3.5: own-cult card, or request a seat holding the chooser's cult."""
        if self.done:
            return set()
        c = self.chooser()
        cult = self.cult[c]
        if self.requested is not None:
            return {ALL_CODES.index(x) for x in self.hands[self.requested] if x[0] == cult}
        acts = {ALL_CODES.index(x) for x in self.hands[c] if x[0] == cult}
        for offset in (1, 2, 3):
            if any(x[0] == cult for x in self.hands[(c + offset) % 4]):
                acts.add(27 + offset)
        return acts

    def step(self, action: int) -> None:
        assert action in self.legal(), (action, self.legal())
        c = self.chooser()
        if action >= 28:
            self.requested = (c + action - 27) % 4
            return
        holder = c if self.requested is None else self.requested
        card = ALL_CODES[action]
        self.hands[holder].remove(card)
        self.places.append((c, holder, card))  # the card counts as the chooser's (R3.3)
        self.requested = None
        if len(self.places) == 4:
            self._finish_trick()

    def _finish_trick(self) -> None:
        cards = [p[2] for p in self.places]
        purgatories = [i for i, x in enumerate(cards) if x[1:] == "P"]
        if purgatories:  # R4.3
            self.pending += cards
            self.leader = self.places[purgatories[0]][0]
            if self.tricks_done == 6:  # R4.4
                self.neutral += self.pending
                self.pending = []
        else:  # R4.1, R4.2: highest strength, the first of equals
            best = 0
            for i in range(1, 4):
                if strength(cards[i]) > strength(cards[best]):
                    best = i
            winner = self.places[best][0]
            self.taken[winner] += cards + self.pending
            self.pending = []
            self.leader = winner
        self.tricks_done += 1
        self.places = []

    def side_scores(self) -> tuple[int, int]:
        side0 = self.taken[0] + self.taken[2]
        side1 = self.taken[1] + self.taken[3]
        return deal_score(side0, self.cult[0]), deal_score(side1, self.cult[1])
