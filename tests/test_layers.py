"""The folders are the layers (docs/ARCHITECTURE.md, "Layers"): a module imports only its own
layer and the layers below it, every module of the package is on a row, and no modules
import each other in a circle. The test folders are named after the layers
(``test_every_test_folder_is_named_after_a_layer``).

Every import is checked: at the top of a module or inside a function, ``import x``,
``from x import y``, relative imports and literal ``importlib.import_module("x")``.
The table below is the one statement of the order; ARCHITECTURE.md shows the same rows
(``test_architecture_lists_the_same_layers``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (layer, folders or files of the repository), lowest first. The installed name of a path:
# twilight_env/... is twilight_env...., agents/... is twilight_env.agents...., and so on.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("util", ("twilight_env/util/",)),
    ("rules", ("twilight_env/rules/",)),
    ("obs", ("twilight_env/obs/",)),
    ("agents", ("agents/",)),
    ("envs", ("twilight_env/envs/",)),
    ("interop", ("twilight_env/interop/",)),
    ("records", ("twilight_env/records/",)),
    ("training", ("training/",)),
    ("serve", ("twilight_env/serve/",)),
    ("experiments", ("experiments/",)),
    ("cli", ("twilight_env/cli.py",)),
]

# The package's front door: `twilight_env` itself (the env() and raw_env() entry points, the
# version and the registry ids, loaded lazily) and the documented module names
# twilight_env.cards and twilight_env.scoring. Anything may import it for its constants;
# its own imports at module level are the standard library only, and it reaches the
# layers only inside functions (twilight_env.__getattr__) or as re-exports.
FACADE = ("twilight_env/__init__.py", "twilight_env/cards.py", "twilight_env/scoring.py")

# The test folders follow the same rows: tests/<layer>/ holds the tests of that layer's
# modules (the rules' tests in tests/rules, the environments' in tests/envs, ...); tests of
# the whole repository (the docs, the install, the sizes, this file) stand in tests/ itself.


def folders_of_tests(root: Path) -> list[str]:
    """The names of the folders directly under ``root/tests`` (caches and hidden ones left out)."""
    return sorted(p.name for p in (root / "tests").iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def stray_test_folders(folders, layers=LAYERS) -> list[str]:
    """One line for each test folder named after no layer of ``layers``."""
    names = [n for n, _ in layers]
    return [f"tests/{f}/ is named after no layer (the layers: {', '.join(names)}); move its tests to "
            "the folder of the layer they test, or to tests/ if they concern the whole repository"
            for f in sorted(folders) if f not in names]


TOP = {"twilight_env": "twilight_env", "agents": "twilight_env.agents", "training": "twilight_env.training",
       "experiments": "twilight_env.experiments"}


def module_name(rel: str) -> str:
    """Installed dotted name of a repository path (``agents/pimc.py`` -> ``twilight_env.agents.pimc``)."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([TOP[parts[0]]] + parts[1:])


def package_files(root: Path) -> dict[str, str]:
    """{installed module name: repository path} of every module of the package under ``root``."""
    out = {}
    for top in TOP:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            out[module_name(rel)] = rel
    return out


def layer_of(rel: str) -> int | None:
    for i, (_, places) in enumerate(LAYERS):
        for place in places:
            if rel == place or (place.endswith("/") and rel.startswith(place)):
                return i
    return None


def imports_of(path: Path, name: str) -> list[tuple[int, str, bool]]:
    """(line, imported name, at module level) of every import in a module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    top_level = {id(n) for n in tree.body}
    for n in tree.body:  # module-level try/if blocks count as module level
        if isinstance(n, (ast.If, ast.Try)):
            top_level |= {id(m) for m in ast.walk(n)}
    out = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[:len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", ""))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names = [node.args[0].value]
        out += [(node.lineno, n, id(node) in top_level) for n in names]
    return out


def resolve(target: str, modules: dict[str, str]) -> str | None:
    """The package module an imported name lands in (the longest known prefix), or None
    for a module outside the package."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def violations(root: Path) -> list[str]:
    """Every import against the layer order, every module on no row, and every circle."""
    modules = package_files(root)
    problems = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, rel in modules.items():
        facade = rel in FACADE
        mine = layer_of(rel)
        if mine is None and not facade:
            problems.append(f"{rel} is on no row of the layer table (tests/test_layers.py LAYERS)")
            continue
        seen = set()
        for line, imported, module_level in imports_of(root / rel, name):
            target = resolve(imported, modules)
            if target is None or target == name or (line, target) in seen:
                continue
            seen.add((line, target))
            graph[name].add(target)
            target_rel = modules[target]
            if target_rel in FACADE:
                continue  # the front door's constants (version, registry ids) are for everyone
            if facade:
                if module_level and rel == "twilight_env/__init__.py":
                    problems.append(f"{rel}:{line} imports {imported} at module level; the package's "
                                    "front door loads the layers only on first use")
                continue
            theirs = layer_of(target_rel)
            if theirs is not None and theirs > mine:
                problems.append(f"{rel}:{line} imports {imported}: layer {LAYERS[mine][0]!r} may not "
                                f"import the higher layer {LAYERS[theirs][0]!r}")
    problems += [f"import circle: {' -> '.join(c)}" for c in circles(graph)]
    return problems


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules (Tarjan), as a list of names.
    A package's ``__init__`` importing its own submodules is not a circle of design and
    is left out (the submodule import runs the ``__init__`` first by Python's rules)."""
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group) + [sorted(group)[0]])

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_import_follows_the_layer_order_and_every_module_is_on_a_row():
    problems = violations(ROOT)
    assert not problems, "\n".join(problems)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for top in TOP:
        (tmp_path / top).mkdir(exist_ok=True)
    return tmp_path


def test_a_planted_upward_import_a_stray_module_and_a_circle_fail(tmp_path):
    root = _tree(tmp_path, {
        "twilight_env/__init__.py": "import sys\n",
        "twilight_env/rules/__init__.py": "",
        "twilight_env/rules/engine.py": "def f():\n    from twilight_env.envs.aec import raw_env\n",
        "twilight_env/envs/__init__.py": "",
        "twilight_env/envs/aec.py": "from ..rules import cards\n",
        "twilight_env/rules/cards.py": "",
        "twilight_env/stray.py": "",
        "agents/__init__.py": "",
        "agents/a.py": "import twilight_env.agents.b\n",
        "agents/b.py": "from twilight_env.agents import a\n",
        "training/__init__.py": "",
        "training/t.py": "import importlib\nimportlib.import_module('twilight_env.experiments.x')\n",
        "experiments/__init__.py": "",
        "experiments/x.py": "from twilight_env.training.u import f\n",
        "training/u.py": "",
    })
    problems = violations(root)
    text = "\n".join(problems)
    assert "twilight_env/rules/engine.py:2 imports twilight_env.envs.aec.raw_env: layer 'rules'" in text, text
    assert "twilight_env/stray.py is on no row" in text
    assert "import circle: twilight_env.agents.a -> twilight_env.agents.b -> twilight_env.agents.a" in text
    assert "training/t.py:2 imports twilight_env.experiments.x: layer 'training' may not import" in text
    assert not any("envs/aec.py" in p or "experiments/x.py" in p for p in problems), text  # downward is fine
    assert len(problems) == 4, text


def test_the_front_door_imports_no_layer_at_module_level(tmp_path):
    root = _tree(tmp_path, {"twilight_env/__init__.py": "from twilight_env.envs.aec import raw_env\n",
                            "twilight_env/envs/__init__.py": "", "twilight_env/envs/aec.py": ""})
    assert any("front door" in p for p in violations(root))


def test_architecture_lists_the_same_layers():
    """docs/ARCHITECTURE.md's layer table has one row per layer of LAYERS, in the same order,
    naming the same folders."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith("| layer")]
    names = [r.split("|")[1].strip() for r in rows]
    assert names == [n for n, _ in LAYERS], names
    for row, (_, places) in zip(rows, LAYERS):
        for place in places:
            assert f"`{place}`" in row, (place, row)


@pytest.mark.parametrize("rel,installed", [
    ("agents/pimc.py", "twilight_env.agents.pimc"), ("training/train.py", "twilight_env.training.train"),
    ("experiments/edge/solo_edge.py", "twilight_env.experiments.edge.solo_edge"),
    ("twilight_env/rules/engine.py", "twilight_env.rules.engine"), ("twilight_env/__init__.py", "twilight_env")])
def test_module_names_are_the_installed_ones(rel, installed):
    """The names the scan gives are the ones pyproject.toml's package-dir installs."""
    assert module_name(rel) == installed


def test_every_test_folder_is_named_after_a_layer():
    problems = stray_test_folders(folders_of_tests(ROOT))
    assert not problems, "\n".join(problems)


def test_a_test_folder_on_no_layer_fails(tmp_path):
    """A planted folder name, a layer left out of a copy of the table, and a folder found on
    disk (beside a cache folder, which is not a test folder) are each named."""
    real = folders_of_tests(ROOT)
    assert stray_test_folders(real + ["vector"]) == [stray_test_folders(["vector"])[0]]
    assert "tests/vector/ is named after no layer" in stray_test_folders(["vector"])[0]
    without_rules = [row for row in LAYERS if row[0] != "rules"]
    assert [p.split(" ")[0] for p in stray_test_folders(["rules", "envs"], without_rules)] == ["tests/rules/"]
    for name in ("engine", "rules", "__pycache__", ".hidden"):
        (tmp_path / "tests" / name).mkdir(parents=True)
    (tmp_path / "tests" / "test_x.py").write_text("")
    assert folders_of_tests(tmp_path) == ["engine", "rules"]
    assert [p.split(" ")[0] for p in stray_test_folders(folders_of_tests(tmp_path))] == ["tests/engine/"]
