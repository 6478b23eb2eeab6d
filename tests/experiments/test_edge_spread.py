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
    assert s["recipe"]["mean"] == pytest.approx(edges.mean()) == s["deal_level"]["mean"]
    assert (s["recipe"]["ci_low"], s["recipe"]["ci_high"]) == pytest.approx(spread.recipe_interval(x)[1:])
    # never narrower than the deal-level interval (the agents' share can only add)
    assert s["recipe"]["ci_high"] - s["recipe"]["ci_low"] >= s["deal_level"]["ci_high"] - s["deal_level"]["ci_low"] - 1e-9
    assert [a["run_deals"] for a in s["agents"]] == [5, 4, 6]
    assert [(p["upper"], p["lower"]) for p in s["pairs"]] == [
        ("heuristic", "random"), ("heuristic", "pimc:worlds=2"), ("random", "pimc:worlds=2")]
    assert s["pairs"][0]["difference"] == pytest.approx((x[:, 0] - x[:, 1]).mean())
    assert main(["edge", "--spread", *folders]) == 0
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= TERMINAL_WIDTH
    assert "F(2, 6) = " in printed and "The recipe's mean edge, if these agents are draws of one recipe" in " ".join(
        line.strip() for line in printed.splitlines())
    assert printed.startswith("Moon − Sun per deal over the first 4 deals of seed 3")
    assert main(["edge", "--spread", *folders[:2], "--spread", folders[2]]) == 0  # given twice: the folders add
    assert capsys.readouterr().out == printed


def test_with_two_agents_f_is_the_square_of_the_paired_t(runs):
    s = spread.spread_runs([str(runs / "h"), str(runs / "p")])
    d = _per_deal(runs / "h", 5) - _per_deal(runs / "p", 5)
    t = stats.ttest_1samp(d, 0.0)
    assert s["anova"]["f"] == pytest.approx(t.statistic ** 2)
    assert s["anova"]["p"] == pytest.approx(t.pvalue)
    assert (s["anova"]["df_agents"], s["anova"]["df_residual"]) == (1, 4)


@pytest.mark.parametrize("sd_agents", [0.0, 4.0])
def test_the_recipe_interval_covers_the_mean_over_agents_and_deals(sd_agents):
    """Tables drawn from the two-way random-effects model (deal effect SD 30, agent effect
    SD 0 or 4, the rest SD 8; 3 agents, 40 deals): the interval holds the model's mean
    about 95% of the time. The interval from the agents' spread alone (t with k − 1
    degrees of freedom on the k edges) holds the deals fixed and misses far more often."""
    rng = np.random.default_rng(46)
    n, k, reps, mu = 40, 3, 2000, -4.0
    hit = hit_spread_only = 0
    for _ in range(reps):
        x = (mu + rng.normal(0, 30, (n, 1)) + rng.normal(0, sd_agents, (1, k)) + rng.normal(0, 8, (n, k)))
        _, low, high = spread.recipe_interval(x)
        hit += low <= mu <= high
        e = x.mean(axis=0)
        half = stats.t.ppf(0.975, k - 1) * e.std(ddof=1) / math.sqrt(k)
        hit_spread_only += e.mean() - half <= mu <= e.mean() + half
    assert 0.93 <= hit / reps <= 0.975, hit / reps
    assert hit_spread_only / reps < 0.85, hit_spread_only / reps


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
    with pytest.raises(ValueError, match="spread.md' exists already; give --force"):
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
    with pytest.raises(ValueError, match="--out .* is a file; --out takes a folder"):
        spread.run_spread([h, r], out=str(afile))
    assert main(["edge", "--spread", h, r, "--force"]) == 2
    assert "--force goes with --out" in capsys.readouterr().err
    damaged = tmp_path / "damaged"  # per-deal points that no longer match the run's count of deals
    shutil.copytree(runs / "h", damaged)
    doc = json.loads((damaged / "edge.json").read_text())
    doc["results"][0]["moon_points"] = doc["results"][0]["moon_points"][:3]
    (damaged / "edge.json").write_text(json.dumps(doc))
    assert main(["edge", "--spread", h, str(damaged)]) == 2
    err = capsys.readouterr().err
    assert "its edge.json is damaged" in err and "5 deals × 3 plays" in err and "(3, 3)" in err
