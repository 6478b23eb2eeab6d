"""The perfect-information solver: exact against plain minimax (R3-R5, R7.3)."""

from __future__ import annotations

import numpy as np
import pytest

from agent_positions import endgame
from twilight_env.rules.cards import PURGATORY_MASK, STRENGTH
from twilight_env.rules.engine import CHOOSE, State
from twilight_env.agents.solver import Solver, action_values, best_action, brute_force_value, solve
from twilight_env.agents import solver as solver_module

BACKENDS = ["python"] + (["numba"] if solver_module.HAVE_NUMBA else [])
"""Backends checked against brute force (numba when installed: the ``test`` extra
installs it; its compiled code is cached on disk after the first run)."""


def _brute_action_values(state: State) -> dict[int, int]:
    out = {}
    for a in state.legal_actions():
        s = state.clone()
        s.apply(a)
        out[a] = brute_force_value(s)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("num_players", [4, 3])
@pytest.mark.parametrize("tricks_left,count", [(1, 60), (2, 40)])
def test_solver_matches_brute_force(num_players, tricks_left, count, backend):
    rng = np.random.default_rng(100 * num_players + tricks_left)
    solver = Solver(num_players, backend)
    for _ in range(count):
        st = endgame(rng, num_players, tricks_left)
        before = repr(st), st.history[:]
        assert solver.solve(st) == brute_force_value(st), st
        assert repr(st) == before[0] and st.history == before[1]  # the state is not changed


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("num_players", [4, 3])
def test_solver_action_values_match_brute_force(num_players, backend):
    """Every action's value, including requests (partner: best card, opponent: worst)."""
    rng = np.random.default_rng(7 + num_players)
    solver = Solver(num_players, backend)
    for _ in range(25):
        st = endgame(rng, num_players, 2)
        assert solver.action_values(st) == _brute_action_values(st), st


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("num_players", [4, 3])
def test_solver_three_tricks_matches_brute_force(num_players, backend):
    """A few 3-trick endgames late in their first trick (the brute force is slow)."""
    rng = np.random.default_rng(31 + num_players)
    done = 0
    while done < 2:
        st = endgame(rng, num_players, 3)
        if st.place < 2:
            continue
        assert Solver(num_players, backend).solve(st) == brute_force_value(st), st
        done += 1


needs_numba = pytest.mark.skipif(not solver_module.HAVE_NUMBA, reason="numba is not installed")


@needs_numba
@pytest.mark.parametrize("num_players", [4, 3])
def test_numba_backend_equals_python_backend(num_players):
    """The compiled search (closed-form last trick, null-window driver, table move
    ordering) gives the pure-Python search's value for every action, 3 tricks left."""
    rng = np.random.default_rng(55 + num_players)
    py, nb = Solver(num_players, "python"), Solver(num_players, "numba")
    for _ in range(8):
        st = endgame(rng, num_players, 3)
        assert nb.action_values(st) == py.action_values(st), st
        assert nb.solve(st) == py.solve(st), st


@needs_numba
@pytest.mark.parametrize("num_players", [4, 3])
def test_numba_last_trick_closed_form_matches_brute_force(num_players):
    """R4.1, R4.4, R3.5: the compiled last trick (taker from the top cards; with equal
    tops, who may lead which card) gives plain minimax's value from the last trick's
    start, over many deals, the equal-top cases included."""
    from twilight_env.agents import _solver_nb

    rng = np.random.default_rng(300 + num_players)
    var = 0 if num_players == 4 else 1
    solver = Solver(num_players, "python")
    ties = 0
    for _ in range(600):
        leader = int(rng.integers(4)) if num_players == 4 else 0
        st = State.random(rng, leader, num_players)
        while st.trick < 6:
            la = st.legal_actions()
            st.apply(la[int(rng.integers(len(la)))])
        _, _, _, _, _, _, ps, pm0, pm1, s0, m0, s1, m1, _ = solver._root(st)
        h = st.hands
        got = _solver_nb._last_trick(h[0], h[1], h[2], h[3], st.leader, ps, pm0, pm1, s0, m0, s1, m1, var)
        assert got == brute_force_value(st), st
        rem = h[0] | h[1] | h[2] | h[3]
        tops = [min(i for i in range(14 * c, 14 * c + 14) if rem >> i & 1) for c in (0, 1)]
        ties += STRENGTH[tops[0]] == STRENGTH[tops[1]] and not rem & PURGATORY_MASK
    assert ties >= 50  # the equal-top branch is exercised


@needs_numba
def test_numba_solvers_share_one_table_safely():
    """Solvers of both variants interleaved on the process's one table (each reads only
    its own generation) still give exact values; clear() forgets nothing it needs."""
    rng = np.random.default_rng(9)
    nb = {4: Solver(4, "numba"), 3: Solver(3, "numba")}
    for i in range(40):
        n = 4 if i % 2 else 3
        st = endgame(rng, n, 2)
        if i % 5 == 0:
            nb[n].clear()
        assert nb[n].solve(st) == brute_force_value(st), st


def test_auto_backend_picks_numba_when_installed():
    assert Solver(4).backend == ("numba" if solver_module.HAVE_NUMBA else "python")
    assert Solver(4, "python").backend == "python"


@pytest.mark.slow
@needs_numba
@pytest.mark.parametrize("num_players", [4, 3])
def test_numba_backend_four_tricks_equals_python(num_players):
    rng = np.random.default_rng(91 + num_players)
    for _ in range(3):
        st = endgame(rng, num_players, 4)
        assert Solver(num_players, "numba").solve(st) == Solver(num_players, "python").solve(st), st


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [4, 3])
def test_solver_three_tricks_matches_brute_force_many(num_players):
    rng = np.random.default_rng(77 + num_players)
    for _ in range(6):
        st = endgame(rng, num_players, 3)
        assert solve(st) == brute_force_value(st), st


def test_solver_value_is_for_side_0_and_best_action_attains_it():
    rng = np.random.default_rng(5)
    for num_players in (4, 3):
        for _ in range(20):
            st = endgame(rng, num_players, 2)
            vals = action_values(st)
            v = solve(st)
            side0 = not (st.acting_seat & 1)
            assert v == (max(vals.values()) if side0 else min(vals.values()))
            assert vals[best_action(st)] == v
            assert set(vals) == set(st.legal_actions())


def test_r4_4_last_trick_purgatory_is_neutral_for_the_solver():
    """Last trick with a Purgatory that must come out: the trick and the pending pile
    count for nobody (R4.3, R4.4), so the value is the score of what was taken before."""
    from twilight_env.rules.cards import mask_of
    st = State([mask_of(["SP"]), mask_of(["MO"]), mask_of(["S7"]), mask_of(["M7"])], 0, 4)
    st.trick = 6
    st.captured = [mask_of(["SA", "S3"]), mask_of(["MA", "M4"]), 0, 0]
    st.pending = mask_of(["ST", "S6", "MT", "M6"])
    # side 0: 3 souls x 1 = 3; side 1: 4 souls x 1 = 4; whatever is played, SP is in the trick
    assert solve(st) == 3 - 4 == brute_force_value(st)
    assert set(action_values(st).values()) == {-1}


def test_r4_3_purgatory_pending_goes_to_next_taker():
    """A Purgatory trick before the last one is pending and the next taker gets it (R4.3)."""
    from twilight_env.rules.cards import mask_of
    # two tricks left; Sun cards SP, SC1 (seat 0) and SO, S4 (seat 2): SP may come out in
    # either trick, and a first-trick Purgatory hands the pile to the last trick's taker.
    st = State([mask_of(["SP", "SC1"]), mask_of(["MC1", "M5"]), mask_of(["SO", "S4"]),
                mask_of(["MA", "M3"])], 0, 4)
    st.trick = 5
    st.captured = [mask_of(["S7"]), mask_of(["M7", "MO"]), 0, 0]
    v = solve(st)
    assert v == brute_force_value(st)
    vals = action_values(st)
    assert vals == _brute_action_values(st)


def test_solver_rejects_bad_input():
    with pytest.raises(ValueError, match="State"):
        solve("not a state")
    st = State.random(np.random.default_rng(0), 0, 4)
    while not st.done:
        st.apply(st.legal_actions()[0])
    with pytest.raises(ValueError, match="over"):
        solve(st)
    with pytest.raises(ValueError, match="3 or 4"):
        Solver(5)
    with pytest.raises(ValueError, match="backend"):
        Solver(4, "fortran")
    with pytest.raises(ValueError, match="players"):
        Solver(3).solve(State.random(np.random.default_rng(0), 0, 4))


def test_hold_phase_root():
    """A root in the hold phase: the holder's side picks (a holder decides for its side)."""
    rng = np.random.default_rng(11)
    seen = 0
    while seen < 10:
        st = endgame(rng, 4, 2)
        if st.phase == CHOOSE:
            continue
        assert solve(st) == brute_force_value(st)
        seen += 1
