"""``ismcts``: single-observer information-set MCTS (Cowling, Powley & Whitehouse 2012).

One search tree per decision, from the deciding player's point of view. Nodes are
information-set nodes keyed by the sequence of actions since the root (the public
history fixes whose decision each node is: the chooser, or the requested holder, R3.2).
Each iteration:

1. *Determinize*: draw a fresh world consistent with the information set
   (:meth:`~twilight_env.rules.infoset.InfoSet.sample_state`, uniform over the unseen cards
   given the public counts, R2.5).
2. *Select*: descend while every action legal in this world has been tried at the
   node, maximizing ``mean_side + c · sqrt(ln(availability) / visits)``. An action's
   *availability* counts the visits of its node in which it was legal (in some worlds
   a hidden hand lacks a cult, so a request is illegal, R3.5), as in the paper's
   subset-armed bandit.
3. *Expand* one untried action legal in this world, 4. *roll out* to the end of the
   deal with the rollout policy (``heuristic`` or ``random``), 5. *back up*.

Values: a deal's outcome is stored as side 0's final deal score minus side 1's, divided
by 360 (so in [-1, 1]). At a node the deciding side is the side of the acting seat
(chooser or holder; a holder decides for its own side, and in 3 players the solo's two
seats 0 and 2 are side 0, R7.3), and selection uses the value from that side's view,
so the alternation of sides, which follows requests and trick takers, needs no
bookkeeping. The root returns its most-visited legal action (ties to the lowest id).

Rollouts: with ``rollout=heuristic`` and ``rollout_backend=auto`` (the default) the
playouts run compiled (:mod:`twilight_env.agents.fast_rollout`, numba) when numba is installed, with
the same actions and random draws as the Python heuristic rollout, so the same tree and
decision for the same seed; the search itself (determinization, selection, backup) stays
in Python and then takes most of the time. ``rollout_backend=python`` keeps the
pure-Python rollout, which is also the fallback without numba.
``python benchmarks/rollout_speed.py --agents`` prints the time per decision with both
and the iterations the compiled rollout affords in a given time per decision. In play
(``benchmarks/timed_arena.py``, 3 players), ``iterations=4800`` with the compiled
rollout took about the time of the default 1000 with the Python rollout (0.21 against
0.22 s per decision) and won by 23 deal points per deal over 96 duplicate deals (95% CI
12 to 35); the default stays 1000 so that results do not depend on numba being installed.

Search backend: ``backend=python`` (the default) runs the search above in Python;
``backend=numba`` runs the whole search compiled (:func:`twilight_env.agents.fast_ismcts.search`: the
same algorithm, with determinization, tree and rollout in numba, and its own random
draws, so a different tree for the same seed), many times more iterations in the same
time (``python benchmarks/ismcts_speed.py``). It needs ``inference=uniform``;
``rollout_backend`` does not apply to it.

Root prior: :meth:`ISMCTSAgent.search` (and :func:`twilight_env.agents.fast_ismcts.search`) accept
``root_prior`` (an array over the 31 action ids) and ``prior_weight`` ``w``: at the root
only, ``w · P(a) / (n_a + 1)`` is added to the UCB value of action ``a`` (progressive
bias, Chaslot et al. 2008, "Progressive strategies for Monte-Carlo tree search"); with
``w = 0`` the search is plain IS-MCTS.

Scoring: ``scoring=individual`` (with ``backend=numba``) plays the 3-player
``three_player_scoring="individual"`` variant (R8): each decider in the tree maximizes its
own score line instead of its side's (:func:`twilight_env.agents.fast_ismcts.search`).

Depth limit and ensembles: ``max_depth=D`` (``D > 0``) keeps tree statistics for the
first ``D`` decisions of each iteration only (no node deeper than ``D - 1`` decisions
below the root; the rest of the deal is rolled out), both backends; 0 (the default) is
the plain search. In a single-observer tree the opponents' and the partner's nodes
average over determinizations those players could not tell apart and that contain the
searcher's own hand (Cowling et al. 2012), so deep statistics can mislead.
``trees=K`` (``backend=numba`` only) runs ``K`` independent searches of
``iterations / K`` iterations each and sums their root visits (a root-parallel
ensemble of determinized searches).

Spec: ``ismcts:iterations=1000,c=0.7,rollout=heuristic,epsilon=0,rollout_backend=auto,inference=uniform,backend=python,scoring=team,max_depth=0,trees=1``;
``inference=model`` (or a checkpoint path) draws the determinizations from the card-location
model (:func:`twilight_env.agents.pimc.world_drawer`, docs/INFERENCE.md).
"""

from __future__ import annotations

from math import log, sqrt

import numpy as np

from twilight_env.rules.engine import NUM_TRICKS

from twilight_env.agents.base import check_number
from twilight_env.agents.fast_ismcts import check_prior, check_tree_options
from twilight_env.agents.pimc import (RolloutScorer, check_inference, check_positive_int, check_rollout_options,
                                      inference_players, world_drawer)


class _Node:
    """Statistics of the actions at one information-set node."""

    __slots__ = ("children", "visits", "avail", "value")

    def __init__(self):
        self.children: dict[int, _Node] = {}
        self.visits: dict[int, int] = {}    # times the action was taken here
        self.avail: dict[int, int] = {}     # times the action was legal when the node was visited
        self.value: dict[int, float] = {}   # sum of side-0 outcomes (/360) after the action


class ISMCTSAgent:
    """Single-observer IS-MCTS (see the module docstring).

    Args:
        iterations: determinizations (tree descents) per decision (>= 1).
        c: UCT exploration constant (>= 0), for values scaled to [-1, 1].
        rollout: ``"heuristic"`` or ``"random"`` playout policy.
        epsilon: random-action chance inside heuristic playouts (0..1).
        rollout_backend: heuristic rollout backend: ``"auto"`` (the compiled rollout of
            :mod:`twilight_env.agents.fast_rollout` when numba is installed, else Python),
            ``"numba"`` or ``"python"``; the same actions and random draws, so the same
            tree and decisions for the same seed.
        inference: ``"uniform"``, ``"model"`` or a card-location checkpoint path
            (:func:`twilight_env.agents.pimc.world_drawer`).
        backend: ``"python"`` (the search in Python) or ``"numba"`` (the compiled search
            of :func:`twilight_env.agents.fast_ismcts.search`; needs numba and ``inference="uniform"``).
        scoring: ``"team"`` (R5, R7.5) or ``"individual"`` (3 players, R8: every decider
            maximizes its own score line, as :func:`twilight_env.agents.fast_ismcts.search` documents;
            needs ``backend="numba"``). Set it to the scoring of the deals the agent plays:
            the information set does not carry the match rules.
        max_depth: decisions from the root with tree statistics (>= 0; 0: no limit);
            see the module docstring.
        trees: independent searches whose root visits are summed (>= 1, at most
            ``iterations``); more than 1 needs ``backend="numba"``.

    Raises:
        ValueError: on a bad option value (names it and the allowed values).
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may
    play many deals at once (``twilight_env.experiments.common.play_lockstep``)."""

    def __init__(self, iterations: int = 1000, c: float = 0.7, rollout: str = "heuristic", epsilon: float = 0.0,
                 rollout_backend: str = "auto", inference: str = "uniform", backend: str = "python",
                 scoring: str = "team", max_depth: int = 0, trees: int = 1):
        check_positive_int("iterations", iterations)
        check_tree_options(max_depth, trees, iterations)
        if backend not in ("python", "numba"):
            raise ValueError(f"backend must be 'python' or 'numba', got {backend!r}")
        if trees != 1 and backend != "numba":
            raise ValueError(f"trees={trees!r} needs backend='numba' (the Python search runs one tree); "
                             "use trees=1 or backend=numba")
        if backend == "numba":
            from twilight_env.agents.fast_rollout import resolve_backend
            resolve_backend("numba", option="backend")
            if inference != "uniform":
                raise ValueError(f"backend 'numba' draws uniform determinizations only; inference must be "
                                 f"'uniform' with it, got {inference!r}")
        check_number("c", c, 0, agent="ismcts")
        check_rollout_options(rollout, epsilon)
        if scoring not in ("team", "individual"):
            raise ValueError(f"ismcts option scoring must be 'team' or 'individual', got {scoring!r}")
        if scoring == "individual" and backend != "numba":
            raise ValueError("scoring='individual' needs backend='numba' (the compiled search); "
                             f"got backend={backend!r}")
        self.scoring = scoring
        self.iterations = iterations
        self.c = float(c)
        self.rollout = rollout
        self.epsilon = float(epsilon)
        self.rollout_backend = rollout_backend
        self._score = RolloutScorer(rollout, float(epsilon), rollout_backend)
        self.inference = check_inference(inference)
        self.backend = backend
        self.max_depth = int(max_depth)
        self.trees = int(trees)
        self.name = (f"ismcts:iterations={iterations}" + ("" if inference == "uniform" else f",inference={inference}")
                     + ("" if backend == "python" else f",backend={backend}")
                     + ("" if scoring == "team" else f",scoring={scoring}")
                     + ("" if max_depth == 0 else f",max_depth={max_depth}") + ("" if trees == 1 else f",trees={trees}"))

    @property
    def num_players(self) -> int | None:
        """The player count of the ``inference`` checkpoint, or None: either
        (:func:`~twilight_env.agents.pimc.inference_players`)."""
        return inference_players(self.inference)

    def reset(self) -> None:
        """Nothing to reset: each decision builds a fresh tree."""

    def search(self, infoset, rng: np.random.Generator, root_prior: np.ndarray | None = None,
               prior_weight: float = 0.0) -> _Node:
        """Run the iterations in Python and return the root node (visits per action in
        ``root.visits``; whatever ``backend`` is).

        Args:
            infoset: the deciding player's information set (deal not over).
            rng: numpy Generator for determinizations, expansions and rollouts.
            root_prior: None, or a float array of shape ``(31,)`` over action ids (finite,
                >= 0); used only when ``prior_weight > 0``.
            prior_weight: progressive-bias weight ``w`` (>= 0): at the root,
                ``w · P(a) / (n_a + 1)`` is added to action ``a``'s UCB value
                (Chaslot et al. 2008). 0: plain IS-MCTS.

        Raises:
            ValueError: on a bad ``root_prior`` or ``prior_weight``.
        """
        prior, w = check_prior(root_prior, prior_weight)
        root = _Node()
        c = self.c
        score = self._score
        draw = world_drawer(infoset, self.inference)
        max_depth = self.max_depth
        for _ in range(self.iterations):
            state = draw(rng)
            node = root
            path = []
            # selection and expansion
            while state.trick != NUM_TRICKS:
                if max_depth and len(path) == max_depth:
                    break  # no statistics deeper than max_depth decisions: roll out from here
                legal = state.legal_actions()
                avail = node.avail
                visits = node.visits
                untried = []
                for a in legal:
                    avail[a] = avail.get(a, 0) + 1
                    if a not in visits:
                        untried.append(a)
                if untried:
                    a = untried[int(rng.integers(len(untried)))] if len(untried) > 1 else untried[0]
                    visits[a] = 0
                    node.value[a] = 0.0
                    child = node.children[a] = _Node()
                    path.append((node, a))
                    state.apply(a)
                    node = child
                    break
                sign = 1.0 if not (state.acting_seat & 1) else -1.0
                best_a, best_u = legal[0], None
                vals = node.value
                at_root = w and node is root
                for a in legal:
                    n = visits[a]
                    u = sign * vals[a] / n + c * sqrt(log(avail[a]) / n)
                    if at_root:
                        u += w * prior[a] / (n + 1)
                    if best_u is None or u > best_u:
                        best_a, best_u = a, u
                path.append((node, best_a))
                state.apply(best_a)
                node = node.children[best_a]
            # rollout and backup
            r0, r1 = score(state, rng)
            z = (r0 - r1) / 360.0
            for n_, a in path:
                n_.visits[a] += 1
                n_.value[a] += z
        return root

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        if not legal_actions:
            raise ValueError("ismcts.act needs at least one legal action (the deal may be over)")
        if len(legal_actions) == 1:
            return legal_actions[0]
        if self.backend == "numba":
            from twilight_env.agents.fast_ismcts import search
            counts, _ = search(infoset, self.iterations, self.c, rng, rollout=self.rollout, epsilon=self.epsilon,
                               scoring=self.scoring, max_depth=self.max_depth, trees=self.trees)
            visits = {a: int(counts[a]) for a in legal_actions}
        else:
            visits = self.search(infoset, rng).visits
        best, best_n = legal_actions[0], -1
        for a in sorted(legal_actions):
            n = visits.get(a, 0)
            if n > best_n:
                best, best_n = a, n
        return best


__all__ = ["ISMCTSAgent"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="ismcts", factory=ISMCTSAgent, summary="information-set Monte Carlo tree search",
    served=True, searches=True,
    options=(
        Option("iterations", int, 1000, low=1, serve=(1, 20000), doc="search iterations per decision"),
        Option("c", float, 0.7, low=0, serve=(0.0, 10.0), doc="exploration constant"),
        Option("rollout", str, "heuristic", serve=("heuristic", "random"), doc="rollout policy"),
        Option("epsilon", float, 0.0, low=0, high=1, serve=(0.0, 1.0), doc="chance of a random rollout move"),
        Option("rollout_backend", str, "auto", serve=("auto", "numba", "python"), doc="rollout backend"),
        Option("inference", str, "uniform", serve=("uniform", "model"),
               doc="world sampling: uniform, the shipped model, or a checkpoint path", holds="path",
               requires=(("backend", "python"),)),
        Option("backend", str, "python", serve=("python", "numba"), doc="tree search backend"),
        Option("scoring", str, "team", serve=("team", "individual"), doc="what a playout scores",
               requires=(("backend", "numba"),)),
        Option("max_depth", int, 0, low=0, serve=(0, 28), doc="tree depth limit (0: none)"),
        Option("trees", int, 1, low=1, serve=(1, 16), doc="independent trees (at most iterations)",
               requires=(("backend", "numba"),), at_most="iterations"),
    )))
