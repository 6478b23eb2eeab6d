"""Checks of settings read from files or built in code: one message shape, naming the field
and what is allowed. Standard library only."""

from __future__ import annotations


def check_int(value, field: str, low: int, high: int | None = None) -> int:
    """``value`` if it is an int (not a bool) in ``low..high`` (no upper bound when None).

    Raises:
        ValueError: naming ``field`` and the allowed range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        allowed = f"an integer in {low}..{high}" if high is not None else f"an integer >= {low}"
        raise ValueError(f"{field} must be {allowed}, got {value!r}")
    return value
