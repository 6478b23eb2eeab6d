"""RLlib's PettingZoo wrapper on the Twilight AEC env: a masked random-policy rollout.

``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv(twilight_env.env())`` is the
``MultiAgentEnv`` that RLlib's algorithms train on (``register_env`` below names it for
an ``AlgorithmConfig().environment("twilight")``). The script plays whole deals through
the wrapper, each seat choosing uniformly among the legal actions of its
``action_mask``, sums the rewards the wrapper hands each agent, and checks those returns
against the deal scores the engine computed for the same deals (own side's deal points −
the other side's, / 360; R5), read from the finished states, not from the rewards::

    python examples/rllib_random_rollout.py --episodes 20

The game's actions are sequential (one seat acts at a time), so the wrapper steps one
agent per call, as it does every AEC env. Training an RLlib algorithm on it needs an
RLModule that applies the action mask; this example stops at the rollout. Needs RLlib
(``pip install -e ".[rllib]"``); it runs on CPU in a few seconds.
"""

from __future__ import annotations

import argparse

import numpy as np

ENV_NAME = "twilight"
"""The name under which :func:`make_env` is registered in RLlib's (Tune's) env registry."""


def make_env(config: dict | None = None):
    """RLlib's env creator: the wrapped AEC env with ``config``'s keywords
    (``num_players`` 3 or 4, and the other keywords of ``twilight_env.env``)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    import twilight_env

    return PettingZooEnv(twilight_env.env(**dict(config or {})))


def _engine_returns(raw) -> list[float]:
    """Each agent's deal score difference / 360 from the finished deal's captured cards (R5)."""
    from twilight_env.rules.scoring import score_mask

    row = []
    for a in raw.possible_agents:
        info, s = raw.infoset(a), raw.seat_of(a)
        cap, cult = info.captured, info.seat_cult
        own = score_mask(cap[s] | cap[s ^ 2], cult[s])
        other = score_mask(cap[s ^ 1] | cap[s ^ 3], cult[s ^ 1])
        row.append((own - other) / 360.0)
    return row


def main(episodes: int = 20, num_players: int = 4, seed: int = 0, verbose: bool = True) -> dict:
    """Play ``episodes`` deals through RLlib's wrapper with a masked random policy.

    Args:
        episodes: deals to play, >= 1.
        num_players: 3 or 4 (R7).
        seed: seeds the first reset (later resets continue the env's generator) and the
            policy's generator.
        verbose: print the mean returns.

    Returns:
        dict with ``rllib`` (float array ``(episodes, players)``, the rewards the wrapper
        handed each agent, summed over the deal), ``engine`` (the same from the finished
        deals' scores), ``steps`` (int, wrapper steps taken).

    Raises:
        ValueError: ``episodes`` < 1.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)  # what an RLlib AlgorithmConfig would use
    env = make_env({"num_players": num_players})
    agents = sorted(env.possible_agents)
    rng = np.random.default_rng(seed)
    returns, engine, steps = [], [], 0
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed if episode == 0 else None)
        total = dict.fromkeys(agents, 0.0)
        done = False
        while not done:
            (agent, o), = obs.items()  # one agent acts at a time
            action = int(rng.choice(np.flatnonzero(o["action_mask"])))
            obs, rewards, terminated, truncated, _ = env.step({agent: action})
            steps += 1
            for a, r in rewards.items():
                total[a] += float(r)
            done = terminated["__all__"] or truncated["__all__"]
        returns.append([total[a] for a in agents])
        engine.append(_engine_returns(env.env.unwrapped))
    out = {"rllib": np.asarray(returns), "engine": np.asarray(engine), "steps": steps}
    if verbose:
        print(f"{episodes} deals, {num_players} players, {steps} steps: mean return per player (RLlib wrapper) "
              f"{np.round(out['rllib'].mean(0), 3)}, (engine) {np.round(out['engine'].mean(0), 3)}; "
              f"largest difference {np.abs(out['rllib'] - out['engine']).max():.2e}")
    env.close()
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--players", type=int, choices=(3, 4), default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    main(a.episodes, a.players, a.seed)
