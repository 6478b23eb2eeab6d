"""The checkout stays light: no tracked file over 8 MB outside the shipped weights, ``results/``
within its budget (results/README.md, "What the tree keeps"), one shipped file per network,
and every ``results/`` path the docs name either in the tree or in results/README.md's table
of files kept in the history (with the commit that brings it back)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from source_copy import copy_source

ROOT = Path(__file__).resolve().parents[1]

MAX_FILE_BYTES = 8_000_000
"""Largest tracked file outside ``agents/weights/`` (bytes)."""
MAX_WHEEL_BYTES = 8_000_000
"""Largest wheel (bytes)."""
RESULTS_BUDGET_BYTES = 25_000_000
"""Most bytes of tracked files under ``results/`` (results/README.md states the same budget)."""
DOCS = ["README.md", "docs/*.md", "training/README.md", "results/**/README.md"]
"""The documents whose ``results/...`` paths are checked."""


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def tracked_sizes(under: str = "") -> dict[str, int]:
    """Path -> size in bytes of every file in git's index (under a folder, or all): the sizes
    of the blobs ``git ls-files -s`` names, as a clone checks them out.

    Raises:
        subprocess.CalledProcessError: not inside a git checkout.
    """
    entries = [line.split("\t", 1) for line in _git("ls-files", "-s", "--", *([under] if under else [])).splitlines()]
    shas = [e[0].split()[1] for e in entries]
    out = subprocess.run(["git", "cat-file", "--batch-check=%(objectsize)"], cwd=ROOT, input="\n".join(shas) + "\n",
                         capture_output=True, text=True, check=True).stdout.split()
    return {path: int(size) for (_, path), size in zip(entries, out)}


needs_git = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                               reason="needs a git checkout (the sizes are those of the tracked files)")


def over_limit(sizes: dict[str, int], limit: int = MAX_FILE_BYTES) -> list[str]:
    """The paths over ``limit`` bytes outside ``agents/weights/``, with their sizes."""
    return [f"{p} ({s:,} bytes)" for p, s in sorted(sizes.items())
            if s > limit and not p.startswith("agents/weights/")]


def test_over_limit_names_big_files_outside_the_weights_only():
    sizes = {"agents/weights/big.npz": 9_000_000, "results/x/checkpoint.pt": 8_000_001, "docs/a.md": 10}
    assert over_limit(sizes) == ["results/x/checkpoint.pt (8,000,001 bytes)"]


@needs_git
def test_no_tracked_file_over_8_mb_outside_the_shipped_weights():
    big = over_limit(tracked_sizes())
    assert not big, f"tracked files over {MAX_FILE_BYTES:,} bytes (keep them out of git): {big}"


@needs_git
def test_results_stay_within_their_budget():
    sizes = tracked_sizes("results")
    total = sum(sizes.values())
    top = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    assert total <= RESULTS_BUDGET_BYTES, (f"results/ holds {total:,} bytes of tracked files, over its budget of "
                                           f"{RESULTS_BUDGET_BYTES:,} (results/README.md); largest: {top}")
    assert f"within {RESULTS_BUDGET_BYTES // 1_000_000} MB" in (ROOT / "results" / "README.md").read_text()


def test_one_shipped_file_per_network_and_every_one_read_by_name():
    """``agents/weights/`` holds one file per network, each the file a ``:default`` spec reads:
    ``neural`` (both backends), ``policy``, ``guided`` and ``exit`` (the same network as
    ``policy``), and the card-location model of ``inference=model``."""
    from twilight_env.agents import guided, neural, policy

    files = {p.name for p in (ROOT / "agents" / "weights").iterdir() if p.is_file() and p.name != "__init__.py"}
    stems = [Path(f).stem for f in files]
    assert len(stems) == len(set(stems)), f"a network shipped twice: {sorted(files)}"
    read = set()
    for n in (3, 4):
        read |= {neural.default_weights(n, "torch").name, neural.default_weights(n, "numpy").name,
                 policy.default_weights(n).name, guided.default_weights(n).name, f"inference_{n}p.pt"}
        assert neural.default_weights(n, "torch") == neural.default_weights(n, "numpy")
    assert files == read, f"shipped but read by no agent: {sorted(files - read)}; read but missing: {sorted(read - files)}"
    torch = pytest.importorskip("torch")  # noqa: F841 (the torch agents' modules import it)
    from twilight_env.agents import exit as ex
    from twilight_env.agents import inference

    for n in (3, 4):
        assert ex.default_weights(n) == policy.default_weights(n)
        assert inference.default_weights(n).name in files


_PATH = re.compile(r"results/[A-Za-z0-9_.=/-]*[A-Za-z0-9_]")


def documented_results_paths(texts: dict[str, str]) -> dict[str, set[str]]:
    """``results/...`` paths named in documents -> the documents naming them; placeholders (a
    path with a capital letter outside ``README.md``, e.g. ``3p_itK``, ``RUN``) are left out."""
    found: dict[str, set[str]] = {}
    for doc, text in texts.items():
        for path in _PATH.findall(text):
            if re.search(r"[A-Z]", path.replace("README.md", "")):
                continue
            found.setdefault(path.rstrip("."), set()).add(doc)
    return found


def missing_paths(found: dict[str, set[str]], tracked: set[str], history: str) -> list[str]:
    """The documented paths that are neither tracked (a file, a folder holding tracked files, or
    the prefix of such a name, as in ``edge_vs_strength/edge_*``) nor named in ``history`` (the
    text of results/README.md's history section)."""
    out = []
    for path, docs in sorted(found.items()):
        if any(t == path or t.startswith(path) for t in tracked):
            continue
        if path.removeprefix("results/") in history or path.removeprefix("results/").rstrip("/") + "/" in history:
            continue
        out.append(f"{path} (named in {', '.join(sorted(docs))})")
    return out


def test_missing_paths_finds_a_removed_file_unless_the_history_names_it():
    found = {"results/a/checkpoint.pt": {"docs/X.md"}, "results/b/edge.json": {"README.md"},
             "results/edge_": {"docs/X.md"}}
    tracked = {"results/b/edge.json", "results/edge_1/edge.json"}
    assert missing_paths(found, tracked, "") == ["results/a/checkpoint.pt (named in docs/X.md)"]
    assert missing_paths(found, tracked, "| `a/checkpoint.pt` | ... | `abc` |") == []
    assert documented_results_paths({"d": "see `results/exit_scale/3p_itK/checkpoint.pt` and results/x/y."}) == {
        "results/x/y": {"d"}}


def _ignored(path: str) -> bool:
    """Whether git ignores ``path`` (relative to the repository root)."""
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0


@needs_git
def test_every_results_path_the_docs_name_is_kept_or_in_the_history():
    texts = {}
    for pattern in DOCS:
        for f in sorted(ROOT.glob(pattern)):
            texts[f.relative_to(ROOT).as_posix()] = f.read_text(encoding="utf-8")
    readme = (ROOT / "results" / "README.md").read_text(encoding="utf-8")
    history = readme.split("## What the tree keeps", 1)[1]
    tracked = set(tracked_sizes("results"))
    # A path on disk that git would add (new, not yet committed) counts as kept; one that git
    # ignores (a file a command regenerates) does not, as a clean clone lacks it.
    found = {p: d for p, d in documented_results_paths(texts).items()
             if not (ROOT / p).exists() or _ignored(p)}
    missing = missing_paths(found, tracked, history)
    assert not missing, f"documented results/ paths neither in the tree nor in results/README.md's history: {missing}"


@needs_git
def test_the_wheel_is_under_8_mb(tmp_path):
    """The wheel of the files a clone has (tracked, plus new files not ignored), built in a
    folder of its own so that no earlier build's leftovers (``build/``) enter it."""
    src = copy_source(tmp_path / "src")
    out = tmp_path / "wheel"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                        str(src)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (wheel,) = out.glob("twilight_env-*.whl")
    with zipfile.ZipFile(wheel) as z:
        largest = sorted(((i.compress_size, i.filename) for i in z.infolist()), reverse=True)[:8]
    size = wheel.stat().st_size
    assert size < MAX_WHEEL_BYTES, f"the wheel is {size:,} bytes (at most {MAX_WHEEL_BYTES:,}); largest entries: {largest}"
