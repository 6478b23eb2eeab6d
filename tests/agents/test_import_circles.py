"""No import circles between the compiled kernels and their callers: the lower module of
each pair imports nothing of the higher one (top-level or inside a function), and the
modules of ``agents/``, ``twilight_env/rules/`` and ``twilight_env/obs/`` form no circle."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"twilight_env.agents": ROOT / "agents", "twilight_env.rules": ROOT / "twilight_env" / "rules",
           "twilight_env.obs": ROOT / "twilight_env" / "obs"}


def _modules() -> dict[str, Path]:
    out = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([prefix] + parts)] = path
    return out


def _imports(name: str, path: Path, known) -> set[str]:
    """Known modules that ``path`` (module ``name``) imports anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


MODULES = _modules()
GRAPH = {name: _imports(name, path, MODULES) for name, path in MODULES.items()}


@pytest.mark.parametrize("lower,higher", [
    ("twilight_env.agents._solver_nb", "twilight_env.agents.solver"),
    ("twilight_env.agents.fast_ismcts", "twilight_env.agents.ismcts"),
    ("twilight_env.obs._encoding_nb", "twilight_env.obs.encoding"),
])
def test_lower_module_does_not_import_the_higher(lower, higher):
    assert lower in GRAPH and higher in GRAPH
    assert higher not in GRAPH[lower], f"{lower} imports {higher}"


def _circles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_circles_in_agents_rules_and_obs():
    assert len(GRAPH) > 25
    assert _circles(GRAPH) == []


def test_the_scan_finds_a_circle_and_a_lazy_import(tmp_path):
    """The scan sees an import inside a function, and the circle finder reports a circle."""
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from twilight_env.agents import solver\n")
    assert "twilight_env.agents.solver" in _imports("twilight_env.agents._solver_nb", p, MODULES)
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
