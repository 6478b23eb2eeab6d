"""MaskablePPO (sb3-contrib) learns one seat of Twilight against fixed agents.

The learner plays ``player_0`` of ``gymnasium.make("twilight/SingleAgent-v0")``; the
other seats are played by ``--opponents`` (``random`` or ``heuristic``). After training,
the learned policy and a uniformly random legal policy play the same evaluation deals
(same seeds, so the same cards), and the script prints both mean rewards (deal points
difference / 360) and their paired difference with a 95% interval::

    python examples/maskable_ppo.py --timesteps 20000 --eval-deals 300

Needs the ``examples`` extra (``pip install -e ".[examples]"``).
"""

from __future__ import annotations

import argparse
import math

import gymnasium as gym
import numpy as np

import twilight_env  # noqa: F401  (registers twilight/SingleAgent-v0)


def _play(env, policy, seed: int) -> float:
    """One deal with ``policy(obs, mask) -> action``; the learner's total reward."""
    obs, info = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        obs, r, term, trunc, info = env.step(policy(obs, env.unwrapped.action_masks()))
        total += r
        done = term or trunc
    return total


class FixedSolo(gym.Wrapper):
    """3 players: the learner (``player_0``) is the solo in every deal (R7.3: it also
    plays the new moon), by the env's ``solo`` reset option."""

    def reset(self, *, seed=None, options=None):
        return self.env.reset(seed=seed, options={"solo": 0, **(options or {})})


def main(timesteps: int = 20000, eval_deals: int = 300, num_players: int = 4, opponents: str = "random",
         seed: int = 0, solo: bool = False, verbose: bool = True) -> dict:
    """Train, then evaluate against a random policy on the same deals.

    Returns:
        dict with ``trained`` and ``random`` (mean reward per deal), ``diff`` (paired mean
        difference) and ``diff_ci`` (its 95% normal interval).
    """
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = gym.make("twilight/SingleAgent-v0", num_players=num_players, opponents=opponents)
    if solo:
        if num_players != 3:
            raise ValueError("solo=True is for 3 players")
        env = FixedSolo(env)
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, learning_rate=1e-3, gamma=1.0,
                        seed=seed, verbose=0, policy_kwargs={"net_arch": [128, 128]})
    model.learn(total_timesteps=timesteps)

    def trained(obs, mask):
        return int(model.predict(obs, action_masks=mask, deterministic=True)[0])

    rng = np.random.default_rng(seed)

    def uniform(obs, mask):
        return int(rng.choice(np.flatnonzero(mask)))

    seeds = [10_000 + seed * eval_deals + i for i in range(eval_deals)]
    a = np.array([_play(env, trained, s) for s in seeds])
    b = np.array([_play(env, uniform, s) for s in seeds])
    d = a - b
    half = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
    out = {"trained": float(a.mean()), "random": float(b.mean()), "diff": float(d.mean()),
           "diff_ci": (float(d.mean() - half), float(d.mean() + half))}
    if verbose:
        print(f"{timesteps} steps, {eval_deals} evaluation deals, {num_players} players vs {opponents}")
        print(f"mean reward per deal: trained {out['trained']:+.3f}, random policy {out['random']:+.3f}, "
              f"difference {out['diff']:+.3f} [{out['diff_ci'][0]:+.3f}, {out['diff_ci'][1]:+.3f}]")
    env.close()
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timesteps", type=int, default=20000)
    ap.add_argument("--eval-deals", type=int, default=300)
    ap.add_argument("--players", type=int, choices=(3, 4), default=4)
    ap.add_argument("--opponents", default="random")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--solo", action="store_true", help="3 players: the learner is the solo in every deal")
    a = ap.parse_args()
    main(a.timesteps, a.eval_deals, a.players, a.opponents, a.seed, a.solo)
