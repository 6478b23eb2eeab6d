"""Shared pieces of the experiments: agent specs, seeded agent streams, worker pools,
output folders and checkpoints of resumable runs. The statistics and tables are
:mod:`twilight_env.util.report`'s (re-exported here for the studies).

Reproducibility: every agent seat of every play gets its own ``numpy.random.Generator``
from ``SeedSequence((seed, AGENT_STREAM, deal_index, play, seat))``, so results do not
depend on the number of worker processes nor on how much randomness other agents use.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from twilight_env.agents.base import agent_available, check_specs, reads_shipped_weights  # noqa: F401
from twilight_env.util.checks import check_int  # noqa: F401
from twilight_env.util.report import (fmt_ci, git_hash, markdown_table, mean_ci, text_table,  # noqa: F401
                                      wilson_ci, write_json_atomic)
from twilight_env.records.game_records import check_record_file, nearest_existing
from twilight_env.experiments.checkpoint_checks import (DIGEST_KEY, check_deal_file, check_digest, check_keys,
                                                        check_seconds, check_shipped_weights, read_progress_json,
                                                        shipped_weights_digest, with_digest)
# the checks of a checkpoint's contents live in twilight_env.experiments.checkpoint_checks; their
# names stay importable here
from twilight_env.experiments.checkpoint_checks import (MAX_DEAL_SCORE, RETIRED_WEIGHTS, check_deal_source,  # noqa: F401
                                                        check_score_pair, content_digest, possible_deal_score,
                                                        possible_margin, possible_score_pair)

AGENT_STREAM = 1
"""Tag mixed into agent seeds so agent streams never coincide with the deal stream."""


# ---------------------------------------------------------------------------------
# agents
# ---------------------------------------------------------------------------------

class SeededAgent:
    """Wraps an agent so that it draws from its own generator, not the one passed in.

    ``twilight_env.agents.base.play_deal`` hands one generator to all seats; wrapping each seat gives
    each its own stream, so one agent's use of randomness cannot change another's.
    """

    def __init__(self, agent, rng: np.random.Generator):
        self.agent = agent
        self.rng = rng
        self.name = getattr(agent, "name", "agent")

    def reset(self) -> None:
        from twilight_env.agents.base import optional_member

        reset = optional_member(self.agent, "reset")
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
        from twilight_env.agents.base import make_agent
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
    from twilight_env.agents.base import play_deal

    agents = [SeededAgent(seat_agent(specs_by_seat[s], s), agent_rng(seed, deal_index, play, s))
              for s in range(4)]
    return play_deal(state, agents, agents[0].rng)


def lockstep_ok(specs: Sequence[str]) -> bool:
    """True when some agent among ``specs`` scores decisions in batches (``act_batch``) and
    every one is ``stateless`` (so one instance may play many deals at once); both are
    optional members of the agent protocol (``twilight_env.agents.base.optional_member``)."""
    from twilight_env.agents.base import optional_member

    agents = [seat_agent(s, 0) for s in specs]
    return (any(optional_member(a, "act_batch") is not None for a in agents)
            and all(optional_member(a, "stateless") for a in agents))


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
    from twilight_env.agents.base import apply_checked, optional_member
    from twilight_env.rules.infoset import InfoSet

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
            act_batch = optional_member(agent, "act_batch")
            if act_batch is not None:
                batched.setdefault(id(agent), (act_batch, agent, []))[2].append((g, info, legal))
                continue
            apply_checked(state, agents[seat].act(info, legal, None), legal, agent, seat)
        for act_batch, agent, items in batched.values():
            acts = act_batch([it[1] for it in items], [it[2] for it in items])
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


MAX_WORKERS = 256
"""Most worker processes a run may start (``--workers``): each is a Python process with the
agents loaded, so ``--workers 100000`` would start one per task until memory ran out."""


def check_workers(workers: int) -> int:
    """``workers`` if it is an int in 1..:data:`MAX_WORKERS`; more workers than CPU cores print
    a one-line warning on stderr (the extra processes only share the cores).

    Raises:
        ValueError: not an int in 1..MAX_WORKERS.
    """
    import sys

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--workers must be a positive integer (1 runs in this process), got {workers!r}")
    if workers > MAX_WORKERS:
        raise ValueError(f"--workers must be at most {MAX_WORKERS} (worker processes on this machine; "
                         f"{os.cpu_count() or 1} CPU core(s) here), got {workers:,}")
    cores = os.cpu_count() or 1
    if workers > cores:
        print(f"warning: --workers {workers} is more than the {cores} CPU core(s) here; the extra processes share "
              f"the cores and make the run no faster (--workers {cores} uses them all)", file=sys.stderr)
    return workers


def _init_worker() -> None:
    """Set up a worker process of the pool.

    Signals: workers leave interruptions to the main process: a Ctrl-C reaches the whole
    process group, and only the main process saves the finished deals and says so; the
    main process ends its workers with SIGTERM, which must end them quietly. A worker also
    ends (SIGTERM) when the main process dies, even by ``kill -9``
    (:func:`twilight_env.util.procs.die_with_parent`): no orphan plays on.

    Threads: one BLAS thread per worker (``threadpoolctl``). The pool already keeps every
    core busy, and a network agent's small matrix products on a multi-threaded BLAS in each
    worker oversubscribe the cores: ``twilight edge`` (the network) on 2,000 deals took
    21.0 s with 2 workers on the default BLAS threads and 6.0 s with one each (2 idle cores).
    """
    import signal

    from threadpoolctl import threadpool_limits

    from twilight_env.util.procs import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()
    threadpool_limits(1)


def _apply_chunk(fn: Callable, chunk: Sequence) -> list:
    """``[fn(t) for t in chunk]`` in a worker process (one pool task per chunk of tasks)."""
    return [fn(t) for t in chunk]


PROGRESS_LOG_EVERY_S = 30.0
"""Seconds between the progress lines of a run whose stderr is not a terminal (a log, a
pipe, ``nohup``): :class:`Progress`."""

PROGRESS_WARMUP_S = 3.0
"""Seconds of play after the first finished deals before :class:`Progress` estimates the time left."""


def _duration(seconds: float) -> str:
    """``seconds`` for a person: ``"45 s"``, ``"12 min"``, ``"1.5 h"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """How far a run has got, in deals, on stderr: a bar on a terminal, a line every
    :data:`PROGRESS_LOG_EVERY_S` seconds elsewhere (a log file, a pipe, ``nohup``), so a
    long run is never silent.

    The time per deal and the time left are measured from the moment the first deals of
    this sitting finished: start-up (worker processes, weights, compiling) is not a
    deal's time and would make the estimate for a fast agent hours too long. Until
    :data:`PROGRESS_WARMUP_S` seconds and two more results have passed since then, the
    estimate reads ``"estimating"``.

    Args:
        total: deals of the whole run (those finished in an earlier sitting included).
        done: deals finished in an earlier sitting.
        desc: what plays, e.g. ``"edge policy"``.
        enabled: False shows nothing (``--quiet``).
        stream: where to write (default ``sys.stderr`` at construction).
        tty: whether ``stream`` is a terminal (default ``stream.isatty()``).
        clock: seconds (default ``time.monotonic``; a test may give its own).
        log_every_s: seconds between lines off a terminal.
    """

    def __init__(self, total: int, done: int = 0, desc: str = "", enabled: bool = True, stream=None,
                 tty: bool | None = None, clock: Callable[[], float] = time.monotonic,
                 log_every_s: float = PROGRESS_LOG_EVERY_S):
        import sys

        self.total, self.n, self.desc = int(total), int(done), desc
        self.stream = sys.stderr if stream is None else stream
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty and isatty())
        self.clock, self.log_every_s = clock, log_every_s
        self.start = clock()
        self.warm: tuple[float, int] | None = None  # (time, deals) when the first results arrived
        self.updates_since_warm = 0
        self.bar = None
        self.logging = enabled and not tty
        self.last_log = self.start
        if enabled and tty:
            from tqdm import tqdm

            tqdm.monitor_interval = 0  # no monitor thread: worker processes are forked after this
            self.bar = tqdm(total=self.total, initial=self.n, desc=desc, file=self.stream, leave=False,
                            mininterval=0.5, bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                                        "deals [{elapsed}{postfix}]")
            self.bar.set_postfix_str(self.estimate(), refresh=False)
        elif self.logging:
            before = f"{self.n} done before, " if self.n else ""
            self._line(f"{self.total} deals ({before}{self.total - self.n} to play); a line every "
                       f"{self.log_every_s:.0f} s")

    def seconds_per_deal(self) -> float | None:
        """Seconds per deal measured after warm-up (class docstring), or None while estimating."""
        if self.warm is None or self.updates_since_warm < 2:
            return None
        t0, n0 = self.warm
        dt, dn = self.clock() - t0, self.n - n0
        if dt < PROGRESS_WARMUP_S or dn <= 0:
            return None
        return dt / dn

    def estimate(self) -> str:
        """``"0.0035 s/deal, 28 s left"``, or ``"estimating"`` (class docstring)."""
        per = self.seconds_per_deal()
        if per is None:
            return "estimating"
        return f"{per:.3g} s/deal, {_duration(per * (self.total - self.n))} left"

    def update(self, deals: int = 1) -> None:
        """Count ``deals`` more finished deals."""
        self.n += deals
        now = self.clock()
        if self.warm is None:
            self.warm = (now, self.n)
        else:
            self.updates_since_warm += 1
        if self.bar is not None:
            self.bar.set_postfix_str(self.estimate(), refresh=False)
            self.bar.update(deals)
        elif self.logging and now - self.last_log >= self.log_every_s:
            self.last_log = now
            self._line(f"{self.n}/{self.total} deals ({100 * self.n / max(self.total, 1):.0f}%), "
                       f"{_duration(now - self.start)}, {self.estimate()}")

    def close(self) -> None:
        """End the bar; off a terminal, a last line when every deal has finished."""
        if self.bar is not None:
            self.bar.close()
        elif self.logging and self.n >= self.total:
            self._line(f"{self.n}/{self.total} deals in {_duration(self.clock() - self.start)}")
        self.logging = False

    def _line(self, text: str) -> None:
        print(f"{self.desc}: {text}" if self.desc else text, file=self.stream, flush=True)


def run_tasks(fn: Callable, tasks: Sequence, workers: int, desc: str = "", progress: bool = True,
              on_result: Callable | None = None, done: int = 0, units: Callable[[Any], int] | None = None,
              timing: dict | None = None) -> list:
    """``[fn(t) for t in tasks]``, in worker processes when ``workers > 1``, with progress in deals.

    Results come back in task order whatever the number of workers. ``fn`` must be a
    module-level function (it is pickled to the workers). ``on_result(r)``, when given, is
    called in this process with each result as it arrives (e.g. to checkpoint). Progress
    (:class:`Progress`: a bar on a terminal, a line every 30 s elsewhere) counts deals:
    ``units(task)`` deals per task (default 1), and ``done`` deals finished earlier. A
    ``timing`` dict receives ``"seconds_per_deal"``: wall seconds per deal measured after
    the first results arrived (:meth:`Progress.seconds_per_deal`; None for a run too short
    to time), so start-up does not count as play.

    On Ctrl-C (``KeyboardInterrupt``, raised here in the main process; workers ignore
    SIGINT) the workers are ended at once and the interruption is re-raised, so the
    caller can save what ``on_result`` received.

    Inside ``with twilight_env.util.distributed.ray_runner(address)`` the tasks run on a Ray
    cluster instead (``workers`` is then ignored), with the same results in the same order.
    """
    sizes = [1 if units is None else int(units(t)) for t in tasks]
    bar = Progress(sum(sizes) + done, done, desc, enabled=progress)
    finished = iter(sizes)

    def arrived(r) -> None:  # results arrive in task order on every runner
        if on_result is not None:
            on_result(r)
        bar.update(next(finished))

    try:
        from twilight_env.util.distributed import current_address

        address = current_address()
        if address is not None:  # inside `with ray_runner(...)`: the tasks run on Ray
            from twilight_env.util.distributed import run_tasks_ray

            out = run_tasks_ray(fn, tasks, address, on_result=arrived)
        elif workers <= 1 or len(tasks) <= 1:
            from threadpoolctl import threadpool_limits

            # one BLAS thread, as in a pool worker (_init_worker): 64 deals of `policy` in
            # this process took 9.95 s of CPU on the default BLAS threads, 0.85 s on one
            with threadpool_limits(1):
                out = []
                for t in tasks:
                    out.append(fn(t))
                    arrived(out[-1])
        else:
            out = _run_in_pool(fn, tasks, workers, arrived)
        if timing is not None:
            timing["seconds_per_deal"] = bar.seconds_per_deal()
        return out
    finally:
        bar.close()


def _run_in_pool(fn: Callable, tasks: Sequence, workers: int, on_result: Callable) -> list:
    """:func:`run_tasks` on a pool of ``workers`` processes (results in task order); on
    Ctrl-C or a failed task the workers are ended at once and the exception re-raised."""
    from concurrent.futures import ProcessPoolExecutor

    # small chunks: results (and checkpoints) arrive steadily even with slow agents
    chunk = max(1, min(4, len(tasks) // (workers * 8)))
    out = []
    pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)), initializer=_init_worker)
    # submit, not pool.map: map's iterator cancels the pending futures as soon as an
    # interruption reaches it, and the pool's manager thread, failing those futures as
    # broken once the workers are ended, then raises InvalidStateError (Python 3.11)
    futures = [pool.submit(_apply_chunk, fn, tasks[i:i + chunk]) for i in range(0, len(tasks), chunk)]
    try:
        for fut in futures:
            for r in fut.result():
                out.append(r)
                on_result(r)
    except BaseException:
        # Ctrl-C or a failed task: stop the workers now rather than wait for the
        # deals already handed out (ProcessPoolExecutor has no public way to), let
        # the manager thread fail the pending futures, then shut the pool down
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(timeout=5)
        # a worker ended while it sent a result leaves part of a message in the result
        # pipe, and the manager thread would wait in recv() for the rest for good (the
        # interpreter's exit waits on that thread): closing this process's write end, the
        # last one once the workers are gone, ends that read (EOF: the pool is broken)
        writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
        if writer is not None:
            writer.close()
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is not None:
            manager.join(timeout=10)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return out


def check_new_folder(path: str, flag: str = "--out", force: bool = False) -> None:
    """Refuse an output folder that would replace a previous run's outputs.

    Args:
        path: the folder asked for.
        flag: the option that named it, for the message.
        force: allow a folder that already holds files (outputs of the same names are
            replaced).

    Raises:
        ValueError: ``path`` is an existing file, a parent of it is a file, the folder
            it would be made in (or it) is not writable, or it is a folder that holds
            files and ``force`` is false (the message names the flag, a few of the files
            and ``--force``).
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{flag} {path!r} is an existing file, not a folder; give a folder path")
    above = nearest_existing(path)
    if not os.path.isdir(above):
        raise ValueError(f"{flag} {path!r} cannot be made: {above!r} is a file, not a folder")
    if not os.access(above, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path!r} cannot be {'written' if above == os.path.abspath(path) else 'made'}: "
                         f"the folder {above!r} is not writable here; give a folder you may write to")
    if os.path.isdir(path) and not force:
        names = sorted(os.listdir(path))
        if names:
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            hint = "".join(f"; it holds an interrupted run ({n}): continue it with --resume {path}"
                           for n in names if n.endswith(".checkpoint.json"))[:1000]
            raise ValueError(f"{flag} {path!r} already holds files ({shown}); give --force to write over them, "
                             f"or choose another folder{hint}")


def check_new_file(path: str, flag: str, force: bool = False) -> None:
    """Refuse an output file that exists already (unless ``force``), that is a folder, or that
    cannot be written (:func:`twilight_env.records.game_records.check_record_file`, for any output file).

    Raises:
        ValueError: ``path`` is a folder, a parent of it is a file, it exists and ``force``
            is false, or it cannot be written (the message names the flag and ``--force``).
    """
    check_record_file(path, flag, force)


def out_dir(out: str | None, exp: str, seed: int, force: bool = False) -> str:
    """The output folder: ``out`` if given, else ``out/{exp}__{seed}__{unixtime}``; created.

    The default folder is claimed with one ``mkdir`` (atomic), so runs started in the same
    second never share it: the second gets ``..._2``, the third ``..._3``, and so on.

    Raises:
        ValueError: as :func:`check_new_folder` (a file, a folder with files unless
            ``force``, a place that is not writable), or the folder cannot be made (the
            operating system's reason, naming ``--out``).
    """
    if out is None:
        return _new_default_folder(os.path.join("out", f"{exp}__{seed}__{int(time.time())}"))
    check_new_folder(out, "--out", force)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out {out!r} cannot be made: {e.strerror or e}; give a folder you may write to") from None
    return out


def _new_default_folder(base: str) -> str:
    """Make and return ``base``, or ``base_2``, ``base_3``, ... when taken (see :func:`out_dir`)."""
    try:
        os.makedirs(os.path.dirname(base), exist_ok=True)
        for k in range(1, 10_000):
            path = base if k == 1 else f"{base}_{k}"
            try:
                os.mkdir(path)
                return path
            except FileExistsError:
                continue
    except OSError as e:
        raise ValueError(f"the default --out {base!r} cannot be made: {e.strerror or e}; "
                         "give --out a folder you may write to") from None
    raise ValueError(f"the default --out {base!r} and 9,998 numbered variants are taken; give --out")


MAX_CHECKPOINT_BYTES = 512 << 20
"""Largest study checkpoint read (bytes of JSON): 512 MiB. A checkpoint holds the deals
(about 200 bytes each) and every finished deal's points (about 100 bytes per deal and
pairing or configuration): a million deals of two configurations fit. A larger file is
refused as soon as the limit is passed, before it fills the memory."""


def read_progress_file(folder: str, name: str, kind: str, version: int, what: str, title: str,
                       result_file: str | None = None) -> dict:
    """Read and check the JSON progress file ``folder/name`` of an interrupted run.

    Args:
        kind, version: the ``"kind"`` and ``"version"`` the file must carry.
        what: the file's name in messages (e.g. ``"arena checkpoint"``); title: what it
            must be (e.g. ``"twilight arena checkpoint"``).
        result_file: the finished run's output in ``folder``; its presence means the run
            has finished and removed its progress file.

    Raises:
        ValueError: no such file (finished or never started), a file that is not JSON
            (truncated, nested deeper than ``twilight_env.util.jsonfile.MAX_DEPTH``, not UTF-8,
            larger than :data:`MAX_CHECKPOINT_BYTES`:
            :class:`twilight_env.util.jsonfile.JsonFileError`, one line naming the file and
            ending with what to do), or another kind or version.
    """
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        if result_file and os.path.isfile(os.path.join(folder, result_file)):
            raise ValueError(f"the run in {folder!r} has already finished (its {result_file} is there); "
                             "there is nothing to resume")
        raise ValueError(f"no {what} in {folder!r} (expected {path}); a finished run removes it")
    doc = read_progress_json(path, what, MAX_CHECKPOINT_BYTES)  # JsonFileError: one line, what to do
    if not isinstance(doc, dict) or doc.get("kind") != kind or doc.get("version") != version:
        raise ValueError(f"{path!r} is not a {title} (version {version})")
    return doc


class RunCheckpoint:
    """The finished deals of a long run (``edge``, ``arena``), kept in its output folder.

    The file ``FOLDER/{name}`` holds the run's settings, its deals (and their number,
    ``num_deals``; deals drawn from a seed are stored as ``null`` and drawn again on load,
    :func:`drawn_seed`), the run time so far (``elapsed_seconds``), the play time per key
    over all sittings (``play_seconds``) and, per key (a configuration or a pairing),
    each finished deal's result; it is written atomically (:func:`write_json_atomic`)
    every :meth:`interval` seconds as deals finish, at the start, and on Ctrl-C or
    SIGTERM. Every deal is seeded by (seed, deal index, key), so ``--resume FOLDER``
    plays only the missing deals and ends with the figures of an uninterrupted run.

    :meth:`load` checks everything before anything is played: the file's JSON (one line
    naming the file for a truncated, deeply nested or malformed file), its content digest
    (``sha256``, :func:`check_digest`: an edit, even to another in-range value, or a flipped
    bit is refused; a file written before files kept one resumes after a one-line notice,
    its deals checked against the deal file they came from, :func:`check_deal_file`), its
    keys (unknown ones refused), the durations, and, through the subclass's :meth:`parse`, every
    setting's type and range, the deals and every stored result against what a deal
    can produce (R5), and that the shipped weights its agents may read are those it
    started with (``weights``, :func:`check_shipped_weights`). Subclasses set ``NAME``,
    ``KIND``, ``COMMAND`` and ``RESULT_FILE``, and :meth:`specs_of`.
    """

    NAME = "checkpoint.json"
    """File name in the output folder (removed when the run finishes)."""
    KIND = "twilight-checkpoint"
    COMMAND = "twilight"
    """The command that resumes it, e.g. ``"twilight edge"``."""
    RESULT_FILE = ""
    """The run's result file: its presence means the run finished."""
    VERSION = 1
    EVERY_S = 20.0
    KEYS = ("kind", "version", "settings", "deals", "elapsed_seconds", "done")
    OPTIONAL_KEYS = ("num_deals", "play_seconds", "weights", DIGEST_KEY)
    """Keys of the file; the optional ones are absent from files written before they were added."""

    def __init__(self, folder: str, settings: dict, deals, done: dict | None = None, elapsed: float = 0.0,
                 play_seconds: dict | None = None, weights: dict | None = None):
        self.folder = folder
        self.path = os.path.join(folder, self.NAME)
        self.settings = settings
        self.deals = deals
        self.done: dict[str, dict[int, Any]] = done or {}
        self.elapsed = elapsed
        self.seconds: dict[str, float] = dict(play_seconds or {})
        """Play time per key in the sittings before the current one (seconds)."""
        self.weights = shipped_weights_digest(self.specs_of(settings)) if weights is None else dict(weights)
        """Digest of the shipped weights the run's agents may read, taken when it started
        (:func:`shipped_weights_digest`; ``{}``: none, or a file written before it was kept)."""
        self._since = clock()
        self._last_write = 0.0
        self._playing: tuple[str, float] | None = None

    @classmethod
    def specs_of(cls, settings: dict) -> list[str]:
        """The run's agent specs, read from its settings (subclasses: arena's ``specs``,
        edge's ``configs``); used for :attr:`weights`."""
        return []

    def interval(self) -> float:
        """Seconds between writes while deals finish."""
        return self.EVERY_S

    def start(self, key) -> None:
        """Start the play clock of ``key`` (a configuration or pairing being played now)."""
        self.stop()
        self._playing = (str(key), clock())

    def stop(self) -> None:
        """Stop the play clock started by :meth:`start`, adding its time to the key's."""
        if self._playing is not None:
            key, t0 = self._playing
            self.seconds[key] = self.seconds.get(key, 0.0) + clock() - t0
            self._playing = None

    def play_seconds(self, key) -> float:
        """Seconds spent playing ``key``'s deals over every sitting, the running one included."""
        key = str(key)
        running = clock() - self._playing[1] if self._playing is not None and self._playing[0] == key else 0.0
        return self.seconds.get(key, 0.0) + running

    def record(self, key, deal_index: int, result) -> None:
        """Keep one finished deal's (JSON-able) result; write the file if it is due."""
        self.done.setdefault(str(key), {})[int(deal_index)] = result
        if clock() - self._last_write >= self.interval():
            self.write()

    def finished(self, key) -> dict:
        """``{deal index: result}`` of one key."""
        return self.done.get(str(key), {})

    def count(self) -> int:
        """Finished deals over all keys."""
        return sum(len(v) for v in self.done.values())

    def write(self) -> None:
        """Write the file now (atomically: a crash leaves the previous version), with its
        content digest (:func:`with_digest`)."""
        now = clock()
        keys = set(self.seconds) | ({self._playing[0]} if self._playing is not None else set())
        doc = {"kind": self.KIND, "version": self.VERSION, "settings": self.settings,
               "deals": None if drawn_seed(self.settings) is not None else self.deals,
               "num_deals": len(self.deals), "elapsed_seconds": self.elapsed + now - self._since,
               "play_seconds": {k: self.play_seconds(k) for k in sorted(keys)},
               "done": {k: {str(d): r for d, r in v.items()} for k, v in self.done.items()},
               "weights": self.weights}
        write_json_atomic(self.path, with_digest(doc))
        self._last_write = now

    def remove(self) -> None:
        """Delete the file (the run has finished and written its results)."""
        if os.path.exists(self.path):
            os.remove(self.path)

    def interrupted(self, error: KeyboardInterrupt) -> str:
        """Write the file and return the one line to print after an interruption."""
        self.write()
        how = "interrupted" if getattr(error, "signum", None) is None else f"stopped by {error}"
        return (f"{how}: {self.count()} finished deal(s) saved in {self.path}; "
                f"continue with: {self.COMMAND} --resume {self.folder}")

    @classmethod
    def parse(cls, doc: dict) -> tuple[dict, list, dict]:
        """``(settings, deals, done)`` from a checkpoint document, after checking every
        setting's type and range and every result; subclasses implement it.

        Raises:
            KeyError, TypeError, ValueError: a missing key or a malformed or out-of-range
                value (the message names the field and what is allowed).
        """
        raise NotImplementedError

    @classmethod
    def load(cls, folder: str) -> "RunCheckpoint":
        """Read and check ``FOLDER/{NAME}`` (nothing is played before this returns).

        Raises:
            ValueError: no such file (or the run already finished), a file that is not
                JSON (one line naming it), not a checkpoint of this kind and version, or
                a malformed or out-of-range setting, deal list, duration or result (the
                message names the file, the field and the allowed values), or shipped
                weights that changed since the run started (naming the files).
        """
        what = f"{cls.COMMAND.split()[-1]} checkpoint"
        path = os.path.join(folder, cls.NAME)
        doc = read_progress_file(folder, cls.NAME, cls.KIND, cls.VERSION, what, f"{cls.COMMAND} checkpoint",
                                 cls.RESULT_FILE)
        verified = check_digest(doc, path, what)
        try:
            check_keys(doc, "the file", cls.KEYS, cls.OPTIONAL_KEYS)
            doc = redraw_deals(doc)
            settings, deals, done = cls.parse(doc)
            if not verified:
                check_deal_file(settings.get("deals_source"), "settings 'deals_source'", deals)
            if "num_deals" in doc:
                n = check_int(doc["num_deals"], "'num_deals'", 1)
                if n != len(deals):
                    raise ValueError(f"'num_deals' is {n} but the file holds {len(deals)} deals; the deal list "
                                     "was shortened or lengthened by hand")
            elapsed = check_seconds(doc["elapsed_seconds"], "'elapsed_seconds'")
            seconds = doc.get("play_seconds", {})
            if not isinstance(seconds, dict):
                raise ValueError(f"'play_seconds' must be an object (seconds per key), got {type(seconds).__name__}")
            for k, v in seconds.items():
                check_seconds(v, f"'play_seconds' {k!r}")
        except KeyError as e:
            raise ValueError(f"{what} {path!r} is malformed: the key {e} is missing") from None
        except (TypeError, ValueError) as e:
            raise ValueError(f"{what} {path!r} is malformed: {e}") from None
        weights = check_shipped_weights(doc.get("weights"), cls.specs_of(settings), f"{what} {path!r}")
        return cls(folder, settings, deals, done, elapsed, {k: float(v) for k, v in seconds.items()}, weights)


def drawn_seed(settings) -> int | None:
    """The seed a run's deals were drawn from (``settings["deals_source"]``, source
    ``"seed"``), or None for deals read from a file (or settings without a source).

    A checkpoint of drawn deals stores ``"deals": null`` and its number of deals: the list
    is the first ``num_deals`` deals of that seed (:func:`~twilight_env.records.dealsets.generate_deals`),
    drawn again on load (:func:`redraw_deals`), so that an 18,000-deal run's file holds its
    results, not 3.4 MB of deals that the seed already gives.
    """
    src = settings.get("deals_source") if isinstance(settings, dict) else None
    if not isinstance(src, dict) or src.get("source") != "seed":
        return None
    seed = src.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else None


def redraw_deals(doc: dict) -> dict:
    """``doc`` with its deal list drawn again from the seed when the file stores
    ``"deals": null`` (:func:`drawn_seed`); a file holding its deals is returned as it is.

    Raises:
        ValueError: ``deals`` null but the settings name no seed the deals were drawn
            from, or no valid ``num_deals``; ``deals`` an empty list (saying what it may hold).
    """
    if doc.get("deals") == []:  # a hand edit: no run writes an empty list
        n, seed = doc.get("num_deals"), drawn_seed(doc.get("settings"))
        runs = f"the run's {n} deals" if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else "the run's deals"
        null = (" (deals from a file are stored in the file)" if seed is None else ", or null for deals drawn from "
                "the run's seed (settings 'deals_source' with source 'seed')")
        raise ValueError(f"the checkpoint's 'deals' is an empty list; it holds a list of {runs}{null}")
    if doc.get("deals") is not None:
        return doc
    from twilight_env.records.dealsets import generate_deals

    seed = drawn_seed(doc.get("settings"))
    if seed is None:
        src = doc.get("settings", {}).get("deals_source") if isinstance(doc.get("settings"), dict) else None
        source = src.get("source") if isinstance(src, dict) else None
        if source not in (None, "seed", "file"):
            raise ValueError(f"settings 'deals_source' 'source' must be 'seed' or 'file', got {source!r}")
        raise ValueError("'deals' is null, which only a run on deals drawn from a seed may write (settings "
                         "'deals_source' with source 'seed' and its seed); deals from a file are stored in the file")
    n = check_int(doc.get("num_deals"), "'num_deals'", 1)
    return {**doc, "deals": generate_deals(n, seed)}


def clock() -> float:
    """Wall-clock seconds (``time.time``) for checkpoints' run and play times; one
    function, so a test can replace it."""
    return time.time()


def resume_conflicts(given: Iterable[tuple[str, Any]], allowed: str = "--workers and --quiet") -> None:
    """Refuse settings given together with ``--resume``.

    Args:
        given: ``(flag, value)`` pairs; a value other than None, ``[]`` or False counts
            as given.

    Raises:
        ValueError: naming the flags given.
    """
    names = [flag for flag, v in given if not (v is None or v is False or (isinstance(v, list) and not v))]
    if names:
        raise ValueError(f"--resume keeps the settings saved in the checkpoint; do not give {', '.join(names)} "
                         f"with it (only {allowed})")
