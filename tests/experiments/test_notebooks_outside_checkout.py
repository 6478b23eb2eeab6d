"""The notebooks run from the installed package in any folder: nothing assumes a checkout
of the repository (``notebooks/`` is read from the checkout, but executed with the working
directory elsewhere); a section that shows the project's committed studies says why it
shows nothing there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run_elsewhere(name: str, cwd: Path, env: dict, monkeypatch, tmp: Path | None = None) -> str:
    """Execute ``notebooks/NAME`` with ``cwd`` as its working directory (temporary folders
    under ``tmp``, default ``cwd``); what it printed and displayed as text."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TMPDIR", str(tmp or cwd))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return "".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "")
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_the_ladder_notebook_runs_outside_a_checkout(tmp_path, monkeypatch):
    shown = _run_elsewhere("my_agent_on_ladder.ipynb", tmp_path, {"TWILIGHT_LADDER_DEALS": "4"}, monkeypatch)
    assert "| 1 | mine |" in shown and "4 deals (heldout-1)" in shown


def test_the_study_notebook_runs_outside_a_checkout_and_says_what_it_cannot_show(tmp_path, monkeypatch):
    from twilight_env.experiments.edge.solo_edge import run_study

    out = run_study(["random"], deals=3, seed=1, out=str(tmp_path / "edge"), workers=1, boot=5, matches=5,
                    progress=False, verbose=False)
    for var in ("TWILIGHT_EDGE_LADDER_DIR", "TWILIGHT_EDGE_INDIVIDUAL_DIRS"):
        monkeypatch.delenv(var, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    shown = _run_elsewhere("solo_edge.ipynb", work, {"TWILIGHT_EDGE_DIR": out}, monkeypatch)
    assert f"edge output: {out}" in shown and "N = 3 deals" in shown
    assert "not in a checkout of the repository, so no results/edge_vs_strength to show" in shown
    assert "no individual-scoring run found (outside a checkout set TWILIGHT_EDGE_INDIVIDUAL_DIRS)" in shown
    assert not os.listdir(work)  # it wrote nothing where it ran


def test_the_study_notebook_in_a_checkout_shows_the_projects_study(tmp_path, monkeypatch):
    """Run from notebooks/ with no run of its own (no out/edge__* there), it shows the
    committed study of the shipped network, naming its folder relative to the checkout."""
    if list(Path.cwd().glob("out/edge__*")) or list((ROOT / "out").glob("edge__*/edge.json")):
        pytest.skip("this checkout has twilight edge runs in out/, which the notebook shows first")
    for var in ("TWILIGHT_EDGE_DIR", "TWILIGHT_EDGE_LADDER_DIR", "TWILIGHT_EDGE_INDIVIDUAL_DIRS"):
        monkeypatch.delenv(var, raising=False)
    shown = _run_elsewhere("solo_edge.ipynb", ROOT / "notebooks", {}, monkeypatch, tmp=tmp_path)
    assert "edge output: results/edge_policy_it8_h2" in shown
