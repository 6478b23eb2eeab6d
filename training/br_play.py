"""Deals of a best-response run: the learner's network against the frozen agent.

The frozen agent is seen only through the agent protocol (:mod:`twilight_env.agents.base`,
an :class:`~twilight_env.rules.infoset.InfoSet` per decision); the learner plays one side
of each deal (module docstring of :mod:`twilight_env.training.best_response`, which trains
and evaluates with these).
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from twilight_env.agents.nn.features import role_of, state_row
from twilight_env.agents.nn.network import score_decisions
from twilight_env.rules.engine import State, random_hands
from twilight_env.rules.infoset import InfoSet
from twilight_env.training.selfplay import Batch, CollectStats, choose_greedy


class FrozenAgent:
    """The agent under test, seen only through the agent protocol (:mod:`twilight_env.agents.base`).

    One instance plays every deal when the agent is ``stateless``; otherwise each deal gets
    its own instance (``reset()`` before the deal). Agents with ``act_batch`` decide for
    many deals in one call.

    Args:
        spec: agent spec (:func:`twilight_env.agents.base.make_agent`), or an agent object.
        rng: the agent's randomness (``numpy.random.Generator``).

    Raises:
        ValueError: on a spec that cannot be built (the message lists the valid agents).
    """

    def __init__(self, spec, rng: np.random.Generator):
        self.spec = spec
        self.rng = rng
        self.shared = self._build()
        self.stateless = bool(getattr(self.shared, "stateless", False))

    def _build(self):
        if not isinstance(self.spec, str):
            return self.spec
        from twilight_env.agents.base import make_agent
        return make_agent(self.spec)

    def for_deal(self):
        """The instance that plays a new deal (reset)."""
        agent = self.shared if self.stateless else self._build()
        reset = getattr(agent, "reset", None)
        if reset is not None:
            reset()
        return agent

    def decide(self, items: list) -> list[int]:
        """Actions for ``(agent, infoset, legal)`` items; batched where the agent allows.

        Raises:
            ValueError: if the agent returns an illegal action (naming the agent).
        """
        out: list = [None] * len(items)
        batches: dict[int, tuple] = {}
        for i, (agent, info, legal) in enumerate(items):
            if hasattr(agent, "act_batch"):
                batches.setdefault(id(agent), (agent, []))[1].append(i)
            else:
                out[i] = agent.act(info, legal, self.rng)
        for agent, idx in batches.values():
            acts = agent.act_batch([items[i][1] for i in idx], [items[i][2] for i in idx])
            for i, a in zip(idx, acts):
                out[i] = a
        for (agent, info, legal), a in zip(items, out):
            if a not in legal:
                raise ValueError(f"agent {getattr(agent, 'name', self.spec)!r} at seat {info.seat} chose illegal "
                                 f"action {a!r}; legal: {list(legal)}")
        return [int(a) for a in out]


class Game:
    """One deal in progress: the engine state, the learner's side (0 or 1: seat parity;
    3 players: 0 the solo side, 1 the Sun side), the agent instance and the learner's
    recorded decisions ``(row, role, action, seat)``."""

    __slots__ = ("state", "side", "agent", "records")

    def __init__(self, state: State, side: int, agent):
        self.state, self.side, self.agent, self.records = state, side, agent, []


def play_round(games: list, model, frozen: FrozenAgent, epsilon: float, rng: np.random.Generator,
               record: bool) -> tuple[int, list]:
    """Every unfinished game makes its next decision: forced ones applied directly, the
    learner's scored in one forward pass (epsilon-greedy), the agent's through
    :meth:`FrozenAgent.decide` (an :class:`InfoSet` only).

    Args:
        games: :class:`Game` objects, played forward in place.
        model: the learner's network. epsilon: exploration probability (0 = greedy).
        rng: exploration randomness. record: keep the learner's decisions in ``Game.records``.

    Returns:
        ``(decisions applied, indices of games that finished)``.
    """
    npl = games[0].state.num_players if games else 4
    mine, theirs = [], []
    applied, finished = 0, []
    for g, game in enumerate(games):
        st = game.state
        if st.done:
            continue
        legal = st.legal_actions()
        if len(legal) == 1:
            st.apply(legal[0])
            applied += 1
            if st.done:
                finished.append(g)
            continue
        v = st.deciding_seat
        if (v & 1) == game.side:
            mine.append((g, v, legal, state_row(st, v), role_of(npl, st.acting_seat)))
        else:
            theirs.append((g, (game.agent, InfoSet(st, v), tuple(legal))))
    if mine:
        qs = score_decisions(model, [m[3] for m in mine], [m[4] for m in mine], [m[2] for m in mine], "cpu")
        for (g, v, legal, row, role), q in zip(mine, qs):
            if epsilon > 0 and rng.random() < epsilon:
                a = legal[int(rng.integers(len(legal)))]
            else:
                a = choose_greedy(q, legal)
            if record:
                games[g].records.append((row, role, a, v))
            games[g].state.apply(a)
    if theirs:
        for (g, _), a in zip(theirs, frozen.decide([t[1] for t in theirs])):
            games[g].state.apply(a)
    for g, *_ in mine:
        if games[g].state.done:
            finished.append(g)
    for g, _ in theirs:
        if games[g].state.done:
            finished.append(g)
    return applied + len(mine) + len(theirs), finished


class BestResponseSource:
    """Training data: deals of the learner against the frozen agent (module docstring).

    Same interface as the trainer's self-play sources (:func:`twilight_env.training.dmc.learner.learner_step`
    takes its chunks). Deals in progress carry over between calls.

    Args:
        num_players: 3 or 4. model: the learner's network (read, trained elsewhere).
        frozen: the :class:`FrozenAgent`. rng: deals, sides and exploration.
        num_games: deals side by side. epsilon: exploration probability.
    """

    def __init__(self, num_players: int, model, frozen: FrozenAgent, rng: np.random.Generator,
                 num_games: int = 128, epsilon: float = 0.05):
        self.num_players, self.model, self.frozen, self.rng = num_players, model, frozen, rng
        self.epsilon = epsilon
        self.sides_played = [0, 0]
        """Deals started with the learner on side 0 and on side 1 (deals)."""
        self.games = [self._new_game() for _ in range(num_games)]

    def _new_game(self) -> Game:
        rng = self.rng
        leader = int(rng.integers(4)) if self.num_players == 4 else 0
        side = int(rng.integers(2))
        self.sides_played[side] += 1
        return Game(State(random_hands(rng), leader, self.num_players), side, self.frozen.for_deal())

    def collect(self, min_decisions: int) -> tuple[Batch, CollectStats]:
        """Play until at least ``min_decisions`` decisions are applied; finished deals yield
        their learner decisions with the learner side's return / 360 as target.
        ``CollectStats.side0_points`` holds the learner's deal points per finished deal."""
        t0 = time.perf_counter()
        stats = CollectStats()
        rows, roles, acts, targets = [], [], [], []
        while stats.decisions < min_decisions:
            n, finished = play_round(self.games, self.model, self.frozen, self.epsilon, self.rng, record=True)
            stats.decisions += n
            for g in finished:
                game = self.games[g]
                ret = game.state.returns()
                for row, role, a, v in game.records:
                    rows.append(row)
                    roles.append(role)
                    acts.append(a)
                    targets.append(ret[v] / 360.0)
                stats.episodes += 1
                stats.side0_points.append(ret[game.side])
                self.games[g] = self._new_game()
        stats.recorded = len(targets)
        stats.seconds = time.perf_counter() - t0
        batch = Batch(np.array(rows, dtype=np.int64).reshape(len(rows), -1) if rows else
                      np.zeros((0, 25), dtype=np.int64), np.array(roles, dtype=np.int64),
                      np.array(acts, dtype=np.int64), np.array(targets, dtype=np.float32))
        return batch, stats

    def get(self, model, want: int) -> list:
        """One chunk as ``[(0, Batch, CollectStats)]`` (the trainer's source interface)."""
        model.eval()
        return [(0, *self.collect(want))]


def duplicate_points(model, num_players: int, agent, deals: list, seed: int = 0) -> dict:
    """The greedy learner against ``agent`` on duplicate deals.

    Args:
        model: the learner's :class:`~twilight_env.agents.nn.network.QNetwork`.
        num_players: 3 or 4.
        agent: agent spec or object (:class:`FrozenAgent`).
        deals: ``(hands, leader)`` pairs (:func:`twilight_env.training.selfplay.eval_deals`), each played
            twice, the learner on side 0 then on side 1.
        seed: the agent's randomness.

    Returns:
        dict: ``deals``; ``points`` (learner side's deal score minus the agent side's, per
        deal, averaged over both plays; deal points) with ``ci_low``/``ci_high`` (95%
        Student-t over deals) and ``ci95`` (half-width); ``win_rate`` (share of plays the
        learner side scored more, ties 0.5); ``points_side0`` / ``points_side1`` (per play
        with the learner on that side; 3 players: solo / Sun).

    Raises:
        ValueError: on no deals, or an agent playing an illegal action.
    """
    from twilight_env.util.report import mean_ci
    if not deals:
        raise ValueError("duplicate_points needs at least one deal")
    frozen = FrozenAgent(agent, np.random.default_rng([seed, 5_000]))
    games = [Game(State(hands, leader, num_players), side, frozen.for_deal())
             for hands, leader in deals for side in (0, 1)]
    model.eval()
    with torch.no_grad():
        while any(not g.state.done for g in games):
            play_round(games, model, frozen, 0.0, np.random.default_rng(0), record=False)
    pts = np.array([g.state.returns()[g.side] for g in games], dtype=np.float64)
    pairs = pts.reshape(-1, 2).mean(axis=1)
    m, lo, hi = mean_ci(pairs)
    return {"deals": len(pairs), "points": m, "ci_low": lo, "ci_high": hi,
            "ci95": (hi - lo) / 2 if len(pairs) > 1 else math.nan,
            "win_rate": float(np.mean((pts > 0) + 0.5 * (pts == 0))),
            "points_side0": float(pts[0::2].mean()), "points_side1": float(pts[1::2].mean())}


__all__ = ["BestResponseSource", "FrozenAgent", "Game", "duplicate_points", "play_round"]
