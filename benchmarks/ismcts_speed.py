"""IS-MCTS speed: the Python search (``ismcts``) against the compiled one
(``ismcts:backend=numba``, :func:`twilight_env.agents.fast_ismcts.search`), side by side.

Prints, in one run on the same positions (each decision timed with both, in turn, with
the same seed, so a change in the machine's load falls on both alike):

- seconds per decision (median; also by player count) of the default ``ismcts``
  (1000 iterations, Python search with the compiled rollout when numba is installed) and
  of ``ismcts:backend=numba`` at 1000 iterations, and their ratio;
- iterations per second of each (all iterations over all the time) and the ratio;
- the compiled iterations per second at ``--big`` iterations per decision (per-call
  costs spread thin), and how many compiled iterations fit in the default ``ismcts``'s
  median time per decision; then that many are run on the same positions and their
  median time printed, to check the estimate.

Positions: random deals, 4 and 3 players in turn, played by random legal actions to
3..6 tricks left and a few actions into the trick, kept when the deciding seat has at
least two legal actions (:func:`benchmarks.agent_speed.position`). The compiled code
is loaded (or compiled, on a machine's first run) before timing. Usage::

    python benchmarks/ismcts_speed.py                  # about half a minute
    python benchmarks/ismcts_speed.py --positions 40 --seed 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.agents import fast_ismcts, fast_rollout  # noqa: E402
from twilight_env.agents.base import make_agent  # noqa: E402


def decisions(seed: int, n: int) -> list[InfoSet]:
    """``n`` information sets of deciding seats with at least two legal actions, 4 and 3
    players in turn (positions of :func:`benchmarks.agent_speed.position`)."""
    from benchmarks.agent_speed import position

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        st = position(rng, 4 if len(out) % 2 == 0 else 3, int(rng.integers(3, 7)), int(rng.integers(0, 8)))
        info = InfoSet(st, st.deciding_seat)
        if len(info.legal_actions) > 1:
            out.append(info)
    return out


def time_agents(infos: list[InfoSet], specs: list[str], seed: int) -> dict[str, list[float]]:
    """Seconds per decision of each spec on each information set, the specs in turn."""
    agents = {s: make_agent(s) for s in specs}
    times = {s: [] for s in specs}
    for i, info in enumerate(infos):
        for s, agent in agents.items():
            rng = np.random.default_rng(seed + i)
            t = time.perf_counter()
            agent.act(info, info.legal_actions, rng)
            times[s].append(time.perf_counter() - t)
    return times


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--positions", type=int, default=24, help="decisions timed (4 and 3 players in turn)")
    p.add_argument("--big", type=int, default=20000, help="compiled iterations per decision for the rate line")
    args = p.parse_args(argv)
    if not fast_rollout.HAVE_NUMBA:
        print("numba is not installed (pip install 'twilight-env[fast]'): only the Python search exists")
        return 1
    if args.positions < 2 or args.big < 1000:
        p.error("--positions must be >= 2 and --big >= 1000")
    infos = decisions(args.seed, args.positions)
    t = time.perf_counter()
    fast_ismcts.search(infos[0], 10, 0.7, np.random.default_rng(0))
    print(f"compiled search loaded in {time.perf_counter() - t:.2f} s (compiled on a machine's first run)")
    make_agent("ismcts").act(infos[0], infos[0].legal_actions, np.random.default_rng(0))  # warm the rollout

    py, nb = "ismcts", "ismcts:backend=numba"
    times = time_agents(infos, [py, nb], args.seed)
    three = [i for i, info in enumerate(infos) if info.num_players == 3]
    four = [i for i, info in enumerate(infos) if info.num_players == 4]
    print()
    print(f"{'per decision, 1000 iterations (median s)':<44} {'python':>9} {'numba':>9} {'ratio':>7}")
    for label, idx in (("all positions", range(len(infos))), ("3 players", three), ("4 players", four)):
        tp = statistics.median(times[py][i] for i in idx)
        tn = statistics.median(times[nb][i] for i in idx)
        print(f"{label + f' (n={len(idx)})':<44} {tp:>9.4f} {tn:>9.4f} {tp / tn:>7.1f}")
    it_py = 1000 * len(infos) / sum(times[py])
    it_nb = 1000 * len(infos) / sum(times[nb])
    print(f"{'iterations/s at 1000 per decision':<44} {it_py:>9.0f} {it_nb:>9.0f} {it_nb / it_py:>7.1f}")

    big = time_agents(infos, [f"ismcts:backend=numba,iterations={args.big}"], args.seed)
    big_t = next(iter(big.values()))
    rate = args.big * len(infos) / sum(big_t)
    per_iter = statistics.median(t / args.big for t in big_t)
    med_py = statistics.median(times[py])
    fit = int(med_py / per_iter)
    print(f"{f'iterations/s, compiled at {args.big} per decision':<44} {'':>9} {rate:>9.0f} {rate / it_py:>7.1f}")
    print()
    print(f"compiled iterations that fit in the default ismcts's median {1e3 * med_py:.1f} ms per decision: "
          f"{fit} (median {1e6 * per_iter:.2f} us per iteration at {args.big})")
    check = time_agents(infos, [f"ismcts:backend=numba,iterations={fit}"], args.seed)
    print(f"check: ismcts:backend=numba,iterations={fit}: median {1e3 * statistics.median(next(iter(check.values()))):.1f}"
          f" ms per decision")
    print(f"({len(infos)} decisions, 3-6 tricks left, at least two legal actions each; seed {args.seed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
