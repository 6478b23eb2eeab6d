"""``twilight deal``: play one random deal and print it trick by trick.

The deal and every action come from one ``numpy.random.default_rng(seed)``: the deck is
shuffled with it (R2.3), then each decision picks a uniformly random legal action
(``legal[rng.integers(len(legal))]``). The log shows, in aligned columns:

- the hands as dealt, by seat, with side, cult and role (3 players: solo, Sun left,
  new moon (open), Sun right; R7.2);
- for each trick and place: the chooser, its request (the seat asked) or "plays own",
  the holder whose hand the card came from, the card code and name (R3.2, R3.3); then
  who takes the trick (R4.1, R4.2) or "pending (Purgatory)" and the pending pile (R4.3);
- at the end, each side's captured cards and souls × multiplier = deal score, with the
  own-cult sanctuaries that made the multiplier and the other cult's sanctuaries it
  took (denied to the other side, R5.2), and the neutral pile (R4.4); in 3 players
  also what each player is credited (R7.5).

Example: ``twilight deal --seed 7 --players 3 --solo 1``. With ``--json`` the command
prints the deal's record (``twilight_env.records.game_records``, ``docs/RECORDS.md``) instead.
"""

from __future__ import annotations

import argparse
from typing import Callable, Sequence

import numpy as np

from twilight_env.rules.cards import CARDS, KIND, MULTIPLIER, codes_of, multiplier_of, souls_of, trick_so_far
from twilight_env.rules.engine import NEW_MOON, NUM_TRICKS, PURGATORY_MASK, REQUEST_BASE, Config, Match, State

_CULT = ("Sun", "Moon")
_KIND_NAMES = {"P": "Purgatory", "C1": "Hierarch (I)", "C2": "High Priest (II)", "C3": "Priest (III)",
               "C4": "Adept (IV)", "C5": "Novice (V)", "3": "3 souls", "4": "4 souls", "5": "5 souls",
               "6": "6 souls", "7": "7 souls", "A": "Altar (x1)", "T": "Temple (x2)", "O": "Obelisk (x3)"}


def card_name(card: int) -> str:
    """Readable name of a card id, e.g. ``"Sun Hierarch (I)"`` (R1)."""
    return f"{_CULT[card // 14]} {_KIND_NAMES[KIND[card]]}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``twilight deal``."""
    from twilight_env.util.argtypes import non_negative_int

    parser.add_argument("--seed", type=non_negative_int, default=7,
                        help="seed of the deal and of the random play (default 7)")
    parser.add_argument("--players", type=int, choices=(3, 4), default=4, help="3 or 4 players (default 4)")
    parser.add_argument("--dealer", type=int, choices=range(4), metavar="SEAT",
                        help="4 players: the dealer's seat 0..3; the seat after it leads (default 3)")
    parser.add_argument("--solo", type=int, choices=range(3), metavar="PLAYER",
                        help="3 players: the solo player 0..2 (default 0)")
    parser.add_argument("--json", action="store_true",
                        help="print the deal's record as JSON (docs/RECORDS.md) instead of the text log")


def play_random_deal(seed: int, num_players: int = 4, dealer: int | None = None,
                     solo: int | None = None) -> Match:
    """Deal and play one deal with uniformly random legal actions; returns the finished
    (but not yet credited) :class:`~twilight_env.rules.engine.Match`.

    Raises:
        ValueError: ``dealer`` with 3 players, ``solo`` with 4, or an out-of-range seat.
    """
    rng = np.random.default_rng(seed)
    match = Match(Config(num_players=num_players), rng, dealer=dealer, solo=solo)
    st = match.state
    while not st.done:
        legal = st.legal_actions()
        st.apply(legal[int(rng.integers(len(legal)))])
    return match


def _seat_labels(match: Match) -> list[str]:
    """Per seat: ``"seat 0 (Sun)"``; 3 players add the player: ``"seat 0 (Moon, p1)"``."""
    st = match.state
    if st.num_players == 4:
        return [f"seat {s} ({_CULT[st.seat_cult[s]]})" for s in range(4)]
    out = []
    for s in range(4):
        who = "new moon" if s == NEW_MOON else f"p{match.player_of_seat(s)}"
        out.append(f"seat {s} ({_CULT[st.seat_cult[s]]}, {who})")
    return out


def _roles(num_players: int) -> list[str]:
    if num_players == 4:
        return ["Sun side", "Moon side", "Sun side", "Moon side"]
    return ["solo", "Sun left", "new moon (open)", "Sun right"]


def _codes(mask: int) -> str:
    return " ".join(codes_of(mask)) or "-"


def _sanctuaries(mask: int, cult: int) -> list[str]:
    """Codes of ``cult``'s sanctuaries in ``mask`` with their multipliers, e.g. ``"ST x2"``."""
    return [f"{CARDS[i]} x{MULTIPLIER[i]}" for i in range(14 * cult, 14 * cult + 14)
            if MULTIPLIER[i] and mask >> i & 1]


def format_deal(match: Match, seed: int | None = None) -> str:
    """The log of a finished deal (see the module docstring) as one string."""
    st: State = match.state
    n = st.num_players
    labels = _seat_labels(match)
    width = max(len(x) for x in labels)
    lines = []
    head = f"Twilight deal: {n} players"
    if seed is not None:
        head += f", seed {seed}"
    if n == 4:
        head += f", dealer seat {match.dealer}, seat {st.first_leader} leads"
    else:
        head += f", solo p{match.solo} (seat 0), the solo leads"
    lines += [head]
    if n == 3:
        lines.append("The new moon's hand is open; the solo makes every decision for it (R7.1, R7.3).")
    lines += ["", "Hands as dealt"]
    lines.append(f"  {'seat':<{width}}  {'side':<6}  {'role':<15}  hand")
    for s in range(4):
        side = f"side {s & 1}"
        lines.append(f"  {labels[s]:<{width}}  {side:<6}  {_roles(n)[s]:<15}  {_codes(st.initial_hands[s])}")

    # replay the history on a fresh state to log each trick as it happened
    replay = State(st.initial_hands, st.first_leader, n)
    history = st.history
    for t in range(NUM_TRICKS):
        plays = history[4 * t: 4 * t + 4]
        pending_before = replay.pending
        lines += ["", f"Trick {t + 1}  (leader {labels[replay.leader]})"]
        lines.append(f"  {'place':<5}  {'chooser':<{width}}  {'request':<14}  {'holder':<{width}}  card")
        for p, (chooser, holder, card) in enumerate(plays):
            request = "plays own" if holder == chooser else f"asks seat {holder}"
            lines.append(f"  {p + 1:<5}  {labels[chooser]:<{width}}  {request:<14}  {labels[holder]:<{width}}  "
                         f"{CARDS[card]:<4} {card_name(card)}")
            if holder != chooser:
                replay.apply(REQUEST_BASE + (holder - chooser) % 4 - 1)
            replay.apply(card)
        lines.append("  -> " + trick_outcome(plays, t == NUM_TRICKS - 1, pending_before, replay,
                                             lambda seat: labels[seat]))

    lines += ["", "Result"]
    lines += result_lines(match)
    return "\n".join(lines)


def trick_outcome(plays, last: bool, pending_before: int, after: State, label: Callable[[int], str],
                  card_text: Callable[[int], str] = lambda card: CARDS[card]) -> str:
    """Where a finished trick went, in words (R4.1-R4.4), e.g. ``"seat 1 (Moon) takes the
    trick with SC1, and the pending pile (SP S3 M4 MA)"``.

    Args:
        plays: the trick's ``(chooser, holder, card id)`` by place (``State.history``).
        last: whether it is the 7th trick (R4.4).
        pending_before: the pending pile (card bit mask) before the trick.
        after: the state once the trick is complete (its leader is the next leader).
        label: text of a seat.
        card_text: text of a card id (default its code).
    """
    cards = [c for _, _, c in plays]
    if sum(1 << c for c in cards) & PURGATORY_MASK:
        first = next(p for p, c in enumerate(cards) if (1 << c) & PURGATORY_MASK)
        if last:
            return f"Purgatory in the last trick: the pending pile stays neutral ({_codes(after.neutral)})"
        return (f"pending (Purgatory {card_text(cards[first])} for {label(plays[first][0])}); "
                f"pending pile: {_codes(after.pending)}; {label(after.leader)} leads")
    _, best, _ = trick_so_far(cards, 4)  # R4.1: the strongest, the first of equals
    took = f"{label(after.leader)} takes the trick with {card_text(cards[best])}"
    if pending_before:
        took += f", and the pending pile ({_codes(pending_before)})"
    return took


def result_lines(match: Match, player_names: Sequence[str] | None = None) -> list[str]:
    """The end of a finished deal (R5, R7.5): each side's captured cards and souls ×
    multiplier = deal score, with the own-cult sanctuaries that made the multiplier and
    the other cult's that it took (denied, R5.2); the neutral pile (R4.4); the deal
    score; in 3 players what each player is credited (R7.5).

    Args:
        match: a match whose current deal is finished.
        player_names: 3 players: the players' names in the credited line (default
            ``p0``, ``p1``, ``p2``).
    """
    st = match.state
    n = st.num_players
    lines = []
    scores = st.side_scores()
    side_names = (["side 0 (Sun, seats 0+2)", "side 1 (Moon, seats 1+3)"] if n == 4 else
                  ["side 0 (Moon: solo + new moon)", "side 1 (Sun: seats 1+3)"])
    sw = max(len(x) for x in side_names)
    for side in (0, 1):
        mask = st.side_captured(side)
        cult = st.seat_cult[side]
        own = _sanctuaries(mask, cult)
        denied = _sanctuaries(mask, 1 - cult)
        lines.append(f"  {side_names[side]:<{sw}}  captured ({bin(mask).count('1'):>2}): {_codes(mask)}")
        mult = multiplier_of(mask, cult)
        expl = f"souls {souls_of(mask):>2} x multiplier {mult} = deal score {scores[side]:>3}"
        expl += f"   (own sanctuaries: {', '.join(own) or 'none'}"
        if denied:
            expl += f"; denied to {_CULT[1 - cult]}: {', '.join(denied)}"
        lines.append(f"  {'':<{sw}}  {expl})")
    lines.append(f"  {'neutral pile':<{sw}}  ({bin(st.neutral).count('1'):>2}): {_codes(st.neutral)}"
                 f"   souls {souls_of(st.neutral)}")
    lines.append(f"Deal score: {_CULT[st.seat_cult[0]]} {scores[0]}, {_CULT[st.seat_cult[1]]} {scores[1]}")
    if n == 3:
        pts = match.deal_points()
        names = list(player_names) if player_names is not None else [f"p{p}" for p in range(3)]
        lines.append("Credited (R7.5): " + ", ".join(f"{names[p]} {pts[p]}" for p in range(3)))
    return lines


def run(args: argparse.Namespace) -> int:
    """Play and print one deal; 0 on success (ValueError -> the CLI prints it, exit 2)."""
    if args.dealer is not None and args.players != 4:
        raise ValueError("--dealer is only for 4 players; in 3 players give --solo")
    if args.solo is not None and args.players != 3:
        raise ValueError("--solo is only for 3 players (add --players 3); in 4 players give --dealer")
    match = play_random_deal(args.seed, args.players, args.dealer, args.solo)
    if getattr(args, "json", False):
        import json

        from twilight_env.records.game_records import deal_record

        rec = deal_record(match.state, None, config=match.config,
                          dealer=match.dealer if args.players == 4 else None,
                          solo=match.solo if args.players == 3 else None,
                          agents=["random"] * 4, seed=args.seed, meta={"source": "twilight deal"})
        print(json.dumps(rec, indent=1))
        return 0
    print(format_deal(match, args.seed))
    return 0


__all__ = ["add_arguments", "run", "play_random_deal", "format_deal", "card_name", "trick_outcome", "result_lines"]
