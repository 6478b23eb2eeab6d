"""Game records without files: the record fields derived with the engine, building deal
and match records and replaying them (the format is described in
:mod:`twilight_env.records.game_records`, which adds the files and the environment
options and re-exports these names). The format's names, :class:`RecordError` and the
structural check :func:`validate` live in :mod:`twilight_env.records.record_checks` and
are importable from here too.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Mapping, Sequence

from twilight_env.rules.cards import CARDS, PURGATORY_MASK, codes_of
from twilight_env.rules.engine import HOLD, REQUEST_BASE, Config, Match, State

# the format's names and the structural check, re-exported: importable from here as before
from twilight_env.records.record_checks import (ACTION_KEYS, CONFIG_KEYS, DEAL_KEYS, FORMAT_DEAL,  # noqa: F401
                                                FORMAT_MATCH, MATCH_KEYS, MAX_AGENT_CHARS, MAX_DEAL_SCORE,
                                                SCHEMA_FILE, TRICK_KEYS, VERSION, RecordError,
                                                check_agent_lengths, config_from_dict, short_repr, validate)


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
        raise ValueError(f"agents must be {n} agent specs (str or None) {what}, got {short_repr(agents)}")
    check_agent_lengths(agents)
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
        config = config_from_dict(config, "config")
    elif not isinstance(config, Config):
        raise ValueError(f"config must be an engine Config or a dict of its fields, got {type(config).__name__}")
    if config.num_players != n:
        raise ValueError(f"config.num_players is {config.num_players} but the state is a {n}-player deal")
    config_from_dict(_config_dict(config), "config")  # 4 players: no 3-player variant (R7.6, R8)
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
        config = config_from_dict(config, "config")
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
    config = config_from_dict(record["config"], "config")
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
    config = config_from_dict(record["config"], "config")
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
