"""Shared pieces of the experiments: agent specs, seeded agent streams, worker pools,
confidence intervals and plain-text tables.

Statistics (95% by default):

| helper | interval | used for |
|---|---|---|
| :func:`mean_ci` | Student t over independent values (``scipy.stats.t``) | mean deal points over deals or duplicate pairs |
| :func:`wilson_ci` | Wilson score interval of a binomial proportion | P(one side outscores the other in a deal) |

Reproducibility: every agent seat of every play gets its own ``numpy.random.Generator``
from ``SeedSequence((seed, AGENT_STREAM, deal_index, play, seat))``, so results do not
depend on the number of worker processes nor on how much randomness other agents use.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any, Callable, Iterable, Sequence

import numpy as np

AGENT_STREAM = 1
"""Tag mixed into agent seeds so agent streams never coincide with the deal stream."""


# ---------------------------------------------------------------------------------
# agents
# ---------------------------------------------------------------------------------

def check_specs(specs: Iterable[str]) -> list[str]:
    """Build every agent spec once, so a bad spec fails before any worker starts.

    Returns:
        The specs, stripped.

    Raises:
        ValueError: an unknown agent or option (the message lists the valid agents), or an
            agent whose module cannot be imported (named, with the valid agents).
    """
    from agents.base import available_agents, make_agent, parse_spec

    out = []
    for spec in specs:
        name, _ = parse_spec(spec)  # ValueError listing the valid agents
        try:
            make_agent(spec)
        except ImportError as e:
            raise ValueError(f"agent {name!r} (spec {spec!r}) cannot be built here: {e}; "
                             f"valid agents: {', '.join(available_agents())}") from None
        out.append(spec.strip())
    return out


def agent_available(name: str) -> bool:
    """Whether an agent name can be built in this installation (e.g. ``"heuristic"``)."""
    try:
        check_specs([name])
    except ValueError:
        return False
    return True


class SeededAgent:
    """Wraps an agent so that it draws from its own generator, not the one passed in.

    ``agents.base.play_deal`` hands one generator to all seats; wrapping each seat gives
    each its own stream, so one agent's use of randomness cannot change another's.
    """

    def __init__(self, agent, rng: np.random.Generator):
        self.agent = agent
        self.rng = rng
        self.name = getattr(agent, "name", "agent")

    def reset(self) -> None:
        reset = getattr(self.agent, "reset", None)
        if reset is not None:
            reset()

    def act(self, infoset, legal_actions, rng) -> int:
        return self.agent.act(infoset, legal_actions, self.rng)


_AGENT_CACHE: dict[tuple[str, int], Any] = {}


def seat_agent(spec: str, seat: int):
    """One agent instance per (spec, seat) and process, built on first use."""
    key = (spec, seat)
    agent = _AGENT_CACHE.get(key)
    if agent is None:
        from agents.base import make_agent
        agent = _AGENT_CACHE[key] = make_agent(spec)
    return agent


def agent_rng(seed: int, deal_index: int, play: int, seat: int) -> np.random.Generator:
    """The generator of one seat in one play of one deal (see the module docstring)."""
    return np.random.default_rng(np.random.SeedSequence((int(seed), AGENT_STREAM, int(deal_index),
                                                         int(play), int(seat))))


def play_seeded(state, specs_by_seat: Sequence[str], seed: int, deal_index: int, play: int):
    """Play a deal state to the end with one seeded agent per seat; returns the state.

    Args:
        state: an engine ``State`` at the start of a deal (played forward in place).
        specs_by_seat: 4 agent specs by seat (3 players: seat 2 is ignored, R7.3).
        seed, deal_index, play: identify the agents' random streams.
    """
    from agents.base import play_deal

    agents = [SeededAgent(seat_agent(specs_by_seat[s], s), agent_rng(seed, deal_index, play, s))
              for s in range(4)]
    return play_deal(state, agents, agents[0].rng)


def lockstep_ok(specs: Sequence[str]) -> bool:
    """True when some agent among ``specs`` scores decisions in batches (``act_batch``) and
    every one is ``stateless`` (so one instance may play many deals at once)."""
    agents = [seat_agent(s, 0) for s in specs]
    return (any(hasattr(a, "act_batch") for a in agents)
            and all(getattr(a, "stateless", False) for a in agents))


def play_lockstep(games: Sequence[tuple]) -> list:
    """Play many deals side by side; batched agents decide for all deals at once.

    Each round, every unfinished deal contributes its next decision. Agents with
    ``act_batch(infosets, legal_actions_list)`` (the ``neural`` agent: one forward pass
    for all of them) get all their pending decisions in one call; the other agents act
    one decision at a time. Every seat of every deal keeps its own stream
    (:func:`agent_rng`) and batched agents are deterministic, so the result is the same
    as :func:`play_seeded` on each deal (``tests/experiments`` checks it).

    Args:
        games: ``(state, specs_by_seat, seed, deal_index, play)`` per deal, as for
            :func:`play_seeded`; the states are played forward in place. The agents must
            be ``stateless`` (:func:`lockstep_ok`).

    Returns:
        the finished states, in order.

    Raises:
        ValueError: if an agent returns an illegal action (the message names it).
    """
    from agents.base import apply_checked
    from twilight_env.infoset import InfoSet

    entries = []
    for state, specs, seed, deal_index, play in games:
        agents = [SeededAgent(seat_agent(specs[s], s), agent_rng(seed, deal_index, play, s)) for s in range(4)]
        for a in agents:
            a.reset()
        entries.append((state, agents))
    active = [g for g in range(len(entries)) if not entries[g][0].done]
    while active:
        batched: dict[int, tuple] = {}
        for g in active:
            state, agents = entries[g]
            seat = state.deciding_seat
            info = InfoSet(state, seat)
            legal = info.legal_actions
            agent = agents[seat].agent
            if hasattr(agent, "act_batch"):
                batched.setdefault(id(agent), (agent, []))[1].append((g, info, legal))
                continue
            apply_checked(state, agents[seat].act(info, legal, None), legal, agent, seat)
        for agent, items in batched.values():
            acts = agent.act_batch([it[1] for it in items], [it[2] for it in items])
            for (g, info, legal), a in zip(items, acts):
                apply_checked(entries[g][0], a, legal, agent, info.seat)
        active = [g for g in active if not entries[g][0].done]
    return [e[0] for e in entries]


# ---------------------------------------------------------------------------------
# workers
# ---------------------------------------------------------------------------------

def default_workers() -> int:
    """Worker processes by default: ``os.cpu_count()`` (at least 1)."""
    return max(1, os.cpu_count() or 1)


def check_workers(workers: int) -> int:
    """Raises ValueError unless ``workers`` is a positive int."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers must be a positive integer (1 runs in this process), got {workers!r}")
    return workers


def run_tasks(fn: Callable, tasks: Sequence, workers: int, desc: str = "", progress: bool = True,
              on_result: Callable | None = None, done: int = 0) -> list:
    """``[fn(t) for t in tasks]``, in worker processes when ``workers > 1``, with a progress bar.

    Results come back in task order whatever the number of workers. ``fn`` must be a
    module-level function (it is pickled to the workers). ``on_result(r)``, when given, is
    called in this process with each result as it arrives (e.g. to checkpoint), and
    ``done`` tasks finished earlier are counted in the bar's total. Inside
    ``with experiments.distributed.ray_runner(address)`` the tasks run on a Ray cluster
    instead (``workers`` is then ignored), with the same results in the same order.
    """
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: worker processes are forked after this
    # disable=None: no bar when stderr is not a terminal (logs, CI), so output stays readable
    bar = tqdm(total=len(tasks) + done, initial=done, desc=desc, unit="deal", disable=None if progress else True,
               leave=False, mininterval=0.5)
    try:
        from .distributed import current_address

        address = current_address()
        if address is not None:  # inside `with ray_runner(...)`: the tasks run on Ray
            from .distributed import run_tasks_ray

            return run_tasks_ray(fn, tasks, address, on_result=on_result, bar=bar)
        if workers <= 1 or len(tasks) <= 1:
            out = []
            for t in tasks:
                out.append(fn(t))
                if on_result is not None:
                    on_result(out[-1])
                bar.update(1)
            return out
        from concurrent.futures import ProcessPoolExecutor

        # small chunks: results (and checkpoints) arrive steadily even with slow agents
        chunk = max(1, min(4, len(tasks) // (workers * 8)))
        out = []
        pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)))
        try:
            for r in pool.map(fn, tasks, chunksize=chunk):
                out.append(r)
                if on_result is not None:
                    on_result(r)
                bar.update(1)
        except BaseException:
            # Ctrl-C or a failed task: stop the workers now rather than wait for the
            # deals already handed out (ProcessPoolExecutor has no public way to)
            procs = list((getattr(pool, "_processes", None) or {}).values())
            for proc in procs:
                proc.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return out
    finally:
        bar.close()


# ---------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------

def mean_ci(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of independent values.

    Args:
        values: 1-d array-like of floats (e.g. deal points per duplicate pair).
        confidence: coverage, in (0, 1).

    Returns:
        ``(mean, low, high)``; low and high are NaN with fewer than 2 values. With zero
        spread the interval is the mean itself.

    Raises:
        ValueError: on an empty input or a confidence outside (0, 1).
    """
    from scipy import stats

    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("mean_ci needs at least one value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    se = float(x.std(ddof=1)) / math.sqrt(x.size)
    h = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1)) * se
    return m, m - h, m + h


def wilson_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """Proportion ``successes / n`` with its Wilson score interval.

    Returns:
        ``(p, low, high)``; all NaN when ``n == 0``.

    Raises:
        ValueError: unless ``0 <= successes <= n`` are ints and confidence is in (0, 1).
    """
    from scipy import stats

    if not 0 <= successes <= n or int(successes) != successes or int(n) != n:
        raise ValueError(f"need integers 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n == 0:
        return math.nan, math.nan, math.nan
    p = successes / n
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return p, max(0.0, center - half), min(1.0, center + half)


# ---------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------

def fmt_ci(mean: float, low: float, high: float, digits: int = 1, signed: bool = False) -> str:
    """``"12.3 [10.1, 14.5]"``; ``"12.3"`` when the interval is undefined; with ``signed``
    every number carries its sign (``"+12.3 [+10.1, +14.5]"``), for differences."""
    f = f"+.{digits}f" if signed else f".{digits}f"
    if math.isnan(low):
        return f"{mean:{f}}"
    return f"{mean:{f}} [{low:{f}}, {high:{f}}]"


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain aligned table (first column left-aligned, the others right-aligned)."""
    cells = [list(map(str, header))] + [list(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(r):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule] + [line(r) for r in cells[1:]])


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table."""
    out = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    return "\n".join(out)


def out_dir(out: str | None, exp: str, seed: int) -> str:
    """The output folder: ``out`` if given, else ``out/{exp}__{seed}__{unixtime}``; created."""
    path = out or os.path.join("out", f"{exp}__{seed}__{int(time.time())}")
    os.makedirs(path, exist_ok=True)
    return path


def write_json_atomic(path: str, obj) -> None:
    """Write ``obj`` as JSON to a temporary file beside ``path``, then ``os.replace`` it
    onto ``path``: a reader (or a crash) sees the old file or the new one, never half."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def git_hash() -> str | None:
    """The current git commit of the working tree, or None outside a git checkout."""
    import subprocess

    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                           cwd=os.path.dirname(os.path.abspath(__file__)))
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None
