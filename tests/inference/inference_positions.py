"""Positions for the inference tests: seeded deals played part-way."""

import numpy as np

from twilight_env.agents.heuristic import decide_state
from twilight_env.rules.engine import State


def position(seed: int, players: int, steps: int) -> State:
    """A deal of ``seed`` (random first leader) after ``steps`` actions, mostly heuristic, some random."""
    rng = np.random.default_rng(seed)
    state = State.random(rng, int(rng.integers(4)), players)
    for _ in range(steps):
        if state.done:
            break
        la = state.legal_actions()
        state.apply(decide_state(state) if rng.random() < 0.7 else la[int(rng.integers(len(la)))])
    return state


def viewers(state: State) -> list[int]:
    """The seats with an information set (every seat but the new moon in 3 players)."""
    return [s for s in range(4) if not (state.num_players == 3 and s == 2)]
