"""A/B speed of one function against its version at an earlier git revision, one process.

A rewrite for clarity should cost no speed. This script loads the module's source at
``--rev`` (``git show REV:PATH``) beside the working tree's module and times both on the
same inputs in alternating, paired rounds, so that the machine's drift hits both alike;
times are the process's CPU time (``time.process_time``), which on a shared machine
leaves out the time other processes hold the core.
It prints the per-call time of each side in every round, then the median over rounds of
the within-round ratio new / old (below 1: the working tree is faster) and the two best
rounds.

Targets:

- ``heuristic``: :func:`twilight_env.agents.heuristic.decide` on decision points of deals played
  by a mix of heuristic and random actions (the information set's facts, as
  ``decide_infoset`` passes them), and whole heuristic rollouts from those points
  (``decide_state`` to the deal's end: what ``pimc`` and ``ismcts`` run);
- ``encoder``: the compiled encoder (``twilight_env.obs._encoding_nb.encode_into`` with its
  caller in ``twilight_env/obs/encoding.py``) through ``observation_and_mask`` on the
  decision points of random deals, the call the env makes at each step (numba);
- ``solver``: the numba solver's ``Solver.solve`` on random positions with 3 and 4
  tricks left (``twilight_env.agents._solver_nb``; every solve starts with an empty table and no
  killer moves).

Usage::

    python benchmarks/ab_speed.py heuristic --rev bb30359 [--rounds 7]
    python benchmarks/ab_speed.py encoder --rev bb30359
    python benchmarks/ab_speed.py solver --rev bb30359
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from twilight_env.rules.engine import HOLD, State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402


def load_old(path: str, rev: str, name: str, package: str | None = None):
    """The module at ``path`` as of git revision ``rev``, loaded as module ``name``.

    It is written to a temporary file (numba caches compiled code by file) and loaded
    with ``package`` set, so its relative imports resolve to the working tree's package.
    """
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True, capture_output=True,
                         text=True).stdout
    tmp = Path(tempfile.mkdtemp(prefix="ab_speed_")) / (name.rpartition(".")[2] + ".py")
    tmp.write_text(src)
    spec = importlib.util.spec_from_file_location(name, tmp)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = package
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def paired(label: str, sides: dict, rounds: int, calls: int, repeat: int = 3) -> None:
    """Time each side's callable in every round (CPU time of this process, so time spent
    descheduled by other processes does not count; the best of ``repeat`` runs),
    in the order old, new, new, old within every round, so that neither side is always the
    one that runs first (a side that runs first can find warmer or colder caches); print µs
    per call per round, the median within-round ratio new/old and the best rounds."""
    times = {k: [] for k in sides}
    order = list(sides)
    for r in range(rounds):
        best = dict.fromkeys(order, float("inf"))
        for k in order + order[::-1]:
            for _ in range(repeat):
                t0 = time.process_time()
                sides[k]()
                best[k] = min(best[k], time.process_time() - t0)
        for k in order:
            times[k].append(best[k] / calls * 1e6)
        print(f"  {label} round {r}: " + ", ".join(f"{k} {times[k][-1]:.2f} µs" for k in order), flush=True)
    ratios = [n / o for n, o in zip(times["new"], times["old"])]
    print(f"{label}: median new/old = {statistics.median(ratios):.3f} (rounds: "
          f"{' '.join(f'{x:.3f}' for x in ratios)}); best old {min(times['old']):.2f} µs, "
          f"best new {min(times['new']):.2f} µs per call", flush=True)


def heuristic(rev: str, rounds: int, seed: int) -> None:
    import twilight_env.agents.base as base
    import twilight_env.agents.heuristic as new

    keep = dict(base._REGISTRY)
    old = load_old("agents/heuristic.py", rev, "twilight_env.agents._heuristic_ab_old", "agents")
    base._REGISTRY.clear()
    base._REGISTRY.update(keep)  # the old module registered its class again: undo that
    rng = np.random.default_rng(seed)
    calls, starts = [], []
    for n in (4, 3):
        for _ in range(150):
            st = State.random(rng, int(rng.integers(4)) if n == 4 else 0, n)
            while not st.done:
                info = InfoSet(st, st.deciding_seat)
                cnt = info.hand_counts
                calls.append((info.num_players, info.seat_cult, info.deciding_seat, info.leader, info.place,
                              HOLD if info.phase == "hold" else 0, info.holder, info.trick_cards, info.pending,
                              info.known_masks, info.unseen_mask, info.captured, info.trick,
                              tuple(info.legal_actions), lambda s, c, cnt=cnt: cnt[s][c]))
                if st.trick < 4 and rng.random() < 0.15:
                    starts.append(st.clone())
                legal = st.legal_actions()
                st.apply(new.decide_state(st) if rng.random() < 0.6 else legal[int(rng.integers(len(legal)))])
    assert all(new.decide(*a) == old.decide(*a) for a in calls), "the two versions decide differently"
    print(f"heuristic: {len(calls)} decision points, {len(starts)} rollout starts; same decisions", flush=True)

    def run_decide(mod):
        d = mod.decide
        return lambda: [d(*a) for a in calls]

    def run_rollouts(mod):
        ds = mod.decide_state

        def go():
            for s0 in starts:
                s = s0.clone()
                while not s.done:
                    s.apply(ds(s))
        return go

    steps = 0
    for s0 in starts:
        s = s0.clone()
        while not s.done:
            s.apply(new.decide_state(s))
            steps += 1
    paired("decide", {"old": run_decide(old), "new": run_decide(new)}, rounds, len(calls))
    paired("rollout step", {"old": run_rollouts(old), "new": run_rollouts(new)}, rounds, steps)


def encoder(rev: str, rounds: int, seed: int) -> None:
    from twilight_env.obs import encoding as new_E

    if new_E.backend() != "numba":
        raise SystemExit("encoder: numba is not installed (or TWILIGHT_ENV_PURE_PYTHON=1)")
    # the old kernel with the old caller (the caller passes the kernel's arguments)
    old_nb = load_old("twilight_env/obs/_encoding_nb.py", rev, "twilight_env._encoding_nb_ab_old", "twilight_env")
    old_E = load_old("twilight_env/obs/encoding.py", rev, "twilight_env._encoding_ab_old", "twilight_env")
    old_E._ENCODE_INTO = old_nb.encode_into
    rng = np.random.default_rng(seed)
    states = []
    for n in (4, 3):
        for _ in range(60):
            st = State.random(rng, 0, n)
            while not st.done:
                states.append((st.clone(), st.deciding_seat))
                la = st.legal_actions()
                st.apply(la[int(rng.integers(len(la)))])
    same = all(old_E.observation_and_mask(st, s)[0].tobytes() == new_E.observation_and_mask(st, s)[0].tobytes()
               for st, s in states)
    assert same, "the two versions write different vectors"
    print(f"encoder: {len(states)} states; same vectors", flush=True)

    def run(mod):
        f = mod.observation_and_mask
        return lambda: [f(st, s) for st, s in states]

    paired("observation_and_mask", {"old": run(old_E), "new": run(new_E)}, rounds, len(states))

    # the batch engine's compiled path: encode_batch calls encode_into row by row
    from twilight_env.obs import _encoding_nb as new_nb
    from twilight_env.envs.vector import VectorEngine

    B = 1024
    eng = VectorEngine(B, 4)
    eng.reset(rng=rng)
    for _ in range(9):
        eng.apply(eng.random_actions(rng))
    args = (eng.leader, False, eng.num_players, eng.hands, eng.leader, eng.trick, eng.place, eng.phase,
            eng.holder, eng.trick_code, eng.pending, eng.captured, eng.played_for, eng.held_by, eng.trick_of)
    outs = {k: np.empty((B, new_E.OBS_SIZE), np.float32) for k in ("old", "new")}
    old_nb.encode_batch(outs["old"], *args)
    new_nb.encode_batch(outs["new"], *args)
    assert outs["old"].tobytes() == outs["new"].tobytes(), "the two batch encoders differ"

    def run_batch(k, mod):
        return lambda: [mod.encode_batch(outs[k], *args) for _ in range(5)]

    paired(f"encode_batch row (B = {B})", {"old": run_batch("old", old_nb), "new": run_batch("new", new_nb)},
           rounds, 5 * B)


def solver(rev: str, rounds: int, seed: int) -> None:
    import twilight_env.agents.solver as solver_mod

    if not solver_mod.HAVE_NUMBA:
        raise SystemExit("solver: numba is not installed")
    import twilight_env.agents._solver_nb as new_nb

    old_nb = load_old("agents/_solver_nb.py", rev, "twilight_env.agents._solver_nb_ab_old", "agents")
    rng = np.random.default_rng(seed)
    positions = []
    for n in (4, 3):
        for tricks_left in (3, 4):
            for _ in range(12):
                st = State.random(rng, int(rng.integers(4)) if n == 4 else 0, n)
                while st.trick < 7 - tricks_left:
                    la = st.legal_actions()
                    st.apply(la[int(rng.integers(len(la)))])
                positions.append(st)

    def solve_all(mod):
        """Each position solved by a fresh Solver on ``mod``'s search and table (killer
        moves reset first, so every solve starts alike)."""
        table = mod.shared_table()
        killers = slice(1 << mod.TT_BITS, (1 << mod.TT_BITS) + mod._KILLER_ROWS)
        out = []
        for st in positions:
            s = solver_mod.Solver(st.num_players, "numba")
            s._nb, s._tt, s._gen = mod.search, table, mod.new_generation()
            table[killers] = -1
            out.append(s.solve(st))
        return out

    values = {"old": solve_all(old_nb), "new": solve_all(new_nb)}
    assert values["old"] == values["new"], "the two versions give different values"
    print(f"solver: {len(positions)} positions (3 and 4 tricks left); same values", flush=True)
    paired("solve", {"old": lambda: solve_all(old_nb), "new": lambda: solve_all(new_nb)}, rounds, len(positions),
           repeat=1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("target", choices=["heuristic", "encoder", "solver"])
    p.add_argument("--rev", required=True, help="git revision of the old version")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    {"heuristic": heuristic, "encoder": encoder, "solver": solver}[a.target](a.rev, a.rounds, a.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
