"""Rooms stay small: no function of the package is over :data:`MAX_LINES` lines, no source
file over :data:`MAX_FILE_LINES` lines, and fewer than :data:`MAX_OVER_SOFT` + 1 functions
over :data:`SOFT_MAX_LINES` lines; compiled kernels on the allow-lists aside.

A function's length is counted from its ``def`` line to its last line (decorators not
counted; nested functions and methods are counted on their own and inside the function
that holds them). A file's length is its number of lines. The scan covers every module of
``twilight_env/``, ``agents/``, ``training/`` and ``experiments/`` (for files: every source
file, :data:`SOURCE_SUFFIXES`).

:data:`LONG_KERNELS` names the functions that may stay longer, and
:data:`LONG_KERNEL_FILES` the files, each with its reason: only compiled kernels (a
function with ``@numba.njit``, a module holding one, or C source), where a call inside the
hot loop costs time and any split is measured first with ``benchmarks/ab_speed.py``. The
lists cannot go stale: an entry that no longer exists, is no longer compiled, or is back
within the limit fails the test, so a kernel that is split leaves the list in the same
change.
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
MAX_FILE_LINES = 800
"""The most lines a source file of the package may have (lines)."""
SOURCE_SUFFIXES = (".py", ".c", ".js", ".css", ".html")
"""Endings of the files whose length is checked (the package's code; data files such as the
shipped networks and deal sets are held to bytes by ``tests/test_repository_size.py``)."""
LONG_KERNEL_FILES: dict[str, str] = {}
"""Files allowed over :data:`MAX_FILE_LINES`: repository path -> why it stays long. Empty:
every file, the compiled kernels (``agents/_*_nb.py``, ``twilight_env/rules/_engine_c.c``)
included, is within the limit."""
SOFT_MAX_LINES = 60
"""The length a function should keep to (lines); a few may pass it, up to :data:`MAX_LINES`."""
MAX_OVER_SOFT = 22
"""The most functions of the package over :data:`SOFT_MAX_LINES` lines (compiled kernels
included): a ceiling that only comes down."""


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


def source_lengths(root: Path = ROOT) -> dict[str, int]:
    """``{repository path: lines}`` of every source file (:data:`SOURCE_SUFFIXES`) in the
    package folders under ``root``."""
    out = {}
    for folder in PACKAGE_DIRS:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                out[path.relative_to(root).as_posix()] = len(path.read_text(encoding="utf-8").splitlines())
    return out


def is_kernel_file(path: Path) -> bool:
    """True for C source and for a Python module that holds a numba-compiled function."""
    if path.suffix == ".c":
        return True
    return path.suffix == ".py" and any(is_compiled(node) for _, _, node in functions(path))


def files_too_long(lengths: dict[str, int], allowed=LONG_KERNEL_FILES) -> list[str]:
    """``"path (N lines)"`` of each file over :data:`MAX_FILE_LINES` that is not allowed."""
    return [f"{rel} ({n} lines)" for rel, n in sorted(lengths.items()) if n > MAX_FILE_LINES and rel not in allowed]


def stale_file_entries(lengths: dict[str, int], root: Path = ROOT, allowed=LONG_KERNEL_FILES) -> list[str]:
    """Entries of the file allow-list that are gone, not compiled kernels, or back within the limit."""
    out = []
    for rel in sorted(allowed):
        if rel not in lengths:
            out.append(f"LONG_KERNEL_FILES names {rel}, which is not a source file of the package; remove the entry")
        elif not is_kernel_file(root / rel):
            out.append(f"LONG_KERNEL_FILES names {rel}, which holds no compiled kernel; only kernels may stay long")
        elif lengths[rel] <= MAX_FILE_LINES:
            out.append(f"LONG_KERNEL_FILES names {rel}, which has {lengths[rel]} lines (within {MAX_FILE_LINES}); "
                       "remove the entry")
    return out


def test_no_source_file_is_over_the_limit():
    long = files_too_long(source_lengths())
    assert not long, (f"source files over {MAX_FILE_LINES} lines: {', '.join(long)}; move a part into a sibling "
                      f"module (re-exporting its public names), or, for a compiled kernel whose split measured "
                      f"slower, add it to LONG_KERNEL_FILES in tests/test_function_length.py with the reason")


def test_every_allowed_kernel_file_exists_is_compiled_and_is_long():
    problems = stale_file_entries(source_lengths())
    assert not problems, "\n".join(problems)


def test_the_file_scan_counts_lines_and_checks_the_allow_list(tmp_path):
    """A planted file one line over the limit fails, one at the limit passes; an allowed kernel
    passes, and entries for a plain module, a short kernel and a missing file are reported."""
    (tmp_path / "agents").mkdir()
    (tmp_path / "training").mkdir()
    body = "".join(f"x{i} = {i}\n" for i in range(MAX_FILE_LINES - 3))
    (tmp_path / "agents" / "long.py").write_text(body + "y = 1\nz = 2\nw = 3\nv = 4\n")
    (tmp_path / "agents" / "ok.py").write_text(body + "y = 1\nz = 2\nw = 3\n")
    kernel = "import numba\n\n\n@numba.njit(cache=True)\ndef k():\n    return 0\n"
    (tmp_path / "agents" / "_k_nb.py").write_text(kernel + body)
    (tmp_path / "agents" / "_short_nb.py").write_text(kernel)
    (tmp_path / "training" / "page.js").write_text(body + "a\nb\nc\nd\n")
    (tmp_path / "training" / "net.pt").write_text(body + "a\nb\nc\nd\n")  # not source: not counted
    lengths = source_lengths(tmp_path)
    assert lengths["agents/ok.py"] == MAX_FILE_LINES and lengths["agents/long.py"] == MAX_FILE_LINES + 1
    assert "training/net.pt" not in lengths
    allowed = {"agents/_k_nb.py": "compiled", "agents/long.py": "x", "agents/_short_nb.py": "x", "agents/gone.py": "x"}
    assert files_too_long(lengths, {"agents/_k_nb.py": "compiled"}) == [
        f"agents/long.py ({MAX_FILE_LINES + 1} lines)", f"training/page.js ({MAX_FILE_LINES + 1} lines)"]
    problems = stale_file_entries(lengths, tmp_path, allowed)
    assert len(problems) == 3, problems
    assert "agents/_short_nb.py, which has 6 lines" in problems[0]
    assert "agents/gone.py, which is not a source file" in problems[1]
    assert "agents/long.py, which holds no compiled kernel" in problems[2]


def over_soft_limit(found: dict[str, tuple[int, ast.AST]]) -> list[str]:
    """``"path::name (N lines)"`` of each function over :data:`SOFT_MAX_LINES` lines."""
    return [f"{key} ({lines} lines)" for key, (lines, _) in sorted(found.items()) if lines > SOFT_MAX_LINES]


def test_few_functions_are_over_the_soft_limit(found):
    over = over_soft_limit(found)
    assert len(over) <= MAX_OVER_SOFT, (
        f"{len(over)} functions over {SOFT_MAX_LINES} lines (at most {MAX_OVER_SOFT}): {', '.join(over)}; "
        "split the new one")


def test_the_soft_limit_counts_functions_one_line_over(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(SOFT_MAX_LINES - 2))
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "m.py").write_text(f"def at():\n{body}    return 0\n\n\ndef over():\n{body}    y = 0\n"
                                              "    return 0\n")
    assert over_soft_limit(package_functions(tmp_path)) == [f"agents/m.py::over ({SOFT_MAX_LINES + 1} lines)"]
