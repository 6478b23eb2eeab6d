"""Live games of ``twilight serve``: one PettingZoo env per game, views by information set.

A :class:`Game` holds a :func:`twilight_env.raw_env` (deal or match episode, 3 or 4
players), one agent per non-person player, and what is needed to write the game's
record. Every move, the person's or an agent's, goes through ``env.step``: an illegal
move raises there and nothing changes (R3.2, R3.5).

What a view holds
-----------------
:meth:`Game.view` is the JSON-ready dict the page draws. For a person's seat it is built
from ``env.infoset(player)`` only (R2.5, R7.1): the own hand, in 3 players the new moon's
open hand, every seat's Sun and Moon card counts, the current trick (chooser, holder and
card per place), the pending pile, each side's taken cards and deal score so far, the
finished tricks and deals, and the match totals. Hidden hands are never read, so they
cannot leak. A watched game (agents only) is shown to a spectator with every hand open:
the union of all players' information sets. Score lines are named as in records
(``docs/RECORDS.md``: ``"sun"``, ``"moon"``; ``"player 0"`` ..., R6, R7.5), ``winners``
are indices into them, and ``credited`` gives each line's seats and points of the last
finished deal once the game is over.

Limits
------
A :class:`GameStore` keeps at most ``Limits.max_games`` live games. A finished game is
dropped ``Limits.finished_seconds`` after its end, any game ``Limits.idle_seconds`` after
its last request; when the store is full a new game first displaces the oldest finished
game, else it is refused (HTTP 503). A match target is at most :data:`MAX_TARGET` and a
view lists the last :data:`DEALS_SHOWN` finished deals, so a game and its view stay small.
Agents come only from the server's list with capped options
(:mod:`twilight_env.serve.specs`): no request names a file.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from twilight_env.records import game_records as records
from twilight_env.envs.aec import raw_env
from twilight_env.rules.cards import CARDS, CULT_NAMES, codes_of, multiplier_of, souls_of
from twilight_env.rules.engine import NEW_MOON, REQUEST_BASE, Config, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.rules.scoring import score_mask
from twilight_env.serve.pool import is_heavy

MODES = ("play", "watch")
EPISODES = ("deal", "match")
DEFAULT_AGENT = "heuristic"
MAX_TARGET = 10000
"""Highest match target a request may set (points, R6.1): a match to it plays some hundreds
of deals at most, so a game's deals and its record stay small."""
DEALS_SHOWN = 20
"""Finished deals a view lists (the most recent ones); ``deals_played`` counts them all."""
KIND_NAMES = {"P": "Purgatory", "C1": "Hierarch", "C2": "High Priest", "C3": "Priest", "C4": "Adept",
              "C5": "Novice", "3": "3 souls", "4": "4 souls", "5": "5 souls", "6": "6 souls", "7": "7 souls",
              "A": "Altar ×1", "T": "Temple ×2", "O": "Obelisk ×3"}
"""Names of the card kinds shown on the page (R1)."""


class GameError(Exception):
    """A request the server refuses; ``status`` is the HTTP status, ``message`` says why.

    Attributes:
        status: 400 malformed request, 404 unknown game, 409 not now (not the person's
            turn, game over, game not finished), 422 illegal move, 503 store full.
        message: what is wrong and what is allowed.
    """

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Limits:
    """Bounds of a :class:`GameStore`.

    Attributes:
        max_games: live games at most (int ≥ 1).
        idle_seconds: a game untouched this long is dropped (seconds, > 0).
        finished_seconds: a finished game is dropped this long after its end (seconds, > 0).
    """

    max_games: int = 200
    idle_seconds: float = 3600.0
    finished_seconds: float = 900.0

    def __post_init__(self):
        if isinstance(self.max_games, bool) or not isinstance(self.max_games, int) or self.max_games < 1:
            raise ValueError(f"max_games must be an int >= 1, got {self.max_games!r}")
        for name in ("idle_seconds", "finished_seconds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {v!r}")


# ---------------------------------------------------------------------------------
# request checking
# ---------------------------------------------------------------------------------

def _int(body: dict, key: str, default, allowed: str, ok: Callable[[int], bool]) -> int:
    v = body.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not ok(v):
        raise GameError(400, f"'{key}' must be {allowed}, got {v!r}")
    return v


def check_spec(spec: Any, key: str) -> str:
    """Check an agent spec against the server's list (:mod:`twilight_env.serve.specs`), then
    build it once.

    Raises:
        GameError: 400 naming the field and the allowed agents or options. A spec that
            names a file gets the same answer whether or not the file exists.
    """
    from twilight_env.agents.base import make_agent

    from twilight_env.serve.specs import SpecError, check_allowed

    try:
        spec = check_allowed(spec)
    except SpecError as e:
        raise GameError(400, f"'{key}': {e}") from None
    try:
        make_agent(spec)
    except (ValueError, ImportError) as e:
        raise GameError(400, f"'{key}': {e}") from None
    return spec


def card_label(cid: int) -> dict:
    """``{"id", "code", "cult", "kind", "name"}`` of a card id (R1)."""
    code = CARDS[cid]
    kind = code[1:]
    return {"id": cid, "code": code, "cult": CULT_NAMES[cid // 14], "kind": kind, "name": KIND_NAMES[kind]}


def _ids(mask: int) -> list[int]:
    return [i for i in range(28) if mask >> i & 1]


# ---------------------------------------------------------------------------------
# views (built from information sets only)
# ---------------------------------------------------------------------------------

def seat_roles(num_players: int) -> list[str]:
    """Role name of each seat (R2.1, R7.1): 4 players Sun/Moon; 3 players solo, new moon, Sun."""
    if num_players == 4:
        return ["sun", "moon", "sun", "moon"]
    return ["solo", "sun", "new moon", "sun"]


def action_text(seat: int, chooser: int, phase: str, action: int) -> str:
    """One line for an action by ``seat`` (the acting seat) in ``phase`` (R3.1-R3.3)."""
    if action >= REQUEST_BASE:
        return f"seat {chooser} requests seat {(chooser + action - REQUEST_BASE + 1) % 4}"
    c = card_label(action)
    if phase == "hold":
        return f"seat {seat} gives {c['code']} ({c['name']}) for seat {chooser}"
    return f"seat {seat} plays {c['code']} ({c['name']})"


def legal_moves(info: InfoSet) -> list[dict]:
    """The legal actions of a deciding information set, labelled for the page (R3.2, R3.5).

    Returns:
        ``[{"action": int, "kind": "card", "card": code}]`` and
        ``[{"action": int, "kind": "request", "seat": target seat}]``; empty if not to act.
    """
    out = []
    for a in info.legal_actions:
        if a < REQUEST_BASE:
            out.append({"action": int(a), "kind": "card", "card": CARDS[a]})
        else:
            out.append({"action": int(a), "kind": "request", "seat": (info.chooser + a - REQUEST_BASE + 1) % 4})
    return out


def tricks_of(info: InfoSet) -> list[dict]:
    """Finished tricks of the current deal from the public history (R4.2, R4.3)."""
    done = info.tricks
    out = []
    for t, (leader, taker) in enumerate(done):
        plays = info.history[4 * t:4 * t + 4]
        out.append({"number": t + 1, "leader": leader, "taker": taker,
                    "cards": [{"chooser": c, "holder": h, "card": CARDS[x]} for c, h, x in plays]})
    return out


def table_view(infos: list[InfoSet], visible: list[int], tricks: list[dict] | None = None) -> dict:
    """The table as the union of some information sets of one deal.

    Args:
        infos: information sets of the same state (one for a person, all players' for a
            spectator); public facts are read from ``infos[0]``.
        visible: 4 masks, the cards shown in each seat's hand (only cards these
            information sets know).
        tricks: the finished tricks (:func:`tricks_of`) if already at hand.

    Returns:
        A JSON-ready dict (see the module docstring).
    """
    info = infos[0]
    n = info.num_players
    roles = seat_roles(n)
    seats = []
    for s in range(4):
        sun, moon = info.counts[s]
        seen = visible[s]
        held = sun + moon
        seats.append({"seat": s, "cult": CULT_NAMES[info.seat_cult[s]], "role": roles[s],
                      "counts": {"sun": sun, "moon": moon},
                      "hand": [CARDS[c] for c in _ids(seen)] if bin(seen).count("1") == held else None,
                      "taken": len(_ids(info.captured[s]))})
    trick = []
    for p in range(4):
        c = info.trick_cards[p]
        trick.append(None if c < 0 else {"place": p, "chooser": (info.leader + p) % 4,
                                          "holder": info.trick_holders[p], "card": CARDS[c]})
    sides = []
    for side in (0, 1):
        cult = info.seat_cult[side]
        taken = info.captured[side] | info.captured[side + 2]
        sides.append({"side": side, "cult": CULT_NAMES[cult], "seats": [side, side + 2],
                      "taken": codes_of(taken), "souls": souls_of(taken),
                      "multiplier": multiplier_of(taken, cult), "score": score_mask(taken, cult)})
    done = info.acting_seat < 0
    return {
        "num_players": n, "phase": "over" if done else info.phase, "trick": info.trick, "place": info.place,
        "leader": info.leader, "chooser": info.chooser, "holder": info.holder,
        "acting_seat": info.acting_seat, "deciding_seat": info.deciding_seat,
        "seats": seats, "current_trick": trick, "tricks": tricks_of(info) if tricks is None else tricks,
        "pending": codes_of(info.pending), "neutral": codes_of(info.neutral), "sides": sides,
    }


def line_name(key: str) -> str:
    """The record's name of an env score line: ``"sun"``, ``"player 0"``, ``"new moon"`` (R6, R7.5).

    The env keys its ``deal_points``/``totals`` infos ``"sun"``, ``"player_0"``, ``"new_moon"``;
    views and records use the names of :meth:`twilight_env.rules.engine.Match.line_names`.
    """
    return key.replace("_", " ")


def line_seats(lines: list[str], seat_cult: tuple | list, solo: int | None) -> list[list[int]]:
    """The seats each score line is credited for in one deal (R5, R7.5).

    Args:
        lines: the record's line names (:func:`line_name`).
        seat_cult: cult index (0 Sun, 1 Moon) of seats 0..3.
        solo: 3 players: the solo player of the deal (at seat 0, with the new moon at 2);
            None in 4 players.

    Returns:
        One list of seats per line: 4 players the seats of that cult; 3 players the
        player's seat, the solo's line with the new moon's seat 2 too (team scoring).
    """
    out = []
    for name in lines:
        if name in ("sun", "moon"):
            out.append([s for s in range(4) if CULT_NAMES[seat_cult[s]] == name])
        elif name == "new moon":
            out.append([2])
        else:
            p = int(name.split()[1])
            seat = (0, 1, 3)[(p - solo) % 3]
            out.append([0, 2] if seat == 0 and "new moon" not in lines else [seat])
    return out


def credited(lines: list[str], points: list[int], seats: list[list[int]]) -> list[dict]:
    """``[{"line", "seats", "points"}]``: what each score line is credited for a finished deal (R5, R7.5)."""
    return [{"line": n, "seats": s, "points": int(x)} for n, s, x in zip(lines, seats, points)]


def person_view(info: InfoSet, tricks: list[dict] | None = None) -> dict:
    """The table for the person at ``info.seat``: own hand and 3p open hand only (R2.5, R7.1)."""
    view = table_view([info], list(info.known_masks), tricks)
    view["to_act"] = info.to_act
    view["legal"] = legal_moves(info) if info.to_act else []
    return view


def spectator_view(infos: list[InfoSet], tricks: list[dict] | None = None) -> dict:
    """The table with every hand open, from all players' information sets."""
    known = [0, 0, 0, 0]
    for i in infos:
        for s in range(4):
            known[s] |= i.known_masks[s]
    view = table_view(infos, known, tricks)
    view["to_act"] = False
    view["legal"] = []
    return view


def state_view(state: State) -> dict:
    """Spectator view of an engine state (a record's replay: every hand is known)."""
    seats = (0, 1, 3) if state.num_players == 3 else (0, 1, 2, 3)
    return spectator_view([InfoSet(state, s) for s in seats])


# ---------------------------------------------------------------------------------
# games
# ---------------------------------------------------------------------------------

def _play_specs(options: dict, n: int, reset_opts: dict) -> tuple[int, list[str | None]]:
    """Mode ``play``: the person's player index (0 in 3 players, where ``reset_opts["solo"]``
    is set so that player_0 sits at the chosen seat, R7.4) and the agent spec per player
    (None for the person; the partner across the table in 4 players, R2.1; in 3 players the
    other Sun player of the first deal).

    Raises:
        GameError: 400 on a bad ``seat``, ``opponents`` or ``partner``, or ``agents`` given.
    """
    if n == 4:
        seat = _int(options, "seat", 0, "0..3 in 4 players", lambda v: 0 <= v < 4)
        human = seat
    else:
        seat = _int(options, "seat", 0, "0 (solo), 1 or 3 (Sun) in 3 players; 2 is the new moon",
                    lambda v: v in (0, 1, 3))
        human = 0
        reset_opts["solo"] = {0: 0, 1: 2, 3: 1}[seat]  # puts player_0 at `seat` (R7.4)
    opp = check_spec(options.get("opponents", DEFAULT_AGENT), "opponents")
    partner = check_spec(options.get("partner", opp), "partner")
    specs: list[str | None] = []
    for p in range(n):
        if p == human:
            specs.append(None)
        elif n == 4:
            specs.append(partner if p == (human + 2) % 4 else opp)
        else:  # the other Sun player of the first deal is the partner
            solo = reset_opts["solo"]
            specs.append(partner if seat != 0 and p != solo else opp)
    if "agents" in options:
        raise GameError(400, "'agents' is for mode 'watch'; in mode 'play' give 'opponents' and 'partner'")
    return human, specs


def _watch_specs(options: dict, n: int) -> list[str | None]:
    """Mode ``watch``: the agent spec per player (``agents``: one spec for all, or one per player).

    Raises:
        GameError: 400 on a bad ``agents`` or a play-mode option given.
    """
    for k in ("seat", "opponents", "partner"):
        if k in options:
            raise GameError(400, f"'{k}' is for mode 'play'; in mode 'watch' give 'agents' "
                                 "(one spec, or one per player)")
    given = options.get("agents", DEFAULT_AGENT)
    if isinstance(given, str):
        given = [given] * n
    if not isinstance(given, list) or len(given) != n:
        raise GameError(400, f"'agents' must be one agent spec or a list of {n} (one per player), got {given!r}")
    return [check_spec(s, f"agents[{i}]") for i, s in enumerate(given)]


def _game_kind(options: Any) -> tuple[str, int, str]:
    """``(mode, players, episode)`` of the options of a new :class:`Game`; GameError 400 for a
    body that is not an object, an unknown option or a bad mode, player count or episode."""
    if not isinstance(options, dict):
        raise GameError(400, "the body must be a JSON object such as {\"players\": 4, \"seat\": 0}")
    known = {"mode", "players", "episode", "seat", "opponents", "partner", "agents", "seed", "target",
             "deal", "dealer"}
    extra = sorted(set(options) - known)
    if extra:
        raise GameError(400, f"unknown option(s) {', '.join(map(repr, extra))}; known: {', '.join(sorted(known))}")
    mode = options.get("mode", "play")
    if mode not in MODES:
        raise GameError(400, f"'mode' must be 'play' or 'watch', got {mode!r}")
    n = _int(options, "players", 4, "3 or 4", lambda v: v in (3, 4))
    episode = options.get("episode", "deal")
    if episode not in EPISODES:
        raise GameError(400, f"'episode' must be 'deal' or 'match', got {episode!r}")
    return mode, n, episode


class Game:
    """One live game: a PettingZoo env, its agents, and the record being written.

    Args:
        options: the JSON body of ``POST /api/games`` (see ``docs/SERVE.md``):
            ``mode`` (``"play"`` or ``"watch"``), ``players`` (3 or 4), ``episode``
            (``"deal"`` or ``"match"``), ``seat`` (play: 0..3 in 4 players; 0 solo, 1 or
            3 in 3 players, for the first deal), ``opponents`` and ``partner`` (agent
            specs, play), ``agents`` (watch: one spec, or one per player), ``seed``
            (int ≥ 0), ``target`` (match points 1..``MAX_TARGET``, R6.1), ``deal`` (4 lists of 7 card
            codes by seat) and ``dealer`` (4 players: the dealer's seat, R2.4).
        clock: seconds (``time.monotonic`` unless given; tests pass a fake one).

    Raises:
        GameError: 400 on a malformed or unknown option, naming it and what is allowed.
    """

    def __init__(self, options: Any, clock: Callable[[], float] = time.monotonic):
        mode, n, episode = _game_kind(options)
        seed = options.get("seed")
        self.seed_given = seed is not None
        if seed is None:
            seed = secrets.randbits(32)
        seed = _int({"seed": seed}, "seed", None, "an int >= 0", lambda v: v >= 0)
        target = _int(options, "target", 1000, f"an int 1..{MAX_TARGET} (match points, R6.1)",
                      lambda v: 1 <= v <= MAX_TARGET)
        players = [f"player_{i}" for i in range(n)]
        reset_opts: dict = {}
        human = None
        if mode == "play":
            human, specs = _play_specs(options, n, reset_opts)
        else:
            specs = _watch_specs(options, n)
        if "dealer" in options:
            if n != 4:
                raise GameError(400, "'dealer' is for 4 players (the seat after it leads, R2.4)")
            reset_opts["dealer"] = _int(options, "dealer", 3, "a seat 0..3", lambda v: 0 <= v < 4)
        if "deal" in options:
            reset_opts["deal"] = options["deal"]
        self.env = raw_env(num_players=n, episode=episode, target=target)
        try:
            self.env.reset(seed=seed, options=reset_opts)
        except ValueError as e:
            raise GameError(400, str(e)) from None
        from twilight_env.agents.base import make_agent

        self.id = secrets.token_urlsafe(12)
        self.mode, self.num_players, self.episode, self.seed, self.target = mode, n, episode, seed, target
        self.players = players
        self.specs = specs
        self.human = None if human is None else players[human]
        self.agents = {players[p]: make_agent(specs[p]) for p in range(n) if specs[p] is not None}
        self.rngs = {players[p]: np.random.default_rng(np.random.SeedSequence((seed, 1, p))) for p in range(n)}
        self.steps = 0
        self.over = False
        self.winners: list[int] = []  # match episodes: the winning score lines, once over
        self.deals: list[dict] = []  # finished deals: summary and record inputs
        self.log: list[str] = []
        self.clock = clock
        self.created = self.last_used = clock()
        self.finished_at: float | None = None
        self.lock = threading.Lock()
        self.alock = asyncio.Lock()  # the server's requests queue here without holding a thread
        self.heavy = any(is_heavy(s) for s in specs)  # an agent that searches: the pool's heavy lane
        self._tricks_key: tuple | None = None
        self._tricks_list: list[dict] = []
        self._start_deal()

    # -- bookkeeping ----------------------------------------------------------------
    def _info(self, player: str | None = None) -> InfoSet:
        return self.env.infoset(player or self.players[0])

    def _start_deal(self) -> None:
        info = self._info()
        self._deal_leader = info.leader
        self._deal_actions: list[int] = []
        self._deal_hands = [0, 0, 0, 0]  # filled from the public plays (every card is played)
        self._seat_players: list[str | None] = [None] * 4  # 3 players: the new moon stays None
        for p in self.players:
            self._seat_players[self.env.seat_of(p)] = p
        for agent in self.agents.values():
            reset = getattr(agent, "reset", None)
            if reset is not None:
                reset()

    def seat_spec(self, seat: int) -> str:
        """Who plays ``seat`` in the current deal: ``"you"``, an agent spec, or the new moon."""
        p = self._seat_players[seat]
        if p is None:
            solo = self._seat_players[0]
            return "new moon (you decide)" if solo == self.human else f"new moon ({self.specs[self.players.index(solo)]})"
        return "you" if p == self.human else self.specs[self.players.index(p)]

    @property
    def to_move(self) -> str | None:
        """The player (``"player_i"``) who decides next, or None when the game is over."""
        return None if self.over else self.env.agent_selection

    @property
    def human_to_move(self) -> bool:
        return self.human is not None and self.to_move == self.human

    def _step(self, player: str, action: int, info: InfoSet) -> None:
        """Apply ``action`` of ``player``, whose information set now is ``info``."""
        seat, chooser, phase = info.acting_seat, info.chooser, info.phase
        played_before = self.env.infos[player]["deals_played"]
        self.env.step(action)  # ValueError on an illegal action: nothing changed
        self.steps += 1
        self._deal_actions.append(int(action))
        if action < REQUEST_BASE:
            self._deal_hands[seat] |= 1 << action
        self.log.append(action_text(seat, chooser, phase, action))
        if len(self.log) > 40:
            del self.log[:-40]
        if self.env.infos[player]["deals_played"] != played_before:
            self._finish_deal(player)

    def _tricks(self, info: InfoSet) -> list[dict]:
        """The finished tricks of the current deal, rebuilt only when a trick has ended."""
        key = (len(self.deals), info.trick)
        if self._tricks_key != key:
            self._tricks_key, self._tricks_list = key, tricks_of(info)
        return self._tricks_list

    def _line_totals(self, infos: dict) -> list[int]:
        """Match totals by score line (4 players: Sun, Moon; 3 players: by player, R7.5)."""
        t = infos["totals"]
        if self.num_players == 4:  # the env lists each player's side total; player i sits at seat i
            return [t["player_0"], t["player_1"]]
        return [t[k] for k in infos["deal_points"]]

    def _finish_deal(self, player: str) -> None:
        infos = self.env.infos[player]
        initial = State(tuple(self._deal_hands), self._deal_leader, self.num_players)
        final = initial.clone()
        for a in self._deal_actions:
            final.apply(a)
        keys = list(infos["deal_points"])
        lines = [line_name(k) for k in keys]
        points = [infos["deal_points"][k] for k in keys]
        solo = self.players.index(self._seat_players[0]) if self.num_players == 3 else None
        summary = {"deal": len(self.deals) + 1, "lines": lines, "points": points,
                   "totals": self._line_totals(infos),
                   "sides": list(final.side_scores()),
                   "credited": credited(lines, points, line_seats(lines, final.seat_cult, solo)),
                   "seat_players": list(self._seat_players)}
        self.deals.append({"summary": summary, "initial": initial, "actions": list(self._deal_actions)})
        self.log.append(f"deal {summary['deal']} over: Sun side {summary['sides'][1 if self.num_players == 3 else 0]}, "
                        f"Moon side {summary['sides'][0 if self.num_players == 3 else 1]}")
        if all(self.env.terminations.values()):
            self.over = True
            self.finished_at = self.clock()
            if self.episode == "match":  # the env's match reward: +1 to the winners (R6.1, R7.5)
                won = [self.players.index(p) for p in self.players if self.env.rewards[p] > 0]
                # as the record's winners: indices of score lines (4p: side of player i's seat i)
                self.winners = sorted({i % 2 for i in won}) if self.num_players == 4 else won
        else:
            self._start_deal()

    # -- moves ----------------------------------------------------------------------
    def move(self, body: Any) -> None:
        """Apply the person's move from a request body ``{"action": 0..30}``.

        Raises:
            GameError: 400 malformed body, 409 watched game / game over / not the
                person's turn, 422 illegal move (the game is unchanged; the message lists
                the legal moves).
        """
        if not isinstance(body, dict) or "action" not in body:
            raise GameError(400, "the body must be a JSON object {\"action\": N}: N a card id 0..27 "
                                 "or 28/29/30 to request the seat +1/+2/+3 from the chooser")
        action = body["action"]
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action <= 30:
            raise GameError(400, f"'action' must be an int 0..30 (card id 0..27, request 28..30), got {action!r}")
        if "step" in body and body["step"] != self.steps:
            raise GameError(409, f"the move was made for step {body['step']!r} but the game is at step {self.steps}")
        if self.human is None:
            raise GameError(409, "this game is watched: agents play every seat")
        if self.over:
            raise GameError(409, "the game is over")
        if not self.human_to_move:
            raise GameError(409, f"not your turn: {self.to_move} ({self.seat_spec(self._info().deciding_seat)}) "
                                 "decides; advance the agents first")
        info = self.env.infoset(self.human)
        if action not in info.legal_actions:
            words = [m["card"] if m["kind"] == "card" else f"request seat {m['seat']}" for m in legal_moves(info)]
            what = CARDS[action] if action < REQUEST_BASE else f"request seat {(info.chooser + action - 27) % 4}"
            raise GameError(422, f"illegal move {action} ({what}) at trick {info.trick + 1}, place {info.place + 1} "
                                 f"({info.phase} phase; R3.2, R3.5); legal: "
                                 + ", ".join(f"{m['action']} ({w})" for m, w in zip(legal_moves(info), words)))
        try:
            self._step(self.human, action, info)
        except ValueError as e:  # cannot happen after the check above; kept so nothing half-applies
            raise GameError(422, str(e)) from None

    def advance(self, max_steps: int = 1, stop: Callable[[], bool] | None = None,
                seconds: float | None = None, decide: Callable | None = None) -> int:
        """Let the agents make up to ``max_steps`` moves, stopping at the person's turn.

        Args:
            max_steps: most agent moves (int >= 1).
            stop: asked before every move after the first; True stops (the client has gone).
            seconds: stop before a move once this many seconds have passed since the call
                (after at least one move), so one request holds the game's lock for at most
                about this long plus one decision.
            decide: ``decide(spec, info, rng) -> (action, rng)`` makes the decisions of
                searching agents (:func:`~twilight_env.serve.pool.is_heavy`) elsewhere (the
                server's worker processes, :meth:`~twilight_env.serve.pool.DecisionPool.decide`);
                None: every agent decides here.

        Returns:
            The number of moves made.

        Raises:
            ValueError: if an agent picks an illegal move (a bug in that agent).
        """
        made = 0
        start = time.monotonic()
        while made < max_steps and not self.over and not self.human_to_move:
            if made and ((stop is not None and stop()) or
                         (seconds is not None and time.monotonic() - start > seconds)):
                break
            p = self.env.agent_selection
            info = self.env.infoset(p)
            spec = self.specs[self.players.index(p)]
            if decide is not None and is_heavy(spec):
                action, self.rngs[p] = decide(spec, info, self.rngs[p])
            else:
                action = self.agents[p].act(info, info.legal_actions, self.rngs[p])
            if action not in info.legal_actions:
                raise ValueError(f"agent {self.specs[self.players.index(p)]!r} chose illegal action {action!r}")
            self._step(p, int(action), info)
            made += 1
        return made

    def hint_position(self, spec: Any) -> tuple[str, InfoSet, int]:
        """Check a hint request and take what the hint needs (call under the game's lock).

        Returns:
            ``(spec, infoset, step)``: the checked spec, the person's information set (a
            snapshot: the game may move on while the agent thinks) and the step number
            (seeds the agent's random generator).

        Raises:
            GameError: 400 bad spec, 409 not the person's turn.
        """
        spec = check_spec(spec, "agent")
        if not self.human_to_move:
            raise GameError(409, "a hint is for the person's own turn; it is not your turn")
        return spec, self.env.infoset(self.human), self.steps

    @staticmethod
    def hint_for(spec: str, info: InfoSet, step: int) -> dict:
        """What agent ``spec`` would do in ``info`` (no lock needed: reads only the snapshot).

        Returns:
            ``{"agent", "action", "kind", "card" | "seat", "text"}``.
        """
        from twilight_env.agents.base import make_agent

        agent = make_agent(spec)
        action = int(agent.act(info, info.legal_actions, np.random.default_rng(step)))
        move = next(m for m in legal_moves(info) if m["action"] == action)
        return {"agent": spec, **move, "text": action_text(info.acting_seat, info.chooser, info.phase, action)}

    def hint(self, spec: Any) -> dict:
        """What agent ``spec`` would do now for the person (their information set only).

        Returns:
            ``{"agent", "action", "kind", "card" | "seat", "text"}``.

        Raises:
            GameError: 400 bad spec, 409 not the person's turn.
        """
        return self.hint_for(*self.hint_position(spec))

    # -- views ----------------------------------------------------------------------
    def view(self) -> dict:
        """The JSON-ready view of the game for its page (see the module docstring)."""
        if self.human is not None:
            info = self.env.infoset(self.human)
            table = person_view(info, self._tricks(info))
        else:
            infos = [self.env.infoset(p) for p in self.players]
            table = spectator_view(infos, self._tricks(infos[0]))
        ex = self.env.infos[self.players[0]]
        lines = [line_name(k) for k in ex["deal_points"]]
        you = None
        if self.human is not None:
            seat = self.env.seat_of(self.human)
            line = self.players.index(self.human) if self.num_players == 3 else seat % 2
            you = {"player": self.human, "seat": seat, "line": line}
        table.update({
            "id": self.id, "mode": self.mode, "episode": self.episode,
            # a drawn seed would let a person re-derive the hidden hands: shown once the game is over
            "seed": self.seed if (self.over or self.human is None or self.seed_given) else None,
            "target": self.target if self.episode == "match" else None,
            "step": self.steps, "over": self.over, "you": you,
            "deal_number": len(self.deals) + (0 if self.over else 1),
            "who": [self.seat_spec(s) for s in range(4)],
            "seat_players": list(self._seat_players),
            "lines": lines, "totals": self._line_totals(ex),
            "deals": [d["summary"] for d in self.deals[-DEALS_SHOWN:]], "deals_played": len(self.deals),
            "agents_to_move": not self.over and not self.human_to_move,
            "winners": list(self.winners),
            "credited": self.deals[-1]["summary"]["credited"] if self.over else None,
            "log": list(self.log[-12:]),
        })
        return table

    def record(self) -> dict:
        """The record of the finished game: a deal record, or a match record of its deals
        (:mod:`twilight_env.records.game_records`, ``docs/RECORDS.md``).

        Raises:
            GameError: 409 if the game is not over yet.
        """
        if not self.over:
            raise GameError(409, "the record can be downloaded once the game is over")
        config = Config(num_players=self.num_players, target=self.target)
        meta = {"source": "twilight serve", "mode": self.mode}
        deals = []
        scores = None
        for d in self.deals:
            seat_players = d["summary"]["seat_players"]
            # the person is "human" (as `twilight play --record` writes); in 3 players the new
            # moon's seat 2 gets the solo's entry: the solo decides for it (R7.3, docs/RECORDS.md)
            deciders = [seat_players[0] if p is None else p for p in seat_players]
            by_seat = [self.specs[self.players.index(p)] or "human" for p in deciders]
            extra = {"solo": self.players.index(seat_players[0])} if self.num_players == 3 else {}
            rec = records.deal_record(d["initial"], d["actions"], config=config, scores=scores, agents=by_seat,
                                      seed=self.seed, meta=meta, **extra)
            scores = rec["totals_after"]
            deals.append(rec)
        if self.episode == "deal":
            return deals[0]
        return records.match_record(deals, config=config, agents=[s or "human" for s in self.specs],
                                    seed=self.seed, meta=meta)

    def touch(self) -> None:
        self.last_used = self.clock()


class GameStore:
    """Live games by id, with the limits of :class:`Limits` (thread-safe).

    Args:
        limits: the bounds; ``Limits()`` unless given.
        clock: seconds, ``time.monotonic`` unless given.
    """

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic):
        self.limits = limits or Limits()
        self.clock = clock
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def purge(self) -> list[str]:
        """Drop idle and long-finished games; returns their ids."""
        now = self.clock()
        lim = self.limits
        gone = [gid for gid, g in self._games.items()
                if now - g.last_used > lim.idle_seconds
                or (g.finished_at is not None and now - g.finished_at > lim.finished_seconds)]
        for gid in gone:
            del self._games[gid]
        return gone

    def create(self, options: Any) -> Game:
        """A new game from ``POST /api/games`` options (see :class:`Game`).

        Raises:
            GameError: 400 bad options; 503 when ``max_games`` games are live and none of
                them is finished.
        """
        game = Game(options, self.clock)  # checks the options first
        with self._lock:
            self.purge()
            if len(self._games) >= self.limits.max_games:
                finished = [g for g in self._games.values() if g.finished_at is not None]
                if not finished:
                    raise GameError(503, f"the server holds its maximum of {self.limits.max_games} live games; "
                                         "try again later or finish a game")
                del self._games[min(finished, key=lambda g: g.finished_at).id]
            self._games[game.id] = game
        return game

    def get(self, game_id: str) -> Game:
        """The live game ``game_id`` (and mark it used).

        Raises:
            GameError: 404 if there is no such live game (unknown, finished long ago, or idle).
        """
        with self._lock:
            self.purge()
            game = self._games.get(game_id)
        if game is None:
            raise GameError(404, f"no live game {game_id!r}: unknown, or dropped after "
                                 f"{self.limits.idle_seconds:g} s idle / {self.limits.finished_seconds:g} s finished")
        game.touch()
        return game

    def delete(self, game_id: str) -> None:
        """Drop a game. Raises GameError 404 if it is not live."""
        with self._lock:
            if self._games.pop(game_id, None) is None:
                raise GameError(404, f"no live game {game_id!r}")
