"""Heuristic rollout speed: the pure-Python rollout against the compiled one, side by side.

Prints, in one run on the same positions:

- rollouts per second and heuristic decisions per second of the Python rollout
  (:func:`twilight_env.agents.pimc.rollout`, then ``side_scores``) and of the compiled rollout
  (:func:`twilight_env.agents.fast_rollout.rollout_scores`), and their ratio; both play the same
  actions (``tests/agents/test_fast_rollout.py``), so the decisions counted are the same;
- with ``--agents``: seconds per decision (median) of ``pimc`` and ``ismcts`` at their
  default settings with ``rollout_backend=python`` and ``=numba``, and the ratio; then
  what the compiled rollout affords: the ``ismcts`` iterations and ``pimc`` worlds that
  fit in the Python-rollout agent's time per decision and in ``--budget-ms``
  (default 220 ms, about default ``ismcts``'s time per decision with the Python rollout).

Positions are random deals (4 and 3 players alternately) played forward by random legal
actions to a random trick, place and phase, reproducible with ``--seed``. The compiled
code is loaded (or compiled, on a machine's first run) before timing. Usage::

    python benchmarks/rollout_speed.py                 # rollouts only, a few seconds
    python benchmarks/rollout_speed.py --agents        # also pimc and ismcts per decision
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
from twilight_env.agents import fast_rollout  # noqa: E402
from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.agents.pimc import rollout as python_rollout  # noqa: E402


def positions(rng: np.random.Generator, n: int, min_left: int = 1, max_left: int = 7) -> list[State]:
    """``n`` states: random deals played by random actions until 1..7 tricks are left,
    then a few more random actions within that trick (any place and phase), 4 and 3
    players in turn (:func:`benchmarks.agent_speed.position`)."""
    from benchmarks.agent_speed import position

    return [position(rng, 4 if k % 2 == 0 else 3, int(rng.integers(min_left, max_left + 1)), int(rng.integers(0, 8)))
            for k in range(n)]


def bench_rollouts(states: list[State], reps: int, chunk: int = 20) -> None:
    """Both rollouts on the same positions, alternating in chunks of ``chunk`` positions
    so that a change in the machine's load falls on both sides alike."""
    decisions = sum(len(fast_rollout.rollout_actions(s)) for s in states) * reps
    n = len(states) * reps
    rng = np.random.default_rng(0)
    score = fast_rollout.rollout_scores
    t_py = t_nb = 0.0
    for _ in range(reps):
        for i in range(0, len(states), chunk):
            part = states[i:i + chunk]
            t = time.perf_counter()
            for s in part:
                python_rollout(s.clone(), rng, "heuristic", 0.0).side_scores()
            t_py += time.perf_counter() - t
            t = time.perf_counter()
            for s in part:
                score(s)
            t_nb += time.perf_counter() - t
    print(f"{'rollout (heuristic, all seats)':<34} {'rollouts/s':>12} {'decisions/s':>13} {'us/rollout':>11}")
    for label, secs in (("python (twilight_env.agents.pimc.rollout)", t_py), ("numba (twilight_env.agents.fast_rollout)", t_nb)):
        print(f"{label:<34} {n / secs:>12.0f} {decisions / secs:>13.0f} {1e6 * secs / n:>11.1f}")
    print(f"{'ratio numba / python':<34} {t_py / t_nb:>12.1f} {t_py / t_nb:>13.1f}")
    print(f"({n} rollouts of {len(states)} positions, {decisions / n:.1f} decisions per rollout)")


def bench_agents(states: list[State], budget_ms: float, seed: int) -> None:
    """Per decision, each agent with either backend on the same position and seed in turn."""
    print()
    print(f"{'agent, per decision (median)':<52} {'python s':>10} {'numba s':>10} {'ratio':>7}")
    med = {}
    for spec in ("pimc", "ismcts"):
        agents = {b: make_agent(f"{spec}:rollout_backend={b}") for b in ("python", "numba")}
        times = {"python": [], "numba": []}
        for i, st in enumerate(states):
            info = InfoSet(st, st.deciding_seat)
            for b, agent in agents.items():
                rng = np.random.default_rng(seed + i)
                t = time.perf_counter()
                agent.act(info, info.legal_actions, rng)
                times[b].append(time.perf_counter() - t)
        t_py, t_nb = statistics.median(times["python"]), statistics.median(times["numba"])
        med[spec] = (t_py, t_nb)
        print(f"{spec + ' (default settings)':<52} {t_py:>10.4f} {t_nb:>10.4f} {t_py / t_nb:>7.1f}")
    print()
    t_py, t_nb = med["ismcts"]
    per_iter = t_nb / 1000
    print(f"ismcts, compiled rollout: {1e6 * per_iter:.0f} us per iteration; iterations affordable in "
          f"the Python-rollout default's {1e3 * t_py:.0f} ms: {t_py / per_iter:.0f}; "
          f"in {budget_ms:.0f} ms: {budget_ms / 1e3 / per_iter:.0f}")
    t_py, t_nb = med["pimc"]
    per_world = t_nb / 32
    print(f"pimc, compiled rollout: {1e6 * per_world:.0f} us per world; worlds affordable in "
          f"the Python-rollout default's {1e3 * t_py:.0f} ms: {t_py / per_world:.0f}; "
          f"in {budget_ms:.0f} ms: {budget_ms / 1e3 / per_world:.0f}")
    print(f"({len(states)} decisions with at least two legal actions each, 3-6 tricks left: rollouts, "
          f"not the endgame solver; 'affordable' assumes time linear in iterations or worlds)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--positions", type=int, default=400, help="positions to roll out from")
    p.add_argument("--reps", type=int, default=3, help="rollouts per position and backend")
    p.add_argument("--agents", action="store_true", help="also time pimc and ismcts per decision")
    p.add_argument("--agent-positions", type=int, default=12, help="decisions timed per agent and backend")
    p.add_argument("--budget-ms", type=float, default=220.0, help="time per decision for the 'affordable' lines")
    args = p.parse_args(argv)
    if not fast_rollout.HAVE_NUMBA:
        print("numba is not installed (pip install 'twilight-env[fast]'): only the Python rollout exists")
        return 1
    rng = np.random.default_rng(args.seed)
    states = positions(rng, args.positions)
    t = time.perf_counter()
    fast_rollout.rollout_scores(states[0])
    print(f"compiled rollout loaded in {time.perf_counter() - t:.2f} s (compiled on a machine's first run)")
    bench_rollouts(states, args.reps)
    if args.agents:
        pos = []
        while len(pos) < args.agent_positions:
            st = positions(rng, 1, 3, 6)[0]
            if len(st.legal_actions()) > 1:
                pos.append(st)
        bench_agents(pos, args.budget_ms, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
