"""``random``: a uniformly random legal action."""

from __future__ import annotations

import numpy as np



class RandomAgent:
    """Picks one of the legal actions uniformly at random with the given ``rng``."""

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may
    play many deals at once (``twilight_env.experiments.common.play_lockstep``)."""

    def __init__(self):
        self.name = "random"

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        return legal_actions[int(rng.integers(len(legal_actions)))]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, declare  # noqa: E402

declare(AgentDecl(name="random", factory=RandomAgent, summary="a uniformly random legal action", served=True))
