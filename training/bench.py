"""Self-play generation speed of the DMC actor, printed beside the target.

Usage::

    python -m training.bench [--players 4 3] [--decisions 30000] [--games 256] [--checkpoint PATH]

Plays self-play deals with :class:`~training.selfplay.SelfPlay` in this process (one
torch thread, as an actor runs) and prints decisions/s (every applied action, forced
ones included) and recorded decisions/s (those with a choice, which are trained on),
next to the 5,000 decisions/s target and the ratio. The network is the default shape
with random weights unless ``--checkpoint`` is given (speed does not depend on the
weights' values, only on how long the deals are).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from .checkpoint import load_checkpoint, model_from_checkpoint
from .features import num_roles
from .networks import NetConfig, QNetwork
from .selfplay import SelfPlay

TARGET = 5000.0
"""Target self-play speed on the 2-core development machine (decisions/s)."""


def measure(num_players: int, decisions: int, games: int, checkpoint: str | None = None, seed: int = 0) -> dict:
    """Decisions/s of one actor for one variant (warm-up excluded)."""
    torch.set_num_threads(1)
    if checkpoint:
        model = model_from_checkpoint(load_checkpoint(checkpoint, num_players), checkpoint)
    else:
        torch.manual_seed(seed)
        model = QNetwork(NetConfig(num_roles=num_roles(num_players))).eval()
    sp = SelfPlay(num_players, model, np.random.default_rng(seed), num_games=games, epsilon=0.05, pool_prob=0.0)
    sp.collect(min(decisions // 5, 5000))  # warm-up
    t0 = time.perf_counter()
    _, stats = sp.collect(decisions)
    dt = time.perf_counter() - t0
    return {"players": num_players, "decisions": stats.decisions, "seconds": dt,
            "decisions_per_s": stats.decisions / dt, "recorded_per_s": stats.recorded / dt}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.bench", description=__doc__.splitlines()[0])
    p.add_argument("--players", type=int, nargs="+", default=[4, 3], choices=(3, 4))
    p.add_argument("--decisions", type=int, default=30000)
    p.add_argument("--games", type=int, default=256)
    p.add_argument("--checkpoint", default=None)
    args = p.parse_args(argv)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"cores: {os.cpu_count()}, load average (1 min): {load:.2f}")
    print(f"{'players':>7} {'decisions/s':>12} {'recorded/s':>11} {'target':>7} {'ratio':>6}")
    for npl in args.players:
        r = measure(npl, args.decisions, args.games, args.checkpoint)
        print(f"{npl:>7} {r['decisions_per_s']:>12.0f} {r['recorded_per_s']:>11.0f} {TARGET:>7.0f} "
              f"{r['decisions_per_s'] / TARGET:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
