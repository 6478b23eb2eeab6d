"""Sampling a network agent's decision: the ``temperature`` option of ``policy``, ``exit`` and ``neural``.

A network agent scores every legal action of a decision (R3.2, R3.5): ``policy`` and
``exit`` give probabilities ``p(a)`` (their policy head), ``neural`` gives Q-values ``q(a)``
(deal points / 360, R5). With ``temperature=T`` the agent plays the distribution

- ``T = 0`` (the default): all mass on the greedy action, the one the agent played before
  this option existed (highest score, lowest action id on ties); no random number is drawn;
- ``T > 0``, ``policy`` / ``exit``: ``p(a)^(1/T)`` over the legal actions, normalised, so
  ``T = 1`` is the network's own distribution, ``T < 1`` sharper, ``T > 1`` flatter;
- ``T > 0``, ``neural``: the Boltzmann distribution ``exp(q(a) / T)``, normalised (``T`` in
  the Q-values' unit, deal points / 360).

A sampled decision draws one uniform number from the ``numpy.random.Generator`` passed to
``act`` (and nothing else), so the same seed plays the same deal again. Distributions are
``(31,)`` (or ``(B, 31)``) float64 arrays indexed by action id, 0 on illegal actions, each
row summing to 1.
"""

from __future__ import annotations

import numpy as np

from twilight_env.rules.engine import NUM_ACTIONS

from twilight_env.agents.base import check_number

MAX_TEMPERATURE = 100.0
"""Largest ``temperature`` accepted (beyond it every network plays close to uniform)."""


def check_temperature(value, agent: str) -> float:
    """The ``temperature`` option as a float in ``[0, MAX_TEMPERATURE]``.

    Raises:
        ValueError: not a finite number in that range (naming the agent and the range).
    """
    return check_number("temperature", value, 0, MAX_TEMPERATURE, agent=agent)


def greedy(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``(B,)`` int64: the first legal action of highest score in each row (lowest id on ties).

    Args:
        scores: ``(B, 31)`` probabilities or Q-values by action id.
        legal: ``(B, 31)`` bool, at least one True per row.
    """
    return np.where(legal, scores, -np.inf).argmax(1)


def one_hot(actions: np.ndarray) -> np.ndarray:
    """``(B, 31)`` float64 with 1 at each row's action."""
    out = np.zeros((len(actions), NUM_ACTIONS), dtype=np.float64)
    out[np.arange(len(actions)), actions] = 1.0
    return out


def tempered_probs(probs: np.ndarray, legal: np.ndarray, temperature: float) -> np.ndarray:
    """A policy's distribution at a temperature (module docstring), ``(B, 31)`` float64.

    Args:
        probs: ``(B, 31)`` the network's probabilities (0 on illegal actions allowed).
        legal: ``(B, 31)`` bool legal actions, at least one per row.
        temperature: ``T >= 0``; 0 puts all mass on :func:`greedy`'s action.
    """
    probs = np.asarray(probs, dtype=np.float64)
    if temperature == 0:
        return one_hot(greedy(probs, legal))
    with np.errstate(divide="ignore"):
        logp = np.where(legal, np.log(np.where(legal, probs, 1.0)), -np.inf) / temperature
    return _normalised_exp(logp, legal, probs)


def boltzmann(q: np.ndarray, legal: np.ndarray, temperature: float) -> np.ndarray:
    """Q-values' Boltzmann distribution at a temperature (module docstring), ``(B, 31)`` float64.

    Args:
        q: ``(B, 31)`` Q-values (deal points / 360; values on illegal actions are ignored).
        legal: ``(B, 31)`` bool legal actions, at least one per row.
        temperature: ``T >= 0``; 0 puts all mass on :func:`greedy`'s action.
    """
    q = np.asarray(q, dtype=np.float64)
    if temperature == 0:
        return one_hot(greedy(q, legal))
    return _normalised_exp(np.where(legal, q, -np.inf) / temperature, legal, q)


def _normalised_exp(x: np.ndarray, legal: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``exp(x)`` normalised per row; a row whose legal entries are all ``-inf`` (every legal
    probability underflowed to 0) falls back to the greedy action."""
    top = x.max(axis=1, keepdims=True)
    dead = ~np.isfinite(top[:, 0])
    top[dead] = 0.0
    e = np.exp(x - top)
    total = e.sum(axis=1, keepdims=True)
    out = e / np.where(total > 0, total, 1.0)
    if dead.any():
        out[dead] = one_hot(greedy(scores[dead], legal[dead]))
    return out


def sample(dist: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of ``dist`` ``(B, 31)``, drawing ``B`` uniforms from ``rng``.

    Returns:
        ``(B,)`` int64 actions, each with positive probability in its row.

    Raises:
        ValueError: no generator given (``rng`` is None).
    """
    if rng is None:
        raise ValueError("a sampled decision (temperature > 0) needs the numpy.random.Generator passed to act, "
                         "got None")
    dist = np.asarray(dist, dtype=np.float64)
    cum = np.cumsum(dist, axis=1)
    u = rng.random(len(dist)) * cum[:, -1]
    a = (cum <= u[:, None]).sum(axis=1)  # the first action whose cumulative mass exceeds u
    # rounding can put u at the very top: take the last action with positive mass instead
    last = NUM_ACTIONS - 1 - np.argmax(dist[:, ::-1] > 0, axis=1)
    return np.minimum(a, last).astype(np.int64)


def legal_matrix(legal_actions_list) -> np.ndarray:
    """``(B, 31)`` bool from a list of legal-action tuples."""
    out = np.zeros((len(legal_actions_list), NUM_ACTIONS), dtype=bool)
    for i, legal in enumerate(legal_actions_list):
        out[i, list(legal)] = True
    return out


def temperature_suffix(temperature: float) -> str:
    """``",temperature=T"`` for an agent's name, or ``""`` at temperature 0."""
    return f",temperature={temperature:g}" if temperature else ""


__all__ = ["MAX_TEMPERATURE", "boltzmann", "check_temperature", "greedy", "legal_matrix", "one_hot", "sample",
           "temperature_suffix", "tempered_probs"]
