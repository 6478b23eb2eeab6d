"""Gymnasium single-agent view of the AEC env: one player learns, the others are agents.

:class:`SingleAgentEnv` plays the other players' decisions with given agents (objects
with ``act(infoset, legal_actions, rng) -> int``, see :mod:`twilight_env.agents.base`) until the
learning player must decide, so the learner sees an ordinary Gymnasium env:

| | |
|---|---|
| Observation | float32 ``(OBS_SIZE,)``: the learner's information set (:mod:`twilight_env.obs.encoding`) |
| Action | ``Discrete(31)`` (encoding: ``docs/API.md``, Actions); an illegal action ends the episode with reward ``illegal_reward`` (−1), as PettingZoo's classic ``env()`` does, or raises ``ValueError`` with ``illegal_action="raise"`` |
| Action mask | ``env.action_masks()`` bool ``(31,)`` (the method sb3-contrib's ``MaskablePPO`` calls), and ``info["action_mask"]`` int8 |
| Reward | the learner's AEC reward collected since its previous decision (deal points / 360 at a deal's end, or ±1 at a match's end) |
| Episode | one deal or one match (config keyword ``episode``) |
| Info | the AEC ``infos`` of the learner (``seat``, ``phase``, ``deal_points``, ``totals``, ``deals_played``) plus ``action_mask`` int8 (31,) and ``illegal_action`` bool |

Example::

    from twilight_env.envs.wrappers import SingleAgentEnv
    env = SingleAgentEnv(num_players=3, learner="player_0", opponents="random")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))

In 3 players the learner may be the solo in some deals (it then decides for the new
moon too, R7.3) and a Sun player in others; pass ``options={"solo": i}`` to
``reset`` to fix who is solo.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from twilight_env.envs.aec import raw_env
from twilight_env.obs.encoding import OBS_SIZE
from twilight_env.rules.engine import ACTION_TYPES, NUM_ACTIONS, action_or_none
from twilight_env.util.seeding import check_seed


def _make_agent(spec):
    if isinstance(spec, str):
        from twilight_env.agents.base import make_agent  # lazy: the agents package imports the engine, not this module
        return make_agent(spec)
    if not callable(getattr(spec, "act", None)):
        raise ValueError(f"an opponent must be an agent spec string or an object with act(infoset, "
                         f"legal_actions, rng), got {spec!r}")
    return spec


class SingleAgentEnv(gym.Env):
    """One learning player against agents, as a Gymnasium env (see the module docstring).

    Args:
        learner: the learning agent's name (``"player_0"``) or index.
        opponents: one agent or spec string (``"random"``, ``"pimc:worlds=8"``) for every
            other player, or a mapping agent name -> agent/spec, or a sequence by player
            index (the learner's entry is ignored).
        illegal_action: ``"terminate"`` (an illegal action ends the episode, the learner
            gets ``illegal_reward``, as PettingZoo's ``TerminateIllegalWrapper``) or
            ``"raise"`` (``ValueError``, nothing changes).
        illegal_reward: the reward for an illegal action under ``"terminate"``.
        **config: the AEC env keywords (``num_players``, ``episode``, ``target``, ...).

    Raises:
        ValueError: on a bad config keyword or value, an unknown learner, or a bad opponent.
    """

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(self, learner: str | int = "player_0", opponents: Any = "random",
                 illegal_action: str = "terminate", illegal_reward: float = -1.0, **config):
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}")
        if isinstance(illegal_reward, bool) or not isinstance(illegal_reward, (int, float, np.integer, np.floating)):
            raise ValueError(f"illegal_reward must be a number, got {illegal_reward!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._over = False
        self._raw = raw_env(**config)
        self.render_mode = self._raw.render_mode
        names = self._raw.possible_agents
        if (isinstance(learner, (int, np.integer)) and not isinstance(learner, bool)
                and 0 <= learner < len(names)):
            learner = names[int(learner)]
        if learner not in names:
            raise ValueError(f"learner must be one of {names} or an index 0..{len(names) - 1}, got {learner!r}")
        self.learner = learner
        if isinstance(opponents, Mapping):
            missing = [a for a in names if a != learner and a not in opponents]
            if missing:
                raise ValueError(f"opponents is missing agents {missing}")
            self._opponents = {a: _make_agent(opponents[a]) for a in names if a != learner}
        elif isinstance(opponents, Sequence) and not isinstance(opponents, str):
            if len(opponents) != len(names):
                raise ValueError(f"opponents as a sequence needs {len(names)} entries (by player), got {len(opponents)}")
            self._opponents = {a: _make_agent(opponents[i]) for i, a in enumerate(names) if a != learner}
        else:
            self._opponents = {a: _make_agent(opponents) for a in names if a != learner}
        self.observation_space = spaces.Box(self._raw.observation_space(learner)["observation"].low,
                                            self._raw.observation_space(learner)["observation"].high,
                                            (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)

    @property
    def aec_env(self) -> raw_env:
        """The underlying PettingZoo ``raw_env`` (read it; do not step it)."""
        return self._raw

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal (or start a match) and play the others until the learner decides.

        ``options`` are the AEC env's reset options (``deal``, ``dealer``, ``solo``, ``scores``).

        Raises:
            ValueError: a seed that is not an int >= 0 or None (``seed=True`` included; the
                message names ``seed``), or a malformed option.
        """
        seed = check_seed(seed)  # before gymnasium's reset, which takes seed=True as 1
        super().reset(seed=seed)
        self._raw.reset(seed=seed, options=options)
        self._over = False
        for agent in self._opponents.values():
            r = getattr(agent, "reset", None)
            if r is not None:
                r()
        self._advance()
        obs, _, _, _, info = self._view()
        return obs, info

    def step(self, action):
        """The learner's action, then the others' until the learner decides again or the end.

        Args:
            action: 0..30, of any integer type :func:`twilight_env.rules.engine.as_action` reads
                (a Python int, a NumPy integer scalar, a 0-d integer array; not a bool).

        Raises:
            ValueError: on an illegal action (nothing changes), or a step after the end.
        """
        raw = self._raw
        if self._over or not raw.agents or raw.terminations[raw.agent_selection]:
            raise ValueError("the episode is over; call reset()")
        try:
            raw.step(action)
        except ValueError:
            if self.illegal_action == "raise":
                raise
            self._over = True
            obs, _, _, _, info = self._view()
            info["illegal_action"] = True
            return obs, self.illegal_reward, True, False, info
        self._advance()
        return self._view()

    def _advance(self) -> None:
        raw = self._raw
        rng = self.np_random
        while True:
            agent = raw.agent_selection
            if raw.terminations[agent] or agent == self.learner:
                return
            info = raw.infoset(agent)
            legal = info.legal_actions
            a = self._opponents[agent].act(info, legal, rng)
            value = action_or_none(a)  # 1.0 == 1 and True == 1: compare only integers
            if value is None or value not in legal:
                raise ValueError(f"opponent {agent} ({getattr(self._opponents[agent], 'name', '?')}) chose "
                                 f"illegal action {a!r}; legal: {list(legal)} (an action is an int: "
                                 f"{ACTION_TYPES})")
            raw.step(value)

    def _view(self):
        raw = self._raw
        o = raw.observe(self.learner)
        self._mask = o["action_mask"]
        terminated = bool(raw.terminations[self.learner])
        reward = float(raw._cumulative_rewards[self.learner])
        # fresh objects every call: callers may keep or change what they get
        info = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.infos[self.learner].items()}
        info["action_mask"] = o["action_mask"].copy()
        info["illegal_action"] = False
        return o["observation"].copy(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """bool ``(31,)``: the learner's legal actions now (all False after the end)."""
        if self._over:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self._mask.astype(bool)

    def infoset(self):
        """The learner's :class:`~twilight_env.rules.infoset.InfoSet` now."""
        return self._raw.infoset(self.learner)

    def render(self):
        return self._raw.render()

    def close(self) -> None:
        self._raw.close()


__all__ = ["SingleAgentEnv"]
