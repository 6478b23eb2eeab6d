"""The batch engine's array side: the rules' tables as NumPy arrays, the NumPy and torch
array-ops shims that :class:`twilight_env.envs.vector.VectorEngine` runs on, and the
random and explicit deals as hand masks (R2.3). :mod:`twilight_env.envs.vector` re-exports
these names.
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules import tables as _tables
from twilight_env.rules.cards import CULT_MASK, NUM_CARDS, STRENGTH, SUN_MASK
from twilight_env.obs.encoding import BYTE_FLOATS as _BYTE_FLOAT_ROWS
from twilight_env.rules.engine import SEAT_CULT_3, SEAT_CULT_4, validate_deal

HALF = 14
"""Cards per cult; a cult's cards are a 14-bit half of a mask."""
HALF_MASK = SUN_MASK
"""0x3FFF: the low (Sun) half of a mask."""
DUMP = NUM_CARDS
"""Index 28: 'no card' in the padded tables and the spare column of ``history``."""

# ----------------------------------------------------------------------------------
# NumPy tables, built once
# ----------------------------------------------------------------------------------
_HALF_RANGE = np.arange(1 << HALF, dtype=np.int64)
HALF_BITS = ((_HALF_RANGE[:, None] >> np.arange(HALF)) & 1).astype(np.bool_)
"""(16384, 14) bool: ``HALF_BITS[m, b]`` = bit ``b`` of the 14-bit mask ``m``."""
# the rules' tables (twilight_env.rules.tables), as writable copies (torch takes no read-only array)
HALF_SOULS = np.array(_tables.HALF_SOULS)
"""(16384,) int64: souls (R5.1) of a 14-bit half mask (both cults' cards have the same souls)."""
HALF_MULT = np.array(_tables.HALF_MULT)
"""(16384,) int64: sum of sanctuary multipliers (R5.2) of a 14-bit half mask."""
HALF_COUNT = np.array(_tables.HALF_COUNT)
"""(16384,) int64: number of cards in a 14-bit half mask."""
HALF_SELECT = np.argsort(~HALF_BITS, axis=1, kind="stable").astype(np.int64)
HALF_SELECT[np.arange(HALF)[None, :] >= HALF_COUNT[:, None]] = 0
HALF_SELECT = HALF_SELECT.reshape(-1)
"""(16384 * 14,) int64: ``HALF_SELECT[m * 14 + k]`` = position of the k-th set bit of the
14-bit mask ``m`` (0 past its last set bit)."""
STRENGTH_X = np.array(list(STRENGTH) + [-1] * 4, dtype=np.int64)
"""(32,) int64: trick strength (R1, R4.1) by card id; 28..31 (no card) -1."""
POW2_X = np.array([1 << i for i in range(NUM_CARDS)] + [0] * 4, dtype=np.int64)
"""(32,) int64: ``1 << id`` by card id; 28..31 (no card) 0. Index with ``id & 31`` so -1 gives 0."""
SEAT_CULT = {4: np.array(SEAT_CULT_4, dtype=np.int64), 3: np.array(SEAT_CULT_3, dtype=np.int64)}
"""Cult (0 Sun, 1 Moon) of each seat 0..3, by number of players (R2.1, R7.2)."""
CULT_MASK_X = np.array(CULT_MASK, dtype=np.int64)
"""(2,) int64: the 28-bit mask of each cult's cards."""
ALL_CARDS = (1 << NUM_CARDS) - 1


# ----------------------------------------------------------------------------------
# Array-ops shims: the few operations where NumPy and torch spell things differently
# ----------------------------------------------------------------------------------
class _NumpyOps:
    name = "numpy"
    int64, int32, int8, bool_, float32, float64, uint8 = (np.int64, np.int32, np.int8, np.bool_,
                                                           np.float32, np.float64, np.uint8)

    def __init__(self, device=None):
        if device not in (None, "cpu"):
            raise ValueError(f"the numpy backend runs on the CPU only; got device={device!r}")
        self.device = "cpu"

    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=dtype)

    def table(self, x):
        return np.ascontiguousarray(x)

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype=dtype)

    def empty(self, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def full(self, shape, value, dtype):
        return np.full(shape, value, dtype=dtype)

    def arange(self, n, dtype=np.int64):
        return np.arange(n, dtype=dtype)

    where = staticmethod(np.where)

    @staticmethod
    def gather(a, fi):
        """``a.reshape(-1)[fi]`` (fast flat take)."""
        return a.reshape(-1).take(fi)

    @staticmethod
    def scatter(a, fi, v):
        """``a.reshape(-1)[fi] = v`` in place; ``a`` must be contiguous."""
        a.reshape(-1)[fi] = v

    @staticmethod
    def lookup(table, idx):
        return table.take(idx)

    @staticmethod
    def cast(x, dtype):
        return x.astype(dtype, copy=False)

    @staticmethod
    def to_numpy(x):
        return np.asarray(x)

    @staticmethod
    def stack(xs, axis):
        return np.stack(xs, axis=axis)

    @staticmethod
    def is_bool(x):
        return x.dtype == np.bool_

    @staticmethod
    def is_int(x):
        return x.dtype.kind in "iu"

    @staticmethod
    def uniform(rng, n):
        return rng.random(n)

    @staticmethod
    def unpack_bits(x, nbits):
        """(B,) int64 of ``nbits`` <= 64 bits -> (B, nbits) bool, column k = bit k."""
        x = np.ascontiguousarray(x, dtype=np.int64)
        u8 = x.view(np.uint8).reshape(x.shape[0], 8)
        if u8.dtype.byteorder == ">" or np.little_endian is False:  # pragma: no cover
            u8 = u8[:, ::-1]
        return np.unpackbits(u8, axis=1, count=nbits, bitorder="little").view(np.bool_)

    # float32 patterns of the 8 bits of a byte (little-endian bit order), as 32-byte items
    _BYTE_FLOATS = _BYTE_FLOAT_ROWS.view(np.dtype((np.void, 32))).reshape(256)

    @staticmethod
    def pack_slots(slots, layout, nwords: int):
        """Pack the flag fields held in 64-bit slots into the flag layout.

        Args:
            slots: (B, S) int64; slot ``j`` holds a field of ``width`` bits.
            layout: has ``fields``, a sequence of ``(slot, dest, width)``: the low ``width``
                bits of slot ``slot`` are flags ``dest .. dest + width - 1``.
            nwords: number of 64-bit words per row to return.

        Returns:
            (B, nwords) uint64, little-endian: flag ``k`` is bit ``k % 64`` of word ``k // 64``.
        """
        u = slots.view(np.uint64)
        words = [None] * nwords
        for j, d, w in layout.fields:
            k, sh = d >> 6, d & 63
            v = u[:, j]
            x = v << np.uint64(sh) if sh else v
            words[k] = x if words[k] is None else words[k] | x
            if sh + w > 64:
                y = v >> np.uint64(64 - sh)
                words[k + 1] = y if words[k + 1] is None else words[k + 1] | y
        packed = np.zeros((slots.shape[0], nwords), dtype=np.uint64)
        for k, x in enumerate(words):
            if x is not None:
                packed[:, k] = x
        if not np.little_endian:  # pragma: no cover
            packed = packed.byteswap()
        return packed

    def unpack_slots(self, slots, layout, out):
        """Write the flag bits held in 64-bit slots into ``out`` (B, N) float32 as 0/1.

        The slots are packed into the flag layout (:meth:`pack_slots`), then each byte is
        turned into 8 floats by one table lookup straight into ``out`` viewed as 32-byte
        items, which costs about as much as filling ``out``. Entries past the flags (up to
        the next multiple of 8) get junk: the caller writes its scalars there afterwards.
        """
        row_bytes = out.shape[1] * 4
        if row_bytes % 32 == 0 and out.flags.c_contiguous:
            packed = self.pack_slots(slots, layout, (out.shape[1] + 63) // 64)
            np.take(self._BYTE_FLOATS, packed.view(np.uint8)[:, :row_bytes // 32],
                    out=out.view(np.dtype((np.void, 32))), mode="clip")
        else:
            packed = self.pack_slots(slots, layout, (layout.nbits + 63) // 64)
            out[:, :layout.nbits] = np.unpackbits(packed.view(np.uint8), axis=1, count=layout.nbits,
                                                  bitorder="little")


class _TorchOps:
    name = "torch"

    def __init__(self, device=None):
        import torch  # lazy: the module stays importable without torch

        self.torch = torch
        self.device = torch.device(device if device is not None else "cpu")
        self.int64, self.int32, self.int8, self.bool_ = torch.int64, torch.int32, torch.int8, torch.bool
        self.float32, self.float64, self.uint8 = torch.float32, torch.float64, torch.uint8

    def asarray(self, x, dtype=None):
        t = self.torch
        if isinstance(x, t.Tensor):
            return x.to(device=self.device, dtype=dtype if dtype is not None else x.dtype)
        x = np.asarray(x)
        if dtype is None and x.dtype == np.uint64:
            x = x.astype(np.int64)
        return t.as_tensor(x, device=self.device, dtype=dtype)

    def table(self, x):
        return self.asarray(np.ascontiguousarray(x))

    def zeros(self, shape, dtype):
        return self.torch.zeros(shape, dtype=dtype, device=self.device)

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=dtype, device=self.device)

    def full(self, shape, value, dtype):
        return self.torch.full(shape, value, dtype=dtype, device=self.device)

    def arange(self, n, dtype=None):
        return self.torch.arange(n, dtype=dtype or self.torch.int64, device=self.device)

    def where(self, cond, x, y):
        return self.torch.where(cond, x, y)

    @staticmethod
    def gather(a, fi):
        return a.view(-1)[fi]

    @staticmethod
    def scatter(a, fi, v):
        a.view(-1)[fi] = v.to(a.dtype) if hasattr(v, "dtype") else v

    @staticmethod
    def lookup(table, idx):
        return table[idx]

    @staticmethod
    def cast(x, dtype):
        return x.to(dtype)

    @staticmethod
    def to_numpy(x):
        return x.detach().cpu().numpy()

    def stack(self, xs, axis):
        return self.torch.stack(xs, dim=axis)

    def is_bool(self, x):
        return x.dtype == self.torch.bool

    def is_int(self, x):
        return not x.dtype.is_floating_point and not x.dtype.is_complex and x.dtype != self.torch.bool

    def __reduce__(self):
        """Pickle and deepcopy by device (the torch module itself cannot be pickled)."""
        return _TorchOps, (str(self.device),)

    def uniform(self, rng, n):
        # a numpy Generator gives the same draws as the numpy backend (same games); a
        # torch.Generator on the device avoids the transfer
        if isinstance(rng, self.torch.Generator):
            return self.torch.rand(n, generator=rng, device=self.device, dtype=self.torch.float64)
        return self.asarray(rng.random(n))

    def unpack_bits(self, x, nbits):
        shifts = self.arange(nbits)
        return ((x[:, None] >> shifts) & 1) != 0

    def unpack_slots(self, slots, layout, out):
        src = getattr(layout, "_src_t", None)
        if src is None or src.device != self.device:
            src = layout._src_t = self.asarray(layout.src)
        bits = ((slots[:, :, None] >> self.arange(64)) & 1).view(slots.shape[0], -1)
        out[:, :layout.nbits] = bits.index_select(1, src)


def make_ops(backend: str = "numpy", device=None):
    """The array-ops shim for ``backend`` (``"numpy"`` or ``"torch"``) on ``device``.

    Raises:
        ValueError: on another backend name, or a device other than the CPU for NumPy.
    """
    if backend == "numpy":
        return _NumpyOps(device)
    if backend == "torch":
        return _TorchOps(device)
    raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")


def check_int_at_least(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def random_hands_batch(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniformly shuffled deals (R2.3) as hand masks.

    Args:
        rng: the ``numpy.random.Generator`` to draw from.
        n: number of deals, >= 0.

    Returns:
        (n, 4) int64, ``[deal, seat]`` 28-bit hand masks, 7 cards each, all 28 once.
    """
    perm = np.argsort(rng.random((n, NUM_CARDS)), axis=1)
    return POW2_X[perm].reshape(n, 4, 7).sum(axis=2)


def _popcount(m: np.ndarray) -> np.ndarray:
    return HALF_COUNT[m & HALF_MASK] + HALF_COUNT[(m >> HALF) & HALF_MASK]


def deals_to_hands(deals) -> np.ndarray:
    """Hand masks of explicit deals.

    Args:
        deals: an int array ``(n, 4)`` of hand masks, an int array ``(n, 4, 7)`` of card
            ids, or a sequence of ``n`` deals, each four hands of 7 card codes (or ids).

    Returns:
        (n, 4) int64 hand masks.

    Raises:
        ValueError: unless each deal is 4 hands of 7 distinct cards holding all 28 once
            (R2.3), saying which deal is wrong and why.
    """
    try:
        arr = np.asarray(deals)
    except (ValueError, TypeError):
        arr = None
    if arr is not None and arr.dtype.kind in "iu" and arr.ndim in (2, 3):
        if arr.ndim == 3:
            if arr.shape[1:] != (4, 7):
                raise ValueError(f"card-id deals must have shape (n, 4, 7), got {arr.shape}")
            if arr.size and (arr.min() < 0 or arr.max() >= NUM_CARDS):
                raise ValueError("card ids must be in 0..27")
            hands = POW2_X[arr].sum(axis=2)
            dup = _popcount(np.bitwise_or.reduce(hands, axis=1)) != NUM_CARDS
        else:
            if arr.shape[1] != 4:
                raise ValueError(f"hand-mask deals must have shape (n, 4), got {arr.shape}")
            hands = arr.astype(np.int64)
            if ((hands < 0) | (hands > ALL_CARDS)).any():
                raise ValueError("hand masks must be 28-bit (0 <= mask < 2**28)")
            dup = np.zeros(len(hands), bool)
        counts = _popcount(hands)
        bad = dup | (counts != 7).any(axis=1) | (np.bitwise_or.reduce(hands, axis=1) != ALL_CARDS)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"deal {i} is not 4 hands of 7 distinct cards holding all 28 once "
                             f"(cards per hand: {counts[i].tolist()})")
        return hands
    out = []
    for i, deal in enumerate(deals):
        try:
            out.append(validate_deal(deal))
        except ValueError as e:
            raise ValueError(f"deal {i}: {e}") from None
    return np.array(out, dtype=np.int64).reshape(-1, 4)
