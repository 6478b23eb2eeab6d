"""Shared helper of the environment tests: the AEC loop with random masked actions (the
random positions themselves come from ``tests/positions.py``)."""

from __future__ import annotations

import numpy as np


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
