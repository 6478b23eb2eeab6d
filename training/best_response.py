"""Approximate exploitability: a Deep Monte-Carlo best response to a frozen agent.

Approximate exploitability (Timbers et al., "Approximate Exploitability: Learning a Best
Response", IJCAI 2022): hold an agent fixed, train a learner against it alone, and
report how many points the learner then takes from it. The learner's score is a lower
bound on the agent's exploitability (the best response value); a lower figure means a
harder agent to exploit, 0 is the value of the agent against itself on duplicate deals.

The learner is the project's Deep Monte-Carlo learner (:mod:`twilight_env.training.train`: the same
:class:`~twilight_env.agents.nn.network.QNetwork`, DMC features :mod:`twilight_env.agents.nn.features`, replay
buffer, MSE regression with Adam, checkpoint format). Only the data source differs from
self-play: in every deal the learner plays one side, chosen at random per deal (in 3
players the solo side, seats 0 and 2 with the new moon (R7.3), or the Sun side, seats 1
and 3), with epsilon-greedy exploration, and the frozen agent plays every other seat
through the agent protocol (:mod:`twilight_env.agents.base`): it is called with an
:class:`~twilight_env.rules.infoset.InfoSet` only, never the engine state, and agents with
``act_batch`` (``neural``) get all their pending decisions of the batch of deals in one
call. The DMC target of each learner decision is the learner side's final deal return,
``(own side's deal score − other side's) / 360`` (R5).

The figure: the greedy learner against the agent on duplicate deals of a held-out deal
set (``heldout-3``: the first N deals of seed 2_026_120_103 drawn by
:func:`twilight_env.records.dealsets.generate_deals`, seat 0 leading, the deals that ``twilight
arena --seed 2026120103 --deals N`` plays), each deal played twice with the sides swapped;
mean learner points per deal (the learner side's deal score minus the agent side's,
averaged over the two plays) with a 95% Student-t interval over deals. Seeds
2_026_120_101..2_026_120_103 are reserved for held-out sets: they are refused as
training seeds, and the evaluation during training uses other deals (seed + 12345).

Run directory (``--out``): ``checkpoint.pt`` (the :mod:`twilight_env.agents.nn.checkpoint` format
plus a ``best_response`` entry; playable as ``neural:path=RUN_DIR/checkpoint.pt``,
written atomically every ``--checkpoint-every`` minutes, at the end and on Ctrl-C or
SIGTERM), TensorBoard event files and ``exploitability.json`` (the figure). TensorBoard
tags, x-axis = decisions played (learner and agent, forced ones included):

| tag | meaning |
|-----|---------|
| ``losses/mse`` | mean squared error of Q against returns ((deal points / 360)²) |
| ``charts/decisions_per_s`` | deal-playing speed (decisions/s) |
| ``charts/episode_return`` | mean learner return of finished deals (deal points / 360) |
| ``charts/episodes``, ``charts/updates`` | deals finished, gradient updates |
| ``eval/points_vs_agent`` | duplicate deals (not held out): learner points per deal |
| ``eval/ci95_vs_agent`` | half-width of its 95% interval (deal points) |
| ``eval/points_as_solo``, ``eval/points_as_sun`` | 3 players: the same split by the learner's role |

Usage::

    python -m twilight_env.training.best_response --agent heuristic --players 4 --minutes 7 --out runs/br_heuristic_4p
    python -m twilight_env.training.best_response --resume runs/br_heuristic_4p --minutes 3
    python -m twilight_env.training.best_response --evaluate runs/br_heuristic_4p --deals 200
"""

from __future__ import annotations

from twilight_env.util.extras import require

require("torch", "train", "twilight_env.training.best_response", as_main=__name__ == "__main__")

import argparse
import json
import math
import os
import shlex
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch

from twilight_env.agents.nn.checkpoint import CHECKPOINT_NAME, FORMAT, VERSION, load_checkpoint, save_checkpoint
from twilight_env.rules.engine import validate_deal

from twilight_env.training.config import TrainConfig
from twilight_env.training.selfplay import eval_deals
from twilight_env.training.dmc.learner import build_learner, learner_step
from twilight_env.training.dmc.runs import log_step
from twilight_env.training.runtime import (Signals, TrainingInterrupted, check_finite_weights, rng_state, set_rng_state,
                                           to_cpu)
from twilight_env.util.report import git_hash
from twilight_env.training.br_play import (BestResponseSource, FrozenAgent, Game, duplicate_points,  # noqa: F401 (re-exported)
                                            play_round)

DEAL_SETS: dict[str, int] = {"heldout-1": 2_026_120_101, "heldout-2": 2_026_120_102, "heldout-3": 2_026_120_103}
"""Held-out deal sets by name: the seed of :func:`twilight_env.records.dealsets.generate_deals`."""
RESERVED_SEEDS = range(2_026_120_101, 2_026_120_104)
"""Seeds of held-out deal sets: never a training seed (and never the evaluation during training)."""
RESULT_NAME = "exploitability.json"
"""File name of the figure inside a run directory."""
EVAL_SEED_OFFSET = 12345
"""Deals of the evaluation during training: :func:`eval_deals` with ``seed + EVAL_SEED_OFFSET``."""


@dataclass
class BRConfig:
    """A best-response run (module docstring). Every field gives its unit."""

    agent: str = "heuristic"
    """The frozen agent (:func:`twilight_env.agents.base.make_agent` spec) (spec)."""
    players: int = 4
    """Variant: 3 or 4 players (seats at the table)."""
    minutes: float | None = None
    """Wall-clock budget of this invocation's training, evaluations during training included (minutes)."""
    decisions: int | None = None
    """Budget: total decisions played, resumed ones included (decisions)."""
    cpu_minutes: float | None = None
    """Budget: total CPU time of the training process (one core: torch uses one thread),
    resumed runs included, evaluations during training included (minutes). Unlike
    ``minutes`` it does not depend on how busy the machine is."""
    seed: int = 1
    """Seed of deals, sides, exploration, weights and the agent's randomness (integer)."""
    init: str = "default"
    """Learner's starting weights: ``scratch`` (random), ``default`` (the shipped network of
    the variant) or a checkpoint path (name or path)."""
    epsilon: float = 0.05
    """Exploration: probability of a uniformly random legal action (probability)."""
    lr: float = 3e-4
    """Adam learning rate (per update); the rate the shipped networks ended their training with."""
    batch_size: int = 512
    """Samples per gradient update (decisions)."""
    reuse: float = 2.0
    """Average times each recorded decision is used in an update (ratio)."""
    buffer_size: int = 100_000
    """Replay buffer capacity, most recent samples kept (decisions)."""
    games: int = 128
    """Deals played side by side, batched through one forward pass (deals)."""
    chunk: int = 2048
    """Decisions played between learner steps (decisions)."""
    eval_every: int = 100_000
    """Decisions between evaluations during training (decisions); 0 = none."""
    eval_deals: int = 50
    """Duplicate deals of each evaluation during training (deals; not the held-out set)."""
    final_deals: int = 200
    """Held-out duplicate deals of the figure at the end (deals); 0 = no figure."""
    deal_set: str = "heldout-3"
    """Held-out deal set of the figure (a :data:`DEAL_SETS` name)."""
    checkpoint_every: float = 2.0
    """Minutes between checkpoints (minutes); one is always written at the end."""
    progress: bool = True
    """Show a tqdm progress bar (flag)."""
    actors: int = 0
    """Ray actors playing deals against the frozen agent (0: in the learner process); each
    holds its own frozen agent and ``games`` deals (processes)."""
    ray: str | None = None
    """Ray cluster of the ``actors`` (``auto``, ``local``, ``HOST:PORT``; the ``dist`` extra)
    (address). With Ray, the CPU budget counts the learner's CPU time plus the time the
    actors spent playing (seconds of one core each)."""

    def validate(self) -> "BRConfig":
        """Check values; return self.

        Raises:
            ValueError: naming the bad field and what is allowed.
        """
        if self.players not in (3, 4):
            raise ValueError(f"players must be 3 or 4, got {self.players!r}")
        if self.minutes is None and self.decisions is None and self.cpu_minutes is None:
            raise ValueError("give a budget: --minutes M, --cpu-minutes M or --decisions N (or several)")
        if self.cpu_minutes is not None and not self.cpu_minutes > 0:
            raise ValueError(f"cpu_minutes must be > 0, got {self.cpu_minutes!r}")
        if self.minutes is not None and not self.minutes > 0:
            raise ValueError(f"minutes must be > 0, got {self.minutes!r}")
        if self.decisions is not None and self.decisions < 1:
            raise ValueError(f"decisions must be >= 1, got {self.decisions!r}")
        if self.seed in RESERVED_SEEDS or self.seed + EVAL_SEED_OFFSET in RESERVED_SEEDS:
            raise ValueError(f"seed {self.seed} is reserved: seeds {RESERVED_SEEDS.start:_}.."
                             f"{RESERVED_SEEDS.stop - 1:_} draw the held-out deal sets (and seed + "
                             f"{EVAL_SEED_OFFSET} the evaluation during training); pick another seed")
        if self.deal_set not in DEAL_SETS:
            raise ValueError(f"unknown deal set {self.deal_set!r}; known: {', '.join(DEAL_SETS)}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon!r}")
        for name in ("batch_size", "games", "chunk"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("eval_every", "eval_deals", "final_deals"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if not self.lr > 0 or not self.reuse > 0 or not self.checkpoint_every > 0:
            raise ValueError("lr, reuse and checkpoint_every must be > 0")
        if self.buffer_size < self.batch_size:
            raise ValueError(f"buffer_size ({self.buffer_size}) must be >= batch_size ({self.batch_size})")
        if isinstance(self.actors, bool) or not isinstance(self.actors, int) or self.actors < 0:
            raise ValueError(f"actors must be an integer >= 0 (0 = in the learner process), got {self.actors!r}")
        if (self.ray is None) != (self.actors == 0):
            raise ValueError("--ray and --actors go together: --actors N (N >= 1) runs N Ray actors on the "
                             f"cluster --ray names (auto, local or HOST:PORT); got actors={self.actors}, "
                             f"ray={self.ray!r}")
        if self.ray is not None:
            from twilight_env.util.distributed import check_address

            check_address(self.ray)
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "BRConfig":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def train_config(self) -> TrainConfig:
        """The learner's :class:`TrainConfig` (no opponent pool; its ``actors`` and ``ray``
        are this run's, which :class:`~twilight_env.training.dmc.actors.RayActorPool` reads)."""
        # TrainConfig asks for a wall-clock or decisions budget; with only cpu_minutes the
        # stored decisions=1 is a placeholder (this module's loop reads the BRConfig budgets)
        return TrainConfig(exp="br", players=self.players, minutes=self.minutes,
                           decisions=self.decisions if self.decisions or self.minutes else 1,
                           actors=self.actors, ray=self.ray, seed=self.seed, lr=self.lr,
                           batch_size=self.batch_size, reuse=self.reuse,
                           buffer_size=self.buffer_size, epsilon=self.epsilon, games_per_actor=self.games,
                           chunk=self.chunk, pool_prob=0.0, eval_deals=0, progress=self.progress).validate()


# ---------------------------------------------------------------------------------
# playing deals on Ray actors (the deals themselves: twilight_env.training.br_play)
# ---------------------------------------------------------------------------------

class _RayBRActor:
    """Body of a Ray actor of a best-response run: its own frozen agent and ``games`` deals
    against it (a :class:`BestResponseSource`), fed the learner's latest weights with every
    request. The frozen agent's decisions, the costly part against a search, are spread
    over the actors."""

    def __init__(self, cfg_dict: dict, net_dict: dict, seed_seq: list):
        from twilight_env.agents.nn.network import NetConfig, QNetwork

        torch.set_num_threads(1)
        cfg = BRConfig.from_dict(cfg_dict)
        self.model = QNetwork(NetConfig.from_dict(net_dict)).eval()
        frozen = FrozenAgent(cfg.agent, np.random.default_rng(list(seed_seq) + [1]))
        self.source = BestResponseSource(cfg.players, self.model, frozen, np.random.default_rng(seed_seq),
                                         cfg.games, cfg.epsilon)
        self.reported = [0, 0]

    def collect(self, weights: dict, want: int):
        self.model.load_state_dict(weights)
        batch, stats = self.source.collect(want)
        # deals started since the last report (the first one includes the deals set up here)
        stats.sides_started = [a - b for a, b in zip(self.source.sides_played, self.reported)]
        self.reported = list(self.source.sides_played)
        return batch, stats


def _ray_pool(learner, cfg: BRConfig, resumes: int):
    """The trainer's Ray actor pool (:class:`twilight_env.training.dmc.actors.RayActorPool`) with
    :class:`_RayBRActor` bodies; actor ``i`` draws its deals from ``[seed, 5_000 + i, resumes]``."""
    from twilight_env.training.dmc.actors import RayActorPool

    return RayActorPool(learner, body=_RayBRActor,
                        body_args=lambda i: (cfg.to_dict(), learner.net_cfg.to_dict(), [cfg.seed, 5_000 + i, resumes]))


# ---------------------------------------------------------------------------------
# checkpoints
# ---------------------------------------------------------------------------------

def init_weights(cfg: BRConfig) -> dict | None:
    """The state dict the learner starts from (``cfg.init``), or None for ``scratch``.

    Raises:
        ValueError: if the checkpoint is missing, corrupt or for the other variant.
    """
    if cfg.init == "scratch":
        return None
    from twilight_env.agents.neural import default_weights
    path = default_weights(cfg.players) if cfg.init == "default" else cfg.init
    return load_checkpoint(path, cfg.players)


def save_br_checkpoint(learner, source: BestResponseSource, cfg: BRConfig, run_dir: Path, git: str,
                       evals: dict, cpu_seconds: float) -> None:
    """Write ``run_dir/checkpoint.pt`` atomically: the trainer's checkpoint format (weights,
    optimizer, counters, RNG states, replay buffer) plus ``best_response`` (the
    :class:`BRConfig`) and ``br_state`` (the agent's RNG state, sides played, evaluations).

    Raises:
        TrainingDiverged: non-finite weights (nothing is written)."""
    check_finite_weights(learner.model, "the network")
    save_checkpoint({
        "format": FORMAT, "version": VERSION, "num_players": cfg.players, "net": learner.net_cfg.to_dict(),
        "model": {k: v.detach().cpu() for k, v in learner.model.state_dict().items()},
        "optimizer": to_cpu(learner.optimizer.state_dict()),
        **learner.counters, "config": learner.cfg.to_dict(), "git": git,
        "rng": {"learner": rng_state(learner.rng), "selfplay": rng_state(learner.selfplay_rng),
                "torch": torch.get_rng_state()},
        "buffer": learner.buffer.state_dict(), "update_credit": learner.update_credit,
        "best_response": cfg.to_dict(),
        "br_state": {"agent_rng": rng_state(source.frozen.rng), "sides_played": list(source.sides_played),
                     "evals": evals, "cpu_seconds": float(cpu_seconds)},
    }, run_dir / CHECKPOINT_NAME)


def check_br_checkpoint(ckpt: dict, path: str) -> None:
    """Check a best-response run's checkpoint in full before it resumes: the trainer's
    entries (:func:`twilight_env.training.checkpoint.check_dmc_checkpoint`), then
    ``best_response`` (:meth:`BRConfig.validate`, budget aside; the same players) and
    ``br_state`` (the agent's RNG state, sides played, evaluations, CPU seconds).

    Raises:
        ValueError: naming the file, the entry and what is allowed.
    """
    from twilight_env.training.checkpoint import (check_bitgen_state, check_count, check_dmc_checkpoint,
                                                   check_entries, check_finite, check_number, fail)
    cfg = check_dmc_checkpoint(ckpt, path, ("best_response", "br_state"))
    if not isinstance(ckpt["best_response"], dict):
        fail(path, "'best_response' must be a dict")
    try:
        br = BRConfig.from_dict(ckpt["best_response"])
        br.minutes, br.decisions, br.cpu_minutes = 1.0, None, None  # budget and machinery: from the command line
        br.actors, br.ray = 0, None
        br.validate()
    except (TypeError, ValueError) as e:
        fail(path, f"'best_response': {e}")
    if br.players != cfg.players:
        fail(path, f"'best_response' plays {br.players} players, its config {cfg.players}")
    st = check_entries(ckpt["br_state"], path, "'br_state'", (),
                       ("agent_rng", "sides_played", "evals", "cpu_seconds"))
    if "agent_rng" in st:
        check_bitgen_state(st["agent_rng"], path, "'br_state' 'agent_rng'")
    sides = st.get("sides_played", [])
    if not isinstance(sides, list) or len(sides) > 4:
        fail(path, "'br_state' 'sides_played' must be a list of at most 4 counts")
    for x in sides:
        check_count(x, path, "'br_state' 'sides_played'")
    check_number(st.get("cpu_seconds", 0.0), path, "'br_state' 'cpu_seconds'", 0.0)
    if not isinstance(st.get("evals", {}), dict):
        fail(path, "'br_state' 'evals' must be a dict")
    check_finite(st.get("evals", {}), path, "'br_state' 'evals'")


def load_br_checkpoint(run_dir: str | os.PathLike) -> dict:
    """The checkpoint of a best-response run directory (or file), checked in full
    (:func:`twilight_env.training.checkpoint.load_resume_checkpoint`).

    Raises:
        ValueError: if it is missing or corrupt, not written by a best-response run, or
            edited or malformed (naming the file and the entry).
    """
    from twilight_env.training.checkpoint import load_resume_checkpoint
    ckpt = load_checkpoint(run_dir)
    if "best_response" not in ckpt or "optimizer" not in ckpt:
        raise ValueError(f"{str(run_dir)!r} holds a network checkpoint, but not one of a best-response run "
                         f"(no 'best_response' entry); give the --out folder of "
                         f"`python -m twilight_env.training.best_response`")
    return load_resume_checkpoint(run_dir, check_br_checkpoint)  # digest and every entry checked


def resume_command(run_dir: Path, cfg: BRConfig, elapsed_s: float) -> str:
    """The command line that continues ``run_dir``: the same total budgets (``--decisions``,
    ``--cpu-minutes``), the wall-clock minutes left, and the evaluation and checkpoint flags
    that differ from their defaults."""
    cmd = ["python", "-m", "twilight_env.training.best_response", "--resume", str(run_dir)]
    if cfg.decisions is not None:
        cmd += ["--decisions", str(cfg.decisions)]
    if cfg.cpu_minutes is not None:
        cmd += ["--cpu-minutes", f"{cfg.cpu_minutes:g}"]
    if cfg.minutes is not None:
        cmd += ["--minutes", f"{max(0.1, math.ceil((cfg.minutes - elapsed_s / 60) * 10) / 10):g}"]
    d = BRConfig()
    for name, flag in (("eval_every", "--eval-every"), ("eval_deals", "--eval-deals"), ("final_deals", "--deals"),
                       ("checkpoint_every", "--checkpoint-every")):
        if getattr(cfg, name) != getattr(d, name):
            cmd += [flag, f"{getattr(cfg, name):g}"]
    if cfg.ray is not None:
        cmd += ["--actors", str(cfg.actors), "--ray", cfg.ray]
    if not cfg.progress:
        cmd.append("--no-progress")
    return " ".join(shlex.quote(c) for c in cmd)


# ---------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------

def train_best_response(cfg: BRConfig, out: str | os.PathLike | None = None,
                        resume: str | os.PathLike | None = None) -> dict:
    """Train (or continue) a best response, then measure it on the held-out deals.

    Args:
        cfg: the run's config (for ``resume``, only the budget, ``progress``,
            ``final_deals``, ``eval_every``, ``eval_deals``, ``checkpoint_every``, ``actors``
            and ``ray`` are taken; the rest comes from the checkpoint: a run may go on with
            or without Ray).
        out: run directory of a new run (must not hold a checkpoint yet).
        resume: run directory to continue.

    Returns:
        The summary dict written to ``RUN_DIR/exploitability.json`` (``result`` is None
        when ``final_deals`` is 0).

    Raises:
        ValueError: bad config, an existing run at ``out``, an unreadable checkpoint, an
            unknown agent spec.
        TrainingInterrupted: after Ctrl-C or SIGTERM, once the checkpoint is written; its
            message holds the command that continues the run.
    """
    t_start = time.perf_counter()
    cfg, run_dir, ckpt = _open_run(cfg, out, resume)
    run = _BRRun(cfg, run_dir, ckpt)
    train_s = run.train(t_start)
    summary = run.summary(train_s)
    if cfg.final_deals:
        summary["result"] = evaluate_run(run_dir, cfg.final_deals, cfg.deal_set, write=False)
    elif (run_dir / RESULT_NAME).is_file():
        # no figure this time (--deals 0): the last one stays, with the decisions it was measured at
        try:
            summary["result"] = json.loads((run_dir / RESULT_NAME).read_text()).get("result")
        except (OSError, ValueError, AttributeError):
            summary["result"] = None
    write_result(run_dir, summary)
    if run.writer is not None:
        run.writer.close()
    return summary


_RESUME_TAKES = ("minutes", "decisions", "cpu_minutes", "progress", "final_deals", "eval_every", "eval_deals",
                "checkpoint_every", "actors", "ray")
"""The :class:`BRConfig` fields a resumed run takes from the caller; the rest come from its checkpoint."""


def _open_run(cfg: BRConfig, out: str | os.PathLike | None = None,
             resume: str | os.PathLike | None = None) -> tuple[BRConfig, Path, dict | None]:
    """The config, run directory and checkpoint (None for a new run) of a run to train.

    For ``resume`` the saved config is kept except the fields in :data:`_RESUME_TAKES`,
    which come from ``cfg``. The config returned is validated.

    Raises:
        ValueError: no ``out`` for a new run, a checkpoint already at ``out``, an
            unreadable or foreign checkpoint at ``resume``, or a bad config value.
    """
    ckpt = None
    if resume is not None:
        ckpt = load_br_checkpoint(resume)
        saved = BRConfig.from_dict(ckpt["best_response"])
        for name in _RESUME_TAKES:
            setattr(saved, name, getattr(cfg, name))
        cfg = saved
        run_dir = Path(resume)
        if run_dir.is_file():
            run_dir = run_dir.parent
    else:
        if out is None:
            raise ValueError("give --out RUN_DIR for a new run (or --resume RUN_DIR)")
        run_dir = Path(out)
        if (run_dir / CHECKPOINT_NAME).exists():
            raise ValueError(f"{str(run_dir)!r} already holds a run; continue it with --resume {run_dir} "
                             f"or choose another --out")
    return cfg.validate(), run_dir, ckpt


class _BRRun:
    """One invocation's training of a best-response run: the learner, its data source
    against the frozen agent, the evaluations and the CPU time (resumed ones included)."""

    def __init__(self, cfg: BRConfig, run_dir: Path, ckpt: dict | None):
        torch.set_num_threads(1)
        self.cfg, self.run_dir, self.ckpt = cfg, run_dir, ckpt
        self.learner = self._build_learner()
        # Ray first: a cluster that does not answer is refused before the run directory exists
        self.pool = _ray_pool(self.learner, cfg, self.learner.counters["resumes"]) if cfg.ray is not None else None
        run_dir.mkdir(parents=True, exist_ok=True)
        for stale in run_dir.glob(CHECKPOINT_NAME + ".tmp*"):
            stale.unlink(missing_ok=True)
        # with Ray the actors play every deal: this source only keeps the counts and the agent's RNG
        self.source = BestResponseSource(cfg.players, self.learner.model, self.frozen, self.learner.selfplay_rng,
                                         cfg.games if self.pool is None else 0, cfg.epsilon)
        self.evals: dict = {}
        self.cpu_prev = 0.0
        if ckpt is not None:
            st = ckpt.get("br_state", {})
            if "agent_rng" in st:
                set_rng_state(self.frozen.rng, st["agent_rng"])
            self.source.sides_played = [int(x) for x in st.get("sides_played", self.source.sides_played)]
            self.evals = dict(st.get("evals", {}))
            self.cpu_prev = float(st.get("cpu_seconds", 0.0))
        self.counters = self.learner.counters
        self.actor_cpu = 0.0
        """Seconds the Ray actors spent playing in this invocation (counted in the CPU budget)."""
        self.ghash = git_hash()
        self.eval_set = (eval_deals(cfg.players, cfg.eval_deals, seed=cfg.seed + EVAL_SEED_OFFSET)
                         if cfg.eval_deals else [])
        self.writer = self.bar = None
        self.cpu0 = time.process_time()

    def _build_learner(self):
        """The learner from the checkpoint, or from ``cfg.init``'s weights; builds the
        frozen agent first so that a bad spec fails before any file is written."""
        cfg, ckpt = self.cfg, self.ckpt
        tcfg = cfg.train_config()
        if ckpt is not None:
            tcfg.resume = str(self.run_dir)
        start = init_weights(cfg) if ckpt is None else None
        self.frozen = FrozenAgent(cfg.agent, np.random.default_rng([cfg.seed, 4_000]))  # fails early on a bad spec
        if start is not None and start["net"]["num_roles"] != (1 if cfg.players == 4 else 4):
            raise ValueError(f"--init {cfg.init!r}: the network has {start['net']['num_roles']} heads")
        if start is not None:
            tcfg.trunk, tcfg.head = tuple(start["net"]["trunk"]), tuple(start["net"]["head"])
        elif ckpt is not None:
            tcfg.trunk, tcfg.head = tuple(ckpt["net"]["trunk"]), tuple(ckpt["net"]["head"])
        learner = build_learner(tcfg, ckpt, torch.device("cpu"))
        if start is not None:
            learner.model.load_state_dict({k: v.float() for k, v in start["model"].items()})
        return learner

    def cpu_used(self) -> float:
        """CPU seconds of training, resumed runs included, the Ray actors' playing time
        included (seconds)."""
        return self.cpu_prev + time.process_time() - self.cpu0 + self.actor_cpu

    def checkpoint(self) -> None:
        save_br_checkpoint(self.learner, self.source, self.cfg, self.run_dir, self.ghash, self.evals,
                           self.cpu_used())

    def train(self, t_start: float) -> float:
        """Train until a budget is spent; returns the seconds since ``t_start``.

        Raises:
            TrainingInterrupted: after Ctrl-C or SIGTERM, once the checkpoint is written.
        """
        with Signals() as signals:
            try:
                self._open_logs()
                try:
                    self._loop(signals, t_start)
                finally:
                    if self.pool is not None:
                        self.pool.close()
                self.bar.close()
                self.checkpoint()
                return time.perf_counter() - t_start
            except KeyboardInterrupt as e:
                with signals.ignore():
                    if self.bar is not None:
                        self.bar.close()
                    self.checkpoint()
                    if self.writer is not None:
                        self.writer.close()
                raise TrainingInterrupted(getattr(e, "signum", 2), self.run_dir, self.counters["decisions"],
                                          resume_command(self.run_dir, self.cfg,
                                                         time.perf_counter() - t_start)) from None

    def _open_logs(self) -> None:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm
        cfg, run_dir, decisions = self.cfg, self.run_dir, self.counters["decisions"]
        if self.ckpt is None:
            print(f"run directory: {run_dir}", flush=True)
            self.writer = SummaryWriter(str(run_dir))
            self.writer.add_text("config", "```\n" + json.dumps(cfg.to_dict(), indent=1)
                                 + f"\n```\n\ngit: {self.ghash}", 0)
        else:
            print(f"resumed {run_dir} at {decisions:,} decisions", flush=True)
            self.writer = SummaryWriter(str(run_dir), purge_step=decisions + 1)
        self.bar = tqdm(total=cfg.decisions, initial=decisions, unit="dec", disable=not cfg.progress,
                        mininterval=1.0, dynamic_ncols=True)

    def _loop(self, signals: Signals, t_start: float) -> None:
        cfg, counters, learner = self.cfg, self.counters, self.learner
        budget_s = cfg.minutes * 60 if cfg.minutes is not None else math.inf
        cpu_budget = cfg.cpu_minutes * 60 if cfg.cpu_minutes is not None else math.inf
        next_eval = (counters["decisions"] // cfg.eval_every + 1) * cfg.eval_every if cfg.eval_every else math.inf
        last_ckpt = t_loop = time.perf_counter()
        gen = 0
        while ((cfg.decisions is None or counters["decisions"] < cfg.decisions)
               and time.perf_counter() - t_start < budget_s and self.cpu_used() < cpu_budget):
            want = cfg.chunk if cfg.decisions is None else max(1, min(cfg.chunk, cfg.decisions - counters["decisions"]))
            if self.pool is None:
                chunks = self.source.get(learner.model, want)
            else:
                chunks = self.pool.get(learner.model, want)
                if not chunks:
                    continue
            with signals.held():
                losses = learner_step(learner, chunks)
                if self.pool is not None:
                    self.pool.publish(learner.model)
                    for _, _, st in chunks:
                        self.actor_cpu += st.seconds
                        for k, n in enumerate(getattr(st, "sides_started", ())):
                            self.source.sides_played[k] += n
                new = sum(c[2].decisions for c in chunks)
                gen += new
                step = counters["decisions"]
                dps = gen / max(1e-9, time.perf_counter() - t_loop)
                log_step(self.writer, step, losses, dps, chunks[0][2].decisions / max(1e-9, chunks[0][2].seconds),
                         [p for c in chunks for p in c[2].side0_points], counters)
                self.bar.update(new)
                self.bar.set_postfix(dps=f"{dps:.0f}", loss=f"{np.mean(losses):.4f}" if losses else "-",
                                     refresh=False)
            if step >= next_eval and self.eval_set:
                res = duplicate_points(learner.model, cfg.players, cfg.agent, self.eval_set, seed=cfg.seed)
                with signals.held():
                    _log_eval(self.writer, res, step, cfg.players)
                    self.evals[str(step)] = _rounded(res)
                next_eval = (step // cfg.eval_every + 1) * cfg.eval_every
            if time.perf_counter() - last_ckpt >= cfg.checkpoint_every * 60:
                self.checkpoint()
                last_ckpt = time.perf_counter()

    def summary(self, train_s: float) -> dict:
        """The run's summary (``exploitability.json`` without its ``result``)."""
        cfg, counters = self.cfg, self.counters
        return {"agent": cfg.agent, "players": cfg.players, "run_dir": str(self.run_dir),
                "checkpoint": str(self.run_dir / CHECKPOINT_NAME), "decisions": counters["decisions"],
                "updates": counters["updates"], "episodes": counters["episodes"],
                "sides_played": list(self.source.sides_played), "train_seconds_this_run": round(train_s, 1),
                "train_cpu_seconds": round(self.cpu_used(), 1), "actor_cpu_seconds_this_run": round(self.actor_cpu, 1),
                "init": cfg.init, "seed": cfg.seed, "git": self.ghash, "result": None}


def _rounded(res: dict) -> dict:
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in res.items()}


def _log_eval(writer, res: dict, step: int, players: int) -> None:
    writer.add_scalar("eval/points_vs_agent", res["points"], step)
    writer.add_scalar("eval/ci95_vs_agent", res["ci95"], step)
    writer.add_scalar("eval/win_rate_vs_agent", res["win_rate"], step)
    if players == 3:
        writer.add_scalar("eval/points_as_solo", res["points_side0"], step)
        writer.add_scalar("eval/points_as_sun", res["points_side1"], step)
    writer.flush()


def write_result(run_dir: Path, summary: dict) -> None:
    """Write ``summary`` to ``run_dir/exploitability.json`` atomically."""
    from twilight_env.util.report import write_json_atomic
    write_json_atomic(str(Path(run_dir) / RESULT_NAME), summary)


def heldout_deals(deal_set: str, n: int) -> list[tuple]:
    """The first ``n`` deals of a held-out set as ``(hands, leader)`` pairs (hands as card-id
    bit masks by seat, seat 0 leading), as :func:`twilight_env.records.dealsets.generate_deals` draws them.

    Raises:
        ValueError: on an unknown set name or a negative ``n``.
    """
    from twilight_env.records.dealsets import generate_deals
    if deal_set not in DEAL_SETS:
        raise ValueError(f"unknown deal set {deal_set!r}; known: {', '.join(DEAL_SETS)}")
    return [(tuple(validate_deal(deal)), 0) for deal in generate_deals(n, DEAL_SETS[deal_set])]


def evaluate_run(run_dir: str | os.PathLike, deals: int, deal_set: str = "heldout-3", write: bool = True) -> dict:
    """The figure of a best-response run: its greedy network against its frozen agent on
    ``deals`` duplicate deals of ``deal_set`` (:func:`duplicate_points`).

    Args:
        run_dir: a best-response run directory. deals: number of deals (>= 2).
        deal_set: a :data:`DEAL_SETS` name. write: also store it in ``exploitability.json``.

    Returns:
        :func:`duplicate_points`'s dict plus ``deal_set``, ``agent``, ``players``,
        ``at_decisions`` and ``eval_seconds``.

    Raises:
        ValueError: on an unknown deal set, fewer than 2 deals, or a bad checkpoint.
    """
    from twilight_env.agents.nn.checkpoint import model_from_checkpoint
    if deal_set not in DEAL_SETS:
        raise ValueError(f"unknown deal set {deal_set!r}; known: {', '.join(DEAL_SETS)}")
    if deals < 2:
        raise ValueError(f"deals must be >= 2 for an interval, got {deals!r}")
    ckpt = load_br_checkpoint(run_dir)
    cfg = BRConfig.from_dict(ckpt["best_response"])
    model = model_from_checkpoint(ckpt, str(run_dir))
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    res = duplicate_points(model, cfg.players, cfg.agent, heldout_deals(deal_set, deals),
                           seed=DEAL_SETS[deal_set])
    res = {**_rounded(res), "deal_set": deal_set, "agent": cfg.agent, "players": cfg.players,
           "at_decisions": int(ckpt["decisions"]), "eval_seconds": round(time.perf_counter() - t0, 1)}
    if write:
        path = Path(run_dir) if Path(run_dir).is_dir() else Path(run_dir).parent
        summary = {}
        if (path / RESULT_NAME).is_file():
            summary = json.loads((path / RESULT_NAME).read_text())
        summary["result"] = res
        write_result(path, summary)
    return res


def format_result(res: dict) -> str:
    """One line: agent, players, points per deal [95% CI], deals, deal set."""
    line = (f"exploitability of {res['agent']} ({res['players']} players): {res['points']:+.1f} "
            f"[{res['ci_low']:+.1f}, {res['ci_high']:+.1f}] points per deal, {res['deals']} duplicate deals "
            f"of {res['deal_set']}, best responder at {res['at_decisions']:,} decisions")
    if res["players"] == 3:
        line += f" (as solo {res['points_side0']:+.1f}, as Sun {res['points_side1']:+.1f} per play)"
    return line


# ---------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    d = BRConfig()
    p = argparse.ArgumentParser(prog="python -m twilight_env.training.best_response",
                                description="Approximate exploitability: train a DMC best response against a "
                                            "frozen agent and measure it on held-out duplicate deals.")
    p.add_argument("--agent", default=None, help="the frozen agent spec, e.g. heuristic, neural:default (required for a new run)")
    p.add_argument("--players", type=int, choices=(3, 4), default=None, help="3 or 4 players (required for a new run)")
    p.add_argument("--minutes", type=float, default=None, help="training budget of this invocation (minutes; default: none; give at least one budget)")
    p.add_argument("--decisions", type=int, default=None, help="budget: total decisions played, resumed ones included (default: none)")
    p.add_argument("--cpu-minutes", type=float, default=None,
                   help="budget: total CPU minutes of training (one core), resumed ones included (default: none)")
    p.add_argument("--seed", type=int, default=None,
                   help=f"random seed (not 2026120101..2026120103; default {d.seed}; fixed for a run)")
    p.add_argument("--out", default=None, metavar="RUN_DIR", help="run directory of a new run")
    p.add_argument("--resume", default=None, metavar="RUN_DIR", help="continue a run from its checkpoint")
    p.add_argument("--evaluate", default=None, metavar="RUN_DIR", help="only measure a run's best responder")
    p.add_argument("--init", default=None,
                   help=f"starting weights: default (shipped network), scratch, or a checkpoint (default {d.init}; "
                        "fixed for a run)")
    p.add_argument("--epsilon", type=float, default=None,
                   help=f"exploration probability (default {d.epsilon}; fixed for a run)")
    p.add_argument("--lr", type=float, default=None, help=f"Adam learning rate (default {d.lr}; fixed for a run)")
    p.add_argument("--batch-size", type=int, default=None,
                   help=f"samples per update (default {d.batch_size}; fixed for a run)")
    p.add_argument("--games", type=int, default=None,
                   help=f"deals played side by side (default {d.games}; fixed for a run)")
    p.add_argument("--eval-every", type=int, default=d.eval_every, help="decisions between evaluations (0 = none; default %(default)s)")
    p.add_argument("--eval-deals", type=int, default=d.eval_deals, help="deals per evaluation during training (default %(default)s)")
    p.add_argument("--deals", type=int, default=d.final_deals,
                   help="held-out duplicate deals of the final figure (0 = none; default %(default)s)")
    p.add_argument("--deal-set", default=d.deal_set, choices=sorted(DEAL_SETS), help="held-out deal set (default %(default)s)")
    p.add_argument("--checkpoint-every", type=float, default=d.checkpoint_every, help="minutes between checkpoints (default %(default)s)")
    p.add_argument("--no-progress", "--quiet", action="store_true", help="no progress bar (--quiet, as in twilight arena/edge)")
    p.add_argument("--actors", type=int, default=0,
                   help="Ray actors that play the deals against the frozen agent (with --ray; default 0: in "
                        "this process)")
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="run the --actors on a Ray cluster ('auto' for a bare --ray: join this machine's cluster "
                        "or start one; 'local'; HOST:PORT); needs the 'dist' extra; a run may resume with or "
                        "without it")
    return p


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status (130/143 after Ctrl-C/SIGTERM, 2 on bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.evaluate:
            print(format_result(evaluate_run(args.evaluate, args.deals, args.deal_set)))
            return 0
        if args.resume and args.out:
            parser.error("give either --out (a new run) or --resume (continue one), not both")
        if args.resume:
            saved = load_br_checkpoint(args.resume)["best_response"]
            for flag, key in (("agent", "agent"), ("players", "players"), ("seed", "seed"), ("init", "init"),
                              ("epsilon", "epsilon"), ("lr", "lr"), ("batch_size", "batch_size"),
                              ("games", "games")):
                if getattr(args, flag) is not None and getattr(args, flag) != saved[key]:
                    raise ValueError(f"--{flag.replace('_', '-')} {getattr(args, flag)!r} but the run "
                                     f"{args.resume!r} has {key}={saved[key]!r}; a resumed run keeps its "
                                     "settings (leave the flag out, or start a new run with --out)")
        elif args.agent is None or args.players is None or args.out is None:
            parser.error("a new run needs --agent SPEC, --players 3|4 and --out RUN_DIR (or --resume RUN_DIR)")
        d = BRConfig()
        cfg = BRConfig(agent=args.agent or "", players=args.players or 4, minutes=args.minutes,
                       decisions=args.decisions, cpu_minutes=args.cpu_minutes,
                       seed=d.seed if args.seed is None else args.seed, init=args.init or d.init,
                       epsilon=d.epsilon if args.epsilon is None else args.epsilon,
                       lr=d.lr if args.lr is None else args.lr,
                       batch_size=d.batch_size if args.batch_size is None else args.batch_size,
                       games=d.games if args.games is None else args.games, eval_every=args.eval_every,
                       eval_deals=args.eval_deals, final_deals=args.deals, deal_set=args.deal_set,
                       checkpoint_every=args.checkpoint_every, progress=not args.no_progress,
                       actors=args.actors, ray=args.ray)
        summary = train_best_response(cfg, out=args.out, resume=args.resume)
    except TrainingInterrupted as e:
        print(f"\n{e}".replace("twilight train", "python -m twilight_env.training.best_response"), file=sys.stderr)
        return 128 + e.signum
    except (ValueError, OSError) as e:
        print(f"python -m twilight_env.training.best_response: error: {e}", file=sys.stderr)
        return 2
    if summary["result"] is not None:
        print(format_result(summary["result"]))
    print(f"written: {Path(summary['run_dir']) / RESULT_NAME}")
    return 0


__all__ = ["BRConfig", "DEAL_SETS", "RESERVED_SEEDS", "FrozenAgent", "BestResponseSource", "duplicate_points",
           "train_best_response", "evaluate_run", "format_result", "main"]

if __name__ == "__main__":
    sys.exit(main())
