"""Self-play sources of the Deep Monte-Carlo learner: in the learner's process
(``--actors 0``), actor processes (``torch.multiprocessing``, spawn) or Ray actors
(``--ray``). Each has ``get(model, want)``, ``publish(model)`` and ``close()``.
"""

from __future__ import annotations

import queue as queue_mod
import time

import numpy as np
import torch

from twilight_env.agents.nn.network import NetConfig, QNetwork
from twilight_env.training.config import TrainConfig
from twilight_env.training.dmc.learner import Learner, cpu_copy
from twilight_env.training.runtime import set_rng_state
from twilight_env.training.selfplay import SelfPlay
from twilight_env.training.vec_selfplay import VecSelfPlay


def make_selfplay(cfg: TrainConfig, model, rng: np.random.Generator):
    """The self-play generator ``cfg.selfplay_engine`` names, on CPU (actors always run there)."""
    cls = VecSelfPlay if cfg.selfplay_engine == "vector" else SelfPlay
    return cls(cfg.players, model, rng, num_games=cfg.games_per_actor, epsilon=cfg.epsilon,
               pool_prob=cfg.pool_prob, pool_size=cfg.pool_size, snapshot_every=cfg.snapshot_every)


class InProcessSelfPlay:
    """Self-play in the learner process (``actors=0``; deterministic on CPU for a seed)."""

    def __init__(self, learner: Learner):
        model = learner.model if learner.device.type == "cpu" else cpu_copy(learner.model, learner.net_cfg)
        self.device = learner.device
        self.sp = make_selfplay(learner.cfg, model, learner.selfplay_rng)

    def get(self, model, want: int) -> list:
        """One chunk of about ``want`` decisions, as a one-element list of ``(0, Batch, CollectStats)``."""
        model.eval()
        batch, stats = self.sp.collect(want)
        return [(0, batch, stats)]

    def publish(self, model) -> None:
        """Give self-play the new weights (a copy only when the learner is not on CPU)."""
        if self.device.type != "cpu":
            self.sp.model.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})

    def state_dict(self) -> dict | None:
        """The generator's state (:meth:`VecSelfPlay.state_dict`), or None for the one-``State``-
        per-deal generator, whose deals in progress restart on resume."""
        return self.sp.state_dict() if hasattr(self.sp, "state_dict") else None

    def load_state_dict(self, state: dict | None, selfplay_rng_state: dict | None) -> None:
        """Go on with a saved generator's deals; then set the self-play generator back to
        its saved state (building the generator drew new deals from it)."""
        if state is not None and hasattr(self.sp, "load_state_dict"):
            self.sp.load_state_dict(state)
            if selfplay_rng_state is not None:
                set_rng_state(self.sp.rng, selfplay_rng_state)

    def close(self) -> None:
        pass


def _actor_main(actor_id: int, cfg_dict: dict, net_dict: dict, shared_model, lock, out_queue, stop,
                seed_seq: list) -> None:
    """Actor process: play self-play chunks with a local copy of the shared weights. It
    ends (SIGTERM) when the learner's process dies, even by ``kill -9``
    (:func:`twilight_env.util.procs.die_with_parent`)."""
    from twilight_env.util.procs import die_with_parent

    die_with_parent()
    torch.set_num_threads(1)
    cfg = TrainConfig.from_dict(cfg_dict)
    model = QNetwork(NetConfig.from_dict(net_dict)).eval()
    rng = np.random.default_rng(seed_seq)
    with lock:
        model.load_state_dict(shared_model.state_dict())
    sp = make_selfplay(cfg, model, rng)
    try:
        while not stop.is_set():
            batch, stats = sp.collect(cfg.chunk)
            while not stop.is_set():
                try:
                    out_queue.put((actor_id, batch, stats), timeout=0.5)
                    break
                except queue_mod.Full:
                    continue
            with lock:
                model.load_state_dict(shared_model.state_dict())
    except KeyboardInterrupt:
        pass


class ActorPool:
    """``cfg.actors`` self-play processes (``torch.multiprocessing``, spawn) that read the
    weights from a shared-memory copy after every chunk."""

    def __init__(self, learner: Learner):
        import torch.multiprocessing as mp
        cfg = learner.cfg
        ctx = mp.get_context("spawn")
        self.shared = cpu_copy(learner.model, learner.net_cfg)
        self.shared.share_memory()
        self.lock = ctx.Lock()
        self.queue = ctx.Queue(maxsize=2 * cfg.actors)
        self.stop = ctx.Event()
        self.procs = []
        for i in range(cfg.actors):
            p = ctx.Process(target=_actor_main, daemon=True,
                            args=(i, cfg.to_dict(), learner.net_cfg.to_dict(), self.shared, self.lock,
                                  self.queue, self.stop, [cfg.seed, 3_000 + i, learner.counters["resumes"]]))
            p.start()
            self.procs.append(p)

    def get(self, model, want: int) -> list:
        """The chunks waiting (at most 1 s for the first); [] if none came.

        Raises:
            RuntimeError: if every actor process has died.
        """
        chunks = []
        try:
            chunks.append(self.queue.get(timeout=1.0))
            while True:
                chunks.append(self.queue.get_nowait())
        except queue_mod.Empty:
            pass
        if not chunks and not any(p.is_alive() for p in self.procs):
            raise RuntimeError("all actor processes died")
        return chunks

    def publish(self, model) -> None:
        """Copy the learner's weights into shared memory for the actors."""
        with self.lock:
            self.shared.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})

    def close(self) -> None:
        """Stop the actors (draining the queue so none blocks on a put; 20 s at most)."""
        self.stop.set()
        deadline = time.time() + 20
        while any(p.is_alive() for p in self.procs) and time.time() < deadline:
            try:
                self.queue.get(timeout=0.2)
            except queue_mod.Empty:
                pass
        for p in self.procs:
            p.join(timeout=1)
            if p.is_alive():
                p.terminate()


class _RaySelfPlayActor:
    """Body of a Ray self-play actor: the same generator as an actor process
    (:func:`_actor_main`), fed the learner's latest weights with every request."""

    def __init__(self, cfg_dict: dict, net_dict: dict, seed_seq: list):
        torch.set_num_threads(1)
        self.cfg = TrainConfig.from_dict(cfg_dict)
        self.model = QNetwork(NetConfig.from_dict(net_dict)).eval()
        self.sp = make_selfplay(self.cfg, self.model, np.random.default_rng(seed_seq))

    def collect(self, weights: dict, want: int):
        self.model.load_state_dict(weights)
        return self.sp.collect(want)


class RayActorPool:
    """``cfg.actors`` self-play actors on a Ray cluster (``--ray``), the learner in this
    process. Each actor always has one ``collect`` request in flight, sent with the
    latest published weights; :meth:`get` takes the chunks that are ready. An actor
    whose process dies is restarted by Ray (``max_restarts``) with a fresh generator,
    and its lost chunk is simply not counted: the learner counts only chunks it
    received, so the decision counts, checkpoints and ``--resume`` work as with local
    actor processes.

    Raises:
        ValueError: a malformed address or no cluster there (``twilight_env.util.distributed``).
        ModuleNotFoundError: ray is not installed (the ``dist`` extra).
    """

    MAX_RESTARTS = 5
    RETRY_WAIT_S = 1.0
    """Seconds an actor that failed waits before its next request (a restart takes a while)."""
    GIVE_UP_S = 60.0
    """Seconds of failing in a row, on top of ``MAX_RESTARTS`` failures, before giving up."""

    def __init__(self, learner: Learner, body=None, body_args=None):
        """``body``: the actor class (default the self-play actor) with ``collect(weights,
        want) -> (Batch, CollectStats)``; ``body_args(i)``: its constructor's arguments for
        actor ``i``. Both default to this trainer's self-play actors."""
        from twilight_env.util.distributed import check_address, connect

        cfg = learner.cfg
        self.ray = connect(check_address(cfg.ray))
        actor_cls = self.ray.remote(num_cpus=1, max_restarts=self.MAX_RESTARTS,
                                    max_task_retries=0)(body or _RaySelfPlayActor)
        self.weights = self.ray.put({k: v.detach().cpu() for k, v in learner.model.state_dict().items()})
        if body_args is None:
            def body_args(i):
                return cfg.to_dict(), learner.net_cfg.to_dict(), [cfg.seed, 3_000 + i, learner.counters["resumes"]]
        self.actors = [actor_cls.remote(*body_args(i)) for i in range(cfg.actors)]
        self.chunk = cfg.chunk
        self.failures = [0] * len(self.actors)
        self.failing_since = [None] * len(self.actors)  # time of the first failure of the current streak
        self.retry_at: dict[int, float] = {}  # actors waiting out a restart before their next request
        self.pending = {a.collect.remote(self.weights, self.chunk): i for i, a in enumerate(self.actors)}

    def get(self, model, want: int) -> list:
        """The chunks ready (waiting at most 1 s for the first) as ``(actor, Batch, CollectStats)``.

        Raises:
            RuntimeError: when every actor has failed more than ``MAX_RESTARTS`` times in
                a row and for more than ``GIVE_UP_S`` seconds (Ray has given up restarting them).
        """
        now = time.monotonic()
        for i, t in list(self.retry_at.items()):  # actors whose restart wait is over get a new request
            if t <= now:
                del self.retry_at[i]
                self.pending[self.actors[i].collect.remote(self.weights, self.chunk)] = i
        chunks = []
        if not self.pending:
            time.sleep(min(1.0, max(0.0, min(self.retry_at.values()) - now)))
            return chunks
        ready, _ = self.ray.wait(list(self.pending), num_returns=len(self.pending), timeout=1.0)
        for ref in ready:
            i = self.pending.pop(ref)
            try:
                batch, stats = self.ray.get(ref)
            except self.ray.exceptions.RayActorError:
                # the actor died mid-chunk (or is still restarting): Ray restarts it and the chunk is
                # dropped; the next request waits a little, so that a slow restart is not counted
                # as many failures in quick succession
                self.failures[i] += 1
                if self.failing_since[i] is None:
                    self.failing_since[i] = time.monotonic()
                self.retry_at[i] = time.monotonic() + self.RETRY_WAIT_S
                continue
            self.failures[i], self.failing_since[i] = 0, None
            # arrays from Ray's object store are read-only views: the learner gets its own
            batch = type(batch)(*(np.array(a) for a in (batch.rows, batch.roles, batch.actions, batch.targets)))
            chunks.append((i, batch, stats))
            self.pending[self.actors[i].collect.remote(self.weights, self.chunk)] = i
        if all(f > self.MAX_RESTARTS and time.monotonic() - t0 > self.GIVE_UP_S
               for f, t0 in zip(self.failures, (t if t is not None else float("inf") for t in self.failing_since))):
            raise RuntimeError(f"every Ray self-play actor failed more than {self.MAX_RESTARTS} times in a row, "
                               f"for more than {self.GIVE_UP_S:g} s")
        return chunks

    def publish(self, model) -> None:
        """Send the learner's weights with the actors' next requests."""
        self.weights = self.ray.put({k: v.detach().cpu() for k, v in model.state_dict().items()})

    def close(self) -> None:
        for ref in list(self.pending):
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 (an actor task that already ended)
                pass
        for a in self.actors:
            self.ray.kill(a)
        self.pending.clear()


def selfplay_source(learner: Learner, cfg: TrainConfig, ckpt: dict | None):
    """The self-play data source: in this process (``actors`` 0, its state restored from
    the checkpoint), Ray actors (``ray``) or actor processes."""
    source = (InProcessSelfPlay(learner) if cfg.actors == 0 else
              RayActorPool(learner) if cfg.ray is not None else ActorPool(learner))
    if ckpt is not None and isinstance(source, InProcessSelfPlay) and ckpt.get("selfplay_state") is not None:
        source.load_state_dict(ckpt["selfplay_state"], ckpt.get("rng", {}).get("selfplay"))
    return source



__all__ = ["ActorPool", "InProcessSelfPlay", "RayActorPool", "make_selfplay", "selfplay_source"]
