"""One round of NFSP self-play: ``games`` deals played side by side to their end.

At the start of each deal every player draws its policy for the deal (Heinrich & Silver
2016, Algorithm 1): with probability ``eta`` its best response (epsilon-greedy on the
Q-network; these decisions are offered to the reservoir), else its average policy (a draw
from the policy network). Players are the OpenSpiel players
(:data:`~twilight_env.training.reduced_solve.PLAYER_OF_SEAT`: in 3 players the solo decides
for its own seat and for the new moon, R7.3). Each decision reads the env observation of
the deciding seat (:func:`~twilight_env.obs.encoding.observation_and_mask`), and all
pending decisions of the round are scored in one forward pass per network.

Returns of a deal are each side's deal score minus the other's / 360 (R5,
``State.returns``); a player's transitions link its consecutive decisions, the last one
ending the episode with the return.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from twilight_env.agents.sampling import sample
from twilight_env.obs.encoding import OBS_SIZE, observation_and_mask
from twilight_env.rules.engine import NUM_TRICKS, ReducedState, State
from twilight_env.training.nfsp.buffers import mask_bits, pack_obs
from twilight_env.training.reduced_solve import PLAYER_OF_SEAT

FIRST_SEAT = {4: (0, 1, 2, 3), 3: (0, 1, 3)}
"""A seat of each OpenSpiel player (3 players: the solo at 0, the Sun seats 1 and 3)."""


def new_deal(players: int, tricks: int, rng: np.random.Generator):
    """A shuffled deal (R2.3) with its first leader: uniform in 4 players (R2.4), the solo
    in 3 (R7.2); the engine's reduced deck when ``tricks`` < 7."""
    leader = int(rng.integers(0, 4)) if players == 4 else 0
    if tricks == NUM_TRICKS:
        return State.random(rng, leader, players)
    return ReducedState.random(rng, leader, players, tricks)


def masked_logits(net: torch.nn.Module, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``(B, 31)`` float64 outputs of ``net`` on ``obs``, ``-inf`` on illegal actions (no grad)."""
    with torch.no_grad():
        out = net(torch.from_numpy(obs)).double().numpy()
    return np.where(mask, out, -np.inf)


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of masked logits (``-inf`` entries get 0)."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass
class Round:
    """What one round produced: transitions for the replay buffer, samples for the
    reservoir (dicts of arrays, :mod:`~twilight_env.training.nfsp.buffers` fields), and
    counts (``decisions``, ``deals``)."""

    rl: dict
    sl: dict
    decisions: int
    deals: int


def _choose(qnet, avgnet, obs, mask, br, eps, rng) -> np.ndarray:
    """Actions of one step: epsilon-greedy on the Q-network where ``br``, else a draw from the
    average policy. Random numbers: one uniform per best-response row, one per random or
    average-policy row, in that order."""
    actions = np.zeros(len(obs), dtype=np.int64)
    if br.any():
        q = masked_logits(qnet, obs[br], mask[br])
        act = q.argmax(axis=1)
        explore = rng.random(len(act)) < eps
        if explore.any():
            legal = mask[br][explore]
            act[explore] = sample(legal / legal.sum(axis=1, keepdims=True), rng)
        actions[br] = act
    if (~br).any():
        actions[~br] = sample(softmax_rows(masked_logits(avgnet, obs[~br], mask[~br])), rng)
    return actions


def play_round(players: int, tricks: int, games: int, eta: float, eps: float,
               qnet: torch.nn.Module, avgnet: torch.nn.Module, rng: np.random.Generator) -> Round:
    """Play ``games`` deals to their end (module docstring); every random number from ``rng``.

    Returns:
        the :class:`Round`.
    """
    seat_player = PLAYER_OF_SEAT[players]
    states = [new_deal(players, tricks, rng) for _ in range(games)]
    br_mode = rng.random((games, players)) < eta
    traj = [[[] for _ in range(players)] for _ in range(games)]  # (obs, legal bits, action)
    live = list(range(games))
    decisions = 0
    while live:
        seats = [states[g].deciding_seat for g in live]
        pairs = [observation_and_mask(states[g], s) for g, s in zip(live, seats)]
        obs = np.stack([o for o, _ in pairs])
        mask = np.stack([m for _, m in pairs]) != 0
        who = np.array([seat_player[s] for s in seats])
        br = br_mode[live, who]
        actions = _choose(qnet, avgnet, obs, mask, br, eps, rng)
        bits = mask_bits(mask)
        for k, g in enumerate(live):
            traj[g][who[k]].append((obs[k], bits[k], int(actions[k])))
            states[g].apply(int(actions[k]))
        decisions += len(live)
        live = [g for g in live if not states[g].done]
    rl, sl = _transitions(states, traj, br_mode, players)
    return Round(rl=rl, sl=sl, decisions=decisions, deals=games)


def _transitions(states, traj, br_mode, players: int) -> tuple[dict, dict]:
    """Replay-buffer rows (every decision) and reservoir rows (best-response decisions)."""
    s_obs, s_act, rew, done, n_obs, n_legal = [], [], [], [], [], []
    sl_obs, sl_legal, sl_act = [], [], []
    for g, st in enumerate(states):
        ret = st.returns()
        for p in range(players):
            steps = traj[g][p]
            r = ret[FIRST_SEAT[players][p]] / 360.0
            for i, (o, bits, a) in enumerate(steps):
                last = i == len(steps) - 1
                s_obs.append(o)
                s_act.append(a)
                rew.append(r if last else 0.0)
                done.append(last)
                n_obs.append(o if last else steps[i + 1][0])
                n_legal.append(0 if last else steps[i + 1][1])
                if br_mode[g, p]:
                    sl_obs.append(o)
                    sl_legal.append(bits)
                    sl_act.append(a)
    flags, scalars = pack_obs(np.stack(s_obs))
    nflags, nscalars = pack_obs(np.stack(n_obs))
    rl = {"flags": flags, "scalars": scalars, "action": np.array(s_act, np.int8),
          "reward": np.array(rew, np.float32), "done": np.array(done, bool),
          "next_flags": nflags, "next_scalars": nscalars, "next_legal": np.array(n_legal, np.int64)}
    if sl_obs:
        f, sc = pack_obs(np.stack(sl_obs))
    else:
        f, sc = pack_obs(np.zeros((0, OBS_SIZE), np.float32))
    sl = {"flags": f, "scalars": sc, "legal": np.array(sl_legal, np.int64), "action": np.array(sl_act, np.int8)}
    return rl, sl


__all__ = ["FIRST_SEAT", "Round", "new_deal", "play_round", "masked_logits", "softmax_rows"]
