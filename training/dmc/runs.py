"""A Deep Monte-Carlo run's surroundings: the effective config and run directory, the
evaluation opponents and their duplicate-deal evaluation, the checkpoint, the
TensorBoard writer and its scalars, and the progress bar.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from twilight_env.agents.base import agent_name
from twilight_env.agents.nn.checkpoint import (CHECKPOINT_NAME, FORMAT, VERSION, load_checkpoint,
                                               save_checkpoint)
from twilight_env.training.checkpoint import load_resume_checkpoint
from twilight_env.training.config import TrainConfig
from twilight_env.training.dmc.actors import InProcessSelfPlay
from twilight_env.training.dmc.learner import Learner, cpu_copy
from twilight_env.training.runtime import check_finite_weights, rng_state, to_cpu
from twilight_env.training.selfplay import duplicate_eval


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


def check_opponents(specs, resumed: bool, num_players: int | None = None) -> list[str]:
    """The evaluation opponents that can be built here.

    Args:
        specs: agent specs (:func:`twilight_env.agents.base.make_agent`).
        resumed: for a resumed run a spec that cannot be built any more (a checkpoint file
            since removed, a missing optional dependency) is skipped with a printed note, so
            the run can still continue; for a new run it is an error.
        num_players: the player count of the run (3 or 4), or None: an opponent whose
            network was trained for the other count, or on a reduced deck, is refused
            (:func:`twilight_env.agents.base.check_specs`).

    Raises:
        ValueError: a new run names an unknown agent, a bad option, an agent that cannot
            be built here (the message lists the valid agents) or a network of the other
            player count or a reduced deck.
    """
    from twilight_env.agents.base import check_specs
    if not resumed:
        return check_specs(specs, num_players=num_players)
    ok, missing = [], []
    for spec in specs:
        try:
            ok += check_specs([spec], num_players=num_players)
        except ValueError:
            missing.append(spec)
    if missing:
        print(f"evaluation: skipping opponents that cannot be built here: {missing}")
    return ok


def evaluate(learner: Learner, opponents: list[str], deals: list, writer) -> None:
    """Duplicate-deal evaluation of the greedy network against each opponent, logged at the
    current decisions count (``eval/*`` tags) and kept in ``learner.last_eval``.

    All opponents are played first, then everything is logged at once, so an interrupt
    leaves either the whole evaluation logged or none of it.
    """
    cfg, model = learner.cfg, learner.model
    model.eval()
    cpu_model = model if learner.device.type == "cpu" else cpu_copy(model, learner.net_cfg)
    step = learner.counters["decisions"]
    results = [(agent_name(spec), duplicate_eval(cpu_model, cfg.players, spec, deals, seed=cfg.seed + 999))
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
    sp_state = rng_state(learner.selfplay_rng) if cfg.actors == 0 else None
    gen_state = source.state_dict() if isinstance(source, InProcessSelfPlay) else None
    save_checkpoint({
        "format": FORMAT, "version": VERSION, "num_players": cfg.players, "net": learner.net_cfg.to_dict(),
        "model": {k: v.detach().cpu() for k, v in learner.model.state_dict().items()},
        "optimizer": to_cpu(learner.optimizer.state_dict()),
        **learner.counters, "config": cfg.to_dict(), "git": git,
        "rng": {"learner": rng_state(learner.rng), "selfplay": sp_state, "torch": torch.get_rng_state()},
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


LOG_EVERY_S = 30.0
"""Seconds between progress lines when stderr is not a terminal (a log, a pipe, ``nohup``)."""


class LogLines:
    """The bar's figures as one line every :data:`LOG_EVERY_S` seconds on a stream that is not
    a terminal, where tqdm's redrawn frames (joined by carriage returns) would fill a log.
    Takes the calls the training loop makes of a tqdm bar: ``update``, ``set_postfix``,
    ``close``, and ``n`` / ``total``.

    Args:
        total: the budget (decisions, or seconds with ``--minutes``); ``unit`` names it.
        initial: what an earlier sitting already did.
        stream: where to write (default ``sys.stderr``).
        clock: seconds (default ``time.monotonic``; a test may give its own).
    """

    def __init__(self, total: int, initial: int, unit: str, stream=None, clock=time.monotonic,
                 every_s: float = LOG_EVERY_S):
        import sys

        self.total, self.n, self.unit, self.postfix = int(total), int(initial), unit, ""
        self.stream, self.clock, self.every_s = (sys.stderr if stream is None else stream), clock, every_s
        self.last = clock()
        self._line("training")

    def _line(self, what: str) -> None:
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        tail = f", {self.postfix}" if self.postfix else ""
        print(f"{what}: {self.n:,}/{self.total:,} {self.unit}{pct}{tail}", file=self.stream, flush=True)

    def update(self, k: int = 1) -> None:
        self.n += int(k)
        now = self.clock()
        if now - self.last >= self.every_s:
            self.last = now
            self._line("training")

    def set_postfix(self, refresh: bool = True, **figures) -> None:
        self.postfix = ", ".join(f"{k} {v}" for k, v in figures.items())

    def close(self) -> None:
        self._line("training stopped at")


def progress_bar(cfg: TrainConfig, decisions: int, elapsed_s: float):
    """A tqdm bar with a total, so it shows an ETA; off a terminal, :class:`LogLines`.

    With ``--minutes`` the total is the time budget (seconds, ``unit="s"``; the decisions
    count is in the postfix); with only ``--decisions`` it is the decisions budget.
    """
    import sys

    from tqdm import tqdm
    if cfg.progress and not sys.stderr.isatty():
        if cfg.minutes is not None:
            budget = round(cfg.minutes * 60)
            return LogLines(budget, min(round(elapsed_s), budget), "s")
        return LogLines(cfg.decisions, decisions, "decisions")
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



__all__ = ["LogLines", "advance_bar", "check_opponents", "evaluate", "log_step", "open_writer", "progress_bar", "resolve_config",
           "save_train_checkpoint"]
