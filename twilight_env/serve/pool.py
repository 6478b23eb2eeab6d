"""Where ``twilight serve`` runs agent decisions and replays: one bounded pool of threads.

Every agent decision the server makes (an ``advance``, a move sent with ``"advance":
true``, a hint) and every replay runs in the worker threads of one :class:`DecisionPool`,
never in the thread pool that serves views, game creation and body parsing, so no number
of searches can hold the threads other requests need.

The pool has two lanes with their own limits:

- **heavy**: work that may search (an agent declared with ``searches=True``,
  :func:`heavy_agents`: up to about a second
  a decision at the caps of :mod:`twilight_env.serve.specs`) and replays. At most
  ``heavy`` of them run at once, at most ``heavy_queue`` more wait;
- **light**: decisions of the other agents (``random``, ``heuristic`` and the network
  agents: a few milliseconds at most). At most ``light`` run at once, at most
  ``light_queue`` more wait.

Searching decisions (and hints of searching agents) run in ``heavy`` worker processes
(spawned at the first one, each at a lower CPU priority, ``nice`` +:data:`WORKER_NICE`):
a search holds neither the server's interpreter lock nor its memory (a decision of
``ismcts:iterations=20000`` builds a tree of about 180 MiB), so the games of light agents
keep their latency while searches run. Replays run in the pool's threads.

A request that finds its lane's queue full is answered at once with 429 and a
``Retry-After`` header (:class:`Busy`); it never waits without bound. So a flood of
searches fills only the heavy lane, and games against light agents keep their own
threads. Work whose client has gone before it starts is dropped; work under way is asked
to stop (an ``advance`` stops before its next decision).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable

def heavy_agents() -> frozenset[str]:
    """Agent names whose decisions search (many worlds or iterations): those declared with
    ``searches=True`` (:class:`twilight_env.agents.declaration.AgentDecl`); every other
    served agent decides in a few milliseconds."""
    from twilight_env.agents.base import declarations

    return frozenset(name for name, decl in declarations().items() if decl.searches)


WORKER_NICE = 10
"""How much lower the CPU priority of the search worker processes is than the server's."""
MAX_CACHED_AGENTS = 16
"""Agents a worker process keeps built, by spec (an agent decides afresh each time)."""


def is_heavy(spec: str | None) -> bool:
    """True if agent ``spec`` (``NAME`` or ``NAME:options``; None for a person) searches."""
    if spec is None:
        return False
    from twilight_env.agents.base import agent_name, declarations

    decl = declarations().get(agent_name(spec))
    return decl is not None and decl.searches


def _worker_start() -> None:
    """Initializer of a search worker process: a lower CPU priority than the server."""
    try:
        os.nice(WORKER_NICE)
    except OSError:  # not allowed here: the same priority as the server
        pass


_AGENTS: dict = {}


def remote_act(spec: str, info, rng) -> tuple[int, object]:
    """One decision of agent ``spec`` in a worker process (built once per spec, reset before
    every decision, so it carries nothing from one game to another).

    Args:
        spec: a checked agent spec.
        info: the deciding player's :class:`~twilight_env.rules.infoset.InfoSet`.
        rng: the player's ``numpy.random.Generator``.

    Returns:
        ``(action, rng)``: the action (int, one of ``info.legal_actions``) and the generator
        after the decision (the caller keeps it, so a game's draws go on as in one process).
    """
    from twilight_env.agents.base import make_agent

    agent = _AGENTS.get(spec)
    if agent is None:
        if len(_AGENTS) >= MAX_CACHED_AGENTS:
            _AGENTS.clear()
        agent = _AGENTS[spec] = make_agent(spec)
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset()
    return int(agent.act(info, info.legal_actions, rng)), rng


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
        processes: run searching decisions in ``heavy`` worker processes (True), or in the
            pool's threads (False: tests that replace an agent's ``act`` in this process).

    Attributes:
        executor: the worker threads (``heavy + light`` of them: a request that holds a
            slot always finds a thread).
    """

    def __init__(self, heavy: int = 2, heavy_queue: int = 8, light: int = 8, light_queue: int = 64,
                 retry_after: int = 5, processes: bool = True):
        for name, v, lo in (("heavy", heavy, 1), ("heavy_queue", heavy_queue, 0), ("light", light, 1),
                            ("light_queue", light_queue, 0), ("retry_after", retry_after, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
        self.lanes = {"heavy": _Lane("heavy", heavy, heavy_queue, asyncio.Semaphore(heavy)),
                      "light": _Lane("light", light, light_queue, asyncio.Semaphore(light))}
        self.retry_after = retry_after
        self.executor = ThreadPoolExecutor(max_workers=heavy + light, thread_name_prefix="twilight-decide")
        self.processes = processes
        self._heavy = heavy
        self._procs: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _process_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._procs is None:
                self._procs = ProcessPoolExecutor(max_workers=self._heavy, initializer=_worker_start,
                                                  mp_context=multiprocessing.get_context("spawn"))
            return self._procs

    def call(self, fn, *args):
        """``fn(*args)`` in a search worker process (``processes``) or here; called from a
        worker thread that holds a heavy slot, so at most ``heavy`` run at once.

        Raises:
            RuntimeError: a worker process died (killed, out of memory); the next call
                starts new ones.
        """
        if not self.processes:
            return fn(*args)
        procs = self._process_pool()
        try:
            return procs.submit(fn, *args).result()
        except BrokenProcessPool:
            with self._lock:
                if self._procs is procs:
                    self._procs = None
            procs.shutdown(wait=False)
            raise RuntimeError("a search worker process of the server died (killed or out of memory); "
                               "the next search starts a new one") from None

    def decide(self, spec: str, info, rng) -> tuple[int, object]:
        """One searching decision (:func:`remote_act`) through :meth:`call`."""
        if not self.processes:
            return remote_act(spec, info, rng)
        return self.call(remote_act, spec, info, rng)

    def shutdown(self) -> None:
        """Stop the worker processes (the server is closing)."""
        with self._lock:
            procs, self._procs = self._procs, None
        if procs is not None:
            procs.shutdown(wait=False, cancel_futures=True)

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

