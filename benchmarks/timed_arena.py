"""``twilight arena`` (or ``twilight ladder``) in this process, with each agent's time per decision.

Runs ``twilight arena ARGS... --workers 1`` (``ladder ARGS...``: ``twilight ladder``) unchanged (the same deals, seeds and results)
while timing every ``act`` call of every agent it builds, then prints, per agent spec,
the decisions it made with at least two legal actions and its mean and median seconds per decision. Made for strength
at equal time per decision: e.g. ``ismcts`` with the compiled rollout at more iterations
against default ``ismcts`` with the Python rollout, where the time per decision of both
sides in the very run is the check that the budget was equal. Usage::

    python benchmarks/timed_arena.py ismcts:iterations=4000 ismcts:rollout_backend=python \\
        --players 3 --deals 30 --seed 1
    python benchmarks/timed_arena.py ladder ismcts ismcts:backend=numba,iterations=6000 \
        --players 3 --deals 100 --out out/ladder_timed
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import twilight_env.agents.base  # noqa: E402
from twilight_env.cli import main as cli_main  # noqa: E402

TIMES: dict[str, list[float]] = {}


def _timed_make_agent(make):
    def make_agent(spec):
        agent = make(spec)
        act = agent.act
        times = TIMES.setdefault(spec, [])

        def timed_act(infoset, legal_actions, rng):
            if len(legal_actions) < 2:
                return act(infoset, legal_actions, rng)
            t = time.perf_counter()
            a = act(infoset, legal_actions, rng)
            times.append(time.perf_counter() - t)
            return a

        agent.act = timed_act
        return agent

    return make_agent


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    command = "arena"
    if argv and argv[0] in ("arena", "ladder"):
        command, argv = argv[0], argv[1:]
    if "--workers" in argv:
        i = argv.index("--workers")
        if argv[i + 1:i + 2] != ["1"]:
            raise SystemExit("timed_arena plays in this process (--workers 1), where the timing is taken; "
                             "leave --workers out or give --workers 1")
        del argv[i:i + 2]
    twilight_env.agents.base.make_agent = _timed_make_agent(twilight_env.agents.base.make_agent)
    t = time.process_time()
    rc = cli_main([command, *argv, "--workers", "1"])
    cpu = time.process_time() - t
    if rc != 0:
        return rc
    print(f"{'agent spec':<48} {'decisions':>10} {'mean s':>9} {'median s':>9}")
    for spec, times in TIMES.items():
        if times:
            print(f"{spec:<48} {len(times):>10} {statistics.mean(times):>9.4f} {statistics.median(times):>9.4f}")
    print(f"process CPU time {cpu:.0f} s (only decisions with at least two legal actions are timed)")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
