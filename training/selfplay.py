"""Self-play episode generation and duplicate-deal evaluation, batched over many deals.

Both run many deals side by side: at each step every unfinished deal contributes its
next decision, and all legal actions of all those decisions are scored by the network
in one forward pass (``QNetwork.forward`` with an ``owner`` index). Decisions with a
single legal action are applied without the network and are not trained on (their
Q-value never changes a choice).

Self-play (Deep Monte-Carlo, Zha et al. 2021): every seat is played by the current
network with epsilon-greedy exploration; at the end of a deal every recorded decision
gets the Monte Carlo target ``(own side's deal score − other side's) / 360`` (R5) of the
seat that made it (3 players: the solo's decisions for the new moon count for the Moon
side, R7.3). With probability ``pool_prob`` a deal instead pits the current network
against a past snapshot from the opponent pool on one randomly chosen side; only the
current network's decisions are recorded.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from twilight_env.agents.nn.features import NUM_MASKS, role_of, state_row
from twilight_env.agents.nn.network import score_decisions
from twilight_env.rules.engine import State, random_hands
from twilight_env.rules.heldout import check_not_heldout
from twilight_env.rules.infoset import InfoSet


@dataclass
class Batch:
    """Training samples: one per recorded decision.

    Attributes:
        rows: ``(n, 25)`` int64 compact rows. roles: ``(n,)`` int64 head index.
        actions: ``(n,)`` int64 action taken. targets: ``(n,)`` float32 return, deal points / 360.
    """

    rows: np.ndarray
    roles: np.ndarray
    actions: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.targets)


@dataclass
class CollectStats:
    """What one :meth:`SelfPlay.collect` call produced."""

    decisions: int = 0
    """All actions applied in self-play, forced ones included (decisions)."""
    recorded: int = 0
    """Decisions with a choice, recorded for training (decisions)."""
    episodes: int = 0
    """Deals finished (deals)."""
    side0_points: list = field(default_factory=list)
    """Per finished deal: side 0's deal score minus side 1's (deal points)."""
    seconds: float = 0.0
    """Wall time of the call (seconds)."""


def choose_greedy(q: list, legal: tuple) -> int:
    """The action of ``legal`` with the highest value in ``q`` (same order; ties to the first)."""
    best = 0
    for i in range(1, len(q)):
        if q[i] > q[best]:
            best = i
    return legal[best]


class SelfPlay:
    """Generates self-play decisions with a network (see the module docstring).

    Args:
        num_players: 3 or 4.
        model: the current :class:`~twilight_env.agents.nn.network.QNetwork` (read, never trained here).
        rng: ``numpy.random.Generator`` for deals, exploration and the pool.
        num_games: deals played side by side (deals).
        epsilon: probability of a uniformly random legal action (0..1).
        pool_prob: probability that a new deal is played against a pool snapshot (0..1).
        pool_size: snapshots kept (FIFO).
        snapshot_every: decisions between snapshots added to the pool (decisions).
        device: torch device of ``model``.
    """

    def __init__(self, num_players: int, model, rng: np.random.Generator, num_games: int = 128,
                 epsilon: float = 0.05, pool_prob: float = 0.2, pool_size: int = 8,
                 snapshot_every: int = 200_000, device="cpu"):
        self.num_players = num_players
        self.model = model
        self.rng = rng
        self.num_games = num_games
        self.epsilon = epsilon
        self.pool_prob = pool_prob
        self.pool_size = pool_size
        self.snapshot_every = snapshot_every
        self.device = torch.device(device)
        self.pool: list = []
        self.since_snapshot = 0
        self.games = [self._new_game() for _ in range(num_games)]

    def _new_game(self):
        rng = self.rng
        leader = int(rng.integers(4)) if self.num_players == 4 else 0
        st = State(random_hands(rng), leader, self.num_players)
        pool_side, pool_net = -1, -1
        if self.pool and rng.random() < self.pool_prob:
            pool_side = int(rng.integers(2))
            pool_net = int(rng.integers(len(self.pool)))
        return [st, [], pool_side, pool_net]

    def add_snapshot(self) -> None:
        """Put a frozen copy of the current network into the opponent pool."""
        snap = copy.deepcopy(self.model).eval()
        for p in snap.parameters():
            p.requires_grad_(False)
        self.pool.append(snap)
        if len(self.pool) > self.pool_size:
            self.pool.pop(0)

    def collect(self, min_decisions: int) -> tuple[Batch, CollectStats]:
        """Play until at least ``min_decisions`` decisions (forced ones included) are applied.

        Deals in progress carry over to the next call; only finished deals yield samples.
        """
        import time
        t0 = time.perf_counter()
        stats = CollectStats()
        out_rows, out_roles, out_acts, out_targets = [], [], [], []
        rng = self.rng
        npl = self.num_players
        while stats.decisions < min_decisions:
            groups: dict[int, list] = {}
            for g, game in enumerate(self.games):
                st = game[0]
                legal = st.legal_actions()
                if len(legal) == 1:
                    st.apply(legal[0])
                    stats.decisions += 1
                    if st.done:
                        self._finish(g, stats, out_rows, out_roles, out_acts, out_targets)
                    continue
                v = st.deciding_seat
                net = game[3] if game[2] == (v & 1) else -1
                groups.setdefault(net, []).append((g, v, legal, state_row(st, v), role_of(npl, st.acting_seat)))
            for net, items in groups.items():
                model = self.model if net < 0 else self.pool[net]
                qs = score_decisions(model, [it[3] for it in items], [it[4] for it in items],
                                     [it[2] for it in items], self.device)
                for (g, v, legal, row, role), q in zip(items, qs):
                    if net < 0 and rng.random() < self.epsilon:
                        a = legal[int(rng.integers(len(legal)))]
                    else:
                        a = choose_greedy(q, legal)
                    game = self.games[g]
                    if net < 0:
                        game[1].append((row, role, a, v))
                    st = game[0]
                    st.apply(a)
                    stats.decisions += 1
                    if st.done:
                        self._finish(g, stats, out_rows, out_roles, out_acts, out_targets)
        self.since_snapshot += stats.decisions
        if self.pool_prob > 0 and self.since_snapshot >= self.snapshot_every:
            self.since_snapshot = 0
            self.add_snapshot()
        stats.recorded = len(out_targets)
        stats.seconds = time.perf_counter() - t0
        batch = Batch(np.array(out_rows, dtype=np.int64).reshape(-1, NUM_MASKS),
                      np.array(out_roles, dtype=np.int64), np.array(out_acts, dtype=np.int64),
                      np.array(out_targets, dtype=np.float32))
        return batch, stats

    def _finish(self, g, stats, out_rows, out_roles, out_acts, out_targets) -> None:
        st, recs = self.games[g][0], self.games[g][1]
        ret = st.returns()
        for row, role, a, v in recs:
            out_rows.append(row)
            out_roles.append(role)
            out_acts.append(a)
            out_targets.append(ret[v] / 360.0)
        stats.episodes += 1
        stats.side0_points.append(ret[0])
        self.games[g] = self._new_game()


# ---------------------------------------------------------------------------------
# duplicate-deal evaluation
# ---------------------------------------------------------------------------------

@dataclass
class EvalResult:
    """Duplicate-deal result of the network against one opponent.

    Attributes:
        deals: number of deals (each played twice, sides swapped).
        points: mean over deals of the network side's (own − other) deal points,
            averaged over the two seatings (deal points per deal).
        ci95: half-width of the normal 95% interval of ``points`` (deal points).
        win_rate: share of games the network side scored more (ties 0.5), 0..1.
        points_side: mean points when the network plays side 0 and side 1 (3 players:
            side 0 is the solo, side 1 the Sun players).
    """

    deals: int
    points: float
    ci95: float
    win_rate: float
    points_side: tuple


def eval_deals(num_players: int, num_deals: int, seed: int) -> list[tuple]:
    """A fixed list of ``(hands, leader)`` deals drawn from ``seed`` (the same every call).

    Raises:
        ValueError: ``seed`` is a held-out deal set's (``twilight_env.rules.heldout``).
    """
    rng = np.random.default_rng(check_not_heldout(seed, "evaluation seed"))
    out = []
    for _ in range(num_deals):
        hands = random_hands(rng)
        leader = int(rng.integers(4)) if num_players == 4 else 0
        out.append((hands, leader))
    return out


def duplicate_eval(model, num_players: int, opponent, deals: list, seed: int = 0, device="cpu") -> EvalResult:
    """Play each deal twice, network on side 0 then side 1, greedy, against ``opponent``.

    Args:
        model: the :class:`~twilight_env.agents.nn.network.QNetwork` (greedy over legal actions).
        num_players: 3 or 4.
        opponent: an agent spec string (``"heuristic"``, ``"random"``); one agent is built
            per game with :func:`twilight_env.agents.base.make_agent`.
        deals: from :func:`eval_deals`.
        seed: seed of the opponents' ``rng``.

    Returns:
        an :class:`EvalResult`.
    """
    from twilight_env.agents.base import make_agent
    rng = np.random.default_rng(seed)
    games = []
    for hands, leader in deals:
        for side in (0, 1):
            agent = make_agent(opponent)
            if hasattr(agent, "reset"):
                agent.reset()
            games.append((State(hands, leader, num_players), side, agent))
    device = torch.device(device)
    active = list(range(len(games)))
    while active:
        items = []
        still = []
        for g in active:
            st, side, agent = games[g]
            legal = st.legal_actions()
            v = st.deciding_seat
            if len(legal) == 1:
                st.apply(legal[0])
            elif (v & 1) == side:
                items.append((g, legal, state_row(st, v), role_of(num_players, st.acting_seat)))
            else:
                a = agent.act(InfoSet(st, v), legal, rng)
                if a not in legal:
                    raise ValueError(f"opponent {opponent!r} chose illegal action {a!r}; legal: {list(legal)}")
                st.apply(int(a))
            if not st.done:
                still.append(g)
        if items:
            qs = score_decisions(model, [it[2] for it in items], [it[3] for it in items],
                                 [it[1] for it in items], device)
            for (g, legal, _, _), q in zip(items, qs):
                games[g][0].apply(choose_greedy(q, legal))
        active = [g for g in still if not games[g][0].done]
    pts = np.array([games[g][0].returns()[games[g][1]] for g in range(len(games))], dtype=np.float64)
    pairs = pts.reshape(-1, 2).mean(axis=1)
    n = len(pairs)
    ci = 1.96 * pairs.std(ddof=1) / math.sqrt(n) if n > 1 else float("nan")
    win = float(np.mean((pts > 0) + 0.5 * (pts == 0)))
    return EvalResult(n, float(pairs.mean()), float(ci), win,
                      (float(pts[0::2].mean()), float(pts[1::2].mean())))


__all__ = ["Batch", "CollectStats", "SelfPlay", "EvalResult", "eval_deals", "duplicate_eval"]
