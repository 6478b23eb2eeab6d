"""The record format's names and its structural check: the format names, the keys of each
record kind, :class:`RecordError`, and :func:`validate`, which checks a record's keys, JSON
types, ranges and the scores a game can reach without replaying it (the format is
described in ``docs/RECORDS.md``). :mod:`twilight_env.records.record_core` builds and
replays records on top of this module and re-exports its names.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

from twilight_env.rules.cards import CARDS
from twilight_env.rules.engine import NUM_TRICKS, Config, fixed_solo_scores_problem, validate_deal


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


def config_from_dict(c: Mapping, where: str) -> Config:
    """The engine :class:`~twilight_env.rules.engine.Config` of a record's ``config`` object.

    Args:
        c: a mapping with exactly the keys :data:`CONFIG_KEYS` (JSON values: ``num_players``
            3 or 4, ``target`` points, ``goals_333`` and ``fixed_solo`` bools,
            ``three_player_scoring`` ``"team"`` or ``"individual"``).
        where: the record key that holds ``c`` (``"config"``), named in errors.

    Raises:
        RecordError: a missing or unknown key, a ``num_players`` that is not 3 or 4, a
            3-player variant (R7.6, R8) in a 4-player config, or a field the engine's
            ``Config`` refuses (``field`` is ``where`` or ``where.num_players``).
    """
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
    config_from_dict(c, "config")
    _need(isinstance(record["lines"], list) and all(isinstance(x, str) for x in record["lines"]), "lines",
          "lines must be a list of score-line names")
    n = c["num_players"]
    n_agents = 4 if fmt == FORMAT_DEAL or n == 4 else 3
    a = record["agents"]
    _need(a is None or (isinstance(a, list) and len(a) == n_agents and all(x is None or isinstance(x, str) for x in a)),
          "agents", f"agents must be null or a list of {n_agents} agent specs (string or null), got {short_repr(a)}")
    check_agent_lengths(a or [])


def short_repr(value, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters (int, > 0) with the full length added, so
    that an error message never repeats a huge field; never raises for a positive ``limit``."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def check_agent_lengths(agents) -> None:
    """Refuse an agent spec longer than :data:`MAX_AGENT_CHARS` characters.

    Args:
        agents: a sequence of agent specs (str) or None (an unnamed seat); types are
            checked by the caller.

    Raises:
        RecordError: for the first spec over the limit, ``field`` ``agents[i]``.
    """
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
        why = fixed_solo_scores_problem(config_from_dict(c, "config"), r["solo"], r["totals_before"])
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
