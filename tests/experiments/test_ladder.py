"""``twilight ladder``: steps between consecutive rungs on a held-out deal set, ratings
with bootstrap intervals, resumable; the held-out seeds are refused by training."""

import json
import math
import sys

import numpy as np
import pytest

import twilight_env.experiments.ladder as ladder
from twilight_env.records.dealsets import generate_deals
from twilight_env.cli import main
from twilight_env.rules.heldout import HELDOUT_SEEDS, check_not_heldout, heldout_seed

SMALL = dict(num_players=3, deals=6, boot=50, workers=1, progress=False, verbose=False)


def _doc(folder):
    return json.loads((folder / "ladder.json").read_text())


def test_ladder_writes_steps_ratings_and_plot(tmp_path):
    out = tmp_path / "lad"
    ladder.run_ladder(["random", "heuristic"], out=str(out), **SMALL)
    doc = _doc(out)
    assert doc["deals_source"]["name"] == "heldout-1"
    assert doc["seed"] == HELDOUT_SEEDS["heldout-1"]
    assert doc["deals"] == 6 and doc["rungs"] == ["random", "heuristic"]
    (step,) = doc["steps"]
    assert (step["upper"], step["lower"]) == ("heuristic", "random")
    pts = np.array(step["points"])
    assert pts.shape == (6, 2)
    assert step["margin"] == pytest.approx(pts.mean())
    assert step["holds"] == (step["ci_low"] > 0)
    assert doc["ratings"][0]["points"] == 0
    assert doc["ratings"][1]["points"] == pytest.approx(step["margin"])
    lo, hi = doc["ratings"][1]["points_ci"]
    assert lo <= step["margin"] <= hi
    assert (out / "ladder.png").stat().st_size > 5000
    assert "heldout-1" in (out / "ladder.md").read_text()
    assert not (out / ladder.STEPS_FILE).exists()


def test_the_held_out_deals_are_the_named_seed(tmp_path):
    out = tmp_path / "lad"
    ladder.run_ladder(["random", "random"], out=str(out), deal_set_name="heldout-2", **SMALL)
    doc = _doc(out)
    assert doc["seed"] == heldout_seed("heldout-2")
    assert doc["deals_source"]["seed"] == HELDOUT_SEEDS["heldout-2"]
    # the step was played on the named set's deals: replaying it on those deals gives its points
    deals = generate_deals(6, HELDOUT_SEEDS["heldout-2"])
    again = ladder.play_step("random", "random", deals, 3, doc["seed"], 1, 0, False)
    assert doc["steps"][0]["points"] == again["points"]
    other = ladder.play_step("random", "random", generate_deals(6, 5), 3, doc["seed"], 1, 0, False)
    assert other["points"] != again["points"]


def test_ratings_sum_the_margins_and_bootstrap_the_deals():
    rng = np.random.default_rng(0)
    a = rng.normal(30, 40, size=(50, 2))
    b = rng.normal(10, 40, size=(50, 2))
    r = ladder.ratings([{"points": a}, {"points": b}], boot=400, seed=1)
    assert [x["points"] for x in r] == pytest.approx([0, a.mean(), a.mean() + b.mean()])
    for x in r[1:]:
        assert x["points_ci"][0] < x["points"] < x["points_ci"][1]
        assert x["elo_ci"][0] <= x["elo"] <= x["elo_ci"][1]
    # the top rung's interval is wider than one step's: two steps' noise adds up
    assert np.diff(r[2]["points_ci"])[0] > np.diff(r[1]["points_ci"])[0]
    with pytest.raises(ValueError, match="same deals"):
        ladder.ratings([{"points": a}, {"points": b[:10]}], boot=10, seed=1)


def test_elo_of_a_win_rate():
    assert ladder.elo_of(0.5) == 0
    assert ladder.elo_of(1 / (1 + 10 ** (-200 / 400))) == pytest.approx(200)
    assert math.isfinite(ladder.elo_of(1.0)) and ladder.elo_of(0.0) < 0


def test_interrupted_ladder_resumes_to_the_same_figures(tmp_path, monkeypatch):
    rungs = ["random", "heuristic", "random"]
    ref, cut = tmp_path / "ref", tmp_path / "cut"
    ladder.run_ladder(rungs, out=str(ref), **SMALL)
    real = ladder.play_step
    calls = []

    def failing(*a, **k):
        calls.append(a[:2])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(ladder, "play_step", failing)
    with pytest.raises(KeyboardInterrupt):
        ladder.run_ladder(rungs, out=str(cut), **SMALL)
    saved = json.loads((cut / ladder.STEPS_FILE).read_text())
    assert len(saved["steps"]) == 1
    calls.clear()
    monkeypatch.setattr(ladder, "play_step", lambda *a, **k: (calls.append(a[:2]), real(*a, **k))[1])
    ladder.run_ladder(resume=str(cut), workers=1, progress=False, verbose=False)
    assert calls == [("random", "heuristic")]  # only the missing step was played
    strip = [{k: v for k, v in s.items() if k != "seconds"} for s in _doc(cut)["steps"]]
    assert strip == [{k: v for k, v in s.items() if k != "seconds"} for s in _doc(ref)["steps"]]
    assert _doc(cut)["ratings"] == _doc(ref)["ratings"]


def test_ladder_without_openskill_raises_before_making_its_folder(tmp_path, monkeypatch):
    """The Python entry point checks the study extra's packages before it makes any folder
    or plays a step (the command line checks them before it runs)."""
    monkeypatch.setitem(sys.modules, "openskill", None)
    with pytest.raises(ImportError, match=r"the ladder needs openskill, which is not installed; install the 'study'"):
        ladder.run_ladder(["random", "heuristic"], out=str(tmp_path / "parent" / "lad"), **SMALL)
    assert list(tmp_path.iterdir()) == []


def test_ladder_errors_are_clear(tmp_path, capsys):
    with pytest.raises(ValueError, match="at least two rungs"):
        ladder.run_ladder(["heuristic"], out=str(tmp_path / "a"), **SMALL)
    with pytest.raises(ValueError, match="valid agents"):
        ladder.run_ladder(["heuristic", "nonsense"], out=str(tmp_path / "b"), **SMALL)
    with pytest.raises(ValueError, match="no ladder progress file"):
        ladder.run_ladder(resume=str(tmp_path))
    with pytest.raises(ValueError, match="do not give rungs"):
        ladder.run_ladder(["random", "heuristic"], resume=str(tmp_path))
    with pytest.raises(ValueError, match="unknown held-out deal set"):
        heldout_seed("heldout-9")
    assert main(["ladder", "random", "heuristic", "--deals", "1", "--quiet", "--out", str(tmp_path / "c")]) == 2
    assert "at least 2" in capsys.readouterr().err


def test_training_refuses_held_out_seeds():
    assert check_not_heldout(5) == 5
    with pytest.raises(ValueError, match="held-out"):
        check_not_heldout(HELDOUT_SEEDS["heldout-1"], "evaluation seed")
    pytest.importorskip("torch")
    from twilight_env.training.selfplay import eval_deals

    with pytest.raises(ValueError, match="held-out deal set 'heldout-3'"):
        eval_deals(3, 2, HELDOUT_SEEDS["heldout-3"])


def test_plot_names_the_deal_set_and_marks_a_failing_step(tmp_path, monkeypatch):
    """The title names the held-out set (not its seed), and a step that does not hold is
    drawn red and labelled."""
    import json
    from pathlib import Path

    import matplotlib.axes

    from twilight_env.experiments.ladder import deal_set_label, plot
    from twilight_env.rules.heldout import heldout_seed

    root = Path(__file__).resolve().parents[2]
    doc = json.loads((root / "results" / "ladder_4p_single_tree" / "ladder.json").read_text())
    assert deal_set_label(doc) == "heldout-1"
    assert deal_set_label({"seed": 7, "deals_source": {"seed": 7}}) == "seed 7"
    assert deal_set_label({"seed": heldout_seed("heldout-2"), "deals_source": {}}) == "heldout-2"
    assert deal_set_label({"seed": 0, "deals_source": {"path": "/x/my_deals.json"}}) == "file my_deals.json"
    notes = []
    real = matplotlib.axes.Axes.annotate
    monkeypatch.setattr(matplotlib.axes.Axes, "annotate",
                        lambda self, text, *a, **k: notes.append(text) or real(self, text, *a, **k))
    plot(doc, str(tmp_path / "l.png"))
    failing = sum(not s["holds"] for s in doc["steps"])
    assert failing == 2 and notes.count("step does not hold") == 2 * failing  # both panels
    assert (tmp_path / "l.png").stat().st_size > 10_000


def test_settings_follow_the_command_line_and_refuse_unknown_names(tmp_path):
    import argparse
    p = argparse.ArgumentParser()
    ladder.add_arguments(p)
    a = p.parse_args([])
    d = ladder.LadderSettings()
    assert (d.num_players, d.deal_set_name, d.deals, d.seed, d.boot, d.resume) == (
        a.players, a.deal_set, a.deals, a.seed, a.boot, a.resume)
    with pytest.raises(TypeError, match="nosuch"):
        ladder.run_ladder(["random", "random"], nosuch=1)
    with pytest.raises(ValueError, match="do not give rungs, --boot"):
        ladder.play_ladder(ladder.LadderSettings(["random", "random"], boot=5, resume=str(tmp_path)))
    assert not list(tmp_path.iterdir())


def test_a_step_won_on_every_play_prints_its_elo_as_a_lower_bound():
    """A step won every play has its win rate clipped, so its Elo (about 1200, with the
    interval [1200, 1200]) is a cap: the table prints a bound, not an exact interval."""
    won = np.full((20, 2), 40.0)
    mixed = np.random.default_rng(0).normal(5, 40, size=(20, 2))
    steps = [{"points": won}, {"points": mixed}]
    rates = ladder.ratings(steps, boot=100, seed=1)
    assert rates[1]["elo_ci"] == pytest.approx([rates[1]["elo"]] * 2)  # the cap, not a measurement
    figs = [dict(ladder.step_figures({"points": s["points"].tolist(), "a_spec": up, "b_spec": low, "seconds": 1.0}, 3))
            for s, up, low in ((steps[0], "heuristic", "random"), (steps[1], "pimc", "heuristic"))]
    doc = {"rungs": ["random", "heuristic", "pimc"], "ratings": rates, "steps": figs}
    _, rows = ladder.table_rows(doc)
    elo = [r[6] for r in rows]
    assert elo[1] == f">= {rates[1]['elo_ci'][0]:.0f} (heuristic won every play)" == ">= 1200 (heuristic won every play)"
    assert elo[2] == f">= {rates[2]['elo_ci'][0]:.0f} (heuristic won every play)"
    assert "[" not in elo[1] + elo[2]
    lost = dict(figs[0], win_rate=0.0)
    assert ladder.elo_cell({"elo": -1200.0, "elo_ci": [-1200.0, -1200.0]}, [lost]) == \
        "<= -1200 (heuristic lost every play)"
    before = {k: v for k, v in rates[1].items() if k != "elo_ci_capped"}  # a ladder.json written before the flags
    assert ladder.elo_cell(before, []) == ladder.fmt_ci(rates[1]["elo"], *rates[1]["elo_ci"], digits=0)


def test_an_interval_end_set_by_capped_resamples_is_printed_as_a_bound():
    """A step won on 38 of 40 plays is measured, but about one resample in eight wins it on
    every play and caps its Elo near 1200: the interval's upper end is a bound (``>= 1200``),
    not a measured end; a step far from every-play has a plain interval."""
    won_most = np.full((20, 2), 40.0)
    won_most[3, 0] = won_most[11, 1] = -40.0
    close = np.random.default_rng(0).normal(5, 40, size=(20, 2))
    rates = ladder.ratings([{"points": won_most}], boot=400, seed=1)
    assert rates[1]["elo_ci_capped"] == [False, True] and rates[1]["elo_ci"][1] == pytest.approx(ladder.elo_of(1.0))
    cell = ladder.elo_cell(rates[1], [{"upper": "heuristic", "win_rate": 0.95}])
    assert cell == f"{rates[1]['elo']:.0f} [{rates[1]['elo_ci'][0]:.0f}, >= 1200]", cell
    plain = ladder.ratings([{"points": close}], boot=400, seed=1)[1]
    assert plain["elo_ci_capped"] == [False, False]
    assert ladder.elo_cell(plain, []) == ladder.fmt_ci(plain["elo"], *plain["elo_ci"], digits=0)
    lost_most = ladder.ratings([{"points": -won_most}], boot=400, seed=1)[1]
    assert lost_most["elo_ci_capped"] == [True, False] and ladder.elo_cell(lost_most, []).split("[")[1].startswith("<= ")
