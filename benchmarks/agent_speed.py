"""Agent speed benchmark (issue 4 targets), one core.

Prints, next to each target, the measured figure and the ratio measured / target:

- solver: median (and 90th percentile) milliseconds to solve (exact value,
  :meth:`twilight_env.agents.solver.Solver.solve`) random positions with 1, 2, 3 and 4 tricks left
  (target: <= 10 ms median for any position with <= 4 tricks left) with the default
  backend (numba when installed), and the median of ``action_values`` at 2 tricks (what
  ``pimc`` calls per world); ``--python`` adds the pure-Python backend;
- ``pimc:worlds=32``: seconds per decision mid-deal (tricks 2-4; target <= 0.5 s);
- ``heuristic``: microseconds per decision (target: well under 50 µs), from an
  information set and from an engine state (the rollout entry point);
- ``ismcts`` at its default iterations: seconds per decision mid-deal (no target).

Positions come from random deals played forward with random legal actions, so they are
reproducible with ``--seed``. Usage::

    python benchmarks/agent_speed.py            # full run (seconds, once numba has compiled)
    python benchmarks/agent_speed.py --quick    # fewer positions
    python benchmarks/agent_speed.py --python   # also the solver's pure-Python backend
    python benchmarks/agent_speed.py --duplicate heuristic random --deals 300 --players 4

``--duplicate A B`` plays a quick duplicate strength check instead (each deal twice,
the cards staying on their seats and the agents swapping sides) and prints A's mean
paired margin in deal points per deal with a 95% confidence interval.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.agents.heuristic import decide_infoset, decide_state  # noqa: E402
from twilight_env.agents.solver import HAVE_NUMBA, Solver  # noqa: E402


def position(rng: np.random.Generator, num_players: int, tricks_left: int, extra: int = 0) -> State:
    """Random deal played by random actions until ``tricks_left`` tricks remain, then
    ``extra`` more random actions (staying in that trick)."""
    st = State.random(rng, int(rng.integers(4)) if num_players == 4 else 0, num_players)
    while st.trick < 7 - tricks_left:
        la = st.legal_actions()
        st.apply(la[int(rng.integers(len(la)))])
    for _ in range(extra):
        la = st.legal_actions()
        s2 = st.clone()
        s2.apply(la[int(rng.integers(len(la)))])
        if s2.trick != st.trick:
            break
        st = s2
    return st


def row(label: str, value: float, unit: str, target: float | None) -> None:
    if target is None:
        print(f"{label:<68} {value:>10.3f} {unit:<4} {'-':>10} {'-':>8}")
    else:
        print(f"{label:<68} {value:>10.3f} {unit:<4} {target:>10.3f} {value / target:>8.2f}")


def bench_solver(rng, counts: dict[int, int], backend: str) -> None:
    if backend == "numba":
        t = time.perf_counter()
        Solver(4, "numba")
        row("solver numba backend: load (compiles on a machine's first run)", time.perf_counter() - t, "s", None)
    for left, n in counts.items():
        times = []
        for i in range(n):
            num_players = 4 if i % 2 == 0 else 3
            st = position(rng, num_players, left, int(rng.integers(0, 4)))
            solver = Solver(num_players, backend)
            t = time.perf_counter()
            solver.solve(st)
            times.append(time.perf_counter() - t)
        row(f"solver ({backend}) solve, {left} trick(s) left, median (n={n})", 1e3 * statistics.median(times),
            "ms", 10.0)
        row(f"solver ({backend}) solve, {left} trick(s) left, 90th percentile", 1e3 * float(np.quantile(times, 0.9)),
            "ms", None)
    times = []
    for i in range(40):
        num_players = 4 if i % 2 == 0 else 3
        st = position(rng, num_players, 2, int(rng.integers(0, 4)))
        solver = Solver(num_players, backend)
        t = time.perf_counter()
        solver.action_values(st)
        times.append(time.perf_counter() - t)
    row(f"solver ({backend}) action_values, 2 tricks left, median (n=40)", 1e3 * statistics.median(times), "ms", None)


def bench_search_agent(rng, spec: str, n: int, target: float | None, label: str) -> None:
    agent = make_agent(spec)
    times = []
    for i in range(n):
        num_players = 4 if i % 2 == 0 else 3
        st = position(rng, num_players, 7 - (2 + i % 3), int(rng.integers(0, 8)))
        info = InfoSet(st, st.deciding_seat)
        if len(info.legal_actions) < 2:
            continue
        t = time.perf_counter()
        agent.act(info, info.legal_actions, rng)
        times.append(time.perf_counter() - t)
    row(f"{label} (n={len(times)})", statistics.median(times), "s", target)


def bench_heuristic(rng, n: int) -> None:
    states = []
    while len(states) < n:
        st = position(rng, 4 if len(states) % 2 == 0 else 3, int(rng.integers(1, 8)), int(rng.integers(0, 8)))
        states.append(st)
    infos = [InfoSet(s, s.deciding_seat) for s in states]
    reps = 5
    t = time.perf_counter()
    for _ in range(reps):
        for info in infos:
            decide_infoset(info, info.legal_actions)
    row(f"heuristic per decision, from an InfoSet (n={n})", 1e6 * (time.perf_counter() - t) / (reps * n), "us", 50.0)
    t = time.perf_counter()
    for _ in range(reps):
        for s in states:
            decide_state(s)
    row(f"heuristic per decision, from a State (n={n})", 1e6 * (time.perf_counter() - t) / (reps * n), "us", 50.0)


def duplicate(spec_a: str, spec_b: str, deals: int, num_players: int, seed: int) -> tuple[float, float, float]:
    """Duplicate match: every deal twice, ``spec_a`` on side 0's seats then on side 1's.

    Returns:
        (mean, 95% CI half-width, seconds): mean over deals of the paired difference
        (``spec_a``'s side deal score minus the other side's, averaged over both plays),
        in deal points per deal.
    """
    from twilight_env.agents.base import play_deal
    rng = np.random.default_rng(seed)
    a, b = make_agent(spec_a), make_agent(spec_b)
    diffs = []
    t = time.perf_counter()
    for i in range(deals):
        hands = State.random(rng, 0, num_players).hands
        leader = i % 4 if num_players == 4 else 0
        x = play_deal(State(hands, leader, num_players), [a, b, a, b], rng).returns()[0]
        y = play_deal(State(hands, leader, num_players), [b, a, b, a], rng).returns()[1]
        diffs.append((x + y) / 2)
    d = np.asarray(diffs, dtype=float)
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
    return float(d.mean()), float(half), time.perf_counter() - t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="fewer positions (numba: 15 four-trick solves; Python: 3)")
    p.add_argument("--python", action="store_true",
                   help="also time the solver's pure-Python backend (the 4-trick solves take seconds)")
    p.add_argument("--duplicate", nargs=2, metavar=("SPEC_A", "SPEC_B"),
                   help="instead of timing, play SPEC_A against SPEC_B in duplicate deals")
    p.add_argument("--deals", type=int, default=100, help="deals for --duplicate (each played twice)")
    p.add_argument("--players", type=int, choices=(3, 4), default=4, help="players for --duplicate")
    args = p.parse_args(argv)
    if args.duplicate:
        mean, half, secs = duplicate(args.duplicate[0], args.duplicate[1], args.deals, args.players, args.seed)
        print(f"{args.duplicate[0]} vs {args.duplicate[1]}, {args.players} players, {args.deals} duplicate deals: "
              f"{mean:+.1f} +- {half:.1f} deal points per deal (95% CI), {secs:.0f} s")
        return 0
    rng = np.random.default_rng(args.seed)
    print(f"{'measure':<68} {'measured':>10} {'unit':<4} {'target':>10} {'ratio':>8}")
    bench_heuristic(rng, 400 if args.quick else 2000)
    if HAVE_NUMBA:
        counts = {1: 40, 2: 40, 3: 20, 4: 15} if args.quick else {1: 100, 2: 100, 3: 60, 4: 60}
        bench_solver(np.random.default_rng(args.seed), counts, "numba")
    else:
        print("(numba is not installed: pip install 'twilight-env[fast]' for the compiled solver)")
    if args.python or not HAVE_NUMBA:
        counts = {1: 40, 2: 40, 3: 10, 4: 3} if args.quick else {1: 100, 2: 100, 3: 30, 4: 9}
        bench_solver(np.random.default_rng(args.seed), counts, "python")
    bench_search_agent(rng, "pimc:worlds=32", 6 if args.quick else 20, 0.5, "pimc:worlds=32 per decision, tricks 2-4")
    bench_search_agent(rng, "ismcts", 3 if args.quick else 8, None, "ismcts (1000 iterations) per decision")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
