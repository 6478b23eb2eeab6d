"""Exact perfect-information solver for a deal in progress (R3-R5, R7.3).

Given a full engine :class:`~twilight_env.rules.engine.State` (every hand known, e.g. a world
drawn from an information set), the solver computes the minimax value of the deal's
final score difference

    value = deal score of side 0 (seats 0, 2) − deal score of side 1 (seats 1, 3)

in deal points (−360..360). Side 0 maximizes it, side 1 minimizes it. **All values in
this module are for side 0**; negate them for side 1. Partners are one player here
(perfect information), and in 3 players the solo (seat 0) and the new moon (seat 2) are
side 0 anyway (R7.3).

Game structure searched (R3.2): at a place the chooser's side either plays a card of the
chooser's cult from the chooser's own hand, or requests a seat. Requesting the partner
is, with every hand known, the same as the chooser's side picking any card of that cult
from the partner's hand, so a choose node of side ``k`` has one child per card of the
chooser's cult in the chooser's or the partner's hand, plus one *hold* node per
opponent seat that holds that cult (R3.5); at a hold node the opponent's side picks the
card (a holder decides for its own side). The trick is resolved by R4.1 (highest
strength, ties to the earlier place), R4.3 (any Purgatory: the trick joins the pending
pile and the seat of the first Purgatory leads) and R4.4 (Purgatory in the last trick:
the pending pile is neutral). The final score depends on what each side took only
through its souls and own-cult multiplier (R5), so the search carries those four
numbers instead of the captured masks.

Exactness: plain alpha-beta on the exact final value, a transposition table keyed at
trick starts by (the four hands, leader, pending pile, souls and multiplier of both
sides) holding lower/upper bounds, and an exact bound cut-off: side 0 cannot end above
(souls0 + remaining souls) × (mult0 + remaining own sanctuaries) − souls1 × mult1, nor
below the mirror bound. None of these change the minimax value (tested against a plain
minimax without pruning or table: the reference's ``minimax_value`` in the parity harness,
``tests/rules/test_parity.py``).

Backends: ``Solver(backend="auto")``, the default, is the compiled ``"numba"`` backend
(:mod:`twilight_env.agents._solver_nb`) when numba is installed (``pip install 'twilight-env[fast]'``;
the ``test`` extra installs it too) and the pure-Python search otherwise. Both return the
same values. Speed (``python benchmarks/agent_speed.py``, medians over random positions
on one core of the 2-core development machine): numba solves 4 tricks left in 6.9-11.2 ms
(n=60, eight runs; the machine's speed drifted between them), 3 tricks in 0.20-0.34 ms;
the Python search needs about 23 ms for 3 tricks and 2.4 s for 4 (1-3 million nodes).
"""

from __future__ import annotations

from twilight_env.rules.cards import (HALF_IDS, HALF_MULT, HALF_SOULS, MULT_OF_CULT, SOULS, STRENGTH, STRONG_FIRST,
                                      SUN_MASK, trick_so_far)
from twilight_env.rules.engine import CHOOSE, NUM_TRICKS, REQUEST_BASE, SEAT_CULT_3, SEAT_CULT_4, DealState

INF = 1 << 20
"""Larger than any deal-score difference (|value| <= 360)."""

_EXACT, _LOWER, _UPPER = 0, 1, 2

# Move ordering (it changes only the speed): a choosing side tries requests of an
# opponent first, then its own cards weakest and least valuable first (the chooser's
# hand before the partner's); an opponent holder tries its cards strongest first
# (``cards.STRONG_FIRST``). Measured on 16 random 3-trick positions: 36% fewer nodes than
# strongest-first own cards, weakest-first holders and requests last.


def _ordered_half(cult: int) -> tuple[tuple[int, ...], ...]:
    order, off = STRONG_FIRST[cult], 14 * cult
    return tuple(tuple(i for i in order if m >> (i - off) & 1) for m in range(1 << 14))


_ORDERED = (_ordered_half(0), _ordered_half(1))
"""Per cult and 14-bit half mask: card ids strongest, most valuable first."""
_ORDERED_WEAK = tuple(tuple(t[::-1] for t in half) for half in _ORDERED)
"""Per cult and 14-bit half mask: card ids weakest, least valuable first."""
_OWN_ORDER = _ORDERED_WEAK
"""The order a choosing side tries its own cards in."""
_HOLDER_ORDER = _ORDERED
"""The order an opponent holder tries its cards in."""


def _check_state(state) -> None:
    if not isinstance(state, DealState):
        raise ValueError(f"the solver needs a twilight_env.rules.engine.DealState (a State or PurePythonState), "
                         f"got {type(state).__name__}")
    if state.done:
        raise ValueError("the deal is over: there is nothing to solve (state.done is True)")


import importlib.util as _importlib_util

HAVE_NUMBA = _importlib_util.find_spec("numba") is not None
"""Whether the optional ``numba`` backend can be used (``pip install twilight-env[fast]``;
numba is imported only when that backend is asked for)."""


class Solver:
    """Alpha-beta searcher with a transposition table for one rule set (3 or 4 players).

    A Solver may be reused across states of the same number of players; its table is
    keyed by full positions, so it stays correct, and :meth:`clear` empties it. The
    table grows without bound while it is kept: call :meth:`clear` between unrelated
    deals if memory matters.

    Args:
        num_players: 3 or 4 (the seat cults differ, R2.1 / R7.1).
        backend: ``"auto"`` (``"numba"`` when numba is installed, else ``"python"``),
            ``"python"`` or ``"numba"``. Both give the same values.

    Raises:
        ValueError: if ``num_players`` is not 3 or 4, ``backend`` is not one of those
            names, or ``"numba"`` is asked for without numba installed.
    """

    def __init__(self, num_players: int = 4, backend: str = "auto"):
        if num_players not in (3, 4):
            raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
        if backend not in ("auto", "python", "numba"):
            raise ValueError(f"backend must be 'auto', 'python' or 'numba', got {backend!r}")
        if backend == "numba" and not HAVE_NUMBA:
            raise ValueError("backend 'numba' needs the numba package (pip install 'twilight-env[fast]'); "
                             "install it or use backend='python'")
        if backend == "auto":
            backend = "numba" if HAVE_NUMBA else "python"
        self.backend = backend
        self.num_players = num_players
        self.seat_cult = SEAT_CULT_4 if num_players == 4 else SEAT_CULT_3  # R2.1, R7.1
        self.table: dict = {}
        self.nodes = 0
        # multiplier of each card for side 0 / side 1 (own-cult sanctuaries only, R5.2)
        self._mult = (MULT_OF_CULT[self.seat_cult[0]], MULT_OF_CULT[self.seat_cult[1]])
        self._nb = None
        if backend == "numba":
            from twilight_env.agents import _solver_nb
            self._nb = _solver_nb.search
            self._var = 0 if num_players == 4 else 1
            self._tt = _solver_nb.shared_table()
            self._gen = _solver_nb.new_generation()

    def clear(self) -> None:
        """Empty the transposition table."""
        self.table.clear()
        if self._nb is not None:
            from twilight_env.agents import _solver_nb
            self._gen = _solver_nb.new_generation()

    def _node(self, hands, leader, place, hold, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
              s0, m0, s1, m1, left, alpha, beta) -> int:
        """Value for side 0 of a choose node (``hold`` -1) or of the opponent holder
        ``hold`` picking the card at this place; ``hands`` is a list of 4 masks (restored)."""
        if self._nb is not None:
            tt = self._tt
            n0 = int(tt[-1, 0])
            args = (hands[0], hands[1], hands[2], hands[3], leader, place, hold, bstr, bplace, ts, tm0, tm1,
                    ps, pm0, pm1, s0, m0, s1, m1, left)
            if alpha <= -INF and beta >= INF:
                # null-window searches (MTD, Plaat et al. 1996) that step the test value
                # out from 1 by doubling steps, then bisect the bracket until the bounds
                # meet; the table carries the bounds between passes
                lo, hi, b, step = -INF, INF, 1, 8
                while True:
                    g = int(self._nb(*args, b - 1, b, self._var, self._gen, tt))
                    if g < b:
                        hi = g
                    else:
                        lo = g
                    if lo >= hi:
                        break
                    if hi >= INF:
                        b = lo + step
                        step *= 2
                    elif lo <= -INF:
                        b = hi - step + 1
                        step *= 2
                    else:
                        b = lo + (hi - lo + 1) // 2
                v = lo
            else:
                v = self._nb(*args, alpha, beta, self._var, self._gen, tt)
            self.nodes += int(tt[-1, 0]) - n0
            return int(v)
        if hold >= 0:
            cult = self.seat_cult[(leader + place) & 3]
            cards = _HOLDER_ORDER[cult][(hands[hold] >> (14 * cult)) & SUN_MASK]
            return self._hold(hands, hold, cards, leader, place, 0, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                              s0, m0, s1, m1, left, alpha, beta, not (hold & 1))
        return self._search(hands, leader, place, 0, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                            s0, m0, s1, m1, left, alpha, beta)

    # -- the search ---------------------------------------------------------------
    def _search(self, hands, leader, place, tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                s0, m0, s1, m1, left, alpha, beta):
        """Minimax value for side 0 of a choose node (place 0..3) or a finished trick (place 4)."""
        if place == 4:
            if bstr == 7:  # R4.3: a Purgatory makes the trick pending
                if left == 1:  # R4.4: last trick, the pile stays neutral
                    return s0 * m0 - s1 * m1
                ps += ts
                pm0 += tm0
                pm1 += tm1
                leader = (leader + bplace) & 3
            else:  # R4.1, R4.2: the taker's side gets the trick and the pending pile
                leader = (leader + bplace) & 3
                if leader & 1:
                    s1 += ts + ps
                    m1 += tm1 + pm1
                else:
                    s0 += ts + ps
                    m0 += tm0 + pm0
                ps = pm0 = pm1 = 0
            left -= 1
            if left == 0:
                return s0 * m0 - s1 * m1
            # exact bounds: nothing can end outside them (R5.3 is monotone in souls, mults)
            rem = hands[0] | hands[1] | hands[2] | hands[3]
            rs = HALF_SOULS[rem & SUN_MASK] + HALF_SOULS[rem >> 14] + ps
            c0, c1 = self.seat_cult[0], self.seat_cult[1]
            r0 = HALF_MULT[(rem >> (14 * c0)) & SUN_MASK] + pm0
            r1 = HALF_MULT[(rem >> (14 * c1)) & SUN_MASK] + pm1
            hi = (s0 + rs) * (m0 + r0) - s1 * m1
            if hi <= alpha:
                return hi
            lo = s0 * m0 - (s1 + rs) * (m1 + r1)
            if lo >= beta:
                return lo
            key = (hands[0], hands[1], hands[2], hands[3], leader, ps, pm0, pm1, s0, m0, s1, m1)
            entry = self.table.get(key)
            if entry is not None:
                flag, v = entry
                if flag == _EXACT:
                    return v
                if flag == _LOWER:
                    if v >= beta:
                        return v
                    if v > alpha:
                        alpha = v
                elif v <= alpha:
                    return v
                elif v < beta:
                    beta = v
            a0 = alpha
            v = self._choose(hands, leader, 0, 0, -1, 0, 0, 0, 0, ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta)
            if v <= a0:
                self.table[key] = (_UPPER, v)
            elif v >= beta:
                self.table[key] = (_LOWER, v)
            else:
                self.table[key] = (_EXACT, v)
            return v
        return self._choose(hands, leader, place, tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                            s0, m0, s1, m1, left, alpha, beta)

    def _choose(self, hands, leader, place, tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                s0, m0, s1, m1, left, alpha, beta):
        self.nodes += 1
        c = (leader + place) & 3
        cult = self.seat_cult[c]
        shift = 14 * cult
        order = _OWN_ORDER[cult]
        maximize = not (c & 1)
        mult0, mult1 = self._mult
        search = self._search
        best = -INF if maximize else INF
        # opponents first (fewer nodes): a request (R3.2, R3.5); the holder's side picks the card
        for h in (c ^ 1, c ^ 3):
            hand = hands[h]
            cards = _HOLDER_ORDER[cult][(hand >> shift) & SUN_MASK]
            if not cards:
                continue
            v = self._hold(hands, h, cards, leader, place, tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
                           s0, m0, s1, m1, left, alpha, beta, not maximize)
            if maximize:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            else:
                if v < best:
                    best = v
                    if v < beta:
                        beta = v
            if alpha >= beta:
                return best
        # own side: the chooser's hand, then the partner's (a request of the partner, R3.2)
        for h in (c, c ^ 2):
            hand = hands[h]
            for x in order[(hand >> shift) & SUN_MASK]:
                st = STRENGTH[x]
                hands[h] = hand ^ (1 << x)
                if st > bstr:
                    v = search(hands, leader, place + 1, tmask | (1 << x), st, place, ts + SOULS[x],
                               tm0 + mult0[x], tm1 + mult1[x], ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta)
                else:
                    v = search(hands, leader, place + 1, tmask | (1 << x), bstr, bplace, ts + SOULS[x],
                               tm0 + mult0[x], tm1 + mult1[x], ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta)
                hands[h] = hand
                if maximize:
                    if v > best:
                        best = v
                        if v > alpha:
                            alpha = v
                else:
                    if v < best:
                        best = v
                        if v < beta:
                            beta = v
                if alpha >= beta:
                    return best
        return best

    def _hold(self, hands, h, cards, leader, place, tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1,
              s0, m0, s1, m1, left, alpha, beta, maximize):
        """Value of requesting seat ``h``: its side (``maximize`` for side 0) picks one of ``cards``."""
        self.nodes += 1
        mult0, mult1 = self._mult
        search = self._search
        hand = hands[h]
        best = -INF if maximize else INF
        for x in cards:
            st = STRENGTH[x]
            hands[h] = hand ^ (1 << x)
            if st > bstr:
                v = search(hands, leader, place + 1, tmask | (1 << x), st, place, ts + SOULS[x],
                           tm0 + mult0[x], tm1 + mult1[x], ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta)
            else:
                v = search(hands, leader, place + 1, tmask | (1 << x), bstr, bplace, ts + SOULS[x],
                           tm0 + mult0[x], tm1 + mult1[x], ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta)
            hands[h] = hand
            if maximize:
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
            else:
                if v < best:
                    best = v
                    if v < beta:
                        beta = v
            if alpha >= beta:
                return best
        return best

    # -- root ---------------------------------------------------------------------
    def _root(self, state: DealState):
        """Search arguments for ``state``'s current trick (before its next card)."""
        if state.num_players != self.num_players:
            raise ValueError(f"this solver is for {self.num_players} players; the state has {state.num_players}")
        mult0, mult1 = self._mult
        ts = tm0 = tm1 = 0
        bstr, bplace, tmask = trick_so_far(state.cards, state.place)  # R4.1
        for p in range(state.place):
            x = state.cards[p]
            ts += SOULS[x]
            tm0 += mult0[x]
            tm1 += mult1[x]
        pend = state.pending
        ps = HALF_SOULS[pend & SUN_MASK] + HALF_SOULS[pend >> 14]
        pm0 = sum(mult0[i] for i in range(28) if pend >> i & 1)
        pm1 = sum(mult1[i] for i in range(28) if pend >> i & 1)
        cap0 = state.captured[0] | state.captured[2]
        cap1 = state.captured[1] | state.captured[3]
        s0 = HALF_SOULS[cap0 & SUN_MASK] + HALF_SOULS[cap0 >> 14]
        s1 = HALF_SOULS[cap1 & SUN_MASK] + HALF_SOULS[cap1 >> 14]
        m0 = sum(mult0[i] for i in range(28) if cap0 >> i & 1)
        m1 = sum(mult1[i] for i in range(28) if cap1 >> i & 1)
        return [tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1, NUM_TRICKS - state.trick]

    def _play_value(self, state: DealState, r, holder: int, x: int, alpha: int, beta: int) -> int:
        """Value for side 0 after the current chooser's card ``x`` comes from ``holder``."""
        tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1, left = r
        mult0, mult1 = self._mult
        hands = list(state.hands)
        hands[holder] ^= 1 << x
        place = state.place
        st = STRENGTH[x]
        if st > bstr:
            bstr, bplace = st, place
        return self._node(hands, state.leader, place + 1, -1, bstr, bplace, ts + SOULS[x],
                          tm0 + mult0[x], tm1 + mult1[x], ps, pm0, pm1, s0, m0, s1, m1, left, alpha, beta)

    def action_values(self, state: DealState) -> dict[int, int]:
        """Exact value for side 0 of every legal action of ``state`` (engine encoding).

        Args:
            state: a deal in progress (not changed).

        Returns:
            ``{action: value}`` for each action of ``state.legal_actions()``; the value is
            side 0's final deal score minus side 1's (deal points) under perfect play of
            both sides after that action. A request of the partner is worth the partner's
            best card for the chooser's side; a request of an opponent its worst.

        Raises:
            ValueError: if ``state`` is not a State of this solver's player count, or is done.
        """
        _check_state(state)
        r = self._root(state)
        c = state.chooser
        cult = self.seat_cult[c]
        out = {}
        if state.phase != CHOOSE:
            for x in state.legal_actions():
                out[x] = self._play_value(state, r, state.holder, x, -INF, INF)
            return out
        for a in state.legal_actions():
            if a < REQUEST_BASE:
                out[a] = self._play_value(state, r, c, a, -INF, INF)
                continue
            h = (c + a - REQUEST_BASE + 1) & 3
            holder_max = not (h & 1)
            vals = [self._play_value(state, r, h, x, -INF, INF)
                    for x in HALF_IDS[cult][(state.hands[h] >> (14 * cult)) & SUN_MASK]]
            out[a] = max(vals) if holder_max else min(vals)
        return out

    def solve(self, state: DealState) -> int:
        """Exact minimax value of ``state`` for side 0 (deal points, −360..360).

        Raises:
            ValueError: if ``state`` is not a State of this solver's player count, or is done.
        """
        _check_state(state)
        r = self._root(state)
        tmask, bstr, bplace, ts, tm0, tm1, ps, pm0, pm1, s0, m0, s1, m1, left = r
        hold = -1 if state.phase == CHOOSE else state.holder
        return self._node(list(state.hands), state.leader, state.place, hold, bstr, bplace, ts, tm0, tm1,
                          ps, pm0, pm1, s0, m0, s1, m1, left, -INF, INF)

    def best_action(self, state: DealState) -> int:
        """A legal action of ``state`` with the best exact value for the acting seat's side.

        Ties go to the smallest action id. Raises ValueError like :meth:`solve`.
        """
        vals = self.action_values(state)
        side = state.acting_seat & 1
        if side == 0:
            return max(vals, key=lambda a: (vals[a], -a))
        return min(vals, key=lambda a: (vals[a], a))


_SOLVERS: dict[int, Solver] = {}


def _solver_for(state: DealState) -> Solver:
    _check_state(state)
    s = _SOLVERS.get(state.num_players)
    if s is None:
        s = _SOLVERS[state.num_players] = Solver(state.num_players)
    if len(s.table) > 2_000_000:
        s.clear()
    return s


def solve(state: DealState) -> int:
    """Exact minimax value of ``state`` for side 0 (seats 0, 2): side 0's final deal score
    minus side 1's, in deal points (−360..360), both sides playing perfectly (R3-R5).

    Raises:
        ValueError: if ``state`` is not an engine state (DealState) or the deal is over.
    """
    return _solver_for(state).solve(state)


def action_values(state: DealState) -> dict[int, int]:
    """Exact value for side 0 of every legal action (see :meth:`Solver.action_values`)."""
    return _solver_for(state).action_values(state)


def best_action(state: DealState) -> int:
    """Best legal action for the acting seat's side (see :meth:`Solver.best_action`)."""
    return _solver_for(state).best_action(state)


def brute_force_value(state: DealState) -> int:
    """Plain minimax over engine states (no pruning, no table): the reference for tests.

    The side of the acting seat (the chooser, or the requested holder) decides; side 0
    maximizes side 0's score minus side 1's. Exponential: use only with a few tricks left.
    """
    if state.done:
        a, b = state.side_scores()
        return a - b
    maximize = not (state.acting_seat & 1)
    vals = []
    for a in state.legal_actions():
        s = state.clone()
        s.apply(a)
        vals.append(brute_force_value(s))
    return max(vals) if maximize else min(vals)


__all__ = ["Solver", "solve", "action_values", "best_action", "brute_force_value"]
