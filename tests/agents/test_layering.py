"""Dependencies run one way: ``training`` may import ``agents``, never the reverse."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            out.append((node.lineno, str(node.args[0].value)))
    return out


def test_no_module_under_agents_imports_training():
    """Every import statement (top level or inside a function) and every literal
    ``importlib.import_module``/``__import__`` under ``agents/`` is checked."""
    bad = []
    files = sorted((ROOT / "agents").rglob("*.py"))
    assert len(files) > 5
    for path in files:
        for line, name in _imported_modules(path):
            if name == "training" or name.startswith("training."):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, "agents/ must not import training/:\n" + "\n".join(bad)


def test_scan_sees_imports_inside_functions(tmp_path):
    """The scan above catches a lazy import (so it can fail)."""
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from twilight_env.training.selfplay import SelfPlay\n    import twilight_env.training.config\n")
    assert [n for _, n in _imported_modules(p)] == ["twilight_env.training.selfplay", "twilight_env.training.config"]


def test_neural_agent_plays_with_training_blocked():
    """The ``neural`` agent loads the shipped weights and plays a deal of each variant while
    ``import training`` is made to fail."""
    pytest.importorskip("torch")
    code = (
        "import sys\n"
        "sys.modules['twilight_env.training'] = None\n"
        "import numpy as np\n"
        "from twilight_env.agents.base import make_agent, play_deal\n"
        "from twilight_env.rules.engine import State\n"
        "for n in (4, 3):\n"
        "    st = State.random(np.random.default_rng(n), 0, n)\n"
        "    play_deal(st, [make_agent('neural:default')] * 4, np.random.default_rng(0))\n"
        "    assert st.done\n"
        "assert not any(m == 'twilight_env.training' or m.startswith('twilight_env.training.') for m in sys.modules if sys.modules[m])\n"
        "print('ok')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_features_import_without_torch():
    """``twilight_env.agents.nn`` and its feature encoding import without torch (only the network needs it)."""
    code = ("import sys\nimport twilight_env.agents.nn, twilight_env.agents.nn.features\n"
            "assert 'torch' not in sys.modules\nprint('ok')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
