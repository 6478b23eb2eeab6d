"""A stand-in for a target agent whose policy is not known: the options ``model`` and
``epsilon`` of the search responder ``respond`` (:mod:`twilight_env.training.search_response`,
whose module docstring says what a modelled target is and why its margin is still a lower
bound on the real target's exploitability).

The model is an agent whose action probabilities are known (:data:`TARGETS`). In the
likelihood of the real target's past play its probabilities are mixed with the uniform
distribution over the legal actions (:func:`mix_uniform`), as ISMCTS-BR (Timbers et al. 2022)
and local best response (Lisý & Bowling 2017) need a model that explains any action: no
world's weight becomes 0 when the real target plays an action the model would never play.
"""

from __future__ import annotations

import numpy as np

from twilight_env.agents import sampling
from twilight_env.agents.base import AgentSpecError, check_exact_target, exact_targets, make_agent, parse_spec
from twilight_env.agents.sampling import check_temperature

MODEL_EPSILON = 0.05
"""Default ``epsilon`` of a modelled target: the weight of the uniform distribution mixed
into the model's probabilities in the likelihood of the real target's play
(:func:`mix_uniform`). A floor, not tuned: small enough that worlds the model explains keep most of the
weight, positive so that none is lost."""

TARGETS = exact_targets()
"""Agents whose policy the responder simulates exactly, those declared with ``exact_target``
(:class:`twilight_env.agents.declaration.AgentDecl`): the network agents, greedy or sampled
(``temperature``, :mod:`twilight_env.agents.sampling`: their action probabilities are one forward
pass), and the deterministic heuristic, simulated by its compiled copy."""


def mix_uniform(probs: np.ndarray, legal: np.ndarray, epsilon: float) -> np.ndarray:
    """A model's probabilities mixed with the uniform distribution over the legal actions,
    ``(1 - epsilon) p + epsilon / |legal|`` on each legal action, 0 on the others: the
    probability of each action in the likelihood of a modelled target's play.

    Args:
        probs: ``(B, 31)`` float probabilities by action id, rows summing to 1 over ``legal``.
        legal: ``(B, 31)`` bool legal mask, at least one legal action per row.
        epsilon: the uniform share in [0, 1]; 0 returns ``probs`` unchanged.

    Returns:
        ``(B, 31)`` float64, positive on every legal action when ``epsilon > 0``.
    """
    probs = np.asarray(probs, dtype=np.float64)
    if not epsilon:
        return probs
    legal = np.asarray(legal, dtype=bool)
    return (1.0 - epsilon) * probs + epsilon * legal / legal.sum(axis=1, keepdims=True)


class MixedTarget:
    """A model's probabilities mixed with the uniform one (:func:`mix_uniform`), for the
    likelihood weights of a modelled target in
    :func:`twilight_env.training.search_response.weighted_worlds` (never deterministic:
    every legal action has a positive probability).

    Args:
        target: the model (:class:`twilight_env.training.search_response.Target`).
        epsilon: the uniform share, in (0, 1].

    Raises:
        ValueError: ``epsilon`` outside (0, 1].
    """

    deterministic = False

    def __init__(self, target, epsilon: float):
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon <= 1:
            raise ValueError(f"the uniform share epsilon must be in (0, 1], got {epsilon!r}")
        self.target, self.epsilon = target, float(epsilon)

    def probs(self, states: list) -> np.ndarray:
        """``(len(states), 31)`` float64: the model's probabilities in each state, mixed."""
        legal = sampling.legal_matrix([s.legal_actions() for s in states])
        return mix_uniform(self.target.probs(states), legal, self.epsilon)


def with_temperature(target: str, temperature) -> str:
    """The target spec with the ``respond`` option ``temperature`` handed to it.

    Raises:
        ValueError: a temperature for ``heuristic``, or one also set in the target spec.
    """
    if temperature is None:
        return target
    name, kwargs = parse_spec(target)
    if name == "heuristic":
        raise ValueError("respond option temperature is the target's; the heuristic target has none "
                         "(targets with one: exit, neural, policy)")
    if "temperature" in kwargs:
        raise ValueError(f"respond: the target's temperature is given twice (target={target!r} and "
                         f"temperature={temperature!r}); give it once")
    check_temperature(temperature, name)
    return f"{target},temperature={temperature:g}"


def resolve_model(target: str, model, temperature, epsilon) -> tuple[str, str, float]:
    """``(real target, simulated spec, epsilon)`` of the ``respond`` options
    (:class:`twilight_env.training.search_response.SearchResponder`): without ``model`` the target is simulated (an exact target, with
    ``temperature``; ``epsilon`` must be absent), with one the model is, at ``temperature``,
    and the real target is only checked to be a valid agent spec. ``;`` in either spec stands
    for the commas of its own options.

    Raises:
        ValueError: a bad target or model spec, a model that is not an exact target,
            ``epsilon`` without a model or outside [0, 1], or ``epsilon=0`` with a model other
            than the target itself.
    """
    target = str(target).replace(";", ",")
    if model is None:
        if epsilon is not None:
            raise ValueError("respond option epsilon mixes a model's probabilities with the uniform ones; "
                             "it needs model=SPEC, e.g. respond:target=ismcts,model=policy:default,epsilon=0.05")
        return target, with_temperature(target, temperature), 0.0
    try:
        make_agent(target)
    except ValueError as e:
        message = f"respond: the target {target!r} is not a valid agent spec ({e})"
        # the held spec is named in the message: make_agent does not name the outer one too
        raise (AgentSpecError(message, e.spec) if isinstance(e, AgentSpecError) else ValueError(message)) from None
    simulated = with_temperature(str(model).replace(";", ","), temperature)
    check_exact_target("respond", "model", str(model))
    eps = MODEL_EPSILON if epsilon is None else epsilon
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 <= eps <= 1:
        raise ValueError(f"respond option epsilon must be a number in [0, 1], got {epsilon!r}")
    if eps == 0 and parse_spec(simulated) != parse_spec(target):
        raise ValueError(f"respond option epsilon=0 is allowed only when the model is the target itself "
                         f"(model={simulated!r}, target={target!r}): with another model a world's weight "
                         f"could become 0; give epsilon in (0, 1] (default {MODEL_EPSILON})")
    return target, simulated, float(eps)


__all__ = ["MODEL_EPSILON", "TARGETS", "mix_uniform", "MixedTarget", "with_temperature", "resolve_model"]
