"""Settings of an NFSP training line (:class:`NfspConfig`), one dataclass with units."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

MAX_BUFFER = 5_000_000
"""Largest replay or reservoir buffer accepted (samples)."""


@dataclass
class NfspConfig:
    """One NFSP training line (Heinrich & Silver 2016, Algorithm 1; defaults after OpenSpiel's
    ``nfsp`` example on Leduc poker, with Adam and a Monte Carlo / Q-learning target)."""

    players: int = 3
    """3 or 4 (R2.1, R7)."""
    tricks: int = 1
    """Tricks per deal, 1..7 (7: the full deck; fewer: the reduced deck of ``deck_mask``)."""
    seed: int = 1
    """Seeds the deals, the policy draws, the buffers' samples and the weights' initialisation."""
    eta: float = 0.1
    """Anticipatory parameter: probability that a player plays its best response (and
    records the actions for the average policy) in a deal, else its average policy."""
    hidden: tuple = (256, 256)
    """Hidden layer widths of both networks (observation -> hidden -> 31)."""
    games: int = 64
    """Deals played side by side in one round (decisions of a round are batched)."""
    rl_buffer: int = 200_000
    """Capacity of the best response's replay buffer (transitions, first in first out)."""
    sl_buffer: int = 1_000_000
    """Capacity of the average policy's reservoir (samples, reservoir sampling)."""
    batch: int = 128
    """Samples per gradient step (both networks)."""
    learn_every: int = 32
    """Decisions (all seats together) per gradient step of each network."""
    rl_lr: float = 1e-3
    """Adam learning rate of the best response (Q-network)."""
    sl_lr: float = 1e-3
    """Adam learning rate of the average policy."""
    target_every: int = 300
    """Q-network gradient steps between copies into the target network."""
    eps_start: float = 0.06
    """Exploration of the best response (epsilon-greedy) at the start."""
    eps_end: float = 0.0
    """... at ``eps_decay`` decisions and after."""
    eps_decay: int = 2_000_000
    """Decisions over which epsilon falls linearly from ``eps_start`` to ``eps_end``."""
    min_buffer: int = 1000
    """Samples a buffer holds before its network takes gradient steps."""

    def validate(self) -> "NfspConfig":
        """``self`` if every field is in range.

        Raises:
            ValueError: naming the field and what is allowed.
        """
        def bad(name, allowed):
            raise ValueError(f"NFSP setting {name} must be {allowed}, got {getattr(self, name)!r}")

        for name in ("games", "batch", "learn_every", "target_every", "rl_buffer", "sl_buffer", "eps_decay"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_BUFFER:
                bad(name, f"an integer in 1..{MAX_BUFFER:,}")
        if self.players not in (3, 4):
            bad("players", "3 or 4")
        if isinstance(self.tricks, bool) or self.tricks not in range(1, 8):
            bad("tricks", "an integer 1..7")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2 ** 32:
            bad("seed", "an integer in 0..2^32-1")
        if isinstance(self.min_buffer, bool) or not isinstance(self.min_buffer, int) or self.min_buffer < self.batch:
            bad("min_buffer", f"an integer >= batch ({self.batch})")
        for name, lo, hi in (("eta", 0.0, 1.0), ("eps_start", 0.0, 1.0), ("eps_end", 0.0, 1.0),
                             ("rl_lr", 1e-8, 1.0), ("sl_lr", 1e-8, 1.0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                bad(name, f"a number in [{lo:g}, {hi:g}]")
        h = tuple(self.hidden)
        if not 1 <= len(h) <= 4 or any(isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= 4096 for w in h):
            bad("hidden", "1 to 4 layer widths in 1..4096")
        self.hidden = h
        return self

    def to_dict(self) -> dict:
        """A plain dict (``hidden`` as a list), as stored in checkpoints."""
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NfspConfig":
        """The config of :meth:`to_dict`, checked.

        Raises:
            ValueError: an unknown or missing field, or one out of range.
        """
        names = {f.name for f in fields(cls)}
        if not isinstance(d, dict) or set(d) != names:
            raise ValueError(f"an NFSP config holds exactly the fields {sorted(names)}")
        d = dict(d)
        d["hidden"] = tuple(d["hidden"])
        return cls(**d).validate()
