"""Bounded load test of ``twilight serve`` on loopback: concurrent games against heuristic agents.

Starts ``twilight serve`` in its own process on a free 127.0.0.1 port, then runs
``--games`` concurrent clients (one thread and keep-alive connection each). Each client creates a game (4 and
3 players alternately, the person at a random seat, ``heuristic`` opponents), answers
every turn with a random legal move sent with ``"advance": true`` (the agents then play
on to the person's next turn within the same request) and starts a new game when one
ends, until ``--moves`` moves have been made in all. A move's latency is the time of that
whole request, agents' replies included, as the client sees it.

By default the clients send their next move as soon as the last answer arrives (no think
time), so every game always has a request queued: the heaviest load 20 games can make.
``--think-ms T`` waits T ms between a client's moves instead, as a person would.

Prints p50/p95/p99/max move latency (ms), the game-creation latency, the throughput and
the machine's load average (other processes share the CPU).
Target: p95 ≤ 50 ms with 20 games and 2,000 moves (the defaults).

    python benchmarks/serve_load.py [--games 20] [--moves 2000] [--think-ms 0] [--seed 0]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import itertools
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (Linux /proc), or None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Http:
    """One keep-alive HTTP/1.1 connection (the standard library's ``http.client``: little
    client CPU per request, so the figures are mostly the server's)."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body=None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        return r.status, json.loads(r.read())


def client(port: int, idx: int, rng: np.random.Generator, budget, lat: list[float],
           create_lat: list[float], errors: list[str], think: float) -> None:
    """One person after another at one table: new game, random legal moves, until the budget is spent."""
    http_ = Http(port)
    while True:
        players = 4 if idx % 2 == 0 else 3
        seat = int(rng.choice([0, 1, 2, 3] if players == 4 else [0, 1, 3]))
        t0 = time.perf_counter()
        status, view = http_.call("POST", "/api/games", {"players": players, "seat": seat, "opponents": "heuristic",
                                                         "seed": int(rng.integers(2**31))})
        create_lat.append(time.perf_counter() - t0)
        if status != 201:
            errors.append(f"create {status}: {view}")
            return
        if view["agents_to_move"]:  # the agents lead: let them play to the person's turn
            view = http_.call("POST", f"/api/games/{view['id']}/advance", {"steps": 1000})[1]
        while not view["over"]:
            if next(budget) <= 0:
                return
            if think:
                time.sleep(think)
            move = view["legal"][int(rng.integers(len(view["legal"])))]
            t0 = time.perf_counter()
            status, view = http_.call("POST", f"/api/games/{view['id']}/move",
                                      {"action": move["action"], "step": view["step"], "advance": True})
            lat.append(time.perf_counter() - t0)
            if status != 200:
                errors.append(f"move {status}: {view}")
                return
        http_.call("DELETE", f"/api/games/{view['id']}")


def run(port: int, games: int, moves: int, seed: int, think: float):
    lat: list[float] = []
    create_lat: list[float] = []
    errors: list[str] = []
    budget = itertools.count(moves, -1)  # next() is atomic under the GIL
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(games) as pool:
        futures = [pool.submit(client, port, i, np.random.default_rng((seed, i)), budget, lat, create_lat, errors,
                               think) for i in range(games)]
        for f in futures:
            f.result()
    return lat, create_lat, errors, time.perf_counter() - t0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=20, help="concurrent games (default 20)")
    p.add_argument("--moves", type=int, default=2000, help="moves in all (default 2000)")
    p.add_argument("--think-ms", type=float, default=0.0, help="pause of a client between its moves (default 0)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.games < 1 or args.moves < 1:
        p.error("--games and --moves must be >= 1")
    port = free_port()
    load0 = f"{os.getloadavg()[0]:.2f}"
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    server = subprocess.Popen([sys.executable, "-m", "twilight_env.cli", "serve", "--port", str(port),
                               "--max-games", str(max(200, 2 * args.games))], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                Http(port).call("GET", "/api/agents")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("the server did not start:", server.stderr.read().decode() if server.stderr else "")
                    return 1
                time.sleep(0.1)
        cpu0 = cpu_seconds(server.pid)
        me0 = cpu_seconds(os.getpid())
        lat, create_lat, errors, wall = run(port, args.games, args.moves, args.seed, args.think_ms / 1000)
        cpu1 = cpu_seconds(server.pid)
        me1 = cpu_seconds(os.getpid())
    finally:
        server.terminate()
        server.wait(10)
    ms = np.array(lat) * 1000
    cms = np.array(create_lat) * 1000
    print(f"{args.games} concurrent games, {len(ms)} moves against heuristic agents "
          f"(each move request includes the agents' replies), think time {args.think_ms:g} ms, "
          f"{len(cms)} games created, {wall:.1f} s; load average before/after {load0} / {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs")
    print(f"move latency ms: p50 {np.percentile(ms, 50):.1f}  p95 {np.percentile(ms, 95):.1f}  "
          f"p99 {np.percentile(ms, 99):.1f}  max {ms.max():.1f}  mean {ms.mean():.1f}")
    print(f"create latency ms: p50 {np.percentile(cms, 50):.1f}  p95 {np.percentile(cms, 95):.1f}")
    print(f"throughput: {len(ms) / wall:.0f} moves/s; errors: {len(errors)}")
    if cpu0 is not None and cpu1 is not None:
        print(f"server CPU: {(cpu1 - cpu0) * 1000 / len(ms):.2f} ms per move (all its requests, games created "
              f"included, divided by the moves); this load client: {(me1 - me0) * 1000 / len(ms):.2f} ms per move; "
              f"the rest of a move's latency is waiting for a CPU")
    for e in errors[:5]:
        print("  ", e)
    p95 = np.percentile(ms, 95)
    print(f"target p95 <= 50 ms: {'met' if p95 <= 50 else 'NOT met'} ({p95:.1f} ms)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
