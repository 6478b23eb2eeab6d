"""Compile options shared by the numba kernels of the searches.

``NO_REFCOUNT``: the options that compile a helper without numba's reference counting
(``_nrt=False``), for helpers that only index arrays and allocate none. With counting on,
every array argument costs a reference-count update per call in the innermost loops
(the solver measured 14-50% slower split into helpers, the IS-MCTS 1.5-4%). ``_nrt`` is an
option of numba's CPU target that its documentation does not list; where a numba release
does not know it, ``NO_REFCOUNT`` is empty and the helpers compile with counting (same
results, a little slower) instead of failing at their first call.
"""

from __future__ import annotations


def _no_refcount_options() -> dict:
    try:
        from numba.core.cpu import CPUTargetOptions
    except ImportError:  # a numba without this module
        return {}
    return {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}


NO_REFCOUNT: dict = _no_refcount_options()
