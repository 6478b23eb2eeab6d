"""The agent protocol, agent specs and the deal runner.

Every agent satisfies one small protocol::

    class Agent(Protocol):
        name: str
        def act(self, infoset: InfoSet, legal_actions: tuple[int, ...], rng: np.random.Generator) -> int: ...

and may add optional members (``OPTIONAL_MEMBERS``; callers read them with
:func:`optional_member`, which gives the default when one is absent or None):

| member | default | meaning |
|---|---|---|
| ``reset() -> None`` | none | called before each deal |
| ``stateless: bool`` | False | the agent keeps no state between decisions, so one instance may play many deals at once (``twilight_env.experiments.common.play_lockstep``) |
| ``act_batch(infosets, legal_actions_list) -> list[int]`` | none | decides many positions in one call, one legal action per position, the same as ``act`` on each would (the ``neural`` agent's one forward pass); see :class:`BatchAgent` |

Agents see only the :class:`~twilight_env.rules.infoset.InfoSet` (never the true state) and
return an action in the encoding of ``docs/API.md``, Actions (0..27 card ids, 28..30 requests).

Agents are built from spec strings usable on the command line: ``NAME`` or
``NAME:key=value,key=value``, e.g. ``random``, ``heuristic``, ``pimc:worlds=32``,
``ismcts:iterations=1000``, ``neural:path=run/ckpt.pt``, ``openspiel:ismcts:iterations=50``
(OpenSpiel's bots: the bot's name, then its options).

Each agent's module declares it once, at its end (:func:`declare` with an
:class:`~twilight_env.agents.declaration.AgentDecl`: name, factory, options with their
types, defaults, bounds and server caps, whether it reads the shipped weights). The
registry (:func:`declarations`, :data:`AGENTS`), :func:`parse_spec`, the valid agents that
errors list, the server's allow-list and the responder's targets are derived from the
declarations. Declarations are read from the modules' source on first use, so listing
agents imports no agent module (nor torch); a module is imported when its agent is
built. Higher layers make their modules' declarations known when their package is
imported (:func:`declare_source`). :func:`register` or :func:`declare` adds your own
agent; :func:`make_agent` parses a spec and builds the agent.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import os
import sys
import threading
import warnings
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np

from twilight_env.rules.cards import deck_words
from twilight_env.rules.engine import ACTION_TYPES, NEW_MOON, NUM_TRICKS, DealState, action_or_none
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents.declaration import NAME_CHARS, AgentDecl, Option, check_name, read_declarations


@runtime_checkable
class Agent(Protocol):
    """What every agent provides (see the module docstring)."""

    name: str

    def act(self, infoset: InfoSet, legal_actions: tuple[int, ...], rng: np.random.Generator) -> int:
        ...


@runtime_checkable
class BatchAgent(Agent, Protocol):
    """An agent that also decides many positions at once (the optional members in the
    module docstring); ``optional_member(agent, "act_batch")`` is how callers ask."""

    stateless: bool

    def act_batch(self, infosets: Sequence[InfoSet], legal_actions_list: Sequence[tuple[int, ...]]) -> list[int]:
        ...


OPTIONAL_MEMBERS: dict[str, object] = {"reset": None, "stateless": False, "act_batch": None}
"""The optional members of the agent protocol and the value :func:`optional_member` gives
when an agent lacks one."""


def optional_member(agent, name: str):
    """An optional protocol member of ``agent``, or its default when absent or None.

    Args:
        agent: any object with the :class:`Agent` protocol.
        name: one of ``OPTIONAL_MEMBERS``: ``"reset"`` (a method or None), ``"stateless"``
            (a bool, False by default), ``"act_batch"`` (a method or None).

    Raises:
        ValueError: on a name that is not an optional member, listing them.
    """
    try:
        default = OPTIONAL_MEMBERS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not an optional agent member; they are "
                         f"{', '.join(OPTIONAL_MEMBERS)}") from None
    value = getattr(agent, name, None)
    if value is None:
        return default
    return bool(value) if name == "stateless" else value


_DECLS: dict[str, AgentDecl] = {}
_SOURCES: dict[str, Path] = {}  # module -> its file, whose declarations are read on first use
_READ: set[str] = set()  # modules of _SOURCES already read
_WARNED: set[str] = set()  # deprecated names warned about in this process
_READING = threading.RLock()  # held while sources are read


def declare(*decls: AgentDecl) -> None:
    """Register agent declarations, replacing any of the same name (the statement each
    agent's module ends with; see :mod:`twilight_env.agents.declaration`).

    Raises:
        ValueError: an argument that is not an :class:`AgentDecl`.
    """
    for decl in decls:
        if not isinstance(decl, AgentDecl):
            raise ValueError(f"declare() takes AgentDecl(...) arguments, got {decl!r}")
        f = decl.factory
        module = f.partition(":")[0] if isinstance(f, str) else getattr(f, "__module__", "") or ""
        attr = getattr(f, "__name__", "")
        if (not isinstance(f, str) and module in _SOURCES and attr
                and getattr(sys.modules.get(module), attr, None) is f):
            # a module whose source is read: keep its factory by name, as the source read
            # gives it, so the registry is the same whichever happened first
            decl = dataclasses.replace(decl, factory=f"{module}:{attr}", module=module)
        elif not decl.module:
            decl = dataclasses.replace(decl, module=module)
        _DECLS[decl.name] = decl


def declare_source(module: str, path: str | Path | None = None) -> None:
    """Make the declarations of ``module`` known without importing it: its source is read
    (:func:`twilight_env.agents.declaration.read_declarations`) on first use of the
    registry, and the module is imported only when one of its agents is built. A higher
    layer calls this for its own modules when its package is imported (e.g.
    ``twilight_env.training`` for ``respond``), so this layer names nothing above it.

    Args:
        module: the module's dotted name.
        path: its ``.py`` file (default: found with :func:`importlib.util.find_spec`,
            which imports only its parent package).

    Raises:
        ValueError: a module that cannot be found.
    """
    if path is None:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.origin:
            raise ValueError(f"no module {module!r} to read agent declarations from")
        path = spec.origin
    _SOURCES.setdefault(module, Path(path))


def _own_sources() -> None:
    """Add this package's modules (``agents/*.py``) to the sources read on first use."""
    package = __name__.rpartition(".")[0]
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if not path.name.startswith("__"):
            _SOURCES.setdefault(f"{package}.{path.stem}", path)


_own_sources()

#: Entry point group through which installed packages (this one's higher layers, and
#: plugins) name the modules that declare agents: ``name = "package.module"``. Each module's
#: source is read like this package's own, so ``make_agent("respond:...")`` works without
#: importing its layer first, and this layer still names nothing above it.
ENTRY_POINT_GROUP = "twilight_env.agents"
_PLUGINS_READ = False


def _plugin_sources() -> None:
    """Add the modules named in the :data:`ENTRY_POINT_GROUP` entry points of the installed
    distributions to the sources read on first use (once per process). A module that cannot
    be found is skipped with a warning naming it (a broken plugin must not hide the others)."""
    global _PLUGINS_READ
    if _PLUGINS_READ:
        return
    _PLUGINS_READ = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        module = ep.value.partition(":")[0].strip()
        if module in _SOURCES:
            continue
        try:
            declare_source(module)
        except (ImportError, ValueError) as exc:
            warnings.warn(f"agent declarations of entry point {ep.name!r} ({module}) cannot be "
                          f"read: {exc}", RuntimeWarning, stacklevel=2)


def declarations() -> dict[str, AgentDecl]:
    """Every declared agent, ``{name: AgentDecl}`` sorted by name: those of this package and
    of the modules a higher layer named with :func:`declare_source`, read from their source
    on first use (no agent module is imported), and those :func:`declare`'d since.

    Raises:
        ValueError: a declaration written with something other than literals.
    """
    _plugin_sources()
    if len(_READ) < len(_SOURCES):
        with _READING:  # one thread reads; the others wait for the whole table
            for module, path in list(_SOURCES.items()):
                if module in _READ:
                    continue
                for decl in read_declarations(path, module):
                    _DECLS.setdefault(decl.name, decl)  # an import's declare() (a real factory) wins
                _READ.add(module)
    return {name: _DECLS[name] for name in sorted(_DECLS)}


def declaration(name: str) -> AgentDecl:
    """The declaration of agent ``name``.

    Raises:
        ValueError: an unknown name (listing the valid ones).
    """
    decls = declarations()
    try:
        return decls[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown agent {name!r}; valid agents: {', '.join(decls)}") from None


class _Table(MutableMapping):
    """``name -> factory`` (a callable or ``"module:attribute"``), a view of the declarations.

    Setting a name declares it with that factory (keeping the rest of an existing
    declaration); deleting a name removes its declaration."""

    def __getitem__(self, name):
        decl = declarations().get(name)
        if decl is None:
            raise KeyError(name)
        return decl.factory

    def __setitem__(self, name, factory):
        old = declarations().get(name)
        declare(dataclasses.replace(old, factory=factory, module="") if old else AgentDecl(check_name(name), factory))

    def __delitem__(self, name):
        declarations()
        del _DECLS[name]

    def __iter__(self):
        return iter(declarations())

    def __len__(self):
        return len(declarations())

    def __repr__(self):
        return f"AGENTS({dict(self)!r})"


AGENTS: MutableMapping[str, str | Callable[..., Agent]] = _Table()
"""The registry as ``name -> factory`` (a callable, or ``"module:attribute"`` naming it), a
view of :func:`declarations`: each agent's module declares it once
(:class:`~twilight_env.agents.declaration.AgentDecl`), and its module (and torch, for
``exit``) is imported only when the agent is built. Setting an entry declares an agent
with that factory; :func:`register` does the same as a decorator."""
_REGISTRY = AGENTS  # the same table, under the name earlier versions used


def register(name: str):
    """Class or function decorator: make ``name`` buildable by :func:`make_agent` (and so
    by every command and study), replacing any agent of that name. For options, caps or
    serving, :func:`declare` an :class:`AgentDecl` instead.

    Raises:
        ValueError: a name that is empty or holds a character other than letters,
            digits, ``_``, ``.`` and ``-``.
    """
    check_name(name)

    def deco(factory):
        AGENTS[name] = factory
        return factory
    return deco


def available_agents() -> list[str]:
    """Names accepted as the first part of an agent spec (every declared agent), sorted."""
    return list(declarations())


def agent_name(spec: str) -> str:
    """The agent name of a spec, its part before the first ``:`` (``"pimc:worlds=8"`` ->
    ``"pimc"``), stripped; not checked against the registry."""
    return spec.strip().partition(":")[0].strip()


def agent_factory(name: str) -> Callable[..., Agent]:
    """The factory of a registered agent, importing its module on first use.

    Raises:
        ValueError: an unknown name (listing the valid ones).
        ImportError: the agent's module cannot be imported here (a missing optional
            dependency); for a package of an extra (torch for ``exit``, ``exit-search``
            and ``respond``) the message names the package and the extra's install command.
    """
    entry = declaration(name).factory
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        try:
            loaded = importlib.import_module(module)
        except ModuleNotFoundError as e:
            from twilight_env.util.extras import EXTRA_OF, missing_message

            package = (e.name or "").partition(".")[0]
            if package not in EXTRA_OF:
                raise
            instead = declaration(name).replaced_by
            hint = (f"; {instead!r} plays the same network without it" if instead and package == "torch"
                    and not declaration(instead).needs else "")
            raise ImportError(f"agent {name!r} {missing_message(package)}{hint}", name=package) from e
        return getattr(loaded, attr)
    return entry


def _parse_value(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict]:
    """Split ``"name:k=v,k=v"`` into ``(name, {k: v})`` with ints, floats and bools converted.

    Raises:
        ValueError: on a malformed spec (a part that is not ``key=value``, naming the
            agent's options; a bare word that is the name of one of its options, a value
            forgotten; an option given twice) or an unknown agent name (listing the valid ones).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string like 'pimc:worlds=32', got {spec!r}; "
                         f"valid agents: {', '.join(available_agents())}")
    name, _, rest = spec.strip().partition(":")
    decl = declarations().get(name)
    if decl is None:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; valid agents: {', '.join(available_agents())}")
    if decl.replaced_by is not None and name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"agent name {name!r} is deprecated, use {decl.replaced_by!r} (docs/API.md, Agents); "
                      f"{name!r} still builds the agent it built before", DeprecationWarning, stacklevel=2)
    kwargs = {}
    lead = decl.leading_option
    if lead is not None and rest and "=" not in rest.partition(":")[0].partition(",")[0]:
        # NAME:WORD[:k=v,...], e.g. openspiel:BOT:k=v -- the leading option's value first
        word, _, rest = rest.partition(":")
        kwargs[lead] = word.strip()
    if rest:
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                if decl.bare_option is not None and not eq:  # NAME:default / NAME:PATH shorthand
                    if decl.option(part.strip()) is not None:  # an option's name: its value was forgotten
                        raise ValueError(f"bad option {part!r} in agent spec {spec!r}: {part.strip()} is an option of "
                                         f"{name}; write {part.strip()}=VALUE (a file of that name: "
                                         f"{decl.bare_option}={part.strip()})")
                    kwargs[decl.bare_option] = part
                    continue
                options = ", ".join(o.name for o in decl.options) or "none"
                raise ValueError(f"bad option {part!r} in agent spec {spec!r}; write key=value "
                                 f"(agent {name!r} options: {options})")
            key = key.strip()
            if key in kwargs:
                raise ValueError(f"option {key!r} is given twice in agent spec {spec!r}; give it once")
            kwargs[key] = _parse_value(value.strip())
    return name, kwargs


def _spec_value(value) -> str:
    """An option's value as a spec writes it (``true``/``false`` for a bool; :func:`repr` of
    a float, so :func:`parse_spec` reads the same float back)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _no_option_message(name: str, key: str, given: dict, options: Sequence[str]) -> str:
    """The error text for an option ``key`` that agent ``name`` does not have, listing its
    ``options``: ``"agent 'respond' has no option 'rollouts'; its options: target, ..."``. When
    a spec held in one of the agent's options takes ``key`` (``respond:target=pimc:worlds=8,rollouts=2``,
    where ``rollouts`` was meant for the target), the text adds the spelling that gives it to
    the held spec (``target=pimc:worlds=8;rollouts=2``); for a key that is a path and an
    option joined by ``:`` (``mmd:run:temperature=0``), the spelling with ``,``.

    Args:
        name: the agent. key: the option it does not have. given: the spec's options
            (``{key: value}`` as :func:`parse_spec` gives them). options: the agent's options.
    """
    text = f"agent {name!r} has no option {key!r}; its options: {', '.join(options) or 'none'}"
    try:
        decl = declaration(name)
    except ValueError:
        return text
    head, colon, tail = key.rpartition(":")
    if colon and head and decl.option(tail) is not None:  # mmd:run:temperature=0, ':' for ','
        return f"{text}; options are separated by ',': {name}:{head},{tail}={_spec_value(given[key])}"
    held_options = [o.name for o in decl.options if o.holds == "spec"]
    for opt in held_options:
        held = given.get(opt)
        try:
            takes = isinstance(held, str) and declaration(parse_spec(held.replace(";", ","))[0]).option(key) is not None
        except ValueError:
            continue
        if takes:
            meant = f"{opt}={held}{';' if ':' in held else ':'}{key}={_spec_value(given[key])}"
            return f"{text}; if {key} is the {opt}'s option, write the {opt}'s options after ';': {meant}"
    return text


def canonical_spec(spec: str) -> str:
    """One spelling per agent: ``spec`` with every declared option's default filled in,
    the options in declared order, then undeclared ones sorted by key (an agent declared
    outside this package may take options its declaration does not list; this package's
    agents declare all of theirs, so an undeclared option of one of them is refused, as
    :func:`make_agent` refuses it).

    Two specs build the same agent exactly when their canonical specs are equal: ``pimc``
    and ``pimc:worlds=32`` (32 is pimc's default) both give
    ``"pimc:worlds=32,solver_tricks=2,rollouts=1,..."``, and so does
    ``pimc:rollouts=1,worlds=32``. A number given as an int to a ``float`` option is
    written as the float (``c=1`` and ``c=1.0`` are one agent); a bare word or leading
    word is written as ``key=value`` (``mmd:run/policy.npz`` gives
    ``mmd:path=run/policy.npz,...``). An option whose default is None (the agent chooses)
    and that is not given is left out. The result is a valid spec, parsed by
    :func:`parse_spec` to the same agent and options. The agent is not built (no file is
    read and no agent module or torch imported). A path (an option declared
    ``holds="path"``) is written normalised (:func:`os.path.normpath`: ``./run/`` and
    ``run`` are one path; a relative and an absolute spelling of one file stay two), and
    an option that holds another agent's spec (``respond``'s ``target`` and ``model``,
    ``holds="spec"``) is written as that spec's canonical spec, its commas as ``;`` (a
    ``respond`` held in a ``respond`` is kept as written: one level of ``;`` cannot tell
    its options from the outer one's).

    Args:
        spec: an agent spec, e.g. ``"pimc:worlds=8"``.

    Returns:
        ``"NAME"`` or ``"NAME:key=value,..."``, a string.

    Raises:
        ValueError: a malformed spec or unknown agent (as :func:`parse_spec`), or a
            declared option's value of the wrong type or out of bounds
            (:meth:`AgentDecl.check_options`, naming the option and what it takes), or an
            option this package's agent does not have (naming its options); the same for
            a spec held in an option (checked as its own spec; one written ``pimc;worlds=8``
            is refused naming ``pimc:worlds=8``).
    """
    name, given = parse_spec(spec)
    decl = declaration(name)
    decl.check_options(given)
    if decl.module.startswith("twilight_env."):  # the package's agents declare every keyword of their factory
        for k in given:
            if decl.option(k) is None:
                raise ValueError(_no_option_message(name, k, given, [o.name for o in decl.options]))
    opts = {}
    for o in decl.options:
        value = given.get(o.name, o.default)
        if o.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if o.holds == "spec" and isinstance(value, str):
            value = _canonical_nested(value, f"{name} option {o.name}", (name, o.name) if o.exact_target else None)
        elif o.names_path(value):
            value = os.path.normpath(value)
            value = value if o.names_path(value) else os.path.join(".", value)  # ./model is a file, model a word
        if value is not None:
            opts[o.name] = value
    opts.update((k, given[k]) for k in sorted(given) if decl.option(k) is None)
    return name + (":" + ",".join(f"{k}={_spec_value(v)}" for k, v in opts.items()) if opts else "")


def check_nested_spelling(spec: str, where: str = "an option that holds an agent spec") -> None:
    """Refuse another agent's spec held in an option when its options are written
    ``NAME;key=value`` (the ``;`` before the ``:``), naming the spelling that was meant.

    Raises:
        ValueError: ``"WHERE writes the agent's options after its name and ':', separated
            by ';': 'pimc:worlds=8', not 'pimc;worlds=8'"``.
    """
    if isinstance(spec, str) and ";" in spec and (":" not in spec or spec.index(";") < spec.index(":")):
        raise ValueError(f"{where} writes the agent's options after its name and ':', separated by ';': "
                         f"{spec.replace(';', ':', 1)!r}, not {spec!r}")


def exact_targets() -> tuple[str, ...]:
    """Agents declared ``exact_target`` (their action probabilities are known), sorted."""
    return tuple(name for name, decl in declarations().items() if decl.exact_target)


def check_exact_target(agent: str, option: str, spec: Any) -> None:
    """Raise ValueError (``"respond: the model must be an agent whose action probabilities are known
    (exit, ...), got model='ismcts'"``) unless ``spec``, held in an option declared ``exact_target``,
    names an agent in :func:`exact_targets` (its name only is read)."""
    exact = exact_targets()
    if not isinstance(spec, str) or agent_name(spec) not in exact:
        raise ValueError(f"{agent}: the {option} must be an agent whose action probabilities are known "
                         f"({', '.join(exact)}; the networks at any temperature), got {option}={spec!r}")


def _canonical_nested(spec: str, where: str, exact: tuple[str, str] | None = None) -> str:
    """The :func:`canonical_spec` of another agent's spec held in an option (``NAME:key=value``
    with its commas written ``;``, as ``respond:target=pimc:worlds=8;rollouts=2``), or
    ``spec`` as written if it holds a spec of its own (a ``respond`` inside a ``respond``:
    one level of ``;`` cannot tell the two apart). ``exact``: ``(agent, option)`` of an option
    declared ``exact_target``: :func:`check_exact_target` first, as the agent checks it.

    Raises:
        ValueError: as :func:`canonical_spec` for the held spec, a held spec written
            ``NAME;key=value`` (:func:`check_nested_spelling`), or one :func:`check_exact_target` refuses.
    """
    check_nested_spelling(spec, where)
    if exact is not None:
        check_exact_target(*exact, spec)
    flat = spec.replace(";", ",")
    if any(o.holds == "spec" for o in declaration(parse_spec(flat)[0]).options):
        return spec
    return canonical_spec(flat).replace(",", ";")


def same_agent(a: str, b: str) -> bool:
    """Whether two agent specs build the same agent: their :func:`canonical_spec` are equal
    (``same_agent("pimc", "pimc:worlds=32")`` is True, 32 being pimc's default). A spec
    that does not parse here (e.g. a spec a finished run stored, of an agent this
    installation does not declare) is compared as written, stripped.

    Args:
        a, b: agent spec strings.

    Returns:
        A bool; never raises for two strings.
    """
    def key(spec: str) -> str:
        try:
            return canonical_spec(spec)
        except ValueError:
            return spec.strip()

    return key(a) == key(b)


def shipped_weight_agents() -> tuple[str, ...]:
    """Agents that may read the shipped weights (``agents/weights``), sorted: those
    declared with ``shipped_weights=True``."""
    return tuple(n for n, d in declarations().items() if d.shipped_weights)


def reads_shipped_weights(spec: str) -> bool:
    """Whether an agent spec may read the shipped weights (``twilight_env/agents/weights``).

    True for an agent declared with ``shipped_weights`` (the network agents, and the
    responder ``respond``, whose target may be a shipped network) unless it names its own
    weights (a ``path`` other than ``default``), and for any option set to ``default`` or
    ``model`` (e.g. ``inference=model``); False for the rest, e.g. ``heuristic``,
    ``ismcts:backend=numba`` or ``policy:runs/net.npz``. Runs that resume
    (:class:`twilight_env.experiments.common.RunCheckpoint`) use it to refuse mixing
    networks when the shipped weights change between sittings.

    Raises:
        ValueError: a malformed spec or an unknown agent (as :func:`parse_spec`).
    """
    name, kwargs = parse_spec(spec)
    if declarations()[name].shipped_weights and kwargs.get("path", "default") == "default":
        return True
    return any(isinstance(v, str) and v in ("default", "model") for v in kwargs.values())


def check_number(name: str, value, low: float | None = None, high: float | None = None,
                 agent: str | None = None) -> float:
    """``float(value)`` if it is a finite int or float (not a bool) in ``[low, high]``.

    NaN passes every comparison (``nan >= 0`` is False, so ``not nan < 0``), so range
    checks alone let it through; this helper refuses NaN and ±inf first.

    Args:
        name: the option's name, for the message (e.g. ``"c"``).
        low, high: inclusive bounds (None: unbounded on that side).
        agent: the agent's name, for the message.

    Raises:
        ValueError: naming the option, the allowed range and the value.
    """
    import math

    if (isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
            or not math.isfinite(value) or (low is not None and value < low) or (high is not None and value > high)):
        where = f"{agent} option {name}" if agent else name
        if low is not None and high is not None:
            allowed = f"a finite number in [{low:g}, {high:g}]"
        elif low is not None:
            allowed = f"a finite number >= {low:g}"
        elif high is not None:
            allowed = f"a finite number <= {high:g}"
        else:
            allowed = "a finite number"
        raise ValueError(f"{where} must be {allowed}, got {value!r}")
    return float(value)


class AgentSpecError(ValueError):
    """A ``ValueError`` from :func:`make_agent` whose message ends with the agent spec it
    refused, ``(agent spec '...')``; :attr:`spec` holds that spec. A spec held in another
    (``respond``'s ``target``) that is refused keeps its own spec named, not the outer one."""

    def __init__(self, message: str, spec: str):
        super().__init__(message)
        self.spec = spec


def make_agent(spec: str) -> Agent:
    """Build an agent from a spec string (see the module docstring).

    Every file an option names (``inference=FILE``, ``path=FILE``) is loaded and checked
    here, so a bad file fails when the agent is built, before any play.

    Raises:
        ValueError: unknown agent (the message lists valid agents), unknown option (the
            message lists the agent's options), a bad option value (a declared option's
            type and bounds are checked first, :meth:`AgentDecl.check_options`: the message
            names the agent, the option and what it takes; NaN and inf are refused for
            every number), or a file an option names that is missing or not a checkpoint
            of the right kind (naming the option and the file). An error of the option
            checks or the agent's own checks is an :class:`AgentSpecError` ending with
            ``(agent spec '...')``, so it names the agent too.
    """
    name, kwargs = parse_spec(spec)
    factory = agent_factory(name)
    params = inspect.signature(factory).parameters
    allowed = [p for p in params if p not in ("self",)]
    has_varkw = any(p.kind == p.VAR_KEYWORD for p in params.values())
    for k in kwargs:
        if k not in params and not has_varkw:
            raise ValueError(_no_option_message(name, k, kwargs, allowed))
    try:
        declaration(name).check_options(kwargs)  # type and bounds of every declared option
    except ValueError as e:
        raise AgentSpecError(f"{e} (agent spec {spec.strip()!r})", spec.strip()) from None
    try:
        agent = factory(**kwargs)
    except TypeError as e:
        raise ValueError(f"bad options for agent {name!r}: {e}") from None
    except AgentSpecError:  # a held agent's spec (respond's target) refused: it is named already
        raise
    except ValueError as e:  # the agent's own checks: say which spec they refused
        text = str(e) if len(e.args) == 1 and isinstance(e.args[0], str) else None
        if text is None:
            raise
        if spec.strip() not in text:  # a message that writes the spec out already keeps its words
            text = f"{text} (agent spec {spec.strip()!r})"
        raise AgentSpecError(text, spec.strip()) from e
    for k, v in kwargs.items():  # a last guard for options an agent leaves unchecked: no NaN or inf
        if isinstance(v, float) and not np.isfinite(v):
            raise AgentSpecError(f"agent {name!r} option {k!r} must be a finite number, got {v!r} "
                                 f"(agent spec {spec.strip()!r})", spec.strip())
    if not getattr(agent, "name", None):
        agent.name = spec
    return agent


def _network_fact(agent, key: str):
    """An agent's attribute ``key``, else ``meta[key]`` (an NFSP file), else None."""
    value = getattr(agent, key, None)
    if value is None and isinstance(getattr(agent, "meta", None), dict):
        value = agent.meta.get(key)
    return value


def network_players(agent) -> int | None:
    """The player count (3 or 4) an agent's network was trained for, or None when the agent
    plays both: its ``num_players`` (the network agents, ``pimc`` and ``ismcts`` with an
    ``inference`` file, the search responder's target), else ``meta["num_players"]`` (an NFSP file)."""
    n = _network_fact(agent, "num_players")
    return None if n is None else int(n)


def _network_tricks(agent) -> int:
    """Tricks per deal of the deck an agent's network was trained on (7: the full deck, R2.3):
    its ``tricks``, else ``meta["tricks"]`` (an NFSP file)."""
    tricks = _network_fact(agent, "tricks")
    return NUM_TRICKS if tricks is None else int(tricks)


def check_specs(specs: Iterable[str], flag: str | None = None, num_players: int | None = None) -> list[str]:
    """Build every agent spec once, so a bad spec fails before any worker starts and
    before a run makes its output folder: building an agent loads and checks every file
    its options name (``inference=FILE``, ``path=FILE``) and refuses NaN or inf options.

    Args:
        specs: agent specs, e.g. ``["random", "pimc:worlds=32"]``.
        flag: the option that gave them (e.g. ``"--solo"``), named in the error.
        num_players: the player count of the run's deals (3 or 4), or None: not checked.

    Returns:
        The specs, stripped.

    Raises:
        ValueError: an unknown agent or option (the message lists the valid agents), a
            bad option value, a file an option names that is missing or not a checkpoint
            of its kind (naming the option and the file), an agent whose module cannot
            be imported (named, with the valid agents), or a network trained on a reduced
            deck (its ``tricks`` below 7: the commands that check their specs here deal the
            full deck, R2.3) or for the other player count than ``num_players``
            (:func:`network_players`); prefixed with ``flag`` when given.
    """
    out = []
    for spec in specs:
        try:
            name, _ = parse_spec(spec)  # ValueError listing the valid agents
            try:
                agent = make_agent(spec)
            except ImportError as e:
                raise ValueError(f"agent {name!r} (spec {spec!r}) cannot be built here: {e}; "
                                 f"valid agents: {', '.join(available_agents())}") from None
            tricks, players = _network_tricks(agent), network_players(agent)
            if tricks != NUM_TRICKS:  # the commands that check their specs here deal the full deck
                raise ValueError(f"agent spec {spec.strip()!r}: its network was trained on {deck_words(tricks)}, and "
                                 f"this command deals {deck_words(NUM_TRICKS)}: give a network trained on it "
                                 "(--tricks 7)")
            if num_players is not None and players is not None and players != num_players:
                raise ValueError(f"agent spec {spec.strip()!r}: its network was trained for {players} players, and "
                                 f"this run plays {num_players}-player deals: give a {num_players}-player network")
        except ValueError as e:
            if flag is None:
                raise
            raise ValueError(f"{flag}: {e}") from None
        out.append(spec.strip())
    return out


def agent_available(name: str) -> bool:
    """Whether an agent name can be built in this installation (e.g. ``"heuristic"``)."""
    try:
        check_specs([name])
    except ValueError:
        return False
    return True


def play_deal(state: DealState, agents: Sequence[Agent], rng: np.random.Generator,
              totals: Sequence[int] | None = None, target: int | None = None) -> DealState:
    """Play ``state`` to the end in place with one agent per seat, and return it.

    Args:
        state: a deal state (played forward in place).
        agents: 4 agents by seat. In 3 players ``agents[2]`` is ignored: the solo
            (``agents[0]``) decides for the new moon with its own information set (R7.3).
        rng: randomness for the agents.
        totals, target: optional match context passed into the information sets.

    Raises:
        ValueError: if an agent returns an illegal action (the message names the agent).
    """
    for a in agents:
        reset = optional_member(a, "reset")
        if reset is not None:
            reset()
    while not state.done:
        seat = state.deciding_seat
        info = InfoSet(state, seat, totals, target)
        legal = info.legal_actions
        apply_checked(state, agents[seat].act(info, legal, rng), legal, agents[seat], seat)
    return state


def apply_checked(state: DealState, action, legal, agent, seat: int) -> None:
    """Apply an agent's ``action`` to ``state`` if it is in ``legal``.

    ``action`` may be of any integer type :func:`twilight_env.rules.engine.as_action` reads (a
    Python int, a NumPy integer scalar, a 0-d integer array); a bool or a float is refused
    even where it equals a legal action.

    Raises:
        ValueError: naming the agent, its seat, the action and the legal actions.
    """
    value = action_or_none(action)  # 1.0 == 1 and True == 1: compare only integers
    if value is None or value not in legal:
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} at seat {seat} chose illegal action "
                         f"{action!r}; legal: {list(legal)} (an action is an int: {ACTION_TYPES})")
    state.apply(value)


__all__ = ["Agent", "AGENTS", "AgentDecl", "AgentSpecError", "BatchAgent", "Option", "agent_name", "declaration", "declarations",
           "declare", "declare_source", "network_players", "reads_shipped_weights", "shipped_weight_agents", "OPTIONAL_MEMBERS", "optional_member", "register", "make_agent",
           "parse_spec", "canonical_spec", "check_exact_target", "exact_targets", "check_nested_spelling", "same_agent", "agent_factory",
           "check_number", "available_agents", "play_deal", "apply_checked", "NEW_MOON"]
