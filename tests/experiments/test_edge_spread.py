"""``twilight edge --spread``: the agent-level error bar of an edge from several agents' runs
on the same deals (R7.5's Moon − Sun per deal, paired by deal)."""

import json
import math
import shutil

import numpy as np
import pytest
from scipy import stats

import twilight_env.experiments.edge.spread as spread
from twilight_env.cli import main
from twilight_env.experiments.edge.core import TERMINAL_WIDTH

OPTS = ["--quiet", "--boot", "10", "--matches", "20", "--workers", "1"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three one-agent runs on seed 3 (5, 4 and 6 deals) and one on seed 4."""
    root = tmp_path_factory.mktemp("spread")
    played = (("h", "heuristic", 5, 3), ("r", "random", 4, 3), ("p", "pimc:worlds=2", 6, 3),
              ("r4", "random", 4, 4))
    for name, spec, deals, seed in played:
        assert main(["edge", spec, "--deals", str(deals), "--seed", str(seed), "--out", str(root / name), *OPTS]) == 0
    return root


def _per_deal(folder, n):
    r = json.loads((folder / "edge.json").read_text())["results"][0]
    return np.mean(np.subtract(r["moon_points"], r["sun_points"]), axis=1)[:n]


def _shifted_copy(src, dst, shift):
    """A copy of run ``src`` whose solo scored ``shift`` more on every play: its edge is ``shift`` higher on every deal."""
    shutil.copytree(src, dst)
    doc = json.loads((dst / "edge.json").read_text())
    doc["results"][0]["moon_points"] = [[p + shift for p in deal] for deal in doc["results"][0]["moon_points"]]
    doc["results"][0]["label"] = f"{doc['results'][0]['label']} +{shift}"
    (dst / "edge.json").write_text(json.dumps(doc))
    return dst


def test_the_spread_over_the_deals_every_run_played(runs, capsys):
    folders = [str(runs / f) for f in ("h", "r", "p")]
    s = spread.spread_runs(folders)
    x = np.stack([_per_deal(runs / f, 4) for f in ("h", "r", "p")], axis=1)
    assert s["deals"] == 4 and s["seed"] == 3
    edges = x.mean(axis=0)
    assert [a["edge"] for a in s["agents"]] == pytest.approx(edges)
    assert s["mean"] == pytest.approx(edges.mean()) and s["sd"] == pytest.approx(edges.std(ddof=1))
    assert s["range"] == pytest.approx(edges.max() - edges.min())
    half = stats.t.ppf(0.975, 2) * edges.std(ddof=1) / math.sqrt(3)
    assert (s["recipe"]["ci_low"], s["recipe"]["ci_high"]) == pytest.approx((edges.mean() - half, edges.mean() + half))
    assert s["deal_level"]["mean"] == pytest.approx(edges.mean())
    assert [(p["upper"], p["lower"]) for p in s["pairs"]] == [
        ("heuristic", "random"), ("heuristic", "pimc:worlds=2"), ("random", "pimc:worlds=2")]
    assert s["pairs"][0]["difference"] == pytest.approx((x[:, 0] - x[:, 1]).mean())
    assert main(["edge", "--spread", *folders]) == 0
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= TERMINAL_WIDTH
    assert "F(2, 6) = " in printed and "the recipe's edge" in printed.lower()


def test_with_two_agents_f_is_the_square_of_the_paired_t(runs):
    s = spread.spread_runs([str(runs / "h"), str(runs / "p")])
    d = _per_deal(runs / "h", 5) - _per_deal(runs / "p", 5)
    t = stats.ttest_1samp(d, 0.0)
    assert s["anova"]["f"] == pytest.approx(t.statistic ** 2)
    assert s["anova"]["p"] == pytest.approx(t.pvalue)
    assert (s["anova"]["df_agents"], s["anova"]["df_residual"]) == (1, 4)


def test_known_offsets_are_recovered_beyond_deal_noise(runs, tmp_path):
    """Copies of one run shifted by 0, 3 and 9 points on every deal: the agents' edges are
    3 and 9 apart with no residual, so the spread is exactly theirs and F is infinite."""
    base = runs / "h"
    folders = [str(base), str(_shifted_copy(base, tmp_path / "a", 3)), str(_shifted_copy(base, tmp_path / "b", 9))]
    s = spread.spread_runs(folders)
    assert s["range"] == pytest.approx(9.0) and s["sd"] == pytest.approx(np.std([0, 3, 9], ddof=1))
    assert s["anova"]["sd_agents"] == pytest.approx(np.std([0, 3, 9], ddof=1))
    assert math.isinf(s["anova"]["f"]) and s["anova"]["p"] == 0.0
    assert [p["difference"] for p in s["pairs"]] == pytest.approx([-3.0, -9.0, -6.0])
    out = tmp_path / "out"
    spread.run_spread(folders, out=str(out))
    doc = json.loads((out / "spread.json").read_text())  # strict JSON: the infinite F is null
    assert doc["anova"]["f"] is None and doc["deals"] == 5
    md = (out / "spread.md").read_text()
    assert "| heuristic +3 |" in md and "-9.0 [-9.0, -9.0]" in md
    with pytest.raises(ValueError, match="holds spread.md, spread.json already; give --force"):
        spread.run_spread(folders, out=str(out))
    spread.run_spread(folders, out=str(out), force=True)


def test_runs_it_cannot_pair_are_refused(runs, tmp_path, capsys):
    h, r = str(runs / "h"), str(runs / "r")
    assert main(["edge", "--spread", h]) == 2
    assert "two or more runs" in capsys.readouterr().err
    assert main(["edge", "--spread", h, h + "/"]) == 2
    assert "names one folder twice" in capsys.readouterr().err
    assert main(["edge", "--spread", h, str(runs / "r4")]) == 2
    assert "different seeds" in capsys.readouterr().err
    twin = tmp_path / "twin"
    shutil.copytree(runs / "h", twin)
    assert main(["edge", "--spread", h, str(twin)]) == 2
    assert "one agent twice" in capsys.readouterr().err
    assert main(["edge", "--spread", h, str(tmp_path / "none")]) == 2
    assert "no finished edge run" in capsys.readouterr().err
    assert main(["edge", "--spread", h, r, "--deals", "3"]) == 2
    assert "the spread mode" in (err := capsys.readouterr().err) and "it takes --spread, --out, --force" in err
    mixed = tmp_path / "mixed"
    assert main(["edge", "--solo", "heuristic", "--sun", "random", "--deals", "3", "--seed", "3", "--out",
                 str(mixed), *OPTS]) == 0
    capsys.readouterr()
    assert main(["edge", "--spread", h, str(mixed)]) == 2
    assert "one agent on all three chairs" in capsys.readouterr().err
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(ValueError, match="is a file"):
        spread.run_spread([h, r], out=str(afile))
