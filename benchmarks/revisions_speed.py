"""Engine, environment, encoder and search speed of two git revisions, side by side in one run.

A restructuring (moved modules, merged tables, split functions) should cost no speed. This
script builds the wheel of each revision (``git archive`` into a temporary folder,
``pip wheel`` with the C core compiled, ``pip install --target``), then runs the same
measurements on each installed copy in a child process, alternating the revisions round
by round so that the machine's drift hits both alike. Each measurement prints one rate;
times are the child's CPU time (``time.process_time``), which leaves out the time other
processes hold the core.

Measurements (each a short loop over the public API, which both revisions share):

| name | what is timed | unit |
|---|---|---|
| ``engine`` | random legal play of whole 4-player deals: ``legal_actions`` + ``apply`` | decisions/s |
| ``env`` | the PettingZoo AEC env (``twilight_env.env``), random legal actions, 3 players | steps/s |
| ``encoder`` | ``encode_observation(state, seat)`` at every decision of random deals | observations/s |
| ``heuristic`` | the ``heuristic`` agent choosing at every decision of random deals (the agents are built before the clock starts) | decisions/s |
| ``first_agent`` | the first ``make_agent("heuristic")`` of a fresh process (the registry's first use, once per process) | agents/s |
| ``ismcts`` | ``ismcts:backend=numba,iterations=300`` deciding at the first decision of fixed deals | decisions/s |
| ``batch`` | the batch engine (``VectorEngine``, NumPy) playing 256 deals at once | decisions/s |

It prints every round's rates, then per measurement the median rate of each revision, the
median over rounds of the within-round ratio new / old (above 1: the new revision is
faster) and the range of that ratio over rounds (the run-to-run noise).

Usage::

    python benchmarks/revisions_speed.py --old 35df016 --new HEAD [--rounds 5] [--only engine env]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each snippet runs in a child whose sys.path holds one revision's installed copy. Module
# paths moved between revisions; `pick` imports the first that exists.
PRELUDE = r'''
import importlib, time, numpy as np
def pick(*names):
    for n in names:
        try:
            return importlib.import_module(n)
        except ImportError:
            pass
    raise ImportError(names)
engine = pick("twilight_env.rules.engine", "twilight_env.engine")
def timed(fn):
    t = time.process_time(); n = fn(); return n / (time.process_time() - t)
'''

SNIPPETS = {
    "engine": r'''
def run():
    rng = np.random.default_rng(0); n = 0
    for d in range(10000):
        st = engine.State.random(rng, d % 4, 4)
        while not st.done:
            legal = st.legal_actions(); st.apply(legal[int(rng.random() * len(legal))]); n += 1
    return n
print(timed(run))
''',
    "env": r'''
import twilight_env
def run():
    env = twilight_env.env(num_players=3); rng = np.random.default_rng(0); n = 0
    for d in range(150):
        env.reset(seed=d)
        for agent in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            if term or trunc:
                env.step(None); continue
            legal = np.flatnonzero(obs["action_mask"]); env.step(int(legal[int(rng.random() * len(legal))])); n += 1
    return n
print(timed(run))
''',
    "encoder": r'''
enc = pick("twilight_env.obs.encoding", "twilight_env.encoding")
def run():
    rng = np.random.default_rng(0); n = 0
    for d in range(200):
        st = engine.State.random(rng, d % 4, 4)
        while not st.done:
            enc.encode_observation(st, st.acting_seat); n += 1
            legal = st.legal_actions(); st.apply(legal[int(rng.random() * len(legal))])
    return n
print(timed(run))
''',
    "heuristic": r'''
base = pick("twilight_env.agents.base", "agents.base")
agents = [base.make_agent("heuristic") for _ in range(4)]  # the registry's one-time cost: first_agent
def run():
    rng = np.random.default_rng(0); n = 0
    for d in range(1000):
        st = engine.State.random(rng, d % 4, 4)
        base.play_deal(st, agents, rng); n += 28
    return n
print(timed(run))
''',
    "first_agent": r'''
base = pick("twilight_env.agents.base", "agents.base")
def run():
    base.make_agent("heuristic")
    return 1
print(timed(run))
''',
    "ismcts": r'''
base = pick("twilight_env.agents.base", "agents.base")
infoset = pick("twilight_env.rules.infoset", "twilight_env.infoset")
agent = base.make_agent("ismcts:backend=numba,iterations=300")
rng = np.random.default_rng(0)
states = [engine.State.random(np.random.default_rng(d), d % 4, 4) for d in range(40)]
def decide(st):
    info = infoset.InfoSet(st, st.chooser)
    return agent.act(info, st.legal_actions(), rng)
decide(states[0])  # compile
def run():
    for st in states:
        decide(st)
    return len(states)
print(timed(run))
''',
    "batch": r'''
vector = pick("twilight_env.envs.vector", "twilight_env.vector")
def run():
    eng = vector.VectorEngine(256, num_players=4); rng = np.random.default_rng(0); n = 0
    for _ in range(40):
        eng.reset(rng=rng)
        while True:
            live = ~np.asarray(eng.done)
            if not live.any():
                break
            n += int(live.sum()); eng.apply(eng.random_actions(rng), active=live)
    return n
print(timed(run))
''',
}


def install(rev: str, work: Path) -> Path:
    """``git archive`` of ``rev``, its wheel and a ``--target`` install of it; returns the
    install folder."""
    src, wheels, site = work / f"src-{rev}", work / f"wheel-{rev}", work / f"site-{rev}"
    src.mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    def run(cmd):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"building revision {rev} failed: {' '.join(cmd[:5])}...\n{r.stderr[-2000:]}")

    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(src)])
    run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
         *map(str, wheels.glob("*.whl"))])
    return site


def measure(site: Path, name: str, work: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(site))
    r = subprocess.run([sys.executable, "-c", PRELUDE + SNIPPETS[name]], cwd=work, env=env, capture_output=True,
                       text=True, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"measurement {name} failed in {site}:\n{r.stderr[-2000:]}")
    return float(r.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True, help="the earlier git revision, e.g. 35df016")
    p.add_argument("--new", default="HEAD", help="the later git revision (default HEAD; commit your changes first)")
    p.add_argument("--rounds", type=int, default=5, help="rounds, each running both revisions (default 5)")
    p.add_argument("--only", nargs="*", choices=sorted(SNIPPETS), default=None, help="measurements (default all)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    names = args.only or list(SNIPPETS)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sites = {"old": install(args.old, work), "new": install(args.new, work)}
        rates: dict[str, dict[str, list[float]]] = {n: {"old": [], "new": []} for n in names}
        for k in range(args.rounds):
            for name in names:
                order = ("old", "new") if k % 2 == 0 else ("new", "old")
                for side in order:
                    rates[name][side].append(measure(sites[side], name, work))
                print(f"round {k + 1} {name:9s} old {rates[name]['old'][-1]:12.1f}  new {rates[name]['new'][-1]:12.1f}",
                      flush=True)
    print(f"\nold = {args.old}, new = {args.new}, {args.rounds} rounds, rates per CPU second")
    print(f"{'measure':10s} {'old (median)':>14s} {'new (median)':>14s} {'new/old':>8s} {'range over rounds':>20s}")
    for name in names:
        ratios = [b / a for a, b in zip(rates[name]["old"], rates[name]["new"])]
        print(f"{name:10s} {statistics.median(rates[name]['old']):14.1f} {statistics.median(rates[name]['new']):14.1f} "
              f"{statistics.median(ratios):8.3f} {min(ratios):9.3f} - {max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
