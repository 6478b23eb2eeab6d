"""The perfect-information solver: its interface, its backends' shared table, and
hand-made endgames (R3-R5, R7.3). Both backends are held to plain minimax on the rules
reference by the parity harness, ``tests/rules/test_parity.py``."""

from __future__ import annotations

import numpy as np
import pytest

from positions import Spec, positions
from twilight_env.rules.engine import State
from twilight_env.agents.solver import Solver, action_values, best_action, brute_force_value, solve
from twilight_env.agents import solver as solver_module


def _brute_action_values(state: State) -> dict[int, int]:
    out = {}
    for a in state.legal_actions():
        s = state.clone()
        s.apply(a)
        out[a] = brute_force_value(s)
    return out


needs_numba = pytest.mark.skipif(not solver_module.HAVE_NUMBA, reason="numba is not installed")


@needs_numba
def test_numba_solvers_share_one_table_safely():
    """Solvers of both variants interleaved on the process's one table (each reads only
    its own generation) still give exact values; clear() forgets nothing it needs."""
    nb = {4: Solver(4, "numba"), 3: Solver(3, "numba")}
    both = zip(positions(Spec(3, 9, 20, tricks_left=2)), positions(Spec(4, 9, 20, tricks_left=2)))
    for i, st in enumerate(st for pair in both for st in pair):
        n = st.num_players
        if i % 5 == 0:
            nb[n].clear()
        assert nb[n].solve(st) == brute_force_value(st), st


def test_auto_backend_picks_numba_when_installed():
    assert Solver(4).backend == ("numba" if solver_module.HAVE_NUMBA else "python")
    assert Solver(4, "python").backend == "python"


def test_solver_value_is_for_side_0_and_best_action_attains_it():
    for num_players in (4, 3):
        for st in positions(Spec(num_players, 5, 20, tricks_left=2)):
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
