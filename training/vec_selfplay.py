"""Self-play on the batch engine: B deals held as arrays, one network pass per step.

:class:`VecSelfPlay` generates the same Deep Monte-Carlo samples as
:class:`~twilight_env.training.selfplay.SelfPlay` (same features, same targets, same epsilon-greedy
policy and opponent pool; see that module's docstring) but steps all its deals with one
:class:`~twilight_env.envs.vector.VectorEngine` call per decision and builds the compact rows
of every deal with whole-batch NumPy operations (:func:`vector_rows`) instead of one
Python call per deal. Finished deals are replaced at once (auto-reset), so every step
applies exactly B actions. ``python -m twilight_env.training.bench`` prints the decisions/s of both
generators side by side; the trainer uses this one unless ``--selfplay-engine scalar``.

Per step: the legal actions of all B deals (``legal_bits``); deals with a single legal
action play it without the network and are not recorded (as in ``SelfPlay``); for the
others, the rows of the deciding seats are scored in one forward pass over every
(decision, legal action) pair, the best action is taken (lowest action id on ties, as
``SelfPlay``), or with probability ``epsilon`` a uniformly random legal one.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import torch

from twilight_env.rules.cards import PURGATORY_MASK
from twilight_env.rules.engine import NEW_MOON
from twilight_env.envs.vector import ALL_CARDS, HALF, HALF_COUNT, HALF_MASK, VectorEngine

from twilight_env.agents.nn.features import NUM_MASKS

from twilight_env.training.selfplay import Batch, CollectStats, SelfPlay

_POW2 = np.int64(1) << np.arange(40, dtype=np.int64)


def vector_rows(eng: VectorEngine, viewer: np.ndarray | None = None) -> np.ndarray:
    """Compact rows (``twilight_env.agents.nn.features`` table) of every deal of a NumPy batch engine.

    Row ``i`` equals ``features.state_row(eng.to_state(i), viewer[i])`` for every deal in
    progress (checked in ``tests/training``); rows of finished deals are meaningless.
    Only what the viewer may know is read: its own hand, the new moon's open hand in 3
    players (R7.1), card-back counts (R2.5) and the public record of plays.

    Args:
        eng: a ``VectorEngine`` with the NumPy backend.
        viewer: ``(B,)`` int64 deciding seats; defaults to ``eng.deciding_seat``.

    Returns:
        ``(B, 25)`` int64 compact rows.

    Raises:
        ValueError: if the engine does not use the NumPy backend.
    """
    if eng.backend != "numpy":
        raise ValueError(f"vector_rows needs the numpy backend, got {eng.backend!r}")
    B = eng.num_envs
    v = eng.deciding_seat if viewer is None else np.asarray(viewer, dtype=np.int64)
    r4 = eng._rows4
    three = eng.num_players == 3
    H = eng.hands
    hf = H.ravel()
    pf = eng.played_for
    hb = eng.held_by
    pff = pf.ravel()
    hbf = hb.ravel()
    out = np.empty((B, NUM_MASKS), dtype=np.int64)
    own = hf.take(r4 + v)
    out[:, 0] = own
    nm = H[:, NEW_MOON] if three else np.zeros(B, dtype=np.int64)
    out[:, 1] = nm
    phase = eng.phase
    place = eng.place
    leader = eng.leader
    chooser = (leader + place) & 3
    acting = np.where(phase == 1, eng.holder, chooser)
    sees_acting = (acting == v) | ((acting == NEW_MOON) & three)   # a hand the viewer sees
    out[:, 2] = hf.take(r4 + acting) * sees_acting
    played = pf[:, 0] | pf[:, 1] | pf[:, 2] | pf[:, 3]
    out[:, 3] = ALL_CARDS & ~played & ~(own | nm)
    for r in range(4):
        s = r4 + ((v + r) & 3)
        out[:, 4 + r] = pff.take(s)
        out[:, 8 + r] = hbf.take(s)
    cards = eng.cards
    filled = np.arange(4)[None, :] < place[:, None]
    out[:, 12:16] = np.where(filled, _POW2[np.maximum(cards, 0)], 0)
    out[:, 16] = eng.pending
    cf = eng.captured.ravel()
    side = v & 1
    out[:, 17] = cf.take(r4 + side) | cf.take(r4 + side + 2)
    out[:, 18] = cf.take(r4 + 1 - side) | cf.take(r4 + 3 - side)
    cnt = (_POW2[HALF_COUNT[H & HALF_MASK]] | _POW2[8 + HALF_COUNT[H >> HALF]]).ravel()
    for r in range(4):
        out[:, 19 + r] = cnt.take(r4 + ((v + r) & 3))
    trick = eng.trick
    moon_viewer = ((v & 1) == 0) == three
    out[:, 23] = (np.where(trick < 7, _POW2[np.minimum(trick, 7)], 0) | _POW2[7 + place]
                  | (phase << 11) | _POW2[12 + ((chooser - v) & 3)] | _POW2[16 + ((acting - v) & 3)]
                  | _POW2[20 + ((leader - v) & 3)] | (np.int64(three) << 24)
                  | (moon_viewer.astype(np.int64) << 25)
                  | ((three & (acting == NEW_MOON)).astype(np.int64) << 26))
    best = eng.best
    some = best >= 0
    lead_bits = (_POW2[4 + ((leader + eng.best_place - v) & 3)] | _POW2[8 + np.maximum(best, 0)]) * some
    out[:, 24] = (_POW2[v] | lead_bits | (((eng.trick_mask & PURGATORY_MASK) != 0).astype(np.int64) << 16)
                  | ((eng.pending != 0).astype(np.int64) << 17))
    return out


@torch.no_grad()
def greedy_actions(model, rows: np.ndarray, roles: np.ndarray, legal_bits: np.ndarray, device) -> np.ndarray:
    """The highest-scoring legal action of each decision, in one forward pass.

    Args:
        model: a :class:`~twilight_env.agents.nn.network.QNetwork`.
        rows: ``(k, 25)`` int64 compact rows; roles: ``(k,)`` int64 heads.
        legal_bits: ``(k,)`` int64 legal actions as 31-bit masks (``VectorEngine.legal_bits``),
            at least one bit set in each.

    Returns:
        ``(k,)`` int64 actions (0..30); ties go to the lowest action id.
    """
    k = len(rows)
    owner, acts = np.nonzero((legal_bits[:, None] >> np.arange(31)) & 1)
    dev = torch.device(device)
    q = model(torch.from_numpy(rows).to(dev), torch.from_numpy(roles).to(dev),
              torch.from_numpy(acts).to(dev), torch.from_numpy(owner).to(dev))
    full = torch.full((k, 31), -torch.inf, device=dev)
    full[torch.from_numpy(owner).to(dev), torch.from_numpy(acts).to(dev)] = q
    return full.argmax(1).cpu().numpy()


class VecSelfPlay:
    """Self-play decisions from the batch engine (see the module docstring).

    Same arguments and :meth:`collect` contract as :class:`~twilight_env.training.selfplay.SelfPlay`:

    Args:
        num_players: 3 or 4.
        model: the current :class:`~twilight_env.agents.nn.network.QNetwork` (read, never trained here).
        rng: ``numpy.random.Generator`` for deals, exploration and the pool.
        num_games: deals held in the batch engine (deals).
        epsilon: probability of a uniformly random legal action (0..1).
        pool_prob: probability that a new deal is played against a pool snapshot (0..1).
        pool_size: snapshots kept (FIFO).
        snapshot_every: decisions between snapshots added to the pool (decisions).
        device: torch device of ``model``.
    """

    def __init__(self, num_players: int, model, rng: np.random.Generator, num_games: int = 1024,
                 epsilon: float = 0.05, pool_prob: float = 0.2, pool_size: int = 8,
                 snapshot_every: int = 200_000, device="cpu"):
        self.num_players = num_players
        self.model = model
        self.rng = rng
        self.num_games = B = int(num_games)
        self.epsilon = epsilon
        self.pool_prob = pool_prob
        self.pool_size = pool_size
        self.snapshot_every = snapshot_every
        self.device = torch.device(device)
        self.pool: list = []
        self.since_snapshot = 0
        self.eng = VectorEngine(B, num_players)
        self.pool_side = np.full(B, -1, dtype=np.int64)
        self.pool_net = np.full(B, -1, dtype=np.int64)
        self.episode = np.zeros(B, dtype=np.int64)
        self._next_episode = 0
        self._ret_base = 0
        self._returns = np.zeros((0,), dtype=np.int64)   # side-0 return per episode id - base
        self._finished = np.zeros((0,), dtype=bool)
        self._records: list[tuple] = []   # (episode, rows, roles, actions, seats) per step
        self._new_deals(np.arange(B))

    def _new_deals(self, idx: np.ndarray) -> None:
        rng = self.rng
        n = idx.size
        leaders = rng.integers(4, size=n) if self.num_players == 4 else 0
        self.eng.reset(idx, rng=rng, leaders=leaders)
        self.pool_side[idx] = -1
        self.pool_net[idx] = -1
        if self.pool:
            use = rng.random(n) < self.pool_prob
            self.pool_side[idx] = np.where(use, rng.integers(2, size=n), -1)
            self.pool_net[idx] = np.where(use, rng.integers(len(self.pool), size=n), -1)
        self.episode[idx] = self._next_episode + np.arange(n)
        self._next_episode += n
        grow = self._next_episode - self._ret_base - self._returns.size
        if grow > 0:
            self._returns = np.concatenate([self._returns, np.zeros(grow, dtype=np.int64)])
            self._finished = np.concatenate([self._finished, np.zeros(grow, dtype=bool)])

    add_snapshot = SelfPlay.add_snapshot
    """Put a frozen copy of the current network into the opponent pool (as ``SelfPlay``)."""

    def collect(self, min_decisions: int) -> tuple[Batch, CollectStats]:
        """Play until at least ``min_decisions`` decisions (forced ones included) are applied.

        Deals in progress carry over to the next call; only finished deals yield samples.
        """
        t0 = time.perf_counter()
        stats = CollectStats()
        eng, rng, B = self.eng, self.rng, self.num_games
        three = self.num_players == 3
        while stats.decisions < min_decisions:
            bits = eng.legal_bits()
            n = (HALF_COUNT[bits & HALF_MASK] + HALF_COUNT[(bits >> HALF) & HALF_MASK]
                 + HALF_COUNT[bits >> (2 * HALF)])
            rand = eng.random_actions(rng, bits)
            actions = rand.copy()
            choice = n > 1
            v = eng.deciding_seat
            mine = choice & (self.pool_side != (v & 1))
            idx = np.flatnonzero(choice)
            if idx.size:
                rows = vector_rows(eng, v)[idx]
                roles = (eng.acting_seat[idx] if three else np.zeros(idx.size, dtype=np.int64))
                nets = np.where(mine[idx], -1, self.pool_net[idx])   # -1: the current network
                for net in np.unique(nets):
                    sel = nets == net
                    model = self.model if net < 0 else self.pool[int(net)]
                    actions[idx[sel]] = greedy_actions(model, rows[sel], roles[sel], bits[idx[sel]], self.device)
                explore = rng.random(idx.size) < self.epsilon
                take_rand = explore & mine[idx]
                actions[idx[take_rand]] = rand[idx[take_rand]]
                rec = mine[idx]
                if rec.any():
                    self._records.append((self.episode[idx[rec]], rows[rec], roles[rec],
                                          actions[idx[rec]], v[idx[rec]]))
            eng.apply(actions)
            stats.decisions += B
            done = eng.done
            if done.any():
                fin = np.flatnonzero(done)
                ret0 = eng.returns()[fin, 0]
                pos = self.episode[fin] - self._ret_base
                self._returns[pos] = ret0
                self._finished[pos] = True
                stats.episodes += fin.size
                stats.side0_points.extend(ret0.tolist())
                self._new_deals(fin)
        self.since_snapshot += stats.decisions
        if self.pool_prob > 0 and self.since_snapshot >= self.snapshot_every:
            self.since_snapshot = 0
            self.add_snapshot()
        batch = self._flush()
        stats.recorded = len(batch)
        stats.seconds = time.perf_counter() - t0
        return batch, stats

    STATE_KIND = "twilight-vec-selfplay"

    def state_dict(self) -> dict:
        """Everything this generator needs to go on with the same deals after a restart:
        the batch engine's arrays, the deals' episode bookkeeping, the records of deals in
        progress and the opponent pool's weights, as tensors, lists and ints only (so a
        checkpoint holding it loads with ``torch.load(..., weights_only=True)``). The
        generator's ``rng`` is the caller's to save (the trainer keeps it with its own)."""
        def t(a):
            return torch.from_numpy(np.array(a, copy=True))
        return {
            "kind": self.STATE_KIND, "num_games": self.num_games, "num_players": self.num_players,
            "engine": {k: t(v) for k, v in vars(self.eng).items() if isinstance(v, np.ndarray)},
            "pool_side": t(self.pool_side), "pool_net": t(self.pool_net), "episode": t(self.episode),
            "next_episode": int(self._next_episode), "ret_base": int(self._ret_base),
            "returns": t(self._returns), "finished": t(self._finished),
            "records": [[t(x) for x in rec] for rec in self._records],
            "since_snapshot": int(self.since_snapshot),
            "pool": [{k: v.detach().cpu().clone() for k, v in m.state_dict().items()} for m in self.pool],
        }

    def load_state_dict(self, state: dict) -> None:
        """Continue from :meth:`state_dict` (the same number of deals and players).

        Raises:
            ValueError: a state of another kind, size or shape (naming what differs).
        """
        if not isinstance(state, dict) or state.get("kind") != self.STATE_KIND:
            raise ValueError("the self-play state is not a batch-engine generator's")
        for key, mine in (("num_games", self.num_games), ("num_players", self.num_players)):
            if state.get(key) != mine:
                raise ValueError(f"the self-play state holds {key}={state.get(key)!r}, this generator {mine!r}")
        for k, v in state["engine"].items():
            cur = getattr(self.eng, k, None)
            if not isinstance(cur, np.ndarray) or cur.shape != tuple(v.shape) or cur.dtype != v.numpy().dtype:
                raise ValueError(f"the self-play state's engine array {k!r} does not fit this batch engine")
        for k, v in state["engine"].items():
            setattr(self.eng, k, v.numpy().copy())
        self.pool_side = state["pool_side"].numpy().copy()
        self.pool_net = state["pool_net"].numpy().copy()
        self.episode = state["episode"].numpy().copy()
        self._next_episode = int(state["next_episode"])
        self._ret_base = int(state["ret_base"])
        self._returns = state["returns"].numpy().copy()
        self._finished = state["finished"].numpy().copy()
        self._records = [tuple(x.numpy().copy() for x in rec) for rec in state["records"]]
        self.since_snapshot = int(state["since_snapshot"])
        self.pool = []
        for weights in state["pool"]:
            snap = copy.deepcopy(self.model).eval()
            snap.load_state_dict(weights)
            for p in snap.parameters():
                p.requires_grad_(False)
            self.pool.append(snap)

    def _flush(self) -> Batch:
        """Samples of the records whose deals are finished; the others are kept."""
        if not self._records:
            return Batch(np.zeros((0, NUM_MASKS), np.int64), np.zeros(0, np.int64),
                         np.zeros(0, np.int64), np.zeros(0, np.float32))
        ep, rows, roles, acts, seats = (np.concatenate(x) for x in zip(*self._records))
        pos = ep - self._ret_base
        fin = self._finished[pos]
        keep = ~fin
        self._records = [(ep[keep], rows[keep], roles[keep], acts[keep], seats[keep])] if keep.any() else []
        ret0 = self._returns[pos[fin]]
        sign = 1 - 2 * (seats[fin] & 1)          # side 1 seats get the negated side-0 return
        targets = (ret0 * sign).astype(np.float32) / 360.0
        # drop bookkeeping of episodes no record or deal refers to any more
        low = int(self.episode.min())
        if keep.any():
            low = min(low, int(ep[keep].min()))
        cut = low - self._ret_base
        if cut > 0:
            self._returns = self._returns[cut:]
            self._finished = self._finished[cut:]
            self._ret_base = low
        return Batch(rows[fin], roles[fin], acts[fin], targets)


__all__ = ["VecSelfPlay", "vector_rows", "greedy_actions"]
