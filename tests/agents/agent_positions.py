"""Shared helpers for the agent tests: random positions of every variant."""

from __future__ import annotations

import numpy as np

from twilight_env.rules.engine import HOLD, NEW_MOON, State


def random_position(rng: np.random.Generator, num_players: int, steps: int | None = None) -> State:
    """A deal played forward by uniformly random legal actions for ``steps`` actions
    (random when None), stopped before the deal ends. Covers both phases, every trick,
    and in 3 players the solo's decisions for the new moon (R7.3)."""
    leader = int(rng.integers(4)) if num_players == 4 else 0
    st = State.random(rng, leader, num_players)
    if steps is None:
        steps = int(rng.integers(0, 60))
    for _ in range(steps):
        la = st.legal_actions()
        st.apply(la[int(rng.integers(len(la)))])
        if st.done:
            return random_position(rng, num_players, steps // 2)
    return st


def positions(seed: int, count: int, num_players: int) -> list[State]:
    """``count`` random positions; each kind of decision the agents face appears."""
    rng = np.random.default_rng(seed)
    return [random_position(rng, num_players) for _ in range(count)]


def endgame(rng: np.random.Generator, num_players: int, tricks_left: int) -> State:
    """A random position with exactly ``tricks_left`` tricks left (counting the current
    trick), at a random place and phase of that trick."""
    leader = int(rng.integers(4)) if num_players == 4 else 0
    st = State.random(rng, leader, num_players)
    while st.trick < 7 - tricks_left:
        la = st.legal_actions()
        st.apply(la[int(rng.integers(len(la)))])
    for _ in range(int(rng.integers(0, 7))):
        la = st.legal_actions()
        st.apply(la[int(rng.integers(len(la)))])
        if st.trick > 7 - tricks_left:
            break
    if st.done:
        return endgame(rng, num_players, tricks_left)
    return st


__all__ = ["random_position", "positions", "endgame", "HOLD", "NEW_MOON"]
