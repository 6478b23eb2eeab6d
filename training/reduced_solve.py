"""Reduced-deck games solved exactly: game trees, CFR, sequence-form LP, best responses.

The reduced decks (``Config.tricks`` 1..6, :data:`twilight_env.rules.cards.KEEP_ORDER`) are
small enough to write down the whole game: every deal, every first leader and every line of
play, as played by the engine (:class:`~twilight_env.rules.engine.ReducedState`). This module
builds that tree once as NumPy arrays and solves it.

Two ways to read the sides (R2.1, R7):

- **seats** (``model="seats"``): each OpenSpiel player decides on its own information (its
  hand, the open hand in 3 players, the card backs, every play, R2.5, R7.1). This is the
  game of ``python_twilight(players=N,tricks=T)``; the sides are teams of players who do not
  share what they hold. The solution concept for such teams is the team-maxmin equilibrium
  with correlation (TMECor); it is not computed here. CFR (OpenSpiel's vanilla CFR or CFR+,
  with alternating updates, written here over the arrays) gives a strategy per seat and its
  NashConv (the sum over players of what a best response gains, OpenSpiel's definition).
- **teams** (``model="teams"``): each side is one player that knows both of its members'
  hands (the team sharing information, with perfect recall of both). This is a two-player
  zero-sum game; :func:`solve_lp` solves it exactly (sequence-form linear program, HiGHS).

Bounds on the value of the seats game for the teams (Moon - Sun, deal points): a side that
shares information can do no worse, so with ``x`` the Moon seats' and ``y`` the Sun seats'
strategies of the seats game, the Moon side's best response with shared information against
``y`` is an upper bound, and the Sun side's against ``x`` a lower bound, on what the Moon
side can guarantee under TMECor. In 3 players the Moon side is one player (the solo, R7.3),
so the teams value itself is a lower bound.

Units: values are Moon side's deal score minus Sun side's, in deal points (R5), averaged over
the uniform deal (R2.3) and, in 4 players, the uniform first leader; NashConv is in deal
points too (OpenSpiel's returns are these divided by 360).

Usage::

    python -m twilight_env.training.reduced_solve --sizes 1:3 1:4 2:3 --iterations 1000 --seconds 480 \
        --count-only 2:4 --out results/reduced_decks

writes ``reduced_decks.json`` and ``README.md`` (the table of sizes, values and NashConv).
Sizes are ``TRICKS:PLAYERS``; ``--count-only`` sizes are counted (deals, lines of play,
information sets) without building their trees. The trees are built in Python: 2 tricks in
3 players is 9,651,420 nodes (236 s to build with both models on a loaded 2-core machine,
2.8 GB measured while solving); 2 tricks in 4 players four times that.

The OpenSpiel game's information-state strings list each hand in the order its cards were
dealt, so for 2 tricks and more OpenSpiel splits each of the sets here into one per deal
order (strategically the same game); with 1 trick they are the same sets (tests compare).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from array import array
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from twilight_env.rules.cards import CARDS, deck_mask, ids_of
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


def count_deals(tricks: int) -> int:
    """Number of deals: ``(4t)! / (t!)^4``."""
    return math.factorial(4 * tricks) // math.factorial(tricks) ** 4


def count_terminal_histories(tricks: int, num_players: int) -> int:
    """Number of complete lines of play over all deals and first leaders.

    In every deal, the chooser of each place can end up with any card of its cult not yet
    played, each by exactly one sequence of actions (its own card, or a request and the
    holder's card, R3.2), so a deal has ``prod over places of the cards of the chooser's
    cult left`` lines whatever the hands. Seats alternate cults (R2.1, R7.1), so a trick
    that starts with ``c`` cards of each cult has ``(c (c - 1))^2`` lines.
    """
    lines = 1
    for trick in range(tricks):
        m = 2 * (tricks - trick)
        lines *= (m * (m - 1)) ** 2
    return count_deals(tricks) * (4 if num_players == 4 else 1) * lines


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


def _normalise(weights: np.ndarray, model: Model) -> np.ndarray:
    """Per information set: ``weights`` normalised, uniform where they sum to 0."""
    sizes = np.diff(model.iset_offset)
    owner = np.repeat(np.arange(model.num_isets), sizes)
    total = np.bincount(owner, weights=weights, minlength=model.num_isets)
    tot = total[owner]
    return np.where(tot > 0, weights / np.where(tot > 0, tot, 1.0), 1.0 / sizes[owner])


def reach(tree: GameTree, model: Model, policy: np.ndarray) -> np.ndarray:
    """(P, N) float64: each player's own probability of its actions on the way to each node."""
    r = np.ones((model.num_players, tree.num_nodes))
    for lo, hi in tree.levels[1:]:
        par = tree.parent[lo:hi]
        r[:, lo:hi] = r[:, par]
        who = model.player[par]
        r[who, np.arange(lo, hi)] *= policy[model.slot[lo:hi]]
    return r


def values(tree: GameTree, model: Model, policy: np.ndarray, util: np.ndarray, player: int | None = None):
    """Expected utility from each node under ``policy``: (P, N) float64, or (N,) for one ``player``."""
    if player is not None:
        return _values_row(tree, model, policy, util[player])
    return np.stack([_values_row(tree, model, policy, util[p]) for p in range(model.num_players)])


def _values_row(tree: GameTree, model: Model, policy: np.ndarray, util_row: np.ndarray) -> np.ndarray:
    v = np.where(tree.seat < 0, util_row, 0.0)
    edge = policy[np.maximum(model.slot, 0)]
    _back_up(tree, v, edge)
    return v


def _back_up(tree: GameTree, v: np.ndarray, edge: np.ndarray) -> None:
    """``v`` of every decision node += sum over its children of ``edge`` x child's ``v``, level by level."""
    for d in range(len(tree.levels) - 1, 0, -1):
        lo, hi = tree.levels[d]
        plo, phi = tree.levels[d - 1]
        v[plo:phi] += np.bincount(tree.parent[lo:hi] - plo, weights=edge[lo:hi] * v[lo:hi], minlength=phi - plo)


def root_value(tree: GameTree, v: np.ndarray) -> np.ndarray:
    """(P,) expected utility at the root chance node (uniform over roots)."""
    lo, hi = tree.levels[0]
    return v[..., lo:hi].sum(axis=-1) * tree.root_prob


def _argmax_sets(sets: np.ndarray, q: np.ndarray, offset: np.ndarray, out: np.ndarray, base: int = 0) -> None:
    """For each information set in ``sets``: ``out`` 1 at its first action of largest ``q``
    (``q[k]`` for slot ``base + k``), 0 at its other actions."""
    if len(sets) == 0:
        return
    sizes = offset[sets + 1] - offset[sets]
    starts = np.zeros(len(sets), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    idx = np.repeat(offset[sets] - starts, sizes) + np.arange(int(sizes.sum()))
    vals = q[idx - base]
    seg = np.repeat(np.arange(len(sets)), sizes)
    top = np.maximum.reduceat(vals, starts)
    cand = np.flatnonzero(vals >= top[seg])
    _, first = np.unique(seg[cand], return_index=True)
    out[idx] = 0.0
    out[idx[cand[first]]] = 1.0


def best_response_value(tree: GameTree, model: Model, policy: np.ndarray, util: np.ndarray, player: int) -> float:
    """Value (at the root, deal points) of ``player``'s best response to the others' ``policy``."""
    return best_response(tree, policy[np.maximum(model.slot, 0)], model.player == player, model, util[player])


def best_response(tree: GameTree, edge_prob: np.ndarray, responder: np.ndarray, resp_model: Model,
                  util_row: np.ndarray) -> float:
    """Value of a best response, the other decisions fixed.

    Bottom-up over the levels: at each of the responder's information sets (of
    ``resp_model``), the action with the largest sum over the set's nodes of (chance and the
    others' reach) x value; every node of a set lies on one level, since a set's public
    sequence fixes its depth. The responder's sets must have perfect recall (both models'
    do: a team that shares information remembers both members' hands).

    Args:
        tree: the game.
        edge_prob: (N,) probability of the action into each node where someone else decides
            (ignored where the responder decides).
        responder: (N,) bool, the decision nodes of the responder.
        resp_model: the model whose ``iset`` and ``slot`` are the responder's sets and actions.
        util_row: (N,) the responder's utility at the end nodes.

    Returns:
        the best response's value (deal points).
    """
    n = tree.num_nodes
    others = np.full(n, tree.root_prob)
    for lo, hi in tree.levels[1:]:
        par = tree.parent[lo:hi]
        others[lo:hi] = others[par] * np.where(responder[par], 1.0, edge_prob[lo:hi])
    v = np.where(tree.seat < 0, util_row, 0.0)
    br = np.zeros(resp_model.num_slots)
    for d in range(len(tree.levels) - 1, 0, -1):
        lo, hi = tree.levels[d]
        plo, phi = tree.levels[d - 1]
        par = tree.parent[lo:hi]
        mine = responder[par]
        slots = resp_model.slot[lo:hi]
        slo, shi = resp_model.slot_levels[d - 1]
        q = np.bincount(slots[mine] - slo, weights=others[par[mine]] * v[lo:hi][mine], minlength=shi - slo)
        _argmax_sets(np.unique(resp_model.iset[par[mine]]), q, resp_model.iset_offset, br, slo)
        w = np.where(mine, br[np.maximum(slots, 0)], edge_prob[lo:hi])
        v[plo:phi] += np.bincount(par - plo, weights=w * v[lo:hi], minlength=phi - plo)
    lo, hi = tree.levels[0]
    return float(v[lo:hi].sum() * tree.root_prob)


def team_bounds(tree: GameTree, seats: Model, teams: Model, policy: np.ndarray) -> tuple[float, float]:
    """Bounds (Moon - Sun, deal points) from a seats-model ``policy``: the Sun side's best
    response with shared information to the Moon seats' strategies (lower), and the Moon
    side's to the Sun seats' (upper). Module docstring."""
    edge = policy[np.maximum(seats.slot, 0)]
    util = utilities(tree, teams)
    lower = -best_response(tree, edge, teams.player == 1, teams, util[1])
    upper = best_response(tree, edge, teams.player == 0, teams, util[0])
    return lower, upper


def nash_conv(tree: GameTree, model: Model, policy: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """NashConv of ``policy`` (OpenSpiel's: sum over players of best response value minus
    the policy's value), in deal points; also the policy's values and the best responses'."""
    util = utilities(tree, model)
    on = np.array([root_value(tree, values(tree, model, policy, util, p)) for p in range(model.num_players)])
    br = np.array([best_response_value(tree, model, policy, util, p) for p in range(model.num_players)])
    return float((br - on).sum()), on, br


class CFR:
    """CFR with alternating updates over a :class:`GameTree`, step for step OpenSpiel's
    ``CFRSolver`` (``plus=False``: regret matching, uniform averaging) or
    ``CFRPlusSolver`` (``plus=True``: regret matching+, averaging weighted by the
    iteration), vectorised by tree level.

    As OpenSpiel does, each player in turn: values under the current policy, regrets of
    its information sets weighted by chance and the others' reach, the average policy
    accumulated at every node of the player's sets where some player's reach is above 0,
    then its current policy by regret matching.
    """

    def __init__(self, tree: GameTree, model: Model, plus: bool = False):
        self.tree, self.model, self.plus = tree, model, plus
        self.util = utilities(tree, model)
        self.regret = np.zeros(model.num_slots)
        self.cum = np.zeros(model.num_slots)
        self.policy = uniform_policy(model)
        self.iteration = 0
        sizes = np.diff(model.iset_offset)
        self._owner = np.repeat(np.arange(model.num_isets), sizes)
        self._slot_player = model.iset_player[self._owner]

    def step(self) -> None:
        """One iteration (every player once, in order)."""
        tree, model = self.tree, self.model
        self.iteration += 1
        nr = tree.parent >= 0
        par = tree.parent[nr]
        slots = model.slot[nr]
        child = np.flatnonzero(nr)
        for p in range(model.num_players):
            r = reach(tree, model, self.policy)
            v = values(tree, model, self.policy, self.util, p)
            mine = model.player[par] == p
            others = np.prod(np.delete(r, p, axis=0), axis=0) * tree.root_prob
            e_par, e_slot, e_child = par[mine], slots[mine], child[mine]
            self.regret += np.bincount(e_slot, weights=others[e_par] * (v[e_child] - v[e_par]),
                                       minlength=model.num_slots)
            live = r[:, e_par].max(axis=0) > 0
            w = r[p, e_par] * self.policy[e_slot] * live * (self.iteration if self.plus else 1.0)
            self.cum += np.bincount(e_slot, weights=w, minlength=model.num_slots)
            if self.plus:
                self.regret = np.maximum(self.regret, 0.0)
            self._match(p)

    def _match(self, p: int) -> None:
        """Regret matching of player ``p``'s sets (uniform where no regret is positive)."""
        pos = np.maximum(self.regret, 0.0)
        new = _normalise(pos, self.model)
        self.policy = np.where(self._slot_player == p, new, self.policy)

    def average_policy(self) -> np.ndarray:
        """(S,) the average policy (uniform at sets never reached)."""
        return _normalise(self.cum, self.model)


def solve_lp(tree: GameTree, model: Model) -> tuple[float, np.ndarray, np.ndarray]:
    """The exact value and an equilibrium of a two-player zero-sum model (``"teams"``).

    Sequence form (Koller, Megiddo and von Stengel 1996): the Moon player's realisation
    plan ``x`` and one dual value per Sun information set; maximise the Moon value subject
    to every Sun sequence's counterfactual constraint. Solved twice (each side as the
    maximiser) with SciPy's HiGHS to get both sides' strategies.

    Returns:
        ``(value, moon_policy, sun_policy)``: the Moon side's value (deal points) and the
        two strategies as one (S,) policy each (entries of the other side's sets uniform).

    Raises:
        ValueError: unless the model has 2 players.
        RuntimeError: when the solver does not report an optimum.
    """
    if model.num_players != 2:
        raise ValueError("solve_lp needs a two-player model (model='teams')")
    util = utilities(tree, model)
    val0, x = _lp_side(tree, model, util, 0)
    val1, y = _lp_side(tree, model, util, 1)
    if abs(val0 + val1) > 1e-6 * max(1.0, abs(val0)):
        raise RuntimeError(f"the two linear programs disagree: {val0} and {-val1}")
    return val0, x, y


def _sequences(tree: GameTree, model: Model, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node, player ``p``'s last sequence on the way to it (slot + 1; 0 = empty
    sequence), and per information set of ``p`` its parent sequence."""
    seq = np.zeros(tree.num_nodes, dtype=np.int64)
    for lo, hi in tree.levels[1:]:
        par = tree.parent[lo:hi]
        own = model.player[par] == p
        seq[lo:hi] = np.where(own, model.slot[lo:hi] + 1, seq[par])
    dec = model.iset >= 0
    parent_seq = np.full(model.num_isets, -1, dtype=np.int64)
    parent_seq[model.iset[dec]] = seq[dec]
    return seq, parent_seq


def _lp_side(tree: GameTree, model: Model, util: np.ndarray, p: int) -> tuple[float, np.ndarray]:
    """Maximise player ``p``'s value; returns it and ``p``'s behaviour policy."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, hstack, vstack

    o = 1 - p
    S = model.num_slots
    seq_p, par_p = _sequences(tree, model, p)
    seq_o, par_o = _sequences(tree, model, o)
    own_sets = np.flatnonzero(model.iset_player == p)
    opp_sets = np.flatnonzero(model.iset_player == o)
    end = np.flatnonzero(tree.seat < 0)
    # payoff: A[seq_p, seq_o] = sum of chance x utility of p
    A = coo_matrix((util[p, end] * tree.root_prob, (seq_p[end], seq_o[end])), shape=(S + 1, S + 1)).tocsr()
    # p's constraints E x = e: x_empty = 1; per own set: sum of its slots - parent = 0
    rows, cols, vals = [0], [0], [1.0]
    for k, i in enumerate(own_sets, start=1):
        a, b = model.iset_offset[i], model.iset_offset[i + 1]
        rows += [k] * (b - a + 1)
        cols += list(range(a + 1, b + 1)) + [par_p[i]]
        vals += [1.0] * (b - a) + [-1.0]
    E = coo_matrix((vals, (rows, cols)), shape=(len(own_sets) + 1, S + 1)).tocsr()
    # opponent's F: same form; q has one entry per opponent set plus the empty sequence
    rows, cols, vals = [0], [0], [1.0]
    for k, i in enumerate(opp_sets, start=1):
        a, b = model.iset_offset[i], model.iset_offset[i + 1]
        rows += [k] * (b - a + 1)
        cols += list(range(a + 1, b + 1)) + [par_o[i]]
        vals += [1.0] * (b - a) + [-1.0]
    F = coo_matrix((vals, (rows, cols)), shape=(len(opp_sets) + 1, S + 1)).tocsr()
    # only the opponent's own sequences (and the empty one) are constraints; drop the others
    opp_cols = np.concatenate([[0], np.flatnonzero(np.isin(np.arange(S), _slots_of(model, opp_sets))) + 1])
    own_cols = np.concatenate([[0], np.flatnonzero(np.isin(np.arange(S), _slots_of(model, own_sets))) + 1])
    A_sub = A[own_cols][:, opp_cols]
    E_sub = E[:, own_cols]
    F_sub = F[:, opp_cols]
    nq = F_sub.shape[0]
    nx = len(own_cols)
    c = np.concatenate([np.zeros(nx), -np.eye(1, nq, 0).ravel()])
    A_ub = hstack([-A_sub.T, F_sub.T]).tocsr()
    A_eq = hstack([E_sub, coo_matrix((E_sub.shape[0], nq))]).tocsr()
    b_eq = np.zeros(E_sub.shape[0])
    b_eq[0] = 1.0
    bounds = [(0, None)] * nx + [(None, None)] * nq
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"the linear program did not solve: {res.message}")
    x = np.zeros(S + 1)
    x[own_cols] = res.x[:nx]
    # realisation plan -> behaviour: x(slot) / x(parent sequence of its set)
    policy = uniform_policy(model)
    for i in own_sets:
        a, b = model.iset_offset[i], model.iset_offset[i + 1]
        tot = x[par_p[i]]
        if tot > 1e-12:
            policy[a:b] = np.maximum(x[a + 1:b + 1], 0.0) / max(x[a + 1:b + 1].sum(), 1e-300)
    return float(-res.fun), policy


def _slots_of(model: Model, sets: np.ndarray) -> np.ndarray:
    sizes = model.iset_offset[sets + 1] - model.iset_offset[sets]
    starts = np.zeros(len(sets), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:]) if len(sets) else None
    return np.repeat(model.iset_offset[sets] - starts, sizes) + np.arange(int(sizes.sum()))


def run_cfr_plus(tree: GameTree, model: Model, iterations: int,
                 seconds: float | None = None) -> tuple[np.ndarray, list[dict], int, float]:
    """CFR+ on ``model`` for ``iterations`` (or until ``seconds`` of solving have passed),
    with NashConv measured after iterations 1, 2, 5, 10, 20, 50, ... and the last (not timed).

    Returns:
        ``(average policy, curve, iterations done, seconds)``; the curve holds
        ``{"iteration", "seconds", "nash_conv"}`` (deal points).
    """
    solver = CFR(tree, model, plus=True)
    marks = {m * 10 ** e for e in range(12) for m in (1, 2, 5)}
    curve: list[dict] = []
    spent = 0.0
    for it in range(1, iterations + 1):
        t0 = time.perf_counter()
        solver.step()
        spent += time.perf_counter() - t0
        last = it == iterations or (seconds is not None and spent >= seconds)
        if it in marks or last:
            nc, _, _ = nash_conv(tree, model, solver.average_policy())
            curve.append({"iteration": it, "seconds": round(spent, 2), "nash_conv": nc})
        if last:
            break
    return solver.average_policy(), curve, solver.iteration, spent


def by_leader(tree: GameTree, model: Model, policy: np.ndarray) -> dict[int, float]:
    """The Moon side's value (deal points) under ``policy`` given each first leader: in 4 players
    the side that leads; the whole game's value is their mean."""
    util = utilities(tree, model)
    moon = int(np.flatnonzero(model.moon)[0])
    v = values(tree, model, policy, util, moon)
    lo, hi = tree.levels[0]
    out = {}
    for lead in sorted(set(tree.leaders.tolist())):
        pick = tree.leaders == lead
        out[lead] = float(v[lo:hi][pick].mean())
    return out


def solve_size(tricks: int, num_players: int, iterations: int, seconds: float | None = None,
               leaders: tuple[int, ...] | None = None, lp_max_slots: int = 200_000) -> dict:
    """Build one reduced game; solve its teams model (exactly by linear program when it has
    at most ``lp_max_slots`` information-set actions, else by CFR+ with the value bracketed by
    the two best responses) and run CFR+ on its seats model.

    Args:
        tricks: 1..6.
        num_players: 4 or 3.
        iterations: CFR+ iterations per model.
        seconds: stop each CFR+ run after this many seconds of solving (None: no limit).
        leaders: 4 players: first leaders to include (default all four).
        lp_max_slots: the largest teams model solved by linear program.

    Returns:
        a dict of sizes, times (seconds), values and NashConv (deal points), as written to
        ``reduced_decks.json``.
    """
    row: dict = {"tricks": tricks, "players": num_players,
                 "deck": [CARDS[c] for c in ids_of(deck_mask(tricks))],
                 "deals": count_deals(tricks)}
    t0 = time.perf_counter()
    tree = build_tree(tricks, num_players, leaders)
    seats, teams = make_model(tree, "seats"), make_model(tree, "teams")
    row.update(first_leaders=sorted(set(tree.leaders.tolist())), histories=tree.num_nodes,
               terminal_histories=tree.num_terminals, infosets_seats=seats.num_isets,
               infosets_teams=teams.num_isets, build_seconds=round(time.perf_counter() - t0, 2))
    util = utilities(tree, teams)
    if teams.num_slots <= lp_max_slots:
        t0 = time.perf_counter()
        value, x, y = solve_lp(tree, teams)
        owner = teams.iset_player[np.repeat(np.arange(teams.num_isets), np.diff(teams.iset_offset))]
        nc, _, _ = nash_conv(tree, teams, np.where(owner == 0, x, y))
        row["teams"] = {"method": "linear program", "value": value, "lower": value, "upper": value,
                        "nash_conv": nc, "seconds": round(time.perf_counter() - t0, 2),
                        "value_by_first_leader": by_leader(tree, teams, np.where(owner == 0, x, y))}
    else:
        avg, curve, done, spent = run_cfr_plus(tree, teams, iterations, seconds)
        upper = best_response_value(tree, teams, avg, util, 0)
        lower = -best_response_value(tree, teams, avg, util, 1)
        row["teams"] = {"method": "CFR+", "iterations": done, "value": 0.5 * (lower + upper), "lower": lower,
                        "upper": upper, "nash_conv": upper - lower, "seconds": round(spent, 2), "curve": curve,
                        "value_by_first_leader": by_leader(tree, teams, avg)}
    avg, curve, done, spent = run_cfr_plus(tree, seats, iterations, seconds)
    nc, on, _ = nash_conv(tree, seats, avg)
    moon = int(np.flatnonzero(seats.moon)[0])
    lower, upper = team_bounds(tree, seats, teams, avg)
    row["seats_cfr_plus"] = {"iterations": done, "seconds": round(spent, 2), "value": float(on[moon]),
                             "nash_conv": nc, "nash_conv_openspiel": nc / 360.0,
                             "team_bounds": {"lower": lower, "upper": upper}, "curve": curve,
                             "value_by_first_leader": by_leader(tree, seats, avg)}
    return row


def size_only(tricks: int, num_players: int, infosets: bool = True) -> dict:
    """The counts of a size whose tree is not built: deals, complete lines of play and (with
    ``infosets``) the information sets of both models (:func:`count_infosets`), with the
    seconds the count took."""
    row = {"tricks": tricks, "players": num_players, "deck": [CARDS[c] for c in ids_of(deck_mask(tricks))],
           "deals": count_deals(tricks), "terminal_histories": count_terminal_histories(tricks, num_players)}
    if infosets:
        t0 = time.perf_counter()
        row["infosets_seats"] = count_infosets(tricks, num_players, "seats")
        row["infosets_teams"] = count_infosets(tricks, num_players, "teams")
        row["count_seconds"] = round(time.perf_counter() - t0, 2)
    return row


def _fmt(x, digits=2):
    return "—" if x is None else f"{x:+.{digits}f}" if isinstance(x, float) else f"{x:,}"


def _teams_cell(t: dict) -> str:
    if not t:
        return "—"
    if t["method"] == "linear program":
        return f"{t['value']:+.3f} (LP)"
    return f"[{t['lower']:+.3f}, {t['upper']:+.3f}] (CFR+, {t['iterations']} it.)"


def report(rows: list[dict], command: str) -> str:
    """The Markdown table of ``reduced_decks.json``."""
    out = ["# Reduced-deck games solved exactly", "",
           f"Written by `{command}`.", "",
           "Values are Moon side's deal score minus Sun side's (deal points, R5), at the uniform deal "
           "(and, in 4 players, uniform first leader). *teams*: each side one player that shares its "
           "members' information (two-player zero-sum, solved exactly by linear program; NashConv of the "
           "LP strategies). *seats*: each OpenSpiel player on its own information, the game of "
           "`python_twilight(players=N,tricks=T)`: CFR+ average strategies, their NashConv (OpenSpiel's "
           "sum over players, in deal points; /360 in OpenSpiel's units), their Moon value and the bounds "
           "from best responses of a side sharing information (lower: the Sun side's against the Moon "
           "seats; upper: the Moon side's against the Sun seats).", "",
           "| tricks | players | deals | histories | terminal histories | infosets (seats) | infosets (teams) "
           "| build s | teams value | teams NashConv | teams s | CFR+ iters | CFR+ s | seats value | "
           "seats NashConv | bounds [lower, upper] |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lp = r.get("teams") or {}
        cf = r.get("seats_cfr_plus") or {}
        b = cf.get("team_bounds") or {}
        bounds = f"[{b['lower']:+.2f}, {b['upper']:+.2f}]" if b else "—"
        out.append("| " + " | ".join([
            str(r["tricks"]), str(r["players"]), _fmt(r["deals"]), _fmt(r.get("histories")),
            _fmt(r["terminal_histories"]), _fmt(r.get("infosets_seats")), _fmt(r.get("infosets_teams")),
            str(r.get("build_seconds", "—")), _teams_cell(lp), _fmt(lp.get("nash_conv"), 6),
            str(lp.get("seconds", "—")), _fmt(cf.get("iterations")), str(cf.get("seconds", "—")),
            _fmt(cf.get("value"), 3), _fmt(cf.get("nash_conv"), 4), bounds]) + " |")
    out += ["", "Decks (`twilight_env.rules.cards.KEEP_ORDER`, both cults):", ""]
    seen = set()
    for r in rows:
        if r["tricks"] not in seen:
            seen.add(r["tricks"])
            out.append(f"- {r['tricks']} trick(s): {' '.join(r['deck'])}")
    curves = [r for r in rows if r.get("seats_cfr_plus")]
    if curves:
        out += ["", "CFR+ NashConv over iterations (seats model, deal points):", ""]
        for r in curves:
            pts = ", ".join(f"{c['iteration']}: {c['nash_conv']:.4f}" for c in r["seats_cfr_plus"]["curve"])
            out.append(f"- {r['tricks']} trick(s), {r['players']} players: {pts}")
    missing = [r for r in rows if "histories" not in r]
    if missing:
        out += ["", "Rows without a tree were not built or solved (too slow to build and solve on this machine); "
                "their deals, complete lines of play (`count_terminal_histories`) and information sets "
                "(`count_infosets`) are counted exactly."]
    return "\n".join(out) + "\n"


def _size(text: str) -> tuple[int, int]:
    """``"2:3"`` -> (2, 3); SystemExit naming the format on anything else."""
    try:
        t, n = (int(x) for x in text.split(":"))
        deck_mask(t)
        if n not in (3, 4) or t > 6:
            raise ValueError
    except ValueError:
        raise SystemExit(f"a size is TRICKS:PLAYERS with tricks 1..6 and players 3 or 4, e.g. 2:3; got {text!r}")
    return t, n


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m twilight_env.training.reduced_solve",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["1:3", "1:4"], metavar="TRICKS:PLAYERS",
                    help="sizes to build and solve, TRICKS:PLAYERS (tricks 1..6, players 3 or 4; default 1:3 1:4)")
    ap.add_argument("--iterations", type=int, default=1000,
                    help="CFR+ iterations per size, at least 1 (default %(default)s)")
    ap.add_argument("--count-only", nargs="*", default=[], metavar="TRICKS:PLAYERS",
                    help="sizes TRICKS:PLAYERS to count (deals, lines of play, information sets) without "
                         "building the tree (default: none)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop each CFR+ run after this many seconds of solving (default: no limit)")
    ap.add_argument("--lp-max-slots", type=int, default=200_000,
                    help="largest teams model (information-set actions) solved by linear program; "
                         "larger ones by CFR+ with the value bracketed (default %(default)s)")
    ap.add_argument("--out", default="results/reduced_decks",
                    help="output folder (JSON and Markdown; default %(default)s)")
    a = ap.parse_args(argv)
    sizes = [_size(x) for x in a.sizes]
    counts = [_size(x) for x in a.count_only]
    if a.iterations < 1:
        raise SystemExit(f"--iterations must be at least 1, got {a.iterations}")
    import os
    import sys

    from twilight_env.util.report import write_json_atomic

    os.makedirs(a.out, exist_ok=True)
    command = "python -m twilight_env.training.reduced_solve " + " ".join(sys.argv[1:] if argv is None else argv)

    def write(rows):
        write_json_atomic(os.path.join(a.out, "reduced_decks.json"), {"command": command, "rows": rows})
        with open(os.path.join(a.out, "README.md"), "w") as f:
            f.write(report(rows, command))

    rows: list[dict] = []
    # the counts run in a second process beside the solves; the files are rewritten after each row
    with ProcessPoolExecutor(max_workers=1) as pool:
        counted = [pool.submit(size_only, t, n) for t, n in counts]
        for t, n in sizes:
            print(f"solving {t} trick(s), {n} players ...", flush=True)
            rows.append(solve_size(t, n, a.iterations, a.seconds, lp_max_slots=a.lp_max_slots))
            print(f"  teams {_teams_cell(rows[-1]['teams'])}, seats NashConv "
                  f"{rows[-1]['seats_cfr_plus']['nash_conv']:.4f}", flush=True)
            write(rows + [f.result() for f in counted if f.done()])
        rows += [f.result() for f in counted]
    write(rows)
    print(report(rows, command))


def count_infosets(tricks: int, num_players: int, model: str = "seats") -> int:
    """Number of information sets of a model, counted without building the tree.

    For each player, an information set is a view (the hands it sees as dealt, every seat's
    Sun and Moon counts, the first leader) and a public sequence of actions at which it
    decides. Given the view, a sequence can happen exactly when every card played from a
    hand the player does not see is a card it does not see, not yet played, of the
    chooser's cult, from a seat whose public count of that cult is above 0 (R2.5, R3.2,
    R3.5): the hidden cards can then always be dealt to match. So the sequences of one view
    are the nodes of a tree over (seen hands left, counts left, unseen cards left, the
    trick so far), counted with memoisation. Agrees with :func:`make_model` where both run
    (tests).

    Raises:
        ValueError: on a bad size or model name.
    """
    deck_mask(tricks)
    if num_players not in (3, 4):
        raise ValueError(f"num_players must be 3 or 4, got {num_players!r}")
    if model == "seats":
        players, seat_player = num_players, PLAYER_OF_SEAT[num_players]
        seen_of = [set(SEEN[num_players][p]) for p in range(num_players)]
    elif model == "teams":
        players = 2
        moon_seats = team_seats(num_players)[0]
        seat_player = tuple(0 if s in moon_seats else 1 for s in range(4))
        seen_of = [set(team_seats(num_players)[t]) | ({NEW_MOON} if num_players == 3 else set()) for t in (0, 1)]
    else:
        raise ValueError(f"model must be 'seats' or 'teams', got {model!r}")
    total = 0
    for p in range(players):
        total += _count_player(tricks, num_players, p, seat_player, tuple(sorted(seen_of[p])))
    return total


def _count_player(tricks: int, n: int, p: int, seat_player, seen: tuple[int, ...]) -> int:
    from functools import lru_cache

    from twilight_env.rules.cards import PURGATORY_MASK, STRENGTH

    seat_cult = (0, 1, 0, 1) if n == 4 else (1, 0, 1, 0)
    deck = deck_mask(tricks)
    hidden = tuple(s for s in range(4) if s not in seen)

    @lru_cache(maxsize=None)
    def nodes(hands, counts, pool, leader, place, holder, trick):
        if not any(a or b for a, b in counts):
            return 0
        chooser = (leader + place) & 3
        cult = seat_cult[chooser]
        acting = chooser if holder < 0 else holder
        deciding = 0 if (n == 3 and acting == NEW_MOON) else acting
        total = 1 if seat_player[deciding] == p else 0
        cmask = ((1 << 14) - 1) << (14 * cult)
        if holder < 0:
            source = [chooser] if (chooser in seen or counts[chooser][cult]) else []
            for o in (1, 2, 3):  # requests (R3.2, R3.5)
                s = (chooser + o) & 3
                if counts[s][cult]:
                    total += nodes(hands, counts, pool, leader, place, s, trick)
        else:
            source = [holder]
        for s in source:
            cards = ids_of((hands[s] if s in seen else pool) & cmask)
            for c in cards:
                hs = tuple(h & ~(1 << c) if i == s else h for i, h in enumerate(hands))
                cs = tuple((a - (cult == 0), b - (cult == 1)) if i == s else (a, b)
                           for i, (a, b) in enumerate(counts))
                tr = trick + (c,)
                pl = pool if s in seen else pool & ~(1 << c)
                if len(tr) < 4:
                    total += nodes(hs, cs, pl, leader, place + 1, -1, tr)
                    continue
                if any(PURGATORY_MASK >> x & 1 for x in tr):  # R4.3: the first Purgatory's seat leads
                    nxt = (leader + next(i for i, x in enumerate(tr) if PURGATORY_MASK >> x & 1)) & 3
                else:  # R4.1: the first strongest card takes
                    nxt = (leader + max(range(4), key=lambda i: (STRENGTH[tr[i]], -i))) & 3
                total += nodes(hs, cs, pl, nxt, 0, -1, ())
        return total

    total = 0
    leaders = (0, 1, 2, 3) if n == 4 else (0,)
    for hands in _seen_hands(ids_of(deck), tricks, seen):
        seen_mask = sum(hands)
        pool = deck & ~seen_mask
        n_sun = bin(pool & ((1 << 14) - 1)).count("1")
        for split in itertools.product(range(tricks + 1), repeat=len(hidden)):
            if sum(split) != n_sun:
                continue
            counts = _hand_counts(hands, seen, hidden, split, tricks)
            for lead in leaders:
                total += nodes(tuple(hands), counts, pool, lead, 0, -1, ())
    return total


def _hand_counts(hands, seen: tuple[int, ...], hidden: tuple[int, ...], split: tuple[int, ...],
                 tricks: int) -> tuple:
    """(Sun, Moon) card counts of each seat 0..3: a seen seat's from its hand mask, a hidden
    seat's from its number of Sun cards in ``split`` (the rest Moon, ``tricks`` in all)."""
    counts = [(0, 0)] * 4
    for s in seen:
        h = hands[s]
        counts[s] = (bin(h & ((1 << 14) - 1)).count("1"), bin(h >> 14).count("1"))
    for s, k in zip(hidden, split):
        counts[s] = (k, tricks - k)
    return tuple(counts)


def _seen_hands(ids, tricks: int, seen: tuple[int, ...]):
    """Every way to deal ``tricks`` cards to each seen seat: 4 masks by seat (0 for the others)."""
    def rec(i, avail, hands):
        if i == len(seen):
            yield hands
            return
        for h in itertools.combinations(avail, tricks):
            rest = [c for c in avail if c not in h]
            new = list(hands)
            new[seen[i]] = sum(1 << c for c in h)
            yield from rec(i + 1, rest, new)
    yield from rec(0, list(ids), [0, 0, 0, 0])


if __name__ == "__main__":
    main()
