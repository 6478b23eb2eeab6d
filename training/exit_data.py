"""Expert-iteration data: self-play deals decided by a search agent, recorded per decision
(``python -m twilight_env.training.exit generate``; the deals, chunk files and their keys
are described in :mod:`twilight_env.training.exit`), and the reader of those folders.
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from twilight_env.util.checks import check_int
from twilight_env.agents.base import make_agent
from twilight_env.agents.exit import ExitSearchAgent, legal_mask, most_visited
from twilight_env.agents.guided import GuidedAgent
from twilight_env.agents.ismcts import ISMCTSAgent
from twilight_env.agents.nn.features import infoset_row, role_of
from twilight_env.rules.engine import NUM_ACTIONS, State
from twilight_env.rules.heldout import check_not_heldout
from twilight_env.rules.infoset import InfoSet

DATA_FORMAT = "twilight-exit-data"
DATA_VERSION = 1
DEFAULT_AGENT = "ismcts:backend=numba,iterations=1000"
"""Search spec of iteration 1 (plain IS-MCTS)."""
KEYS = ("rows", "roles", "legal", "visits", "side", "outcome", "deal")


def check_ints(owner, names) -> None:
    """Check that each field ``names`` of the settings ``owner`` is an int >= 1.

    Raises:
        ValueError: naming the first field that is not (:func:`twilight_env.util.checks.check_int`).
    """
    for name in names:
        check_int(getattr(owner, name), name, 1)


@dataclass
class GenerateSettings:
    """What :func:`generate` plays (``generate``'s flags, module docstring)."""

    num_players: int
    """Variant: 3 or 4 players (``--players``)."""
    deals: int = 200
    """Deals in all; running again with more deals adds chunks (deals, >= 1)."""
    agent: str = DEFAULT_AGENT
    """Search agent deciding for every seat: ``ismcts:...``, ``exit-search:PATH,...`` or ``guided:PATH,...`` (agent spec)."""
    seed: int = 1
    """Deal seed, not a held-out deal set's (integer >= 0)."""
    workers: int = 1
    """Processes playing chunks side by side (processes, >= 1)."""
    chunk_deals: int = 10
    """Deals per chunk file (deals, >= 1)."""

    def validate(self) -> "GenerateSettings":
        """Check values; return self.

        Raises:
            ValueError: naming the field and what is allowed (held-out seeds included).
        """
        if self.num_players not in (3, 4):
            raise ValueError(f"num_players must be 3 or 4, got {self.num_players!r}")
        check_ints(self, ("deals", "workers", "chunk_deals"))
        check_not_heldout(self.seed, "generate seed")
        return self


def search_visits(agent, infoset, legal, rng: np.random.Generator) -> np.ndarray:
    """Root visit counts ``(31,)`` int64 of a search agent's decision.

    Args:
        agent: ``exit-search``, ``guided`` or ``ismcts``, each with its own ``backend`` option
            (``ismcts:backend=numba``: ``twilight_env.agents.fast_ismcts.search`` with the agent's
            iterations, ``c``, rollout policy, epsilon, scoring, ``max_depth`` and
            ``trees``, as its ``act`` does, so the recorded visits are those its move
            was chosen by).

    Raises:
        ValueError: if ``agent`` is not a search agent with root visits (``ismcts``, ``exit-search``, ``guided``).
    """
    if isinstance(agent, (ExitSearchAgent, GuidedAgent)):
        return np.asarray(agent.search(infoset, legal, rng)[0], dtype=np.int64)
    if isinstance(agent, ISMCTSAgent):
        if agent.backend == "numba":
            from twilight_env.agents.fast_ismcts import search
            return np.asarray(search(infoset, agent.iterations, agent.c, rng, rollout=agent.rollout,
                                     epsilon=agent.epsilon, scoring=agent.scoring, max_depth=agent.max_depth,
                                     trees=agent.trees)[0], dtype=np.int64)
        root = agent.search(infoset, rng)
        visits = np.zeros(NUM_ACTIONS, dtype=np.int64)
        for a, n in root.visits.items():
            visits[a] = n
        return visits
    raise ValueError(f"generate needs a search agent whose root visits it can record (ismcts:..., "
                     f"exit-search:PATH,..., guided:PATH,...), got {getattr(agent, 'name', agent)!r}")


def deal_state(seed: int, deal: int, num_players: int) -> State:
    """Deal ``deal`` of ``seed``: ``default_rng([seed, deal])``, leader uniform, then the hands (R2.3)."""
    rng = np.random.default_rng([seed, deal])
    return State.random(rng, int(rng.integers(4)), num_players)


def play_recorded(agent, seed: int, deal: int, num_players: int) -> dict:
    """Play one deal with ``agent`` deciding for every seat; the records of its decisions.

    Every decision with two or more legal actions is searched; the search's most visited
    action is played (what the agent's ``act`` plays). Forced decisions are played without
    a record.

    Returns:
        arrays as in the module table (without ``deals``).
    """
    state = deal_state(seed, deal, num_players)
    rng = np.random.default_rng([seed, deal, 1])
    recs = {k: [] for k in KEYS}
    while not state.done:
        info = InfoSet(state, state.deciding_seat)
        legal = info.legal_actions
        if len(legal) == 1:
            state.apply(legal[0])
            continue
        visits = search_visits(agent, info, legal, rng)
        mask = legal_mask(legal)
        v = np.where(mask, visits, 0).astype(np.float64)
        if v.sum() <= 0:
            raise RuntimeError(f"search gave no root visits to a legal action (deal {deal})")
        recs["rows"].append(infoset_row(info))
        recs["roles"].append(role_of(num_players, info.acting_seat))
        recs["legal"].append(mask)
        recs["visits"].append((v / v.sum()).astype(np.float32))
        recs["side"].append(info.acting_seat & 1)
        state.apply(most_visited(visits, legal))
    scores = state.side_scores()
    n = len(recs["rows"])
    side = np.asarray(recs["side"], dtype=np.int8)
    outcome = np.where(side == 0, scores[0] - scores[1], scores[1] - scores[0]).astype(np.float32) / 360.0
    return {"rows": np.asarray(recs["rows"], dtype=np.int64).reshape(n, -1),
            "roles": np.asarray(recs["roles"], dtype=np.int8),
            "legal": np.asarray(recs["legal"], dtype=bool).reshape(n, NUM_ACTIONS),
            "visits": np.asarray(recs["visits"], dtype=np.float32).reshape(n, NUM_ACTIONS),
            "side": side, "outcome": outcome, "deal": np.full(n, deal, dtype=np.int32)}


def chunk_path(out: Path, k: int) -> Path:
    return out / f"chunk_{k:05d}.npz"


def chunk_done(path: Path, deals: int) -> bool:
    """True if ``path`` is a whole chunk of ``deals`` deals (a damaged file counts as missing)."""
    try:
        with np.load(path) as z:
            return int(z["deals"]) == deals and all(k in z for k in KEYS)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return False


def write_npz(path: Path, arrays: dict) -> None:
    """``numpy.savez_compressed`` to a temporary file in the folder, then ``os.replace`` (atomic)."""
    tmp = path.with_name(path.name + f".tmp{os.getpid()}.npz")
    try:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

_WORKER: dict = {}


def _init_worker(spec: str) -> None:
    """Set up a generating process (a pool worker, or this process with one worker): one
    torch thread, one BLAS thread (``threadpoolctl``: the guided search's small NumPy products
    on a multi-threaded BLAS oversubscribe the cores when two generators or pool workers run
    side by side; on the products of the search's sizes one thread gives bitwise the same
    results; set after the agent is built, so that the BLAS libraries its modules load are
    limited too) and the agent. A pool worker ends when the process that started it dies, even
    by ``kill -9`` (:func:`twilight_env.util.procs.die_with_parent`; nothing is armed in a
    process that ``multiprocessing`` did not start)."""
    from threadpoolctl import threadpool_limits

    from twilight_env.util.procs import die_with_parent

    die_with_parent()
    import torch
    torch.set_num_threads(1)
    _WORKER["agent"] = make_agent(spec)
    threadpool_limits(1)


def _run_chunk(job: tuple) -> tuple[int, int, int]:
    out, k, first, count, seed, num_players = job
    agent = _WORKER["agent"]
    parts = [play_recorded(agent, seed, d, num_players) for d in range(first, first + count)]
    arrays = {key: np.concatenate([p[key] for p in parts]) for key in KEYS}
    arrays["deals"] = np.int64(count)
    write_npz(chunk_path(Path(out), k), arrays)
    return k, count, len(arrays["rows"])


def _check_meta(out: Path, meta: dict) -> None:
    path = out / "meta.json"
    if path.is_file():
        old = json.loads(path.read_text())
        fixed = ("format", "version", "num_players", "agent", "seed", "chunk_deals")
        diff = [k for k in fixed if old.get(k) != meta.get(k)]
        if diff:
            raise ValueError(f"{str(out)!r} holds data generated with other settings ("
                             + ", ".join(f"{k}: {old.get(k)!r} there, {meta.get(k)!r} now" for k in diff)
                             + "); use another --out folder or the same settings")
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("meta.json.tmp")
    tmp.write_text(json.dumps(meta, indent=1))
    os.replace(tmp, path)


def generate(out, settings: GenerateSettings, progress: bool = True) -> dict:
    """Play self-play deals with a search agent at every seat and write their records.

    Args:
        out: data folder (created; chunks already there are kept, module docstring).
        settings: what to play (:class:`GenerateSettings`).
        progress: show a tqdm bar (deals).

    Returns:
        ``{"chunks", "skipped", "decisions", "seconds"}`` of this run.

    Raises:
        ValueError: a held-out seed, a bad option, an agent without root visits, or a
            folder holding data of other settings.
    """
    s = settings.validate()
    probe = make_agent(s.agent)  # a bad spec or a non-search agent fails here, before any process starts
    if not isinstance(probe, (ISMCTSAgent, ExitSearchAgent, GuidedAgent)):
        raise ValueError(f"generate needs a search agent (ismcts:..., exit-search:PATH,..., guided:PATH,...), "
                         f"got {s.agent!r}")
    out = Path(out)
    from twilight_env.util.report import git_hash
    _check_meta(out, {"format": DATA_FORMAT, "version": DATA_VERSION, "num_players": s.num_players,
                      "agent": s.agent, "seed": int(s.seed), "chunk_deals": s.chunk_deals, "deals": s.deals,
                      "git": git_hash()})
    jobs, skipped = [], 0
    for k in range(math.ceil(s.deals / s.chunk_deals)):
        first = k * s.chunk_deals
        count = min(s.chunk_deals, s.deals - first)
        if chunk_done(chunk_path(out, k), count):
            skipped += 1
            continue
        jobs.append((str(out), k, first, count, int(s.seed), s.num_players))
    from tqdm import tqdm
    t0 = time.perf_counter()
    decisions = 0
    bar = tqdm(total=s.deals, initial=s.deals - sum(j[3] for j in jobs), unit="deal", disable=not progress)
    if s.workers == 1 or len(jobs) <= 1:
        _init_worker(s.agent)
        results = map(_run_chunk, jobs)
        for _, count, n in results:
            decisions += n
            bar.update(count)
    else:
        with mp.get_context("spawn").Pool(min(s.workers, len(jobs)), _init_worker, (s.agent,)) as pool:
            for _, count, n in pool.imap_unordered(_run_chunk, jobs):
                decisions += n
                bar.update(count)
    bar.close()
    return {"chunks": len(jobs), "skipped": skipped, "decisions": decisions, "seconds": time.perf_counter() - t0}


def load_data(folders) -> tuple[dict, int]:
    """All chunks of data folders, concatenated; a ``group`` key tells deals of different
    folders apart. Returns ``(arrays, num_players)``.

    Raises:
        ValueError: a folder without ``meta.json`` or chunks, or folders of different numbers of players.
    """
    parts, npl = [], None
    for i, folder in enumerate(folders):
        folder = Path(folder)
        meta_path = folder / "meta.json"
        if not meta_path.is_file():
            raise ValueError(f"{str(folder)!r} is not a data folder of `python -m twilight_env.training.exit generate` "
                             f"(no meta.json)")
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != DATA_FORMAT or meta.get("version") != DATA_VERSION:
            raise ValueError(f"{str(meta_path)!r}: not {DATA_FORMAT} version {DATA_VERSION} data")
        if npl is not None and meta["num_players"] != npl:
            raise ValueError(f"data folders mix {npl} and {meta['num_players']} players ({str(folder)!r})")
        npl = meta["num_players"]
        files = sorted(folder.glob("chunk_*.npz"))
        files = [f for f in files if ".tmp" not in f.name]
        if not files:
            raise ValueError(f"data folder {str(folder)!r} holds no chunk files yet")
        for f in files:
            try:
                with np.load(f) as z:
                    part = {k: z[k] for k in KEYS}
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
                raise ValueError(f"cannot read data chunk {str(f)!r} ({type(e).__name__}); delete it and run "
                                 f"generate again to replay it") from None
            part["group"] = np.full(len(part["rows"]), i, dtype=np.int32)
            parts.append(part)
    data = {k: np.concatenate([p[k] for p in parts]) for k in (*KEYS, "group")}
    return data, npl
