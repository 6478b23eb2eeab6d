"""Sizes of the reduced-deck games counted without building their trees: deals, lines of play, information sets.

Each count agrees with the built tree (:mod:`twilight_env.training.reduced_tree`) where both
run (``tests/training/test_reduced_solve.py``); the rules used are R2.3 (the deal), R3.2,
R3.5 (choosing and requests), R4.1, R4.3 (who takes the trick) and R7 (3 players).
"""

from __future__ import annotations

import itertools
import math

from twilight_env.rules.cards import deck_mask, ids_of
from twilight_env.rules.engine import NEW_MOON
from twilight_env.training.reduced_tree import PLAYER_OF_SEAT, SEEN, team_seats


def count_deals(tricks: int) -> int:
    """Number of deals: ``(4t)! / (t!)^4``."""
    return math.factorial(4 * tricks) // math.factorial(tricks) ** 4


def count_terminal_histories(tricks: int, num_players: int) -> int:
    """Number of complete lines of play over all deals and first leaders.

    In every deal, the chooser of each place can end up with any card of its cult not yet
    played, each by exactly one sequence of actions (its own card, or a request and the
    holder's card, R3.2), so a deal has ``prod over places of the cards of the chooser's
    cult left`` lines whatever the hands. Seats alternate cults (R2.1, R7.1), so a trick
    that starts with ``c`` cards of each cult has ``(c (c - 1))^2`` lines.
    """
    lines = 1
    for trick in range(tricks):
        m = 2 * (tricks - trick)
        lines *= (m * (m - 1)) ** 2
    return count_deals(tricks) * (4 if num_players == 4 else 1) * lines


def count_infosets(tricks: int, num_players: int, model: str = "seats") -> int:
    """Number of information sets of a model, counted without building the tree.

    For each player, an information set is a view (the hands it sees as dealt, every seat's
    Sun and Moon counts, the first leader) and a public sequence of actions at which it
    decides. Given the view, a sequence can happen exactly when every card played from a
    hand the player does not see is a card it does not see, not yet played, of the
    chooser's cult, from a seat whose public count of that cult is above 0 (R2.5, R3.2,
    R3.5): the hidden cards can then always be dealt to match. So the sequences of one view
    are the nodes of a tree over (seen hands left, counts left, unseen cards left, the
    trick so far), counted with memoisation. Agrees with :func:`make_model` where both run
    (tests).

    Raises:
        ValueError: on a bad size or model name.
    """
    deck_mask(tricks)
    if num_players not in (3, 4):
        raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
    if model == "seats":
        players, seat_player = num_players, PLAYER_OF_SEAT[num_players]
        seen_of = [set(SEEN[num_players][p]) for p in range(num_players)]
    elif model == "teams":
        players = 2
        moon_seats = team_seats(num_players)[0]
        seat_player = tuple(0 if s in moon_seats else 1 for s in range(4))
        seen_of = [set(team_seats(num_players)[t]) | ({NEW_MOON} if num_players == 3 else set()) for t in (0, 1)]
    else:
        raise ValueError(f"model must be 'seats' or 'teams', got {model!r}")
    total = 0
    for p in range(players):
        total += _count_player(tricks, num_players, p, seat_player, tuple(sorted(seen_of[p])))
    return total


def _count_player(tricks: int, n: int, p: int, seat_player, seen: tuple[int, ...]) -> int:
    from functools import lru_cache

    from twilight_env.rules.cards import PURGATORY_MASK, STRENGTH

    seat_cult = (0, 1, 0, 1) if n == 4 else (1, 0, 1, 0)
    deck = deck_mask(tricks)
    hidden = tuple(s for s in range(4) if s not in seen)

    @lru_cache(maxsize=None)
    def nodes(hands, counts, pool, leader, place, holder, trick):
        if not any(a or b for a, b in counts):
            return 0
        chooser = (leader + place) & 3
        cult = seat_cult[chooser]
        acting = chooser if holder < 0 else holder
        deciding = 0 if (n == 3 and acting == NEW_MOON) else acting
        total = 1 if seat_player[deciding] == p else 0
        cmask = ((1 << 14) - 1) << (14 * cult)
        if holder < 0:
            source = [chooser] if (chooser in seen or counts[chooser][cult]) else []
            for o in (1, 2, 3):  # requests (R3.2, R3.5)
                s = (chooser + o) & 3
                if counts[s][cult]:
                    total += nodes(hands, counts, pool, leader, place, s, trick)
        else:
            source = [holder]
        for s in source:
            cards = ids_of((hands[s] if s in seen else pool) & cmask)
            for c in cards:
                hs = tuple(h & ~(1 << c) if i == s else h for i, h in enumerate(hands))
                cs = tuple((a - (cult == 0), b - (cult == 1)) if i == s else (a, b)
                           for i, (a, b) in enumerate(counts))
                tr = trick + (c,)
                pl = pool if s in seen else pool & ~(1 << c)
                if len(tr) < 4:
                    total += nodes(hs, cs, pl, leader, place + 1, -1, tr)
                    continue
                if any(PURGATORY_MASK >> x & 1 for x in tr):  # R4.3: the first Purgatory's seat leads
                    nxt = (leader + next(i for i, x in enumerate(tr) if PURGATORY_MASK >> x & 1)) & 3
                else:  # R4.1: the first strongest card takes
                    nxt = (leader + max(range(4), key=lambda i: (STRENGTH[tr[i]], -i))) & 3
                total += nodes(hs, cs, pl, nxt, 0, -1, ())
        return total

    total = 0
    leaders = (0, 1, 2, 3) if n == 4 else (0,)
    for hands in _seen_hands(ids_of(deck), tricks, seen):
        seen_mask = sum(hands)
        pool = deck & ~seen_mask
        n_sun = bin(pool & ((1 << 14) - 1)).count("1")
        for split in itertools.product(range(tricks + 1), repeat=len(hidden)):
            if sum(split) != n_sun:
                continue
            counts = _hand_counts(hands, seen, hidden, split, tricks)
            for lead in leaders:
                total += nodes(tuple(hands), counts, pool, lead, 0, -1, ())
    return total


def _hand_counts(hands, seen: tuple[int, ...], hidden: tuple[int, ...], split: tuple[int, ...],
                 tricks: int) -> tuple:
    """(Sun, Moon) card counts of each seat 0..3: a seen seat's from its hand mask, a hidden
    seat's from its number of Sun cards in ``split`` (the rest Moon, ``tricks`` in all)."""
    counts = [(0, 0)] * 4
    for s in seen:
        h = hands[s]
        counts[s] = (bin(h & ((1 << 14) - 1)).count("1"), bin(h >> 14).count("1"))
    for s, k in zip(hidden, split):
        counts[s] = (k, tricks - k)
    return tuple(counts)


def _seen_hands(ids, tricks: int, seen: tuple[int, ...]):
    """Every way to deal ``tricks`` cards to each seen seat: 4 masks by seat (0 for the others)."""
    def rec(i, avail, hands):
        if i == len(seen):
            yield hands
            return
        for h in itertools.combinations(avail, tricks):
            rest = [c for c in avail if c not in h]
            new = list(hands)
            new[seen[i]] = sum(1 << c for c in h)
            yield from rec(i + 1, rest, new)
    yield from rec(0, list(ids), [0, 0, 0, 0])
