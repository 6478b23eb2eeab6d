"""CFR and CFR+ over a reduced-deck game tree, step for step OpenSpiel's solvers, vectorised by level.

:class:`CFR` is one solver; :func:`run_cfr_plus` runs CFR+ with its NashConv curve;
:func:`by_leader` splits a policy's value by first leader. Units: deal points (R5).
"""

from __future__ import annotations

import time

import numpy as np

from twilight_env.training.reduced_eval import nash_conv, reach, values
from twilight_env.training.reduced_tree import GameTree, Model, uniform_policy, utilities


def _normalise(weights: np.ndarray, model: Model) -> np.ndarray:
    """Per information set: ``weights`` normalised, uniform where they sum to 0."""
    sizes = np.diff(model.iset_offset)
    owner = np.repeat(np.arange(model.num_isets), sizes)
    total = np.bincount(owner, weights=weights, minlength=model.num_isets)
    tot = total[owner]
    return np.where(tot > 0, weights / np.where(tot > 0, tot, 1.0), 1.0 / sizes[owner])


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
