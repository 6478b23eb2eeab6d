"""A batch engine: B Twilight deals held as arrays and stepped with one call.

The scalar :class:`~twilight_env.engine.State` is the reference; :class:`VectorEngine`
plays the same rules (R3-R5, R7.1-R7.3) on B deals at once, and
:class:`TwilightVectorEnv` wraps it as a vectorized RL environment with auto-reset.
``tests/vector/`` plays thousands of random deals through both engines action by action
and checks that masks, observations, tricks, piles and scores agree.

Backends
--------
The kernels are written once against a small array-ops shim, so the same code runs on
NumPy arrays (the default; this module imports only NumPy at load time) or on torch
tensors, CPU or CUDA (``backend="torch"``; torch is imported only then). Every step is a
fixed sequence of whole-batch array operations: there is no Python loop over the batch
and no data-dependent branch, which is what a GPU wants. Lookup tables (strength, souls,
multipliers, bit -> flags of a 14-bit half mask) are built once in NumPy and copied to the
backend.

State arrays (``B`` = ``num_envs``; masks are 28-bit ints, bit ``i`` = card id ``i``)
----------------------------------------------------------------------------------
| name | shape, dtype | meaning |
|------|--------------|---------|
| ``hands`` | (B, 4) int64 | cards each seat holds now (masks) |
| ``leader``, ``first_leader`` | (B,) int64 | seat leading this trick / the first trick |
| ``trick`` | (B,) int64 | tricks finished, 0..7 (7 = deal over) |
| ``place`` | (B,) int64 | places filled in this trick, 0..3 |
| ``phase`` | (B,) int64 | 0 choose, 1 hold (R3.2) |
| ``holder`` | (B,) int64 | requested seat in the hold phase, else -1 |
| ``cards``, ``holders`` | (B, 4) int64 | this trick's card id / holder seat by place, -1 empty |
| ``trick_mask`` | (B,) int64 | cards of this trick (mask) |
| ``best``, ``best_place`` | (B,) int64 | strength and place of the card leading this trick (R4.1), -1 / 0 when empty |
| ``pending`` | (B,) int64 | the pending Purgatory pile (R4.3) |
| ``neutral`` | (B,) int64 | cards left neutral by a last-trick Purgatory (R4.4) |
| ``captured`` | (B, 4) int64 | cards taken by each seat (R4.2) |
| ``card_chooser``, ``card_holder`` | (B, 28) int8 | per card id: seat it was played for / seat whose hand it left, -1 unplayed |
| ``card_order`` | (B, 28) int8 | per card id: its index 0..27 in the play order, -1 unplayed |

About 300 bytes per deal (:meth:`VectorEngine.nbytes_per_deal`). The per-card arrays
carry one extra column (index 28) that absorbs writes of rows that did not play a card.

Action encoding (INTERFACE.md): ``0..27`` play that card id from the acting hand,
``28 + o - 1`` request the seat at offset ``o`` (1..3) from the chooser.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .cards import (
    CULT_MASK,
    MULTIPLIER,
    NUM_CARDS,
    PURGATORY_MASK,
    SOULS,
    STRENGTH,
    SUN_MASK,
)
from .engine import (
    CHOOSE,
    HOLD,
    NEW_MOON,
    NUM_ACTIONS,
    NUM_TRICKS,
    REQUEST_BASE,
    SEAT_CULT_3,
    SEAT_CULT_4,
    State,
    validate_deal,
)

HALF = 14
"""Cards per cult; a cult's cards are a 14-bit half of a mask."""
HALF_MASK = SUN_MASK
"""0x3FFF: the low (Sun) half of a mask."""
_DUMP = NUM_CARDS
"""Column 28 of the per-card arrays: absorbs the writes of rows that played no card."""

# ----------------------------------------------------------------------------------
# NumPy tables, built once
# ----------------------------------------------------------------------------------
_HALF_RANGE = np.arange(1 << HALF, dtype=np.int64)
HALF_BITS = ((_HALF_RANGE[:, None] >> np.arange(HALF)) & 1).astype(np.bool_)
"""(16384, 14) bool: ``HALF_BITS[m, b]`` = bit ``b`` of the 14-bit mask ``m``."""
HALF_SOULS = (HALF_BITS.astype(np.int64) @ np.array(SOULS[:HALF], dtype=np.int64)).astype(np.int64)
"""(16384,) int64: souls (R5.1) of a 14-bit half mask (both cults have the same souls)."""
HALF_MULT = (HALF_BITS.astype(np.int64) @ np.array(MULTIPLIER[:HALF], dtype=np.int64)).astype(np.int64)
"""(16384,) int64: sum of sanctuary multipliers (R5.2) of a 14-bit half mask."""
HALF_COUNT = HALF_BITS.sum(axis=1).astype(np.int64)
"""(16384,) int64: popcount of a 14-bit half mask."""
STRENGTH_X = np.array(list(STRENGTH) + [-1], dtype=np.int64)
"""(29,) int64: trick strength (R1, R4.1) by card id; index 28 (no card) -1."""
POW2_X = np.array([1 << i for i in range(NUM_CARDS)] + [0], dtype=np.int64)
"""(29,) int64: ``1 << id``; index 28 (no card) 0."""
SEAT_CULT = {4: np.array(SEAT_CULT_4, dtype=np.int64), 3: np.array(SEAT_CULT_3, dtype=np.int64)}
"""Cult (0 Sun, 1 Moon) of each seat 0..3, by number of players (R2.1, R7.2)."""
CULT_MASK_X = np.array(CULT_MASK, dtype=np.int64)
"""(2,) int64: the 28-bit mask of each cult's cards."""


# ----------------------------------------------------------------------------------
# Array-ops shims: the few operations where NumPy and torch spell things differently
# ----------------------------------------------------------------------------------
class _NumpyOps:
    name = "numpy"
    int64, int8, bool_, float32, uint8 = np.int64, np.int8, np.bool_, np.float32, np.uint8

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

    def full(self, shape, value, dtype):
        return np.full(shape, value, dtype=dtype)

    def arange(self, n, dtype=np.int64):
        return np.arange(n, dtype=dtype)

    where = staticmethod(np.where)

    @staticmethod
    def take_along(a, idx):
        return np.take_along_axis(a, idx, axis=1)

    @staticmethod
    def cast(x, dtype):
        return x.astype(dtype, copy=False)

    @staticmethod
    def to_numpy(x):
        return np.asarray(x)

    @staticmethod
    def copy(x):
        return x.copy()

    @staticmethod
    def cat(xs, axis):
        return np.concatenate(xs, axis=axis)


class _TorchOps:
    name = "torch"

    def __init__(self, device=None):
        import torch  # lazy: the module stays importable without torch

        self.torch = torch
        self.device = torch.device(device if device is not None else "cpu")
        self.int64, self.int8, self.bool_ = torch.int64, torch.int8, torch.bool
        self.float32, self.uint8 = torch.float32, torch.uint8

    def asarray(self, x, dtype=None):
        t = self.torch
        if isinstance(x, t.Tensor):
            return x.to(device=self.device, dtype=dtype if dtype is not None else x.dtype)
        x = np.asarray(x)
        return t.as_tensor(x, device=self.device, dtype=dtype)

    def table(self, x):
        return self.asarray(np.ascontiguousarray(x))

    def zeros(self, shape, dtype):
        return self.torch.zeros(shape, dtype=dtype, device=self.device)

    def full(self, shape, value, dtype):
        return self.torch.full(shape, value, dtype=dtype, device=self.device)

    def arange(self, n, dtype=None):
        return self.torch.arange(n, dtype=dtype or self.torch.int64, device=self.device)

    def where(self, cond, x, y):
        return self.torch.where(cond, x, y)

    def take_along(self, a, idx):
        return self.torch.gather(a, 1, idx)

    @staticmethod
    def cast(x, dtype):
        return x.to(dtype)

    @staticmethod
    def to_numpy(x):
        return x.detach().cpu().numpy()

    @staticmethod
    def copy(x):
        return x.clone()

    def cat(self, xs, axis):
        return self.torch.cat(xs, dim=axis)


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


def _check_int(name: str, value, low: int) -> int:
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


def deals_to_hands(deals) -> np.ndarray:
    """Hand masks of explicit deals.

    Args:
        deals: either an int array ``(n, 4)`` of hand masks, an int array ``(n, 4, 7)`` of
            card ids, or a sequence of ``n`` deals of four hands of card codes (or ids).

    Returns:
        (n, 4) int64 hand masks.

    Raises:
        ValueError: unless each deal is 4 hands of 7 distinct cards holding all 28 once
            (R2.3), saying which deal is wrong and why.
    """
    arr = None
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
        else:
            if arr.shape[1] != 4:
                raise ValueError(f"mask deals must have shape (n, 4), got {arr.shape}")
            hands = arr.astype(np.int64)
        for i, h in enumerate(hands):
            counts = [int(HALF_COUNT[x & HALF_MASK] + HALF_COUNT[(x >> HALF) & HALF_MASK]) for x in h]
            if (h < 0).any() or (h >> NUM_CARDS).any() or counts != [7, 7, 7, 7] or \
                    int(h[0] | h[1] | h[2] | h[3]) != (1 << NUM_CARDS) - 1:
                raise ValueError(f"deal {i} is not 4 hands of 7 cards holding all 28 once "
                                 f"(cards per hand: {counts})")
        return hands
    out = []
    for i, deal in enumerate(deals):
        try:
            out.append(validate_deal(deal))
        except ValueError as e:
            raise ValueError(f"deal {i}: {e}") from None
    return np.array(out, dtype=np.int64).reshape(-1, 4)


class VectorEngine:
    """B deals of Twilight stepped together (R3-R5, R7.1-R7.3).

    Rows are independent deals. A new engine holds B finished, empty deals: call
    :meth:`reset` (random or given deals) first. :meth:`apply` plays one action in every
    selected row; :meth:`legal_mask` gives the legal actions of every row. Finished rows
    stay finished until reset (:class:`TwilightVectorEnv` resets them automatically).

    Args:
        num_envs: B, the number of deals, >= 1.
        num_players: 4 or 3. In 3 players seat 0 is the solo, seat 2 the new moon whose
            decisions the solo makes (R7.3); the solo leads the first trick (R7.2).
        backend: ``"numpy"`` (default) or ``"torch"``.
        device: torch device (``"cpu"``, ``"cuda"``); NumPy runs on the CPU only.

    Raises:
        ValueError: on a bad ``num_envs``, ``num_players``, ``backend`` or ``device``.

    Attributes are the state arrays in the module docstring, plus ``num_envs``,
    ``num_players``, ``ops`` (the array shim) and ``seat_cult`` ((4,) int64 on the backend).
    """

    def __init__(self, num_envs: int, num_players: int = 4, *, backend: str = "numpy", device=None):
        self.num_envs = B = _check_int("num_envs", num_envs, 1)
        if isinstance(num_players, bool) or num_players not in (3, 4):
            raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
        self.num_players = int(num_players)
        self.ops = o = make_ops(backend, device)
        self.backend = o.name
        # tables on the backend
        self.seat_cult = o.table(SEAT_CULT[self.num_players])
        self._seat_cult_np = SEAT_CULT[self.num_players]
        self._cult_mask = o.table(CULT_MASK_X)
        self._half_bits = o.table(HALF_BITS)
        self._half_souls = o.table(HALF_SOULS)
        self._half_mult = o.table(HALF_MULT)
        self._half_count = o.table(HALF_COUNT)
        self._strength = o.table(STRENGTH_X)
        self._pow2 = o.table(POW2_X)
        self._rows = o.arange(B)
        self._offsets = o.table(np.arange(1, 4, dtype=np.int64))[None, :]
        # state
        i64, i8 = o.int64, o.int8
        self.hands = o.zeros((B, 4), i64)
        self.leader = o.zeros((B,), i64)
        self.first_leader = o.zeros((B,), i64)
        self.trick = o.full((B,), NUM_TRICKS, i64)
        self.place = o.zeros((B,), i64)
        self.phase = o.zeros((B,), i64)
        self.holder = o.full((B,), -1, i64)
        self.cards = o.full((B, 4), -1, i64)
        self.holders = o.full((B, 4), -1, i64)
        self.trick_mask = o.zeros((B,), i64)
        self.best = o.full((B,), -1, i64)
        self.best_place = o.zeros((B,), i64)
        self.pending = o.zeros((B,), i64)
        self.neutral = o.zeros((B,), i64)
        self.captured = o.zeros((B, 4), i64)
        self._card_chooser = o.full((B, NUM_CARDS + 1), -1, i8)
        self._card_holder = o.full((B, NUM_CARDS + 1), -1, i8)
        self._card_order = o.full((B, NUM_CARDS + 1), -1, i8)

    # -- bookkeeping ----------------------------------------------------------------
    _STATE_FIELDS = ("hands", "leader", "first_leader", "trick", "place", "phase", "holder",
                     "cards", "holders", "trick_mask", "best", "best_place", "pending",
                     "neutral", "captured", "_card_chooser", "_card_holder", "_card_order")

    @property
    def card_chooser(self):
        """(B, 28) int8: per card id, the seat it was played for (the chooser), -1 unplayed."""
        return self._card_chooser[:, :NUM_CARDS]

    @property
    def card_holder(self):
        """(B, 28) int8: per card id, the seat whose hand it was played from, -1 unplayed."""
        return self._card_holder[:, :NUM_CARDS]

    @property
    def card_order(self):
        """(B, 28) int8: per card id, its index 0..27 in the play order, -1 unplayed."""
        return self._card_order[:, :NUM_CARDS]

    def nbytes_per_deal(self) -> float:
        """Bytes of state arrays per deal (sum of the arrays' sizes / B); tables excluded."""
        total = 0
        for f in self._STATE_FIELDS:
            a = getattr(self, f)
            total += a.nbytes if hasattr(a, "nbytes") else a.element_size() * a.nelement()
        return total / self.num_envs

    @property
    def done(self):
        """(B,) bool: the deal in that row is finished (all 7 tricks played)."""
        return self.trick == NUM_TRICKS

    @property
    def chooser(self):
        """(B,) int64: seat choosing the current place (R3.1), ``(leader + place) mod 4``."""
        return (self.leader + self.place) & 3

    @property
    def acting_seat(self):
        """(B,) int64: the holder in the hold phase, else the chooser."""
        return self.ops.where(self.phase == HOLD, self.holder, (self.leader + self.place) & 3)

    @property
    def deciding_seat(self):
        """(B,) int64: the acting seat, except that in 3 players the solo (0) decides for the
        new moon (2) (R7.3). Meaningless in finished rows."""
        s = self.acting_seat
        if self.num_players == 3:
            s = self.ops.where(s == NEW_MOON, 0, s)
        return s

    def _rows_arg(self, rows):
        """Normalise ``rows`` (None = all, bool mask (B,), or int indices) to int indices."""
        o = self.ops
        if rows is None:
            return self._rows
        r = o.asarray(rows)
        if r.dtype in (o.bool_,) or str(r.dtype) in ("bool", "torch.bool"):
            if tuple(r.shape) != (self.num_envs,):
                raise ValueError(f"a row mask must have shape ({self.num_envs},), got {tuple(r.shape)}")
            idx = np.flatnonzero(o.to_numpy(r))
        else:
            idx = o.to_numpy(r).astype(np.int64).reshape(-1)
            if idx.size and (idx.min() < 0 or idx.max() >= self.num_envs):
                raise ValueError(f"row indices must be in 0..{self.num_envs - 1}")
            if np.unique(idx).size != idx.size:
                raise ValueError("row indices must not repeat")
        return o.asarray(idx, o.int64)

    # -- reset -----------------------------------------------------------------------
    def reset(self, rows=None, *, rng: np.random.Generator | None = None, deals=None, leaders=None) -> None:
        """Start new deals in ``rows`` (all rows by default).

        Args:
            rows: None (all), a (B,) bool mask, or int row indices.
            rng: ``numpy.random.Generator`` for random deals (R2.3); needed unless ``deals``.
            deals: explicit deals for those rows, anything :func:`deals_to_hands` accepts,
                one per row in order.
            leaders: seat leading the first trick, an int or one per row (default 0; in
                3 players it must be 0, the solo, R7.2).

        Raises:
            ValueError: on bad rows, deals, leaders, or neither ``rng`` nor ``deals``.
        """
        o = self.ops
        idx = self._rows_arg(rows)
        n = int(idx.shape[0])
        if deals is not None:
            hands = deals_to_hands(deals)
            if hands.shape[0] != n:
                raise ValueError(f"got {hands.shape[0]} deals for {n} rows")
        elif rng is not None:
            hands = random_hands_batch(rng, n)
        else:
            raise ValueError("reset needs rng (a numpy.random.Generator) or deals")
        lead = np.broadcast_to(np.asarray(0 if leaders is None else leaders), (n,)).astype(np.int64)
        if lead.size and (lead.min() < 0 or lead.max() > 3):
            raise ValueError(f"leaders must be seats 0..3, got {leaders!r}")
        if self.num_players == 3 and lead.any():
            raise ValueError("in 3 players the solo (seat 0) leads the first trick (R7.2); leaders must be 0")
        self._set_rows(idx, o.asarray(hands, o.int64), o.asarray(lead, o.int64))

    def _set_rows(self, idx, hands, lead) -> None:
        """Fresh deals with ``hands`` (n, 4) and first leaders ``lead`` (n,) in rows ``idx``."""
        self.hands[idx] = hands
        self.leader[idx] = lead
        self.first_leader[idx] = lead
        for name, value in (("trick", 0), ("place", 0), ("phase", CHOOSE), ("holder", -1),
                            ("trick_mask", 0), ("best", -1), ("best_place", 0), ("pending", 0),
                            ("neutral", 0)):
            getattr(self, name)[idx] = value
        self.cards[idx] = -1
        self.holders[idx] = -1
        self.captured[idx] = 0
        self._card_chooser[idx] = -1
        self._card_holder[idx] = -1
        self._card_order[idx] = -1

    # -- legal actions ----------------------------------------------------------------
    def legal_mask(self, out=None):
        """Legal actions of every row as a mask (R3.2, R3.5).

        Args:
            out: optional (B, 31) bool array (NumPy backend) to write into.

        Returns:
            (B, 31) bool, ``[row, action]``; ``mask[i, a]`` is True exactly when ``a`` is in
            ``State.legal_actions()`` of row ``i``. Finished rows are all False.
        """
        o = self.ops
        B = self.num_envs
        hands = self.hands
        c = (self.leader + self.place) & 3
        cm = self._cult_mask[self.seat_cult[c]]
        hold = self.phase == HOLD
        acting = o.where(hold, self.holder, c)
        own = o.take_along(hands, acting[:, None])[:, 0] & cm
        others = o.take_along(hands, (c[:, None] + self._offsets) & 3) & cm[:, None]
        if out is None:
            out = o.zeros((B, NUM_ACTIONS), o.bool_)
        out[:, :HALF] = self._half_bits[own & HALF_MASK]
        out[:, HALF:NUM_CARDS] = self._half_bits[own >> HALF]
        out[:, REQUEST_BASE:] = (others != 0) & ~hold[:, None]
        return out

    def legal_counts(self):
        """(B,) int64: number of legal actions per row (0 in finished rows)."""
        m = self.legal_mask()
        return m.sum(1)

    # -- transitions -------------------------------------------------------------------
    def apply(self, actions, active=None) -> None:
        """Apply one action in each selected row, in place (R3.2-R4.4).

        Args:
            actions: (B,) ints in the 0..30 encoding; entries of unselected rows are ignored.
            active: optional (B,) bool mask of the rows to step (default: every row).

        Raises:
            ValueError: if ``actions`` has the wrong shape, or if any selected row is
                finished or gets an illegal action; the message names the batch indices
                (up to 20) and their legal actions. Nothing is changed then.
        """
        o = self.ops
        B = self.num_envs
        a = o.asarray(actions)
        if tuple(a.shape) != (B,):
            raise ValueError(f"actions must have shape ({B},), got {tuple(a.shape)}")
        if str(a.dtype) not in ("int64", "torch.int64"):
            if not any(k in str(a.dtype) for k in ("int", "uint")) or "bool" in str(a.dtype):
                raise ValueError(f"actions must be integers 0..30, got dtype {a.dtype}")
            a = o.cast(a, o.int64)
        hands = self.hands
        place = self.place
        c = (self.leader + place) & 3
        cm = self._cult_mask[self.seat_cult[c]]
        hold = self.phase == HOLD
        acting = o.where(hold, self.holder, c)
        card = (a >= 0) & (a < NUM_CARDS)
        req = (a >= REQUEST_BASE) & (a < NUM_ACTIONS) & ~hold
        ci = o.where(card, a, _DUMP)
        bit = self._pow2[ci]
        own = o.take_along(hands, acting[:, None])[:, 0] & cm
        target = (c + a - (REQUEST_BASE - 1)) & 3
        ok_card = (own & bit) != 0
        ok_req = req & ((o.take_along(hands, target[:, None])[:, 0] & cm) != 0)
        ok = ok_card | ok_req
        if active is not None:
            act = o.asarray(active)
            if tuple(act.shape) != (B,):
                raise ValueError(f"active must be a ({B},) bool mask, got shape {tuple(act.shape)}")
            act = o.cast(act, o.bool_)
            ok = ok | ~act
            card = card & act
            req = req & act
        else:
            act = None
        if not bool(ok.all()):
            self._raise_illegal(o.to_numpy(~ok), o.to_numpy(a))
        play = card  # legal card plays of selected rows
        if act is not None:
            bit = o.where(play, bit, 0)
            ci = o.where(play, ci, _DUMP)
        rows = self._rows
        # R3.2/R3.3: the card leaves the acting hand and lies in front of the chooser.
        hands[rows, acting] ^= bit
        self.cards[rows, place] = o.where(play, a, -1)        # slot ``place`` is empty
        self.holders[rows, place] = o.where(play, acting, -1)
        self._card_chooser[rows, ci] = o.cast(c, o.int8)
        self._card_holder[rows, ci] = o.cast(acting, o.int8)
        self._card_order[rows, ci] = o.cast(self.trick * 4 + place, o.int8)
        self.trick_mask |= bit
        # R4.1: strictly stronger replaces the leading card, so ties go to the earlier place;
        # the Purgatory is strongest, so a trick with one leads with its first Purgatory.
        s = self._strength[ci]
        better = s > self.best
        self.best = o.where(better, s, self.best)
        self.best_place = o.where(better, place, self.best_place)
        self.place = place = place + play
        # phases: a request opens the hold phase for the requested seat (R3.2)
        self.phase = o.where(req, HOLD, o.where(play, CHOOSE, self.phase))
        self.holder = o.where(req, target, o.where(play, -1, self.holder))
        self._resolve(place == 4)

    def _resolve(self, full) -> None:
        """Finish the tricks of rows ``full`` (B,) bool (R4.1-R4.4)."""
        o = self.ops
        tm = self.trick_mask
        purg = (tm & PURGATORY_MASK) != 0
        taker = (self.leader + self.best_place) & 3
        # R4.2: the taker gets the trick and the whole pending pile (R4.3)
        self.captured[self._rows, taker] |= o.where(full & ~purg, tm | self.pending, 0)
        # R4.3: a trick with a Purgatory joins the pending pile; the seat of the first
        # Purgatory leads next (taker above is that seat). R4.4: after the 7th trick the
        # pile stays neutral.
        grown = self.pending | tm
        last_purg = full & purg & (self.trick == NUM_TRICKS - 1)
        self.neutral |= o.where(last_purg, grown, 0)
        self.pending = o.where(full, o.where(purg & ~last_purg, grown, 0), self.pending)
        self.leader = o.where(full, taker, self.leader)
        self.trick = self.trick + full
        self.place = o.where(full, 0, self.place)
        f2 = full[:, None]
        self.cards = o.where(f2, -1, self.cards)
        self.holders = o.where(f2, -1, self.holders)
        self.trick_mask = o.where(full, 0, tm)
        self.best = o.where(full, -1, self.best)
        self.best_place = o.where(full, 0, self.best_place)

    def _raise_illegal(self, bad: np.ndarray, a: np.ndarray) -> None:
        idx = np.flatnonzero(bad)
        mask = self.ops.to_numpy(self.legal_mask())
        done = self.ops.to_numpy(self.done)
        parts = []
        for i in idx[:20]:
            if done[i]:
                parts.append(f"row {i}: action {int(a[i])} but the deal is over (reset it)")
            else:
                parts.append(f"row {i}: action {int(a[i])} not in legal actions "
                             f"{np.flatnonzero(mask[i]).tolist()}")
        more = f" (and {idx.size - 20} more)" if idx.size > 20 else ""
        raise ValueError(f"illegal actions at batch indices {idx[:20].tolist()}{more}: "
                         + "; ".join(parts) + ". Nothing was changed.")

    # -- scoring -----------------------------------------------------------------------
    def _souls(self, m):
        return self._half_souls[m & HALF_MASK] + self._half_souls[(m >> HALF) & HALF_MASK]

    def _score(self, m, cult: int):
        """Deal score (R5) of masks ``m`` taken by a side (or seat) of ``cult``."""
        return self._souls(m) * self._half_mult[(m >> (HALF * cult)) & HALF_MASK]

    def side_scores(self):
        """(B, 2) int64 deal points of side 0 (seats 0, 2) and side 1 (seats 1, 3) (R5,
        R7.5); side 0 is Sun in 4 players and the Moon (solo) side in 3 players. Counts
        the tricks taken so far."""
        cap = self.captured
        sc = self._seat_cult_np
        s0 = self._score(cap[:, 0] | cap[:, 2], int(sc[0]))
        s1 = self._score(cap[:, 1] | cap[:, 3], int(sc[1]))
        return self.ops.cat([s0[:, None], s1[:, None]], 1)

    def seat_scores(self):
        """(B, 4) int64: each seat's score from only the tricks it took (R8 ``individual``)."""
        cap = self.captured
        sc = self._seat_cult_np
        return self.ops.cat([self._score(cap[:, s], int(sc[s]))[:, None] for s in range(4)], 1)

    def returns(self):
        """(B, 4) int64 per seat: own side's deal score minus the other side's (deal points)."""
        s = self.side_scores()
        d = s[:, 0] - s[:, 1]
        return self.ops.cat([d[:, None], -d[:, None], d[:, None], -d[:, None]], 1)

    def counts(self):
        """(B, 4, 2) int64: Sun and Moon cards each seat holds now (R2.5)."""
        h = self.hands
        sun = self._half_count[h & HALF_MASK]
        moon = self._half_count[(h >> HALF) & HALF_MASK]
        return self.ops.cat([sun[:, :, None], moon[:, :, None]], 2)

    # -- bridges to the scalar engine ---------------------------------------------------
    def to_state(self, i: int) -> State:
        """Row ``i`` as a scalar :class:`~twilight_env.engine.State` (history included)."""
        o = self.ops
        g = lambda a: o.to_numpy(a[i])  # noqa: E731
        st = State.__new__(State)
        st.num_players = self.num_players
        st.seat_cult = SEAT_CULT_4 if self.num_players == 4 else SEAT_CULT_3
        hands = [int(x) for x in g(self.hands)]
        st.hands = hands
        order = g(self.card_order)
        ch, ho = g(self.card_chooser), g(self.card_holder)
        played = [int(x) for x in np.argsort(np.where(order < 0, 99, order))[: int((order >= 0).sum())]]
        st.history = [(int(ch[x]), int(ho[x]), x) for x in played]
        init = hands[:]
        for _, h, x in st.history:
            init[h] |= 1 << x
        st.initial_hands = tuple(init)
        st.leader = int(g(self.leader))
        st.first_leader = int(g(self.first_leader))
        st.trick = int(g(self.trick))
        st.place = int(g(self.place))
        st.phase = int(g(self.phase))
        st.holder = int(g(self.holder))
        st.cards = [int(x) for x in g(self.cards)]
        st.holders = [int(x) for x in g(self.holders)]
        st.pending = int(g(self.pending))
        st.captured = [int(x) for x in g(self.captured)]
        st.neutral = int(g(self.neutral))
        return st

    def set_states(self, states: Sequence[State], rows=None) -> None:
        """Load scalar states (fresh or mid-deal) into ``rows`` (all rows by default)."""
        o = self.ops
        idx = self._rows_arg(rows)
        idx_np = o.to_numpy(idx)
        if len(states) != idx_np.size:
            raise ValueError(f"got {len(states)} states for {idx_np.size} rows")
        for st in states:
            if st.num_players != self.num_players:
                raise ValueError(f"a state of {st.num_players} players in a {self.num_players}-player engine")
        n = idx_np.size
        cols = {k: np.zeros((n,) + s, np.int64) for k, s in (
            ("hands", (4,)), ("leader", ()), ("first_leader", ()), ("trick", ()), ("place", ()),
            ("phase", ()), ("holder", ()), ("cards", (4,)), ("holders", (4,)), ("trick_mask", ()),
            ("best", ()), ("best_place", ()), ("pending", ()), ("neutral", ()), ("captured", (4,)))}
        per = {k: np.full((n, NUM_CARDS + 1), -1, np.int8) for k in ("_card_chooser", "_card_holder", "_card_order")}
        for j, st in enumerate(states):
            cols["hands"][j] = st.hands
            for k in ("leader", "first_leader", "trick", "place", "phase", "holder", "pending", "neutral"):
                cols[k][j] = getattr(st, k)
            cols["cards"][j] = st.cards
            cols["holders"][j] = st.holders
            cols["captured"][j] = st.captured
            tm, best, bp = 0, -1, 0
            for p in range(st.place):
                x = st.cards[p]
                tm |= 1 << x
                if STRENGTH[x] > best:
                    best, bp = STRENGTH[x], p
            cols["trick_mask"][j], cols["best"][j], cols["best_place"][j] = tm, best, bp
            for k, (ch, ho, x) in enumerate(st.history):
                per["_card_chooser"][j, x] = ch
                per["_card_holder"][j, x] = ho
                per["_card_order"][j, x] = k
        for k, v in list(cols.items()) + list(per.items()):
            arr = getattr(self, k)
            arr[idx] = o.asarray(v, arr.dtype)


__all__ = ["VectorEngine", "make_ops", "random_hands_batch", "deals_to_hands",
           "HALF_BITS", "HALF_SOULS", "HALF_MULT", "HALF_COUNT"]
