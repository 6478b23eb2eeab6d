"""``twilight train``: Deep Monte-Carlo self-play training (DouZero, Zha et al. ICML 2021).

Loop: actors play self-play deals with the current network (epsilon-greedy, an opponent
pool of past snapshots mixed in) and send recorded decisions with their Monte Carlo
returns; the learner keeps a replay buffer of the most recent samples and regresses
Q(infoset, action) on the returns (MSE, Adam). With ``--actors 0`` self-play runs in the
learner process (deterministic on CPU for a seed); with ``--actors N`` it runs in N
processes (``torch.multiprocessing``, spawn) that refresh their weights from a
shared-memory copy after every chunk.

Run directory ``{logdir}/{exp}__{seed}__{unixtime}`` holds TensorBoard event files and
``checkpoint.pt`` (written atomically every ``checkpoint_every`` minutes and at the
end). TensorBoard tags, x-axis = self-play decisions seen by the learner:

| tag | meaning |
|-----|---------|
| ``losses/mse`` | mean squared error of Q against returns ((deal points / 360)²) |
| ``charts/decisions_per_s`` | self-play generation speed, all actors together (decisions/s) |
| ``charts/actor_decisions_per_s`` | generation speed of one actor while it plays (decisions/s) |
| ``charts/episode_return`` | mean side-0 return of finished self-play deals (deal points / 360; 3p: the solo's side) |
| ``charts/episodes`` | self-play deals finished (deals) |
| ``charts/updates`` | gradient updates so far |
| ``eval/points_vs_X`` | duplicate deals vs agent X: network side's deal points minus X's, per deal |
| ``eval/ci95_vs_X`` | half-width of its 95% interval (deal points) |
| ``eval/win_rate_vs_X`` | share of games the network side outscored X (ties 0.5) |
| ``eval/points_as_solo_vs_X``, ``eval/points_as_sun_vs_X`` | 3 players: the same split by role |
"""

from __future__ import annotations

import json
import math
import os
import queue as queue_mod
import subprocess
import time
from pathlib import Path

import numpy as np
import torch

from agents.nn.checkpoint import (CHECKPOINT_NAME, FORMAT, VERSION, load_checkpoint, model_from_checkpoint,
                                  save_checkpoint)
from agents.nn.features import NUM_MASKS, num_roles
from agents.nn.network import NetConfig, QNetwork

from .config import TrainConfig
from .selfplay import SelfPlay, duplicate_eval, eval_deals
from .vec_selfplay import VecSelfPlay


# ---------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------

def add_arguments(parser) -> None:
    """Flags of ``twilight train`` (see :class:`~training.config.TrainConfig` for units)."""
    d = TrainConfig()
    parser.add_argument("--players", type=int, choices=(3, 4), default=None,
                        help="variant: 4 or 3 players (default 4; a resumed run keeps its own)")
    parser.add_argument("--minutes", type=float, default=None, help="wall-clock budget of this run (minutes)")
    parser.add_argument("--decisions", type=int, default=None,
                        help="budget: total self-play decisions seen, resumed ones included")
    parser.add_argument("--actors", type=int, default=d.actors, help="actor processes (0 = in-process)")
    parser.add_argument("--device", default=d.device, help="learner device: cpu or cuda")
    parser.add_argument("--seed", type=int, default=d.seed, help="random seed")
    parser.add_argument("--logdir", default=d.logdir, help="parent folder of run directories")
    parser.add_argument("--exp", default=d.exp, help="experiment name (run dir {exp}__{seed}__{unixtime})")
    parser.add_argument("--resume", default=None, metavar="RUN_DIR",
                        help="continue a run from its last checkpoint (same step counts and optimizer state)")
    parser.add_argument("--eval-every", type=int, default=d.eval_every,
                        help="decisions between duplicate-deal evaluations (0 = only at the end)")
    parser.add_argument("--eval-deals", type=int, default=d.eval_deals,
                        help="evaluation deals per opponent, each played twice with sides swapped (0 = no eval)")
    parser.add_argument("--eval-opponents", default=",".join(d.eval_opponents),
                        help="comma-separated opponent agent specs for evaluation")
    parser.add_argument("--checkpoint-every", type=float, default=d.checkpoint_every, help="minutes between checkpoints")
    parser.add_argument("--lr", type=float, default=None,
                        help=f"Adam learning rate (default {d.lr}; on --resume, given = continue with this rate)")
    parser.add_argument("--batch-size", type=int, default=d.batch_size, help="samples per update")
    parser.add_argument("--reuse", type=float, default=d.reuse,
                        help="average number of updates each recorded decision takes part in")
    parser.add_argument("--epsilon", type=float, default=d.epsilon, help="exploration probability")
    parser.add_argument("--pool-prob", type=float, default=d.pool_prob,
                        help="probability a self-play deal is played against a past snapshot")
    parser.add_argument("--games-per-actor", type=int, default=None,
                        help=f"deals batched per actor (default {d.games_per_actor}; a resumed run keeps its own)")
    parser.add_argument("--selfplay-engine", choices=("vector", "scalar"), default=None,
                        help=f"self-play generator: the batch engine (vector) or one State per deal (scalar) "
                             f"(default {d.selfplay_engine}; a resumed run keeps its own)")
    parser.add_argument("--shared-head", action="store_true",
                        help="3 players: one head for all roles (ablation)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def config_from_args(args) -> TrainConfig:
    """A validated :class:`TrainConfig` from parsed flags (without resume merging)."""
    d = TrainConfig()
    return TrainConfig(
        exp=args.exp, players=args.players or 4, minutes=args.minutes, decisions=args.decisions,
        actors=args.actors, device=args.device, seed=args.seed, logdir=args.logdir, resume=args.resume,
        eval_every=args.eval_every, eval_deals=args.eval_deals,
        eval_opponents=tuple(s for s in args.eval_opponents.split(",") if s),
        checkpoint_every=args.checkpoint_every, lr=args.lr if args.lr is not None else d.lr, batch_size=args.batch_size, reuse=args.reuse,
        epsilon=args.epsilon, pool_prob=args.pool_prob, games_per_actor=d.games_per_actor if args.games_per_actor is None else args.games_per_actor,
        selfplay_engine=args.selfplay_engine or d.selfplay_engine, shared_head=args.shared_head, progress=not args.no_progress)


def run(args) -> int:
    """Entry point of ``twilight train``; prints the run directory and the last figures."""
    cfg = config_from_args(args)
    if args.resume and args.players is not None:
        saved = load_checkpoint(args.resume)
        if saved["num_players"] != args.players:
            raise ValueError(f"--players {args.players} but the run {args.resume!r} trains "
                             f"{saved['num_players']} players")
    summary = train(cfg, override={name for name in ("selfplay_engine", "games_per_actor", "lr")
                                   if getattr(args, name) is not None})
    print(json.dumps(summary, indent=1))
    return 0


# ---------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------

def git_hash() -> str:
    """Current git commit of the source tree, with ``-dirty`` if it has changes; ``unknown`` outside git."""
    root = Path(__file__).resolve().parent.parent
    try:
        h = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                           timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "training", "agents"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return (h or "unknown") + ("-dirty" if dirty and h else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def check_device(device: str) -> torch.device:
    """The torch device for ``--device``.

    Raises:
        ValueError: if ``cuda`` is asked and no CUDA device is usable, or the name is unknown.
    """
    if device == "cpu":
        return torch.device("cpu")
    if device == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"--device cuda asked, but torch {torch.__version__} sees no usable CUDA device "
                             f"(torch.cuda.is_available() is False); use --device cpu")
        return torch.device("cuda")
    raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")


class ReplayBuffer:
    """Ring buffer of the most recent training samples (arrays on the learner device)."""

    def __init__(self, capacity: int, device):
        self.capacity = capacity
        self.rows = torch.zeros((capacity, NUM_MASKS), dtype=torch.int64, device=device)
        self.roles = torch.zeros(capacity, dtype=torch.int64, device=device)
        self.actions = torch.zeros(capacity, dtype=torch.int64, device=device)
        self.targets = torch.zeros(capacity, dtype=torch.float32, device=device)
        self.size = 0
        self.pos = 0

    def add(self, batch) -> None:
        n = len(batch)
        if n == 0:
            return
        if n > self.capacity:
            batch = type(batch)(batch.rows[-self.capacity:], batch.roles[-self.capacity:],
                                batch.actions[-self.capacity:], batch.targets[-self.capacity:])
            n = self.capacity
        idx = (self.pos + torch.arange(n)) % self.capacity
        idx = idx.to(self.rows.device)
        dev = self.rows.device
        self.rows[idx] = torch.from_numpy(batch.rows).to(dev)
        self.roles[idx] = torch.from_numpy(batch.roles).to(dev)
        self.actions[idx] = torch.from_numpy(batch.actions).to(dev)
        self.targets[idx] = torch.from_numpy(batch.targets).to(dev)
        self.pos = (self.pos + n) % self.capacity
        self.size = min(self.capacity, self.size + n)

    def state_dict(self) -> dict:
        """The filled part as CPU tensors (rows as int32: entries are < 2**28) for checkpoints."""
        n = self.size
        return {"rows": self.rows[:n].to(torch.int32).cpu(), "roles": self.roles[:n].to(torch.int8).cpu(),
                "actions": self.actions[:n].to(torch.int8).cpu(), "targets": self.targets[:n].cpu(),
                "pos": self.pos}

    def load_state_dict(self, d: dict) -> None:
        """Restore :meth:`state_dict` (keeps the most recent ``capacity`` samples if it shrank)."""
        n = min(int(d["targets"].shape[0]), self.capacity)
        dev = self.rows.device
        self.rows[:n] = d["rows"][:n].to(dev, torch.int64)
        self.roles[:n] = d["roles"][:n].to(dev, torch.int64)
        self.actions[:n] = d["actions"][:n].to(dev, torch.int64)
        self.targets[:n] = d["targets"][:n].to(dev)
        self.size = n
        self.pos = int(d["pos"]) % self.capacity if n == self.capacity else n % self.capacity


def available_opponents(specs) -> tuple[list[str], list[str]]:
    """Split evaluation opponent specs into (buildable, missing) using :func:`agents.base.make_agent`."""
    from agents.base import make_agent
    ok, missing = [], []
    for spec in specs:
        try:
            make_agent(spec)
            ok.append(spec)
        except (ImportError, ValueError):
            missing.append(spec)
    return ok, missing


def _rng_state(rng: np.random.Generator) -> dict:
    return rng.bit_generator.state


def _set_rng_state(rng: np.random.Generator, state: dict) -> None:
    rng.bit_generator.state = state


# ---------------------------------------------------------------------------------
# actor processes
# ---------------------------------------------------------------------------------

def make_selfplay(cfg: TrainConfig, model, rng: np.random.Generator):
    """The self-play generator ``cfg.selfplay_engine`` names, on CPU (actors always run there)."""
    cls = VecSelfPlay if cfg.selfplay_engine == "vector" else SelfPlay
    return cls(cfg.players, model, rng, num_games=cfg.games_per_actor, epsilon=cfg.epsilon,
               pool_prob=cfg.pool_prob, pool_size=cfg.pool_size, snapshot_every=cfg.snapshot_every)


def _actor_main(actor_id: int, cfg_dict: dict, net_dict: dict, shared_model, lock, out_queue, stop,
                seed_seq: list) -> None:
    """Actor process: play self-play chunks with a local copy of the shared weights."""
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


# ---------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------

def train(cfg: TrainConfig, override: set | None = None) -> dict:
    """Run (or resume) a training run; return a summary dict (run_dir, decisions, speeds, last eval).

    When resuming, the run's saved settings are kept except the budget and machinery
    (minutes, decisions, actors, device, evaluation and checkpoint intervals) and the
    fields named in ``override`` (``selfplay_engine``, ``games_per_actor``, ``lr``; by
    default those that differ from the ``TrainConfig`` defaults). A new ``lr`` replaces the
    rate in the restored optimizer state (a learning-rate drop for the rest of a run).

    Raises:
        ValueError: on a bad config, ``cuda`` without a GPU, or an unreadable resume checkpoint.
    """
    t_start = time.perf_counter()
    ckpt = None
    if cfg.resume:
        ckpt = load_checkpoint(cfg.resume)
        saved = TrainConfig.from_dict(ckpt["config"])
        # keep the run's own settings; take only budget and machinery from the command line
        for name in ("minutes", "decisions", "actors", "device", "progress", "resume", "eval_deals",
                     "eval_every", "checkpoint_every"):
            setattr(saved, name, getattr(cfg, name))
        if override is None:
            override = {n for n in ("selfplay_engine", "games_per_actor", "lr")
                        if getattr(cfg, n) != getattr(TrainConfig, n)}
        for name in override:
            setattr(saved, name, getattr(cfg, name))
        cfg = saved
        run_dir = Path(cfg.resume)
        if run_dir.is_file():
            run_dir = run_dir.parent
    cfg.validate()
    device = check_device(cfg.device)
    torch.set_num_threads(cfg.threads)
    if ckpt is None:
        run_dir = Path(cfg.logdir) / f"{cfg.exp}__{cfg.seed}__{int(time.time())}"
        run_dir.mkdir(parents=True, exist_ok=False)

    torch.manual_seed(cfg.seed)
    net_cfg = NetConfig(num_roles=1 if cfg.shared_head else num_roles(cfg.players), trunk=tuple(cfg.trunk),
                        head=tuple(cfg.head))
    model = QNetwork(net_cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    learner_rng = np.random.default_rng([cfg.seed, 1_000])
    selfplay_rng = np.random.default_rng([cfg.seed, 2_000])
    counters = {"decisions": 0, "updates": 0, "episodes": 0, "recorded": 0, "resumes": 0}
    if ckpt is not None:
        model.load_state_dict(model_from_checkpoint(ckpt, str(cfg.resume)).state_dict())
        if "optimizer" in ckpt:
            optimizer.load_state_dict(ckpt["optimizer"])
            for group in optimizer.param_groups:
                group["lr"] = cfg.lr
        for k in counters:
            counters[k] = int(ckpt.get(k, 0))
        counters["resumes"] += 1
        rng = ckpt.get("rng", {})
        if "learner" in rng:
            _set_rng_state(learner_rng, rng["learner"])
        if rng.get("selfplay") is not None:
            _set_rng_state(selfplay_rng, rng["selfplay"])
        if "torch" in rng:
            torch.set_rng_state(rng["torch"])

    from torch.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(str(run_dir))
    ghash = git_hash()
    if ckpt is None:
        text = "config:\n\n```\n" + json.dumps(cfg.to_dict(), indent=1) + f"\n```\n\ngit: {ghash}"
        writer.add_text("config", text, 0)
    else:
        writer.add_text("resume", f"resumed at {counters['decisions']} decisions; git: {ghash}; "
                        f"budget minutes={cfg.minutes} decisions={cfg.decisions}", counters["decisions"])

    opponents, missing = available_opponents(cfg.eval_opponents) if cfg.eval_deals > 0 else ([], [])
    if missing:
        print(f"evaluation: skipping unavailable opponents {missing}")
    deals = eval_deals(cfg.players, cfg.eval_deals, seed=cfg.seed + 12345) if cfg.eval_deals else []
    buffer = ReplayBuffer(cfg.buffer_size, device)
    if ckpt is not None and "buffer" in ckpt:
        buffer.load_state_dict(ckpt["buffer"])
    last_eval: dict = {}

    def evaluate():
        nonlocal opponents
        if cfg.eval_deals > 0:  # re-check: an agent module added during the run is picked up
            opponents, _ = available_opponents(cfg.eval_opponents)
        model.eval()
        cpu_model = model if device.type == "cpu" else _cpu_copy(model, net_cfg)
        step = counters["decisions"]
        for spec in opponents:
            res = duplicate_eval(cpu_model, cfg.players, spec, deals, seed=cfg.seed + 999)
            name = spec.split(":")[0]
            writer.add_scalar(f"eval/points_vs_{name}", res.points, step)
            writer.add_scalar(f"eval/ci95_vs_{name}", res.ci95, step)
            writer.add_scalar(f"eval/win_rate_vs_{name}", res.win_rate, step)
            if cfg.players == 3:
                writer.add_scalar(f"eval/points_as_solo_vs_{name}", res.points_side[0], step)
                writer.add_scalar(f"eval/points_as_sun_vs_{name}", res.points_side[1], step)
            last_eval[name] = {"points": round(res.points, 2), "ci95": round(res.ci95, 2),
                               "win_rate": round(res.win_rate, 3), "deals": res.deals,
                               "points_side0": round(res.points_side[0], 2),
                               "points_side1": round(res.points_side[1], 2), "at_decisions": step}
        writer.flush()

    def checkpoint():
        sp_state = _rng_state(sp.rng) if sp is not None else None
        save_checkpoint({
            "format": FORMAT, "version": VERSION, "num_players": cfg.players, "net": net_cfg.to_dict(),
            "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            "optimizer": _to_cpu(optimizer.state_dict()),
            **counters, "config": cfg.to_dict(), "git": ghash,
            "rng": {"learner": _rng_state(learner_rng), "selfplay": sp_state, "torch": torch.get_rng_state()},
            "buffer": buffer.state_dict(), "update_credit": update_credit,
        }, run_dir / CHECKPOINT_NAME)

    # self-play machinery
    sp = None
    procs = []
    if cfg.actors == 0:
        actor_model = model if device.type == "cpu" else _cpu_copy(model, net_cfg)
        sp = make_selfplay(cfg, actor_model, selfplay_rng)
    else:
        import torch.multiprocessing as mp
        ctx = mp.get_context("spawn")
        shared = _cpu_copy(model, net_cfg)
        shared.share_memory()
        lock = ctx.Lock()
        out_queue = ctx.Queue(maxsize=2 * cfg.actors)
        stop = ctx.Event()
        for i in range(cfg.actors):
            p = ctx.Process(target=_actor_main, daemon=True,
                            args=(i, cfg.to_dict(), net_cfg.to_dict(), shared, lock, out_queue, stop,
                                  [cfg.seed, 3_000 + i, counters["resumes"]]))
            p.start()
            procs.append(p)

    from tqdm import tqdm
    budget_s = cfg.minutes * 60 if cfg.minutes is not None else math.inf
    target = cfg.decisions if cfg.decisions is not None else None
    bar = tqdm(total=target, initial=counters["decisions"], unit="dec",
               disable=not cfg.progress, dynamic_ncols=True, mininterval=1.0)
    next_eval = ((counters["decisions"] // cfg.eval_every) + 1) * cfg.eval_every if cfg.eval_every else math.inf
    last_ckpt = time.perf_counter()
    update_credit = float(ckpt.get("update_credit", 0.0)) if ckpt is not None else 0.0
    gen_decisions, gen_seconds = 0, 0.0
    t_loop = time.perf_counter()
    if ckpt is None and opponents and cfg.eval_every:
        evaluate()  # the starting point of the learning curve
    try:
        while True:
            if target is not None and counters["decisions"] >= target:
                break
            if time.perf_counter() - t_start >= budget_s:
                break
            # 1. get self-play data
            if sp is not None:
                model.eval()
                want = cfg.chunk if target is None else max(1, min(cfg.chunk, target - counters["decisions"]))
                batch, stats = sp.collect(want)
                chunks = [(0, batch, stats)]
            else:
                chunks = []
                try:
                    chunks.append(out_queue.get(timeout=1.0))
                    while True:
                        chunks.append(out_queue.get_nowait())
                except queue_mod.Empty:
                    pass
                if not chunks:
                    if not any(p.is_alive() for p in procs):
                        raise RuntimeError("all actor processes died")
                    continue
            ep_points = []
            for _, batch, stats in chunks:
                buffer.add(batch)
                counters["decisions"] += stats.decisions
                counters["recorded"] += stats.recorded
                counters["episodes"] += stats.episodes
                gen_decisions += stats.decisions
                gen_seconds += stats.seconds
                ep_points.extend(stats.side0_points)
                update_credit += stats.recorded * cfg.reuse / cfg.batch_size
            # 2. learn
            model.train()
            losses = []
            if buffer.size >= cfg.batch_size:
                while update_credit >= 1.0:
                    update_credit -= 1.0
                    idx = torch.from_numpy(learner_rng.integers(0, buffer.size, cfg.batch_size)).to(device)
                    q = model(buffer.rows[idx], buffer.roles[idx], buffer.actions[idx])
                    loss = torch.nn.functional.mse_loss(q, buffer.targets[idx])
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                    optimizer.step()
                    counters["updates"] += 1
                    losses.append(loss.item())
            model.eval()
            if sp is None:
                with lock:
                    shared.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
            elif device.type != "cpu":
                sp.model.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
            # 3. log
            step = counters["decisions"]
            wall = time.perf_counter() - t_loop
            dps = gen_decisions / wall if wall > 0 else 0.0
            actor_dps = gen_decisions / gen_seconds if gen_seconds > 0 else 0.0
            if losses:
                writer.add_scalar("losses/mse", float(np.mean(losses)), step)
            writer.add_scalar("charts/decisions_per_s", dps, step)
            writer.add_scalar("charts/actor_decisions_per_s", actor_dps, step)
            if ep_points:
                writer.add_scalar("charts/episode_return", float(np.mean(ep_points)) / 360.0, step)
            writer.add_scalar("charts/episodes", counters["episodes"], step)
            writer.add_scalar("charts/updates", counters["updates"], step)
            bar.set_postfix(dec=f"{step:,}", dps=f"{dps:.0f}", loss=f"{np.mean(losses):.4f}" if losses else "-",
                            refresh=False)
            bar.update(sum(c[2].decisions for c in chunks))  # no total with --minutes only: a counter
            # 4. evaluate, checkpoint
            if step >= next_eval:
                evaluate()
                next_eval = (step // cfg.eval_every + 1) * cfg.eval_every
            if time.perf_counter() - last_ckpt >= cfg.checkpoint_every * 60:
                checkpoint()
                last_ckpt = time.perf_counter()
    finally:
        if procs:
            stop.set()
            deadline = time.time() + 20
            while any(p.is_alive() for p in procs) and time.time() < deadline:
                try:
                    out_queue.get(timeout=0.2)
                except queue_mod.Empty:
                    pass
            for p in procs:
                p.join(timeout=1)
                if p.is_alive():
                    p.terminate()
        bar.close()
    if cfg.eval_deals > 0:
        opponents, missing = available_opponents(cfg.eval_opponents)
    if opponents and (not last_eval or
                      max(v["at_decisions"] for v in last_eval.values()) < counters["decisions"]):
        evaluate()
    checkpoint()
    writer.flush()
    writer.close()
    wall = time.perf_counter() - t_loop
    summary = {"run_dir": str(run_dir), "players": cfg.players, "decisions": counters["decisions"],
               "updates": counters["updates"], "episodes": counters["episodes"],
               "selfplay_decisions_per_s": round(gen_decisions / wall, 1) if wall > 0 else None,
               "actor_decisions_per_s": round(gen_decisions / gen_seconds, 1) if gen_seconds > 0 else None,
               "wall_seconds": round(time.perf_counter() - t_start, 1), "eval": last_eval,
               "skipped_opponents": missing}
    who = "per actor process" if cfg.actors else "in the learner process"
    print(f"self-play: {summary['selfplay_decisions_per_s']} decisions/s overall "
          f"({summary['actor_decisions_per_s']} decisions/s {who} while generating)")
    return summary


def _cpu_copy(model: QNetwork, net_cfg: NetConfig) -> QNetwork:
    m = QNetwork(net_cfg)
    m.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
    return m.eval()


def _to_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


__all__ = ["add_arguments", "run", "train", "TrainConfig"]
