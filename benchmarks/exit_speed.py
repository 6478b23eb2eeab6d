"""Time per decision of the pieces of expert iteration, for budgeting ``python -m twilight_env.training.exit`` runs.

Per number of players, on ``--positions`` positions of ``agent_speed.position`` (random
play up to 7..1 tricks left, then a few random actions; decisions with two or more legal
actions): one IS-MCTS search of ``--iterations`` iterations with the Python search and
with the compiled one (``twilight_env.agents.fast_ismcts``; the first, compiling call is left out),
one forward pass of an untrained :class:`twilight_env.agents.exit.PolicyValueNet` of the default shape
(the root prior, batch 1) and one ``exit-search`` decision (prior + compiled search).

    python benchmarks/exit_speed.py --iterations 1000 --positions 20
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.agent_speed import position  # noqa: E402


def _positions(num_players: int, n: int, seed: int):
    from twilight_env.rules.infoset import InfoSet

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        st = position(rng, num_players, int(rng.integers(1, 8)), int(rng.integers(4)))
        info = InfoSet(st, st.deciding_seat)
        if len(info.legal_actions) > 1:
            out.append(info)
    return out


def _time(fn, infos) -> float:
    t = time.perf_counter()
    for info in infos:
        fn(info)
    return (time.perf_counter() - t) / len(infos)


def main(argv=None) -> None:
    import torch

    from twilight_env.agents.exit import PolicyValueNet, PVConfig, new_checkpoint, policy_value, resolve_backend, root_search
    from twilight_env.agents.base import make_agent
    from twilight_env.agents.nn.checkpoint import save_checkpoint
    from twilight_env.agents.nn.features import num_roles

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--positions", type=int, default=20)
    p.add_argument("--seed", type=int, default=5)
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    fast = resolve_backend("auto") == "numba"
    print(f"{'players':>7} {'what':<52} {'ms/decision':>12}")
    for npl in (3, 4):
        infos = _positions(npl, a.positions, a.seed + npl)
        rng = np.random.default_rng(0)
        py = _time(lambda i: root_search(i, a.iterations, 0.7, rng, backend="python"), infos)
        print(f"{npl:>7} {f'IS-MCTS search, Python, {a.iterations} iterations':<52} {py * 1e3:>12.2f}")
        if fast:
            root_search(infos[0], 10, 0.7, rng, backend="numba")  # compile
            nb = _time(lambda i: root_search(i, a.iterations, 0.7, rng, backend="numba"), infos)
            print(f"{npl:>7} {f'IS-MCTS search, compiled, {a.iterations} iterations':<52} {nb * 1e3:>12.2f}")
            print(f"{npl:>7} {'  Python / compiled':<52} {py / nb:>12.2f}")
        model = PolicyValueNet(PVConfig(num_roles=num_roles(npl))).eval()
        for prm in model.parameters():
            prm.requires_grad_(False)
        fwd = _time(lambda i: policy_value(model, [i], [i.legal_actions]), infos)
        print(f"{npl:>7} {'policy/value forward (256-256 trunk, 128 heads), batch 1':<52} {fwd * 1e3:>12.2f}")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "net.pt")
            save_checkpoint(new_checkpoint(model, npl), path)
            agent = make_agent(f"exit-search:{path},iterations={a.iterations},backend={'numba' if fast else 'python'}")
            es = _time(lambda i: agent.act(i, i.legal_actions, rng), infos)
        print(f"{npl:>7} {f'exit-search decision ({a.iterations} iterations)':<52} {es * 1e3:>12.2f}")


if __name__ == "__main__":
    main()
