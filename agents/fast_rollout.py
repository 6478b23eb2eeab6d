"""The heuristic rollout of ``pimc`` and ``ismcts``, compiled with numba when installed.

A rollout plays a determinized world (a full deal :class:`~twilight_env.rules.engine.State`)
to the end of the deal with the ``heuristic`` policy (:func:`twilight_env.agents.heuristic.decide_state`)
for every seat, as Perfect Information Monte Carlo (Ginsberg 2001; Long, Sturtevant, Buro
& Furtak 2010) and IS-MCTS (Cowling, Powley & Whitehouse 2012, "Information Set Monte Carlo Tree Search",
IEEE Trans. Comput. Intell. AI Games 4(2)) do to value a leaf. With the pure-Python
rollout the heuristic's decisions take most of a search agent's time (ismcts: about 85%,
inferred from the time per decision with each backend in
``benchmarks/rollout_speed.py --agents``); :mod:`twilight_env.agents._rollout_nb` makes the same
decisions in compiled code.

Parity: the compiled rollout takes the same action as the Python heuristic at every
decision point (the same estimate, computed in the same order in IEEE doubles, with the
same tie-breaks), so from any state it reaches the same final state and scores. With
``epsilon > 0`` it draws from the caller's ``numpy.random.Generator`` exactly as the
Python rollout does (one ``random()`` per decision, then ``integers(0, n)`` for a random
action), through numba's own implementation of NumPy's Generator methods on the same bit
generator, so the actions and the Generator's state afterwards match too.
``tests/agents/test_fast_rollout.py`` checks all of this.

Backends: ``"numba"`` (needs numba, ``pip install 'twilight-env[fast]'``; compiled on a
machine's first use and cached on disk), ``"python"`` (:func:`twilight_env.agents.pimc.rollout`), and
``"auto"``: numba when installed. ``benchmarks/rollout_speed.py`` measures both.
"""

from __future__ import annotations

import importlib.util as _importlib_util

import numpy as np

from twilight_env.rules.engine import NUM_TRICKS, State

HAVE_NUMBA = _importlib_util.find_spec("numba") is not None
"""Whether the compiled rollout can be used (numba is imported only when it is asked for)."""

BACKENDS = ("auto", "numba", "python")

_NB = None


def _nb():
    """The compiled module, imported on first use."""
    global _NB
    if _NB is None:
        resolve_backend("numba")
        from twilight_env.agents import _rollout_nb

        _NB = _rollout_nb
    return _NB


def resolve_backend(backend: str, option: str = "rollout_backend") -> str:
    """``"numba"`` or ``"python"`` for a rollout backend name.

    Args:
        backend: ``"auto"`` (numba when installed, else Python), ``"numba"`` or ``"python"``.
        option: the agent option that gave ``backend``, named in the messages (e.g.
            ``"backend"`` for ``ismcts:backend=numba``); None where no option chose it
            (code that runs compiled only, such as the ``guided`` search).

    Raises:
        ValueError: on another name, or ``"numba"`` without numba installed (naming
            ``option`` and suggesting ``option='python'``).
    """
    if backend not in BACKENDS:
        raise ValueError(f"{option or 'backend'} must be 'auto', 'numba' or 'python', got {backend!r}")
    if backend == "numba" and not HAVE_NUMBA:
        if option is None:
            raise ValueError("the compiled search needs the numba package (pip install 'twilight-env[fast]'); "
                             "install it")
        raise ValueError(f"{option}='numba' needs the numba package (pip install 'twilight-env[fast]'); "
                         f"install it or use {option}='python'")
    if backend == "auto":
        return "numba" if HAVE_NUMBA else "python"
    return backend


def _params() -> np.ndarray:
    """The heuristic's constants as the compiled code reads them, from :mod:`twilight_env.agents.heuristic`."""
    from twilight_env.agents import heuristic as H
    from twilight_env.rules.cards import STRENGTH

    keep = [H.KEEP_BY_STRENGTH[STRENGTH[i]] for i in range(28)]
    return np.array([H.LEAD, H.TIP, H.LATER_OWN, H.LATER_OTHER, H.DENY, H.P_UNSURE] + keep, dtype=np.float64)


_PARAMS: np.ndarray | None = None


def params() -> np.ndarray:
    """float64 array of shape (34,): the heuristic's constants ``LEAD, TIP, LATER_OWN,
    LATER_OTHER, DENY, P_UNSURE``, then the keep cost of each card id 0..27
    (``KEEP_BY_STRENGTH`` by the card's strength). Built on first use from
    :mod:`twilight_env.agents.heuristic`'s module constants and kept (set ``_PARAMS = None`` to read
    them again); the compiled code never has them compiled in."""
    global _PARAMS
    if _PARAMS is None:
        _PARAMS = _params()
    return _PARAMS


def state_array(state: State) -> np.ndarray:
    """The fields of ``state`` that play depends on, as the compiled code's int64 array
    of shape ``(20,)`` (layout in :mod:`twilight_env.agents._rollout_nb`).

    Raises:
        ValueError: if ``state`` is not an engine state.
    """
    try:
        h, c, k = state.hands, state.cards, state.captured
        return np.array([h[0], h[1], h[2], h[3], state.leader, state.trick, state.place, state.phase,
                         state.holder, c[0], c[1], c[2], c[3], state.pending, k[0], k[1], k[2], k[3],
                         state.neutral, 1 if state.num_players == 3 else 0], dtype=np.int64)
    except AttributeError:
        raise ValueError(f"expected a twilight_env.rules.engine.State, got {type(state).__name__}") from None


def decide_state(state: State) -> int:
    """The compiled heuristic's action in ``state`` (the same as
    :func:`twilight_env.agents.heuristic.decide_state`: only what the deciding seat may know is used).

    Raises:
        ValueError: if the deal is over (no decision to make) or numba is missing.
    """
    if state.trick == NUM_TRICKS:
        raise ValueError("the deal is over: there is no decision to make (state.done is True)")
    resolve_backend("numba")
    nb = _nb()
    st = state_array(state)
    legal, iscratch, fscratch = nb.new_scratch()
    n = nb.legal_into(st, legal)
    return int(nb.decide(st, legal, n, params(), iscratch, fscratch))


def rollout_actions(state: State, rng: np.random.Generator | None = None, epsilon: float = 0.0) -> list[int]:
    """The actions a compiled heuristic rollout plays from ``state`` to the end of the
    deal (``state`` is not changed; empty when the deal is over).

    Args:
        state: a full (determinized) deal state.
        rng: numpy Generator, needed only when ``epsilon > 0``.
        epsilon: chance of a uniformly random action at each decision (0..1).

    Raises:
        ValueError: on a bad ``epsilon``, a missing ``rng`` with ``epsilon > 0``, or
            numba missing.
    """
    resolve_backend("numba")
    nb = _nb()
    st = state_array(state)
    acts = np.empty(nb.MAX_ACTIONS, dtype=np.int64)
    n = _run(nb, st, acts, rng, epsilon)
    return [int(a) for a in acts[:n]]


def _run(nb, st, acts, rng, epsilon) -> int:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be a number in [0, 1], got {epsilon!r}")
    if epsilon > 0.0:
        if not isinstance(rng, np.random.Generator):
            raise ValueError("epsilon > 0 needs rng, a numpy.random.Generator")
        return nb.play_out_eps(st, acts, params(), float(epsilon), rng)
    return nb.play_out(st, acts, params())


def rollout(state: State, rng: np.random.Generator | None = None, epsilon: float = 0.0) -> State:
    """Play ``state`` to the end in place with the compiled heuristic and return it: the
    same final state, history included, as :func:`twilight_env.agents.pimc.rollout` with
    ``policy="heuristic"`` (the actions are chosen compiled, then applied by the engine).

    Raises:
        ValueError: as :func:`rollout_actions`.
    """
    for a in rollout_actions(state, rng, epsilon):
        state.apply(a)
    return state


def reraise_interrupt(error: SystemError) -> None:
    """Raise the ``KeyboardInterrupt`` (Ctrl-C, or ``twilight_env.cli.Interrupted`` on
    SIGTERM) that a Python signal handler raised while compiled code was running, if that
    is what ``error`` wraps; otherwise return.

    When the handler runs while numba code calls back into Python, the interpreter
    reports ``SystemError: ... returned a result with an exception set`` with the
    interrupt as its context; re-raising the interrupt lets the commands save their
    finished work as on any other Ctrl-C or SIGTERM.
    """
    inner, seen = error, 0
    while inner is not None and seen < 8:  # numba may wrap it twice (dispatcher, then unpickling)
        if isinstance(inner, KeyboardInterrupt):
            raise inner.with_traceback(None) from None
        inner, seen = inner.__cause__ or inner.__context__, seen + 1


def rollout_scores(state: State, rng: np.random.Generator | None = None, epsilon: float = 0.0) -> tuple[int, int]:
    """Deal scores ``(side 0, side 1)`` (R5, deal points, 0..360 each) at the end of a
    compiled heuristic rollout from ``state``; ``state`` is not changed. The fast path of
    the search agents: the same numbers as ``rollout(state.clone(), ...).side_scores()``.

    Raises:
        ValueError: as :func:`rollout_actions`.
    """
    nb = _NB if _NB is not None else _nb()
    if epsilon == 0.0:
        h, c, k = state.hands, state.cards, state.captured
        try:
            r0, r1 = nb.rollout_scores(h[0], h[1], h[2], h[3], state.leader, state.trick, state.place, state.phase,
                                       state.holder, c[0], c[1], c[2], c[3], state.pending, k[0], k[1], k[2],
                                       k[3], state.neutral, 1 if state.num_players == 3 else 0,
                                       _PARAMS if _PARAMS is not None else params())
        except SystemError as e:
            reraise_interrupt(e)
            raise
        return int(r0), int(r1)
    st = state_array(state)
    _run(nb, st, np.empty(nb.MAX_ACTIONS, dtype=np.int64), rng, epsilon)
    r0, r1 = nb.side_scores(st)
    return int(r0), int(r1)


__all__ = ["HAVE_NUMBA", "BACKENDS", "resolve_backend", "params", "state_array", "decide_state",
           "rollout_actions", "rollout", "rollout_scores", "reraise_interrupt"]
