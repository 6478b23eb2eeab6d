"""Runs write nothing into the source checkout: the git revision is read without locking
the index, and numba's kernel cache goes to the user's cache folder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from twilight_env.util import report
from twilight_env.util.cachedir import configure_numba_cache, user_cache_dir


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0, reason="no git")
def test_git_hash_leaves_the_index_alone(tmp_path, monkeypatch):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "a")
    # stale stat data in the index: a plain `git status` refreshes and rewrites .git/index
    os.utime(tmp_path / "a.txt", (1_000_000_000, 1_000_000_000))
    index = tmp_path / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    monkeypatch.setattr(report, "__file__", str(tmp_path / "report.py"))  # the "checkout" is tmp_path
    h = report.git_hash()
    assert h is not None and len(h) == 40  # same content: not dirty
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    assert not (tmp_path / ".git" / "index.lock").exists()
    (tmp_path / "a.txt").write_text("b\n")
    assert report.git_hash().endswith("-dirty")
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


def test_user_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert user_cache_dir() == tmp_path / "twilight-env"
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert configure_numba_cache() == str(tmp_path / "twilight-env" / "numba")
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "twilight-env" / "numba")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))  # the user's choice stays
    assert configure_numba_cache() == str(tmp_path / "mine")


_KERNEL = textwrap.dedent("""
    import os, sys
    import twilight_env  # sets NUMBA_CACHE_DIR before numba compiles anything
    import numba
    sys.path.insert(0, sys.argv[1])
    import cached_kernel
    print(cached_kernel.f(3))
    print(os.environ.get("NUMBA_CACHE_DIR"))
""")


@pytest.mark.parametrize("user_set", [False, True])
def test_numba_cache_lands_in_the_user_cache_folder(tmp_path, user_set):
    pytest.importorskip("numba")
    src = tmp_path / "src"
    src.mkdir()
    (src / "cached_kernel.py").write_text("import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    want = tmp_path / "xdg" / "twilight-env" / "numba"
    if user_set:
        want = tmp_path / "chosen"
        env["NUMBA_CACHE_DIR"] = str(want)
    r = subprocess.run([sys.executable, "-c", _KERNEL, str(src)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["4", str(want)]
    cached = [os.path.join(d, f) for d, _, fs in os.walk(want) for f in fs]
    assert any(f.endswith(".nbi") for f in cached), cached
    assert not (src / "__pycache__").exists() or not any(
        f.endswith((".nbi", ".nbc")) for f in os.listdir(src / "__pycache__"))
