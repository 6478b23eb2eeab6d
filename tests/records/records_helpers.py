"""Shared pieces of the record tests: games played directly with the engine, kept state by state."""

from __future__ import annotations

import copy

import numpy as np

from twilight_env.records import game_records as records
from twilight_env.rules.engine import Config, Match
from twilight_env.rules.state import _FIELDS

CONFIGS = [
    Config(num_players=4),
    Config(num_players=4, goals_333=True, target=400),
    Config(num_players=3),
    Config(num_players=3, three_player_scoring="individual"),
    Config(num_players=3, fixed_solo=True, target=500),
    Config(num_players=3, three_player_scoring="individual", fixed_solo=True, goals_333=True, target=700),
]
"""4 and 3 players, every variant (R6.2, R7.6, R8) and other targets."""

CONFIG_IDS = ["4p", "4p-goals333-t400", "3p-team", "3p-individual", "3p-fixed-t500", "3p-ind-fixed-goals-t700"]


def state_fields(state) -> dict:
    """Every field of an engine state, as plain values (lists for lists)."""
    return {f: copy.copy(getattr(state, f)) for f in _FIELDS}


def play_match(config: Config, seed: int, max_deals: int = 50, scores=None):
    """Play a match with uniformly random legal actions (rng seeded by ``seed``).

    Returns:
        ``(deal_records, match_record, games)``: ``games`` per deal is a dict with
        ``"states"`` (the fields of every state, initial .. final), ``"actions"``,
        ``"deal_points"`` and ``"totals"`` as the engine gave them while playing.
    """
    rng = np.random.default_rng(seed)
    n = config.num_players
    m = Match(config, rng, dealer=int(rng.integers(4)) if n == 4 else None,
              solo=int(rng.integers(3)) if n == 3 else None, scores=scores)
    deals, games = [], []
    while True:
        before = list(m.totals)
        st = m.state
        states, actions = [state_fields(st)], []
        while not st.done:
            legal = st.legal_actions()
            a = legal[int(rng.integers(len(legal)))]
            st.apply(a)
            actions.append(a)
            states.append(state_fields(st))
        agents = ["random"] * 4
        deals.append(records.deal_record(st, actions, config=config, dealer=m.dealer if n == 4 else None,
                                         solo=m.solo if n == 3 else None, scores=before, agents=agents,
                                         seed=seed, meta={"deal_index": len(deals)}))
        m.finish_deal()
        games.append({"states": states, "actions": actions, "deal_points": list(m.last_deal_points),
                      "totals": list(m.totals), "solo": m.solo, "dealer": m.dealer})
        if m.done or len(deals) >= max_deals:
            break
        m.next_deal(rng)
    agents = ["random"] * (4 if n == 4 else 3)
    match = records.match_record(deals, config=config, agents=agents, seed=seed)
    return deals, match, games


def one_deal(config: Config, seed: int) -> tuple[dict, dict]:
    """A single deal record and its directly played game (:func:`play_match`'s first deal)."""
    deals, _, games = play_match(config, seed, max_deals=1)
    return deals[0], games[0]
