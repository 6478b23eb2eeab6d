"""The batch engine: B Twilight deals held as arrays and stepped with one call (R3-R5, R7.1-R7.3).

:class:`VectorEngine` is described, with its state arrays, backends and measured speed, in
:mod:`twilight_env.envs.vector`, which re-exports it; the tables and array ops it runs on
are in :mod:`twilight_env.envs.vector_ops`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twilight_env.rules.cards import NUM_CARDS, PURGATORY_MASK, trick_so_far
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

    Attributes are the state arrays in :mod:`twilight_env.envs.vector`'s docstring, plus ``num_envs``,
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
