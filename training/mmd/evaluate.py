"""NashConv of a policy network on a reduced deck, exactly, over the whole game tree.

The game is the ``"seats"`` model of :mod:`twilight_env.training.reduced_solve` (each
OpenSpiel player decides on its own information, R2.5, R7.1, R7.3), and the NashConv is
:func:`~twilight_env.training.reduced_solve.nash_conv` (OpenSpiel's definition: the sum over
players of what a best response gains, in deal points), as in
:func:`twilight_env.training.reduced_policy.learned_nash_conv`. That function asks for the
policy by the env observation of the deciding seat; the policy-value network reads the
compact row of :mod:`twilight_env.agents.nn.features`, which also holds the viewer's seat
(the observation holds only its side: in 4 players the sets of seat 0 and seat 2 under
rotated deals have one observation, and 948 observations stand for the 1,896 sets of the
1-trick game). So the table here is built from the rows: for each information set, its
representative node (:func:`~twilight_env.training.reduced_policy.representatives`) is replayed
with the engine and its compact row read (every node of a set gives the same row, and in 3
players, where each set has its own observation, the figure equals ``learned_nash_conv``'s:
``tests/training/test_mmd.py``).
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules.engine import NUM_TRICKS, ReducedState

from twilight_env.agents.nn.features import role_of, state_row

from twilight_env.training.mmd.rollout import policy_probs
from twilight_env.training.reduced_policy import representatives
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
        tricks: 1..6 (1 builds in well under a second; 2 in 3 players takes minutes and GBs,
            ``results/reduced_decks/README.md``).

    Attributes:
        tree, model: the game tree and its ``"seats"`` model.
        rows: ``(I, 25)`` int64, roles ``(I,)`` int64, legal ``(I, 31)`` bool: the network's
            input at each of the ``I`` information sets, in the model's order.

    Raises:
        ValueError: bad sizes, or a set whose legal actions differ from the tree's.
    """

    def __init__(self, num_players: int, tricks: int):
        if isinstance(tricks, bool) or not isinstance(tricks, int) or not 1 <= tricks < NUM_TRICKS:
            raise ValueError(f"NashConv is computed on reduced decks, tricks 1..6; got {tricks!r}")
        self.tree = tree = build_tree(tricks, num_players)
        self.model = model = make_model(tree, "seats")
        states = [node_state(tree, n) for n in representatives(tree, model)]
        self.rows = np.array([state_row(s) for s in states], dtype=np.int64)
        self.roles = np.array([role_of(num_players, s.acting_seat) for s in states], dtype=np.int64)
        self.legal = np.zeros((len(states), 31), dtype=bool)
        for i, s in enumerate(states):
            self.legal[i, list(s.legal_actions())] = True
        if not np.array_equal(self.legal.sum(1), np.diff(model.iset_offset)):
            raise ValueError("the engine's legal actions differ from the tree's at some information set")
        # slot iset_offset[i] + k is the k-th legal action (ascending id) of set i: the True entries row by row
        self._slot_set, self._slot_action = np.nonzero(self.legal)

    def policy(self, net) -> np.ndarray:
        """``(S,)`` float64: the network's probability of each slot (information set, action)."""
        return policy_probs(net, self.rows, self.roles, self.legal)[self._slot_set, self._slot_action]

    def nash_conv(self, net) -> tuple[float, list[float]]:
        """NashConv of the network's policy and each player's best-response gain, in deal points.

        Returns:
            ``(nash_conv, per_player)``: the sum, and per OpenSpiel player (3 players: solo,
            left Sun, right Sun; 4 players: seats 0..3) what a best response to the others gains.
        """
        nc, on, br = nash_conv(self.tree, self.model, self.policy(net))
        return float(nc), [float(x) for x in (br - on)]


__all__ = ["ReducedEvaluator", "node_state"]
