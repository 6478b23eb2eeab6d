"""Optional dependencies: which extra installs what, and the one message that says so.

The core install (numpy, gymnasium, pettingzoo) plays and studies with every agent but the
torch ones; training needs the ``train`` extra. A module that cannot work without one
calls :func:`require` first, so that a missing package is one line naming the extra, not a
traceback from deep inside an import.
"""

from __future__ import annotations

import importlib.util


def install_hint(extra: str) -> str:
    """The install command of an extra, for a wheel and for a checkout."""
    torch = "pip install torch==2.13.0 && " if extra == "train" else ""
    return f'{torch}pip install "twilight-env[{extra}]" (from a checkout: {torch}pip install -e ".[{extra}]")'


def available(module: str) -> bool:
    """Whether ``module`` can be imported here (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that is missing, or a module set to None
        return False


def require(module: str, extra: str, what: str, as_main: bool = False) -> None:
    """Stop unless ``module`` is installed.

    Args:
        module: the import name, e.g. ``"torch"``.
        extra: the extra that installs it, e.g. ``"train"``.
        what: what needs it, for the message (e.g. ``"python -m twilight_env.training.exit"``).
        as_main: the caller runs as a program (``__name__ == "__main__"``): exit with the
            message instead of raising.

    Raises:
        ImportError: naming the module and the extra (``SystemExit`` with ``as_main``).
    """
    if available(module):
        return
    try:  # the import decides: find_spec twice missed an installed torch here, on a loaded machine
        importlib.import_module(module)
        return
    except ImportError:
        pass
    message = f"{what} needs {module}, which is not installed; install the '{extra}' extra: {install_hint(extra)}"
    if as_main:
        raise SystemExit(f"error: {message}")
    raise ImportError(message)
