"""An NFSP training line: the two networks, their optimizers and memories, the rounds of
self-play and the gradient steps, and the checkpoint that resumes it exactly.

Best response: a Q-network (observation -> 31 action values, deal points / 360) trained by
Q-learning on the replay buffer: target ``r`` at a player's last decision of a deal, else
the target network's largest value over the legal actions of the player's next decision
(Mnih et al. 2015; the target network copied every ``target_every`` steps). Average
policy: a network (observation -> 31 logits, softmax over the legal actions) trained by
cross-entropy on the reservoir of the best response's own actions (Heinrich & Silver 2016).
Both: Adam (the fused kernel: 1.5 times faster per step on CPU than the default), ``batch`` samples per step, one step of each per ``learn_every`` decisions,
taken after each round once the buffer holds ``min_buffer`` samples. One pair of networks
serves every seat: the observation says whose view it is (role, seats relative to the
viewer, R2.1, R7).

Reproducible on CPU: one thread (``torch.set_num_threads(1)``), weights initialised from
``torch.manual_seed(seed)``, every other random number from one NumPy generator.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from twilight_env.agents.nfsp import save_weights
from twilight_env.agents.nn.network import mlp
from twilight_env.obs.encoding import OBS_SIZE
from twilight_env.rules.engine import NUM_ACTIONS
from twilight_env.training.nfsp.buffers import ReplayBuffer, Reservoir, bits_mask, unpack_obs
from twilight_env.training.nfsp.config import NfspConfig
from twilight_env.training.nfsp.selfplay import masked_logits, play_round, softmax_rows

COUNTERS = ("decisions", "deals", "rounds", "rl_steps", "sl_steps")
"""The line's counters (all ints)."""


def make_net(hidden: tuple, seed: int) -> torch.nn.Sequential:
    """An MLP ``OBS_SIZE -> hidden... -> 31`` (ReLU between layers), initialised from ``seed``."""
    torch.manual_seed(seed)
    return mlp((OBS_SIZE, *hidden, NUM_ACTIONS), final_act=False)


class NfspLine:
    """One training line (module docstring) for a checked :class:`NfspConfig`."""

    def __init__(self, cfg: NfspConfig):
        self.cfg = cfg.validate()
        torch.set_num_threads(1)
        self.qnet = make_net(cfg.hidden, cfg.seed)
        self.qtarget = copy.deepcopy(self.qnet)
        self.avgnet = make_net(cfg.hidden, cfg.seed + 1)
        self.q_opt = torch.optim.Adam(self.qnet.parameters(), lr=cfg.rl_lr, fused=True)
        self.avg_opt = torch.optim.Adam(self.avgnet.parameters(), lr=cfg.sl_lr, fused=True)
        self.rng = np.random.default_rng(cfg.seed)
        self.replay = ReplayBuffer(cfg.rl_buffer)
        self.reservoir = Reservoir(cfg.sl_buffer)
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.losses = {"rl": float("nan"), "sl": float("nan")}

    def epsilon(self) -> float:
        """The best response's exploration now (linear from ``eps_start`` to ``eps_end``)."""
        c = self.cfg
        frac = min(1.0, self.counts["decisions"] / c.eps_decay)
        return c.eps_start + frac * (c.eps_end - c.eps_start)

    def round(self) -> None:
        """One round of self-play, then the gradient steps it owes (``learn_every``)."""
        c = self.cfg
        r = play_round(c.players, c.tricks, c.games, c.eta, self.epsilon(), self.qnet, self.avgnet, self.rng)
        self.replay.add(r.rl)
        self.reservoir.add(r.sl, self.rng)
        self.counts["decisions"] += r.decisions
        self.counts["deals"] += r.deals
        self.counts["rounds"] += 1
        owed = self.counts["decisions"] // c.learn_every
        for kind, buf, step in (("rl_steps", self.replay, self._rl_step), ("sl_steps", self.reservoir, self._sl_step)):
            if buf.size < c.min_buffer:
                self.counts[kind] = owed  # steps are owed only once the buffer holds min_buffer samples
                continue
            while self.counts[kind] < owed:
                step()

    def _rl_step(self) -> None:
        b = self.replay.sample(self.rng, self.cfg.batch)
        obs = torch.from_numpy(unpack_obs(b["flags"], b["scalars"]))
        nxt = unpack_obs(b["next_flags"], b["next_scalars"])
        legal = bits_mask(b["next_legal"])
        best = np.where(legal.any(axis=1), masked_logits(self.qtarget, nxt, legal).max(axis=1), 0.0)
        target = torch.from_numpy((b["reward"] + np.where(b["done"], 0.0, best)).astype(np.float32))
        q = self.qnet(obs).gather(1, torch.from_numpy(b["action"].astype(np.int64))[:, None])[:, 0]
        loss = F.mse_loss(q, target)
        self._apply(loss, self.q_opt, "rl")
        self.counts["rl_steps"] += 1
        if self.counts["rl_steps"] % self.cfg.target_every == 0:
            self.qtarget.load_state_dict(self.qnet.state_dict())

    def _sl_step(self) -> None:
        b = self.reservoir.sample(self.rng, self.cfg.batch)
        obs = torch.from_numpy(unpack_obs(b["flags"], b["scalars"]))
        legal = torch.from_numpy(bits_mask(b["legal"]))
        logits = self.avgnet(obs).masked_fill(~legal, -1e9)
        loss = F.cross_entropy(logits, torch.from_numpy(b["action"].astype(np.int64)))
        self._apply(loss, self.avg_opt, "sl")
        self.counts["sl_steps"] += 1

    def _apply(self, loss: torch.Tensor, opt: torch.optim.Optimizer, kind: str) -> None:
        """One optimizer step; FloatingPointError (before the step) on a NaN or inf loss."""
        value = float(loss.item())
        if not np.isfinite(value):
            raise FloatingPointError(f"training diverged: the {kind} loss is {value} at {self.counts}")
        opt.zero_grad()
        loss.backward()
        opt.step()
        self.losses[kind] = value

    def probs_fn(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The average policy: ``(B, 31)`` float64 probabilities of ``(B, OBS_SIZE)`` float32
        observations and ``(B, 31)`` bool legal masks (the ``probs_fn`` of
        :func:`twilight_env.training.reduced_policy.policy_table`)."""
        return softmax_rows(masked_logits(self.avgnet, np.ascontiguousarray(obs, dtype=np.float32), mask))

    def avg_policy_bytes(self) -> bytes:
        """The ``.npz`` of the average policy for the ``nfsp`` agent (:mod:`twilight_env.agents.nfsp`)."""
        lin = [m for m in self.avgnet if isinstance(m, torch.nn.Linear)]
        layers = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in lin]
        return save_weights(layers, self.cfg.players, self.cfg.tricks)

    def state(self) -> tuple[dict, dict]:
        """``(checkpoint, buffers)``: the small dict (config, counters, weights, optimizers,
        RNG states, the buffers' counters) and the buffers' arrays."""
        ckpt = {"format": "twilight-nfsp", "version": 1, "config": self.cfg.to_dict(), "counts": dict(self.counts),
                "qnet": self.qnet.state_dict(), "qtarget": self.qtarget.state_dict(),
                "avgnet": self.avgnet.state_dict(), "q_opt": self.q_opt.state_dict(),
                "avg_opt": self.avg_opt.state_dict(), "rng": self.rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "replay": self.replay.counters(), "reservoir": self.reservoir.counters()}
        bufs = {f"replay_{k}": v for k, v in self.replay.state().items()}
        bufs.update({f"reservoir_{k}": v for k, v in self.reservoir.state().items()})
        return ckpt, bufs

    def load(self, ckpt: dict, bufs: dict) -> None:
        """Restore :meth:`state` (checked by :func:`~twilight_env.training.nfsp.store.check_checkpoint`)."""
        self.counts = {k: int(ckpt["counts"][k]) for k in COUNTERS}
        for name in ("qnet", "qtarget", "avgnet", "q_opt", "avg_opt"):
            getattr(self, name).load_state_dict(ckpt[name])
        self.rng.bit_generator.state = ckpt["rng"]
        torch.set_rng_state(ckpt["torch_rng"])
        self.replay.load({k[len("replay_"):]: v for k, v in bufs.items() if k.startswith("replay_")})
        self.reservoir.load({k[len("reservoir_"):]: v for k, v in bufs.items() if k.startswith("reservoir_")})
        for part, counters in (("replay", self.replay.counters()), ("reservoir", self.reservoir.counters())):
            if counters != {k: int(v) for k, v in ckpt[part].items()}:
                raise ValueError(f"the {part} buffer file does not match the checkpoint's counters")
