"""Names that the project defines once and imports elsewhere (``git_hash``, ``ENV_ID``)."""

import ast
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("twilight_env", "agents", "training", "experiments", "benchmarks")


def _definitions(name):
    """``path`` of every module-level ``def name`` or ``name = ...`` in the packages."""
    found = []
    for pkg in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if not f.endswith(".py"):
                    continue
                path = os.path.join(folder, f)
                with open(path, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read(), path)
                for node in tree.body:
                    if isinstance(node, ast.FunctionDef) and node.name == name:
                        found.append(os.path.relpath(path, ROOT))
                    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                            found.append(os.path.relpath(path, ROOT))
    return found


@pytest.mark.parametrize("name,home", [("git_hash", "twilight_env/util/report.py"), ("ENV_ID", "twilight_env/__init__.py")])
def test_defined_once(name, home):
    assert _definitions(name) == [home]


def test_env_id_is_the_package_one():
    pytest.importorskip("pettingzoo")
    import twilight_env
    import twilight_env.envs.aec

    assert twilight_env.envs.aec.ENV_ID is twilight_env.ENV_ID


def test_git_hash(monkeypatch):
    from twilight_env.util.report import git_hash

    h = git_hash()
    if h is not None:  # in a git checkout: the commit, marked when tracked files differ
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", h)

    def no_git(*a, **k):
        raise OSError("no git")

    monkeypatch.setattr(subprocess, "run", no_git)
    assert git_hash() is None
