"""The cross-play matrix of the 3-player edge study (experiments/edge/crossplay.py,
``twilight edge --crossplay``): its cells are the edge runs ``twilight edge --solo A --sun B``
on the same deals (R7: the solo in seat 0 deciding for the new moon, the Sun side in
seats 1 and 3; R7.4 rotation; R7.5 team scoring), the game's value and mixtures solve
the matrix game, an interrupted matrix continues to the figures of an uninterrupted one,
and bad input is refused in words."""

import json
from pathlib import Path

import numpy as np
import pytest

from twilight_env.agents.policy import default_weights
from twilight_env.cli import main
from twilight_env.experiments.edge import crossplay, solo_edge
from twilight_env.experiments.edge.crossplay import CrossplaySettings, run_crossplay, saddle_point, solve_game

SPECS = ["random", "heuristic"]
SMALL = dict(deals=4, seed=5, boot=10, matches=20, workers=1, progress=False, verbose=False)
CLI_SMALL = ["--deals", "4", "--seed", "5", "--boot", "10", "--matches", "20", "--workers", "1", "--quiet"]


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> Path:
    """An uninterrupted 2 × 2 matrix of random and heuristic on 4 deals of seed 5."""
    return Path(run_crossplay(specs=SPECS, out=str(tmp_path_factory.mktemp("m") / "m"), **SMALL))


# ---------------------------------------------------------------------------------
# the cells are edge runs on the same deals
# ---------------------------------------------------------------------------------

def test_each_cell_equals_a_separate_edge_run_of_its_two_agents(matrix, tmp_path):
    doc = _read(matrix / crossplay.RESULT_JSON)
    assert doc["specs"] == SPECS and len(doc["matrix"]) == 2 and all(len(r) == 2 for r in doc["matrix"])
    for i, solo in enumerate(SPECS):
        for j, sun in enumerate(SPECS):
            out = tmp_path / f"e{i}{j}"
            assert main(["edge", "--solo", solo, "--sun", sun, *CLI_SMALL, "--out", str(out)]) == 0
            alone = _read(out / "edge.json")["results"][0]
            cell = _read(matrix / doc["cells"][i][j] / "edge.json")["results"][0]
            assert (cell["solo_spec"], cell["sun_spec"]) == (solo, sun)
            assert cell["moon_points"] == alone["moon_points"] and cell["sun_points"] == alone["sun_points"]
            assert cell["figures"] == alone["figures"]
            d = alone["figures"]["diff"]
            assert (doc["matrix"][i][j], doc["ci_low"][i][j], doc["ci_high"][i][j]) == (d["mean"], d["ci_low"],
                                                                                       d["ci_high"])
    # the diagonal is each agent's own self-play edge (`twilight edge SPEC`)
    assert main(["edge", "heuristic", *CLI_SMALL, "--out", str(tmp_path / "self")]) == 0
    self_play = _read(tmp_path / "self" / "edge.json")["results"][0]["figures"]["diff"]
    assert doc["diagonal"][1] == {"spec": "heuristic", "mean": self_play["mean"], "ci_low": self_play["ci_low"],
                                  "ci_high": self_play["ci_high"]}


def test_the_matrix_figures_follow_from_the_cells(matrix):
    doc = _read(matrix / crossplay.RESULT_JSON)
    m = np.array(doc["matrix"])
    assert doc["saddle"] == saddle_point(m)
    game = solve_game(m)
    assert doc["game"] == {"value": game["value"], "solo_mixture": game["row_mixture"],
                           "sun_mixture": game["col_mixture"]}
    # the bootstrap resamples deals of every cell together: its interval brackets the value here
    b = doc["bootstrap"]
    assert b["resamples"] == crossplay.VALUE_BOOT and b["value_ci_low"] <= b["value_ci_high"]
    md = (matrix / crossplay.RESULT_MD).read_text(encoding="utf-8")
    assert "| solo \\ Sun | `random` | `heuristic` | row min |" in md
    assert "Pure saddle point" in md and "Value of the game in mixed strategies" in md
    assert f"twilight edge --crossplay random heuristic --deals 4 --seed 5 --boot 10 --matches 20 --out {matrix}" in md
    assert not list(matrix.glob("cells/*/edge.checkpoint.json"))


# ---------------------------------------------------------------------------------
# the game
# ---------------------------------------------------------------------------------

def _certified(m, game) -> None:
    """The solution certificate: x guarantees the value against every column, y holds every row to it."""
    m = np.asarray(m, float)
    x, y = np.array(game["row_mixture"]), np.array(game["col_mixture"])
    assert x.min() >= 0 and y.min() >= 0 and x.sum() == pytest.approx(1) and y.sum() == pytest.approx(1)
    assert (x @ m).min() == pytest.approx(game["value"], abs=1e-7)
    assert (m @ y).max() == pytest.approx(game["value"], abs=1e-7)


def test_matching_pennies_has_value_zero_with_even_mixtures_and_no_pure_saddle():
    m = [[1, -1], [-1, 1]]
    game = solve_game(m)
    assert game["value"] == pytest.approx(0, abs=1e-9)
    assert game["row_mixture"] == pytest.approx([0.5, 0.5]) and game["col_mixture"] == pytest.approx([0.5, 0.5])
    sp = saddle_point(m)
    assert not sp["exists"] and sp["cells"] == [] and (sp["maximin"], sp["minimax"]) == (-1, 1)


def test_a_pure_saddle_point_gives_its_value_and_the_pure_strategies():
    m = [[3.0, 1.0, 4.0], [5.0, 2.0, 6.0], [0.0, -1.0, 9.0]]  # row 1, column 1: least of its row, largest of its column
    sp = saddle_point(m)
    assert sp["exists"] and sp["cells"] == [[1, 1]] and sp["maximin"] == sp["minimax"] == 2.0
    game = solve_game(m)
    assert game["value"] == pytest.approx(2.0)
    assert game["row_mixture"] == pytest.approx([0, 1, 0], abs=1e-9)
    assert game["col_mixture"] == pytest.approx([0, 1, 0], abs=1e-9)


def test_a_two_by_two_game_without_saddle_matches_the_closed_form():
    a, b, c, d = 2.0, -1.0, -3.0, 4.0  # value (ad - bc) / (a + d - b - c), row p = (d - c) / (a + d - b - c)
    game = solve_game([[a, b], [c, d]])
    den = a + d - b - c
    assert game["value"] == pytest.approx((a * d - b * c) / den)
    assert game["row_mixture"] == pytest.approx([(d - c) / den, (a - b) / den])
    assert game["col_mixture"] == pytest.approx([(d - b) / den, (a - c) / den])


def test_the_value_equals_an_enumeration_of_row_mixtures_on_random_games():
    rng = np.random.default_rng(7)
    grid = np.linspace(0, 1, 100_001)
    for _ in range(5):
        m = rng.normal(0, 50, size=(2, 4))  # two rows: the value is max over p of min over columns
        lower = np.min(np.outer(grid, m[0]) + np.outer(1 - grid, m[1]), axis=1).max()
        game = solve_game(m)
        assert game["value"] == pytest.approx(lower, abs=1e-2)
        _certified(m, game)
    rps = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
    game = solve_game(rps)
    assert game["value"] == pytest.approx(0, abs=1e-9) and game["row_mixture"] == pytest.approx([1 / 3] * 3)
    _certified(rps, game)
    big = rng.normal(0, 300, size=(5, 5))
    _certified(big, solve_game(big))


def test_the_game_refuses_a_matrix_that_is_not_one():
    for bad in ([], [1, 2], [[1, np.nan]], [[[1]]]):
        with pytest.raises(ValueError, match="a payoff matrix must be a non-empty 2-d array of finite numbers"):
            solve_game(bad)


# ---------------------------------------------------------------------------------
# continuing an interrupted matrix
# ---------------------------------------------------------------------------------

def test_an_interrupted_matrix_continues_to_the_figures_of_an_uninterrupted_one(matrix, tmp_path, monkeypatch, capsys):
    out = tmp_path / "m"
    real = solo_edge.play_config
    calls = {"cells": 0}

    def stop_in_the_third_cell(deals, solo, sun, seed, config, workers, progress=True, done=None, on_result=None,
                               *rest, **kw):
        calls["cells"] += 1
        if calls["cells"] < 3:
            return real(deals, solo, sun, seed, config, workers, progress, done, on_result, *rest, **kw)
        seen = []

        def record(r):
            on_result(r)
            seen.append(r)
            if len(seen) == 2:  # two deals of the third cell finished
                raise KeyboardInterrupt

        return real(deals, solo, sun, seed, config, workers, progress, done, record, *rest, **kw)

    monkeypatch.setattr(solo_edge, "play_config", stop_in_the_third_cell)
    with pytest.raises(KeyboardInterrupt):
        run_crossplay(specs=SPECS, out=str(out), **SMALL)
    assert "stopped with 2 of 4 cells finished; continue it with: twilight edge --crossplay random heuristic" \
        in capsys.readouterr().err
    cells = sorted((out / crossplay.CELLS).iterdir())
    assert [(c / "edge.json").is_file() for c in cells] == [True, True, False]
    assert (cells[2] / "edge.checkpoint.json").is_file() and not (out / crossplay.RESULT_JSON).exists()
    before = [(c / "edge.json").read_bytes() for c in cells[:2]]
    monkeypatch.setattr(solo_edge, "play_config", real)

    run_crossplay(specs=SPECS, out=str(out), **SMALL)  # the same command again
    assert [(c / "edge.json").read_bytes() for c in cells[:2]] == before  # finished cells are not played again
    assert _read(cells[2] / "edge.json")["resumed"] is True
    got, want = _read(out / crossplay.RESULT_JSON), _read(matrix / crossplay.RESULT_JSON)
    assert got["continued"] is True
    for key in ("matrix", "ci_low", "ci_high", "diagonal", "saddle", "game", "bootstrap"):
        assert got[key] == want[key], key
    for i in range(2):
        for j in range(2):
            a = _read(out / got["cells"][i][j] / "edge.json")["results"][0]
            b = _read(matrix / want["cells"][i][j] / "edge.json")["results"][0]
            assert (a["moon_points"], a["sun_points"]) == (b["moon_points"], b["sun_points"])


def test_the_defaults_given_by_name_are_the_same_settings(matrix):
    """A matrix made without --target/--boot/--matches continues when they are given at
    their defaults (the saved settings hold the values, not 'not given')."""
    import shutil

    from twilight_env.experiments.edge.core import DEFAULT_TARGET

    run_crossplay(specs=SPECS, out=str(matrix), **{**SMALL, "target": DEFAULT_TARGET})
    old = matrix.parent / "old"  # a folder saved when 'not given' was written as null
    shutil.copytree(matrix, old)
    saved = json.loads((old / crossplay.SETTINGS_FILE).read_text())
    assert saved["target"] == DEFAULT_TARGET
    (old / crossplay.SETTINGS_FILE).write_text(json.dumps({**saved, "target": None}))
    run_crossplay(specs=SPECS, out=str(old), **{**SMALL, "target": DEFAULT_TARGET})
    with pytest.raises(ValueError, match="target 1000 there, 999 now"):
        run_crossplay(specs=SPECS, out=str(old), **{**SMALL, "target": 999})


def test_a_folder_of_other_settings_is_refused(matrix):
    with pytest.raises(ValueError, match=r"holds a cross-play matrix of other settings \(deals 4 there, 5 now\)"):
        run_crossplay(specs=SPECS, out=str(matrix), **{**SMALL, "deals": 5})
    with pytest.raises(ValueError, match="specs"):
        run_crossplay(specs=SPECS[::-1], out=str(matrix), **SMALL)


# ---------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------

def test_bad_specs_are_refused_in_words(tmp_path):
    from twilight_env.agents.nfsp import OBS_SIZE, save_weights

    with pytest.raises(ValueError, match="needs at least 2 agent specs"):
        CrossplaySettings(["heuristic"], 4)
    with pytest.raises(ValueError, match="lists the agent 'heuristic' twice"):
        CrossplaySettings(["heuristic", "random", " heuristic"], 4)
    with pytest.raises(ValueError, match="twice"):
        CrossplaySettings(["pimc:worlds=2,rollouts=1", "pimc:rollouts=1,worlds=2"], 4)
    with pytest.raises(ValueError, match=r"lists the agent 'pimc:worlds=32' twice \(as 'pimc' and 'pimc:worlds=32', "
                                         r"the same agent: both are 'pimc:worlds=32,solver_tricks=2,"):
        CrossplaySettings(["pimc", "heuristic", "pimc:worlds=32"], 4)  # 32: pimc's default number of worlds
    with pytest.raises(ValueError, match=r"--crossplay: .*nosuch.*heuristic"):  # lists the valid agents
        CrossplaySettings(["heuristic", "nosuch"], 4)
    four = tmp_path / "avg_policy.npz"
    rng = np.random.default_rng(0)
    four.write_bytes(save_weights([(rng.normal(size=(OBS_SIZE, 31)), np.zeros(31))], 4, 7))
    with pytest.raises(ValueError, match=r"--crossplay: .*its network was trained for 4 players, and this run plays 3-player deals"):
        CrossplaySettings(["heuristic", f"nfsp:path={four}"], 4)
    with pytest.raises(ValueError, match=r"--crossplay: .*its network was trained for 4 players, and this run plays 3-player deals"):
        CrossplaySettings(["heuristic", "policy:" + str(default_weights(4))], 4)  # a 4-player weights file
    CrossplaySettings(["heuristic", "policy:" + str(default_weights(3))], 4)  # its 3-player twin is taken
    with pytest.raises(ValueError, match="list of agent spec strings"):
        CrossplaySettings("heuristic random", 4)


def test_bad_settings_are_refused_in_words():
    for bad, message in ((dict(deals=1), r"--deals \(deals per cell\) must be an integer in 2\.\."),
                         (dict(seed="heldout-9"), "held-out deal set"), (dict(seed=-1), "--seed"),
                         (dict(workers=0), "--workers"), (dict(boot=0), "--boot")):
        with pytest.raises(ValueError, match=message):
            CrossplaySettings(**{"specs": SPECS, "deals": 4, **bad})
    assert CrossplaySettings(SPECS, 4, seed="heldout-2").seed == 2_026_120_102


def test_the_command_refuses_bad_lines_in_one_line_and_makes_nothing(tmp_path, capsys):
    out = tmp_path / "o"
    for argv, message in ((["--crossplay", "random", "heuristic"], "needs --deals N (deals per cell)"),
                          (["--crossplay", "random", "--deals", "4"], "needs at least 2 agent specs"),
                          (["--crossplay", "random", "heuristic", "--deals", "4", "--solo", "random"],
                           "the crossplay mode"),
                          (["--crossplay", "random", "random", "--deals", "4"], "twice")):
        assert main(["edge", *argv, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
        assert not out.exists()


def test_ties_make_every_tied_cell_a_saddle_point():
    sp = saddle_point([[1.0, 1.0], [0.0, -2.0]])  # row 0 is constant and dominates: both its cells are saddles
    assert sp["exists"] and sp["cells"] == [[0, 0], [0, 1]] and sp["maximin"] == sp["minimax"] == 1.0
    assert solve_game([[1.0, 1.0], [0.0, -2.0]])["value"] == pytest.approx(1.0)


def test_seed_takes_a_number_or_a_held_out_set_by_name_in_every_mode():
    import argparse

    from twilight_env.experiments.edge import command

    p = argparse.ArgumentParser(prog="twilight edge")
    command.add_arguments(p)
    assert p.parse_args(["heuristic", "--seed", "heldout-2"]).seed == 2_026_120_102
    assert p.parse_args(["--crossplay", "random", "heuristic", "--seed", "7"]).seed == 7
    for bad in ("heldout-9", "-1", "x"):
        with pytest.raises(SystemExit):
            p.parse_args(["heuristic", "--seed", bad])
