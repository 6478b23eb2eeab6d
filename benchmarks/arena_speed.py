"""Arena speed with a batched agent: blocks of deals played side by side vs deal by deal.

Usage::

    python benchmarks/arena_speed.py [--deals 100] [--players 4] [--pairings neural:default,heuristic neural:default,random]

For each pairing, plays the same duplicate arena (``twilight_env.experiments.arena.play_arena``, one
process) twice in the same run: with lockstep blocks, where every pending decision of
the ``neural`` agent across the block's deals is scored in one forward pass
(``twilight_env.experiments.common.play_lockstep``), and deal by deal (one forward pass per
decision). Prints both wall times, the speed-up, and checks that both gave the same
points. Needs the ``train`` extra (torch) for the neural agent.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twilight_env.experiments.arena import play_arena  # noqa: E402
from twilight_env.records.dealsets import generate_deals  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=100)
    p.add_argument("--players", type=int, choices=(3, 4), default=4)
    p.add_argument("--pairings", nargs="+", default=["neural:default,heuristic", "neural:default,random"],
                   help="comma-separated spec pairs")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"cores: {os.cpu_count()}, load average (1 min): {load:.2f}; {args.deals} deals x 2 plays, "
          f"{args.players} players, one process")
    deals = generate_deals(args.deals, seed=args.seed)
    print(f"{'pairing':<34} {'lockstep s':>10} {'deal by deal s':>14} {'speed-up':>8}  same points")
    for pair in args.pairings:
        specs = pair.split(",")
        play_arena(specs, deals[:2], args.players, args.seed, 1, progress=False)  # load weights, warm up
        times, means = {}, {}
        for lockstep in (True, False):
            t0 = time.perf_counter()
            res = play_arena(specs, deals, args.players, args.seed, 1, progress=False, lockstep=lockstep)
            times[lockstep] = time.perf_counter() - t0
            means[lockstep] = res["pairings"][0]["pair_scores"]
        print(f"{' vs '.join(specs):<34} {times[True]:>10.2f} {times[False]:>14.2f} "
              f"{times[False] / times[True]:>7.2f}x  {means[True] == means[False]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
