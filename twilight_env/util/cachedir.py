"""Where the package keeps files it can rebuild: the user's cache folder, never the source
checkout or the installed package.

numba's on-disk cache (``cache=True`` kernels of ``agents/`` and ``twilight_env/obs``) goes
by default into a ``__pycache__`` folder beside each module, which writes into the source
checkout (or fails quietly in a read-only install). :func:`configure_numba_cache` points it
at ``user_cache_dir()/numba`` instead, unless the user set ``NUMBA_CACHE_DIR``; the package
calls it on import, before any kernel is compiled.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "twilight-env"
"""Name of the package's folder inside the user's cache folder."""


def user_cache_dir() -> Path:
    """The package's cache folder (not created here).

    ``$XDG_CACHE_HOME/twilight-env`` when ``XDG_CACHE_HOME`` is set to an absolute path,
    else ``~/Library/Caches/twilight-env`` on macOS, ``%LOCALAPPDATA%\\twilight-env\\Cache``
    on Windows and ``~/.cache/twilight-env`` elsewhere (the XDG base-directory rules that
    ``platformdirs`` follows).
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / APP
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / APP / "Cache"
    return Path.home() / ".cache" / APP


def configure_numba_cache() -> str:
    """Set ``NUMBA_CACHE_DIR`` to ``user_cache_dir()/numba`` unless it is set already (also
    in numba's config when numba is already imported and its cache folder was not given).

    Returns:
        the folder numba caches compiled kernels in.
    """
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if not chosen:
        chosen = str(user_cache_dir() / "numba")
        os.environ["NUMBA_CACHE_DIR"] = chosen
        config = sys.modules.get("numba.core.config")
        if config is not None and not getattr(config, "CACHE_DIR", ""):
            config.CACHE_DIR = chosen
    return chosen


__all__ = ["APP", "configure_numba_cache", "user_cache_dir"]
