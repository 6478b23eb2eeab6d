"""CPU seconds per decision of an agent playing as the frozen agent of a best response.

Plays ``--deals`` deals of :class:`twilight_env.training.best_response.BestResponseSource` (the shipped
network as learner, the agent on the other side, each through ``act`` with an information
set) and prints the agent's decisions with a choice, their CPU time (``time.process_time``,
one torch thread) and the time per decision, plus the actions and agent choices per deal;
it is what a best response against that agent spends per agent decision. Usage::

    python benchmarks/frozen_agent_cost.py pimc:worlds=32 --players 4 --deals 4
    python benchmarks/frozen_agent_cost.py ismcts --players 4 --deals 2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("spec", help="agent spec, e.g. pimc:worlds=32")
    p.add_argument("--players", type=int, choices=(3, 4), default=4)
    p.add_argument("--deals", type=int, default=4, help="deals played side by side (each played to the end)")
    args = p.parse_args(argv)
    import numpy as np
    import torch
    torch.set_num_threads(1)
    from twilight_env.agents.base import make_agent
    from twilight_env.agents.neural import default_weights
    from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint
    from twilight_env.training.best_response import BestResponseSource, FrozenAgent

    inner = make_agent(args.spec)

    class Timed:
        stateless = True
        name = args.spec
        n, cpu = 0, 0.0

        def act(self, info, legal, rng):
            t0 = time.process_time()
            a = inner.act(info, legal, rng)
            self.cpu += time.process_time() - t0
            self.n += 1
            return a

    timed = Timed()
    model = model_from_checkpoint(load_checkpoint(default_weights(args.players)))
    src = BestResponseSource(args.players, model, FrozenAgent(timed, np.random.default_rng(0)),
                             np.random.default_rng(1), num_games=args.deals)
    first = [id(g) for g in src.games]
    actions = 0
    with torch.no_grad():
        while any(id(g) in first for g in src.games):  # until every first deal has finished
            _, stats = src.collect(1)
            actions += stats.decisions
    print(f"{args.spec}, {args.players} players, {args.deals} deals: {timed.n} agent decisions, "
          f"{timed.cpu:.1f} CPU s, {timed.cpu / max(1, timed.n):.4f} CPU s per decision; "
          f"{timed.n / args.deals:.1f} agent decisions and about {actions / args.deals:.0f} actions per deal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
