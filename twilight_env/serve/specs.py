"""The agents a request of ``twilight serve`` may name: a server-side list with bounded options.

A request names agents by spec (``NAME`` or ``NAME:key=value,...``, as
:func:`twilight_env.agents.base.parse_spec` reads them), but the server builds only the agents and
option values listed in :data:`ALLOWED`: every integer option has a cap, every text
option a short list of values, and no option may name a file. A shipped model is named
``default`` (``neural:default``, ``exit-search:path=default``) or ``model``
(``pimc:inference=model``): the server loads the weights shipped with the package, never
a path from a request. A refused spec gets the same answer whatever file it names and
whether or not that file exists (the value is not echoed), so a client learns nothing
about the server's files.

The caps bound the work of one decision. No agent has an option for time per decision
(a search cannot be stopped from outside), so the caps are set so that one decision at
the cap takes about a second or two on a 2-core machine (``docs/SERVE.md``, What the
server guards against).
"""

from __future__ import annotations

import importlib.util

import math
from dataclasses import dataclass
from typing import Any

MAX_SPEC_CHARS = 200
"""Longest agent spec accepted (characters)."""


class SpecError(ValueError):
    """An agent spec the server does not build; the message says what is allowed."""


@dataclass(frozen=True)
class IntOption:
    """An integer option ``lo..hi`` (both included)."""

    lo: int
    hi: int

    def check(self, agent: str, key: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not self.lo <= value <= self.hi:
            shown = repr(value) if isinstance(value, (int, float)) else "that value"
            raise SpecError(f"option {key!r} of agent {agent!r} must be an int {self.lo}..{self.hi} "
                            f"on this server, got {shown}")

    def describe(self) -> dict:
        return {"type": "int", "min": self.lo, "max": self.hi}


@dataclass(frozen=True)
class FloatOption:
    """A finite number ``lo..hi`` (both included)."""

    lo: float
    hi: float

    def check(self, agent: str, key: str, value: Any) -> None:
        ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
              and self.lo <= value <= self.hi)
        if not ok:
            shown = repr(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "that value"
            raise SpecError(f"option {key!r} of agent {agent!r} must be a number {self.lo:g}..{self.hi:g} "
                            f"on this server, got {shown}")

    def describe(self) -> dict:
        return {"type": "number", "min": self.lo, "max": self.hi}


@dataclass(frozen=True)
class Choice:
    """One of a few words. A refused value is not echoed: it may be a path."""

    values: tuple[str, ...]

    def check(self, agent: str, key: str, value: Any) -> None:
        if value not in self.values:
            raise SpecError(f"option {key!r} of agent {agent!r} must be one of "
                            f"{', '.join(map(repr, self.values))} on this server (it loads no file named by a "
                            "request; shipped models are named 'default' or 'model')")

    def describe(self) -> dict:
        return {"type": "choice", "values": list(self.values)}


MAX_ITERATIONS = 20000
"""Most search iterations per decision (``ismcts``, ``exit-search``, ``guided``): about 1 s of one core."""
MAX_WORLDS = 256
"""Most PIMC worlds per decision."""

_ROLLOUT = {"rollout": Choice(("heuristic", "random")), "epsilon": FloatOption(0.0, 1.0),
            "rollout_backend": Choice(("auto", "numba", "python"))}

ALLOWED: dict[str, dict[str, Any]] = {
    "random": {},
    "heuristic": {},
    "pimc": {"worlds": IntOption(1, MAX_WORLDS), "solver_tricks": IntOption(0, 3), "rollouts": IntOption(1, 8),
             **_ROLLOUT, "backend": Choice(("auto", "python", "numba")), "inference": Choice(("uniform", "model"))},
    "ismcts": {"iterations": IntOption(1, MAX_ITERATIONS), "c": FloatOption(0.0, 10.0), **_ROLLOUT,
               "inference": Choice(("uniform", "model")), "backend": Choice(("python", "numba")),
               "scoring": Choice(("team", "individual")), "max_depth": IntOption(0, 28), "trees": IntOption(1, 16)},
    "neural": {"path": Choice(("default",))},
    "exit": {"path": Choice(("default",))},
    "policy": {"path": Choice(("default",))},
    "exit-search": {"path": Choice(("default",)), "iterations": IntOption(1, MAX_ITERATIONS),
                    "c": FloatOption(0.0, 10.0), "w": FloatOption(0.0, 100.0),
                    "backend": Choice(("auto", "numba", "python")),
                    "rollout_backend": Choice(("auto", "numba", "python"))},
    "guided": {"path": Choice(("default",)), "iterations": IntOption(1, MAX_ITERATIONS),
               "batch": IntOption(1, 256), "c": FloatOption(0.0, 10.0), "lam": FloatOption(0.0, 1.0),
               "fpu": FloatOption(0.0, 1.0)},
}
"""Agent names a request may use, and for each its options with their bounds. Options not
listed (``threads``; ``openspiel``'s bots) are the server's own business and refused."""


def allowed_agents() -> list[str]:
    """The agent names a request may use, sorted."""
    return sorted(ALLOWED)


NEEDS: dict[str, str] = {"exit": "torch", "exit-search": "torch"}
"""Served agents whose module imports a package of an extra (torch: the ``train`` extra),
by agent name; ``tests/serve/test_api.py`` checks that these, and only these, fail to
import without it."""


def unavailable_agents() -> dict[str, dict[str, str]]:
    """Served agents that cannot run on this install, for ``GET /api/agents``: name ->
    ``{"needs": PACKAGE, "message": ...}``, e.g. ``exit`` and ``exit-search`` without torch.

    Looks the packages of :data:`NEEDS` up without importing them
    (``importlib.util.find_spec``), so it is quick; the message is the one a request
    naming the agent gets (HTTP 400).
    """
    from twilight_env.util.extras import missing_message

    out = {}
    for name, package in NEEDS.items():
        try:
            found = importlib.util.find_spec(package) is not None
        except (ImportError, ValueError):  # a package blocked or half-imported counts as missing
            found = False
        if not found and name in ALLOWED:
            out[name] = {"needs": package, "message": f"agent {name!r} {missing_message(package)}"}
    return out


def describe() -> dict:
    """``{name: {option: {"type", "min"/"max" or "values"}}}`` for ``GET /api/agents``."""
    return {name: {k: o.describe() for k, o in opts.items()} for name, opts in sorted(ALLOWED.items())}


def check_allowed(spec: Any) -> str:
    """Check an agent spec against :data:`ALLOWED` without building anything.

    Args:
        spec: the spec from a request (``NAME`` or ``NAME:key=value,...``).

    Returns:
        The spec, stripped.

    Raises:
        SpecError: not a string, longer than :data:`MAX_SPEC_CHARS`, an agent or option
            not allowed, or a value outside its bounds. The message names the agent and
            option and says what is allowed; a refused text value is never echoed.
    """
    from twilight_env.agents.base import parse_spec

    names = ", ".join(allowed_agents())
    if not isinstance(spec, str) or not spec.strip():
        raise SpecError("an agent spec is a string such as 'heuristic' or 'pimc:worlds=16'; "
                        f"valid agents on this server: {names}")
    if len(spec) > MAX_SPEC_CHARS:
        raise SpecError(f"an agent spec has at most {MAX_SPEC_CHARS} characters, got {len(spec)}")
    name = spec.strip().partition(":")[0].strip()
    if name not in ALLOWED:
        raise SpecError(f"agent {name[:40]!r} is not served here; valid agents on this server: {names}")
    try:
        _, options = parse_spec(spec)
    except ValueError:
        raise SpecError(f"malformed options for agent {name!r}: write {name}:key=value,key=value; "
                        f"options: {', '.join(ALLOWED[name]) or 'none'}") from None
    for key, value in options.items():
        rule = ALLOWED[name].get(key)
        if rule is None:
            raise SpecError(f"agent {name!r} takes no option {key[:40]!r} on this server; "
                            f"its options: {', '.join(ALLOWED[name]) or 'none'}")
        rule.check(name, key, value)
    return spec.strip()
