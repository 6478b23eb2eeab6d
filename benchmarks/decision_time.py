"""CPU seconds per decision of agent specs on the same decisions, side by side.

Plays ``--deals`` deals with ``heuristic`` on every seat and, at every ``--every``-th
decision with more than one legal action, times each spec's ``act`` on that information
set (each with its own fresh generator). Prints mean and median CPU seconds per decision
(``time.process_time``: this process only, so other jobs on a shared machine count less
than in wall time; BLAS and torch on one thread, each agent's first decision, which
loads and compiles, untimed; each spec gets its own fresh information set, so what it
computes on first use counts for every spec alike) for each spec and their ratio to the first spec, all from the same
run, e.g. to choose the iterations of ``openspiel:ismcts`` that match ``ismcts`` or
``pimc`` in time::

    python benchmarks/decision_time.py ismcts pimc openspiel:ismcts:iterations=100 --players 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one core: BLAS without helper threads
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+", help="agent specs to time, e.g. ismcts pimc openspiel:ismcts:iterations=100")
    ap.add_argument("--players", type=int, choices=(3, 4), default=3)
    ap.add_argument("--deals", type=int, default=2)
    ap.add_argument("--every", type=int, default=4, help="time every k-th decision (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from twilight_env.agents.base import make_agent
    from twilight_env.rules.engine import State
    from twilight_env.rules.infoset import InfoSet

    agents = [make_agent(s) for s in args.specs]
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        pass
    warm = State.random(np.random.default_rng(12345), 0, args.players)  # loads, caches and compiles, untimed
    while len(warm.legal_actions()) < 2:
        warm.apply(warm.legal_actions()[0])
    for agent in agents:
        agent.act(InfoSet(warm, warm.deciding_seat), warm.legal_actions(), np.random.default_rng(0))
    guide = make_agent("heuristic")
    rng = np.random.default_rng(args.seed)
    times = {s: [] for s in args.specs}
    k = 0
    for d in range(args.deals):
        state = State.random(rng, 0, args.players)
        while not state.done:
            info = InfoSet(state, state.deciding_seat)
            legal = info.legal_actions
            if len(legal) > 1:
                k += 1
                if k % args.every == 0:
                    for spec, agent in zip(args.specs, agents):
                        r = np.random.default_rng((args.seed, d, k))
                        own = InfoSet(state, state.deciding_seat)  # each spec its own, as in play:
                        t = time.process_time()  # what an InfoSet computes on first use counts for every spec
                        agent.act(own, legal, r)
                        times[spec].append(time.process_time() - t)
            state.apply(guide.act(info, legal, rng))
    base = statistics.mean(times[args.specs[0]])
    n = len(times[args.specs[0]])
    print(f"{n} decisions, {args.players} players, {args.deals} deals, seed {args.seed}")
    print(f"{'spec':45s} {'mean cpu s':>11s} {'median cpu s':>13s} {'mean / first':>13s}")
    for spec in args.specs:
        m = statistics.mean(times[spec])
        print(f"{spec:45s} {m:11.4f} {statistics.median(times[spec]):13.4f} {m / base:13.2f}")


if __name__ == "__main__":
    main()
