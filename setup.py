"""Builds the optional compiled core of the rules engine (``twilight_env.rules._engine_c``).

Everything else is declared in ``pyproject.toml``. Without a C compiler the build skips
the extension (``optional=True``) and the engine runs in pure Python. The core carries
the SHA-256 digest of its source (``SOURCE_HASH``), so that the engine (``twilight_env.rules.state``) can
tell a core built from an older ``_engine_c.c`` and fall back to Python with a warning.
"""

import hashlib
import os

from setuptools import Extension, setup

SOURCE = os.path.join("twilight_env", "rules", "_engine_c.c")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), SOURCE), "rb") as f:
    digest = hashlib.sha256(f.read()).hexdigest()[:16]

setup(ext_modules=[Extension("twilight_env.rules._engine_c", [SOURCE], optional=True,
                             define_macros=[("TWILIGHT_SOURCE_HASH", f'"{digest}"')])])
