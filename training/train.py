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

import math
import os
import shlex
import signal
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from twilight_env.util.report import git_hash
from twilight_env.util.argtypes import non_negative_int, positive_float, positive_int, probability

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, load_checkpoint
from twilight_env.training.config import TrainConfig
from twilight_env.training.selfplay import eval_deals
from twilight_env.training.runtime import Signals, TrainingDiverged, TrainingInterrupted, check_device
from twilight_env.training.dmc.learner import build_learner, last_eval_step, learner_step
from twilight_env.training.dmc.actors import selfplay_source
from twilight_env.training.dmc.runs import (advance_bar, check_opponents, evaluate, log_step, open_writer,
                                            progress_bar, resolve_config, save_train_checkpoint)

# The loop's parts live in twilight_env.training.dmc and twilight_env.training.runtime; these
# names stay importable from this module as well, where they were defined before.
from twilight_env.training.runtime import check_finite_weights  # noqa: F401
from twilight_env.training.dmc.learner import Learner, ReplayBuffer  # noqa: F401
from twilight_env.training.dmc.actors import ActorPool, InProcessSelfPlay, RayActorPool, make_selfplay  # noqa: F401


def add_arguments(parser) -> None:
    """Flags of ``twilight train`` (see :class:`~twilight_env.training.config.TrainConfig` for units)."""
    d = TrainConfig()
    parser.add_argument("--players", type=int, choices=(3, 4), default=None,
                        help="variant: 4 or 3 players (default 4; a resumed run keeps its own)")
    parser.add_argument("--minutes", type=positive_float, default=None,
                        help="wall-clock budget of this run's training (minutes), counted from the first self-play "
                             "chunk's start, after start-up and the first evaluation (default: none; give --minutes, "
                             "--decisions or both: the run stops at the first budget reached)")
    parser.add_argument("--decisions", type=positive_int, default=None,
                        help="budget: total self-play decisions seen, resumed ones included (default: none)")
    parser.add_argument("--actors", type=non_negative_int, default=d.actors, help="actor processes (0 = in-process; default %(default)s)")
    parser.add_argument("--device", default=d.device, help="learner device: cpu or cuda (default %(default)s)")
    parser.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                        help="run the --actors self-play actors as Ray actors ('auto' for a bare --ray: join this "
                             "machine's cluster or start a local one; 'local'; HOST:PORT), the learner here; "
                             "needs the 'dist' extra; same checkpoints, resumable with or without --ray")
    parser.add_argument("--seed", type=non_negative_int, default=d.seed, help="random seed (default %(default)s)")
    parser.add_argument("--logdir", default=d.logdir, help="parent folder of run directories (default %(default)s)")
    parser.add_argument("--exp", default=d.exp, help="experiment name (run dir {exp}__{seed}__{unixtime}; default %(default)s)")
    parser.add_argument("--init", default=None, metavar="CKPT",
                        help="start a new run from these weights (a checkpoint, or 'default': the shipped "
                             "network of --players), with a fresh optimizer; the run takes their network shape")
    parser.add_argument("--resume", default=None, metavar="RUN_DIR",
                        help="continue a run from its last checkpoint (same step counts and optimizer state)")
    parser.add_argument("--eval-every", type=non_negative_int, default=d.eval_every,
                        help="decisions between duplicate-deal evaluations (0 = only at the end; default %(default)s)")
    parser.add_argument("--eval-deals", type=non_negative_int, default=d.eval_deals,
                        help="evaluation deals per opponent, each played twice with sides swapped (0 = no eval; "
                             "default %(default)s)")
    parser.add_argument("--eval-opponents", default=",".join(d.eval_opponents),
                        help="comma-separated opponent agent specs for evaluation (default %(default)s)")
    parser.add_argument("--checkpoint-every", type=positive_float, default=d.checkpoint_every,
                        help="minutes between checkpoints (default %(default)s)")
    parser.add_argument("--lr", type=positive_float, default=None,
                        help=f"Adam learning rate (default {d.lr}; on --resume, given = continue with this rate)")
    parser.add_argument("--batch-size", type=positive_int, default=d.batch_size, help="samples per update (default %(default)s)")
    parser.add_argument("--reuse", type=positive_float, default=d.reuse,
                        help="average number of updates each recorded decision takes part in (default %(default)s)")
    parser.add_argument("--epsilon", type=probability, default=d.epsilon, help="exploration probability (default %(default)s)")
    parser.add_argument("--pool-prob", type=probability, default=d.pool_prob,
                        help="probability a self-play deal is played against a past snapshot (default %(default)s)")
    parser.add_argument("--games-per-actor", type=positive_int, default=None,
                        help=f"deals batched per actor (default {d.games_per_actor}; a resumed run keeps its own)")
    parser.add_argument("--selfplay-engine", choices=("vector", "scalar"), default=None,
                        help=f"self-play generator: the batch engine (vector) or one State per deal (scalar) "
                             f"(default {d.selfplay_engine}; a resumed run keeps its own)")
    parser.add_argument("--shared-head", action="store_true",
                        help="3 players: one head for all roles (ablation)")
    parser.add_argument("--no-progress", "--quiet", action="store_true", help="no progress bar (--quiet, as in twilight arena/edge)")


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
    with Signals() as signals:
        try:
            return _train(cfg, override, t_start, signals)
        except TrainingInterrupted:
            raise
        except KeyboardInterrupt as e:  # before the learner existed: nothing to save
            raise TrainingInterrupted(getattr(e, "signum", signal.SIGINT)) from None


def _prepare(cfg: TrainConfig, override: set | None):
    """The effective config, the resume checkpoint (or None), the run directory (created for
    a new run; temporary files of a killed checkpoint write removed), the device, and the
    evaluation opponents and deals."""
    cfg, ckpt, run_dir = resolve_config(cfg, override)
    device = check_device(cfg.device)
    torch.set_num_threads(cfg.threads)
    opponents = check_opponents(cfg.eval_opponents, ckpt is not None, cfg.players) if cfg.eval_deals > 0 else []
    deals = eval_deals(cfg.players, cfg.eval_deals, seed=cfg.seed + 12345) if cfg.eval_deals else []
    if ckpt is None:
        run_dir.mkdir(parents=True, exist_ok=False)
    for stale in run_dir.glob(CHECKPOINT_NAME + ".tmp*"):  # left by a process killed while saving
        stale.unlink(missing_ok=True)
    return cfg, ckpt, run_dir, device, opponents, deals


def _train(cfg: TrainConfig, override: set | None, t_start: float, signals: Signals) -> dict:
    cfg, ckpt, run_dir, device, opponents, deals = _prepare(cfg, override)
    learner = build_learner(cfg, ckpt, device)
    counters = learner.counters
    ghash = git_hash() or "unknown"
    writer = source = bar = None
    t_train = None  # when the --minutes budget began (time.perf_counter)
    try:
        writer = open_writer(run_dir, cfg, counters, ghash, resumed=ckpt is not None)
        source = selfplay_source(learner, cfg, ckpt)
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
    return _summary(run_dir, cfg, learner, rate, t_start)


def _summary(run_dir, cfg: TrainConfig, learner, rate: _Throughput, t_start: float) -> dict:
    """:func:`train`'s summary of a finished run (``t_start``: when :func:`train` was called,
    ``time.perf_counter`` seconds)."""
    counters = learner.counters
    wall = time.perf_counter() - rate.t_loop
    return {"run_dir": str(run_dir), "players": cfg.players, "actors": cfg.actors,
            "decisions": counters["decisions"], "updates": counters["updates"], "episodes": counters["episodes"],
            "selfplay_decisions_per_s": round(rate.decisions / wall, 1) if wall > 0 else None,
            "actor_decisions_per_s": round(rate.decisions / rate.seconds, 1) if rate.seconds > 0 else None,
            "wall_seconds": round(time.perf_counter() - t_start, 1), "eval": learner.last_eval}


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



__all__ = ["add_arguments", "run", "train", "TrainConfig", "TrainingDiverged", "TrainingInterrupted", "resume_command",
           "summary_table"]
