"""Builds the optional compiled core of the rules engine (``twilight_env._engine_c``).

Everything else is declared in ``pyproject.toml``. Without a C compiler the build skips
the extension (``optional=True``) and the engine runs in pure Python.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("twilight_env._engine_c", ["twilight_env/_engine_c.c"], optional=True)])
