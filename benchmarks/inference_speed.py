"""World sampling cost per decision: uniform against the card-location model, one core.

For positions of random deals (played forward with the heuristic), times drawing
``--worlds`` determinizations (engine states, as ``pimc`` does) with
``InfoSet.sample_state`` and with ``twilight_env.agents.pimc.world_drawer(info, "model")`` (model
forward pass, the sampler's table, then the draws), and prints both medians in
milliseconds per decision and their ratio. Usage::

    python benchmarks/inference_speed.py --players 3 --positions 60 --worlds 32
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--players", type=int, choices=(3, 4), default=3)
    p.add_argument("--positions", type=int, default=60)
    p.add_argument("--worlds", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    import torch

    from twilight_env.agents.heuristic import decide_state
    from twilight_env.agents.pimc import world_drawer
    from twilight_env.rules.engine import State
    from twilight_env.rules.infoset import InfoSet
    torch.set_num_threads(1)
    rng = np.random.default_rng(a.seed)
    infos = []
    while len(infos) < a.positions:
        st = State.random(rng, 0, a.players)
        for _ in range(int(rng.integers(0, 24))):
            st.apply(decide_state(st))
        infos.append(InfoSet(st, st.deciding_seat))
    world_drawer(infos[0], "model")(rng)  # load the weights once
    times = {"uniform": [], "model": []}
    for info in infos:
        for kind in ("uniform", "model"):
            t0 = time.perf_counter()
            draw = world_drawer(info, kind)
            for _ in range(a.worlds):
                draw(rng)
            times[kind].append(time.perf_counter() - t0)
    u, m = np.median(times["uniform"]) * 1e3, np.median(times["model"]) * 1e3
    print(f"{a.players} players, {a.positions} positions, {a.worlds} worlds per decision: "
          f"uniform {u:.2f} ms, model {m:.2f} ms per decision (median), model / uniform {m / u:.1f}")


if __name__ == "__main__":
    main()
