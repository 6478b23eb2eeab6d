"""twilight-env: Twilight (Bambus, 2001) rules engine and PettingZoo environment.

``twilight_env.env(**config)`` / ``twilight_env.raw_env(**config)`` build the PettingZoo
AEC environment (:mod:`twilight_env.envs.aec`). They are loaded on first use, so importing
the engine (``import twilight_env.rules.engine``) does not import PettingZoo.

Importing ``twilight_env`` registers ``twilight/Twilight-v0`` in PettingZoo's registry
(PettingZoo >= 1.27): at once if PettingZoo is already imported, otherwise as soon as
it is, so ``pettingzoo.make("aec", "twilight/Twilight-v0", num_players=3)`` works in
either import order. In the same way it registers ``twilight/SingleAgent-v0`` in
Gymnasium's registry: ``gymnasium.make("twilight/SingleAgent-v0", num_players=3,
opponents="heuristic")`` builds :class:`twilight_env.envs.wrappers.SingleAgentEnv` with those
keywords.

In a checkout of the repository, the top-level folders ``agents/``, ``training/`` and
``experiments/`` are this package's ``twilight_env.agents``, ``twilight_env.training`` and
``twilight_env.experiments`` (as ``pyproject.toml``'s ``package-dir`` installs them), also
when the checkout is imported without an editable install (its root on ``sys.path``, e.g.
``python -m twilight_env.experiments.edge.handicap`` run there beside an installed wheel).
"""

from __future__ import annotations

import importlib.abc
import os
import sys

__version__ = "0.1.0"

ENV_ID = "twilight/Twilight-v0"
SINGLE_AGENT_ID = "twilight/SingleAgent-v0"

from twilight_env.util.cachedir import configure_numba_cache as _configure_numba_cache  # noqa: E402

_configure_numba_cache()  # numba's kernel cache: the user's cache folder, never the source tree


def _register() -> None:
    """Add the env to PettingZoo's AEC registry (no-op for PettingZoo without a registry)."""
    pz = sys.modules.get("pettingzoo")
    registry = getattr(pz, "aec_registry", None)
    register = getattr(pz, "register", None)
    if registry is None or register is None or ENV_ID in registry:
        return
    register("aec", ENV_ID, entry_point="twilight_env.envs.aec:env")


def _register_gym() -> None:
    """Add the single-agent wrapper to Gymnasium's registry as ``SINGLE_AGENT_ID``."""
    gym = sys.modules.get("gymnasium")
    registry = getattr(gym, "registry", None)
    register = getattr(gym, "register", None)
    if registry is None or register is None or SINGLE_AGENT_ID in registry:
        return
    register(id=SINGLE_AGENT_ID, entry_point="twilight_env.envs.wrappers:SingleAgentEnv")


_REGISTER = {"pettingzoo": _register, "gymnasium": _register_gym}
"""Module -> the function that registers this package's envs in it."""


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Import hook: once ``pettingzoo`` or ``gymnasium`` finishes importing, register the
    envs there; retire when both are done."""

    def __init__(self, names):
        self.pending = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.pending:
            return None
        self.pending.discard(fullname)
        if not self.pending:
            sys.meta_path.remove(self)
        import importlib.util
        # find the real spec with this finder out of the way
        was_here = self in sys.meta_path
        if was_here:
            sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            if was_here:
                sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        register = _REGISTER[fullname]

        def exec_and_register(module):
            exec_module(module)
            register()

        spec.loader.exec_module = exec_and_register
        return spec


_pending = []
for _name, _fn in _REGISTER.items():
    if _name in sys.modules:
        _fn()
    else:
        _pending.append(_name)
if _pending and not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterOnImport(_pending))
del _pending, _name, _fn


_PARTS = ("agents", "training", "experiments")
"""The repository's top-level folders that are subpackages of ``twilight_env``."""


def _checkout_root() -> str | None:
    """The repository root when this package was imported from a checkout, else None."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            if 'name = "twilight-env"' not in f.read(4096):
                return None
    except OSError:
        return None
    if all(os.path.isfile(os.path.join(root, part, "__init__.py")) for part in _PARTS):
        return root
    return None


class _CheckoutParts(importlib.abc.MetaPathFinder):
    """Import hook: ``twilight_env.agents`` (and the others of ``_PARTS``) is the
    checkout's ``agents/`` folder, whatever else is installed."""

    def __init__(self, root: str):
        self.names = {f"{__name__}.{part}": os.path.join(root, part) for part in _PARTS}

    def find_spec(self, fullname, path=None, target=None):
        folder = self.names.get(fullname)
        if folder is None:
            return None
        import importlib.util
        return importlib.util.spec_from_file_location(fullname, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])


_root = _checkout_root()
if _root is not None and not any(isinstance(f, _CheckoutParts) for f in sys.meta_path):
    sys.meta_path.insert(0, _CheckoutParts(_root))
del _root


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        from twilight_env.envs import aec
        return getattr(aec, name)
    raise AttributeError(f"module 'twilight_env' has no attribute {name!r}")


__all__ = ["env", "raw_env", "ENV_ID", "SINGLE_AGENT_ID", "__version__"]
