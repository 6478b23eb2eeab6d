"""The Deep Monte-Carlo learner: its state (network, optimizer, replay buffer, random
generators, counters), how it is built fresh or from a checkpoint, and one learner step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from twilight_env.agents.nn.checkpoint import load_checkpoint, model_from_checkpoint
from twilight_env.agents.nn.features import NUM_MASKS, num_roles
from twilight_env.agents.nn.network import NetConfig, QNetwork
from twilight_env.training.config import TrainConfig
from twilight_env.training.runtime import TrainingDiverged, set_rng_state


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
        set_rng_state(learner.rng, rng["learner"])
    if rng.get("selfplay") is not None:
        set_rng_state(learner.selfplay_rng, rng["selfplay"])
    if "torch" in rng:
        torch.set_rng_state(rng["torch"])
    if "buffer" in ckpt:
        learner.buffer.load_state_dict(ckpt["buffer"])
    learner.update_credit = float(ckpt.get("update_credit", 0.0))
    learner.last_eval = dict(ckpt.get("last_eval", {}))
    return learner


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


def last_eval_step(learner: Learner) -> int:
    """Decisions count of the last evaluation logged, -1 if none."""
    return max((v["at_decisions"] for v in learner.last_eval.values()), default=-1)


def cpu_copy(model: QNetwork, net_cfg: NetConfig) -> QNetwork:
    """A copy of ``model`` (shape ``net_cfg``) on the CPU, in evaluation mode (self-play and evaluation run there)."""
    m = QNetwork(net_cfg)
    m.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
    return m.eval()



__all__ = ["Learner", "ReplayBuffer", "build_learner", "cpu_copy", "last_eval_step", "learner_step"]
