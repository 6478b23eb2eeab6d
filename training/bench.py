"""Self-play generation speed of the DMC actor, printed beside the target.

Usage::

    python -m twilight_env.training.bench [--players 4 3] [--decisions 200000] [--checkpoint PATH]

Plays self-play deals in this process (one torch thread, as an actor runs) with both
generators in the same run: :class:`~twilight_env.training.vec_selfplay.VecSelfPlay` on the batch
engine (``--vector-games`` deals, default 1024) and :class:`~twilight_env.training.selfplay.SelfPlay`
with one engine ``State`` per deal (``--games`` deals, default 256). Prints decisions/s
(every applied action, forced ones included) and recorded decisions/s (those with a
choice, which are trained on), the ratio to the 5,000 decisions/s target, and the
batch engine's speed-up over the scalar generator. The batch engine is measured over at
least 100 × ``--vector-games`` decisions (the "measured" column): its samples are
counted when deals finish, and a batch's deals finish in waves. The network is the default shape
with random weights unless ``--checkpoint`` is given (speed does not depend on the
weights' values, only on how long the deals are).
"""

from __future__ import annotations

from twilight_env.util.extras import require

require("torch", "train", "twilight_env.training.bench", as_main=__name__ == "__main__")

import argparse
import os
import time

import numpy as np
import torch

from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint
from twilight_env.agents.nn.features import num_roles
from twilight_env.agents.nn.network import NetConfig, QNetwork

from twilight_env.training.selfplay import SelfPlay
from twilight_env.training.vec_selfplay import VecSelfPlay

TARGET = 5000.0
"""Target self-play speed on the 2-core development machine (decisions/s)."""


def measure(num_players: int, decisions: int, games: int, checkpoint: str | None = None, seed: int = 0,
            engine: str = "scalar") -> dict:
    """Decisions/s of one actor for one variant (warm-up excluded); ``engine`` is
    ``"scalar"`` (:class:`SelfPlay`) or ``"vector"`` (:class:`VecSelfPlay`)."""
    torch.set_num_threads(1)
    if checkpoint:
        model = model_from_checkpoint(load_checkpoint(checkpoint, num_players), checkpoint)
    else:
        torch.manual_seed(seed)
        model = QNetwork(NetConfig(num_roles=num_roles(num_players))).eval()
    cls = VecSelfPlay if engine == "vector" else SelfPlay
    if engine == "vector":
        # samples are counted when deals finish; the batch's deals finish in waves about
        # 40 steps apart, so measure over many waves or recorded/s is meaningless
        decisions = max(decisions, 100 * games)
    sp = cls(num_players, model, np.random.default_rng(seed), num_games=games, epsilon=0.05, pool_prob=0.0)
    sp.collect(max(decisions // 5, 50 * games if engine == "vector" else 5000))  # warm-up: deals under way
    t0 = time.perf_counter()
    _, stats = sp.collect(decisions)
    dt = time.perf_counter() - t0
    return {"players": num_players, "decisions": stats.decisions, "seconds": dt,
            "decisions_per_s": stats.decisions / dt, "recorded_per_s": stats.recorded / dt}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.bench", description=__doc__.splitlines()[0])
    p.add_argument("--players", type=int, nargs="+", default=[4, 3], choices=(3, 4),
                   help="variants measured, in order (default 4 3)")
    p.add_argument("--decisions", type=int, default=200000,
                   help="measured decisions per generator (default %(default)s)")
    p.add_argument("--games", type=int, default=256, help="deals side by side, scalar generator (default %(default)s)")
    p.add_argument("--vector-games", type=int, default=1024,
                   help="deals side by side, batch-engine generator (default %(default)s)")
    p.add_argument("--checkpoint", default=None,
                   help="a DMC checkpoint whose network plays (default: random weights; speed does not depend on them)")
    args = p.parse_args(argv)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"cores: {os.cpu_count()}, load average (1 min): {load:.2f}")
    print(f"{'players':>7} {'generator':>22} {'measured':>9} {'decisions/s':>12} {'recorded/s':>11} "
          f"{'vs target':>9} {'speed-up':>8}")
    for npl in args.players:
        vec = measure(npl, args.decisions, args.vector_games, args.checkpoint, engine="vector")
        sca = measure(npl, args.decisions, args.games, args.checkpoint, engine="scalar")
        for name, r in ((f"batch engine B={args.vector_games}", vec), (f"scalar B={args.games}", sca)):
            up = r["decisions_per_s"] / sca["decisions_per_s"]
            print(f"{npl:>7} {name:>22} {r['decisions']:>9} {r['decisions_per_s']:>12.0f} {r['recorded_per_s']:>11.0f} "
                  f"{r['decisions_per_s'] / TARGET:>8.2f}x {up:>7.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
