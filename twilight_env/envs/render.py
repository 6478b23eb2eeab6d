"""Text rendering of a deal as a spectator sees it (R2.5, R7.1): no hidden card is shown.

Shown: each seat with its player, role, cult and side; the card in front of each seat
in the current trick (and whose hand it came from, R3.3); card-back counts of every
hand; in 3 players the new moon's open hand; the pending Purgatory pile (R4.3); cards
taken, souls, multipliers and deal scores so far (R5); match totals.
"""

from __future__ import annotations

from typing import Sequence

from twilight_env.rules.cards import CARDS, codes_of, multiplier_of, souls_of
from twilight_env.rules.engine import HOLD, NEW_MOON, State

_CULT = ("Sun", "Moon")


def seat_roles(num_players: int) -> list[str]:
    """Role of each seat 0..3: 4 players ``Sun side``/``Moon side``; 3 players ``solo``,
    ``left Sun``, ``new moon``, ``right Sun`` (R2.1, R7.2)."""
    if num_players == 4:
        return ["Sun side", "Moon side", "Sun side", "Moon side"]
    return ["solo", "left Sun", "new moon", "right Sun"]


def _status_line(state: State, seat_names: Sequence[str]) -> str:
    """The line of :func:`render_deal` that says where the deal stands and who acts."""
    if state.done:
        return "Deal over: all 7 tricks played."
    c = state.chooser
    act = f"seat {c} ({seat_names[c]}) chooses"
    if state.phase == HOLD:
        act = (f"seat {c} requested seat {state.holder} ({seat_names[state.holder]}) for a "
               f"{_CULT[state.seat_cult[c]]} card; seat {state.holder} holds")
    return (f"Trick {state.trick + 1} of {state.num_tricks}, place {state.place + 1}, leader seat "
            f"{state.leader}: {act}")


def _trick_fronts(state: State) -> list[str]:
    """What is in front of each seat 0..3 this trick (card, its holder if another seat)."""
    front = ["", "", "", ""]
    for p in range(4):
        x = state.cards[p]
        if x < 0:
            continue
        ch = (state.leader + p) & 3
        h = state.holders[p]
        front[ch] = CARDS[x] + ("" if h == ch else f" (from seat {h})")
    if not state.done and state.phase == HOLD:
        front[state.chooser] = f"? (requested from seat {state.holder})"
    return front


def render_deal(state: State, seat_names: Sequence[str], *, header: str = "",
                deal_points: dict | None = None, totals: dict | None = None) -> str:
    """A spectator's table of one deal.

    Args:
        state: the deal (read only; hidden hands appear only as card-back counts).
        seat_names: 4 names by seat (e.g. agent names; 3 players: the new moon's entry
            names the player deciding for it).
        header: a first line (e.g. episode and deal number).
        deal_points: last finished deal's points by line, shown if given.
        totals: running match totals by line, shown if given.

    Returns:
        The table as a multi-line string.
    """
    n = state.num_players
    roles = seat_roles(n)
    lines = []
    if header:
        lines.append(header)
    lines.append(_status_line(state, seat_names))
    front = _trick_fronts(state)
    head = f"{'seat':<5}{'player':<11}{'role':<11}{'cult':<6}{'backs S/M':<11}{'this trick':<27}{'taken':>6}"
    lines.append(head)
    lines.append("-" * len(head))
    for s in range(4):
        hand = state.hands[s]
        sun, moon = bin(hand & 0x3FFF).count("1"), bin(hand >> 14).count("1")
        backs = f"{sun}/{moon}"
        marker = ">" if (not state.done and s == state.acting_seat) else " "
        lines.append(f"{marker}{s:<4}{seat_names[s]:<11}{roles[s]:<11}{_CULT[state.seat_cult[s]]:<6}"
                     f"{backs:<11}{front[s]:<27}{bin(state.captured[s]).count('1'):>6}")
    if n == 3:
        lines.append(f"New moon's open hand (seat {NEW_MOON}): {' '.join(codes_of(state.hands[NEW_MOON])) or '-'}")
    lines.append(f"Pending pile: {' '.join(codes_of(state.pending)) or '-'}")
    if state.neutral:
        lines.append(f"Neutral (last-trick Purgatory, R4.4): {' '.join(codes_of(state.neutral))}")
    for side in (0, 1):
        taken = state.captured[side] | state.captured[side + 2]
        cult = state.seat_cult[side]
        so, mu = souls_of(taken), multiplier_of(taken, cult)
        name = f"seats {side},{side + 2} ({_CULT[cult]})"
        lines.append(f"{name:<18} took {bin(taken).count('1'):>2} cards: {so:>2} souls x {mu} = {so * mu:>3}")
    if deal_points is not None:
        lines.append("Last deal: " + ", ".join(f"{k} {v}" for k, v in deal_points.items()))
    if totals is not None:
        lines.append("Totals: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    return "\n".join(lines) + "\n"
