"""Self-play deals for Magnetic Mirror Descent: a batch of deals played to the end by the
current policy, its actions sampled, every decision with a choice recorded.

Two generators give the same :class:`Trajectories`:

- :func:`play_reduced`: reduced decks (``tricks`` 1..6, :class:`~twilight_env.rules.engine.ReducedState`,
  pure Python), the deals stepped in lockstep so that each step is one forward pass over
  every pending decision;
- :func:`play_full`: the full deck on the batch engine (:class:`~twilight_env.envs.vector.VectorEngine`),
  compact rows built for the whole batch at once
  (:func:`twilight_env.training.vec_selfplay.vector_rows`).

Both read only what the deciding seat may know (R2.5, R7.1; the compact rows of
:mod:`twilight_env.agents.nn.features`), deal uniformly (R2.3), lead with a uniform first
leader in 4 players (R2.4) and with the solo in 3 players (R7.2), and let the solo decide for
the new moon (R7.3). Decisions with one legal action are played without the network and not
recorded. Actions are drawn from the *behaviour* policy ``(1 - explore) * pi + explore *
uniform`` over the legal actions (``explore`` 0: the policy itself), so that every information
set a best response could reach keeps being visited; the probability of each drawn action under
the behaviour policy is recorded for the learner's importance weight. Every draw comes from the
generator passed in, in a fixed order, so a seed gives the same batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from twilight_env.rules.engine import NUM_ACTIONS, NUM_TRICKS, ReducedState, random_hands
from twilight_env.envs.vector import VectorEngine

from twilight_env.agents.nn.features import role_of, state_row
from twilight_env.agents.sampling import legal_matrix, sample

from twilight_env.training.vec_selfplay import vector_rows

SCALE = 360.0
"""Deal points per unit of return (R5: a deal score is at most 360)."""


@dataclass
class Trajectories:
    """The recorded decisions of one batch of deals (``K`` decisions with 2+ legal actions).

    Attributes:
        rows: ``(K, 25)`` int64 compact rows of the deciding seat.
        roles: ``(K,)`` int64 network head (``role_of``).
        legal: ``(K, 31)`` bool legal actions.
        actions: ``(K,)`` int64 the sampled action.
        behaviour: ``(K,)`` float32 its probability under the behaviour policy (module docstring).
        returns: ``(K,)`` float32 the deciding side's deal score minus the other side's at the
            end of the deal, / 360 (R5), in [-1, 1].
        deals: deals played. decisions: every decision made (forced ones included).
    """

    rows: np.ndarray
    roles: np.ndarray
    legal: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    behaviour: np.ndarray
    deals: int
    decisions: int


@torch.no_grad()
def policy_probs(model, rows: np.ndarray, roles: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The network's policy at decisions: ``(k, 31)`` float64, 0 off ``legal``, rows summing to 1.

    Args:
        model: a :class:`~twilight_env.agents.exit.PolicyValueNet`.
        rows: ``(k, 25)`` int64; roles: ``(k,)`` int64; legal: ``(k, 31)`` bool (1+ per row).
    """
    logits, _ = model(torch.from_numpy(np.ascontiguousarray(rows, dtype=np.int64)),
                      torch.from_numpy(np.ascontiguousarray(roles, dtype=np.int64)),
                      torch.from_numpy(np.ascontiguousarray(legal, dtype=bool)))
    probs = torch.softmax(logits.double(), dim=1).numpy()
    return np.where(legal, probs, 0.0)


def behaviour_sample(probs: np.ndarray, legal: np.ndarray, explore: float,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw from ``(1 - explore) * probs + explore * uniform(legal)`` (one uniform per row).

    Args:
        probs: ``(k, 31)`` float64 the policy (0 off ``legal``). legal: ``(k, 31)`` bool.
        explore: the uniform share, in [0, 1].

    Returns:
        ``(actions (k,) int64, their behaviour probabilities (k,) float32)``.
    """
    mix = (1.0 - explore) * probs + explore * legal / legal.sum(1, keepdims=True) if explore else probs
    actions = sample(mix, rng)
    return actions, mix[np.arange(len(actions)), actions].astype(np.float32)


def _stack(parts: list, deals: int, decisions: int) -> Trajectories:
    """Concatenate per-step records ``(rows, roles, legal, actions, behaviour)``; the returns
    are filled in by the caller."""
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return Trajectories(np.zeros((0, 25), np.int64), z, np.zeros((0, NUM_ACTIONS), bool), z,
                            np.zeros(0, np.float32), np.zeros(0, np.float32), deals, decisions)
    cols = [np.concatenate([p[i] for p in parts]) for i in range(5)]
    return Trajectories(cols[0], cols[1], cols[2], cols[3], np.zeros(len(cols[0]), np.float32), cols[4],
                        deals, decisions)


def play_reduced(model, num_players: int, tricks: int, num_deals: int, rng: np.random.Generator,
                 explore: float = 0.0) -> Trajectories:
    """Play ``num_deals`` reduced-deck deals with the sampled policy of ``model`` (module docstring).

    Args:
        model: a :class:`~twilight_env.agents.exit.PolicyValueNet` for ``num_players``.
        num_players: 3 or 4. tricks: 1..6. num_deals: 1 or more.
        rng: the generator of the deals, first leaders and sampled actions.
        explore: the uniform share of the behaviour policy, in [0, 1] (module docstring).

    Raises:
        ValueError: ``tricks`` outside 1..6, or a bad ``num_players`` / ``num_deals``.
    """
    if isinstance(tricks, bool) or not isinstance(tricks, int) or not 1 <= tricks < NUM_TRICKS:
        raise ValueError(f"play_reduced plays reduced decks, tricks 1..6; got {tricks!r} (7: play_full)")
    _check_batch(num_players, num_deals)
    leaders = rng.integers(0, 4, num_deals) if num_players == 4 else np.zeros(num_deals, np.int64)
    states = [ReducedState(random_hands(rng, tricks), int(leaders[i]), num_players) for i in range(num_deals)]
    parts, owners, seats, decisions = [], [], [], 0
    live = list(range(num_deals))
    while live:
        legal_lists = [states[i].legal_actions() for i in live]
        decisions += len(live)
        pick = [k for k, legal in enumerate(legal_lists) if len(legal) > 1]
        acts = {k: legal_lists[k][0] for k in range(len(live)) if len(legal_lists[k]) == 1}
        if pick:
            st = [states[live[k]] for k in pick]
            rows = np.array([state_row(s) for s in st], dtype=np.int64)
            roles = np.array([role_of(num_players, s.acting_seat) for s in st], dtype=np.int64)
            legal = legal_matrix([legal_lists[k] for k in pick])
            chosen, mu = behaviour_sample(policy_probs(model, rows, roles, legal), legal, explore, rng)
            parts.append((rows, roles, legal, chosen, mu))
            owners.append(np.array([live[k] for k in pick], dtype=np.int64))
            seats.append(np.array([s.deciding_seat for s in st], dtype=np.int64))
            acts.update(zip(pick, chosen.tolist()))
        for k, i in enumerate(live):
            states[i].apply(int(acts[k]))
        live = [i for i in live if not states[i].done]
    out = _stack(parts, num_deals, decisions)
    if parts:
        per_seat = np.array([s.returns() for s in states], dtype=np.float64)  # (n, 4) deal points
        out.returns = (per_seat[np.concatenate(owners), np.concatenate(seats)] / SCALE).astype(np.float32)
    return out


def play_full(model, num_players: int, num_deals: int, rng: np.random.Generator,
              explore: float = 0.0) -> Trajectories:
    """Play ``num_deals`` full-deck deals on the batch engine with the sampled policy of
    ``model`` (module docstring); arguments and errors as :func:`play_reduced`."""
    _check_batch(num_players, num_deals)
    eng = VectorEngine(num_deals, num_players)
    leaders = rng.integers(0, 4, num_deals) if num_players == 4 else None
    eng.reset(rng=rng, leaders=leaders)
    parts, owners, seats, decisions = [], [], [], 0
    pow2 = np.int64(1) << np.arange(NUM_ACTIONS, dtype=np.int64)
    while True:
        active = ~eng.done
        if not active.any():
            break
        decisions += int(active.sum())
        bits = eng.legal_bits()
        legal_all = (bits[:, None] & pow2) != 0
        count = legal_all.sum(1)
        actions = legal_all.argmax(1)  # the only legal action where there is one
        idx = np.flatnonzero(active & (count > 1))
        if idx.size:
            seat = eng.deciding_seat[idx]
            rows = vector_rows(eng)[idx]
            roles = eng.acting_seat[idx] if num_players == 3 else np.zeros(idx.size, np.int64)
            legal = legal_all[idx]
            chosen, mu = behaviour_sample(policy_probs(model, rows, roles, legal), legal, explore, rng)
            actions[idx] = chosen
            parts.append((rows, roles.astype(np.int64), legal, chosen, mu))
            owners.append(idx)
            seats.append(seat.astype(np.int64))
        eng.apply(actions, active=active)
    out = _stack(parts, num_deals, decisions)
    if parts:
        per_seat = np.asarray(eng.returns(), dtype=np.float64)
        out.returns = (per_seat[np.concatenate(owners), np.concatenate(seats)] / SCALE).astype(np.float32)
    return out


def play(model, num_players: int, tricks: int, num_deals: int, rng: np.random.Generator,
         explore: float = 0.0) -> Trajectories:
    """:func:`play_full` for ``tricks == 7``, :func:`play_reduced` below (same arguments)."""
    if tricks == NUM_TRICKS:
        return play_full(model, num_players, num_deals, rng, explore)
    return play_reduced(model, num_players, tricks, num_deals, rng, explore)


def _check_batch(num_players, num_deals) -> None:
    if num_players not in (3, 4) or isinstance(num_players, bool):
        raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
    if isinstance(num_deals, bool) or not isinstance(num_deals, (int, np.integer)) or num_deals < 1:
        raise ValueError(f"num_deals must be an integer >= 1, got {num_deals!r}")


__all__ = ["SCALE", "Trajectories", "behaviour_sample", "play", "play_full", "play_reduced", "policy_probs"]
