"""Deals per second of ``twilight edge`` deals on the local process pool and on a local
Ray cluster with 1 and 2 CPUs, side by side in one run.

Each runner plays the same deal set (three plays per deal, ``heuristic`` on every chair
by default) in a fresh subprocess, so that each Ray cluster starts with exactly the CPUs
asked for; the subprocess times the deals only (Ray's start-up and first worker imports
happen in a warm-up run before the clock starts). Every runner's per-deal points are
compared with the first runner's and the script fails if they differ.

    python benchmarks/ray_scaling.py [--deals 2000] [--spec heuristic]

Needs the ``dist`` extra (``pip install -e ".[dist,study]"``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
runner, cpus, deals, spec, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.experiments.common import run_tasks
from twilight_env.records.dealsets import deal_set
from twilight_env.util.distributed import ray_runner
deal_list = deal_set(deals, seed, 3, None, None)[0]
tasks = [(d, deal, spec, spec, seed, 0) for d, deal in enumerate(deal_list)]
address = None
if runner == "ray":
    import ray
    ray.init(num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             object_store_memory=80 * 1024 * 1024)
    address = "auto"
with ray_runner(address):
    run_tasks(edge._play_edge_deal, tasks[: 16 * cpus], cpus, progress=False)  # warm-up: workers up, imports done
    t0 = time.perf_counter()
    out = run_tasks(edge._play_edge_deal, tasks, cpus, progress=False)
    dt = time.perf_counter() - t0
print(json.dumps({"seconds": dt, "points": [[r[1], r[2]] for r in out]}))
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=2000, help="deals per runner (default 2000)")
    p.add_argument("--spec", default="heuristic", help="agent spec on every chair (default heuristic)")
    p.add_argument("--seed", type=int, default=4, help="deal seed (default 4)")
    args = p.parse_args(argv)
    if args.deals < 1:
        p.error("--deals must be a positive integer")
    rows, ref = [], None
    for runner, cpus in (("local", 1), ("local", 2), ("ray", 1), ("ray", 2)):
        res = subprocess.run([sys.executable, "-c", CHILD, runner, str(cpus), str(args.deals), args.spec,
                              str(args.seed)], capture_output=True, text=True, check=False)
        if res.returncode != 0:
            print(res.stderr, file=sys.stderr)
            return 1
        doc = json.loads(res.stdout.strip().splitlines()[-1])
        if ref is None:
            ref = doc["points"]
        elif doc["points"] != ref:
            print(f"per-deal points of {runner} with {cpus} CPU(s) differ from the first runner's", file=sys.stderr)
            return 1
        rows.append((runner, cpus, args.deals / doc["seconds"]))
    base = rows[0][2]
    print(f"{args.deals} deals x 3 plays, {args.spec} on every chair, {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{'runner':<8} {'CPUs':>4} {'deals/s':>9} {'vs local 1':>10}")
    for runner, cpus, rate in rows:
        print(f"{runner:<8} {cpus:>4} {rate:>9.1f} {rate / base:>9.2f}x")
    print("per-deal points identical on every runner")
    return 0


if __name__ == "__main__":
    sys.exit(main())
