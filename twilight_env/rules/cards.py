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
"""

from __future__ import annotations

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
SANCTUARY_MASK: tuple[int, int] = (
    sum(1 << i for i in range(14) if MULTIPLIER[i]),
    sum(1 << i for i in range(14, 28) if MULTIPLIER[i]),
)


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


_HALF_SOULS = tuple(sum(SOULS[b] for b in range(14) if m >> b & 1) for m in range(1 << 14))
_HALF_MULT = tuple(sum(MULTIPLIER[b] for b in range(14) if m >> b & 1) for m in range(1 << 14))


def souls_of(mask: int) -> int:
    """Souls in a 28-bit mask of cards, either cult (R5.1)."""
    return _HALF_SOULS[mask & SUN_MASK] + _HALF_SOULS[mask >> 14]


def multiplier_of(mask: int, cult: int) -> int:
    """Sum of the multipliers of ``cult``'s sanctuaries in a 28-bit mask (R5.2), 0..6."""
    return _HALF_MULT[(mask >> (14 * cult)) & SUN_MASK]
