"""Deal scoring (R5): souls × own-cult multiplier."""

from __future__ import annotations

from typing import Iterable

from twilight_env.rules.cards import CULT_NAMES, mask_of, multiplier_of, souls_of


def cult_index(cult: str) -> int:
    """0 for ``"sun"``, 1 for ``"moon"``. Raises ValueError on anything else."""
    try:
        return CULT_NAMES.index(cult)
    except ValueError:
        raise ValueError(f"unknown cult {cult!r}; expected 'sun' or 'moon'") from None


def score_mask(mask: int, cult: int) -> int:
    """Deal score (0..360) of the cards in a 28-bit mask taken by a side of ``cult`` (0/1)."""
    return souls_of(mask) * multiplier_of(mask, cult)


def deal_score(captured: Iterable[int | str], cult: str) -> int:
    """Deal score of the cards one side took (R5.1-R5.3).

    Args:
        captured: card codes (``"S7"``) or ids (0..27) taken by one side.
        cult: the side's cult, ``"sun"`` or ``"moon"``.

    Returns:
        souls × multiplier of the side's own-cult sanctuaries, in deal points (0..360).
        ``deal_score(["S7","M3","SO","MT","SC4","M4","SC1","MC5"], "sun") == 51`` (R5.4).

    Raises:
        ValueError: on an unknown card, a repeated card, or an unknown cult.
    """
    cards = list(captured)
    mask = mask_of(cards)
    if bin(mask).count("1") != len(cards):
        raise ValueError(f"captured cards contain a repeat: {cards!r}")
    return score_mask(mask, cult_index(cult))
