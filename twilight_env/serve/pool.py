"""Where ``twilight serve`` runs agent decisions and replays: one bounded pool of threads.

Every agent decision the server makes (an ``advance``, a move sent with ``"advance":
true``, a hint) and every replay runs in the worker threads of one :class:`DecisionPool`,
never in the thread pool that serves views, game creation and body parsing, so no number
of searches can hold the threads other requests need.

The pool has two lanes with their own limits:

- **heavy**: work that may search (an agent of :data:`HEAVY_AGENTS`: up to about a second
  a decision at the caps of :mod:`twilight_env.serve.specs`) and replays. At most
  ``heavy`` of them run at once, at most ``heavy_queue`` more wait;
- **light**: decisions of the other agents (``random``, ``heuristic`` and the network
  agents: a few milliseconds at most). At most ``light`` run at once, at most
  ``light_queue`` more wait.

A request that finds its lane's queue full is answered at once with 429 and a
``Retry-After`` header (:class:`Busy`); it never waits without bound. So a flood of
searches fills only the heavy lane, and games against light agents keep their own
threads. Work whose client has gone before it starts is dropped; work under way is asked
to stop (an ``advance`` stops before its next decision).
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

HEAVY_AGENTS = frozenset({"pimc", "ismcts", "exit-search", "guided"})
"""Agent names whose decisions search (many worlds or iterations); every other served
agent decides in a few milliseconds."""


def is_heavy(spec: str | None) -> bool:
    """True if agent ``spec`` (``NAME`` or ``NAME:options``; None for a person) searches."""
    return spec is not None and spec.strip().partition(":")[0].strip() in HEAVY_AGENTS


class Busy(Exception):
    """A lane's queue is full: answer 429 with ``Retry-After: retry_after`` (seconds).

    Attributes:
        lane: ``"heavy"`` or ``"light"``.
        retry_after: seconds the client is told to wait (int >= 1).
        message: one line for the answer.
    """

    def __init__(self, lane: str, limit: int, retry_after: int):
        what = "searches and replays" if lane == "heavy" else "agent moves"
        self.lane = lane
        self.retry_after = retry_after
        self.message = f"the server is busy with {limit} {what} running or waiting; try again in {retry_after} s"
        super().__init__(self.message)


@dataclass
class _Lane:
    name: str
    running_max: int
    queue_max: int
    slots: asyncio.Semaphore
    inside: int = 0  # running + waiting


class DecisionPool:
    """The bounded pool of the module docstring.

    Args:
        heavy: heavy requests that run at once (int >= 1).
        heavy_queue: heavy requests that may wait besides (int >= 0).
        light: light requests that run at once (int >= 1).
        light_queue: light requests that may wait besides (int >= 0).
        retry_after: seconds a refused client is told to wait (int >= 1).

    Attributes:
        executor: the worker threads (``heavy + light`` of them: a request that holds a
            slot always finds a thread).
    """

    def __init__(self, heavy: int = 2, heavy_queue: int = 8, light: int = 8, light_queue: int = 64,
                 retry_after: int = 5):
        for name, v, lo in (("heavy", heavy, 1), ("heavy_queue", heavy_queue, 0), ("light", light, 1),
                            ("light_queue", light_queue, 0), ("retry_after", retry_after, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
        self.lanes = {"heavy": _Lane("heavy", heavy, heavy_queue, asyncio.Semaphore(heavy)),
                      "light": _Lane("light", light, light_queue, asyncio.Semaphore(light))}
        self.retry_after = retry_after
        self.executor = ThreadPoolExecutor(max_workers=heavy + light, thread_name_prefix="twilight-decide")
        self._lock = threading.Lock()

    def load(self) -> dict[str, int]:
        """Requests running or waiting in each lane (for tests and benchmarks)."""
        return {name: lane.inside for name, lane in self.lanes.items()}

    def admit(self, lane: str) -> "_Ticket":
        """A place in ``lane`` ("heavy" or "light"), or :class:`Busy` when its queue is full.

        Use as ``async with pool.admit(lane) as ticket: await ticket.run(fn)``; the place
        is given back on leaving the block (also on an error or a cancelled request).
        """
        lane_ = self.lanes[lane]
        with self._lock:
            if lane_.inside >= lane_.running_max + lane_.queue_max:
                raise Busy(lane, lane_.running_max + lane_.queue_max, self.retry_after)
            lane_.inside += 1
        return _Ticket(self, lane_)


class _Ticket:
    """A place in a lane: waiting, then running one function at a time in the pool's threads."""

    def __init__(self, pool: DecisionPool, lane: _Lane):
        self.pool = pool
        self.lane = lane
        self.left = False

    async def __aenter__(self) -> "_Ticket":
        return self

    async def __aexit__(self, *exc) -> None:
        self.leave()

    def leave(self) -> None:
        if not self.left:
            self.left = True
            with self.pool._lock:
                self.lane.inside -= 1

    async def run(self, fn: Callable[[], Any], gone: Callable[[], Any], on_gone: Callable[[], None] | None = None,
                  poll: float = 0.2) -> tuple[bool, Any]:
        """Wait for a running slot, then run ``fn`` in a worker thread.

        Args:
            fn: the work (called with no arguments in a worker thread).
            gone: an async callable, True once the client has gone (checked before the
                work starts and every ``poll`` seconds while it runs).
            on_gone: called once when the client is found gone while ``fn`` runs (asks
                ``fn`` to stop early).
            poll: seconds between checks.

        Returns:
            ``(True, result)``, or ``(False, None)`` when the client went away (the work
            was not started, or it was asked to stop; a started thread ends on its own
            and holds its slot until then, so no more than the lane's limit ever run).
        """
        await self.lane.slots.acquire()
        if await gone():
            self.lane.slots.release()
            return False, None
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.pool.executor, fn)
        lane = self.lane

        def finished(f):
            lane.slots.release()
            if not f.cancelled():
                f.exception()  # retrieved: no "never retrieved" warning when the client has gone

        future.add_done_callback(finished)
        while True:
            done, _ = await asyncio.wait({future}, timeout=poll)
            if done:
                return True, future.result()
            if await gone():
                if on_gone is not None:
                    on_gone()
                return False, None

