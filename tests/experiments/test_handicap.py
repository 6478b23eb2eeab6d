"""The fair handicap (experiments/edge/handicap.py): points per deal credited to the solo's line
that make a fixed-solo match an even bet (R6.1, R7.5, R7.6)."""

import json

import numpy as np
import pytest

from twilight_env.experiments.edge.handicap import fair_handicap, main


def _pools(d: int, n: int = 3000, seed: int = 0):
    """Moon and Sun deal points of one distribution, the Sun's moved up by ``d`` (so crediting
    ``d`` to the solo makes the two lines exchangeable: the fair handicap is ``d``)."""
    rng = np.random.default_rng(seed)
    moon = rng.integers(0, 161, size=(n, 3))
    sun = np.minimum(rng.integers(0, 161, size=(n, 3)) + d, 360)
    return moon, sun


@pytest.mark.parametrize("d", [0, 12])
def test_a_known_handicap_is_found_and_covered(d):
    moon, sun = _pools(d)
    f = fair_handicap(moon, sun, seed=1, boot=100, matches=400)
    assert abs(f["handicap"] - d) < 1.0, f
    assert f["ci_low"] <= d <= f["ci_high"], f
    assert abs(f["p_solo_wins_at_handicap"] - 0.5) < 0.01
    assert (f["p_solo_wins_plain"] < 0.45) if d else abs(f["p_solo_wins_plain"] - 0.5) < 0.02


def test_the_handicap_moves_the_match_to_even_on_both_sides():
    """A solo ahead is handicapped (negative), a solo behind credited (positive)."""
    moon, sun = _pools(8)
    behind = fair_handicap(moon, sun, seed=2, boot=50, matches=300)
    ahead = fair_handicap(sun, moon, seed=2, boot=50, matches=300)
    assert behind["handicap"] > 5 and ahead["handicap"] < -5
    assert abs(behind["handicap"] + ahead["handicap"]) < 1.0


def test_same_seed_same_figures_and_goals_333_in_whole_points():
    moon, sun = _pools(5, n=500)
    a = fair_handicap(moon, sun, seed=3, boot=30, matches=200)
    assert a == fair_handicap(moon, sun, seed=3, boot=30, matches=200)
    g = fair_handicap(moon, sun, seed=3, boot=30, matches=200, goals_333=True)
    assert g["goals_333"] and (g["handicap"] * 2) % 1 == 0  # midway between two whole points


@pytest.mark.parametrize("kw,msg", [
    (dict(moon=np.zeros((1, 3), int), sun=np.zeros((1, 3), int)), "N >= 2"),
    (dict(moon=np.zeros((4, 3)), sun=np.zeros((4, 3))), "integer deal points"),
    (dict(moon=np.full((4, 3), 361), sun=np.zeros((4, 3), int)), r"0\.\.360"),
    (dict(boot=0), "boot must be an integer in 1..10000"),
    (dict(target=10 ** 9), "target must be an integer in 1..100000"),
])
def test_bad_input_is_refused(kw, msg):
    moon, sun = _pools(0, n=10)
    args = dict(moon=moon, sun=sun, seed=0, boot=10, matches=10)
    args.update(kw)
    with pytest.raises(ValueError, match=msg):
        fair_handicap(**args)


def test_command_line_on_a_finished_edge_run(tmp_path, capsys):
    from twilight_env.cli import main as cli

    run = tmp_path / "e"
    assert cli(["edge", "heuristic", "--deals", "60", "--workers", "1", "--boot", "20", "--matches", "50",
                "--out", str(run), "--quiet"]) == 0
    out = tmp_path / "h.md"
    assert main([str(run), "--boot", "20", "--matches", "100", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "fair handicap" in printed and "heuristic" in printed
    rows = json.loads((tmp_path / "h.json").read_text())
    assert rows[0]["label"] == "heuristic" and rows[0]["deals"] == 60
    assert "fair handicap" in out.read_text()
    assert main([str(tmp_path / "nothing")]) == 2
    assert "no finished edge run" in capsys.readouterr().err


def test_a_handicap_beyond_the_bracket_and_resamples_beyond_it_are_reported():
    """A pool whose handicap lies outside ±90 prints 'outside ±90' and no P at it; a pool near
    the edge whose resamples partly fall outside gets a warning that its interval is too narrow."""
    from twilight_env.experiments.edge.handicap import table, unbracketed_lines

    far_m, far_s = _pools(0, n=40)
    far_s = np.minimum(far_s + 200, 360)
    near_m, near_s = _pools(85, n=40, seed=4)
    rows = []
    for label, (m, s) in (("far", (far_m, far_s)), ("near", (near_m, near_s))):
        f = fair_handicap(m, s, seed=1, boot=60, matches=100)
        rows.append({"label": label, "deals": 40, "moon_minus_sun": float((m - s).mean()), "plain": f,
                     "goals_333": f})
    _, body = table(rows)
    assert body[0][4] == "outside ±90" and body[0][5] == "–"
    assert rows[1]["plain"]["unbracketed_resamples"] > 0 and body[1][5] != "–"
    lines = unbracketed_lines(rows)
    assert lines and all(line.startswith("near:") and "too narrow" in line for line in lines)


def test_a_handicap_near_zero_prints_no_negative_zero():
    """A handicap, bound or Moon − Sun that rounds to 0 prints as +0.00 / +0.0, never -0.00."""
    from twilight_env.experiments.edge.handicap import table

    zero = {"handicap": -0.0, "ci_low": -0.001, "ci_high": 1.25, "p_solo_wins_at_handicap": 0.5,
            "p_solo_wins_plain": 0.5}
    _, body = table([{"label": "even", "deals": 200, "moon_minus_sun": -0.04, "plain": zero, "goals_333": zero}])
    assert body[0][2] == "+0.0" and body[0][4] == body[0][6] == "+0.00 [+0.00, +1.25]", body
    assert "-0.0" not in " ".join(map(str, body[0]))
