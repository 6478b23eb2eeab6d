"""Shared helpers for the environment tests: random decision points and AEC loops."""

from __future__ import annotations

import numpy as np

from twilight_env.rules.engine import State


def viewer_seats(num_players: int) -> tuple[int, ...]:
    """Seats of the players (3 players: the new moon, seat 2, is nobody's own seat)."""
    return (0, 1, 2, 3) if num_players == 4 else (0, 1, 3)


def random_points(rng: np.random.Generator, num_players: int, deals: int, every: int = 1):
    """Yield states at every ``every``-th decision (and the end) of ``deals`` random deals,
    each a separate clone (leader drawn at random, R2.4)."""
    for _ in range(deals):
        st = State.random(rng, int(rng.integers(4)) if num_players == 4 else 0, num_players)
        k = 0
        while True:
            if k % every == 0 or st.done:
                yield st.clone()
            if st.done:
                break
            legal = st.legal_actions()
            st.apply(legal[int(rng.integers(len(legal)))])
            k += 1


def play_aec(env, rng: np.random.Generator, on_last=None):
    """Run the standard AEC loop with random masked actions; ``on_last(env, agent, last)``
    is called with each ``last()`` tuple. Returns per-agent summed rewards and the list
    of (agent, terminated) in iteration order."""
    totals = {}
    seen = []
    for agent in env.agent_iter():
        last = env.last()
        obs, reward, term, trunc, info = last
        if on_last is not None:
            on_last(env, agent, last)
        totals[agent] = totals.get(agent, 0.0) + reward
        seen.append((agent, term))
        if term or trunc:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.integers(len(legal)))]))
    return totals, seen
