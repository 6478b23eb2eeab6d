"""Matches: deals until the target, dealer and solo rotation, score lines (R2.4, R6, R7.4-R7.6, R8).

:mod:`twilight_env.rules.engine` re-exports every public name of this module.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from twilight_env.rules.hands import NUM_TRICKS
from twilight_env.rules.reduced import ReducedState
from twilight_env.rules.state import NEW_MOON, Config, State

GOALS_333 = (333, 666, 999)


def fixed_solo_scores_problem(config: Config, solo: int, totals: Sequence[int]) -> str | None:
    """Why ``totals`` cannot start a ``fixed_solo`` match with ``solo``, or None if they can.

    Under ``fixed_solo`` with ``"team"`` scoring (R7.6, R7.5) the two Sun players form one
    side: every deal credits both with the same Sun score, and the match reads one total
    for the side. Their two score lines must therefore start equal; unequal totals would
    make the side's total depend on which line is read.

    Args:
        config: the match rules; only 3 players, ``fixed_solo``, ``"team"`` scoring is checked.
        solo: the solo player 0..2.
        totals: starting totals by score line (players 0..2).
    """
    if config.num_players != 3 or not config.fixed_solo or config.three_player_scoring != "team":
        return None
    a, b = [p for p in range(3) if p != solo]
    if totals[a] == totals[b]:
        return None
    return (f"under fixed_solo the two Sun players share one score line (R7.6, R7.5), so their starting "
            f"totals must be equal; got player {a}: {totals[a]} and player {b}: {totals[b]} "
            f"(solo: player {solo})")


class Match:
    """A match: deals until the target (R6, R7.5), with dealer or solo rotation.

    Score lines (``totals``, a list of ints):
        4 players: one per side, index 0 = Sun (seats 0, 2), 1 = Moon (seats 1, 3).
        3 players, ``"team"``: one per player 0..2 (R7.5).
        3 players, ``"individual"``: one per player 0..2 plus index 3, the new-moon line (R8).

    Starting totals (``scores``): any non-negative ints by line; under 3-player
    ``fixed_solo`` (team scoring) the two Sun players' totals must be equal, since they
    share one score line (R7.6, R7.5; :func:`fixed_solo_scores_problem`).

    Raises:
        ValueError: (constructor) on malformed ``scores``, ``dealer`` or ``solo``, unequal
            Sun starting totals under ``fixed_solo``, or a random deal without ``rng``.

    Attributes:
        config: the :class:`Config`.
        totals: running totals by line (see above).
        dealer: 4 players: the dealer's seat of the current deal.
        solo: 3 players: the solo player (0..2) of the current deal.
        state: the current deal :class:`State`.
        deals_played: finished deals.
        done: True when the match is decided.
        winners: lines that won (empty until done).
        last_deal_points: deal points by line of the last finished deal.
    """

    def __init__(self, config: Config, rng: np.random.Generator | None = None, *,
                 deal: Sequence[Sequence[str]] | None = None, dealer: int | None = None,
                 solo: int | None = None, scores: Sequence[int] | None = None):
        self.config = config
        self.num_lines = 2 if config.num_players == 4 else (4 if config.three_player_scoring == "individual" else 3)
        if scores is None:
            self.totals = [0] * self.num_lines
        else:
            if len(scores) != self.num_lines or not all(
                    isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in scores):
                raise ValueError(f"scores must be {self.num_lines} ints ({self.line_names()}), got {scores!r}")
            self.totals = [int(x) for x in scores]
        if config.num_players == 4:
            if solo is not None:
                raise ValueError("solo is only for 3 players")
            if dealer is None:
                dealer = 3  # seat 0 leads the first deal
            if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < 4:
                raise ValueError(f"dealer must be a seat 0..3, got {dealer!r}")
            self.dealer = int(dealer)
            self.solo = -1
        else:
            if dealer is not None:
                raise ValueError("dealer is only for 4 players; in 3 players give solo")
            if solo is None:
                solo = 0
            if isinstance(solo, bool) or not isinstance(solo, (int, np.integer)) or not 0 <= solo < 3:
                raise ValueError(f"solo must be a player 0..2, got {solo!r}")
            self.solo = int(solo)
            self.dealer = -1
            why = fixed_solo_scores_problem(config, self.solo, self.totals)
            if why is not None:
                raise ValueError(f"scores: {why}")
        self.deals_played = 0
        self.done = False
        self.winners: tuple[int, ...] = ()
        self.last_deal_points = [0] * self.num_lines
        self._start_deal(rng, deal)

    def line_names(self) -> list[str]:
        """Names of the score lines: ``["sun", "moon"]`` or ``["player 0", ..., "new moon"]``."""
        if self.config.num_players == 4:
            return ["sun", "moon"]
        return [f"player {i}" for i in range(3)] + (["new moon"] if self.num_lines == 4 else [])

    # players <-> seats in 3 players (R7.4)
    def seat_of_player(self, player: int) -> int:
        """Seat of a player in the current deal (4p: the same; 3p: solo 0, left 1, right 3)."""
        if self.config.num_players == 4:
            return player
        return (0, 1, 3)[(player - self.solo) % 3]

    def player_of_seat(self, seat: int) -> int:
        """Player at a seat in the current deal; 3 players: the new moon (2) maps to the solo."""
        if self.config.num_players == 4:
            return seat
        return (self.solo + (0, 1, 0, 2)[seat]) % 3

    def _start_deal(self, rng, deal) -> None:
        leader = (self.dealer + 1) % 4 if self.config.num_players == 4 else 0
        if deal is None and rng is None:
            raise ValueError("a random deal needs a numpy.random.Generator")
        tricks = self.config.tricks
        if tricks != NUM_TRICKS:
            if deal is not None:
                self.state = ReducedState.from_deal(deal, leader, self.config.num_players, tricks)
            else:
                self.state = ReducedState.random(rng, leader, self.config.num_players, tricks)
        elif deal is not None:
            self.state = State.from_deal(deal, leader, self.config.num_players)
        else:
            self.state = State.random(rng, leader, self.config.num_players)

    def deal_points(self) -> list[int]:
        """Deal points by score line of the finished current deal (R5, R7.5, R8)."""
        st = self.state
        s0, s1 = st.side_scores()
        if self.config.num_players == 4:
            return [s0, s1]  # side 0 is Sun
        if self.num_lines == 3:
            pts = [s1] * 3  # Sun side's score for the two Sun players
            pts[self.solo] = s0
            return pts
        seat = st.seat_scores()
        pts = [0, 0, 0, seat[NEW_MOON]]
        for p in range(3):
            pts[p] = seat[self.seat_of_player(p)]
        return pts

    def finish_deal(self) -> None:
        """Credit the finished deal and decide the match (R6, R7.5); call once per deal."""
        if not self.state.done:
            raise ValueError("the current deal is not finished")
        pts = self.deal_points()
        self.last_deal_points = pts
        for i, p in enumerate(pts):
            self.totals[i] += p
        self.deals_played += 1
        self.winners = self._decide()
        self.done = bool(self.winners)

    def next_deal(self, rng: np.random.Generator | None, deal=None) -> None:
        """Rotate dealer (R2.4) or solo (R7.4, unless ``fixed_solo``) and deal again."""
        if self.done:
            raise ValueError("the match is over")
        if self.config.num_players == 4:
            self.dealer = (self.dealer + 1) % 4
        elif not self.config.fixed_solo:
            self.solo = (self.solo + 2) % 3
        self._start_deal(rng, deal)

    def _groups(self) -> list[list[int]]:
        """Competing parties as groups of lines (3p fixed_solo: solo vs the two Sun players)."""
        if self.config.num_players == 3 and self.config.fixed_solo and self.num_lines == 3:
            return [[self.solo], [p for p in range(3) if p != self.solo]]
        return [[i] for i in range(self.num_lines)]

    def _decide(self) -> tuple[int, ...]:
        groups = self._groups()
        # one total per group: the lines of a group are equal (the fixed_solo Sun lines start
        # equal, fixed_solo_scores_problem, and every deal credits both the same)
        tot = [self.totals[g[0]] for g in groups]
        target = self.config.target
        if self.config.goals_333:
            for goal in GOALS_333:
                if goal >= target:
                    break
                hit = [i for i, t in enumerate(tot) if t == goal]
                if len(hit) == 1:
                    return tuple(groups[hit[0]])
                if hit:
                    return ()  # tie on the same goal: play on (R9)
        over = [i for i, t in enumerate(tot) if t >= target]
        if not over:
            return ()
        best = max(tot)
        top = [i for i, t in enumerate(tot) if t == best]
        if len(top) > 1:
            return ()  # tie: play on (R6.1)
        return tuple(groups[top[0]])
