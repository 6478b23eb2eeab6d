"""Optional dependencies: which extra installs what, and the one message that says so.

The core install (numpy, gymnasium, pettingzoo) plays and studies with every agent but the
torch ones; training needs the ``train`` extra. A module that cannot work without one
calls :func:`require` first, so that a missing package is one line naming the extra, not a
traceback from deep inside an import.
"""

from __future__ import annotations

import importlib
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


EXTRA_OF: dict[str, str] = {"torch": "train", "tensorboard": "train", "openskill": "study", "scipy": "study",
                            "matplotlib": "study", "tqdm": "study", "numba": "fast", "ray": "dist",
                            "starlette": "serve", "uvicorn": "serve"}
"""Optional package (its import name) -> the extra that installs it, for messages."""

COMMAND_NEEDS: dict[str, tuple[str, ...]] = {
    "arena": ("openskill", "scipy", "tqdm"),
    "edge": ("scipy", "matplotlib", "tqdm"),
    "ladder": ("openskill", "scipy", "matplotlib", "tqdm"),
}
"""``twilight`` subcommand -> the optional packages it imports while it runs (ratings,
intervals, plots, the progress bar). The command checks them before it makes any output
folder (:func:`missing`), so a core-only install fails at once and leaves nothing behind."""


def importable(module: str) -> bool:
    """Whether ``module`` can be imported here: :func:`available`, and when that says no,
    the import itself decides (``find_spec`` has missed an installed package on a loaded
    machine). A module set to None in ``sys.modules`` is not importable."""
    if available(module):
        return True
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def missing(modules) -> list[str]:
    """The names in ``modules`` that cannot be imported here (:func:`importable`), in order."""
    return [m for m in modules if not importable(m)]


def missing_message(module: str, extra: str | None = None, what: str | None = None) -> str:
    """One line: ``what`` needs ``module``, which is not installed, and the install
    command of its extra (``extra``, else :data:`EXTRA_OF`, else ``study``)."""
    extra = extra or EXTRA_OF.get(module.partition(".")[0], "study")
    return (f"{what + ' needs' if what else 'needs'} {module}, which is not installed; install the '{extra}' extra: "
            f"{install_hint(extra)}")


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
    if importable(module):  # the import decides: find_spec twice missed an installed torch here, on a loaded machine
        return
    message = missing_message(module, extra, what)
    if as_main:
        raise SystemExit(f"error: {message}")
    raise ImportError(message)
