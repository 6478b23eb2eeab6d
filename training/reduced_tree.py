"""The whole game of one reduced deck as NumPy arrays: the tree and its two models of the players.

The reduced decks (``Config.tricks`` 1..6, :data:`twilight_env.rules.cards.KEEP_ORDER`) are
small enough to write down the whole game: every deal, every first leader and every line of
play, as played by the engine (:class:`~twilight_env.rules.engine.ReducedState`).
:func:`build_tree` builds that tree once (:class:`GameTree`); :func:`make_model` reads the
players on it (:class:`Model`) in one of two ways (R2.1, R7):

- **seats** (``model="seats"``): each OpenSpiel player decides on its own information (its
  hand, the open hand in 3 players, the card backs, every play, R2.5, R7.1). This is the
  game of ``python_twilight(players=N,tricks=T)``.
- **teams** (``model="teams"``): each side is one player that knows both of its members'
  hands (the team sharing information, with perfect recall of both); a two-player zero-sum game.

Utilities are the Moon side's deal score minus the Sun side's (deal points, R5) for Moon
players, the negative for Sun players. The trees are built in Python: 2 tricks in 3 players
is 9,651,420 nodes (236 s to build with both models on a loaded 2-core machine); 2 tricks
in 4 players four times that.

The OpenSpiel game's information-state strings list each hand in the order its cards were
dealt, so for 2 tricks and more OpenSpiel splits each of the sets here into one per deal
order (strategically the same game); with 1 trick they are the same sets (tests compare).
"""

from __future__ import annotations

import itertools
from array import array
from dataclasses import dataclass, field

import numpy as np

from twilight_env.rules.cards import deck_mask, ids_of
from twilight_env.rules.engine import NEW_MOON, ReducedState

PLAYER_OF_SEAT = {4: (0, 1, 2, 3), 3: (0, 1, 0, 2)}
"""OpenSpiel player deciding at each seat (3 players: the solo decides for the new moon, R7.3)."""
SEEN = {4: ((0,), (1,), (2,), (3,)), 3: ((0, 2), (1, 2), (3, 2))}
"""Seats whose hands each OpenSpiel player sees (3 players: the open new moon, R7.1)."""
MOON_PLAYER = {4: (False, True, False, True), 3: (True, False, False)}
"""Which OpenSpiel players are on the Moon side (4 players: seats 1, 3; 3 players: the solo)."""
TEAM_SEATS = ((1, 3), (0, 2))
"""Seats of team-model player 0 (the Moon side, R2.1; 3 players: solo 0 and new moon 2 are
seats 0, 2, see :func:`team_seats`) and player 1 (the Sun side)."""


def team_seats(num_players: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Seats of the Moon team (player 0 of the teams model) and the Sun team (player 1)."""
    return ((1, 3), (0, 2)) if num_players == 4 else ((0, 2), (1, 3))


def all_deals(tricks: int):
    """Every deal of the reduced deck: 4 hand masks by seat, ``tricks`` cards each (R2.3)."""
    ids = ids_of(deck_mask(tricks))
    for h0 in itertools.combinations(ids, tricks):
        r1 = [c for c in ids if c not in h0]
        for h1 in itertools.combinations(r1, tricks):
            r2 = [c for c in r1 if c not in h1]
            for h2 in itertools.combinations(r2, tricks):
                h3 = [c for c in r2 if c not in h2]
                yield tuple(sum(1 << c for c in h) for h in (h0, h1, h2, h3))


@dataclass
class GameTree:
    """The whole game of one reduced deck, nodes ordered by depth (player actions so far).

    Arrays over nodes (``N`` of them; roots first: one per deal and first leader, chance
    probability ``root_prob`` each):

    | array | dtype | meaning |
    |---|---|---|
    | ``parent`` | int32 | parent node, -1 for a root |
    | ``pos`` | int8 | index of the action from the parent in its sorted legal actions |
    | ``action`` | int8 | that action (0..30), -1 for a root |
    | ``seat`` | int8 | deciding seat (R7.3: 0 for the new moon in 3 players), -1 at the end |
    | ``nact`` | int8 | number of legal actions (0 at the end) |
    | ``root`` | int32 | the root (deal and leader) of the node |
    | ``pub`` | int32 | id of the public action sequence (every play and request is public) |
    | ``moon_pts`` | int16 | at the end: Moon side's deal score - Sun side's (R5), else 0 |
    | ``depth`` | int16 | player actions from the root |

    ``hands`` (roots, 4) int64: the deal's hand masks; ``leaders`` (roots,) int8.
    """

    tricks: int
    num_players: int
    root_prob: float
    hands: np.ndarray
    leaders: np.ndarray
    parent: np.ndarray
    pos: np.ndarray
    action: np.ndarray
    seat: np.ndarray
    nact: np.ndarray
    root: np.ndarray
    pub: np.ndarray
    moon_pts: np.ndarray
    depth: np.ndarray
    levels: list = field(default_factory=list)

    @property
    def num_nodes(self) -> int:
        return len(self.parent)

    @property
    def num_terminals(self) -> int:
        return int((self.seat < 0).sum())


def build_tree(tricks: int, num_players: int, leaders: tuple[int, ...] | None = None) -> GameTree:
    """Enumerate every deal, first leader and line of play with the engine.

    Args:
        tricks: 1..6 (a reduced deck; 3 and more do not fit in memory here).
        num_players: 4 or 3.
        leaders: first leaders to include (4 players; default all four, each with
            probability 1/4, R2.4); 3 players: the solo leads (R7.2).

    Returns:
        the :class:`GameTree`.

    Raises:
        ValueError: on a bad ``tricks``, ``num_players`` or leader.
    """
    if num_players not in (3, 4):
        raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
    deck_mask(tricks)  # checks tricks
    if leaders is None:
        leaders = (0, 1, 2, 3) if num_players == 4 else (0,)
    if num_players == 3 and tuple(leaders) != (0,):
        raise ValueError("in 3 players the solo (seat 0) leads the first trick (R7.2); leaders must be (0,)")
    if not leaders or any(not 0 <= x < 4 for x in leaders):
        raise ValueError(f"leaders must be seats 0..3, got {leaders!r}")
    parent, pos, act, seat, nact, root, pub, pts, depth = (array("i") for _ in range(9))
    pubs: dict[tuple[int, int], int] = {}
    hands_out, leaders_out = [], []
    r = 0
    for hands in all_deals(tricks):
        for lead in leaders:
            hands_out.append(hands)
            leaders_out.append(lead)
            _expand(ReducedState(hands, lead, num_players), r, pubs,
                    (parent, pos, act, seat, nact, root, pub, pts, depth))
            r += 1
    d = np.frombuffer(depth, dtype=np.int32)
    order = np.argsort(d, kind="stable")
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    par = np.frombuffer(parent, dtype=np.int32)[order]
    par = np.where(par >= 0, inv[np.maximum(par, 0)], -1).astype(np.int32)
    dd = d[order].astype(np.int16)
    tree = GameTree(
        tricks=tricks, num_players=num_players, root_prob=1.0 / r,
        hands=np.array(hands_out, dtype=np.int64), leaders=np.array(leaders_out, dtype=np.int8),
        parent=par, pos=np.frombuffer(pos, dtype=np.int32)[order].astype(np.int8),
        action=np.frombuffer(act, dtype=np.int32)[order].astype(np.int8),
        seat=np.frombuffer(seat, dtype=np.int32)[order].astype(np.int8),
        nact=np.frombuffer(nact, dtype=np.int32)[order].astype(np.int8),
        root=np.frombuffer(root, dtype=np.int32)[order].copy(),
        pub=np.frombuffer(pub, dtype=np.int32)[order].copy(),
        moon_pts=np.frombuffer(pts, dtype=np.int32)[order].astype(np.int16), depth=dd)
    bounds = np.searchsorted(dd, np.arange(int(dd.max()) + 2))
    tree.levels = [(int(bounds[i]), int(bounds[i + 1])) for i in range(len(bounds) - 1)]
    return tree


def _expand(state: ReducedState, r: int, pubs: dict, out) -> None:
    """Append the nodes of one deal's tree (depth first) to the ``out`` arrays."""
    parent, pos, act, seat, nact, root, pub, pts, depth = out
    moon_side = 1 if state.num_players == 4 else 0  # 4 players: seats 1, 3 (side 1); 3 players: side 0
    stack = [(state, -1, -1, -1, 0, 0)]
    while stack:
        st, par, p, a, pb, dp = stack.pop()
        i = len(parent)
        parent.append(par)
        pos.append(p)
        act.append(a)
        root.append(r)
        pub.append(pb)
        depth.append(dp)
        if st.done:
            seat.append(-1)
            nact.append(0)
            s = st.side_scores()
            pts.append(s[moon_side] - s[1 - moon_side])
            continue
        legal = st.legal_actions()
        seat.append(st.deciding_seat)
        nact.append(len(legal))
        pts.append(0)
        for k, x in enumerate(legal):
            child = st.clone()
            child.apply(x)
            key = (pb, x)
            q = pubs.get(key)
            if q is None:
                q = pubs[key] = len(pubs) + 1
            stack.append((child, i, k, x, q, dp + 1))


@dataclass
class Model:
    """One reading of the players on a :class:`GameTree`: who decides where, on what
    information, and for which utility.

    Attributes:
        name: ``"seats"`` or ``"teams"``.
        num_players: players of the model (seats: the OpenSpiel players; teams: 2, Moon 0 and Sun 1).
        player: (N,) int8, the deciding player at each node, -1 at the end.
        iset: (N,) int32, the information set of the deciding player, -1 at the end.
        iset_offset: (I + 1,) int64, first slot of each information set's actions.
        slot: (N,) int64, for a non-root node, the slot (information set, action) of the
            action that led to it; -1 for roots.
        moon: (P,) bool, the players on the Moon side.
        iset_player: (I,) int8, the player of each information set.
        views: the views ``(player, seen hands as dealt, every seat's Sun and Moon counts,
            leader)``; an information set is a view and a public sequence.
        slot_levels: per depth ``d``, the range of slots of the sets whose nodes are at
            depth ``d`` (sets are numbered level by level).
    """

    name: str
    num_players: int
    player: np.ndarray
    iset: np.ndarray
    iset_offset: np.ndarray
    slot: np.ndarray
    moon: np.ndarray
    iset_player: np.ndarray
    views: list
    slot_levels: list

    @property
    def num_isets(self) -> int:
        return len(self.iset_offset) - 1

    @property
    def num_slots(self) -> int:
        return int(self.iset_offset[-1])


def _model_players(n: int, name: str) -> tuple[int, np.ndarray, list, np.ndarray]:
    """``(players, seat_player, seen, moon)`` of the ``"seats"`` or ``"teams"`` model of an
    ``n``-player game: the model's player count, each seat's player (int8, 4), the seats
    each player sees, and which players are on the Moon side; ValueError on another name."""
    if name == "seats":
        players = n
        seat_player = np.array(PLAYER_OF_SEAT[n], dtype=np.int8)
        seen = [SEEN[n][p] for p in range(n)]
        moon = np.array(MOON_PLAYER[n])
    elif name == "teams":
        players = 2
        moon_seats, _ = team_seats(n)
        seat_player = np.array([0 if s in moon_seats else 1 for s in range(4)], dtype=np.int8)
        seen = [tuple(sorted(set(team_seats(n)[t]) | ({NEW_MOON} if n == 3 else set()))) for t in (0, 1)]
        moon = np.array([True, False])
    else:
        raise ValueError(f"model must be 'seats' or 'teams', got {name!r}")
    return players, seat_player, seen, moon


def make_model(tree: GameTree, name: str) -> Model:
    """The ``"seats"`` or ``"teams"`` model of a tree (module docstring).

    Raises:
        ValueError: on another name, or when two nodes of one information set have
            different numbers of legal actions (the tree would not be a game of
            imperfect information over these sets).
    """
    players, seat_player, seen, moon = _model_players(tree.num_players, name)
    # a view per (root, player): the seen hands as dealt, every hand's counts, the leader
    views: dict = {}
    view_of = np.empty((len(tree.leaders), players), dtype=np.int64)
    sun = (1 << 14) - 1
    for r, (hands, lead) in enumerate(zip(tree.hands.tolist(), tree.leaders.tolist())):
        counts = tuple((bin(h & sun).count("1"), bin(h >> 14).count("1")) for h in hands)
        for p in range(players):
            key = (p, tuple(hands[s] for s in seen[p]), counts, lead)
            v = views.get(key)
            if v is None:
                v = views[key] = len(views)
            view_of[r, p] = v
    dec = tree.seat >= 0
    player = np.full(tree.num_nodes, -1, dtype=np.int8)
    player[dec] = seat_player[tree.seat[dec]]
    key = np.full(tree.num_nodes, -1, dtype=np.int64)
    npub = int(tree.pub.max()) + 1
    key[dec] = view_of[tree.root[dec], player[dec]] * npub + tree.pub[dec]
    if int(key.max()) >= (1 << 62) // 64:
        raise ValueError("too many views and public sequences to number the information sets")
    key[dec] += tree.depth[dec].astype(np.int64) << 56  # sets numbered level by level
    uniq, inv = np.unique(key[dec], return_inverse=True)
    iset = np.full(tree.num_nodes, -1, dtype=np.int32)
    iset[dec] = inv
    nact = np.zeros(len(uniq), dtype=np.int64)
    nact[inv] = tree.nact[dec]
    check = np.zeros(len(uniq), dtype=np.int64)
    np.maximum.at(check, inv, tree.nact[dec].astype(np.int64))
    low = np.full(len(uniq), 99, dtype=np.int64)
    np.minimum.at(low, inv, tree.nact[dec].astype(np.int64))
    if (check != low).any():
        raise ValueError("an information set has nodes with different numbers of legal actions")
    offset = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(check, out=offset[1:])
    slot = np.full(tree.num_nodes, -1, dtype=np.int64)
    nr = tree.parent >= 0
    slot[nr] = offset[iset[tree.parent[nr]]] + tree.pos[nr]
    iset_player = np.zeros(len(uniq), dtype=np.int8)
    iset_player[inv] = player[dec]
    set_depth = (uniq >> 56).astype(np.int64)
    first = np.searchsorted(set_depth, np.arange(len(tree.levels) + 1))
    slot_levels = [(int(offset[first[d]]), int(offset[first[d + 1]])) for d in range(len(tree.levels))]
    return Model(name=name, num_players=players, player=player, iset=iset, iset_offset=offset, slot=slot,
                 moon=moon, iset_player=iset_player, views=list(views), slot_levels=slot_levels)


def utilities(tree: GameTree, model: Model) -> np.ndarray:
    """(P, N) float64: each player's utility at the end nodes, in deal points (own side - other)."""
    sign = np.where(model.moon, 1.0, -1.0)
    return sign[:, None] * tree.moon_pts.astype(np.float64)[None, :]


def uniform_policy(model: Model) -> np.ndarray:
    """(S,) float64: every information set plays its actions with equal probability."""
    sizes = np.diff(model.iset_offset)
    return np.repeat(1.0 / sizes, sizes)
