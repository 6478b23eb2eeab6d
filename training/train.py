"""``twilight train``: Deep Monte-Carlo self-play training (DouZero, Zha et al. ICML 2021).

Loop: actors play self-play deals with the current network (epsilon-greedy, an opponent
pool of past snapshots mixed in) and send recorded decisions with their Monte Carlo
returns; the learner keeps a replay buffer of the most recent samples and regresses
Q(infoset, action) on the returns (MSE, Adam). With ``--actors 0`` self-play runs in the
learner process (deterministic on CPU for a seed); with ``--actors N`` it runs in N
processes (``torch.multiprocessing``, spawn) that refresh their weights from a
shared-memory copy after every chunk.

Run directory ``{logdir}/{exp}__{seed}__{unixtime}`` holds TensorBoard event files and
``checkpoint.pt`` (written atomically every ``checkpoint_every`` minutes, at the end,
and on Ctrl-C or SIGTERM; see :func:`twilight_env.agents.nn.checkpoint.save_checkpoint`). An
interrupted run prints one line with the ``twilight train --resume RUN_DIR ...`` command
that continues it; a resumed run appends to the same TensorBoard folder and drops events
logged after its checkpoint (``purge_step``), so no step is logged twice. TensorBoard tags, x-axis = self-play decisions seen by the learner:

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

from twilight_env.util.extras import require

require("torch", "train", "twilight_env.training.train", as_main=__name__ == "__main__")

import json
import math
import os
import queue as queue_mod
import shlex
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from twilight_env.util.report import git_hash
from twilight_env.util.argtypes import non_negative_int, positive_float, positive_int, probability

from twilight_env.agents.nn.checkpoint import (CHECKPOINT_NAME, FORMAT, VERSION, load_checkpoint, model_from_checkpoint,
                                  save_checkpoint)
from twilight_env.training.checkpoint import load_resume_checkpoint
from twilight_env.agents.nn.features import NUM_MASKS, num_roles
from twilight_env.agents.nn.network import NetConfig, QNetwork

from twilight_env.training.config import TrainConfig
from twilight_env.training.selfplay import SelfPlay, duplicate_eval, eval_deals
from twilight_env.training.vec_selfplay import VecSelfPlay


# ---------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------

def add_arguments(parser) -> None:
    """Flags of ``twilight train`` (see :class:`~twilight_env.training.config.TrainConfig` for units)."""
    d = TrainConfig()
    parser.add_argument("--players", type=int, choices=(3, 4), default=None,
                        help="variant: 4 or 3 players (default 4; a resumed run keeps its own)")
    parser.add_argument("--minutes", type=positive_float, default=None,
                        help="wall-clock budget of this run's training (minutes), counted from the first self-play "
                             "chunk's start, after start-up and the first evaluation")
    parser.add_argument("--decisions", type=positive_int, default=None,
                        help="budget: total self-play decisions seen, resumed ones included")
    parser.add_argument("--actors", type=non_negative_int, default=d.actors, help="actor processes (0 = in-process)")
    parser.add_argument("--device", default=d.device, help="learner device: cpu or cuda")
    parser.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                        help="run the --actors self-play actors as Ray actors ('auto' for a bare --ray: join this "
                             "machine's cluster or start a local one; 'local'; HOST:PORT), the learner here; "
                             "needs the 'dist' extra; same checkpoints, resumable with or without --ray")
    parser.add_argument("--seed", type=non_negative_int, default=d.seed, help="random seed")
    parser.add_argument("--logdir", default=d.logdir, help="parent folder of run directories")
    parser.add_argument("--exp", default=d.exp, help="experiment name (run dir {exp}__{seed}__{unixtime})")
    parser.add_argument("--init", default=None, metavar="CKPT",
                        help="start a new run from these weights (a checkpoint, or 'default': the shipped "
                             "network of --players), with a fresh optimizer; the run takes their network shape")
    parser.add_argument("--resume", default=None, metavar="RUN_DIR",
                        help="continue a run from its last checkpoint (same step counts and optimizer state)")
    parser.add_argument("--eval-every", type=non_negative_int, default=d.eval_every,
                        help="decisions between duplicate-deal evaluations (0 = only at the end)")
    parser.add_argument("--eval-deals", type=non_negative_int, default=d.eval_deals,
                        help="evaluation deals per opponent, each played twice with sides swapped (0 = no eval)")
    parser.add_argument("--eval-opponents", default=",".join(d.eval_opponents),
                        help="comma-separated opponent agent specs for evaluation")
    parser.add_argument("--checkpoint-every", type=positive_float, default=d.checkpoint_every,
                        help="minutes between checkpoints")
    parser.add_argument("--lr", type=positive_float, default=None,
                        help=f"Adam learning rate (default {d.lr}; on --resume, given = continue with this rate)")
    parser.add_argument("--batch-size", type=positive_int, default=d.batch_size, help="samples per update")
    parser.add_argument("--reuse", type=positive_float, default=d.reuse,
                        help="average number of updates each recorded decision takes part in")
    parser.add_argument("--epsilon", type=probability, default=d.epsilon, help="exploration probability")
    parser.add_argument("--pool-prob", type=probability, default=d.pool_prob,
                        help="probability a self-play deal is played against a past snapshot")
    parser.add_argument("--games-per-actor", type=positive_int, default=None,
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
        actors=args.actors, device=args.device, ray=args.ray, seed=args.seed, logdir=args.logdir, resume=args.resume,
        init=args.init,
        eval_every=args.eval_every, eval_deals=args.eval_deals,
        eval_opponents=tuple(s for s in args.eval_opponents.split(",") if s),
        checkpoint_every=args.checkpoint_every, lr=args.lr if args.lr is not None else d.lr, batch_size=args.batch_size, reuse=args.reuse,
        epsilon=args.epsilon, pool_prob=args.pool_prob, games_per_actor=d.games_per_actor if args.games_per_actor is None else args.games_per_actor,
        selfplay_engine=args.selfplay_engine or d.selfplay_engine, shared_head=args.shared_head, progress=not args.no_progress)


def run(args) -> int:
    """Entry point of ``twilight train``: train, then print a table of the run's figures and
    the ``--resume`` command that trains on (twice the decisions, or as many minutes again).

    Returns:
        0 when the budget is spent; 130 after Ctrl-C, 143 after SIGTERM (a checkpoint is
        written first and one line says how to continue).
    """
    from twilight_env.agents.base import parse_spec

    cfg = config_from_args(args)
    for spec in cfg.eval_opponents:
        try:
            parse_spec(spec)  # an unknown agent is an error; one that cannot be built here is skipped
        except ValueError as e:
            raise ValueError(f"--eval-opponents: {e}") from None
    if args.resume and args.init:
        raise ValueError("--init starts a new run from given weights and --resume continues a run: give one of them")
    if args.resume and args.resume != "default" and not os.path.exists(args.resume):
        raise ValueError(f"--resume {args.resume!r}: no such run directory or checkpoint file")
    if args.resume and args.players is not None:
        saved = load_checkpoint(args.resume)
        if saved["num_players"] != args.players:
            raise ValueError(f"--players {args.players} but the run {args.resume!r} trains "
                             f"{saved['num_players']} players")
    try:
        summary = train(cfg, override={name for name in ("selfplay_engine", "games_per_actor", "lr")
                                       if getattr(args, name) is not None})
    except TrainingInterrupted as e:
        print(f"\n{e}", file=sys.stderr)
        return 128 + e.signum
    print(summary_table(summary))
    # the same machinery for another sitting: twice the decisions, or as many minutes again
    more = replace(cfg, decisions=2 * summary["decisions"]) if cfg.decisions is not None else cfg
    print(f"\nto train on: {resume_command(summary['run_dir'], more)}")
    return 0


def summary_table(summary: dict) -> str:
    """The figures of :func:`train`'s summary as plain text tables (run, then evaluation).

    Args:
        summary: the dict :func:`train` returns.

    Returns:
        Lines of text: the run's counters and speeds, then one row per evaluation opponent
        (deal points per deal of the network side minus the opponent's, its 95% interval
        half-width, win rate, deals, and the decisions count it was measured at).
    """
    from twilight_env.util.report import text_table

    def num(v, fmt="{:,}"):
        return "-" if v is None else fmt.format(v)

    who = "per actor process" if summary.get("actors") else "in the learner process"
    rows = [("run directory", summary["run_dir"]), ("players", summary["players"]),
            ("decisions", num(summary["decisions"])), ("gradient updates", num(summary["updates"])),
            ("deals", num(summary["episodes"]))]
    if summary["decisions"]:
        rows += [("self-play", f"{num(summary['selfplay_decisions_per_s'], '{:,.1f}')} decisions/s overall"),
                 ("", f"{num(summary['actor_decisions_per_s'], '{:,.1f}')} decisions/s {who} while generating")]
    else:  # say why, rather than a speed of 0.0 decisions/s
        rows.append(("self-play", "none: no self-play arrived within the budget (the actors were still "
                                  "starting); give more --minutes"))
    rows.append(("wall time", f"{summary['wall_seconds']:.1f} s"))
    width = max(len(k) for k, _ in rows)
    out = [f"{k.ljust(width)}  {v}".rstrip() for k, v in rows]
    ev = summary.get("eval") or {}
    if ev:
        three = summary["players"] == 3
        header = ["opponent", "points", "±95%", "win rate", "deals", "at decisions"]
        if three:
            header[4:4] = ["as solo", "as Sun"]
        rows = []
        for name, r in ev.items():
            row = [name, f"{r['points']:+.2f}", f"{r['ci95']:.2f}", f"{r['win_rate']:.3f}", r["deals"],
                   f"{r['at_decisions']:,}"]
            if three:
                row[4:4] = [f"{r['points_side0']:+.2f}", f"{r['points_side1']:+.2f}"]
            rows.append(row)
        out += ["", "evaluation (duplicate deals; points = network side minus opponent, per deal)",
                text_table(header, rows)]
    return "\n".join(out)


def resume_command(run_dir: str | os.PathLike, cfg: TrainConfig, elapsed_s: float = 0.0) -> str:
    """The ``twilight train --resume`` command that continues ``run_dir`` with the same budget
    and machinery.

    Args:
        run_dir: the run directory.
        cfg: the run's effective config (after resume merging).
        elapsed_s: seconds this invocation has used of ``cfg.minutes`` (seconds).

    Returns:
        A shell command line: ``--decisions`` (a total, so repeated as is), the minutes left
        of ``--minutes`` (at least 0.1), and each machinery flag (actors, device, evaluation,
        checkpoint interval, progress bar) that differs from its default.
    """
    d = TrainConfig()
    cmd = ["twilight", "train", "--resume", str(run_dir)]
    if cfg.decisions is not None:
        cmd += ["--decisions", str(cfg.decisions)]
    if cfg.minutes is not None:
        left = max(0.1, math.ceil((cfg.minutes - elapsed_s / 60) * 10) / 10)
        cmd += ["--minutes", f"{left:g}"]
    for name, flag in (("actors", "--actors"), ("device", "--device"), ("ray", "--ray"), ("eval_every", "--eval-every"),
                       ("eval_deals", "--eval-deals"), ("checkpoint_every", "--checkpoint-every")):
        if getattr(cfg, name) != getattr(d, name):
            cmd += [flag, f"{getattr(cfg, name):g}" if isinstance(getattr(cfg, name), float) else str(getattr(cfg, name))]
    if not cfg.progress:
        cmd.append("--no-progress")
    return " ".join(shlex.quote(c) for c in cmd)


# ---------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------

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
    raise ValueError(f"--device must be 'cpu' or 'cuda', got {device!r}")


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


def check_opponents(specs, resumed: bool) -> list[str]:
    """The evaluation opponents that can be built here.

    Args:
        specs: agent specs (:func:`twilight_env.agents.base.make_agent`).
        resumed: for a resumed run a spec that cannot be built any more (a checkpoint file
            since removed, a missing optional dependency) is skipped with a printed note, so
            the run can still continue; for a new run it is an error.

    Raises:
        ValueError: a new run names an unknown agent, a bad option or an agent that cannot
            be built here (the message lists the valid agents).
    """
    from twilight_env.agents.base import check_specs
    if not resumed:
        return check_specs(specs)
    ok, missing = [], []
    for spec in specs:
        try:
            ok += check_specs([spec])
        except ValueError:
            missing.append(spec)
    if missing:
        print(f"evaluation: skipping opponents that cannot be built here: {missing}")
    return ok


def _rng_state(rng: np.random.Generator) -> dict:
    return rng.bit_generator.state


def _set_rng_state(rng: np.random.Generator, state: dict) -> None:
    rng.bit_generator.state = state


# ---------------------------------------------------------------------------------
# interrupts
# ---------------------------------------------------------------------------------

class TrainingInterrupted(KeyboardInterrupt):
    """Raised by :func:`train` after Ctrl-C (SIGINT) or SIGTERM, once the checkpoint is written.

    Attributes:
        signum: the signal number (``signal.SIGINT`` also for a plain ``KeyboardInterrupt``).
        run_dir: the run directory, or None if the run had not started.
        decisions: decisions seen by the learner when it stopped.
        command: the command line that continues the run, or None.
    """

    def __init__(self, signum: int, run_dir=None, decisions: int | None = None, command: str | None = None):
        self.signum, self.decisions, self.command = int(signum), decisions, command
        self.run_dir = None if run_dir is None else str(run_dir)
        what = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        if command is None:
            msg = f"interrupted ({what}) before training started; nothing saved"
        else:
            msg = (f"interrupted ({what}) at {decisions:,} decisions; checkpoint saved in "
                   f"{Path(run_dir) / CHECKPOINT_NAME}; continue with: {command}")
        super().__init__(msg)


class _Signals:
    """While entered (main thread only): SIGINT and SIGTERM raise ``KeyboardInterrupt``
    carrying ``signum``; inside :meth:`held` they are held until the block ends (so a
    learner step or a log entry is never half done); :meth:`ignore` drops them (the last
    checkpoint write)."""

    def __init__(self):
        self.signum: int | None = None
        self._held = 0
        self._pending = False
        self._ignoring = False
        self._old: dict = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        return False

    def _handle(self, signum, frame):
        if self._ignoring:
            return
        self.signum = signum
        if self._held:
            self._pending = True
            return
        raise self.interrupt(signum)

    @staticmethod
    def interrupt(signum: int) -> KeyboardInterrupt:
        e = KeyboardInterrupt()
        e.signum = signum
        return e

    @contextmanager
    def held(self):
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._pending:
                self._pending = False
                raise self.interrupt(self.signum)

    @contextmanager
    def ignore(self):
        self._ignoring = True
        try:
            yield
        finally:
            self._ignoring = False


# ---------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------

@dataclass
class Learner:
    """The learner's state: everything a checkpoint holds about training (module docstring
    of :mod:`twilight_env.agents.nn.checkpoint`)."""

    cfg: TrainConfig
    net_cfg: NetConfig
    device: torch.device
    model: QNetwork
    optimizer: torch.optim.Optimizer
    buffer: ReplayBuffer
    rng: np.random.Generator
    """Draws the replay-buffer indices of each update."""
    selfplay_rng: np.random.Generator
    """Deals, exploration and the pool of in-process self-play (``actors=0``)."""
    counters: dict
    """``decisions``, ``updates``, ``episodes``, ``recorded``, ``resumes``."""
    update_credit: float = 0.0
    """Gradient updates owed by the samples received so far (fractional)."""
    last_eval: dict = field(default_factory=dict)
    """Per opponent name, the last evaluation figures logged (``at_decisions`` included)."""


def resolve_config(cfg: TrainConfig, override: set | None) -> tuple[TrainConfig, dict | None, Path]:
    """The effective config, the resume checkpoint (or None) and the run directory (created
    for a new run). See :func:`train` for what a resume keeps.

    Raises:
        ValueError: on a bad config or an unreadable resume checkpoint.
    """
    if not cfg.resume:
        if cfg.init:
            _take_init_shape(cfg)
        cfg.validate()
        run_dir = Path(cfg.logdir) / f"{cfg.exp}__{cfg.seed}__{int(time.time())}"
        above = Path(cfg.logdir).resolve()
        while not above.exists() and above.parent != above:
            above = above.parent
        if not above.is_dir():
            raise ValueError(f"--logdir {cfg.logdir!r} cannot hold run directories: {str(above)!r} is a file, "
                             "not a folder")
        if run_dir.exists():  # never write into another run's directory
            raise ValueError(f"the run directory {str(run_dir)!r} exists already (a run with the same --exp and "
                             "--seed started in the same second); give another --exp")
        return cfg, None, run_dir
    ckpt = load_resume_checkpoint(cfg.resume)  # digest and every entry checked (training.checkpoint)
    saved = TrainConfig.from_dict(ckpt["config"])
    # keep the run's own settings; take only budget and machinery from the command line
    for name in ("minutes", "decisions", "actors", "device", "ray", "progress", "resume", "eval_deals",
                 "eval_every", "checkpoint_every"):
        setattr(saved, name, getattr(cfg, name))
    if override is None:
        override = {n for n in ("selfplay_engine", "games_per_actor", "lr")
                    if getattr(cfg, n) != getattr(TrainConfig, n)}
    for name in override:
        setattr(saved, name, getattr(cfg, name))
    saved.resume = os.fspath(cfg.resume)  # a plain string in the checkpoint (weights_only loads)
    run_dir = Path(cfg.resume)
    if run_dir.is_file():
        run_dir = run_dir.parent
    return saved.validate(), ckpt, run_dir


def _take_init_shape(cfg: TrainConfig) -> None:
    """Resolve ``cfg.init`` (``default``: the shipped weights) to a path and give ``cfg`` the
    network shape of those weights.

    Raises:
        ValueError: naming ``--init``: a missing or corrupt file, or weights for the other
            number of players.
    """
    from twilight_env.agents.neural import default_weights

    path = os.fspath(default_weights(cfg.players) if cfg.init == "default" else cfg.init)
    try:
        net = load_checkpoint(path, cfg.players)["net"]
    except ValueError as e:
        raise ValueError(f"--init: {e}") from None
    cfg.init = path
    cfg.trunk, cfg.head = tuple(int(x) for x in net["trunk"]), tuple(int(x) for x in net["head"])
    cfg.shared_head = cfg.players == 3 and int(net["num_roles"]) == 1


def build_learner(cfg: TrainConfig, ckpt: dict | None, device: torch.device) -> Learner:
    """A fresh learner seeded by ``cfg.seed``, or the one saved in ``ckpt`` (weights,
    optimizer with ``cfg.lr``, counters, RNG states, replay buffer, last evaluation)."""
    torch.manual_seed(cfg.seed)
    net_cfg = NetConfig(num_roles=1 if cfg.shared_head else num_roles(cfg.players), trunk=tuple(cfg.trunk),
                        head=tuple(cfg.head))
    model = QNetwork(net_cfg).to(device)
    learner = Learner(cfg=cfg, net_cfg=net_cfg, device=device, model=model,
                      optimizer=torch.optim.Adam(model.parameters(), lr=cfg.lr),
                      buffer=ReplayBuffer(cfg.buffer_size, device),
                      rng=np.random.default_rng([cfg.seed, 1_000]),
                      selfplay_rng=np.random.default_rng([cfg.seed, 2_000]),
                      counters={"decisions": 0, "updates": 0, "episodes": 0, "recorded": 0, "resumes": 0})
    if ckpt is None:
        if cfg.init:  # a new run from given weights, with a fresh optimizer and counters
            model.load_state_dict(model_from_checkpoint(load_checkpoint(cfg.init, cfg.players), cfg.init).state_dict())
        return learner
    model.load_state_dict(model_from_checkpoint(ckpt, str(cfg.resume)).state_dict())
    if "optimizer" in ckpt:
        learner.optimizer.load_state_dict(ckpt["optimizer"])
        for group in learner.optimizer.param_groups:
            group["lr"] = cfg.lr
    for k in learner.counters:
        learner.counters[k] = int(ckpt.get(k, 0))
    learner.counters["resumes"] += 1
    rng = ckpt.get("rng", {})
    if "learner" in rng:
        _set_rng_state(learner.rng, rng["learner"])
    if rng.get("selfplay") is not None:
        _set_rng_state(learner.selfplay_rng, rng["selfplay"])
    if "torch" in rng:
        torch.set_rng_state(rng["torch"])
    if "buffer" in ckpt:
        learner.buffer.load_state_dict(ckpt["buffer"])
    learner.update_credit = float(ckpt.get("update_credit", 0.0))
    learner.last_eval = dict(ckpt.get("last_eval", {}))
    return learner


class TrainingDiverged(ValueError):
    """Raised when a loss or the weights stop being finite (NaN or inf, e.g. a learning rate
    far too high): training stops with this one-line error and non-finite weights are
    never saved."""


def check_finite_weights(model: torch.nn.Module, what: str) -> None:
    """Raise :class:`TrainingDiverged` if any weight of ``model`` is NaN or inf (called
    before every checkpoint, so none holds non-finite weights)."""
    bad = [name for name, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
    if bad:
        raise TrainingDiverged(f"training diverged: {what} holds NaN or inf weights ({', '.join(bad[:3])}); the run "
                               "stops without saving them (the last checkpoint, if any, is kept); resume or restart "
                               "it with a lower --lr")


def learner_step(learner: Learner, chunks: list) -> list[float]:
    """Take self-play chunks into the replay buffer and counters, then make the gradient
    updates they are owed (``reuse`` updates per ``batch_size`` recorded samples).

    Args:
        learner: updated in place.
        chunks: ``(actor_id, Batch, CollectStats)`` tuples.

    Returns:
        The MSE loss of each update made (possibly none).

    Raises:
        TrainingDiverged: a loss is NaN or inf (checked before its update is applied).
    """
    cfg, model, buffer, counters = learner.cfg, learner.model, learner.buffer, learner.counters
    for _, batch, stats in chunks:
        buffer.add(batch)
        counters["decisions"] += stats.decisions
        counters["recorded"] += stats.recorded
        counters["episodes"] += stats.episodes
        learner.update_credit += stats.recorded * cfg.reuse / cfg.batch_size
    model.train()
    losses = []
    if buffer.size >= cfg.batch_size:
        while learner.update_credit >= 1.0:
            learner.update_credit -= 1.0
            idx = torch.from_numpy(learner.rng.integers(0, buffer.size, cfg.batch_size)).to(learner.device)
            q = model(buffer.rows[idx], buffer.roles[idx], buffer.actions[idx])
            loss = torch.nn.functional.mse_loss(q, buffer.targets[idx])
            value = loss.item()
            if not math.isfinite(value):  # before the step: the weights stay those of the last finite loss
                raise TrainingDiverged(f"training diverged: the loss is {value} at update {counters['updates'] + 1:,} "
                                       f"(learning rate {cfg.lr:g}); the run stops and nothing more is saved (the "
                                       "last checkpoint, if any, is kept); resume or restart it with a lower --lr")
            learner.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            learner.optimizer.step()
            counters["updates"] += 1
            losses.append(value)
    model.eval()
    return losses


def evaluate(learner: Learner, opponents: list[str], deals: list, writer) -> None:
    """Duplicate-deal evaluation of the greedy network against each opponent, logged at the
    current decisions count (``eval/*`` tags) and kept in ``learner.last_eval``.

    All opponents are played first, then everything is logged at once, so an interrupt
    leaves either the whole evaluation logged or none of it.
    """
    cfg, model = learner.cfg, learner.model
    model.eval()
    cpu_model = model if learner.device.type == "cpu" else _cpu_copy(model, learner.net_cfg)
    step = learner.counters["decisions"]
    results = [(spec.split(":")[0], duplicate_eval(cpu_model, cfg.players, spec, deals, seed=cfg.seed + 999))
               for spec in opponents]
    for name, res in results:
        writer.add_scalar(f"eval/points_vs_{name}", res.points, step)
        writer.add_scalar(f"eval/ci95_vs_{name}", res.ci95, step)
        writer.add_scalar(f"eval/win_rate_vs_{name}", res.win_rate, step)
        if cfg.players == 3:
            writer.add_scalar(f"eval/points_as_solo_vs_{name}", res.points_side[0], step)
            writer.add_scalar(f"eval/points_as_sun_vs_{name}", res.points_side[1], step)
        learner.last_eval[name] = {"points": round(res.points, 2), "ci95": round(res.ci95, 2),
                                   "win_rate": round(res.win_rate, 3), "deals": res.deals,
                                   "points_side0": round(res.points_side[0], 2),
                                   "points_side1": round(res.points_side[1], 2), "at_decisions": step}
    writer.flush()


def last_eval_step(learner: Learner) -> int:
    """Decisions count of the last evaluation logged, -1 if none."""
    return max((v["at_decisions"] for v in learner.last_eval.values()), default=-1)


def save_train_checkpoint(learner: Learner, run_dir: Path, git: str, source=None) -> None:
    """Write ``run_dir/checkpoint.pt`` atomically (format: :mod:`twilight_env.agents.nn.checkpoint`).

    With ``actors=0`` on the batch engine, ``source`` (the in-process generator) adds its
    deals in progress and opponent pool (``selfplay_state``), so that a resumed run plays
    on exactly as an unstopped one (``tests/training/test_train.py``).

    Raises:
        TrainingDiverged: non-finite weights (nothing is written).
        OSError: the file cannot be written (one line naming it, e.g. a full disk)."""
    check_finite_weights(learner.model, "the network")
    cfg = learner.cfg
    sp_state = _rng_state(learner.selfplay_rng) if cfg.actors == 0 else None
    gen_state = source.state_dict() if isinstance(source, InProcessSelfPlay) else None
    save_checkpoint({
        "format": FORMAT, "version": VERSION, "num_players": cfg.players, "net": learner.net_cfg.to_dict(),
        "model": {k: v.detach().cpu() for k, v in learner.model.state_dict().items()},
        "optimizer": _to_cpu(learner.optimizer.state_dict()),
        **learner.counters, "config": cfg.to_dict(), "git": git,
        "rng": {"learner": _rng_state(learner.rng), "selfplay": sp_state, "torch": torch.get_rng_state()},
        "buffer": learner.buffer.state_dict(), "update_credit": learner.update_credit,
        "last_eval": learner.last_eval, "selfplay_state": gen_state,
    }, run_dir / CHECKPOINT_NAME)


def open_writer(run_dir: Path, cfg: TrainConfig, counters: dict, git: str, resumed: bool):
    """The run's TensorBoard writer, after printing where the run is.

    A new run logs its config and git hash as text at step 0. A resumed run logs a
    ``resume`` text entry, and its writer's ``purge_step`` (checkpoint decisions + 1) makes
    TensorBoard drop the events a killed run logged after its checkpoint, so no step is
    logged twice.
    """
    from torch.utils.tensorboard import SummaryWriter
    decisions = counters["decisions"]
    if not resumed:
        print(f"run directory: {run_dir}", flush=True)
        if cfg.init:
            print(f"initialised from {cfg.init} (its weights and network shape; a fresh optimizer)", flush=True)
        writer = SummaryWriter(str(run_dir))
        writer.add_text("config", "config:\n\n```\n" + json.dumps(cfg.to_dict(), indent=1) + f"\n```\n\ngit: {git}", 0)
        return writer
    print(f"resumed {run_dir} at {decisions:,} decisions ({counters['updates']:,} updates, "
          f"{counters['episodes']:,} deals)", flush=True)
    writer = SummaryWriter(str(run_dir), purge_step=decisions + 1)
    writer.add_text("resume", f"resumed at {decisions} decisions; git: {git}; "
                    f"budget minutes={cfg.minutes} decisions={cfg.decisions}", decisions)
    return writer


def log_step(writer, step: int, losses: list, dps: float, actor_dps: float, ep_points: list, counters: dict) -> None:
    """The per-iteration TensorBoard scalars (module table) at ``step`` decisions."""
    if losses:
        writer.add_scalar("losses/mse", float(np.mean(losses)), step)
    writer.add_scalar("charts/decisions_per_s", dps, step)
    writer.add_scalar("charts/actor_decisions_per_s", actor_dps, step)
    if ep_points:
        writer.add_scalar("charts/episode_return", float(np.mean(ep_points)) / 360.0, step)
    writer.add_scalar("charts/episodes", counters["episodes"], step)
    writer.add_scalar("charts/updates", counters["updates"], step)


# ---------------------------------------------------------------------------------
# self-play sources: in the learner process, or actor processes
# ---------------------------------------------------------------------------------

def make_selfplay(cfg: TrainConfig, model, rng: np.random.Generator):
    """The self-play generator ``cfg.selfplay_engine`` names, on CPU (actors always run there)."""
    cls = VecSelfPlay if cfg.selfplay_engine == "vector" else SelfPlay
    return cls(cfg.players, model, rng, num_games=cfg.games_per_actor, epsilon=cfg.epsilon,
               pool_prob=cfg.pool_prob, pool_size=cfg.pool_size, snapshot_every=cfg.snapshot_every)


class InProcessSelfPlay:
    """Self-play in the learner process (``actors=0``; deterministic on CPU for a seed)."""

    def __init__(self, learner: Learner):
        model = learner.model if learner.device.type == "cpu" else _cpu_copy(learner.model, learner.net_cfg)
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
                _set_rng_state(self.sp.rng, selfplay_rng_state)

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
        self.shared = _cpu_copy(learner.model, learner.net_cfg)
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


# ---------------------------------------------------------------------------------
# progress bar
# ---------------------------------------------------------------------------------

def progress_bar(cfg: TrainConfig, decisions: int, elapsed_s: float):
    """A tqdm bar with a total, so it shows an ETA.

    With ``--minutes`` the total is the time budget (seconds, ``unit="s"``; the decisions
    count is in the postfix); with only ``--decisions`` it is the decisions budget.
    """
    from tqdm import tqdm
    if cfg.minutes is not None:
        return tqdm(total=round(cfg.minutes * 60), initial=min(round(elapsed_s), round(cfg.minutes * 60)),
                    unit="s", disable=not cfg.progress, dynamic_ncols=True, mininterval=1.0,
                    bar_format="{l_bar}{bar}| {elapsed}<{remaining}{postfix}")
    return tqdm(total=cfg.decisions, initial=decisions, unit="dec", disable=not cfg.progress,
                dynamic_ncols=True, mininterval=1.0)


def advance_bar(bar, cfg: TrainConfig, new_decisions: int, elapsed_s: float) -> None:
    """Move ``bar`` (from :func:`progress_bar`) by the decisions received or the time spent."""
    if cfg.minutes is not None:
        bar.update(max(0, min(round(elapsed_s), bar.total) - bar.n))
    else:
        bar.update(new_decisions)


# ---------------------------------------------------------------------------------
# the training loop
# ---------------------------------------------------------------------------------

def train(cfg: TrainConfig, override: set | None = None) -> dict:
    """Run (or resume) a training run; return a summary dict (run_dir, decisions, speeds, last eval).

    When resuming, the run's saved settings are kept except the budget and machinery
    (minutes, decisions, actors, device, evaluation and checkpoint intervals) and the
    fields named in ``override`` (``selfplay_engine``, ``games_per_actor``, ``lr``; by
    default those that differ from the ``TrainConfig`` defaults). A new ``lr`` replaces the
    rate in the restored optimizer state (a learning-rate drop for the rest of a run).

    Ctrl-C or SIGTERM (received in the main thread) stops the run: the actors are stopped,
    the checkpoint is written, and :class:`TrainingInterrupted` is raised carrying the
    ``--resume`` command that continues the run.

    Raises:
        ValueError: on a bad config, ``cuda`` without a GPU, an unreadable resume checkpoint,
            or (new run) an evaluation opponent that cannot be built.
        TrainingInterrupted: after Ctrl-C or SIGTERM.
    """
    t_start = time.perf_counter()
    with _Signals() as signals:
        try:
            return _train(cfg, override, t_start, signals)
        except TrainingInterrupted:
            raise
        except KeyboardInterrupt as e:  # before the learner existed: nothing to save
            raise TrainingInterrupted(getattr(e, "signum", signal.SIGINT)) from None


def _train(cfg: TrainConfig, override: set | None, t_start: float, signals: _Signals) -> dict:
    cfg, ckpt, run_dir = resolve_config(cfg, override)
    device = check_device(cfg.device)
    torch.set_num_threads(cfg.threads)
    opponents = check_opponents(cfg.eval_opponents, ckpt is not None) if cfg.eval_deals > 0 else []
    deals = eval_deals(cfg.players, cfg.eval_deals, seed=cfg.seed + 12345) if cfg.eval_deals else []
    if ckpt is None:
        run_dir.mkdir(parents=True, exist_ok=False)
    for stale in run_dir.glob(CHECKPOINT_NAME + ".tmp*"):  # left by a process killed while saving
        stale.unlink(missing_ok=True)
    learner = build_learner(cfg, ckpt, device)
    counters = learner.counters
    ghash = git_hash() or "unknown"
    writer = source = bar = None
    t_train = None  # when the --minutes budget began (time.perf_counter)
    try:
        writer = open_writer(run_dir, cfg, counters, ghash, resumed=ckpt is not None)
        source = _selfplay_source(learner, cfg, ckpt)
        budget_s = cfg.minutes * 60 if cfg.minutes is not None else math.inf
        target = cfg.decisions
        next_eval = ((counters["decisions"] // cfg.eval_every) + 1) * cfg.eval_every if cfg.eval_every else math.inf
        if ckpt is None and opponents and cfg.eval_every:
            evaluate(learner, opponents, deals, writer)  # the starting point of the learning curve
        # --minutes budgets training: it counts from here, after start-up and the first
        # evaluation (a short budget would otherwise end before the first chunk)
        t_train = last_ckpt = time.perf_counter()
        bar = progress_bar(cfg, counters["decisions"], 0.0)
        rate = _Throughput()
        while (target is None or counters["decisions"] < target) and time.perf_counter() - t_train < budget_s:
            # 1. self-play data
            want = cfg.chunk if target is None else max(1, min(cfg.chunk, target - counters["decisions"]))
            # a chunk is played, learnt from and logged whole, or not at all: an interrupt
            # inside self-play would leave deals finished but not replaced in the saved state
            with signals.held():
                chunks = source.get(learner.model, want)
                if not chunks:
                    continue
                # 2. learn
                losses = learner_step(learner, chunks)
                source.publish(learner.model)
                # 3. log
                step = _log_chunks(writer, bar, cfg, counters, chunks, losses, rate, t_train)
            # 4. evaluate, checkpoint
            if step >= next_eval:
                evaluate(learner, opponents, deals, writer)
                next_eval = (step // cfg.eval_every + 1) * cfg.eval_every
            if time.perf_counter() - last_ckpt >= cfg.checkpoint_every * 60:
                save_train_checkpoint(learner, run_dir, ghash, source)
                last_ckpt = time.perf_counter()
        source.close()
        bar.close()
        if opponents and last_eval_step(learner) < counters["decisions"]:
            evaluate(learner, opponents, deals, writer)
        save_train_checkpoint(learner, run_dir, ghash, source)
        writer.close()
    except KeyboardInterrupt as e:
        with signals.ignore():  # a second Ctrl-C does not cut the last checkpoint short
            _close(source, bar)
            save_train_checkpoint(learner, run_dir, ghash, source)
            if writer is not None:
                writer.close()
        trained = 0.0 if t_train is None else time.perf_counter() - t_train
        raise TrainingInterrupted(getattr(e, "signum", signal.SIGINT), run_dir, counters["decisions"],
                                  resume_command(run_dir, cfg, trained)) from None
    except BaseException:
        _close(source, bar)
        raise
    wall = time.perf_counter() - rate.t_loop
    return {"run_dir": str(run_dir), "players": cfg.players, "actors": cfg.actors,
            "decisions": counters["decisions"], "updates": counters["updates"], "episodes": counters["episodes"],
            "selfplay_decisions_per_s": round(rate.decisions / wall, 1) if wall > 0 else None,
            "actor_decisions_per_s": round(rate.decisions / rate.seconds, 1) if rate.seconds > 0 else None,
            "wall_seconds": round(time.perf_counter() - t_start, 1), "eval": learner.last_eval}


def _selfplay_source(learner: Learner, cfg: TrainConfig, ckpt: dict | None):
    """The self-play data source: in this process (``actors`` 0, its state restored from
    the checkpoint), Ray actors (``ray``) or actor processes."""
    source = (InProcessSelfPlay(learner) if cfg.actors == 0 else
              RayActorPool(learner) if cfg.ray is not None else ActorPool(learner))
    if ckpt is not None and isinstance(source, InProcessSelfPlay) and ckpt.get("selfplay_state") is not None:
        source.load_state_dict(ckpt["selfplay_state"], ckpt.get("rng", {}).get("selfplay"))
    return source


class _Throughput:
    """Self-play decisions received since the training loop started (decisions) and the
    actors' own seconds spent making them (seconds)."""

    def __init__(self):
        self.decisions, self.seconds = 0, 0.0
        self.t_loop = time.perf_counter()


def _log_chunks(writer, bar, cfg: TrainConfig, counters: dict, chunks: list, losses: list, rate: _Throughput,
                t_train: float) -> int:
    """Count the chunks' decisions in ``rate``, write the step's scalars (:func:`log_step`)
    and move the progress bar (``t_train``: when the ``--minutes`` budget began, in
    ``time.perf_counter`` seconds); returns the step (decisions so far)."""
    new = sum(c[2].decisions for c in chunks)
    rate.decisions += new
    rate.seconds += sum(c[2].seconds for c in chunks)
    step = counters["decisions"]
    wall = time.perf_counter() - rate.t_loop
    dps = rate.decisions / wall if wall > 0 else 0.0
    actor_dps = rate.decisions / rate.seconds if rate.seconds > 0 else 0.0
    log_step(writer, step, losses, dps, actor_dps, [p for c in chunks for p in c[2].side0_points], counters)
    bar.set_postfix(dec=f"{step:,}", dps=f"{dps:.0f}", loss=f"{np.mean(losses):.4f}" if losses else "-",
                    refresh=False)
    advance_bar(bar, cfg, new, time.perf_counter() - t_train)
    return step


def _close(source, bar) -> None:
    if source is not None:
        source.close()
    if bar is not None:
        bar.close()


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


__all__ = ["add_arguments", "run", "train", "TrainConfig", "TrainingDiverged", "TrainingInterrupted", "resume_command",
           "summary_table"]
