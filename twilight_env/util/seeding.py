"""One check for every seed the project accepts (environments, studies, command lines).

NumPy takes ``True`` as the seed 1 and answers a negative or fractional seed with an
error that does not say which argument was wrong; :func:`check_seed` refuses them with a
message naming the argument.
"""

from __future__ import annotations

import numbers


def check_seed(seed, name: str = "seed", allow_none: bool = True):
    """``seed`` as a Python int (or None when ``allow_none``), after checking it.

    Args:
        seed: an int >= 0 (a NumPy integer is accepted), or None.
        name: the argument's name in the message (``"seed"``, ``"--seed"``, ...).
        allow_none: whether None (no seed: fresh entropy) is accepted.

    Returns:
        ``int(seed)``, or None.

    Raises:
        ValueError: a bool, a non-integer (float, string, ...) or a negative number; the
            message names ``name`` and the allowed values.
    """
    if seed is None and allow_none:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        allowed = "an integer >= 0" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {allowed}, got {seed!r}"
                         + (" (a bool is not a seed)" if isinstance(seed, bool) else ""))
    return int(seed)


__all__ = ["check_seed"]
