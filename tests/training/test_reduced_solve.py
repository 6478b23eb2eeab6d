"""The exact solvers of the reduced-deck games (``twilight_env.training.reduced_solve``):
CFR step for step equal to OpenSpiel's on the smallest game (NashConv and values by
OpenSpiel's own ``nash_conv``), the information sets the same as OpenSpiel's, the linear
program's value exact (its strategies have NashConv 0, CFR+ closes in on it), the counts.

The 4-player comparison with OpenSpiel is slow (``pytest -m slow tests/training/test_reduced_solve.py``).
"""

import json

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, exploitability

import twilight_env.interop.openspiel  # noqa: F401  (registers python_twilight)
from twilight_env.training import reduced_solve as rs


@pytest.fixture(scope="module")
def small3():
    tree = rs.build_tree(1, 3)
    return tree, rs.make_model(tree, "seats"), rs.make_model(tree, "teams")


def _against_openspiel(players, iterations, plus, tree, seats):
    game = pyspiel.load_game(f"python_twilight(players={players},tricks=1)")
    theirs = (cfr.CFRPlusSolver if plus else cfr.CFRSolver)(game)
    ours = rs.CFR(tree, seats, plus=plus)
    assert len(theirs._info_state_nodes) == seats.num_isets
    for _ in range(iterations):
        theirs.evaluate_and_update_policy()
        ours.step()
    nc, on, _ = rs.nash_conv(tree, seats, ours.average_policy())
    their_nc = exploitability.nash_conv(game, theirs.average_policy())
    assert nc / 360 == pytest.approx(their_nc, abs=1e-9)
    assert nc > 1e-4  # not converged yet: the equality is step for step, not at a fixed point
    return on


@pytest.mark.parametrize("plus", [False, True])
def test_cfr_is_openspiels_step_for_step_3_players(small3, plus):
    tree, seats, _ = small3
    _against_openspiel(3, 3, plus, tree, seats)


@pytest.mark.slow
def test_cfr_is_openspiels_step_for_step_4_players():
    tree = rs.build_tree(1, 4)
    seats = rs.make_model(tree, "seats")
    on = _against_openspiel(4, 3, True, tree, seats)
    assert on[0] == pytest.approx(-on[1]) and on[0] == pytest.approx(on[2])


def test_best_response_is_openspiels(small3):
    """The best-response values behind NashConv, for a non-uniform policy."""
    from open_spiel.python.algorithms import best_response

    tree, seats, _ = small3
    solver = rs.CFR(tree, seats)
    solver.step()
    policy = solver.average_policy()
    game = pyspiel.load_game("python_twilight(players=3,tricks=1)")
    theirs = cfr.CFRSolver(game)
    theirs.evaluate_and_update_policy()
    util = rs.utilities(tree, seats)
    for p in range(3):
        ours = rs.best_response_value(tree, seats, policy, util, p)
        br = best_response.BestResponsePolicy(game, p, theirs.average_policy())
        assert ours / 360 == pytest.approx(br.value(game.new_initial_state()), abs=1e-9)


def test_linear_program_is_exact_and_cfr_plus_closes_in(small3):
    """3 players, 1 trick, the Sun side sharing information: the LP's strategies are an
    equilibrium (NashConv 0); CFR+ on the same model brackets the LP's value between the two
    best responses and its NashConv falls."""
    tree, seats, teams = small3
    value, x, y = rs.solve_lp(tree, teams)
    owner = teams.iset_player[np.repeat(np.arange(teams.num_isets), np.diff(teams.iset_offset))]
    nc, on, _ = rs.nash_conv(tree, teams, np.where(owner == 0, x, y))
    assert abs(nc) < 1e-6 and on[0] == pytest.approx(value, abs=1e-6)
    solver = rs.CFR(tree, teams, plus=True)
    gaps = []
    for it in range(60):
        solver.step()
        if it in (9, 59):
            avg = solver.average_policy()
            util = rs.utilities(tree, teams)
            upper = rs.best_response_value(tree, teams, avg, util, 0)
            lower = -rs.best_response_value(tree, teams, avg, util, 1)
            assert lower - 1e-9 <= value <= upper + 1e-9
            gaps.append(upper - lower)
    assert gaps[1] < gaps[0] and gaps[1] < 0.5


def test_team_bounds_hold_the_shared_value(small3):
    """3 players: the Sun side sharing information does at least as well, so the teams value
    is at most the upper bound from any Sun seats' strategies; the bounds are ordered."""
    tree, seats, teams = small3
    value, _, _ = rs.solve_lp(tree, teams)
    solver = rs.CFR(tree, seats, plus=True)
    for _ in range(20):
        solver.step()
    lower, upper = rs.team_bounds(tree, seats, teams, solver.average_policy())
    assert lower <= upper and value <= upper + 1e-9 and lower <= value + 1e-9


@pytest.mark.parametrize("players", [3, 4])
def test_counts(players):
    tree = rs.build_tree(1, players)
    assert tree.num_terminals == rs.count_terminal_histories(1, players)
    assert len(tree.leaders) == rs.count_deals(1) * (4 if players == 4 else 1) == round(1 / tree.root_prob)
    assert rs.count_deals(2) == 2520 and rs.count_terminal_histories(2, 3) == 2520 * 576


@pytest.mark.parametrize("players", [3, 4])
def test_information_sets_counted_without_the_tree(players):
    tree = rs.build_tree(1, players)
    for model in ("seats", "teams"):
        assert rs.count_infosets(1, players, model) == rs.make_model(tree, model).num_isets


def test_bad_arguments():
    with pytest.raises(ValueError, match="tricks must be an int 1..7"):
        rs.build_tree(0, 3)
    with pytest.raises(ValueError, match="the solo"):
        rs.build_tree(1, 3, leaders=(1,))
    tree = rs.build_tree(1, 4, leaders=(0,))
    with pytest.raises(ValueError, match="model must be"):
        rs.make_model(tree, "pairs")
    with pytest.raises(ValueError, match="two-player"):
        rs.solve_lp(tree, rs.make_model(tree, "seats"))


def test_command_writes_the_table(tmp_path):
    rs.main(["--sizes", "1:3", "--iterations", "20", "--count-only", "1:4", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "reduced_decks.json").read_text())
    rows = data["rows"]
    assert [(r["tricks"], r["players"]) for r in rows] == [(1, 3), (1, 4)]
    assert rows[0]["teams"]["value"] == pytest.approx(rs.solve_lp(*_tree_teams(1, 3))[0])
    assert rows[0]["seats_cfr_plus"]["iterations"] == 20 and rows[0]["seats_cfr_plus"]["curve"]
    tree = rs.build_tree(1, 4)
    assert rows[1]["terminal_histories"] == tree.num_terminals
    assert rows[1]["infosets_seats"] == rs.make_model(tree, "seats").num_isets
    text = (tmp_path / "README.md").read_text()
    assert "| 1 | 3 |" in text and "| 1 | 4 |" in text


def _tree_teams(tricks, players):
    tree = rs.build_tree(tricks, players)
    return tree, rs.make_model(tree, "teams")
