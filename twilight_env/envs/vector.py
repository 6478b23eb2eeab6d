"""A batch engine: B Twilight deals held as arrays and stepped with one call.

The scalar :class:`~twilight_env.rules.engine.State` is the reference; :class:`VectorEngine`
plays the same rules (R3-R5, R7.1-R7.3) on B deals at once, and
:class:`TwilightVectorEnv` wraps it as a vectorized RL environment with auto-reset.
The parity harness (``tests/rules/test_parity.py``) plays random deals through both engines
and the rules reference action by action and checks that masks, tricks, piles and scores agree.

Backends
--------
The kernels are written once against a small array-ops shim, so the same code runs on
NumPy arrays (the default; this module imports only NumPy at load time) or on torch
tensors, CPU or CUDA (``backend="torch"``; torch is imported only then). A step is a
fixed sequence of whole-batch array operations: no Python loop over the batch and no
data-dependent branch. Lookup tables (strength, souls, multipliers, the flags of a 14-bit
half mask) are built once in NumPy and copied to the backend. Per-row reads and writes
of ``(B, k)`` arrays go through flat indices ``row * k + column`` (NumPy's ``take`` and
flat assignment are several times faster than 2-D fancy indexing).

State arrays (``B`` = ``num_envs``; masks are 28-bit ints, bit ``i`` = card id ``i``)
----------------------------------------------------------------------------------
| name | shape, dtype | meaning |
|------|--------------|---------|
| ``hands`` | (B, 4) int64 | cards each seat holds now |
| ``leader``, ``first_leader`` | (B,) int64 | seat leading this trick / the first trick |
| ``trick`` | (B,) int64 | tricks finished, 0..7 (7 = deal over) |
| ``place`` | (B,) int64 | places filled in this trick, 0..3 |
| ``phase`` | (B,) int64 | 0 choose, 1 hold (R3.2) |
| ``holder`` | (B,) int64 | requested seat in the hold phase, else -1 |
| ``trick_code`` | (B,) int64 | this trick by place ``p``: bits ``8p..8p+4`` card id + 1 (0 empty), bits ``8p+5..8p+6`` holder seat; read it as ``cards`` / ``holders`` (B, 4) |
| ``trick_mask`` | (B,) int64 | cards of this trick |
| ``best``, ``best_place`` | (B,) int64 | strength and place of the card leading this trick (R4.1); -1 / 0 when empty |
| ``pending`` | (B,) int64 | the pending Purgatory pile (R4.3) |
| ``neutral`` | (B,) int64 | cards left neutral by a last-trick Purgatory (R4.4) |
| ``captured`` | (B, 4) int64 | cards taken by each seat (R4.2) |
| ``played_for`` | (B, 4) int64 | cards played for each seat as chooser (R3.3) |
| ``held_by`` | (B, 4) int64 | cards that left each seat's hand (R3.2) |
| ``trick_of`` | (B, 7) int64 | cards played in each trick 0..6 (the current one included) |
| ``history`` | (B, 28) int8 | card ids in play order, -1 after the last play |

About 310 bytes per deal (:meth:`VectorEngine.nbytes_per_deal`); ``history`` carries one
extra column (index 28) that absorbs the writes of rows that played no card.

Action encoding (``docs/API.md``, Actions): ``0..27`` play that card id from the acting hand,
``28 + o - 1`` request the seat at offset ``o`` (1..3) from the chooser (R3.2).

Usage
-----
The RL view (deal episodes, auto-reset; see :class:`TwilightVectorEnv` for the reward
convention)::

    env = TwilightVectorEnv(num_envs=1024, num_players=4, seed=0)
    obs, mask, info = env.reset()          # (B, OBS_SIZE) float32, (B, 31) int8
    for _ in range(1000):
        actions = policy(obs, mask)        # (B,) ints, legal where mask == 1
        obs, mask, reward, done, info = env.step(actions)   # reward (B, 4) per seat

The engine view, for rollouts and evaluation: ``VectorEngine.reset`` (random or given
deals), ``legal_bits`` / ``legal_mask``, ``random_actions``, ``apply`` (optionally on a
subset of rows), ``observe`` (any viewer seats), ``side_scores`` / ``seat_scores`` /
``returns``, and ``to_state`` / ``set_states`` to move rows to and from the scalar engine.

Choices
-------
- Finished rows stay finished in :class:`VectorEngine` (an action there is an error)
  until ``reset``; :class:`TwilightVectorEnv` re-deals them in the step that ends them.
- The first leader of a new deal (4 players) passes to the next seat in each row
  (the dealer passes left, R2.4); in 3 players the solo, seat 0, always leads (R7.2).
- Randomness: deals and the env's random actions come from one
  ``numpy.random.Generator``; the torch backend draws from the same generator (so both
  backends play the same games from the same seed) unless given a ``torch.Generator``.

Speed
-----
``benchmarks/batch_speed.py`` (one CPU thread, CPU seconds, best of 3 rounds) on a 2-core
machine shared with other jobs, so figures moved by tens of percent between runs; in
the same runs OpenSpiel's oh_hell random play made 0.2M decisions/s. Without
observations the batch engine plays 1.5M-1.7M decisions/s at B = 1024 and 3.2M-4.9M at
B = 8192 (8x and 15x-25x OpenSpiel, 3.6x and 7x-12x our scalar engine). With the full
float32 observation of every deciding player (968 floats, 3.9 KB written per decision)
it plays 0.28M-0.47M decisions/s at B >= 1024: 1.3x-2.2x OpenSpiel's plain random play
(short of the 20x target), 13x-25x OpenSpiel with ``information_state_tensor``, 5x-9x our
scalar engine with ``encode_observation``. The packed form (``observe_packed``, 173 bytes
per decision) reaches 0.6M-0.78M (3x-4x OpenSpiel). Per row and step at B = 1024,
writing the float32 observation costs about 0.5 microseconds, building it about 0.6-0.8,
``apply`` 0.2. Small batches pay NumPy's per-call overhead (about 300 calls per env step):
B = 1 is far slower than the scalar engine; B >= 1024 is where the batch engine pays.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twilight_env.rules.cards import NUM_CARDS, PURGATORY_MASK, trick_so_far
from twilight_env.util.seeding import check_seed
from twilight_env.rules.engine import (
    ACTION_TYPES,
    CHOOSE,
    HOLD,
    NEW_MOON,
    NUM_ACTIONS,
    NUM_TRICKS,
    REQUEST_BASE,
    SEAT_CULT_3,
    SEAT_CULT_4,
    DealState,
    State,
    action_or_none,
)
from twilight_env.envs.vector_ops import (
    CULT_MASK_X,
    DUMP,
    HALF,
    HALF_BITS,
    HALF_COUNT,
    HALF_MASK,
    HALF_MULT,
    HALF_SELECT,
    HALF_SOULS,
    POW2_X,
    SEAT_CULT,
    STRENGTH_X,
    check_int_at_least,
    deals_to_hands,
    make_ops,
    random_hands_batch,
)
# the tables and array ops live in twilight_env.envs.vector_ops; these names stay importable here
from twilight_env.envs.vector_ops import ALL_CARDS  # noqa: F401


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
    ``num_players``, ``backend``, ``ops`` (the array shim) and ``seat_cult``.
    """

    _STATE_FIELDS = ("hands", "leader", "first_leader", "trick", "place", "phase", "holder",
                     "trick_code", "trick_mask", "best", "best_place", "pending",
                     "neutral", "captured", "played_for", "held_by", "trick_of", "_history")

    def __init__(self, num_envs: int, num_players: int = 4, *, backend: str = "numpy", device=None):
        self.num_envs = B = check_int_at_least("num_envs", num_envs, 1)
        if isinstance(num_players, bool) or num_players not in (3, 4):
            raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
        self.num_players = int(num_players)
        self.ops = o = make_ops(backend, device)
        self.backend = o.name
        # tables on the backend
        self.seat_cult = o.table(SEAT_CULT[self.num_players])
        self._seat_cult_np = SEAT_CULT[self.num_players]
        # (4,) int64: the cult mask of each seat's cult
        self._seat_cmask = o.table(CULT_MASK_X[SEAT_CULT[self.num_players]])
        self._half_bits = o.table(HALF_BITS)
        self._half_souls = o.table(HALF_SOULS)
        self._half_mult = o.table(HALF_MULT)
        self._half_count = o.table(HALF_COUNT)
        self._half_select = o.table(HALF_SELECT)
        self._strength = o.table(STRENGTH_X)
        self._pow2 = o.table(POW2_X)
        self._rows = o.arange(B)
        self._rows4 = self._rows * 4
        self._rows7 = self._rows * 7
        self._rows29 = self._rows * (NUM_CARDS + 1)
        # state
        i64 = o.int64
        self.hands = o.zeros((B, 4), i64)
        self.leader = o.zeros((B,), i64)
        self.first_leader = o.zeros((B,), i64)
        self.trick = o.full((B,), NUM_TRICKS, i64)
        self.place = o.zeros((B,), i64)
        self.phase = o.zeros((B,), i64)
        self.holder = o.full((B,), -1, i64)
        self.trick_code = o.zeros((B,), i64)
        self._place_shift = o.table(np.arange(4, dtype=np.int64) * 8)[None, :]
        self.trick_mask = o.zeros((B,), i64)
        self.best = o.full((B,), -1, i64)
        self.best_place = o.zeros((B,), i64)
        self.pending = o.zeros((B,), i64)
        self.neutral = o.zeros((B,), i64)
        self.captured = o.zeros((B, 4), i64)
        self.played_for = o.zeros((B, 4), i64)
        self.held_by = o.zeros((B, 4), i64)
        self.trick_of = o.zeros((B, NUM_TRICKS), i64)
        self._history = o.full((B, NUM_CARDS + 1), -1, o.int8)

    # -- bookkeeping ----------------------------------------------------------------
    @property
    def history(self):
        """(B, 28) int8: card ids in play order, -1 after the last play."""
        return self._history[:, :NUM_CARDS]

    @property
    def cards(self):
        """(B, 4) int64: card id at each place of the current trick, -1 empty."""
        return ((self.trick_code[:, None] >> self._place_shift) & 31) - 1

    @property
    def holders(self):
        """(B, 4) int64: seat whose hand each place's card came from, -1 empty."""
        code = self.trick_code[:, None] >> self._place_shift
        return self.ops.where((code & 31) != 0, (code >> 5) & 3, -1)

    def nbytes_per_deal(self) -> float:
        """Bytes of state arrays per deal (sum of the arrays' sizes / B); shared tables excluded."""
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
        new moon (2) (R7.3). In finished rows this is the first leader of the next trick."""
        s = self.acting_seat
        if self.num_players == 3:
            s = s & ~((s == NEW_MOON) * 2)  # 2 -> 0, others unchanged
        return s

    def _rows_arg(self, rows):
        """Normalise ``rows`` (None = all, a (B,) bool mask, or int indices) to NumPy int indices."""
        o = self.ops
        if rows is None:
            return np.arange(self.num_envs)
        r = o.asarray(rows)
        if o.is_bool(r):
            if tuple(r.shape) != (self.num_envs,):
                raise ValueError(f"a row mask must have shape ({self.num_envs},), got {tuple(r.shape)}")
            return np.flatnonzero(o.to_numpy(r))
        if not o.is_int(r):
            raise ValueError(f"rows must be a bool mask or int indices, got dtype {r.dtype}")
        idx = o.to_numpy(r).astype(np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.num_envs):
            raise ValueError(f"row indices must be in 0..{self.num_envs - 1}, got {idx.min()}..{idx.max()}")
        if np.unique(idx).size != idx.size:
            raise ValueError("row indices must not repeat")
        return idx

    # -- reset -----------------------------------------------------------------------
    def reset(self, rows=None, *, rng: np.random.Generator | None = None, deals=None, leaders=None):
        """Start new deals in ``rows`` (all rows by default).

        Args:
            rows: None (all), a (B,) bool mask, or int row indices.
            rng: ``numpy.random.Generator`` for random deals (R2.3); needed unless ``deals``.
            deals: explicit deals for those rows (anything :func:`deals_to_hands` takes),
                one per row in order.
            leaders: seat leading the first trick, an int or one per row (default 0; in
                3 players it must be 0, the solo, R7.2).

        Returns:
            (n,) int64 NumPy array: the rows that were reset.

        Raises:
            ValueError: on bad rows, deals or leaders, or with neither ``rng`` nor ``deals``.
        """
        o = self.ops
        idx = self._rows_arg(rows)
        n = idx.size
        if deals is not None:
            hands = deals_to_hands(deals)
            if hands.shape[0] != n:
                raise ValueError(f"got {hands.shape[0]} deals for {n} rows")
        elif rng is not None:
            if not isinstance(rng, np.random.Generator):
                raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
            hands = random_hands_batch(rng, n)
        else:
            raise ValueError("reset needs rng (a numpy.random.Generator) or deals")
        lead = np.asarray(0 if leaders is None else leaders)
        if lead.dtype.kind not in "iu" or lead.ndim > 1 or (lead.ndim == 1 and lead.size != n):
            raise ValueError(f"leaders must be a seat 0..3 or one seat per reset row ({n}), got {leaders!r}")
        lead = np.broadcast_to(lead, (n,)).astype(np.int64)
        if lead.size and (lead.min() < 0 or lead.max() > 3):
            raise ValueError(f"leaders must be seats 0..3, got {leaders!r}")
        if self.num_players == 3 and lead.any():
            raise ValueError("in 3 players the solo (seat 0) leads the first trick (R7.2); leaders must be 0")
        if n:
            self._set_rows(o.asarray(idx, o.int64), o.asarray(hands, o.int64), o.asarray(lead, o.int64))
        return idx

    def _set_rows(self, idx, hands, lead) -> None:
        """Fresh deals with ``hands`` (n, 4) and first leaders ``lead`` (n,) in rows ``idx``."""
        self.hands[idx] = hands
        self.leader[idx] = lead
        self.first_leader[idx] = lead
        for name, value in (("trick", 0), ("place", 0), ("phase", CHOOSE), ("holder", -1),
                            ("trick_mask", 0), ("best", -1), ("best_place", 0), ("pending", 0),
                            ("neutral", 0), ("trick_code", 0), ("captured", 0),
                            ("played_for", 0), ("held_by", 0), ("trick_of", 0), ("_history", -1)):
            getattr(self, name)[idx] = value

    # -- legal actions ----------------------------------------------------------------
    def legal_bits(self):
        """(B,) int64: the legal actions of every row as a 31-bit mask, bit ``a`` set when
        action ``a`` is legal (R3.2, R3.5); 0 in finished rows (their hands are empty)."""
        o = self.ops
        c = (self.leader + self.place) & 3
        cm = o.lookup(self._seat_cmask, c)
        hold = self.phase == HOLD
        acting = o.where(hold, self.holder, c)
        r4 = self._rows4
        h = self.hands
        own = o.gather(h, r4 + acting) & cm
        # R3.2/R3.5: request offset o (action 27 + o) if that seat holds a card of the cult
        req = (((o.gather(h, r4 + ((c + 1) & 3)) & cm) != 0)
               | (((o.gather(h, r4 + ((c + 2) & 3)) & cm) != 0) << 1)
               | (((o.gather(h, r4 + ((c + 3) & 3)) & cm) != 0) << 2))
        return own | ((req & ~(hold * 7)) << REQUEST_BASE)

    def legal_mask(self, bits=None, out=None):
        """Legal actions of every row as a (B, 31) bool mask (R3.2, R3.5).

        Args:
            bits: the :meth:`legal_bits` of the current state, if already computed.
            out: optional (B, 31) bool array to write into.

        Returns:
            (B, 31) bool, ``[row, action]``; ``mask[i, a]`` is True exactly when ``a`` is in
            ``State.legal_actions()`` of row ``i``. Finished rows are all False.
        """
        o = self.ops
        if bits is None:
            bits = self.legal_bits()
        m = o.unpack_bits(bits, NUM_ACTIONS)
        if out is None:
            return m
        out[:] = m
        return out

    def random_actions(self, rng: np.random.Generator, bits=None):
        """A uniformly random legal action for every row (R3.2), for rollouts and benchmarks.

        Args:
            rng: ``numpy.random.Generator`` giving one uniform draw per row (torch
                backend: also a ``torch.Generator`` on the engine's device).
            bits: the :meth:`legal_bits` of the current state, if already computed.

        Returns:
            (B,) int64 actions; 0 in finished rows (which have no legal action).
        """
        o = self.ops
        if bits is None:
            bits = self.legal_bits()
        lo = bits & HALF_MASK
        mid = (bits >> HALF) & HALF_MASK
        hi = bits >> REQUEST_BASE
        cl = o.lookup(self._half_count, lo)
        cm_ = o.lookup(self._half_count, mid)
        n = cl + cm_ + o.lookup(self._half_count, hi)
        k = o.cast(o.uniform(rng, self.num_envs) * n, o.int64)  # 0..n-1 (0 when n = 0)
        in_lo = k < cl
        in_mid = (k < cl + cm_) & ~in_lo
        part = o.where(in_lo, lo, o.where(in_mid, mid, hi))
        kk = k - o.where(in_lo, 0, o.where(in_mid, cl, cl + cm_))
        base = o.where(in_lo, 0, o.where(in_mid, HALF, REQUEST_BASE))
        return (base + o.lookup(self._half_select, part * HALF + kk)) * (n > 0)

    # -- transitions -------------------------------------------------------------------
    def apply(self, actions, active=None) -> None:
        """Apply one action in each selected row, in place (R3.2-R4.4).

        Args:
            actions: (B,) ints in the 0..30 encoding: an array or tensor of any integer
                dtype (int8 .. uint64), or a list or tuple of B values of any integer type
                :func:`twilight_env.rules.engine.as_action` reads; entries of unselected rows are
                ignored.
            active: optional (B,) bool mask of the rows to step (default: every row).

        Raises:
            ValueError: if ``actions`` or ``active`` has the wrong shape or type, or if any
                selected row is finished or gets an illegal action; the message names the
                batch indices (up to 20) and their legal actions. Nothing is changed then.
        """
        o = self.ops
        B = self.num_envs
        if isinstance(actions, (list, tuple)):
            # value by value: NumPy would turn [np.int8, np.uint64] into float64, and [1.0, 2]
            # into float64 as well; each entry is read as the scalar engine reads an action
            values = [action_or_none(x) for x in actions]
            if None in values:
                bad = actions[values.index(None)]
                raise ValueError(f"actions must be ({B},) integers 0..30 ({ACTION_TYPES}), got {bad!r} "
                                 f"({type(bad).__name__}) in a list")
            actions = np.array(values, dtype=np.int64)
        a = o.asarray(actions)
        if tuple(a.shape) != (B,) or not o.is_int(a):
            raise ValueError(f"actions must be ({B},) integers 0..30 (an array or sequence of any integer "
                             f"dtype), got shape {tuple(a.shape)} dtype {a.dtype}")
        given = a  # for the error message: uint64 values past 2**63 turn negative in int64
        if a.dtype != o.int64:
            a = o.cast(a, o.int64)
        r4 = self._rows4
        hands = self.hands
        place = self.place
        c = (self.leader + place) & 3
        cm = o.lookup(self._seat_cmask, c)
        hold = self.phase == HOLD
        acting = o.where(hold, self.holder, c)
        card = (a >= 0) & (a < NUM_CARDS)
        req = (a >= REQUEST_BASE) & (a < NUM_ACTIONS) & ~hold
        bit = o.lookup(self._pow2, a & 31) * card
        target = (c + a - (REQUEST_BASE - 1)) & 3
        h_act = o.gather(hands, r4 + acting)
        ok = ((h_act & cm & bit) != 0) | (req & ((o.gather(hands, r4 + target) & cm) != 0))
        if active is not None:
            act = o.asarray(active)
            if tuple(act.shape) != (B,) or not o.is_bool(act):
                raise ValueError(f"active must be a ({B},) bool mask, got shape {tuple(act.shape)} "
                                 f"dtype {act.dtype}")
            ok = ok | ~act
            card = card & act
            req = req & act
            bit = bit * act
        if not bool(ok.all()):
            self._raise_illegal(o.to_numpy(~ok), o.to_numpy(given))
        play = card
        # R3.2/R3.3: the card leaves the acting hand and lies in front of the chooser.
        o.scatter(hands, r4 + acting, h_act ^ bit)
        self.trick_code = self.trick_code | ((((a + 1) | (acting << 5)) * play) << (place * 8))
        o.scatter(self._history, self._rows29 + o.where(play, self.trick * 4 + place, DUMP),
                  o.cast(a, o.int8))
        fi = r4 + c
        o.scatter(self.played_for, fi, o.gather(self.played_for, fi) | bit)
        fi = r4 + acting
        o.scatter(self.held_by, fi, o.gather(self.held_by, fi) | bit)
        fi = self._rows7 + self.trick - (self.trick == NUM_TRICKS) * 1  # finished rows: bit is 0
        o.scatter(self.trick_of, fi, o.gather(self.trick_of, fi) | bit)
        self.trick_mask = self.trick_mask | bit
        # R4.1: strictly stronger replaces the leading card, so ties go to the earlier place;
        # the Purgatory is strongest, so a trick with one leads with its first Purgatory.
        s = o.lookup(self._strength, o.where(play, a, DUMP))
        better = s > self.best
        self.best = o.where(better, s, self.best)
        self.best_place = o.where(better, place, self.best_place)
        self.place = place = place + play
        # phases: a request opens the hold phase for the requested seat (R3.2)
        self.phase = o.where(req, HOLD, o.where(play, CHOOSE, self.phase))
        self.holder = o.where(req, target, o.where(play, -1, self.holder))
        full = place == 4
        if self.backend != "numpy" or bool(full.any()):
            self._resolve(full)

    def _resolve(self, full) -> None:
        """Finish the tricks of rows ``full`` (B,) bool (R4.1-R4.4)."""
        o = self.ops
        tm = self.trick_mask
        purg = (tm & PURGATORY_MASK) != 0
        taker = (self.leader + self.best_place) & 3
        # R4.2: the taker gets the trick and the whole pending pile (R4.3)
        fi = self._rows4 + taker
        gain = (tm | self.pending) * (full & ~purg)
        o.scatter(self.captured, fi, o.gather(self.captured, fi) | gain)
        # R4.3: a trick with a Purgatory joins the pending pile; the seat of the first
        # Purgatory leads next (``taker`` is that seat). R4.4: after the 7th trick the
        # whole pile stays neutral.
        grown = self.pending | tm
        last_purg = full & purg & (self.trick == NUM_TRICKS - 1)
        self.neutral = self.neutral | grown * last_purg
        self.pending = o.where(full, grown * (purg & ~last_purg), self.pending)
        self.leader = o.where(full, taker, self.leader)
        self.trick = self.trick + full
        self.place = o.where(full, 0, self.place)
        self.trick_code = self.trick_code * ~full
        self.trick_mask = tm * ~full
        self.best = o.where(full, -1, self.best)
        self.best_place = self.best_place * ~full

    def _raise_illegal(self, bad: np.ndarray, a: np.ndarray) -> None:
        idx = np.flatnonzero(bad)
        mask = self.ops.to_numpy(self.legal_mask())
        done = self.ops.to_numpy(self.done)
        parts = []
        for i in idx[:20]:
            if done[i]:
                parts.append(f"row {i}: action {int(a[i])}, but the deal is over (reset it)")
            else:
                parts.append(f"row {i}: action {int(a[i])} not in legal actions "
                             f"{np.flatnonzero(mask[i]).tolist()}")
        more = f" (and {idx.size - 20} more)" if idx.size > 20 else ""
        raise ValueError(f"illegal actions at batch indices {idx[:20].tolist()}{more}: "
                         + "; ".join(parts) + ". Nothing was changed.")

    # -- scoring -----------------------------------------------------------------------
    def _souls(self, m):
        o = self.ops
        return o.lookup(self._half_souls, m & HALF_MASK) + o.lookup(self._half_souls, (m >> HALF) & HALF_MASK)

    def _score(self, m, cult: int):
        """Deal score (R5.1-R5.3) of masks ``m`` taken by a side (or seat) of ``cult``."""
        return self._souls(m) * self.ops.lookup(self._half_mult, (m >> (HALF * cult)) & HALF_MASK)

    def side_scores(self):
        """(B, 2) int64 deal points of side 0 (seats 0, 2) and side 1 (seats 1, 3) from the
        tricks taken so far (R5, R7.5); side 0 is Sun in 4 players and Moon (the solo's
        side) in 3 players."""
        cap = self.captured
        sc = self._seat_cult_np
        s0 = self._score(cap[:, 0] | cap[:, 2], int(sc[0]))
        s1 = self._score(cap[:, 1] | cap[:, 3], int(sc[1]))
        return self.ops.stack([s0, s1], 1)

    def seat_scores(self):
        """(B, 4) int64: each seat's score from only the tricks it took (R8 ``individual``)."""
        cap = self.captured
        sc = self._seat_cult_np
        return self.ops.stack([self._score(cap[:, s], int(sc[s])) for s in range(4)], 1)

    def returns(self):
        """(B, 4) int64 per seat: own side's deal score minus the other side's (deal points)."""
        s = self.side_scores()
        d = s[:, 0] - s[:, 1]
        return self.ops.stack([d, -d, d, -d], 1)

    def counts(self):
        """(B, 4, 2) int64: Sun and Moon cards each seat holds now (R2.5)."""
        o = self.ops
        h = self.hands
        return o.stack([o.lookup(self._half_count, h & HALF_MASK),
                        o.lookup(self._half_count, (h >> HALF) & HALF_MASK)], 2)

    # -- observations ------------------------------------------------------------------
    def observe(self, seats=None, out=None):
        """Observation vectors, identical to ``encoding.encode_observation(state, seat)``.

        Args:
            seats: (B,) viewer seats; default :attr:`deciding_seat` (the player to decide;
                in 3 players the solo for the new moon, R7.3).
            out: optional (B, OBS_SIZE) float32 array to fill.

        Returns:
            (B, OBS_SIZE) float32 (deal episodes: the match fields are 0).
        """
        from twilight_env.obs import vector_obs  # lazy: needs twilight_env.obs.encoding

        return vector_obs.observe(self, seats, out)

    def observe_packed(self, seats=None):
        """Compact observations (NumPy backend): ``(flags (B, 120) uint8, scalars (B, 13)
        float32)``; :func:`twilight_env.obs.vector_obs.unpack_observation` expands them to the
        vectors of :meth:`observe` (on any device). See ``vector_obs.observe_packed``."""
        from twilight_env.obs import vector_obs

        return vector_obs.observe_packed(self, seats)

    # -- bridges to the scalar engine ---------------------------------------------------
    def to_state(self, i: int) -> State:
        """Row ``i`` as a scalar :class:`~twilight_env.rules.engine.State` (history included)."""
        o = self.ops
        i = int(i)
        g = lambda a: o.to_numpy(a[i])  # noqa: E731
        st = State.__new__(State)
        st.num_players = self.num_players
        st.seat_cult = SEAT_CULT_4 if self.num_players == 4 else SEAT_CULT_3
        st.hands = [int(x) for x in g(self.hands)]
        pf, hb = [int(x) for x in g(self.played_for)], [int(x) for x in g(self.held_by)]
        hist = [int(x) for x in g(self.history) if x >= 0]
        st.history = [(next(s for s in range(4) if pf[s] >> x & 1),
                       next(s for s in range(4) if hb[s] >> x & 1), x) for x in hist]
        init = st.hands[:]
        for _, h, x in st.history:
            init[h] |= 1 << x
        st.initial_hands = tuple(init)
        for k in ("leader", "first_leader", "trick", "place", "phase", "holder", "pending", "neutral"):
            setattr(st, k, int(g(getattr(self, k))))
        st.cards = [int(x) for x in o.to_numpy(self.cards[i])]
        st.holders = [int(x) for x in o.to_numpy(self.holders[i])]
        st.captured = [int(x) for x in g(self.captured)]
        return st

    def set_states(self, states: Sequence[State], rows=None) -> None:
        """Load scalar states (fresh or mid-deal) into ``rows`` (all rows by default).

        Raises:
            ValueError: on a count mismatch or a state of another number of players.
        """
        o = self.ops
        idx = self._rows_arg(rows)
        if len(states) != idx.size:
            raise ValueError(f"got {len(states)} states for {idx.size} rows")
        for st in states:
            if not isinstance(st, DealState) or st.num_players != self.num_players:
                raise ValueError(f"expected {self.num_players}-player engine states (DealState: State or "
                                 f"PurePythonState), got {st!r}")
        n = idx.size
        cols = {k: np.zeros((n,) + s, np.int64) for k, s in (
            ("hands", (4,)), ("leader", ()), ("first_leader", ()), ("trick", ()), ("place", ()),
            ("phase", ()), ("holder", ()), ("trick_code", ()), ("trick_mask", ()),
            ("best", ()), ("best_place", ()), ("pending", ()), ("neutral", ()), ("captured", (4,)),
            ("played_for", (4,)), ("held_by", (4,)), ("trick_of", (NUM_TRICKS,)))}
        hist = np.full((n, NUM_CARDS + 1), -1, np.int8)
        for j, st in enumerate(states):
            for k in ("hands", "captured"):
                cols[k][j] = getattr(st, k)
            for k in ("leader", "first_leader", "trick", "place", "phase", "holder", "pending", "neutral"):
                cols[k][j] = getattr(st, k)
            best, bp, tm = trick_so_far(st.cards, st.place)  # R4.1
            code = 0
            for p in range(st.place):
                code |= ((st.cards[p] + 1) | (st.holders[p] << 5)) << (8 * p)
            cols["trick_mask"][j], cols["best"][j], cols["best_place"][j] = tm, best, bp
            cols["trick_code"][j] = code
            for k, (ch, ho, x) in enumerate(st.history):
                hist[j, k] = x
                cols["played_for"][j, ch] |= 1 << x
                cols["held_by"][j, ho] |= 1 << x
                cols["trick_of"][j, k >> 2] |= 1 << x
        ti = o.asarray(idx, o.int64)
        for k, v in cols.items():
            getattr(self, k)[ti] = o.asarray(v, o.int64)
        self._history[ti] = o.asarray(hist, o.int8)


class TwilightVectorEnv:
    """A vectorized environment: ``num_envs`` deals stepped together, for RL libraries.

    Every row is one deal episode (R2-R5; 3 players R7). Each step takes one action per
    row from the seat that decides there, returns the next decision's observation and
    action mask for every row, and starts a new deal in every row whose deal just ended
    (auto-reset), so every row always awaits a decision.

    | item | shape, dtype | meaning |
    |------|--------------|---------|
    | ``obs`` | (B, OBS_SIZE) float32 | observation of the deciding player (``info["seat"]``), identical to ``encoding.encode_observation(state, seat)`` |
    | ``mask`` | (B, 31) int8 | 1 at each legal action (``State.legal_actions``) |
    | ``reward`` | (B, 4) float32 | per seat: (own side's deal points - the other side's) / 360, in the step that ends the deal; 0 otherwise |
    | ``done`` | (B,) bool | the deal of that row ended in this step (the row already holds a new deal) |
    | ``info["seat"]`` | (B,) int64 | seat whose decision ``obs``/``mask`` are about (3 players: the solo, 0, decides for the new moon, R7.3) |
    | ``info["acting_seat"]`` | (B,) int64 | seat whose hand or choice the decision is about (chooser or requested holder) |
    | ``info["deal_points"]`` | (B, 2) int64 | deal points of side 0 (seats 0, 2) and side 1 (seats 1, 3) of the deal that ended in this step; 0 elsewhere |

    Reward convention (``docs/API.md``, Rewards, deal episodes): at a deal's end seat ``s`` receives
    ``returns[s] / 360`` where ``returns`` is :meth:`VectorEngine.returns`; partners get
    the same reward and the two sides' rewards sum to 0; each reward lies in [-1, 1]. In
    3 players seat 0 is the solo (Moon, with the new moon, seat 2) against Sun seats 1
    and 3, and seat 2's reward equals seat 0's. Sum a seat's rewards to get its return.

    First leaders: in 4 players the first deal of row ``i`` is led by seat 0, and each
    new deal in a row is led by the seat after the previous deal's first leader (the
    dealer passes left, R2.4); ``rotate_leader=False`` keeps seat 0. In 3 players the
    solo (seat 0) always leads (R7.2).

    Args:
        num_envs: B >= 1.
        num_players: 4 or 3.
        seed: seed of the ``numpy.random.Generator`` that deals the cards (R2.3).
        backend, device: as for :class:`VectorEngine`; on torch every array returned is a
            tensor on ``device``.
        rotate_leader: 4 players: rotate the first leader per row from deal to deal.
        copy: return a new ``obs`` array each step (default). ``False`` reuses one
            buffer: faster, but the previous step's ``obs`` is overwritten.

    Gymnasium vector-env attributes (``gymnasium.vector.VectorEnv``; the step signature
    above is this env's own, with the mask beside the observation): ``num_envs``,
    ``single_observation_space`` (``Box`` (OBS_SIZE,) float32, the AEC env's
    ``"observation"`` space), ``single_action_space`` (``Discrete(31)``),
    ``observation_space`` / ``action_space`` (their batched forms, ``Box`` (B, OBS_SIZE)
    and ``MultiDiscrete`` (B,)), ``metadata`` (``autoreset_mode`` SAME_STEP: a row's new
    deal is returned in the step that ends the old one), ``render_mode`` (None),
    ``closed`` and :meth:`close`. The env pickles and deep-copies on both backends (a
    copy holds the same deals and generator and continues exactly as the original).

    Raises:
        ValueError: on a bad argument; :meth:`step` on an illegal action (nothing changes).
        RuntimeError: :meth:`reset`, :meth:`step` and :meth:`random_actions` after :meth:`close`.
    """

    render_mode = None
    """No rendering (Gymnasium vector-env attribute)."""

    def __init__(self, num_envs: int, num_players: int = 4, seed: int | None = None, *,
                 backend: str = "numpy", device=None, rotate_leader: bool = True, copy: bool = True):
        from gymnasium import spaces  # lazy: the module imports only NumPy at load time
        from gymnasium.vector.utils import batch_space

        from twilight_env.obs.encoding import TOTALS, TOTALS_CAP

        self.engine = VectorEngine(num_envs, num_players, backend=backend, device=device)
        self.num_envs = self.engine.num_envs
        self.num_players = self.engine.num_players
        self.rotate_leader = bool(rotate_leader) and self.num_players == 4
        self.copy = bool(copy)
        self.rng = np.random.default_rng(check_seed(seed))
        self.deals_finished = 0
        """Deals finished since construction (all rows)."""
        self._obs = None
        self._mask = None
        self.closed = False
        """True after :meth:`close`; stepping or resetting a closed env raises ``RuntimeError``."""
        high = np.ones(self.observation_size, dtype=np.float32)
        high[TOTALS:] = TOTALS_CAP  # as the AEC env's observation space (0 in deal episodes)
        self.single_observation_space = spaces.Box(0.0, high, (self.observation_size,), np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        try:
            from gymnasium.vector import AutoresetMode

            mode = AutoresetMode.SAME_STEP
        except ImportError:  # gymnasium < 1.1 has no AutoresetMode
            mode = "SameStep"
        self.metadata = {"autoreset_mode": mode, "render_modes": []}

    def close(self) -> None:
        """Release the state arrays (on torch: the device memory); idempotent. Afterwards
        :meth:`reset`, :meth:`step`, :meth:`step_packed` and :meth:`random_actions` raise
        ``RuntimeError``."""
        if self.closed:
            return
        self.closed = True
        self.engine = None
        self._obs = self._mask = None

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this TwilightVectorEnv is closed (close() was called); make a new one")

    @property
    def observation_size(self) -> int:
        """Length N of one observation vector (``encoding.OBS_SIZE``)."""
        from twilight_env.obs.encoding import OBS_SIZE

        return OBS_SIZE

    def _outputs(self, deal_points):
        e = self.engine
        o = e.ops
        if self.copy or self._obs is None:
            self._obs = o.empty((self.num_envs, self.observation_size), o.float32)
        obs = e.observe(out=self._obs)
        bits = e.legal_bits()
        mask = e.legal_mask(bits)
        mask = mask.view(np.int8) if o.name == "numpy" else mask.view(o.int8)
        info = {"seat": e.deciding_seat, "acting_seat": e.acting_seat, "deal_points": deal_points}
        return obs, mask, info

    def reset(self, seed: int | None = None, deals=None):
        """Deal new cards in every row.

        Args:
            seed: reseed the dealing generator first (same seed, same deals).
            deals: explicit deals, one per row (anything :func:`deals_to_hands` takes).

        Returns:
            ``(obs, mask, info)`` as in the class table.
        """
        self._check_open()
        if seed is not None:
            self.rng = np.random.default_rng(check_seed(seed))
        self.engine.reset(rng=self.rng, deals=deals)
        o = self.engine.ops
        return self._outputs(o.zeros((self.num_envs, 2), o.int64))

    def step(self, actions):
        """Play one action in every row (the deciding seat's), then auto-reset finished deals.

        Args:
            actions: (B,) ints in 0..30, each legal in its row.

        Returns:
            ``(obs, mask, reward, done, info)`` as in the class table.

        Raises:
            ValueError: naming the rows with an illegal action; nothing changes then.
            RuntimeError: if the env is closed.
        """
        reward, done, deal_points = self._advance(actions)
        obs, mask, info = self._outputs(deal_points)
        return obs, mask, reward, done, info

    def step_packed(self, actions):
        """As :meth:`step`, but the observations come in the compact form of
        :meth:`VectorEngine.observe_packed` (NumPy backend): ``((flags, scalars), mask,
        reward, done, info)``; expand them with ``vector_obs.unpack_observation`` (on the
        device that trains on them)."""
        reward, done, deal_points = self._advance(actions)
        e = self.engine
        packed = e.observe_packed()
        mask = e.legal_mask().view(np.int8)
        info = {"seat": e.deciding_seat, "acting_seat": e.acting_seat, "deal_points": deal_points}
        return packed, mask, reward, done, info

    def _advance(self, actions):
        """Apply ``actions``, score and re-deal finished rows; (reward, done, deal_points)."""
        self._check_open()
        e = self.engine
        o = e.ops
        e.apply(actions)
        done = e.done
        reward = o.zeros((self.num_envs, 4), o.float32)
        deal_points = o.zeros((self.num_envs, 2), o.int64)
        if bool(done.any()):
            scores = e.side_scores()
            d = scores[:, 0] - scores[:, 1]
            d = d * done
            reward[:] = o.cast(o.cast(o.stack([d, -d, d, -d], 1), o.float64) / 360.0, o.float32)
            deal_points = scores * done[:, None]
            n = int(done.sum())
            self.deals_finished += n
            idx = np.flatnonzero(o.to_numpy(done))
            lead = ((o.to_numpy(e.first_leader)[idx] + 1) % 4) if self.rotate_leader else 0
            e.reset(idx, rng=self.rng, leaders=lead)
        return reward, done, deal_points

    def random_actions(self):
        """(B,) uniformly random legal actions, drawn from the env's generator."""
        self._check_open()
        return self.engine.random_actions(self.rng)


__all__ = ["VectorEngine", "TwilightVectorEnv", "make_ops", "random_hands_batch", "deals_to_hands",
           "HALF_BITS", "HALF_SOULS", "HALF_MULT", "HALF_COUNT", "HALF_SELECT"]
