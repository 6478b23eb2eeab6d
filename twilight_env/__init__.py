"""twilight-env: Twilight (Bambus, 2001) rules engine and PettingZoo environment.

``twilight_env.env(**config)`` / ``twilight_env.raw_env(**config)`` build the PettingZoo
AEC environment (:mod:`twilight_env.envs.aec`, loaded on first use). There is no
``parallel_env``: the game's actions are sequential (one seat plays or requests at a time,
R3/R4), so the AEC form is its natural one; PettingZoo's ``aec_to_parallel`` does not apply.

Importing ``twilight_env`` registers its two ids, whichever of the libraries is imported
first, through the libraries' own registration functions (no import hook):

- ``twilight/Twilight-v0`` in PettingZoo's AEC registry (PettingZoo >= 1.27, which reads
  no entry points), so ``pettingzoo.make("aec", "twilight/Twilight-v0", num_players=3)``
  works;
- ``twilight/SingleAgent-v0`` in Gymnasium's registry, so
  ``gymnasium.make("twilight/SingleAgent-v0", num_players=3, opponents="heuristic")``
  builds :class:`twilight_env.envs.wrappers.SingleAgentEnv` with those keywords.
  ``pyproject.toml`` also names :func:`register_gymnasium` in the ``gymnasium.envs``
  entry point group, which Gymnasium 0.29 reads on ``import gymnasium`` (Gymnasium 1.x
  reads none; there ``gymnasium.make("twilight_env:twilight/SingleAgent-v0")`` imports
  this package first).

So ``import twilight_env`` imports Gymnasium and PettingZoo (about 60 ms); the engine
modules themselves (``rules``, ``obs``, ``records``) import neither.

The repository's top-level folders ``agents/``, ``training/`` and ``experiments/`` are this
package's ``twilight_env.agents``, ``twilight_env.training`` and ``twilight_env.experiments``
through ``pyproject.toml``'s ``package-dir``: in a wheel and in an editable install
(``pip install -e .``).
"""

from __future__ import annotations

__version__ = "0.1.0"

ENV_ID = "twilight/Twilight-v0"
SINGLE_AGENT_ID = "twilight/SingleAgent-v0"


def _numba_cache() -> None:
    """numba's kernel cache in the user's cache folder, never the source tree
    (:func:`twilight_env.util.cachedir.configure_numba_cache`), before any kernel compiles."""
    from twilight_env.util.cachedir import configure_numba_cache

    configure_numba_cache()


_numba_cache()


def register_pettingzoo() -> None:
    """Add ``ENV_ID`` to PettingZoo's AEC registry; a no-op when it is there already or
    when the installed PettingZoo (< 1.27) has no registry."""
    import pettingzoo

    registry = getattr(pettingzoo, "aec_registry", None)
    register = getattr(pettingzoo, "register", None)
    if registry is None or register is None or ENV_ID in registry:
        return
    register("aec", ENV_ID, entry_point="twilight_env.envs.aec:env")


def register_gymnasium() -> None:
    """Add ``SINGLE_AGENT_ID`` to Gymnasium's registry; a no-op when it is there already.

    Also the ``gymnasium.envs`` entry point named in ``pyproject.toml``.
    """
    # the submodule, not the package: Gymnasium 0.29 calls this while ``gymnasium`` itself is
    # still being imported (gymnasium/envs/__init__.py loads the plugins)
    from gymnasium.envs.registration import register, registry

    if SINGLE_AGENT_ID not in registry:
        register(id=SINGLE_AGENT_ID, entry_point="twilight_env.envs.wrappers:SingleAgentEnv")


register_pettingzoo()
register_gymnasium()


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        from twilight_env.envs import aec
        return getattr(aec, name)
    if name == "parallel_env":
        raise AttributeError("module 'twilight_env' has no attribute 'parallel_env': the game's actions are "
                             "sequential (one seat acts at a time, R3, R4), so the environment is AEC only; use "
                             "twilight_env.env(...) (docs/ENVIRONMENT.md)")
    raise AttributeError(f"module 'twilight_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted((set(globals()) - {"annotations"}) | {"env", "raw_env"})


__all__ = ["env", "raw_env", "ENV_ID", "SINGLE_AGENT_ID", "register_gymnasium", "register_pettingzoo", "__version__"]
