"""Game records for ``twilight serve``: writing a finished game, replaying an uploaded one.

Uses :mod:`twilight_env.records` when it is installed; otherwise a minimal format with
the same function names: ``deal_record``, ``match_record``, ``replay`` (raising
``RecordError(step, reason)``), ``dump`` and ``load``.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ..engine import State, hands_to_codes, validate_deal

try:  # the project's record format
    from ..records import RecordError, deal_record, load, replay  # noqa: F401
    from ..records import match_record as _match_record
    HAVE_RECORDS = True
except ImportError:
    HAVE_RECORDS = False

    FORMAT = "twilight-record"
    VERSION = 1

    class RecordError(ValueError):
        """A record that cannot be replayed: ``step`` (or None) and ``reason``."""

        def __init__(self, step: int | None, reason: str):
            super().__init__(f"record error at step {step}: {reason}" if step is not None else
                             f"record error: {reason}")
            self.step = step
            self.reason = reason

    def deal_record(initial_state: State, actions: Sequence[int], *, agents=None, seed=None, meta=None) -> dict:
        """A JSON-ready record of one deal: the starting hands, the leader and the actions."""
        return {"format": FORMAT, "version": VERSION, "kind": "deal",
                "num_players": initial_state.num_players, "leader": initial_state.leader,
                "deal": hands_to_codes(initial_state.hands), "actions": [int(a) for a in actions],
                "agents": agents, "seed": seed, "meta": meta or {}}

    def _match_record(deals: Sequence[tuple[State, Sequence[int]]], *, target: int, agents=None, seed=None,
                      meta=None) -> dict:
        return {"format": FORMAT, "version": VERSION, "kind": "match", "target": target,
                "num_players": deals[0][0].num_players if deals else None,
                "deals": [deal_record(s, a) for s, a in deals], "agents": agents, "seed": seed, "meta": meta or {}}

    def _replay_deal(rec: Any, offset: int) -> list[State]:
        if not isinstance(rec, dict):
            raise RecordError(None, f"a deal must be a JSON object, got {type(rec).__name__}")
        try:
            validate_deal(rec.get("deal"))
            state = State.from_deal(rec["deal"], rec.get("leader", 0), rec.get("num_players", 4))
        except (ValueError, KeyError, TypeError) as e:
            raise RecordError(None, f"bad deal: {e}") from None
        actions = rec.get("actions")
        if not isinstance(actions, list):
            raise RecordError(None, "'actions' must be a list of ints 0..30")
        out = [state.clone()]
        for i, a in enumerate(actions):
            if isinstance(a, bool) or not isinstance(a, int):
                raise RecordError(offset + i, f"action {a!r} is not an int 0..30")
            try:
                state.apply(a)
            except ValueError as e:
                raise RecordError(offset + i, str(e)) from None
            out.append(state.clone())
        return out

    def replay(record: Any) -> list[State]:
        """The states of a record, the starting one first (a match: its deals one after another)."""
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise RecordError(None, f"not a Twilight record (expected a JSON object with format {FORMAT!r})")
        if record.get("kind") == "match":
            states: list[State] = []
            for d in record.get("deals") or []:
                states.extend(_replay_deal(d, len(states)))
            return states
        return _replay_deal(record, 0)

    def load(fp) -> dict:
        """Read a record from a text file object."""
        return json.load(fp)


def match_record(deals: Sequence[tuple[State, Sequence[int]]], *, target: int, agents=None, seed=None,
                 meta=None) -> dict:
    """Record of a whole match from its deals ``(starting state, actions)`` in order."""
    return _match_record(deals, target=target, agents=agents, seed=seed, meta=meta)
