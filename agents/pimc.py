"""``pimc``: Perfect Information Monte Carlo search (issue 4).

PIMC as in Ginsberg's GIB (Ginsberg 2001, "GIB: Imperfect information in a
computationally challenging game", JAIR 14) and as analysed by Long, Sturtevant, Buro &
Furtak (2010, "Understanding the success of Perfect Information Monte Carlo sampling in
game tree search", AAAI). For one decision the agent draws ``worlds`` determinizations
of its information set (:meth:`~twilight_env.rules.infoset.InfoSet.sample_state`: full deals
uniform over the unseen cards consistent with the counts, R2.5), and values every legal
action in every world:

- with at most ``solver_tricks`` tricks left (counting the current one) by the exact
  perfect-information solver (:mod:`twilight_env.agents.solver`, partners and the solo's two hands as
  one side, a holder deciding for its own side);
- otherwise by ``rollouts`` playouts of the deal to its end with the ``heuristic``
  policy (``rollout=heuristic``, each action of a playout random with probability
  ``epsilon``) or uniformly random actions (``rollout=random``).

A world's value is the deciding side's final deal score minus the other side's (deal
points, R5). The action with the best mean over the worlds is played (ties to the lowest
action id). The same worlds are used for every action (common random numbers).

Spec: ``pimc:worlds=32,solver_tricks=2,rollouts=1,rollout=heuristic,epsilon=0,backend=auto,rollout_backend=auto,inference=uniform``.
``inference=model`` draws the worlds from the card-location model instead
(:mod:`twilight_env.agents.inference`, shipped weights; ``inference=PATH`` a checkpoint file): still
only worlds consistent with the information set, weighted by where the players' plays
suggest the cards lie (docs/INFERENCE.md).
The default ``solver_tricks=2`` comes from measurement with the pure-Python solver
(``benchmarks/agent_speed.py``, one idle core): it values all actions of a 2-trick
endgame in about 0.5 ms, so 32 worlds cost little; with ``solver_tricks=3`` a decision
with 3 tricks left took 0.14 s median but up to 1.7 s, over the 0.5 s per-decision
target. The compiled solver (``backend=auto`` with numba installed) is much faster at 3
tricks (0.2-0.3 ms per solve), which makes ``solver_tricks=3`` affordable; the default
stays 2 so that ``pimc`` plays the same with either backend.
Rollouts: with ``rollout=heuristic`` and ``rollout_backend=auto`` (the default) the
playouts run compiled (:mod:`twilight_env.agents.fast_rollout`, numba) when numba is installed: the
same actions as the Python heuristic at every decision, so the same values and decisions
for the same seed, and an order of magnitude faster per rollout
(``python benchmarks/rollout_speed.py --agents`` measures both); ``rollout_backend=python`` keeps the
pure-Python rollout, which is also the fallback without numba.
Known weakness of PIMC (strategy fusion, non-locality): it assumes it will know the
hidden cards after this decision.
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules.engine import NUM_TRICKS, State

from twilight_env.agents.base import check_number
from twilight_env.agents.heuristic import decide_state
from twilight_env.agents.solver import Solver


def rollout(state: State, rng: np.random.Generator, policy: str = "heuristic", epsilon: float = 0.0) -> State:
    """Play ``state`` to the end in place with the rollout policy and return it (the
    pure-Python rollout; :mod:`twilight_env.agents.fast_rollout` is the compiled heuristic one, with
    the same actions and random draws).

    Args:
        state: a full (determinized) deal state; changed in place.
        rng: numpy Generator for random actions.
        policy: ``"heuristic"`` (:func:`twilight_env.agents.heuristic.decide_state`) or ``"random"``.
        epsilon: with ``"heuristic"``, the chance of a uniformly random action instead.
    """
    if policy == "random":
        while state.trick != NUM_TRICKS:
            la = state.legal_actions()
            state.apply(la[int(rng.integers(len(la)))] if len(la) > 1 else la[0])
        return state
    while state.trick != NUM_TRICKS:
        if epsilon > 0.0 and rng.random() < epsilon:
            la = state.legal_actions()
            state.apply(la[int(rng.integers(len(la)))])
        else:
            state.apply(decide_state(state))
    return state


def check_rollout_options(rollout_policy, epsilon):
    """Check the rollout options of ``pimc`` and ``ismcts``.

    Raises:
        ValueError: ``rollout_policy`` is not ``"heuristic"`` or ``"random"``, or ``epsilon`` is outside [0, 1].
    """
    if rollout_policy not in ("heuristic", "random"):
        raise ValueError(f"rollout must be 'heuristic' or 'random', got {rollout_policy!r}")
    check_number("epsilon", epsilon, 0.0, 1.0)


class RolloutScorer:
    """Plays a rollout from a state (possibly changing it) and returns the final deal
    scores ``(side 0, side 1)`` (R5): ``scorer(state, rng)``. Picklable.

    Args:
        policy: ``"heuristic"`` or ``"random"``.
        epsilon: random-action chance inside heuristic rollouts (0..1).
        backend: ``"auto"``, ``"numba"`` or ``"python"`` (see
            :func:`twilight_env.agents.fast_rollout.resolve_backend`): the compiled heuristic rollout
            of :mod:`twilight_env.agents.fast_rollout` or :func:`rollout`; both play the same
            actions. The ``random`` policy always runs in Python.

    Raises:
        ValueError: on a bad option, or ``"numba"`` without numba installed.
    """

    def __init__(self, policy: str = "heuristic", epsilon: float = 0.0, backend: str = "auto"):
        from twilight_env.agents import fast_rollout

        check_rollout_options(policy, epsilon)
        self.policy = policy
        self.epsilon = float(epsilon)
        self.backend = fast_rollout.resolve_backend(backend)
        self.compiled = self.backend == "numba" and policy == "heuristic"
        self._fast = fast_rollout.rollout_scores if self.compiled else None

    def __call__(self, state: State, rng: np.random.Generator) -> tuple[int, int]:
        if self.compiled:
            return self._fast(state, rng, self.epsilon)
        return rollout(state, rng, self.policy, self.epsilon).side_scores()


def check_inference(inference) -> str:
    """The ``inference`` option after checking it; a checkpoint path is loaded and checked
    now (:func:`twilight_env.agents.inference.check_file`), so a bad file fails when the agent is built.

    Raises:
        ValueError: naming the option, the file and what is wrong.
    """
    if not isinstance(inference, str) or not inference:
        raise ValueError(f"inference must be 'uniform', 'model' or a checkpoint path, got {inference!r}")
    if inference not in ("uniform", "model"):
        from pathlib import Path
        if not Path(inference).exists():
            raise ValueError(f"option inference={inference!r}: no such file; inference must be 'uniform', 'model' "
                             "or the path of a card-location checkpoint")
        try:
            from twilight_env.agents.inference import check_file
        except ImportError as e:
            raise ValueError(f"option inference={inference!r} needs torch to read the checkpoint ({e})") from None
        try:
            check_file(inference)
        except ValueError as e:
            raise ValueError(f"option inference={inference!r}: {e}") from None
    return inference


def inference_players(inference: str) -> int | None:
    """The player count (3 or 4) of the card-location checkpoint an ``inference`` option
    names, or None for ``"uniform"`` and ``"model"`` (the shipped model of the deal's
    variant): what :func:`twilight_env.agents.base.network_players` reads from ``pimc`` and
    ``ismcts`` (their ``num_players``), so a run of the other count refuses the file first.

    Raises:
        ValueError: a checkpoint that is missing or damaged
            (:func:`twilight_env.agents.inference.check_file`, naming the file).
        ImportError: a checkpoint path without torch (:func:`check_inference` says so first).
    """
    if inference in ("uniform", "model"):
        return None
    from twilight_env.agents.inference import check_file  # its model is cached: not built twice

    return check_file(inference)


def world_drawer(infoset, inference: str = "uniform"):
    """The determinization function of one decision: ``rng -> State``.

    ``"uniform"``: :meth:`InfoSet.sample_state <twilight_env.rules.infoset.InfoSet.sample_state>`;
    ``"model"`` or a checkpoint path: :meth:`twilight_env.agents.worlds.WorldSampler.sample_state` with
    the card-location model's probabilities (built once per decision; imports torch).
    Both draw only worlds consistent with the information set (R2.5).
    """
    if inference == "uniform":
        return infoset.sample_state
    from twilight_env.agents.inference import model_sampler
    return model_sampler(infoset, None if inference == "model" else inference).sample_state


def check_positive_int(name, value, minimum=1):
    """Check an integer option of an agent.

    Raises:
        ValueError: ``value`` is a bool, not an int, or below ``minimum`` (the message names ``name``).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


class PIMCAgent:
    """Perfect Information Monte Carlo (see the module docstring).

    Args:
        worlds: determinizations per decision (>= 1).
        solver_tricks: use the exact solver when at most this many tricks remain,
            counting the current one (0..7; 0 never uses it).
        rollouts: playouts per world and action when the solver is not used (>= 1).
        rollout: ``"heuristic"`` or ``"random"`` playout policy.
        epsilon: random-action chance inside heuristic playouts (0..1).
        backend: solver backend: ``"auto"`` (numba when installed, else Python),
            ``"python"`` or ``"numba"`` (see :class:`twilight_env.agents.solver.Solver`; the same
            values, so the same decisions, only faster).
        rollout_backend: heuristic rollout backend: ``"auto"`` (the compiled rollout of
            :mod:`twilight_env.agents.fast_rollout` when numba is installed, else Python),
            ``"numba"`` or ``"python"``; the same actions, so the same decisions.
        inference: how worlds are drawn: ``"uniform"`` (``InfoSet.sample_state``),
            ``"model"`` (the shipped card-location weights) or a checkpoint path
            (:func:`world_drawer`).

    Raises:
        ValueError: on a bad option value (names it and the allowed values).
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may
    play many deals at once (``twilight_env.experiments.common.play_lockstep``)."""

    def __init__(self, worlds: int = 32, solver_tricks: int = 2, rollouts: int = 1,
                 rollout: str = "heuristic", epsilon: float = 0.0, backend: str = "auto",
                 rollout_backend: str = "auto", inference: str = "uniform"):
        check_positive_int("worlds", worlds)
        check_positive_int("rollouts", rollouts)
        if isinstance(solver_tricks, bool) or not isinstance(solver_tricks, int) or not 0 <= solver_tricks <= 7:
            raise ValueError(f"solver_tricks must be an int in 0..7, got {solver_tricks!r}")
        check_rollout_options(rollout, epsilon)
        if backend not in ("auto", "python", "numba"):
            raise ValueError(f"backend must be 'auto', 'python' or 'numba', got {backend!r}")
        self.backend = backend
        self.rollout_backend = rollout_backend
        self._score = RolloutScorer(rollout, float(epsilon), rollout_backend)
        self.inference = check_inference(inference)
        self.worlds = worlds
        self.solver_tricks = solver_tricks
        self.rollouts = rollouts
        self.rollout = rollout
        self.epsilon = float(epsilon)
        self.name = f"pimc:worlds={worlds}" + ("" if inference == "uniform" else f",inference={inference}")
        self._solvers: dict[int, Solver] = {}

    @property
    def num_players(self) -> int | None:
        """The player count of the ``inference`` checkpoint, or None: either (:func:`inference_players`)."""
        return inference_players(self.inference)

    def reset(self) -> None:
        """Forget the solver's transposition tables."""
        for s in self._solvers.values():
            s.clear()

    def _solver(self, num_players: int) -> Solver:
        s = self._solvers.get(num_players)
        if s is None:
            s = self._solvers[num_players] = Solver(num_players, self.backend)
        return s

    def action_means(self, infoset, legal_actions, rng: np.random.Generator) -> dict[int, float]:
        """Mean value over the sampled worlds of each legal action, for the deciding side
        (deal points: own side's final score minus the other side's)."""
        legal = tuple(legal_actions)
        totals = dict.fromkeys(legal, 0.0)
        side = infoset.deciding_seat & 1
        sign = 1 if side == 0 else -1
        use_solver = NUM_TRICKS - infoset.trick <= self.solver_tricks
        solver = self._solver(infoset.num_players) if use_solver else None
        score = self._score
        draw = world_drawer(infoset, self.inference)
        for _ in range(self.worlds):
            world = draw(rng)
            if use_solver:
                solver.clear()
                vals = solver.action_values(world)
                for a in legal:
                    totals[a] += sign * vals[a]
                continue
            for a in legal:
                acc = 0.0
                for _ in range(self.rollouts):
                    s = world.clone()
                    s.apply(a)
                    r0, r1 = score(s, rng)
                    acc += (r0 - r1) * sign
                totals[a] += acc / self.rollouts
        return {a: totals[a] / self.worlds for a in legal}

    def act(self, infoset, legal_actions, rng: np.random.Generator) -> int:
        if not legal_actions:
            raise ValueError("pimc.act needs at least one legal action (the deal may be over)")
        if len(legal_actions) == 1:
            return legal_actions[0]
        means = self.action_means(infoset, legal_actions, rng)
        best = None
        for a in sorted(means):
            if best is None or means[a] > means[best] + 1e-9:
                best = a
        return best


__all__ = ["PIMCAgent", "inference_players", "rollout", "RolloutScorer", "world_drawer"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, Option, declare  # noqa: E402

declare(AgentDecl(
    name="pimc", factory=PIMCAgent, summary="perfect-information Monte Carlo over sampled worlds",
    served=True, searches=True,
    options=(
        Option("worlds", int, 32, low=1, serve=(1, 256), doc="worlds sampled per decision"),
        Option("solver_tricks", int, 2, low=0, high=7, serve=(0, 3), doc="tricks left at which the exact solver takes over"),
        Option("rollouts", int, 1, low=1, serve=(1, 8), doc="rollouts per world and action"),
        Option("rollout", str, "heuristic", serve=("heuristic", "random"), doc="rollout policy"),
        Option("epsilon", float, 0.0, low=0, high=1, serve=(0.0, 1.0), doc="chance of a random rollout move"),
        Option("backend", str, "auto", serve=("auto", "python", "numba"), doc="solver backend"),
        Option("rollout_backend", str, "auto", serve=("auto", "numba", "python"), doc="rollout backend"),
        Option("inference", str, "uniform", serve=("uniform", "model"),
               doc="world sampling: uniform, the shipped model, or a checkpoint path", holds="path"),
    )))
