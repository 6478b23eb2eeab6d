"""The agents a request of ``twilight serve`` may name: a server-side list with bounded options.

A request names agents by spec (``NAME`` or ``NAME:key=value,...``, as
:func:`twilight_env.agents.base.parse_spec` reads them), but the server builds only the agents and
option values listed in :data:`ALLOWED`, which comes from the agents' declarations
(:class:`twilight_env.agents.declaration.AgentDecl` ``served``, each option's ``serve``):
every integer option has a cap, every text option a short list of values, and no option
may name a file. A shipped model is named
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
from collections.abc import Mapping
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
"""Most search iterations per decision (``ismcts``, ``exit-search``, ``guided``): about 1 s of one
core; the agents' declarations cap ``iterations`` at this (``tests/serve/test_specs_declared.py``)."""
MAX_WORLDS = 256
"""Most PIMC worlds per decision (``pimc``'s declared cap of ``worlds``)."""

class _Allowed(Mapping):
    """``{name: {option: IntOption | FloatOption | Choice}}`` of the served agents, derived
    on every read from the agents' declarations (``served=True``; each option's ``serve``
    cap), so an agent declared later is served too."""

    @staticmethod
    def _served() -> dict:
        from twilight_env.agents.base import declarations

        return {name: d for name, d in declarations().items() if d.served}

    def __getitem__(self, name):
        return _rules(self._served()[name])

    def __iter__(self):
        return iter(self._served())

    def __len__(self):
        return len(self._served())

    def __contains__(self, name):
        return name in self._served()


def _rules(decl) -> dict[str, Any]:
    out = {}
    for key, opt in decl.served_options().items():
        if opt.type is int:
            out[key] = IntOption(int(opt.serve[0]), int(opt.serve[1]))
        elif opt.type is float:
            out[key] = FloatOption(float(opt.serve[0]), float(opt.serve[1]))
        else:
            out[key] = Choice(tuple(opt.serve))
    return out


ALLOWED: Mapping[str, dict[str, Any]] = _Allowed()
"""Agent names a request may use, and for each its options with their bounds: the agents
declared with ``served=True`` and their options declared with a ``serve`` cap
(:class:`twilight_env.agents.declaration.Option`). Options without one (``threads``;
``openspiel``'s bots) are the server's own business and refused."""


def allowed_agents() -> list[str]:
    """The agent names a request may use, sorted."""
    return sorted(ALLOWED)


class _Needs(Mapping):
    """``{name: package}`` of the served agents whose module imports a package of an extra,
    from their declarations (``needs``)."""

    @staticmethod
    def _needs() -> dict[str, str]:
        from twilight_env.agents.base import declarations

        return {name: d.needs for name, d in declarations().items() if d.served and d.needs}

    def __getitem__(self, name):
        return self._needs()[name]

    def __iter__(self):
        return iter(self._needs())

    def __len__(self):
        return len(self._needs())


NEEDS: Mapping[str, str] = _Needs()
"""Served agents whose module imports a package of an extra (torch: the ``train`` extra),
by agent name, from their declarations (``needs="torch"``: ``exit``, ``exit-search``);
``tests/serve/test_api.py`` checks that these, and only these, fail to import without it."""


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
    return {name: {k: o.describe() for k, o in ALLOWED[name].items()} for name in allowed_agents()}


def check_allowed(spec: Any) -> str:
    """Check an agent spec against :data:`ALLOWED` without building anything.

    Args:
        spec: the spec from a request (``NAME`` or ``NAME:key=value,...``).

    Returns:
        The spec, stripped.

    Raises:
        SpecError: not a string, longer than :data:`MAX_SPEC_CHARS`, an agent or option
            not allowed, or a value outside its bounds. The message names the agent and
            option and says what is allowed; a refused text value is never echoed. Also a
            rule between two options broken (``ismcts:trees=2`` needs ``backend=numba``).
    """
    from twilight_env.agents.base import agent_name, declaration, parse_spec

    names = ", ".join(allowed_agents())
    if not isinstance(spec, str) or not spec.strip():
        raise SpecError("an agent spec is a string such as 'heuristic' or 'pimc:worlds=16'; "
                        f"valid agents on this server: {names}")
    if len(spec) > MAX_SPEC_CHARS:
        raise SpecError(f"an agent spec has at most {MAX_SPEC_CHARS} characters, got {len(spec)}")
    name = agent_name(spec)
    if name not in ALLOWED:
        raise SpecError(f"agent {name[:40]!r} is not served here; valid agents on this server: {names}")
    try:
        _, options = parse_spec(spec)
    except ValueError:
        raise SpecError(f"malformed options for agent {name!r}: write {name}:key=value,key=value; "
                        f"options: {', '.join(ALLOWED[name]) or 'none'}") from None
    rules = ALLOWED[name]
    for key, value in options.items():
        rule = rules.get(key)
        if rule is None:
            raise SpecError(f"agent {name!r} takes no option {key[:40]!r} on this server; "
                            f"its options: {', '.join(rules) or 'none'}")
        rule.check(name, key, value)
    try:  # the rules between options (Option.requires, at_most): words and numbers already allowed above
        declaration(name).check_options(options)
    except ValueError as e:
        raise SpecError(str(e)) from None
    return spec.strip()
