"""Without torch, the training programs stop with one line naming the ``train`` extra
(twilight_env/util/extras.py), not a traceback from deep inside an import."""

import subprocess
import sys

import pytest

from twilight_env.util.extras import available, install_hint, require

PROGRAMS = ["exit", "best_response", "train", "bench", "train_inference"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_without_torch_is_one_line_naming_the_extra(name):
    code = ("import sys, runpy\nsys.modules['torch'] = None\nsys.argv = ['x', '--help']\n"
            f"runpy.run_module('twilight_env.training.{name}', run_name='__main__')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, (r.stdout[-500:], r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert lines[0].startswith(f"error: twilight_env.training.{name} needs torch") and "'train' extra" in lines[0]
    assert 'pip install "twilight-env[train]"' in lines[0] and "torch==2.13.0" in lines[0]


def test_require_raises_import_error_when_imported_and_passes_when_installed(monkeypatch):
    require("numpy", "study", "x")  # installed: nothing happens
    monkeypatch.setitem(sys.modules, "no_such_module_here", None)
    assert not available("no_such_module_here") and not available("no_such_parent.child")
    with pytest.raises(ImportError, match=r"needs no_such_module_here, which is not installed; install the 'fast' "):
        require("no_such_module_here", "fast", "the compiled search")
    with pytest.raises(SystemExit, match="^error: the compiled search needs"):
        require("no_such_module_here", "fast", "the compiled search", as_main=True)
    assert install_hint("study") == 'pip install "twilight-env[study]" (from a checkout: pip install -e ".[study]")'


def test_a_deprecated_torch_agent_without_torch_names_its_replacement_that_needs_none():
    """`exit:default` without torch: the one line names the extra and that `policy` plays the
    same network without torch (`policy` reads the .npz with NumPy)."""
    code = ("import sys\nsys.modules['torch'] = None\nimport warnings\nwarnings.simplefilter('ignore')\n"
            "from twilight_env.agents.base import make_agent\n"
            "try:\n    make_agent('exit:default')\nexcept ImportError as e:\n    print(e)\n"
            "print(type(make_agent('policy:default')).__name__)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    first, second = r.stdout.strip().splitlines()
    assert "'train' extra" in first and "'policy' plays the same network without it" in first, first
    assert second == "PolicyAgent"
