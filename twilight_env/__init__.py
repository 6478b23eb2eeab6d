"""twilight-env: Twilight (Bambus, 2001) rules engine and PettingZoo environment.

``twilight_env.env(**config)`` / ``twilight_env.raw_env(**config)`` build the PettingZoo
AEC environment (:mod:`twilight_env.aec`). They are loaded on first use, so importing
the engine (``import twilight_env.engine``) does not import PettingZoo.

Importing ``twilight_env`` registers ``twilight/Twilight-v0`` in PettingZoo's registry
(PettingZoo >= 1.27): at once if PettingZoo is already imported, otherwise as soon as
it is, so ``pettingzoo.make("aec", "twilight/Twilight-v0", num_players=3)`` works in
either import order.
"""

from __future__ import annotations

import importlib.abc
import sys

__version__ = "0.1.0"

ENV_ID = "twilight/Twilight-v0"


def _register() -> None:
    """Add the env to PettingZoo's AEC registry (no-op for PettingZoo without a registry)."""
    pz = sys.modules.get("pettingzoo")
    registry = getattr(pz, "aec_registry", None)
    register = getattr(pz, "register", None)
    if registry is None or register is None or ENV_ID in registry:
        return
    register("aec", ENV_ID, entry_point="twilight_env.aec:env")


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Import hook: once ``pettingzoo`` finishes importing, register the env and retire."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "pettingzoo":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec("pettingzoo")
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _register()

        spec.loader.exec_module = exec_and_register
        return spec


if "pettingzoo" in sys.modules:
    _register()
elif not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterOnImport())


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        from . import aec
        return getattr(aec, name)
    raise AttributeError(f"module 'twilight_env' has no attribute {name!r}")


__all__ = ["env", "raw_env", "ENV_ID", "__version__"]
