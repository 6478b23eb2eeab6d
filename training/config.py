"""Configuration of a Deep Monte-Carlo training run (``twilight train``).

Every field has a docstring giving its unit. The config is stored as a plain dict in
checkpoints (so ``torch.load(..., weights_only=True)`` can read them) and as the first
TensorBoard text entry of a run.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields

LIMITS = {
    "actors": (0, 1024), "games_per_actor": (1, 100_000), "chunk": (1, 100_000_000), "batch_size": (1, 1_000_000),
    "buffer_size": (0, 10_000_000), "pool_size": (1, 1_000), "threads": (1, 1_024), "eval_deals": (0, 1_000_000),
    "eval_every": (0, 10 ** 15), "snapshot_every": (0, 10 ** 15), "decisions": (1, 10 ** 15), "seed": (0, 2 ** 63 - 1),
}
"""Allowed range of each integer setting (inclusive). The caps keep a typing slip from
allocating what no machine has: the replay buffer takes about 220 bytes per sample (25
int64 feature masks, role, action, target), so 10,000,000 samples are 2.2 GB."""

FLOAT_LIMITS = {"minutes": (0.0, 10.0 ** 7), "checkpoint_every": (0.0, 10.0 ** 7), "lr": (0.0, math.inf),
                "reuse": (0.0, 1_000.0), "max_grad_norm": (0.0, math.inf)}
"""Open lower and closed upper bound of each float setting; every float must also be finite."""

MAX_LAYERS, MAX_WIDTH = 16, 65_536
"""Most hidden layers in the trunk or a head, and the widest layer (units)."""


def _check_int(value, name: str, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in {low:,}..{high:,}, got {value!r}")


def _check_float(value, name: str, low: float, high: float) -> None:
    if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
            or not low < value <= high):
        raise ValueError(f"{name} must be a finite number > {low:g} and <= {high:g}, got {value!r}")


def _check_layers(value, name: str) -> None:
    if (not isinstance(value, (tuple, list)) or len(value) > MAX_LAYERS
            or any(isinstance(w, bool) or not isinstance(w, numbers.Integral) or not 1 <= w <= MAX_WIDTH
                   for w in value)):
        raise ValueError(f"{name} must be at most {MAX_LAYERS} layer widths, each an integer in 1..{MAX_WIDTH:,}, "
                         f"got {value!r}")


@dataclass
class TrainConfig:
    """Deep Monte-Carlo self-play training (DouZero, Zha et al. 2021)."""

    exp: str = "dmc"
    """Experiment name, the first part of the run directory ``{exp}__{seed}__{unixtime}`` (text)."""
    players: int = 4
    """Variant: 4 players, or 3 players (solo with the new moon, R7) (seats at the table)."""
    minutes: float | None = None
    """Wall-clock budget of this invocation's training (minutes), counted once start-up and
    the first evaluation are done, so even a short budget trains; None = no time limit."""
    decisions: int | None = None
    """Budget: total self-play decisions seen by the learner, resumed ones included (decisions)."""
    actors: int = 1
    """Actor processes generating self-play; 0 = generate in the learner process (processes)."""
    device: str = "cpu"
    """Learner device, ``cpu`` or ``cuda`` (actors always run on CPU) (device name)."""
    ray: str | None = None
    """Run the ``actors`` as Ray actors on this cluster (``auto``, ``local``, ``HOST:PORT``;
    ``twilight_env.util.distributed``) instead of local processes; None: local (address)."""
    seed: int = 1
    """Seed of deals, exploration, weights and evaluation deals (integer)."""
    logdir: str = "runs"
    """Parent folder of run directories (path)."""
    resume: str | None = None
    """Run directory to continue from its last checkpoint (path); None = a fresh run."""
    init: str | None = None
    """A new run's starting weights: a checkpoint (``.pt``) or an ``.npz`` export of the same
    number of players, whose network shape (trunk, heads) the run takes; ``default`` names
    the shipped ``agents/weights/neural_{3,4}p.npz``; None = random weights (path)."""
    eval_every: int = 200_000
    """Decisions between evaluations (decisions); 0 = evaluate only at the end."""
    eval_deals: int = 200
    """Duplicate evaluation deals per opponent, each played twice with sides swapped (deals)."""
    eval_opponents: tuple = ("heuristic", "random")
    """Opponent agent specs for evaluation (:func:`twilight_env.agents.base.make_agent` specs, e.g. ``heuristic``,
    ``pimc:worlds=16``, ``neural:default``) (specs). A new run stops with an error on a spec that
    cannot be built; a resumed run skips it with a printed note (so a run whose opponent
    checkpoint is gone can still continue)."""
    checkpoint_every: float = 5.0
    """Minutes between checkpoints (minutes); one is always written at the end."""
    lr: float = 1e-3
    """Adam learning rate (per update)."""
    batch_size: int = 1024
    """Samples per gradient update (decisions)."""
    reuse: float = 2.0
    """Average times each recorded decision is used in an update (ratio)."""
    buffer_size: int = 200_000
    """Replay buffer capacity, most recent samples kept (decisions)."""
    max_grad_norm: float = 10.0
    """Gradient clipping norm (L2 norm of all gradients)."""
    epsilon: float = 0.05
    """Exploration: probability of a uniformly random legal action in self-play (probability)."""
    games_per_actor: int = 1024
    """Deals each actor plays side by side, batched through one forward pass (deals)."""
    selfplay_engine: str = "vector"
    """Self-play generator: ``vector`` (the batch engine, ``twilight_env.training.vec_selfplay``) or
    ``scalar`` (one engine ``State`` per deal, ``twilight_env.training.selfplay``); same samples, different speed (name)."""
    chunk: int = 8192
    """Self-play decisions an actor generates between weight refreshes (decisions)."""
    pool_prob: float = 0.2
    """Probability a self-play deal pits the current network against a past snapshot (probability)."""
    pool_size: int = 8
    """Past snapshots kept in the opponent pool (snapshots)."""
    snapshot_every: int = 500_000
    """Self-play decisions per actor between snapshots added to the pool (decisions)."""
    trunk: tuple = (256, 256)
    """Hidden widths of the shared state trunk (units)."""
    head: tuple = (128,)
    """Hidden widths of each role head (units)."""
    shared_head: bool = False
    """3 players: one head for every role instead of four (an ablation; the role is also in the features) (flag)."""
    threads: int = 1
    """torch intra-op threads per process (threads)."""
    progress: bool = True
    """Show a tqdm progress bar (flag)."""

    def validate(self) -> "TrainConfig":
        """Check values (types, and the ranges of :data:`LIMITS`, :data:`FLOAT_LIMITS` and
        :data:`MAX_LAYERS`/:data:`MAX_WIDTH`); return self.

        Raises:
            ValueError: naming the bad field and what is allowed.
        """
        if self.players not in (3, 4) or isinstance(self.players, bool):
            raise ValueError(f"players must be 3 or 4, got {self.players!r}")
        if self.minutes is None and self.decisions is None:
            raise ValueError("give a budget: --minutes M or --decisions N (or both)")
        for name, (low, high) in LIMITS.items():
            if getattr(self, name) is not None:
                _check_int(getattr(self, name), name, low, high)
        for name, (low, high) in FLOAT_LIMITS.items():
            if getattr(self, name) is not None:
                _check_float(getattr(self, name), name, low, high)
        for name in ("epsilon", "pool_prob"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
        _check_layers(self.trunk, "trunk")
        _check_layers(self.head, "head")
        if not isinstance(self.shared_head, bool):
            raise ValueError(f"shared_head must be true or false, got {self.shared_head!r}")
        if not isinstance(self.eval_opponents, (tuple, list)) or not all(isinstance(x, str)
                                                                         for x in self.eval_opponents):
            raise ValueError(f"eval_opponents must be a list of agent specs, got {self.eval_opponents!r}")
        if self.minutes is not None and not self.minutes > 0:
            raise ValueError(f"minutes must be > 0, got {self.minutes!r}")
        if self.decisions is not None and self.decisions < 1:
            raise ValueError(f"decisions must be >= 1, got {self.decisions!r}")
        if self.actors < 0:
            raise ValueError(f"actors must be >= 0 (0 = in-process), got {self.actors!r}")
        if self.selfplay_engine not in ("vector", "scalar"):
            raise ValueError(f"selfplay_engine must be 'vector' or 'scalar', got {self.selfplay_engine!r}")
        if self.ray is not None and self.actors < 1:
            raise ValueError("--ray runs the self-play actors on a Ray cluster: give --actors 1 or more")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"--device must be 'cpu' or 'cuda', got {self.device!r}")
        for name in ("eval_every", "eval_deals", "buffer_size", "snapshot_every"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        for name in ("batch_size", "games_per_actor", "chunk", "pool_size", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("epsilon", "pool_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        if not self.lr > 0 or not self.reuse > 0 or not self.checkpoint_every > 0:
            raise ValueError("lr, reuse and checkpoint_every must be > 0")
        if self.buffer_size < self.batch_size:
            raise ValueError(f"buffer_size ({self.buffer_size}) must be >= batch_size ({self.batch_size})")
        return self

    def to_dict(self) -> dict:
        """Plain dict (tuples as lists) for checkpoints and logs."""
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """Inverse of :meth:`to_dict`; unknown keys are ignored."""
        names = {f.name for f in fields(cls)}
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in names}
        return cls(**kw)


__all__ = ["FLOAT_LIMITS", "LIMITS", "MAX_LAYERS", "MAX_WIDTH", "TrainConfig"]
