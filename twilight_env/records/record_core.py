"""Game records without files: the record fields derived with the engine, building deal
and match records, replaying them and checking them (the format is described in
:mod:`twilight_env.records.game_records`, which adds the files and the environment
options and re-exports these names).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any, Mapping, Sequence

from twilight_env.rules.cards import CARDS, PURGATORY_MASK, codes_of
from twilight_env.rules.engine import (HOLD, NUM_TRICKS, REQUEST_BASE, Config, Match, State, fixed_solo_scores_problem,
                                       validate_deal)


FORMAT_DEAL = "twilight-deal"
"""``format`` of a deal record."""
FORMAT_MATCH = "twilight-match"
"""``format`` of a match record."""
VERSION = 1
"""Schema version written and read by this module."""
CONFIG_KEYS = ("num_players", "target", "goals_333", "three_player_scoring", "fixed_solo")
"""Keys of a record's ``config`` (the fields of :class:`~twilight_env.rules.engine.Config`)."""
MAX_DEAL_SCORE = 360
"""Most points a deal scores: 60 souls times a multiplier of at most 6 (R5.1-R5.3); both
sides' deal scores together stay within it too."""
MAX_AGENT_CHARS = 200
"""Longest agent spec a record holds (characters): the longest spec the project writes (a
network agent with its options and a weights path) is under 100; writers and readers refuse
a longer one, so that no record repeats a huge name."""
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "record.schema.json")
"""Path of the JSON Schema of both record kinds, shipped in the package."""

_CODES = frozenset(CARDS)
DEAL_KEYS = ("format", "version", "package_version", "created", "config", "dealer", "solo", "leader", "deal",
              "agents", "seed", "actions", "tricks", "neutral", "side_scores", "lines", "deal_points",
              "totals_before", "totals_after", "meta")
MATCH_KEYS = ("format", "version", "package_version", "created", "config", "agents", "seed", "lines",
               "scores", "deals", "totals", "deals_played", "done", "winners", "meta")
ACTION_KEYS = ("action", "seat", "chooser", "holder", "card")
TRICK_KEYS = ("leader", "cards", "taker", "pending")


class RecordError(ValueError):
    """A record that is malformed (:func:`validate`) or disagrees with the engine (:func:`replay`).

    Attributes:
        reason: what is wrong and what is allowed, in words.
        step: index into the deal's ``actions`` where replay found the fault (the action
            that finished a trick for trick fields; ``len(actions)`` for the end-of-deal
            fields and for actions that end before the deal does); None for a schema fault.
        field: the record key at fault (``"card"``, ``"taker"``, ``"deal_points"``,
            ``"version"``, a path such as ``"deal[2][5]"`` for schema faults, ...).
        deal: index of the deal within a match record, else None.
    """

    def __init__(self, reason: str, *, step: int | None = None, field: str | None = None,
                 deal: int | None = None):
        self.reason = reason
        self.step = step
        self.field = field
        self.deal = deal
        where = []
        if deal is not None:
            where.append(f"deal {deal}")
        if step is not None:
            where.append(f"step {step}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)


# ---------------------------------------------------------------------------------
# deriving a deal's record fields with the engine
# ---------------------------------------------------------------------------------

def _config_dict(config: Config) -> dict:
    """A record's ``config`` object (plain JSON values) from an engine ``Config``."""
    return {"num_players": int(config.num_players), "target": int(config.target),
            "goals_333": bool(config.goals_333), "three_player_scoring": str(config.three_player_scoring),
            "fixed_solo": bool(config.fixed_solo)}


def _action_entry(state: State, action: int) -> dict:
    """The record entry of ``action`` applied to ``state`` (before it is applied)."""
    chooser = state.chooser
    if state.phase == HOLD:
        holder, card = state.holder, CARDS[action]
    elif action >= REQUEST_BASE:
        holder, card = (chooser + action - REQUEST_BASE + 1) & 3, None
    else:
        holder, card = chooser, CARDS[action]
    return {"action": int(action), "seat": state.deciding_seat, "chooser": chooser, "holder": holder, "card": card}


def _trick_entry(leader: int, after: State) -> dict:
    """The record entry of the trick led by ``leader`` that ``after``'s last action finished
    (R4.1-R4.4)."""
    cards = [c for _, _, c in after.history[-4:]]
    tmask = sum(1 << c for c in cards)
    taker = None if tmask & PURGATORY_MASK else after.leader  # R4.2: the taker leads next
    return {"leader": leader, "cards": [CARDS[c] for c in cards], "taker": taker,
            "pending": codes_of(after.pending)}


def _new_match(config: Config, deal, dealer, solo, scores) -> Match:
    return Match(config, None, deal=deal, dealer=dealer if config.num_players == 4 else None,
                 solo=solo if config.num_players == 3 else None, scores=scores)


def actions_of_history(history: Sequence[tuple[int, int, int]]) -> list[int]:
    """The raw actions (0..30) that produce a state's ``history`` of ``(chooser, holder, card)``.

    A card the chooser played itself is one action (its id); a card a holder played on
    request is two: the request ``28 + offset - 1`` (offset ``(holder - chooser) mod 4``,
    R3.2), then the card's id.
    """
    out = []
    for chooser, holder, card in history:
        if holder != chooser:
            out.append(REQUEST_BASE + ((holder - chooser) & 3) - 1)
        out.append(int(card))
    return out


# ---------------------------------------------------------------------------------
# building records
# ---------------------------------------------------------------------------------

def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _package_version() -> str:
    from twilight_env import __version__
    return __version__


def _check_agents(agents, n: int, what: str) -> list | None:
    if agents is None:
        return None
    if isinstance(agents, (str, bytes)) or not hasattr(agents, "__len__") or len(agents) != n \
            or not all(a is None or isinstance(a, str) for a in agents):
        raise ValueError(f"agents must be {n} agent specs (str or None) {what}, got {_short(agents)}")
    _check_agent_lengths(agents)
    return list(agents)


def _check_meta(meta) -> dict:
    if meta is None:
        return {}
    if not isinstance(meta, Mapping):
        raise ValueError(f"meta must be a dict of JSON values, got {type(meta).__name__}")
    try:
        return json.loads(json.dumps(dict(meta)))
    except (TypeError, ValueError) as e:
        raise ValueError(f"meta must hold only JSON values (str, int, float, bool, None, lists, dicts): {e}") from None


def _check_seed(seed):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        try:
            import numpy as np
            if isinstance(seed, np.integer):
                return int(seed)
        except ImportError:  # pragma: no cover - numpy is a core dependency
            pass
        raise ValueError(f"seed must be an int or None, got {seed!r}")
    return seed


def _deal_config(config: Config | Mapping | None, n: int) -> Config:
    """``config`` of :func:`deal_record` as an engine ``Config`` for an ``n``-player deal;
    ValueError if it is not one or does not fit."""
    if config is None:
        config = Config(num_players=n)
    elif isinstance(config, Mapping):
        config = _config_from_dict(config, "config")
    elif not isinstance(config, Config):
        raise ValueError(f"config must be an engine Config or a dict of its fields, got {type(config).__name__}")
    if config.num_players != n:
        raise ValueError(f"config.num_players is {config.num_players} but the state is a {n}-player deal")
    _config_from_dict(_config_dict(config), "config")  # 4 players: no 3-player variant (R7.6, R8)
    return config


def _deal_seats(st: State, dealer: int | None, solo: int | None) -> tuple[int | None, int | None]:
    """``(dealer, solo)`` of :func:`deal_record` checked against the state, defaults filled in
    (4 players: dealer, R2.4; 3 players: solo, R7.2); ValueError if they do not fit."""
    if st.num_players == 4:
        if solo is not None:
            raise ValueError("solo is only for 3 players; in 4 players give dealer")
        if dealer is None:
            dealer = (st.first_leader - 1) % 4
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < 4:
            raise ValueError(f"dealer must be a seat 0..3, got {dealer!r}")
        if (dealer + 1) % 4 != st.first_leader:
            raise ValueError(f"dealer seat {dealer} does not fit the deal: seat {st.first_leader} leads it, "
                             f"so the dealer is seat {(st.first_leader - 1) % 4} (R2.4)")
    else:
        if dealer is not None:
            raise ValueError("dealer is only for 4 players; in 3 players give solo")
        solo = 0 if solo is None else solo
        if isinstance(solo, bool) or not isinstance(solo, int) or not 0 <= solo < 3:
            raise ValueError(f"solo must be a player 0..2, got {solo!r}")
        if st.first_leader != 0:
            raise ValueError(f"in 3 players the solo (seat 0) leads the first trick (R7.2); "
                             f"this state's first leader is seat {st.first_leader}")
    return dealer, solo


def _deal_actions(st: State, actions: Sequence[int] | None) -> list[int]:
    """The actions of :func:`deal_record` as plain ints (None: from the finished state's
    history); ValueError if they are not ints or the state is not finished."""
    if actions is None:
        if not st.done:
            raise ValueError("actions=None takes the actions from the state's history, "
                             "but the state's deal is not finished")
        actions = actions_of_history(st.history)
    try:
        return [_as_action(a) for a in actions]
    except TypeError:
        raise ValueError(f"actions must be a sequence of ints 0..30, got {actions!r}") from None


def _start_match(config: Config, deal: list, dealer: int | None, solo: int | None,
                 scores: Sequence[int] | None) -> Match:
    """The match of :func:`deal_record` at the deal's start, totals ``scores``; ValueError if
    a total is negative or already decides the match (R5.3, R6.1, R6.2, R7.5)."""
    match = _new_match(config, deal, dealer, solo, None if scores is None else list(scores))
    if any(t < 0 for t in match.totals):
        raise ValueError(f"scores must be ints >= 0 (totals add deal scores, never negative: R5.3, R6.1), "
                         f"got {list(scores)!r}")
    _check_undecided(match)
    return match


def deal_record(state_or_initial_state: State, actions: Sequence[int] | None = None, *,
                config: Config | Mapping | None = None, dealer: int | None = None, solo: int | None = None,
                scores: Sequence[int] | None = None, agents: Sequence[str | None] | None = None,
                seed: int | None = None, meta: Mapping | None = None) -> dict:
    """The record of one whole deal, every derived field computed by the engine.

    Args:
        state_or_initial_state: an engine ``State`` of the deal (``State.from_deal`` or
            ``State.random``), at its start or later: only its ``initial_hands``,
            ``first_leader`` and ``num_players`` are read, so the finished state of a
            played deal serves too.
        actions: the raw actions 0..30 from the deal's start to its end, in order (R3.2);
            None takes them from the state's ``history`` (:func:`actions_of_history`),
            which then must be a finished deal.
        config: the rules (an engine ``Config`` or a dict of its fields); default the
            standard rules for the state's number of players. Its ``num_players`` must be
            the state's.
        dealer: 4 players: the dealer's seat (R2.4); default the seat before the first
            leader. Must agree with the state's first leader.
        solo: 3 players: the solo player 0..2 of this deal (R7.4); default 0. The state's
            first leader must be seat 0 (R7.2).
        scores: the match totals by score line before this deal (default zeros; lines as
            :meth:`~twilight_env.rules.engine.Match.line_names`): ints >= 0 that do not already
            decide the match (R6.1, R6.2, R7.5).
        agents: the agent spec of each seat 0..3 (4 entries, None where unknown; 3
            players: seat 2 is the new moon, decided by the solo, R7.3), or None.
        seed: the seed the deal or its agents were drawn with, if any (int).
        meta: free JSON data kept as it is (e.g. the study, pairing and play index).

    Returns:
        a dict of JSON values with the keys of ``docs/RECORDS.md`` (deal record).

    Raises:
        ValueError: the actions are not legal from the deal's start or do not finish the
            deal (a :class:`RecordError` with ``step``), or a bad argument (named, with
            what is allowed).
    """
    st = state_or_initial_state
    if not hasattr(st, "initial_hands") or not hasattr(st, "first_leader"):
        raise ValueError(f"deal_record needs an engine State (State.from_deal), got {type(st).__name__}")
    n = st.num_players
    config = _deal_config(config, n)
    dealer, solo = _deal_seats(st, dealer, solo)
    actions = _deal_actions(st, actions)
    deal = [codes_of(h) for h in st.initial_hands]
    match = _start_match(config, deal, dealer, solo, scores)
    rec: dict[str, Any] = {
        "format": FORMAT_DEAL, "version": VERSION, "package_version": _package_version(), "created": _now(),
        "config": _config_dict(config),
        "dealer": dealer if n == 4 else None, "solo": solo if n == 3 else None,
        "leader": st.first_leader, "deal": deal,
        "agents": _check_agents(agents, 4, "by seat 0..3"), "seed": _check_seed(seed),
        "actions": [], "tricks": [], "totals_before": list(match.totals),
    }
    derived, _ = _derive(match, actions)
    rec.update(derived)
    rec["meta"] = _check_meta(meta)
    rec = {k: rec[k] for k in DEAL_KEYS}
    validate(rec)
    return rec


def _as_action(a) -> int:
    """``a`` as a plain int (NumPy integers too); TypeError for anything else."""
    if isinstance(a, bool) or not hasattr(a, "__index__"):
        raise TypeError(a)
    return a.__index__()


def _derive(match: Match, actions: Sequence[int], deal: int | None = None,
            stored: dict | None = None) -> tuple[dict, list]:
    """Play ``actions`` on ``match.state`` and credit the deal; returns the derived fields and
    every state (initial .. final). With ``stored`` (a record), each derived field is
    compared as soon as it is known and the first difference raises :class:`RecordError`.
    """
    st = match.state
    states = [st.clone()]
    out_actions, tricks = [], []
    s_actions = stored["actions"] if stored is not None else None
    s_tricks = stored["tricks"] if stored is not None else None
    for i, a in enumerate(actions):
        if st.done:
            raise RecordError(f"action {a} comes after the deal is over (7 tricks were played after "
                              f"{i} actions); a deal record ends with its last card", step=i, field="actions",
                              deal=deal)
        if not st.is_legal(a):
            raise RecordError(f"illegal action {a} for seat {st.acting_seat} in phase "
                              f"{'hold' if st.phase == HOLD else 'choose'} (trick {st.trick + 1}, place "
                              f"{st.place + 1}); legal actions: {list(st.legal_actions())} (R3.2, R3.5)",
                              step=i, field="action", deal=deal)
        entry = _action_entry(st, a)
        if s_actions is not None:
            _compare_action(s_actions[i], entry, st, a, i, deal)
        out_actions.append(entry)
        trick_before, leader = st.trick, st.leader  # the leader changes only when a trick ends
        st.apply(a)
        states.append(st.clone())
        if st.trick != trick_before:
            t = _trick_entry(leader, st)
            if s_tricks is not None:
                _compare_trick(s_tricks, trick_before, t, i, deal)
            tricks.append(t)
    n_steps = len(actions)
    if not st.done:
        raise RecordError(f"the actions end after {n_steps} steps at trick {st.trick + 1}, place "
                          f"{st.place + 1}, before the deal is over; a record holds a whole deal (7 tricks)",
                          step=n_steps, field="actions", deal=deal)
    match.finish_deal()
    derived = {
        "actions": out_actions, "tricks": tricks, "neutral": codes_of(st.neutral),
        "side_scores": list(st.side_scores()), "lines": match.line_names(),
        "deal_points": list(match.last_deal_points), "totals_after": list(match.totals),
    }
    if stored is not None:
        _compare_deal_end(stored, derived, n_steps, deal)
    return derived, states


def _compare_action(got: dict, entry: dict, st: State, a: int, i: int, deal: int | None) -> None:
    """Raise :class:`RecordError` at step ``i`` if the stored action entry ``got`` differs from
    the engine's ``entry`` for action ``a`` (``st`` is the state before it)."""
    for key in ("seat", "chooser", "holder", "card"):
        if got[key] != entry[key]:
            raise RecordError(f"stored {key} {got[key]!r} but the engine gives {entry[key]!r} for action "
                              f"{a} (trick {st.trick + 1}, place {st.place + 1})",
                              step=i, field=key, deal=deal)


def _compare_trick(s_tricks: list, trick_before: int, t: dict, i: int, deal: int | None) -> None:
    """Raise :class:`RecordError` at step ``i`` if the stored tricks lack trick ``trick_before``
    or its entry differs from the engine's ``t`` (R4.1-R4.3)."""
    if trick_before >= len(s_tricks):
        raise RecordError(f"the record lists {len(s_tricks)} tricks but trick {trick_before + 1} "
                          f"was played", step=i, field="tricks", deal=deal)
    got = s_tricks[trick_before]
    for key in TRICK_KEYS:
        if got[key] != t[key]:
            what = {"taker": "trick taker (R4.1, R4.2)", "pending": "pending pile (R4.3)",
                    "leader": "leader", "cards": "cards"}[key]
            raise RecordError(f"trick {trick_before + 1}: stored {what} {got[key]!r} but the engine "
                              f"gives {t[key]!r}", step=i, field=key, deal=deal)


def _compare_deal_end(stored: dict, derived: dict, n_steps: int, deal: int | None) -> None:
    """Raise :class:`RecordError` at step ``n_steps`` if the stored record's trick count or
    end-of-deal fields differ from the engine's ``derived`` ones (R4.4, R5-R8)."""
    s_tricks, tricks = stored["tricks"], derived["tricks"]
    if len(s_tricks) != len(tricks):
        raise RecordError(f"the record lists {len(s_tricks)} tricks; the deal has {len(tricks)}",
                          step=n_steps, field="tricks", deal=deal)
    rules = {"neutral": "R4.4", "side_scores": "R5", "lines": "R6, R7.5, R8", "deal_points": "R5, R7.5, R8",
             "totals_after": "R6.1, R7.5"}
    for key, rule in rules.items():
        if stored[key] != derived[key]:
            raise RecordError(f"stored {key} {stored[key]!r} but the engine gives {derived[key]!r} ({rule})",
                              step=n_steps, field=key, deal=deal)


def match_record(deal_records: Sequence[dict], *, config: Config | Mapping,
                 agents: Sequence[str | None] | None = None, seed: int | None = None,
                 meta: Mapping | None = None) -> dict:
    """The record of a match from the records of its deals, in order.

    Each deal record must be a deal of this match: the same config, dealer passed to the
    left (R2.4) or solo passed on by R7.4 (kept with ``fixed_solo``, R7.6), and its
    ``totals_before`` the previous deal's ``totals_after``. The match's starting totals
    are the first deal's ``totals_before``; ``totals``, ``done`` and ``winners`` are
    derived (R6, R7.5, R8).

    Args:
        deal_records: the deals' records (:func:`deal_record`), at least one.
        config: the match rules (engine ``Config`` or a dict of its fields).
        agents: the agent spec of each player (4 players: seats 0..3; 3 players: players
            0..2, whose seats change with the solo, R7.4), or None.
        seed: the match's seed, if any. meta: free JSON data.

    Returns:
        a dict of JSON values with the keys of ``docs/RECORDS.md`` (match record).

    Raises:
        RecordError: a deal record that is malformed, disagrees with the engine or does
            not continue the match (``deal`` names it), or deals after the match was
            decided.
        ValueError: a bad argument.
    """
    if isinstance(config, Mapping):
        config = _config_from_dict(config, "config")
    elif not isinstance(config, Config):
        raise ValueError(f"config must be an engine Config or a dict of its fields, got {type(config).__name__}")
    deals = [dict(d) for d in deal_records]
    if not deals:
        raise ValueError("a match record needs at least one deal record")
    n_agents = 4 if config.num_players == 4 else 3
    first = deals[0]
    rec = {"format": FORMAT_MATCH, "version": VERSION, "package_version": _package_version(), "created": _now(),
           "config": _config_dict(config),
           "agents": _check_agents(agents, n_agents, "by player" if n_agents == 3 else "by seat 0..3"),
           "seed": _check_seed(seed), "lines": None, "scores": None, "deals": deals, "totals": None,
           "deals_played": len(deals), "done": None, "winners": None, "meta": _check_meta(meta)}
    for k, d in enumerate(deals):
        try:
            validate(d)
        except RecordError as e:
            raise RecordError(e.reason, step=e.step, field=e.field, deal=k) from None
    rec["scores"] = list(first["totals_before"])
    match = _replay_match(rec, derive_only=True)
    rec["lines"] = match.line_names()
    rec["totals"] = list(match.totals)
    rec["done"] = bool(match.done)
    rec["winners"] = list(match.winners)
    return {k: rec[k] for k in MATCH_KEYS}


# ---------------------------------------------------------------------------------
# replay and validation
# ---------------------------------------------------------------------------------

def replay(record: dict) -> list[State]:
    """Every state of a record, re-derived with the engine, after checking every stored field.

    Args:
        record: a deal or match record (dict, as from :func:`load`).

    Returns:
        a deal record: its ``len(actions) + 1`` states, the initial one (as dealt) to the
        final one (7 tricks played). A match record: the states of all its deals one after
        the other (each deal's initial to final state).

    Raises:
        RecordError: a schema fault (:func:`validate`); an illegal action (``field``
            ``"action"``, R3.2, R3.5); a stored ``seat``, ``chooser``, ``holder`` or
            ``card`` of an action, a trick's ``leader``, ``cards``, ``taker`` (R4.1,
            R4.2) or ``pending`` pile (R4.3), the ``neutral`` pile (R4.4), the
            ``side_scores``/``deal_points`` (R5, R7.5, R8) or the totals that differ from
            the engine's; actions that stop before the deal's end or go on after it; in a
            match, a deal whose dealer or solo, totals or config do not continue the
            previous deal (R2.4, R7.4), or wrong match ``totals``/``done``/``winners``.
            ``step`` is the index into the deal's ``actions``; ``deal`` the deal's index.
    """
    validate(record)
    if record["format"] == FORMAT_DEAL:
        return replay_deal(record)[1]
    states: list[State] = []
    _replay_match(record, derive_only=False, states=states)
    return states


def _check_undecided(match: Match, deal: int | None = None) -> None:
    """Refuse starting totals that already decide the match: no deal follows (R6.1, R6.2, R7.5)."""
    winners = match._decide()
    if winners:
        raise RecordError(f"totals_before {list(match.totals)!r} already decide the match (winning line(s) "
                          f"{list(winners)}, target {match.config.target}); no deal follows a decided match "
                          "(R6.1, R6.2, R7.5)", step=0, field="totals_before", deal=deal)


def replay_deal(record: dict, deal: int | None = None) -> tuple[Match, list[State]]:
    config = _config_from_dict(record["config"], "config")
    try:
        match = _new_match(config, record["deal"], record["dealer"], record["solo"], record["totals_before"])
    except ValueError as e:
        raise RecordError(f"the deal cannot start: {e}", step=0, field="totals_before", deal=deal) from None
    _check_undecided(match, deal)
    if match.state.first_leader != record["leader"]:
        want = "the seat after the dealer (R2.4)" if config.num_players == 4 else "the solo, seat 0 (R7.2)"
        raise RecordError(f"stored leader {record['leader']} but {want} is seat {match.state.first_leader}",
                          step=0, field="leader", deal=deal)
    _, states = _derive(match, [a["action"] for a in record["actions"]], deal, record)
    return match, states


def _replay_match(record: dict, derive_only: bool, states: list | None = None) -> Match:
    """Check that the deals continue one match and (unless ``derive_only``) the match fields."""
    config = _config_from_dict(record["config"], "config")
    deals = record["deals"]
    match = None
    for k, d in enumerate(deals):
        if d["config"] != record["config"]:
            raise RecordError(f"the deal's config {d['config']!r} is not the match's {record['config']!r}",
                              step=0, field="config", deal=k)
        if k == 0:
            if d["totals_before"] != record["scores"]:
                raise RecordError(f"the first deal starts from totals {d['totals_before']!r} but the match "
                                  f"starts from scores {record['scores']!r}", step=0, field="totals_before", deal=0)
        else:
            if match.done:
                raise RecordError(f"the match was decided after deal {k - 1} (winners {list(match.winners)}); "
                                  "no deal follows (R6.1, R7.5)", step=0, field="deals", deal=k)
            if d["totals_before"] != match.totals:
                raise RecordError(f"the deal starts from totals {d['totals_before']!r} but the previous deal "
                                  f"ended with {match.totals!r}", step=0, field="totals_before", deal=k)
            match.next_deal(None, deal=d["deal"])
            if config.num_players == 4 and d["dealer"] != match.dealer:
                raise RecordError(f"dealer seat {d['dealer']} but the dealer passes to the left: seat "
                                  f"{match.dealer} deals this one (R2.4)", step=0, field="dealer", deal=k)
            if config.num_players == 3 and d["solo"] != match.solo:
                rule = "R7.6: fixed_solo keeps the solo" if config.fixed_solo else "R7.4: the solo passes on"
                raise RecordError(f"solo player {d['solo']} but player {match.solo} is solo in this deal ({rule})",
                                  step=0, field="solo", deal=k)
        dm, st = replay_deal(d, deal=k)
        if states is not None:
            states.extend(st)
        if k == 0:
            match = dm
        else:
            # carry the match on with this deal's finished state and credit
            match.state = dm.state
            match.totals = list(dm.totals)
            match.last_deal_points = list(dm.last_deal_points)
            match.deals_played += 1
            match.winners = match._decide()
            match.done = bool(match.winners)
    if not derive_only:
        derived = {"lines": match.line_names(), "totals": list(match.totals), "deals_played": len(deals),
                   "done": bool(match.done), "winners": list(match.winners)}
        rules = {"lines": "R6, R7.5, R8", "totals": "R6.1, R7.5", "deals_played": "the deals listed",
                 "done": "R6.1, R6.2, R7.5", "winners": "R6.1, R6.2, R7.5"}
        for key, value in derived.items():
            if record[key] != value:
                raise RecordError(f"stored match {key} {record[key]!r} but the engine gives {value!r} ({rules[key]})",
                                  step=len(deals[-1]["actions"]), field=key, deal=len(deals) - 1)
    return match


def _config_from_dict(c: Mapping, where: str) -> Config:
    missing = [k for k in CONFIG_KEYS if k not in c]
    extra = [k for k in c if k not in CONFIG_KEYS]
    if missing or extra:
        raise RecordError(f"{where} must have exactly the keys {', '.join(CONFIG_KEYS)}"
                          + (f"; missing {', '.join(missing)}" if missing else "")
                          + (f"; unknown {', '.join(map(str, extra))}" if extra else ""), field=where)
    if not isinstance(c["num_players"], int) or isinstance(c["num_players"], bool):
        raise RecordError(f"{where}.num_players must be 3 or 4, got {c['num_players']!r}", field=f"{where}.num_players")
    if c["num_players"] == 4 and (c["three_player_scoring"] != "team" or c["fixed_solo"] is not False):
        raise RecordError(f"{where}: three_player_scoring='individual' and fixed_solo=True are 3-player variants "
                          "(R7.6, R8); a 4-player record has 'team' and false", field=where)
    try:
        return Config(**{k: c[k] for k in CONFIG_KEYS})
    except ValueError as e:
        raise RecordError(f"{where}: {e}", field=where) from None


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _need(cond: bool, field: str, reason: str) -> None:
    if not cond:
        raise RecordError(reason, field=field)


def _check_keys(obj, keys: Sequence[str], where: str) -> None:
    _need(isinstance(obj, dict), where, f"{where} must be a JSON object, got {type(obj).__name__}")
    for k in keys:
        _need(k in obj, f"{where}.{k}" if where != "record" else k, f"missing key {k!r} in {where}")
    extra = [k for k in obj if k not in keys]
    _need(not extra, where, f"unknown key(s) {', '.join(map(repr, extra))} in {where}; allowed: {', '.join(keys)}")


def _check_code(x, field: str) -> None:
    _need(isinstance(x, str) and x in _CODES, field,
          f"unknown card code {x!r}; card codes are {' '.join(CARDS)} (R1)")


def _check_int_list(x, n: int | None, field: str, what: str) -> None:
    _need(isinstance(x, list) and (n is None or len(x) == n) and all(_is_int(v) for v in x), field,
          f"{field} must be a list of {n if n is not None else ''} ints ({what}), got {x!r}".replace("of  ", "of "))


def _validate_common(record: dict, fmt: str) -> None:
    _need(_is_int(record.get("version")), "version", f"version must be an int, got {record.get('version')!r}")
    _need(record["version"] == VERSION, "version",
          f"unsupported {fmt} version {record['version']}; this twilight-env reads version {VERSION}")
    keys = DEAL_KEYS if fmt == FORMAT_DEAL else MATCH_KEYS
    _check_keys(record, keys, "record")
    _need(isinstance(record["package_version"], str), "package_version", "package_version must be a string")
    _need(isinstance(record["created"], str), "created", "created must be a string (ISO 8601 UTC time)")
    _need(record["seed"] is None or (_is_int(record["seed"]) and record["seed"] >= 0), "seed",
          f"seed must be an int >= 0 or null (numpy seeds are non-negative), got {record['seed']!r}")
    _need(isinstance(record["meta"], dict), "meta", f"meta must be a JSON object, got {type(record['meta']).__name__}")
    _need(isinstance(record["config"], dict), "config", "config must be a JSON object")
    _check_keys(record["config"], CONFIG_KEYS, "config")
    c = record["config"]
    _need(c["num_players"] in (3, 4) and _is_int(c["num_players"]), "config.num_players",
          f"config.num_players must be 3 or 4, got {c['num_players']!r}")
    _need(_is_int(c["target"]) and c["target"] >= 1, "config.target",
          f"config.target must be a positive int (points), got {c['target']!r}")
    for k in ("goals_333", "fixed_solo"):
        _need(isinstance(c[k], bool), f"config.{k}", f"config.{k} must be true or false, got {c[k]!r}")
    _need(c["three_player_scoring"] in ("team", "individual"), "config.three_player_scoring",
          f"config.three_player_scoring must be 'team' or 'individual', got {c['three_player_scoring']!r}")
    _config_from_dict(c, "config")
    _need(isinstance(record["lines"], list) and all(isinstance(x, str) for x in record["lines"]), "lines",
          "lines must be a list of score-line names")
    n = c["num_players"]
    n_agents = 4 if fmt == FORMAT_DEAL or n == 4 else 3
    a = record["agents"]
    _need(a is None or (isinstance(a, list) and len(a) == n_agents and all(x is None or isinstance(x, str) for x in a)),
          "agents", f"agents must be null or a list of {n_agents} agent specs (string or null), got {_short(a)}")
    _check_agent_lengths(a or [])


def _short(value, limit: int = 120) -> str:
    """``repr(value)``, cut to ``limit`` characters (a message never repeats a huge field)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _check_agent_lengths(agents) -> None:
    """Refuse an agent spec longer than :data:`MAX_AGENT_CHARS` (``field`` ``agents[i]``)."""
    for i, x in enumerate(agents):
        if x is not None and len(x) > MAX_AGENT_CHARS:
            raise RecordError(f"agents[{i}] is {len(x):,} characters long; an agent spec has at most "
                              f"{MAX_AGENT_CHARS} characters (it starts {x[:40]!r})", field=f"agents[{i}]")


def _num_lines(c: dict) -> int:
    return 2 if c["num_players"] == 4 else (4 if c["three_player_scoring"] == "individual" else 3)


def _validate_deal(r: dict) -> None:
    _validate_common(r, FORMAT_DEAL)
    c = r["config"]
    n = c["num_players"]
    if n == 4:
        _need(_is_int(r["dealer"]) and 0 <= r["dealer"] < 4, "dealer",
              f"dealer must be a seat 0..3 in 4 players, got {r['dealer']!r}")
        _need(r["solo"] is None, "solo", f"solo must be null in 4 players, got {r['solo']!r}")
    else:
        _need(_is_int(r["solo"]) and 0 <= r["solo"] < 3, "solo",
              f"solo must be a player 0..2 in 3 players, got {r['solo']!r}")
        _need(r["dealer"] is None, "dealer", f"dealer must be null in 3 players, got {r['dealer']!r}")
    _need(_is_int(r["leader"]) and 0 <= r["leader"] < 4, "leader", f"leader must be a seat 0..3, got {r['leader']!r}")
    deal = r["deal"]
    _need(isinstance(deal, list) and len(deal) == 4, "deal", "deal must be a list of 4 hands (by seat)")
    for s, hand in enumerate(deal):
        _need(isinstance(hand, list) and len(hand) == 7, f"deal[{s}]",
              f"deal[{s}] must be a list of 7 card codes, got {hand!r}")
        for j, code in enumerate(hand):
            _check_code(code, f"deal[{s}][{j}]")
    try:
        validate_deal(deal)
    except ValueError as e:
        raise RecordError(str(e), field="deal") from None
    acts = r["actions"]
    _need(isinstance(acts, list), "actions", "actions must be a list")
    _need(len(acts) <= 56, "actions", f"a deal has 28 to 56 actions, the record lists {len(acts)}")
    for i, a in enumerate(acts):
        where = f"actions[{i}]"
        _check_keys(a, ACTION_KEYS, where)
        _need(_is_int(a["action"]) and 0 <= a["action"] <= 30, f"{where}.action",
              f"{where}.action must be an int 0..30, got {a['action']!r}")
        for k in ("seat", "chooser", "holder"):
            _need(_is_int(a[k]) and 0 <= a[k] < 4, f"{where}.{k}", f"{where}.{k} must be a seat 0..3, got {a[k]!r}")
        if a["card"] is not None:
            _check_code(a["card"], f"{where}.card")
    tricks = r["tricks"]
    _need(isinstance(tricks, list) and len(tricks) == NUM_TRICKS, "tricks",
          f"tricks must be a list of the deal's 7 tricks, got {len(tricks) if isinstance(tricks, list) else tricks!r}")
    for t, tr in enumerate(tricks):
        where = f"tricks[{t}]"
        _check_keys(tr, TRICK_KEYS, where)
        _need(_is_int(tr["leader"]) and 0 <= tr["leader"] < 4, f"{where}.leader", f"{where}.leader must be a seat 0..3")
        _need(tr["taker"] is None or (_is_int(tr["taker"]) and 0 <= tr["taker"] < 4), f"{where}.taker",
              f"{where}.taker must be a seat 0..3 or null (pending, R4.3), got {tr['taker']!r}")
        _need(isinstance(tr["cards"], list) and len(tr["cards"]) == 4, f"{where}.cards",
              f"{where}.cards must be a list of 4 card codes")
        _need(isinstance(tr["pending"], list), f"{where}.pending", f"{where}.pending must be a list of card codes")
        for j, code in enumerate(tr["cards"]):
            _check_code(code, f"{where}.cards[{j}]")
        for j, code in enumerate(tr["pending"]):
            _check_code(code, f"{where}.pending[{j}]")
    _need(isinstance(r["neutral"], list), "neutral", "neutral must be a list of card codes")
    for j, code in enumerate(r["neutral"]):
        _check_code(code, f"neutral[{j}]")
    _check_int_list(r["side_scores"], 2, "side_scores", "deal points of side 0 and side 1")
    nl = _num_lines(c)
    for k in ("deal_points", "totals_before", "totals_after"):
        _check_int_list(r[k], nl, k, "one per score line")
    _check_reachable_deal(r)


def _check_reachable_deal(r: dict) -> None:
    """Refuse deal-record scores that no game reaches (types already checked)."""
    s0, s1 = r["side_scores"]
    _need(0 <= s0 <= MAX_DEAL_SCORE and 0 <= s1 <= MAX_DEAL_SCORE and s0 + s1 <= MAX_DEAL_SCORE, "side_scores",
          f"side_scores must be two ints 0..{MAX_DEAL_SCORE} with a sum of at most {MAX_DEAL_SCORE} (60 souls in a "
          f"deal, a multiplier of at most 6, R5.1-R5.3), got {r['side_scores']!r}")
    _need(all(0 <= p <= MAX_DEAL_SCORE for p in r["deal_points"]), "deal_points",
          f"deal_points must be ints 0..{MAX_DEAL_SCORE} (a deal score, R5.3, R7.5, R8), got {r['deal_points']!r}")
    _need(all(t >= 0 for t in r["totals_before"]), "totals_before",
          f"totals_before must be ints >= 0 (totals add deal scores, never negative: R5.3, R6.1), "
          f"got {r['totals_before']!r}")
    want = [b + p for b, p in zip(r["totals_before"], r["deal_points"])]
    _need(r["totals_after"] == want, "totals_after",
          f"totals_after must be totals_before + deal_points (R6.1, R7.5) = {want!r}, got {r['totals_after']!r}")
    c = r["config"]
    if c["num_players"] == 3:
        why = fixed_solo_scores_problem(_config_from_dict(c, "config"), r["solo"], r["totals_before"])
        _need(why is None, "totals_before", f"totals_before: {why}")


def _validate_match(r: dict) -> None:
    _validate_common(r, FORMAT_MATCH)
    nl = _num_lines(r["config"])
    _check_int_list(r["scores"], nl, "scores", "starting totals, one per score line")
    _check_int_list(r["totals"], nl, "totals", "one per score line")
    _need(all(s >= 0 for s in r["scores"]), "scores",
          f"scores must be ints >= 0 (totals add deal scores, never negative: R5.3, R6.1), got {r['scores']!r}")
    _need(all(t >= s for t, s in zip(r["totals"], r["scores"])), "totals",
          f"totals {r['totals']!r} must be at least the starting scores {r['scores']!r} (deal scores are "
          "never negative, R5.3, R6.1)")
    _need(_is_int(r["deals_played"]) and r["deals_played"] >= 1, "deals_played", "deals_played must be an int >= 1")
    _need(isinstance(r["done"], bool), "done", "done must be true or false")
    _need(isinstance(r["winners"], list) and all(_is_int(w) and 0 <= w < nl for w in r["winners"]), "winners",
          f"winners must be a list of score-line indices 0..{nl - 1}")
    _need(len(set(r["winners"])) == len(r["winners"]) and r["winners"] == sorted(r["winners"]), "winners",
          f"winners must list each score line once, in order, got {r['winners']!r}")
    _need(r["done"] == bool(r["winners"]), "done",
          f"done must be true exactly when there are winners (R6.1, R7.5), got done {r['done']!r} and winners "
          f"{r['winners']!r}")
    _need(isinstance(r["deals"], list) and len(r["deals"]) >= 1, "deals",
          "deals must be a non-empty list of deal records")
    _need(r["deals_played"] == len(r["deals"]), "deals_played",
          f"deals_played must be the number of deals listed ({len(r['deals'])}), got {r['deals_played']!r}")
    for k, d in enumerate(r["deals"]):
        try:
            _need(isinstance(d, dict) and d.get("format") == FORMAT_DEAL, "format",
                  f"each entry of deals must be a {FORMAT_DEAL!r} record")
            _validate_deal(d)
        except RecordError as e:
            raise RecordError(e.reason, step=e.step, field=e.field, deal=k) from None


def validate(record: dict) -> None:
    """Check a record's structure (no engine replay: see :func:`replay`).

    Checks every key of ``docs/RECORDS.md``: present, no unknown key, JSON type and range,
    card codes among ``twilight_env.rules.cards.CARDS`` (R1), a complete deal (4 hands of 7
    distinct cards, R2.3), the format name and ``version`` (1), and scores that a game
    can reach: deal scores 0..360 (both sides together at most 360, R5.1-R5.3), totals
    never negative, ``totals_after = totals_before + deal_points`` (R6.1), equal Sun
    starting totals under ``fixed_solo`` (R7.6), a seed >= 0; in a match, ``totals`` at
    least ``scores``, ``done`` exactly when there are winners, each winner once and
    ``deals_played`` the number of deals. (:func:`replay` also refuses starting totals
    that already decide the match: no deal follows, R6.1, R6.2, R7.5.)

    Raises:
        RecordError: saying which key is missing or wrong (``field`` names it; ``deal``
            the deal within a match) and what is allowed.
    """
    _need(isinstance(record, dict), "record", f"a record is a JSON object, got {type(record).__name__}")
    fmt = record.get("format")
    _need("format" in record, "format",
          "missing key 'format' in record: this is not a game record (records are written by "
          "`twilight deal --json`, `twilight play --record FILE` and `--records DIR` of arena and edge; "
          "docs/RECORDS.md)")
    _need(fmt in (FORMAT_DEAL, FORMAT_MATCH), "format",
          f"unknown format {fmt!r}; a record's format is {FORMAT_DEAL!r} or {FORMAT_MATCH!r}")
    _need("version" in record, "version", "missing key 'version' in record")
    if fmt == FORMAT_DEAL:
        _validate_deal(record)
    else:
        _validate_match(record)
