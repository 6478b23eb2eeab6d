"""NashConv of a policy network on a reduced deck, exactly, over the whole game tree.

The tree and the information sets are those of :mod:`twilight_env.training.reduced_solve`
(the ``"seats"`` model: each OpenSpiel player decides on its own information, R2.5, R7.1,
R7.3; the game of ``python_twilight(players=N,tricks=T)``). Each information set is read
once: one of its nodes is replayed with the engine
(:class:`~twilight_env.rules.engine.ReducedState`), its compact row is what the deciding
seat knows there (the same for every node of the set; ``tests/training/test_mmd.py``
checks it), and one forward pass over all sets gives the policy, whose NashConv
:func:`twilight_env.training.reduced_solve.nash_conv` computes (OpenSpiel's definition: the
sum over players of what a best response gains, here in deal points).
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules.engine import NUM_TRICKS, ReducedState

from twilight_env.agents.nn.features import role_of, state_row

from twilight_env.training.mmd.rollout import policy_probs
from twilight_env.training.reduced_solve import build_tree, make_model, nash_conv


def node_state(tree, node: int) -> ReducedState:
    """The engine state at a node of a :class:`~twilight_env.training.reduced_solve.GameTree`
    (the root's deal and first leader, then the actions on the path to the node)."""
    path = []
    n = int(node)
    while tree.parent[n] >= 0:
        path.append(int(tree.action[n]))
        n = int(tree.parent[n])
    root = int(tree.root[node])
    st = ReducedState(tuple(int(h) for h in tree.hands[root]), int(tree.leaders[root]), tree.num_players)
    for a in reversed(path):
        st.apply(a)
    return st


class ReducedEvaluator:
    """Exact NashConv of networks on one reduced deck (module docstring).

    Args:
        num_players: 3 or 4.
        tricks: 1..6 (1 builds in 0.1 s; 2 in 3 players takes minutes and GBs,
            ``results/reduced_decks/README.md``).

    Attributes:
        tree, model: the game tree and its ``"seats"`` model.
        rows: ``(I, 25)`` int64, roles ``(I,)`` int64, legal ``(I, 31)`` bool: the network's
            input at each information set ``I``.

    Raises:
        ValueError: bad sizes, or a set whose legal actions differ from the tree's.
    """

    def __init__(self, num_players: int, tricks: int):
        if isinstance(tricks, bool) or not isinstance(tricks, int) or not 1 <= tricks < NUM_TRICKS:
            raise ValueError(f"NashConv is computed on reduced decks, tricks 1..6; got {tricks!r}")
        self.tree = tree = build_tree(tricks, num_players)
        self.model = model = make_model(tree, "seats")
        nodes = np.flatnonzero(model.iset >= 0)
        _, first = np.unique(model.iset[nodes], return_index=True)
        reps = nodes[first]  # one node per information set, sets in order
        states = [node_state(tree, n) for n in reps]
        self.rows = np.array([state_row(s) for s in states], dtype=np.int64)
        self.roles = np.array([role_of(num_players, s.acting_seat) for s in states], dtype=np.int64)
        self.legal = np.zeros((len(states), 31), dtype=bool)
        for i, s in enumerate(states):
            self.legal[i, list(s.legal_actions())] = True
        if not np.array_equal(self.legal.sum(1), np.diff(model.iset_offset)):
            raise ValueError("the engine's legal actions differ from the tree's at some information set")
        self._slot_set, self._slot_action = np.nonzero(self.legal)  # slots: sets in order, actions sorted

    def policy(self, net) -> np.ndarray:
        """``(S,)`` float64: the network's probability of each slot (information set, action)."""
        probs = policy_probs(net, self.rows, self.roles, self.legal)
        return probs[self._slot_set, self._slot_action]

    def nash_conv(self, net) -> tuple[float, list[float]]:
        """NashConv of the network's policy and each player's best-response gain, in deal points.

        Returns:
            ``(nash_conv, per_player)``: the sum, and per OpenSpiel player (3 players: solo,
            left Sun, right Sun; 4 players: seats 0..3) what a best response to the others gains.
        """
        nc, on, br = nash_conv(self.tree, self.model, self.policy(net))
        return float(nc), [float(x) for x in (br - on)]


__all__ = ["ReducedEvaluator", "node_state"]
