"""Settings of a Magnetic Mirror Descent run (:class:`MMDConfig`), one dataclass, every field
with its unit; stored in each checkpoint and checked on resume."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass
class MMDConfig:
    """Settings of one training line (``python -m twilight_env.training.mmd``).

    Raises (``validate``):
        ValueError: a field out of its range, naming the field and the range.
    """

    players: int = 3
    """3 or 4 (R7: in 3 players the solo decides for itself and the new moon)."""
    tricks: int = 1
    """Tricks per deal, 1..7 (below 7 a reduced deck, ``twilight_env.rules.cards.deck_mask``)."""
    seed: int = 0
    """Seed of the deals, the sampled actions and the network's initial weights."""
    deals: int = 256
    """Deals played by the current policy per update (one fresh batch per update, on-policy)."""
    lr: float = 1e-3
    """Adam learning rate at the start (the mirror-descent step size, per update)."""
    lr_decay: int = 0
    """Updates after which the learning rate is halved, and so on: ``lr / (1 + steps / lr_decay)``
    (a step size that shrinks, so the sampling noise of the policy gradient averages out);
    0: constant."""
    alpha: float = 0.05
    """Weight of KL(policy || magnet) per decision, in units of the return (deal points / 360)."""
    entropy: float = 0.0
    """Weight of an extra entropy bonus per decision (same units as ``alpha``)."""
    magnet_every: int = 10
    """Updates between two magnet moves."""
    magnet_tau: float = 0.1
    """Step of each magnet move toward the current weights: ``magnet += tau * (weights - magnet)``
    (1: the magnet is replaced, as R-NaD replaces its regularisation policy)."""
    explore: float = 0.1
    """Share of uniform play in the actions drawn during training (the behaviour policy
    ``(1 - explore) * pi + explore * uniform``; the learner weighs each action by
    ``pi / behaviour``), so that the sets a best response can reach stay visited."""
    value_coef: float = 0.5
    """Weight of the value loss (squared error of the value head against the deal's return)."""
    max_grad_norm: float = 1.0
    """Gradient-norm clip per update (0: none)."""
    trunk: tuple = (256, 256)
    """Hidden widths of a new network's trunk (ignored with initial weights: theirs are kept)."""
    head: tuple = (128,)
    """Hidden widths of a new network's per-role heads (ignored with initial weights)."""
    eval_every: int = 50
    """Updates between two curve points (NashConv on reduced decks, losses always)."""
    checkpoint_every: int = 50
    """Updates between two checkpoints (each curve point also writes one)."""
    threads: int = 1
    """Torch intra-op threads (results are reproducible for a fixed number of threads)."""
    state_dtype: str = "bfloat16"
    """How the checkpoint stores the magnet and the Adam moments: ``"bfloat16"`` (2 bytes a
    number: the checkpoint of a 525,000-parameter network is 5.3 MB instead of 8.4 MB; at
    every checkpoint the running line rounds its own magnet and moments the same way, so a
    resumed line still equals an unstopped one) or ``"float32"`` (no rounding). The
    network's weights are always stored whole (float32)."""

    def validate(self) -> "MMDConfig":
        """Check every field (class docstring; the ranges of :data:`INT_RANGES` and
        :data:`FLOAT_RANGES`); returns ``self``."""
        for name, (lo, hi) in INT_RANGES.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"{name} must be {range_words(name)}, got {v!r}")
        for name, (lo, hi) in FLOAT_RANGES.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= float(v) <= hi:
                raise ValueError(f"{name} must be {range_words(name)}, got {v!r}")
            setattr(self, name, float(v))
        if self.state_dtype not in STATE_DTYPES:
            raise ValueError(f"state_dtype must be one of {', '.join(STATE_DTYPES)}, got {self.state_dtype!r}")
        for name in ("trunk", "head"):
            v = tuple(getattr(self, name))
            if not v or any(isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= MAX_WIDTH for x in v):
                raise ValueError(f"{name} must be 1+ layer widths in 1..{MAX_WIDTH}, got {getattr(self, name)!r}")
            setattr(self, name, v)
        return self

    def lr_at(self, steps: int) -> float:
        """The learning rate of update number ``steps + 1`` (``lr_decay``)."""
        return self.lr / (1.0 + steps / self.lr_decay) if self.lr_decay else self.lr

    def to_dict(self) -> dict:
        """Plain dict (lists for the widths), as stored in checkpoints."""
        d = asdict(self)
        d["trunk"], d["head"] = list(self.trunk), list(self.head)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "MMDConfig":
        """The config of :meth:`to_dict`, validated.

        Raises:
            ValueError: unknown or missing keys, or a value out of range.
        """
        if not isinstance(d, dict):
            raise ValueError(f"an MMD config must be a dict, got {type(d).__name__}")
        names = {f.name for f in fields(cls)}
        d = {**{k: v for k, v in ADDED.items() if k not in d}, **d}
        if set(d) != names:
            raise ValueError(f"MMD config keys differ: unknown {sorted(set(d) - names)}, missing {sorted(names - set(d))}")
        d = dict(d)
        d["trunk"], d["head"] = tuple(d["trunk"]), tuple(d["head"])
        return cls(**d).validate()


INT_RANGES = {"players": (3, 4), "tricks": (1, 7), "seed": (0, 2**63 - 1), "deals": (1, 1 << 20),
              "magnet_every": (1, 1 << 30), "lr_decay": (0, 1 << 40), "eval_every": (1, 1 << 30),
              "checkpoint_every": (1, 1 << 30), "threads": (1, 1024)}
"""The integer fields of :class:`MMDConfig` and their inclusive ranges."""
FLOAT_RANGES = {"lr": (1e-8, 1.0), "alpha": (0.0, 100.0), "entropy": (0.0, 100.0), "magnet_tau": (0.0, 1.0),
                "explore": (0.0, 0.99), "value_coef": (0.0, 100.0), "max_grad_norm": (0.0, 1e6)}
"""The number fields of :class:`MMDConfig` and their inclusive ranges (NaN and inf are outside)."""


def range_words(name: str) -> str:
    """What field ``name`` of :data:`INT_RANGES` or :data:`FLOAT_RANGES` takes, in words:
    ``"an integer in 3..4"``, ``"a number in [0.0, 1.0]"``.

    Raises:
        KeyError: a field in neither table.
    """
    if name in INT_RANGES:
        return "an integer in {}..{}".format(*INT_RANGES[name])
    return "a number in [{}, {}]".format(*FLOAT_RANGES[name])


STATE_DTYPES = ("bfloat16", "float32")
"""The values of :attr:`MMDConfig.state_dtype`."""

MAX_WIDTH = 4096
"""The widest layer of ``trunk`` and ``head`` (units)."""

ADDED = {"explore": 0.0, "state_dtype": "float32"}
"""Fields added after the first checkpoints, with the value those lines ran with."""

__all__ = ["ADDED", "FLOAT_RANGES", "INT_RANGES", "MAX_WIDTH", "MMDConfig", "STATE_DTYPES", "range_words"]
