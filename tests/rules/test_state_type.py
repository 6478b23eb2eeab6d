"""One public state type, ``engine.DealState``, for both engines: every consumer that
checks its input accepts a compiled ``State`` and a ``PurePythonState`` alike."""

import numpy as np
import pytest

from twilight_env.agents import solver
from twilight_env.rules import engine
from twilight_env.rules.engine import DealState, PurePythonState, State
from twilight_env.envs.vector import VectorEngine

from positions import Spec, positions

CLASSES = [State, PurePythonState]


@pytest.mark.parametrize("cls", CLASSES)
def test_both_engines_are_deal_states(cls):
    s = cls.random(np.random.default_rng(0))
    assert isinstance(s, DealState) and issubclass(cls, DealState)
    assert isinstance(s.clone(), DealState)
    assert isinstance(engine.apply_action(s, s.legal_actions()[0]), DealState)


@pytest.mark.parametrize("not_a_state", [None, 3, "state", [0, 0, 0, 0], object()])
def test_other_objects_are_not_deal_states(not_a_state):
    assert not isinstance(not_a_state, DealState)


@pytest.mark.parametrize("num_players", [4, 3])
def test_solver_accepts_either_engine_with_the_same_value(num_players):
    for seed in range(3):
        values = {}
        for cls in CLASSES:
            s = positions(Spec(num_players, seed, tricks_left=2, state_class=cls))[0]
            values[cls] = (solver.solve(s), solver.best_action(s))
        assert values[State] == values[PurePythonState]


def test_solver_refuses_a_non_state_naming_the_type():
    with pytest.raises(ValueError, match="twilight_env.rules.engine.DealState"):
        solver.solve("not a state")


@pytest.mark.parametrize("cls", CLASSES)
def test_vector_set_states_accepts_either_engine(cls):
    e = VectorEngine(2, 3)
    states = [positions(Spec(3, k, steps=9, state_class=cls))[0] for k in range(2)]
    e.set_states(states)
    for i, s in enumerate(states):
        back = e.to_state(i)
        assert isinstance(back, DealState)
        assert back.history == s.history and back.hands == s.hands and back.legal_actions() == s.legal_actions()


def test_the_project_checks_states_with_deal_state_only():
    # every isinstance check against a state class names the common type
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    pat = re.compile(r"isinstance\([^)]*\b(State|PurePythonState|_Rules)\b\s*\)")
    hits = [f"{p.relative_to(root)}:{i + 1}" for d in ("twilight_env", "agents", "experiments", "training")
            for p in (root / d).rglob("*.py") for i, line in enumerate(p.read_text().splitlines())
            if pat.search(line)]
    assert hits == []
