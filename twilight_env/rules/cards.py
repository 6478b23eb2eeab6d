"""Card codes and ids (R1).

28 cards, 14 per cult. Canonical id order: Sun 0..13, Moon 14..27, each cult as
``P C1 C2 C3 C4 C5 3 4 5 6 7 A T O``. A hand or pile is also written as a 28-bit
mask, bit ``i`` set when card id ``i`` is in it (the engine's representation).

| table        | per card id                                         | rule |
|--------------|-----------------------------------------------------|------|
| ``CULT``     | 0 = Sun, 1 = Moon                                   | R1   |
| ``STRENGTH`` | Purgatory 7, C1 6 .. C5 2, souls 1, sanctuaries 0   | R1, R4.1 |
| ``SOULS``    | souls counted at scoring: 3..7, clerics 1, else 0   | R5.1 |
| ``MULTIPLIER`` | Altar 1, Temple 2, Obelisk 3, else 0              | R5.2 |
| ``SANCTUARY`` | the card is a sanctuary (multiplier > 0)           | R5.2 |
| ``MULT_OF_CULT[c]`` | the multiplier for a side of cult ``c``: its own cult's sanctuaries only | R5.2 |
| ``STRONG_FIRST[c]`` | cult ``c``'s 14 ids, strongest first (then more souls, higher multiplier, lower id) | R4.1, R5 |

The reduced decks (fewer tricks, each cult still two cards per trick) keep the kinds of
``KEEP_ORDER`` in order; :func:`deck_mask` gives a deck's cards.

Tables over a 14-bit *half mask* ``m`` (one cult's part of a 28-bit mask, ``mask &
SUN_MASK`` or ``mask >> 14``; both cults have the same kinds at the same offsets, so
one table serves both), 16384 entries each:

| table        | per half mask                                       | rule |
|--------------|-----------------------------------------------------|------|
| ``HALF_IDS[c]`` | the sorted card ids of cult ``c``                | R1   |
| ``HALF_SOULS`` | souls                                             | R5.1 |
| ``HALF_MULT`` | sum of the sanctuary multipliers                   | R5.2 |
| ``HALF_COUNT`` | number of cards                                   | R2.5 |
| ``HALF_MAX_STRENGTH`` | strongest strength, -1 when empty          | R4.1 |

These are the one statement of every table derived from the cards. The compiled
kernels and the batch engine read the same tables as NumPy arrays from
:mod:`twilight_env.rules.tables`, built from these at import time.
:func:`trick_so_far` is the "best card so far" of a trick (R4.1).
"""

from __future__ import annotations

from typing import Sequence

KINDS: tuple[str, ...] = ("P", "C1", "C2", "C3", "C4", "C5", "3", "4", "5", "6", "7", "A", "T", "O")
"""Kind codes of one cult, in canonical order (R1)."""

SUN, MOON = 0, 1
"""Cult indices."""
CULT_NAMES: tuple[str, str] = ("sun", "moon")
CULT_LETTERS: tuple[str, str] = ("S", "M")

NUM_CARDS = 28
CARDS_PER_CULT = 14

CARDS: tuple[str, ...] = tuple(c + k for c in CULT_LETTERS for k in KINDS)
"""The 28 canonical card codes in id order: ``CARDS[0] == "SP"``, ``CARDS[27] == "MO"``."""

_ID_OF: dict[str, int] = {code: i for i, code in enumerate(CARDS)}

_KIND_STRENGTH = {"P": 7, "C1": 6, "C2": 5, "C3": 4, "C4": 3, "C5": 2,
                  "3": 1, "4": 1, "5": 1, "6": 1, "7": 1, "A": 0, "T": 0, "O": 0}
_KIND_SOULS = {"P": 0, "C1": 1, "C2": 1, "C3": 1, "C4": 1, "C5": 1,
               "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "A": 0, "T": 0, "O": 0}
_KIND_MULT = {"A": 1, "T": 2, "O": 3}

CULT: tuple[int, ...] = tuple(i // CARDS_PER_CULT for i in range(NUM_CARDS))
KIND: tuple[str, ...] = tuple(KINDS[i % CARDS_PER_CULT] for i in range(NUM_CARDS))
STRENGTH: tuple[int, ...] = tuple(_KIND_STRENGTH[k] for k in KIND)
SOULS: tuple[int, ...] = tuple(_KIND_SOULS[k] for k in KIND)
MULTIPLIER: tuple[int, ...] = tuple(_KIND_MULT.get(k, 0) for k in KIND)

PURGATORY_IDS: tuple[int, int] = (0, 14)
PURGATORY_MASK = (1 << 0) | (1 << 14)
SUN_MASK = (1 << 14) - 1
MOON_MASK = SUN_MASK << 14
CULT_MASK: tuple[int, int] = (SUN_MASK, MOON_MASK)
ALL_MASK = (1 << NUM_CARDS) - 1
SANCTUARY: tuple[bool, ...] = tuple(m > 0 for m in MULTIPLIER)
"""``SANCTUARY[i]``: card ``i`` is a sanctuary, Altar, Temple or Obelisk (R5.2)."""
MULT_OF_CULT: tuple[tuple[int, ...], tuple[int, ...]] = tuple(
    tuple(MULTIPLIER[i] if CULT[i] == c else 0 for i in range(NUM_CARDS)) for c in (SUN, MOON))
"""``MULT_OF_CULT[c][i]``: what card ``i`` adds to the multiplier of a side of cult ``c``:
its multiplier when it is one of that cult's sanctuaries, else 0 (R5.2)."""
STRONG_FIRST: tuple[tuple[int, ...], tuple[int, ...]] = tuple(
    tuple(sorted(range(CARDS_PER_CULT * c, CARDS_PER_CULT * (c + 1)),
                 key=lambda i: (-STRENGTH[i], -SOULS[i], -MULTIPLIER[i], i))) for c in (SUN, MOON))
"""``STRONG_FIRST[c]``: the 14 ids of cult ``c``, strongest first (R4.1), then more souls
(R5.1), then a higher multiplier (R5.2), then the lower id. The searches try cards in
this order or its reverse."""
SANCTUARY_MASK: tuple[int, int] = (
    sum(1 << i for i in range(14) if MULTIPLIER[i]),
    sum(1 << i for i in range(14, 28) if MULTIPLIER[i]),
)


KEEP_ORDER: tuple[str, ...] = ("7", "O", "C1", "P", "6", "T", "C2", "5", "A", "C3", "4", "C4", "3", "C5")
"""The order in which a reduced deck keeps each cult's kinds: a deal of ``t`` tricks (1..7)
keeps the first ``2 t`` kinds of this list in both cults, so that every trick still holds
two Sun and two Moon cards (R3.4). The list takes the strongest remaining card of each
group in turn, souls (most souls first), sanctuaries (highest multiplier first), clerics
(Hierarch first) and the Purgatory: 1 trick keeps a soul card and a sanctuary (the least
that scores, R5.3); 2 tricks add the Hierarch and the Purgatory (strength above souls,
R4.1; the pending pile and the neutral last trick, R4.3, R4.4); 3 tricks a second soul card
and sanctuary; 7 tricks are the whole deck (R1)."""


def deck_mask(tricks: int) -> int:
    """28-bit mask of the cards of a deal of ``tricks`` tricks (:data:`KEEP_ORDER`; 7: all 28).

    Raises:
        ValueError: unless ``tricks`` is an int 1..7.
    """
    if isinstance(tricks, bool) or not isinstance(tricks, int) and not hasattr(tricks, "__index__") \
            or not 1 <= int(tricks) <= 7:
        raise ValueError(f"tricks must be an int 1..7 (7 is the full deck), got {tricks!r}")
    kinds = KEEP_ORDER[:2 * int(tricks)]
    return sum(1 << (CARDS_PER_CULT * c + KINDS.index(k)) for c in (SUN, MOON) for k in kinds)


def deck_words(tricks: int) -> str:
    """A deck in words, for messages: ``"the full deck (7 tricks, 28 cards)"`` or
    ``"a reduced deck of 2 tricks (8 cards)"`` (R2.3, :func:`deck_mask`).

    Raises:
        ValueError: ``tricks`` not an int 1..7.
    """
    cards = bin(deck_mask(tricks)).count("1")
    if tricks == 7:
        return f"the full deck ({tricks} tricks, {cards} cards)"
    return f"a reduced deck of {tricks} trick{'s' if tricks > 1 else ''} ({cards} cards)"


def card_id(code: str) -> int:
    """Canonical id (0..27) of a card code such as ``"SC1"`` or ``"M5"`` (R1).

    Raises:
        ValueError: if ``code`` is not one of :data:`CARDS`.
    """
    try:
        return _ID_OF[code]
    except (KeyError, TypeError):
        raise ValueError(f"unknown card code {code!r}; valid codes: {' '.join(CARDS)}") from None


def card_code(cid: int) -> str:
    """Canonical code of a card id (0..27) (R1).

    Raises:
        ValueError: if ``cid`` is not an int in 0..27.
    """
    if isinstance(cid, bool) or not isinstance(cid, int) and not hasattr(cid, "__index__"):
        raise ValueError(f"unknown card id {cid!r}; valid ids are 0..27")
    i = int(cid)
    if not 0 <= i < NUM_CARDS:
        raise ValueError(f"unknown card id {cid!r}; valid ids are 0..27")
    return CARDS[i]


def to_id(card: int | str) -> int:
    """Card id from either a code or an id. Raises ValueError on anything else."""
    if isinstance(card, str):
        return card_id(card)
    card_code(card)
    return int(card)


def mask_of(cards) -> int:
    """28-bit mask of an iterable of card codes or ids. Raises ValueError on unknown cards."""
    m = 0
    for c in cards:
        m |= 1 << to_id(c)
    return m


# ids of the set bits of a 14-bit half mask, for each cult: HALF_IDS[cult][m]
def _half_table(offset: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(offset + b for b in range(14) if m >> b & 1) for m in range(1 << 14))


HALF_IDS: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] = (_half_table(0), _half_table(14))
"""``HALF_IDS[cult][m]``: sorted card ids of the 14-bit mask ``m`` of that cult."""


def ids_of(mask: int) -> tuple[int, ...]:
    """Sorted card ids of a 28-bit mask."""
    return HALF_IDS[0][mask & SUN_MASK] + HALF_IDS[1][mask >> 14]


def codes_of(mask: int) -> list[str]:
    """Card codes of a 28-bit mask, in id order."""
    return [CARDS[i] for i in ids_of(mask)]


HALF_SOULS: tuple[int, ...] = tuple(sum(SOULS[i] for i in ids) for ids in HALF_IDS[0])
"""``HALF_SOULS[m]``: souls of the cards of the 14-bit half mask ``m``, either cult (R5.1)."""
HALF_MULT: tuple[int, ...] = tuple(sum(MULTIPLIER[i] for i in ids) for ids in HALF_IDS[0])
"""``HALF_MULT[m]``: sum of the multipliers of the sanctuaries in half mask ``m`` (R5.2), 0..6."""
HALF_COUNT: tuple[int, ...] = tuple(len(ids) for ids in HALF_IDS[0])
"""``HALF_COUNT[m]``: number of cards in half mask ``m`` (a hand's cult counts are public, R2.5)."""
HALF_MAX_STRENGTH: tuple[int, ...] = tuple(max((STRENGTH[i] for i in ids), default=-1) for ids in HALF_IDS[0])
"""``HALF_MAX_STRENGTH[m]``: the strongest strength in half mask ``m`` (R4.1), -1 when empty."""


def souls_of(mask: int) -> int:
    """Souls in a 28-bit mask of cards, either cult (R5.1)."""
    return HALF_SOULS[mask & SUN_MASK] + HALF_SOULS[mask >> 14]


def multiplier_of(mask: int, cult: int) -> int:
    """Sum of the multipliers of ``cult``'s sanctuaries in a 28-bit mask (R5.2), 0..6."""
    return HALF_MULT[(mask >> (14 * cult)) & SUN_MASK]


def trick_so_far(cards: Sequence[int], n: int, pending: int = 0) -> tuple[int, int, int]:
    """The first ``n`` cards of a trick: ``(best, place, stake)``.

    ``best`` and ``place`` are the strength and place of the best card so far, the
    strongest, ties to the earlier place (R4.1); ``(-1, 0)`` when ``n`` is 0. ``stake``
    is the mask of what the trick's taker gets so far: the ``n`` cards and the
    ``pending`` pile (R4.2, R4.3). A Purgatory is the strongest card (7), so ``best ==
    7`` means the trick goes pending (R4.3); with all four cards and no Purgatory,
    ``place`` is the taker's place.

    Args:
        cards: the trick's card ids by place (at least ``n`` of them).
        n: places filled, 0..4.
        pending: the pending pile (28-bit mask, R4.3), 0 for the cards alone.

    The numba kernels (``agents/_solver_nb.py``, ``agents/_rollout_nb.py``), the
    engine's ``State._resolve``, the C core and the batch engine keep their own inlined
    form of R4.1 for speed.
    """
    best, place, stake = -1, 0, pending
    for p in range(n):
        x = cards[p]
        stake |= 1 << x
        s = STRENGTH[x]
        if s > best:
            best, place = s, p
    return best, place, stake
