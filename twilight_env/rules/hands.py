"""The hands of a deal as 28-bit masks: explicit deals checked, random deals, the held mask.

Bit ``i`` of a hand mask is card id ``i`` (:data:`~twilight_env.rules.cards.CARDS`). A deal
is four hands by seat, 7 cards each (R2.3), or ``tricks`` cards each on a reduced deck
(:func:`~twilight_env.rules.cards.deck_mask`). Randomness comes only from the
``numpy.random.Generator`` passed in. :mod:`twilight_env.rules.engine` re-exports every name.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twilight_env.rules.cards import CARDS, NUM_CARDS, SUN_MASK, card_id, codes_of, deck_mask

NUM_SEATS = 4
NUM_TRICKS = 7
HAND_SIZE = 7
CARD_BIT = tuple(1 << i for i in range(NUM_CARDS))
"""``CARD_BIT[card] == 1 << card`` (a tuple lookup; CPython 3.11 specializes it, not ``<<``)."""
_DECK = tuple(range(NUM_CARDS))


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
            i = _card_in_hand(c, seat)
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
            i = _card_in_hand(c, seat)
            if not deck >> i & 1:
                raise ValueError(f"card {CARDS[i]} is not in the deck of {tricks} tricks; its cards: "
                                 f"{' '.join(codes_of(deck))}")
            if m >> i & 1 or any(x >> i & 1 for x in masks):
                raise ValueError(f"card {CARDS[i]} is dealt twice")
            m |= 1 << i
        masks.append(m)
    return tuple(masks)


def _card_in_hand(c, seat: int) -> int:
    """The id of card ``c`` (a code or an id) of ``seat``'s hand; ValueError naming the seat."""
    try:
        return card_id(c) if isinstance(c, str) else _check_id(c)
    except ValueError as e:
        raise ValueError(f"hand of seat {seat}: {e}") from None


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
    b = CARD_BIT  # distinct cards: + is |
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


def hands_to_codes(hands: Sequence[int]) -> list[list[str]]:
    """Card codes of 4 hand masks, by seat."""
    return [codes_of(h) for h in hands]
