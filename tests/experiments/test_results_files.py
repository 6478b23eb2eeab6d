"""The figures of the kept edge runs recompute from their per-deal files (results/README.md,
"What the tree keeps"): for every team-scoring ``results/**/edge.json``, Moon − Sun per deal
(its three plays averaged) gives the stored mean and Student-t interval, and the interval the
folder's ``edge.md`` prints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy")

from twilight_env.experiments.edge.solo_edge import deal_figures  # noqa: E402
from twilight_env.util.report import fmt_ci  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted((ROOT / "results").rglob("edge.json"))


def test_there_are_edge_runs_to_check():
    assert len(RUNS) >= 15, [str(p) for p in RUNS]


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.parent.relative_to(ROOT / "results").as_posix())
def test_an_edge_runs_figures_recompute_from_its_per_deal_points(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    md = (path.parent / "edge.md").read_text(encoding="utf-8") if (path.parent / "edge.md").is_file() else None
    for r in doc["results"]:
        moon, sun = np.asarray(r["moon_points"], dtype=float), np.asarray(r["sun_points"], dtype=float)
        assert moon.shape == sun.shape and moon.shape[1] == 3
        got = deal_figures(moon, sun)["diff"]
        kept = r["figures"]["diff"]
        for key in ("mean", "ci_low", "ci_high"):
            assert got[key] == pytest.approx(kept[key], rel=1e-12, abs=1e-12), (r["label"], key)
        if md is not None:
            shown = fmt_ci(got["mean"], got["ci_low"], got["ci_high"], signed=True)
            assert shown in md or shown.replace("+", "") in md, (r["label"], shown)


SPREADS = sorted((ROOT / "results").rglob("spread.json"))


@pytest.mark.parametrize("path", SPREADS, ids=lambda p: p.parent.relative_to(ROOT / "results").as_posix())
def test_a_kept_spread_recomputes_from_the_runs_it_names(path, monkeypatch):
    """``twilight edge --spread`` over the kept runs gives the stored figures and ``spread.md``."""
    from twilight_env.experiments.edge.spread import spread_markdown, spread_runs

    kept = json.loads(path.read_text(encoding="utf-8"))
    monkeypatch.chdir(ROOT)  # the folders are named from the repository root, as the command was run
    got = spread_runs([a["folder"] for a in kept["agents"]])
    for key in ("mean", "sd", "range", "deals"):
        assert got[key] == pytest.approx(kept[key], rel=1e-12), key
    for key in ("ci_low", "ci_high", "df"):
        assert got["recipe"][key] == pytest.approx(kept["recipe"][key], rel=1e-12), key
    assert spread_markdown(got) == (path.parent / "spread.md").read_text(encoding="utf-8")


def test_the_seed_networks_spread_is_kept():
    assert [p.parent.name for p in SPREADS] == ["edge_seeds_h2"]
