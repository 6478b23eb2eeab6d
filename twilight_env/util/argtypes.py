"""Argument types and interruption for every command line (``twilight``, ``python -m ...``).

argparse prefixes a type's error with the flag (``argument --seed: must be ...``), so each
type's message says only what the value must be. :class:`Interrupted` turns SIGTERM into a
``KeyboardInterrupt`` so that code that saves work on Ctrl-C saves it on SIGTERM too.
Standard library only.
"""

from __future__ import annotations

import argparse
import math
import signal


def _int(text: str, what: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


MAX_DEALS = 1_000_000
"""Most deals a study command plays (``--deals``): 50 times the largest study run so far
(20,000); each deal costs about 0.6 KB of memory and its share of the progress file."""


def deal_count(text: str) -> int:
    """argparse type: a number of deals, an integer in 1..:data:`MAX_DEALS` (the error names
    the flag and the range)."""
    value = _int(text, f"an integer in 1..{MAX_DEALS:,}", 1)
    if value > MAX_DEALS:
        raise argparse.ArgumentTypeError(f"must be an integer in 1..{MAX_DEALS:,}, got {value:,}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (the error names the flag)."""
    return _int(text, "a positive integer (1, 2, ...)", 1)


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0, e.g. a seed (the error names the flag)."""
    return _int(text, "a non-negative integer (0, 1, ...)", 0)


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (the error names the flag)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def probability(text: str) -> float:
    """argparse type: a number in [0, 1] (the error names the flag)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}")
    return value


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread on SIGTERM while a subcommand runs, so that the code
    that saves work on Ctrl-C (``KeyboardInterrupt``) saves it on SIGTERM too.

    Attributes:
        signum: the signal number (``signal.SIGTERM``).
    """

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def raise_interrupted(signum, frame):
    """A signal handler (``signal.signal(SIGTERM, raise_interrupted)``): raises :class:`Interrupted` for ``signum``."""
    raise Interrupted(signum)


def interrupt_status(error: KeyboardInterrupt) -> int:
    """Exit status after an interruption: 128 + the signal number (130 for Ctrl-C, 143
    for SIGTERM), the shell's convention."""
    return 128 + getattr(error, "signum", signal.SIGINT)
