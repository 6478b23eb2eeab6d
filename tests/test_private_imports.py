"""No module of the package uses another module's private names.

A private name starts with one underscore (``_name``; ``__dunder__`` names are not private).
A use across modules is either

- ``from X import _y`` (absolute or relative), or
- ``M._y``, an attribute read on a name ``M`` bound to a package module by an import
  (``import a.b as M``, ``from a import b as M``, ``import a.b`` then ``a.b._y``).

The one exception is a private *module* imported by a module of its own package (the
compiled kernels ``agents/_solver_nb.py`` and friends, ``twilight_env/rules/_engine_c``):
the underscore keeps it out of the package's public names, not out of its siblings'.
A helper another module needs is made public in the lower module of the two
(docs/ARCHITECTURE.md, "Layers"). The scan covers every module of ``twilight_env/``,
``agents/``, ``training/`` and ``experiments/``; tests are not scanned.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layers import ROOT, package_files, resolve


def is_private(name: str) -> bool:
    """``_name`` but not ``__name__``."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_private_module(importer: str, target: str) -> bool:
    """``target`` is a private module in the package of ``importer`` (or below it)."""
    package, _, last = target.rpartition(".")
    return is_private(last) and (importer == package or importer.startswith(package + "."))


def private_uses(root: Path = ROOT) -> list[str]:
    """``"path:line uses module._name"`` for every use of a private name across modules."""
    modules = package_files(root)
    found = []
    for name, rel in modules.items():
        tree = ast.parse((root / rel).read_text(encoding="utf-8"), filename=rel)
        is_pkg = rel.endswith("__init__.py")
        bound: dict[str, str] = {}  # local name -> package module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[:len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in modules:
                        bound[alias.asname or alias.name] = full
                    if is_private(alias.name) and resolve(base, modules) and not _own_private_module(name, full):
                        found.append(f"{rel}:{node.lineno} uses {base}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        bound[top] = top
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and is_private(node.attr)):
                continue
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if not (isinstance(value, ast.Name) and value.id in bound):
                continue
            target = ".".join([bound[value.id]] + chain[::-1])
            if target in modules and target != name and not _own_private_module(name, f"{target}.{node.attr}"):
                found.append(f"{rel}:{node.lineno} uses {target}.{node.attr}")
    return sorted(set(found))


def test_no_module_uses_another_modules_private_names():
    uses = private_uses()
    assert not uses, ("private names used across modules (make the helper public in the lower module of the "
                      "two, docs/ARCHITECTURE.md 'Layers'):\n" + "\n".join(uses))


def test_the_scan_finds_each_kind_of_use_and_allows_the_exceptions(tmp_path):
    files = {
        "agents/__init__.py": "",
        "agents/low.py": "_helper = 1\n__version__ = '1'\n",
        "agents/_kernel.py": "x = 1\n",
        "agents/user.py": ("from twilight_env.agents.low import _helper, __version__\n"
                           "from . import _kernel\n"                       # own package's private module: allowed
                           "from twilight_env.agents import low as L\n"
                           "import twilight_env.agents.low\n"
                           "import numpy as np\n"
                           "a = L._helper + twilight_env.agents.low._helper\n"
                           "b = np._NoValue\n"                              # not a package module: not counted
                           "def f(obj):\n    return obj._private\n"),       # not a module: not counted
        "agents/nn/__init__.py": "",
        "agents/nn/deep.py": "from twilight_env.agents._kernel import x\nfrom ..low import _helper\n",
        "training/__init__.py": "",
        "training/far.py": "from twilight_env.agents import _kernel\n",       # another package's private module
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert private_uses(tmp_path) == [
        "agents/nn/deep.py:2 uses twilight_env.agents.low._helper",
        "agents/user.py:1 uses twilight_env.agents.low._helper",
        "agents/user.py:6 uses twilight_env.agents.low._helper",
        "training/far.py:1 uses twilight_env.agents._kernel",
    ]
