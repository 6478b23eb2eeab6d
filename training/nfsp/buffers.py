"""NFSP's two memories (Heinrich & Silver 2016, Section 4): the best response's replay buffer
(first in, first out) and the average policy's reservoir (reservoir sampling, Vitter 1985,
Algorithm R: after ``n`` offers every offered sample is held with probability ``capacity / n``).

Observations are stored packed: the ``NUM_BITS`` 0/1 flags of the env observation
(:mod:`twilight_env.obs.layout`) as bits (``np.packbits``), the ``NUM_SCALARS`` scalars as
float32; :func:`pack_obs` / :func:`unpack_obs` are exact inverses on env observations.
Legal-action masks are 31-bit ints (bit ``a`` = action ``a`` legal).

Both buffers draw every random number from the ``numpy.random.Generator`` passed in, and
their whole state is a dict of arrays and ints (:meth:`state` / :meth:`load`), so a
training line stopped and resumed samples exactly what it would have sampled unstopped.
"""

from __future__ import annotations

import numpy as np

from twilight_env.obs.layout import NUM_BITS, NUM_SCALARS, OBS_SIZE
from twilight_env.rules.engine import NUM_ACTIONS

PACKED_BITS = (NUM_BITS + 7) // 8
"""Bytes of an observation's packed flags."""
_ACTION_BITS = (1 << np.arange(NUM_ACTIONS, dtype=np.int64))


def pack_obs(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(flags (B, PACKED_BITS) uint8, scalars (B, NUM_SCALARS) float32)`` of ``(B, OBS_SIZE)``
    float32 observations (flags read as ``> 0.5``)."""
    obs = np.asarray(obs, dtype=np.float32)
    return np.packbits(obs[:, :NUM_BITS] > 0.5, axis=1), obs[:, NUM_BITS:].copy()


def unpack_obs(flags: np.ndarray, scalars: np.ndarray) -> np.ndarray:
    """``(B, OBS_SIZE)`` float32: the inverse of :func:`pack_obs`."""
    out = np.empty((len(flags), OBS_SIZE), dtype=np.float32)
    out[:, :NUM_BITS] = np.unpackbits(flags, axis=1, count=NUM_BITS)
    out[:, NUM_BITS:] = scalars
    return out


def mask_bits(mask: np.ndarray) -> np.ndarray:
    """``(B,)`` int64 bit sets of ``(B, 31)`` bool masks."""
    return (np.asarray(mask, dtype=bool) * _ACTION_BITS).sum(axis=1)


def bits_mask(bits: np.ndarray) -> np.ndarray:
    """``(B, 31)`` bool masks of ``(B,)`` bit sets (the inverse of :func:`mask_bits`)."""
    return (np.asarray(bits, dtype=np.int64)[:, None] & _ACTION_BITS) != 0


class _Arrays:
    """Named arrays of one capacity, with a count of rows held."""

    FIELDS: dict = {}

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.size = 0
        self.data = {k: np.zeros((self.capacity,) + shape, dtype=dt) for k, (shape, dt) in self.FIELDS.items()}

    def state(self) -> dict:
        """The buffer's content and counters: arrays cut to the rows held, and ints."""
        out = {k: v[:self.size].copy() for k, v in self.data.items()}
        out.update(self.counters())
        return out

    def counters(self) -> dict:
        """The ints that, with the arrays, make the whole state."""
        return {"size": self.size}

    def load(self, state: dict) -> None:
        """Restore :meth:`state`.

        Raises:
            ValueError: arrays of the wrong shapes or dtypes, or counters out of range.
        """
        size = int(state["size"])
        if not 0 <= size <= self.capacity:
            raise ValueError(f"buffer size {size} outside 0..{self.capacity}")
        for k, (shape, dt) in self.FIELDS.items():
            a = np.asarray(state[k])
            if a.shape != (size,) + shape or a.dtype != np.dtype(dt):
                raise ValueError(f"buffer array {k!r}: {a.shape} {a.dtype}, expected {(size,) + shape} {np.dtype(dt)}")
            self.data[k][:size] = a
        self.size = size
        self.load_counters(state)

    def load_counters(self, state: dict) -> None:
        """Restore the counters beyond ``size`` (none here)."""

    def sample(self, rng: np.random.Generator, n: int) -> dict:
        """``n`` rows drawn uniformly with replacement (``n`` integers from ``rng``)."""
        idx = rng.integers(0, self.size, size=n)
        return {k: v[idx] for k, v in self.data.items()}


class ReplayBuffer(_Arrays):
    """The best response's transitions ``(s, a, r, s', legal', done)``, first in first out.

    ``r`` is the own side's deal score minus the other's / 360 (R5) at a seat's last
    decision of the deal (``done``), else 0; ``s'`` is the same player's next decision.
    """

    FIELDS = {"flags": ((PACKED_BITS,), np.uint8), "scalars": ((NUM_SCALARS,), np.float32),
              "action": ((), np.int8), "reward": ((), np.float32), "done": ((), np.bool_),
              "next_flags": ((PACKED_BITS,), np.uint8), "next_scalars": ((NUM_SCALARS,), np.float32),
              "next_legal": ((), np.int64)}

    def __init__(self, capacity: int):
        super().__init__(capacity)
        self.cursor = 0

    def add(self, rows: dict) -> None:
        """Append rows (a dict of equal-length arrays, the :attr:`FIELDS`), dropping the oldest."""
        n = len(rows["action"])
        for i in range(n):  # few rows per deal: a loop keeps the ring simple
            for k in self.FIELDS:
                self.data[k][self.cursor] = rows[k][i]
            self.cursor = (self.cursor + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)

    def counters(self) -> dict:
        return {"size": self.size, "cursor": self.cursor}

    def load_counters(self, state: dict) -> None:
        cursor = int(state["cursor"])
        if not 0 <= cursor < self.capacity:
            raise ValueError(f"replay cursor {cursor} outside 0..{self.capacity - 1}")
        self.cursor = cursor


class Reservoir(_Arrays):
    """The average policy's training set: the best response's own ``(s, legal, a)``, kept by
    reservoir sampling so that it is a uniform sample of every such decision so far."""

    FIELDS = {"flags": ((PACKED_BITS,), np.uint8), "scalars": ((NUM_SCALARS,), np.float32),
              "legal": ((), np.int64), "action": ((), np.int8)}

    def __init__(self, capacity: int):
        super().__init__(capacity)
        self.offered = 0

    def add(self, rows: dict, rng: np.random.Generator) -> None:
        """Offer rows (Algorithm R): while not full each is kept; then the ``n``-th offer
        replaces a uniform row with probability ``capacity / n`` (one integer from ``rng``)."""
        for i in range(len(rows["action"])):
            self.offered += 1
            if self.size < self.capacity:
                j = self.size
                self.size += 1
            else:
                j = int(rng.integers(0, self.offered))
                if j >= self.capacity:
                    continue
            for k in self.FIELDS:
                self.data[k][j] = rows[k][i]

    def counters(self) -> dict:
        return {"size": self.size, "offered": self.offered}

    def load_counters(self, state: dict) -> None:
        offered = int(state["offered"])
        if offered < self.size:
            raise ValueError(f"reservoir offered {offered} < size {self.size}")
        self.offered = offered
