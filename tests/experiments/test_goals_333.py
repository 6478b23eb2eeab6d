"""Match simulation under the ``goals_333`` variant (R6.2): exact totals 333, 666, 999
also end a match, the goal listed first wins, a shared goal plays on."""

import json

import numpy as np

import twilight_env.experiments.edge.solo_edge as edge


def _sim(moon, sun, goals, matches=20, max_deals=50):
    m = np.array([moon], dtype=np.int64)
    s = np.array([sun], dtype=np.int64)
    return edge.simulate_fixed_solo(m, s, np.random.default_rng(0), matches, 1000, max_deals, goals_333=goals)


def test_an_exact_goal_ends_the_match():
    # Moon 333 and Sun 400 every deal: plain rules, Sun wins after 3 deals (999 < 1200);
    # goals_333, Moon reaches exactly 333 after the first deal and wins (R6.2)
    plain, goals = _sim([333], [400], False), _sim([333], [400], True)
    assert plain["p_solo"][0] == 0.0 and plain["deals"][0] == 3.0
    assert goals["p_solo"][0] == 1.0 and goals["deals"][0] == 1.0


def test_the_goal_listed_first_wins():
    # after one deal Moon 666, Sun 333: both on a goal, 333 comes first, so Sun wins
    r = _sim([666], [333], True)
    assert r["p_solo"][0] == 0.0 and r["deals"][0] == 1.0


def test_a_shared_goal_plays_on():
    # both on 333, 666, 999 and then level above the target: never decided (R9, R6.1)
    r = _sim([333], [333], True, matches=5, max_deals=10)
    assert r["undecided"][0] == 5


def test_goal_figures_leave_the_other_figures_unchanged(tmp_path):
    """The goals_333 figure has its own random stream: the plain match figures of a run
    are what they were without it, and the output names it."""
    out = tmp_path / "e"
    edge.run_study(["heuristic"], deals=40, seed=3, out=str(out), boot=20, matches=50, workers=1, progress=False,
                   verbose=False)
    doc = json.loads((out / "edge.json").read_text())
    r = doc["results"][0]
    moon, sun = np.asarray(r["moon_points"]), np.asarray(r["sun_points"])
    key = edge.config_key("heuristic", "heuristic")
    again = edge.match_figures(moon, sun, 3, key, 1000, 20, 50)
    assert again == r["figures"]["matches"]
    g = again["fixed_solo_goals_333"]
    assert 0.0 <= g["ci_low"] <= g["ci_high"] <= 1.0 and g["undecided"] == 0
    assert "goals_333" in (out / "edge.md").read_text()


def test_a_recorded_run_keeps_its_match_figures():
    """The first 600-deal ismcts run (kept as edge.previous.json when the run grew) was
    analysed before the goals_333 figure existed: its per-deal points give the same
    fixed-solo and rotating figures today."""
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parents[2] / "results" / "edge_vs_strength" / "edge_4_ismcts"
                      / "edge.previous.json").read_text())
    r = doc["results"][0]
    again = edge.match_figures(np.asarray(r["moon_points"]), np.asarray(r["sun_points"]), doc["seed"],
                               edge.config_key(r["solo_spec"], r["sun_spec"]), doc["target"])
    old = r["figures"]["matches"]
    assert again["fixed_solo"] == old["fixed_solo"] and again["rotating"] == old["rotating"]


def test_command_reads_finished_runs(tmp_path, capsys):
    from twilight_env.experiments.edge.goals_333 import main

    out = tmp_path / "e"
    edge.run_study(["random"], deals=10, seed=3, out=str(out), boot=20, matches=50, workers=1, progress=False,
                   verbose=False)
    assert main([str(out)]) == 0
    line = capsys.readouterr().out
    assert "random" in line and "goals_333" in line and "N=10" in line
    assert main([str(tmp_path / "none")]) == 2
    assert "no readable edge output" in capsys.readouterr().err
