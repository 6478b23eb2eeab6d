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

``--hostile`` measures what a hostile client costs the others: rounds without and with a
hostile client (a process of its own) alternate, ``--moves`` moves each, and the p95 of
the moves made with the hostile client is compared with the p95 of those made without it
(target: at most 2x). The hostile client sends, one after another on loopback and as fast
as the server answers, the requests ``docs/SERVE.md`` (What the server guards against)
lists: agent specs naming files, ``text/plain`` and form bodies, foreign ``Origin`` and
``Host`` headers, a hint with 10^9 iterations, 48 MiB chunked bodies, JSON nested 100,000
deep, bodies of 32 KiB and 4 MiB that made the old JSON check quadratic (65 ``[``, a ``"``,
then ``\\"`` repeated), a replay page over the cap and a watched match to 10^9 points. In
the same process, 40 threads each watch a game of ``ismcts:iterations=20000`` (the
server's cap) and ask for 1000 agent moves at a time: each sends its advance again as soon
as it is answered (after a 429, once the ``Retry-After`` has passed). Besides the p95
ratio it prints every answer's status by kind (the goal: no 5xx) and the server's memory
(resident, and its peak) before and after the hostile rounds.

    python benchmarks/serve_load.py [--games 20] [--moves 2000] [--think-ms 0] [--seed 0]
    python benchmarks/serve_load.py --hostile [--rounds 2] [--moves 1000] [--attackers 40]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import itertools
import json
import multiprocessing
import os
import select
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


def _raw(port: int, head: bytes, body: bytes = b"", chunked_total: int = 0) -> int:
    """Send one raw HTTP/1.1 request on a new connection; returns the status (0 if none came).
    With ``chunked_total``, the body is sent chunked (64 KiB chunks, no Content-Length)
    until that many bytes or until the server answers."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        try:
            if chunked_total:
                s.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
                data = b" " * 65536
                sent = 0
                while sent < chunked_total and not select.select([s], [], [], 0)[0]:
                    s.sendall(b"%x\r\n" % len(data) + data + b"\r\n")
                    sent += len(data)
            else:
                s.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except OSError:  # the server answered and closed while the body was still coming
            pass
        got = b""
        while b"\r\n" not in got:
            part = s.recv(4096)
            if not part:
                break
            got += part
        return int(got.split()[1]) if got.startswith(b"HTTP/") else 0
    except OSError:  # reset by the server before its answer could be read (a refused upload)
        return 0
    finally:
        s.close()


def hostile_requests(port: int) -> list[tuple[str, bytes, bytes, int]]:
    """The hostile client's requests: (name, head, body, chunked bytes), in the order sent."""
    def head(method: str, path: str, ctype: str | None = "application/json", host: str = "127.0.0.1",
             origin: str | None = None) -> bytes:
        h = f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        if ctype:
            h += f"Content-Type: {ctype}\r\n"
        if origin:
            h += f"Origin: {origin}\r\n"
        return h.encode()
    # a game of the hostile client's own, for the hint
    status, view = Http(port).call("POST", "/api/games", {"players": 4, "seat": 0, "dealer": 3})
    gid = view["id"] if status == 201 else "none"
    deep = b"[" * 100_000 + b"]" * 100_000
    return [
        ("spec naming a file", head("POST", "/api/games"), b'{"opponents": "pimc:inference=/etc/passwd"}', 0),
        ("spec naming /proc", head("POST", "/api/games"), b'{"opponents": "neural:path=/proc/self/environ"}', 0),
        ("text/plain body", head("POST", "/api/games", "text/plain"), b'{"players": 4}', 0),
        ("form body", head("POST", "/api/games", "application/x-www-form-urlencoded"), b"players=4", 0),
        ("no content type", head("POST", "/api/games", None), b'{"players": 4}', 0),
        ("foreign origin", head("POST", "/api/games", origin="http://evil.example"), b"{}", 0),
        ("foreign host", head("GET", "/api/agents", None, host="evil.example"), b"", 0),
        ("hint with 10^9 iterations", head("POST", f"/api/games/{gid}/hint"),
         b'{"agent": "ismcts:iterations=1000000000"}', 0),
        ("48 MiB chunked body", head("POST", "/api/replay"), b"", 48 * 1024 * 1024),
        ("JSON nested 100,000 deep", head("POST", "/api/replay"), deep, 0),
        ("32 KiB of escaped quotes", head("POST", "/api/replay"), escaped_quotes(32 * 1024), 0),
        ("4 MiB of escaped quotes", head("POST", "/api/replay"), escaped_quotes(4 * 1024 * 1024 - 1024), 0),
        ("replay page of 10^6", head("POST", "/api/replay?limit=1000000"), b"{}", 0),
        ("watched match to 10^9", head("POST", "/api/games"), b'{"mode": "watch", "episode": "match", '
                                                           b'"target": 1000000000}', 0),
    ]


def escaped_quotes(size: int) -> bytes:
    """65 ``[``, a ``"``, then ``\\"`` repeated to ``size`` bytes: a string never closed."""
    return b"[" * 65 + b'"' + b'\\"' * ((size - 66) // 2)


ATTACK_SPEC = "ismcts:iterations=20000"
"""The searching agent of the advance attack (the server's cap)."""


def advance_attack(port: int, stop, counts, attackers: int) -> list:
    """Start ``attackers`` threads, each watching a game of :data:`ATTACK_SPEC` and asking
    for 1000 agent moves at a time until ``stop`` is set (again at once after an answer;
    after a 429 once its ``Retry-After`` has passed); ``counts["advance of ...: STATUS"]``
    counts the answers. Returns the threads."""
    import threading

    name = f"advance of {ATTACK_SPEC}"

    def one(i: int) -> None:
        h = Http(port)
        # a watched match to 10,000 points: far more than 1000 moves, so every advance searches
        status, view = h.call("POST", "/api/games", {"mode": "watch", "agents": ATTACK_SPEC, "episode": "match",
                                                     "target": 10000, "seed": 10**6 + i})
        if status != 201:
            key = f"{name} (creating its game): {status}"
            counts[key] = counts.get(key, 0) + 1
            return
        gid = view["id"]
        while not stop.is_set():
            try:
                h.conn.request("POST", f"/api/games/{gid}/advance", body=b'{"steps": 1000}',
                               headers={"Content-Type": "application/json"})
                r = h.conn.getresponse()
                r.read()
                status, wait = r.status, r.getheader("retry-after")
            except OSError:
                status, wait = 0, None
                h = Http(port)
            key = f"{name}: {status}"
            counts[key] = counts.get(key, 0) + 1
            if status == 429 and wait is not None:
                stop.wait(float(wait))
        try:
            Http(port).call("DELETE", f"/api/games/{gid}")
        except OSError:
            pass
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(attackers)]
    for t in threads:
        t.start()
    return threads


def hostile(port: int, stop, counts, attackers: int = 40) -> None:
    """The hostile client (run in a process of its own): :func:`advance_attack`, and the
    requests of :func:`hostile_requests` in a loop until ``stop`` is set;
    ``counts["NAME: STATUS"]`` counts the answers (status 0: the connection was reset
    before an answer was read)."""
    reqs = hostile_requests(port)
    local: dict = {}
    threads = advance_attack(port, stop, local, attackers) if attackers else []
    try:
        _hostile_loop(port, stop, counts, reqs)
    finally:
        for t in threads:
            t.join(120)
        for k, v in local.items():
            counts[k] = counts.get(k, 0) + v


def _hostile_loop(port: int, stop, counts, reqs) -> None:
    while not stop.is_set():
        for name, head, body, chunked in reqs:
            status = _raw(port, head, body, chunked)
            key = f"{name}: {status}"
            counts[key] = counts.get(key, 0) + 1
            if stop.is_set():
                break


def memory_kib(pid: int) -> dict:
    """``{"rss": KiB now, "peak": highest KiB so far}`` of a process (Linux ``/proc``; empty elsewhere)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    out["rss"] = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    out["peak"] = int(line.split()[1])
    except OSError:
        pass
    return out


def compare(port: int, games: int, moves: int, seed: int, rounds: int, attackers: int = 40,
            server_pid: int | None = None) -> dict:
    """Rounds without and with the hostile client, alternating; the p95 (ms) of each kind,
    pooled over the rounds, their ratio, the hostile client's answers by status, the
    count of 5xx answers (games and hostile client) and the server's memory (KiB) after
    the warm-up and at the end."""
    lat = {False: [], True: []}
    per_round: list[tuple] = []
    counts: dict = {}
    errors: list[str] = []
    run(port, games, max(100, moves // 5), seed + 10**6, 0.0)  # warm-up, not measured
    mem0 = memory_kib(server_pid) if server_pid else {}
    for r in range(rounds):
        for with_hostile in (False, True):
            proc = None
            if with_hostile:
                mgr_counts = multiprocessing.Manager().dict()
                stop = multiprocessing.Event()
                proc = multiprocessing.Process(target=hostile, args=(port, stop, mgr_counts, attackers), daemon=True)
                proc.start()
                time.sleep(2.0)  # let it get going: its games created, its searches running
            try:
                got, _, errs, _ = run(port, games, moves, seed + 2 * r + with_hostile, 0.0)
            finally:
                if proc is not None:
                    stop.set()
                    proc.join(180)
                    if proc.is_alive():
                        proc.kill()
                    for k, v in dict(mgr_counts).items():
                        counts[k] = counts.get(k, 0) + v
            lat[with_hostile] += got
            per_round.append((r, with_hostile, float(np.percentile(np.array(got) * 1000, 95)) if got else None))
            errors += errs
    mem1 = memory_kib(server_pid) if server_pid else {}
    quiet = float(np.percentile(np.array(lat[False]) * 1000, 95))
    loud = float(np.percentile(np.array(lat[True]) * 1000, 95))
    five = sum(n for k, n in counts.items() if k.rpartition(": ")[2].startswith("5"))
    five += sum(1 for e in errors if e.split()[1].startswith("5"))
    return {"p95_quiet_ms": quiet, "p95_hostile_ms": loud, "ratio": loud / quiet, "moves": {k: len(v) for k, v in
            lat.items()}, "hostile_answers": dict(sorted(counts.items())), "errors": errors, "answers_5xx": five, "per_round_p95_ms": per_round,
            "memory_kib": {"after_warmup": mem0, "end": mem1}}


def start_server(games: int):
    """``twilight serve`` in its own process on a free loopback port; returns (process, port)."""
    port = free_port()
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    server = subprocess.Popen([sys.executable, "-m", "twilight_env.cli", "serve", "--port", str(port),
                               "--max-games", str(max(200, 2 * games))], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while True:
        try:
            Http(port).call("GET", "/api/agents")
            return server, port
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                msg = server.stderr.read().decode() if server.stderr else ""
                server.kill()
                raise RuntimeError(f"the server did not start: {msg}")
            time.sleep(0.1)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=20, help="concurrent games (default 20)")
    p.add_argument("--moves", type=int, default=2000, help="moves in all (default 2000; per round with --hostile)")
    p.add_argument("--think-ms", type=float, default=0.0, help="pause of a client between its moves (default 0)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hostile", action="store_true", help="compare rounds without and with a hostile client")
    p.add_argument("--rounds", type=int, default=2, help="with --hostile: rounds of each kind (default 2)")
    p.add_argument("--attackers", type=int, default=40,
                   help=f"with --hostile: threads each advancing a game of {ATTACK_SPEC} (default 40; 0: none)")
    args = p.parse_args(argv)
    if args.games < 1 or args.moves < 1 or args.rounds < 1 or args.attackers < 0:
        p.error("--games, --moves and --rounds must be >= 1, --attackers >= 0")
    load0 = f"{os.getloadavg()[0]:.2f}"
    try:
        server, port = start_server(args.games)
    except RuntimeError as e:
        print(e)
        return 1
    try:
        if args.hostile:
            t0 = time.perf_counter()
            res = compare(port, args.games, args.moves, args.seed, args.rounds, args.attackers, server.pid)
            print(f"{args.games} concurrent games, {args.rounds} rounds of {args.moves} moves without and with a "
                  f"hostile client, {time.perf_counter() - t0:.1f} s; load average before/after {load0} / "
                  f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
            print(f"move latency p95: without {res['p95_quiet_ms']:.1f} ms, with the hostile client "
                  f"{res['p95_hostile_ms']:.1f} ms, ratio {res['ratio']:.2f} (target <= 2)")
            print("p95 by round (ms): " + ", ".join(f"{r + 1}{' hostile' if h else ' quiet'} {p:.1f}"
                                                    for r, h, p in res["per_round_p95_ms"] if p is not None))
            print(f"hostile client's answers (request: status): {res['hostile_answers']}")
            print(f"answers 5xx (games and hostile client): {res['answers_5xx']}")
            m0, m1 = res["memory_kib"]["after_warmup"], res["memory_kib"]["end"]
            if m0 and m1:
                print(f"server memory: resident {m0['rss'] / 1024:.0f} -> {m1['rss'] / 1024:.0f} MiB, peak "
                      f"{m0['peak'] / 1024:.0f} -> {m1['peak'] / 1024:.0f} MiB (growth {(m1['peak'] - m0['peak']) / 1024:.0f}"
                      " MiB; target <= 50 MB)")
            print(f"game errors: {len(res['errors'])}")
            for e in res["errors"][:5]:
                print("  ", e)
            return 1 if res["errors"] or res["answers_5xx"] else 0
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
