"""``twilight play``: a person plays one seat of one deal in the terminal against agents.

What the person sees comes only from their information set (R2.5, R7.1): their own
hand (codes and names), every seat's card backs (how many Sun and Moon cards it holds),
in 3 players the new moon's open hand, the current trick (chooser, holder and card per
place), the pending pile (R4.3), the cards each side has taken and the deal score so far.

The inputs a prompt accepts are listed in :data:`HELP`, which ``help`` prints.
Anything else, or an illegal choice, is answered with the list of legal inputs and the
prompt is repeated. In 3 players the solo (seat 0) also decides for the new moon, seat 2
(R7.3).
"""

from __future__ import annotations

import argparse
import os
from typing import Callable

import numpy as np

from twilight_env.agents.base import optional_member
from twilight_env.records import deal_log
from twilight_env.rules.cards import CARDS, CULT_NAMES, codes_of
from twilight_env.util.argtypes import non_negative_int
from twilight_env.records.deal_log import result_lines, trick_outcome
from twilight_env.rules.engine import HOLD, NEW_MOON, NUM_TRICKS, PURGATORY_MASK, REQUEST_BASE, Config, Match, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.rules.scoring import score_mask

from twilight_env.experiments.common import agent_available, agent_rng, check_specs

QUIT_WORDS = ("quit", "q", "exit")
HELP = """Inputs at a prompt (case does not matter):
  a card code, e.g. SC1     play that card (as chooser from your own hand, or as the requested holder) (R3.2)
  ask N  or  N              as chooser, request seat N to play a card of your cult for you (R3.2, R3.5)
  request +1 / +2 / +3      request the seat at that offset in play order (+2 is the partner)
  help                      show this again
  quit (or end of input)    leave the game (Ctrl-C too, with exit status 130)"""
"""The inputs a prompt accepts; ``help`` prints this."""


def card_name(cid: int) -> str:
    """``"SC1 Sun Hierarch (I)"`` for a card id (R1): its code and ``twilight deal``'s name."""
    return f"{CARDS[cid]} {deal_log.card_name(cid)}"


def seat_label(seat: int, num_players: int, human: int) -> str:
    """``"seat 1 (Moon)"``, with ``you``, ``solo`` or ``new moon`` where it applies."""
    cult = ("Sun", "Moon", "Sun", "Moon") if num_players == 4 else ("Moon", "Sun", "Moon", "Sun")
    role = ""
    if num_players == 3:
        role = {0: ", solo", NEW_MOON: ", new moon"}.get(seat, "")
    you = ", you" if seat == human else ""
    if num_players == 3 and seat == NEW_MOON and human == 0:
        you = ", you decide"
    return f"seat {seat} ({cult[seat]}{role}{you})"


def legal_inputs(info: InfoSet) -> dict[str, int]:
    """The words accepted now, mapped to actions: card codes and ``ask N`` (N a seat)."""
    words = {CARDS[a]: a for a in info.legal_actions if a < REQUEST_BASE}
    asks = sorted(((info.chooser + a - REQUEST_BASE + 1) % 4, a) for a in info.legal_actions if a >= REQUEST_BASE)
    words.update((f"ask {seat}", a) for seat, a in asks)
    return words


def parse_input(text: str, info: InfoSet) -> int | None:
    """The action meant by ``text``, or None if it is not a legal input now (never raises)."""
    words = legal_inputs(info)
    t = " ".join(text.strip().split()).lower()
    if not t:
        return None
    for w, a in words.items():
        if w.lower() == t:
            return a
    parts = t.replace("+", " +").split()
    seat = None
    if len(parts) == 1 and parts[0].isdigit():
        seat = int(parts[0])
    elif len(parts) == 2 and parts[0] in ("ask", "request", "r") and parts[1].lstrip("+").isdigit():
        if parts[1].startswith("+"):
            off = int(parts[1][1:])
            if off in (1, 2, 3):
                seat = (info.chooser + off) % 4
        else:
            seat = int(parts[1])
    if seat is not None and 0 <= seat < 4 and info.phase == "choose":
        return words.get(f"ask {seat}")
    return None


def view(info: InfoSet, human: int, names: list[str]) -> str:
    """The text shown to the person before a decision (their information set only)."""
    n = info.num_players
    cult = info.seat_cult
    lines = [f"== trick {info.trick + 1} of 7, place {info.place + 1} of 4 — you are "
             f"{seat_label(human, n, human)} =="]
    for side, seats in ((0, (0, 2)), (1, (1, 3))):
        taken = info.captured[seats[0]] | info.captured[seats[1]]
        c = cult[seats[0]]
        lines.append(f"  {CULT_NAMES[c].capitalize()} side (seats {seats[0]}, {seats[1]}) took "
                     f"{bin(taken).count('1')} cards, deal score so far {score_mask(taken, c)}")
    backs = []
    for s in range(4):
        sun, moon = info.counts[s]
        who = "you" if s == human else names[s]
        backs.append(f"seat {s} [{who}] {sun} Sun/{moon} Moon")
    lines.append("  card backs: " + " · ".join(backs))
    if n == 3:
        lines.append("  new moon's open hand (seat 2): " + (" ".join(info.open_hand) or "(empty)"))
    lines.append(f"  current trick (leader seat {info.leader}):")
    for p in range(4):
        c = info.trick_cards[p]
        if c < 0:
            break
        ch = (info.leader + p) % 4
        lines.append(f"    place {p + 1}: chooser seat {ch}, holder seat {info.trick_holders[p]}: {card_name(c)}")
    if info.phase == "hold":  # the place being played: a request waits for its card (R3.2)
        lines.append(f"    place {info.place + 1}: chooser seat {info.chooser} requested a card from seat "
                     f"{info.acting_seat}")
    elif info.place == 0:
        lines.append("    (no card yet)")
    lines.append("  pending pile: " + (" ".join(codes_of(info.pending)) or "empty"))
    own = info.known_masks[human]
    lines.append("  your hand: " + (" · ".join(card_name(c) for c in _ids(own)) or "(empty)"))
    acting = info.acting_seat
    if info.phase == "hold":
        ch_cult = CULT_NAMES[cult[info.chooser]].capitalize()
        whose = "you" if acting == human else f"the new moon (seat {acting}), for which you decide"
        lines.append(f"  seat {info.chooser} requests a {ch_cult} card from {whose}.")
    else:
        if acting == human:
            lines.append(f"  you choose place {info.place + 1}: play a "
                         f"{CULT_NAMES[cult[human]].capitalize()} card or request a seat.")
        else:
            lines.append(f"  you choose for the new moon (seat {acting}) at place {info.place + 1}.")
    return "\n".join(lines)


def _ids(mask: int) -> list[int]:
    return [i for i in range(28) if mask >> i & 1]


def describe(state: State, action: int, human: int) -> str:
    """One line describing ``action`` about to be applied to ``state``."""
    n = state.num_players
    ch = state.chooser
    if state.phase == HOLD:
        return (f"  {seat_label(state.holder, n, human)} gives {card_name(action)} "
                f"for {seat_label(ch, n, human)}")
    if action >= REQUEST_BASE:
        target = (ch + action - REQUEST_BASE + 1) % 4
        return f"  {seat_label(ch, n, human)} requests {seat_label(target, n, human)}"
    return f"  {seat_label(ch, n, human)} plays {card_name(action)}"


def trick_result(before: State, after: State, human: int) -> str:
    """What happened to the trick just finished (R4.1-R4.4): who took it with which card,
    and where the pending pile went (``twilight deal``'s words,
    :func:`twilight_env.records.deal_log.trick_outcome`)."""
    n = after.num_players
    t = before.trick
    plays = after.history[4 * t: 4 * t + 4]
    last = t == NUM_TRICKS - 1
    text = trick_outcome(plays, last, before.pending, after, lambda seat: seat_label(seat, n, human), card_name)
    purgatory = bool(sum(1 << c for _, _, c in plays) & PURGATORY_MASK)
    rule = "R4.4" if purgatory and last else "R4.3" if purgatory or before.pending else "R4.2"
    return f"  -> {text} ({rule})"


def _greet(players: int, human: int, seed: int, specs: list, say: Callable[[str], None]) -> list[str]:
    """Say who sits where and how to play; returns the name shown for each seat 0..3."""
    names = ["you" if s == human else ("you decide" if specs[s] == "you" else specs[s]) for s in range(4)]
    say(f"Twilight, {players} players, seed {seed}. You are {seat_label(human, players, human)}; "
        + ", ".join(f"seat {s}: {names[s]}" for s in range(4) if s != human) + ". Seat 0 leads.")
    say("Type a card code (e.g. SC1), 'ask N' to request seat N, 'help', or 'quit'.")
    return names


def _reset_agents(agents: dict) -> None:
    """Call ``reset()`` on each agent that has one, before the deal starts."""
    for a in agents.values():
        reset = optional_member(a, "reset")
        if reset is not None:
            reset()


def play_game(players: int, human: int, opponents: str, partner: str, seed: int,
              ask: Callable[[str], str] | None = None, say: Callable[[str], None] = print,
              record: str | None = None, force: bool = False) -> int:
    """Play one deal with a person at seat ``human``; returns an exit code: 0 at the end,
    on ``quit`` or at the end of input; 130 on Ctrl-C at a prompt.

    ``ask(prompt)`` reads an input (default :func:`input`), ``say(line)`` shows a line.

    With ``record`` (a file path), the finished deal's record (``docs/RECORDS.md``; agents
    by seat, the person as ``"human"``) is written there (``.gz``: gzip); a deal left
    before its end writes none. The path is checked before the deal starts
    (:func:`twilight_env.records.game_records.check_record_file`): a folder, an existing file (unless
    ``force``) or a place that cannot be written (a full disk included: a trial file is
    written there first) is refused naming ``--record``. The record is written atomically:
    a write error at the end leaves no empty or partial file and is one line naming it.

    Raises:
        ValueError: bad seat, agent spec or ``--record`` path (before the deal starts).
    """
    from twilight_env.records.dealsets import generate_deals

    ask = input if ask is None else ask
    _check_seat(players, human)
    check_specs([opponents], "--opponents", num_players=players)
    check_specs([partner], "--partner", num_players=players)
    if record is not None:
        record = _check_record_target(record, force)
    specs = seat_specs(players, human, opponents, partner)
    agents = _seat_agents(specs, players, human)
    rngs = {s: agent_rng(seed, 0, 0, s) for s in range(4)}
    deal = generate_deals(1, seed)[0]
    # seat 0 leads: the dealer is seat 3 in 4 players, the solo is player 0 (seat 0) in 3
    match = Match(Config(num_players=players), deal=deal, dealer=3 if players == 4 else None,
                  solo=0 if players == 3 else None)
    state = match.state
    names = _greet(players, human, seed, specs, say)
    _reset_agents(agents)
    while not state.done:
        seat = state.deciding_seat
        info = InfoSet(state, seat)
        if seat == human:
            action, leave = ask_action(info, human, names, ask, say)
            if leave is not None:
                return leave
        else:
            action = agents[seat].act(info, info.legal_actions, rngs[seat])
            if action not in info.legal_actions:
                raise ValueError(f"agent {specs[seat]!r} at seat {seat} chose illegal action {action!r}")
        say(describe(state, action, human))
        before = state.clone()
        state.apply(int(action))
        if state.trick != before.trick:
            say(trick_result(before, state, human))
    _say_result(match, state, human, say)
    if record is not None:
        _write_record(record, state, specs, seed, human)
        say(f"Record of the deal written to {record} (twilight replay {record}).")
    return 0


def _check_seat(players: int, human: int) -> None:
    """Raises ValueError on a variant other than 3 or 4 players or a seat the person cannot take."""
    if players not in (3, 4):
        raise ValueError(f"--players must be 3 or 4, got {players}")
    if players == 4 and human not in range(4):
        raise ValueError(f"--seat must be 0..3 in 4 players, got {human}")
    if players == 3 and human not in (0, 1, 3):
        raise ValueError(f"--seat must be 0 (solo), 1 or 3 (Sun) in 3 players (2 is the new moon), got {human}")


def partner_seat(players: int, human: int) -> int | None:
    """The seat of the person's partner: across the table in 4 players (R2.1); in 3
    players the other Sun seat, or None for the solo (seat 0), whose partner seat 2 the
    person decides for (R7.3)."""
    return (human + 2) % 4 if players == 4 else (None if human == 0 else 4 - human)


def seat_specs(players: int, human: int, opponents: str, partner: str) -> list[str]:
    """The spec deciding at each seat: ``"you"`` for the person (and, in 3 players, for
    the new moon when the person is the solo, R7.3), ``partner`` at :func:`partner_seat`,
    ``opponents`` elsewhere (the solo agent's new moon included)."""
    mate = partner_seat(players, human)
    specs = []
    for s in range(4):
        if s == human or (players == 3 and human == 0 and s == NEW_MOON):
            specs.append("you")
        elif s == mate:
            specs.append(partner)
        else:
            specs.append(opponents)
    return specs


def _seat_agents(specs: list[str], players: int, human: int) -> dict:
    """The agents by seat; a network of the other variant is refused now, not after a move.

    Raises:
        ValueError: naming ``--partner`` or ``--opponents``.
    """
    from twilight_env.experiments.common import seat_agent

    agents = {s: seat_agent(specs[s], s) for s in range(4) if specs[s] != "you"}
    for s, agent in agents.items():
        model_for = getattr(agent, "model_for", None)
        if model_for is not None:
            try:
                model_for(players)
            except ValueError as e:
                flag = "--partner" if s == partner_seat(players, human) else "--opponents"
                raise ValueError(f"{flag}: {e}") from None
    return agents


def ask_action(info: InfoSet, human: int, names: list[str], ask: Callable[[str], str],
               say: Callable[[str], None]) -> tuple[int | None, int | None]:
    """Show the person's view and ask until a legal input (:data:`HELP`) comes.

    Returns:
        ``(action, None)``, or ``(None, exit code)`` when the person leaves: 0 on ``quit``
        or the end of input, 130 on Ctrl-C.
    """
    say("")
    say(view(info, human, names))
    while True:
        words = list(legal_inputs(info))
        try:
            text = ask(f"your choice [{' | '.join(words)}]: ")
        except EOFError:
            say("\nleaving the game (end of input).")
            return None, 0
        except KeyboardInterrupt:
            say("\ninterrupted: leaving the game.")
            return None, 130
        t = text.strip().lower()
        if t in QUIT_WORDS:
            say("leaving the game.")
            return None, 0
        if t in ("help", "?", "h"):
            say("\n" + HELP)
            say(view(info, human, names))
            continue
        action = parse_input(text, info)
        if action is not None:
            return action, None
        say(f"  '{text.strip()}' is not a legal input here. Legal inputs: {', '.join(words)}")


def _say_result(match: Match, state: State, human: int, say: Callable[[str], None]) -> None:
    """The finished deal's result lines (R5) and whether the person's side won."""
    players = state.num_players
    say("")
    say("Deal over (R5):")
    credited = None
    if players == 3:  # the credited players, by seat (R7.4: the solo p0 on seat 0)
        credited = [f"p{p} on {seat_label(match.seat_of_player(p), players, human)}" for p in range(3)]
    for line in result_lines(match, credited):
        say(line)
    scores = state.side_scores()
    mine = human % 2
    diff = scores[mine] - scores[1 - mine]
    say(f"Your side {'wins' if diff > 0 else 'loses'} the deal by {abs(diff)} points." if diff
        else "The deal is a tie.")


def _check_record_target(path: str, force: bool) -> str:
    """``--record``'s path, checked before the deal starts: a path
    :func:`~twilight_env.records.game_records.check_record_file` accepts, its folder made,
    and a trial file of 64 KiB (a record takes about 6 KB) written, synced and removed
    beside it, so that a full disk is found before the deal, not after it.

    Raises:
        ValueError: naming ``--record`` and what is wrong.
    """
    from twilight_env.records.game_records import check_record_file
    from twilight_env.util.atomic import check_can_write

    path = check_record_file(path, "--record", force)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        check_can_write(path)
    except OSError as e:
        raise ValueError(f"--record {path!r} cannot be written: {e.strerror or e}") from None
    return path


def _write_record(path: str, state: State, specs: list[str], seed: int, human: int) -> None:
    """Write the finished deal's record (docs/RECORDS.md) to ``path``, atomically
    (:func:`twilight_env.records.game_records.dump`: a write error leaves no partial file)."""
    from twilight_env.records.game_records import deal_record, dump

    agents = ["human" if s == "you" else s for s in specs]
    dump(deal_record(state, None, agents=agents, seed=seed, meta={"source": "twilight play", "human_seat": human}),
         path)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = HELP  # ``twilight play --help`` lists the inputs too
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    default = "heuristic" if agent_available("heuristic") else "random"
    p.add_argument("--players", type=int, choices=(3, 4), default=4, help="4 or 3 players (default 4)")
    p.add_argument("--seat", type=int, default=0,
                   help="your seat: 0..3 in 4 players; 0 (solo), 1 or 3 (Sun) in 3 players (default 0)")
    p.add_argument("--opponents", default=default, help=f"the other side's agent spec (default {default})")
    p.add_argument("--partner", default=None, help="your partner's agent spec (default: as --opponents)")
    p.add_argument("--seed", type=non_negative_int, default=None,
                   help="seed of the deal and the agents (default: a fresh one each game, printed at the start, "
                        "so --seed N plays that deal again)")
    p.add_argument("--record", default=None, metavar="FILE",
                   help="write the finished deal's record to FILE (JSON, docs/RECORDS.md; .gz: gzip); checked "
                        "before the deal starts: an existing FILE is kept unless --force")
    p.add_argument("--force", action="store_true", help="replace an existing --record FILE")


def fresh_seed() -> int:
    """A new deal seed from the operating system's entropy, 0..999,999 (short enough to type)."""
    return int(np.random.SeedSequence().entropy % 1_000_000)


def run(args) -> int:
    seed = fresh_seed() if args.seed is None else args.seed
    return play_game(args.players, args.seat, args.opponents, args.partner or args.opponents, seed,
                     record=args.record, force=args.force)
