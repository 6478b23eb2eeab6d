"""No function of the package is over :data:`MAX_LINES` lines, compiled kernels on the allow-list aside.

A function's length is counted from its ``def`` line to its last line (decorators not
counted; nested functions and methods are counted on their own and inside the function
that holds them). The scan covers every module of ``twilight_env/``, ``agents/``,
``training/`` and ``experiments/``.

:data:`LONG_KERNELS` names the functions that may stay longer, each with its reason: only
numba-compiled kernels (``@numba.njit``), where a call inside the hot loop costs time and
any split is measured first with ``benchmarks/ab_speed.py``. The list cannot go stale: an
entry that no longer exists, is no longer compiled, or is back within the limit fails the
test, so a kernel that is split leaves the list in the same change.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = ("twilight_env", "agents", "training", "experiments")
"""Top-level folders of the package (they install as ``twilight_env``, ``twilight_env.agents``, ...)."""
MAX_LINES = 100
"""The most lines a function may have, ``def`` line to last line (lines)."""

LONG_KERNELS: dict[str, str] = {}
"""Functions allowed over :data:`MAX_LINES`: ``"path::name"`` -> why it stays long."""


def functions(path: Path) -> list[tuple[str, int, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """``(qualified name, lines, node)`` of every function and method in ``path``
    (``Class.method``, ``outer.inner``)."""
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out.append((name, child.end_lineno - child.lineno + 1, child))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return out


def package_functions(root: Path = ROOT) -> dict[str, tuple[int, ast.AST]]:
    """``{"path::name": (lines, node)}`` over the package folders under ``root``."""
    found = {}
    for folder in PACKAGE_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for name, lines, node in functions(path):
                found[f"{rel}::{name}"] = (lines, node)
    return found


def too_long(found: dict[str, tuple[int, ast.AST]], allowed=LONG_KERNELS) -> list[str]:
    """``"path::name (N lines)"`` of each function over :data:`MAX_LINES` that is not allowed."""
    return [f"{key} ({lines} lines)" for key, (lines, _) in sorted(found.items())
            if lines > MAX_LINES and key not in allowed]


def is_compiled(node: ast.AST) -> bool:
    """True if the function carries a ``numba.njit`` / ``numba.jit`` decorator (called or bare)."""
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit"):
            return True
    return False


@pytest.fixture(scope="module")
def found():
    return package_functions()


def test_no_function_is_over_the_limit(found):
    long = too_long(found)
    assert not long, (f"functions over {MAX_LINES} lines (def line to last line): {', '.join(long)}; split them, "
                      f"or, for a compiled numba kernel whose split measured slower (benchmarks/ab_speed.py), "
                      f"add it to LONG_KERNELS in tests/test_function_length.py with the reason")


def stale_entries(found, allowed=LONG_KERNELS) -> list[str]:
    """Entries of the allow-list that are gone, not compiled, or back within the limit."""
    out = []
    for key in sorted(allowed):
        if key not in found:
            out.append(f"LONG_KERNELS names {key}, which is not a function of the package; remove the entry")
            continue
        lines, node = found[key]
        if not is_compiled(node):
            out.append(f"LONG_KERNELS names {key}, which is not a numba kernel; only compiled kernels may stay long")
        elif lines <= MAX_LINES:
            out.append(f"LONG_KERNELS names {key}, which has {lines} lines (within {MAX_LINES}); remove the entry")
    return out


def test_every_allowed_kernel_exists_is_compiled_and_is_long(found):
    problems = stale_entries(found)
    assert not problems, "\n".join(problems)


def test_a_stale_allow_list_entry_fails(found):
    """Every kernel is within the limit today; an entry naming one of them, or a missing
    function, is reported."""
    allowed = {"agents/_solver_nb.py::search": "x", "agents/nowhere.py::f": "x"}
    problems = stale_entries(found, allowed)
    assert any("_solver_nb.py::search, which has" in p for p in problems), problems
    assert any("nowhere.py::f, which is not a function" in p for p in problems), problems


def test_the_scan_finds_a_long_function_methods_and_nested_ones(tmp_path):
    def block(indent: str, last: str) -> str:
        return "".join(f"{indent}x{i} = {i}\n" for i in range(MAX_LINES - 2)) + f"{indent}{last}\n"

    source = ("import numba\n\n\ndef long():\n" + block("    ", "y = 0") + "    return 0\n\n\n"
              "def ok():\n" + block("    ", "return 0") + "\n\n"
              "class C:\n    def method(self):\n        def inner():\n" + block("            ", "y = 1")
              + "            return 1\n        return inner\n\n\n"
              "@numba.njit(cache=True)\ndef kernel():\n" + block("    ", "y = 2") + "    return 2\n")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "m.py").write_text(source)
    found = package_functions(tmp_path)
    assert found["agents/m.py::ok"][0] == MAX_LINES
    assert found["agents/m.py::long"][0] == MAX_LINES + 1
    assert found["agents/m.py::C.method.inner"][0] == MAX_LINES + 1
    assert found["agents/m.py::C.method"][0] == MAX_LINES + 3
    assert found["agents/m.py::kernel"][0] == MAX_LINES + 1
    assert too_long(found, {"agents/m.py::kernel": "compiled"}) == [
        f"agents/m.py::C.method ({MAX_LINES + 3} lines)", f"agents/m.py::C.method.inner ({MAX_LINES + 1} lines)",
        f"agents/m.py::long ({MAX_LINES + 1} lines)"]
    assert is_compiled(found["agents/m.py::kernel"][1]) and not is_compiled(found["agents/m.py::long"][1])
