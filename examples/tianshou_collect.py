"""Tianshou's PettingZoo wrapper and collector on the Twilight AEC env.

Every seat plays Tianshou's masked random policy
(``MARLRandomDiscreteMaskedOffPolicyAlgorithm``) under a ``MultiAgentPolicy``; a
``Collector`` over a ``DummyVectorEnv`` of ``PettingZooEnv(twilight_env.env())`` gathers
whole deals. The script checks Tianshou's per-episode returns (one value per player)
against the deal scores the engine computed for the same deals, independently of the
rewards Tianshou read. A multi-agent env's episode return is one value per player, so the
collector keeps per-player summary statistics (:class:`PerPlayerStats`) where Tianshou's
default ones expect one number per episode::

    python examples/tianshou_collect.py --episodes 20

Needs the ``examples`` extra (``pip install -e ".[examples]"``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
from tianshou.data import CollectStats
from tianshou.data.stats import SequenceSummaryStats, compute_dim_to_summary_stats


@dataclass(kw_only=True)
class PerPlayerStats(CollectStats):
    """Tianshou's collect statistics for a multi-agent env, whose episode returns are an
    array ``(episodes, players)``: ``returns_stat_by_player`` maps a player index to the
    summary of its returns, and ``returns_stat`` (one number per episode in Tianshou's
    default statistics) stays ``None``, instead of summarising the flattened array."""

    returns_stat_by_player: dict[int, SequenceSummaryStats] | None = None

    def refresh_return_stats(self) -> None:
        if self.returns.ndim == 2 and self.returns.size > 0:
            self.returns_stat, self.returns_stat_by_player = None, compute_dim_to_summary_stats(self.returns.T)
        else:
            super().refresh_return_stats()


def main(episodes: int = 20, num_players: int = 4, seed: int = 0, verbose: bool = True) -> dict:
    """Collect ``episodes`` deals; return Tianshou's returns and the engine's.

    Returns:
        dict with ``collector`` (float array ``(episodes, players)``, Tianshou's episode
        returns) and ``engine`` (the same from the finished deals' scores: own side's deal
        points − the other side's, / 360; R5).
    """
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    import twilight_env
    from twilight_env.rules.scoring import score_mask

    finished = []  # the engine's deal scores of every finished deal, in order

    class Recorder(PettingZooEnv):
        def step(self, action):
            out = super().step(action)
            if out[2]:  # terminated: the deal is over; score it from the cards taken (R5)
                raw = self.env.unwrapped
                row = []
                for a in raw.possible_agents:
                    info, s = raw.infoset(a), raw.seat_of(a)
                    cap, cult = info.captured, info.seat_cult
                    own = score_mask(cap[s] | cap[s ^ 2], cult[s])
                    other = score_mask(cap[s ^ 1] | cap[s ^ 3], cult[s ^ 1])
                    row.append((own - other) / 360.0)
                finished.append(row)
            return out

    np.random.seed(seed)  # Tianshou's random policy draws from numpy's global generator
    env = DummyVectorEnv([lambda: Recorder(twilight_env.env(num_players=num_players))])
    space = env.action_space[0]
    agents = [f"player_{i}" for i in range(num_players)]
    policy = MultiAgentPolicy({a: MARLRandomDiscreteMaskedOffPolicyAlgorithm(space).policy for a in agents})
    collector = Collector(policy, env, collect_stats_class=PerPlayerStats)
    collector.reset(gym_reset_kwargs={"seed": seed})
    stats = collector.collect(n_episode=episodes)
    out = {"collector": np.asarray(stats.returns, dtype=float).reshape(episodes, num_players),
           "engine": np.asarray(finished[:episodes], dtype=float),
           "mean_by_player": np.array([stats.returns_stat_by_player[i].mean for i in range(num_players)])}
    if verbose:
        print(f"{episodes} deals, {num_players} players: mean return per player (Tianshou) "
              f"{np.round(out['mean_by_player'], 3)}, (engine) {np.round(out['engine'].mean(0), 3)}; "
              f"largest difference {np.abs(out['collector'] - out['engine']).max():.2e}")
    env.close()
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--players", type=int, choices=(3, 4), default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    main(a.episodes, a.players, a.seed)
