"""Deals of a reduced deck (``Config.tricks`` < 7): fewer tricks, the same rules (R2-R5, R4.4 on the last trick).

:mod:`twilight_env.rules.engine` re-exports :class:`ReducedState`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twilight_env.rules.hands import NUM_SEATS, NUM_TRICKS, random_hands, validate_deal
from twilight_env.rules.state import PurePythonState


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
        s = super().clone()
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
        super()._resolve()
        if self.trick == self.num_tricks and self.pending:
            self.neutral |= self.pending
            self.pending = 0

    def _illegal(self, action) -> str:
        if self.trick == self.num_tricks:
            return f"the deal is over: no action is legal (got {action!r})"
        return super()._illegal(action)

    def __reduce__(self):
        rebuild, (cls, fields) = super().__reduce__()
        fields.update((f, getattr(self, f)) for f in self.__slots__ if hasattr(self, f))
        return rebuild, (cls, fields)
