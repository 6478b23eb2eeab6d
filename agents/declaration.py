"""What an agent is, stated once: :class:`AgentDecl` and its :class:`Option` rows.

Each agent's module ends with its declaration, registered when the module is imported
(as OpenSpiel's game modules register their games)::

    declare(AgentDecl(
        name="pimc", factory=PIMCAgent, summary="perfect-information Monte Carlo",
        options=(Option("worlds", int, 32, low=1, serve=(1, 256)), ...)))

Everything that lists agents is derived from the declarations
(:mod:`twilight_env.agents.base`): the registry and :func:`~twilight_env.agents.base.parse_spec`,
the server's allow-list with its caps (``twilight_env.serve.specs``), the valid agents that
errors list, the agents that read the shipped weights, and the search responder's targets.

A declaration can also be read from a module's source without importing the module
(:func:`read_declarations`), so listing the agents imports neither the agents' modules
nor torch: the factory is then the ``"module:Name"`` of the name written in the
declaration, imported when the agent is first built. A declaration is therefore written
with literals only: strings, numbers, booleans, None, tuples, the builtin types ``int``,
``float``, ``str`` and ``bool``, :class:`Option` and :class:`AgentDecl`, and one bare name,
the factory.

This module imports only the standard library.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

NAME_CHARS = re.compile(r"[A-Za-z0-9_.-]+")
"""Characters of an agent name: no ``:``, ``,``, ``=`` or space, which separate a spec's parts."""

OPTION_TYPES = (int, float, str, bool)
"""The types an option may declare."""

HOLDS = ("", "path", "spec")
"""What a text option's value may name (:attr:`Option.holds`)."""


def check_name(name: Any) -> str:
    """``name`` if it can name an agent in a spec.

    Raises:
        ValueError: a name that is not a string, is empty or holds a character other than
            letters, digits, ``_``, ``.`` and ``-``.
    """
    if not isinstance(name, str) or not NAME_CHARS.fullmatch(name):
        raise ValueError(f"an agent name is letters, digits, '_', '.' and '-' (no ':', ',', '=' or space, which "
                         f"separate the parts of a spec), got {name!r}")
    return name


@dataclass(frozen=True)
class Option:
    """One option of an agent spec (``NAME:key=value``).

    Args:
        name: the option's key, the factory's keyword argument of that name.
        type: ``int``, ``float``, ``str`` or ``bool`` (an int also passes for ``float``).
        default: the factory's default (``None``: chosen by the agent, e.g. per variant).
        low, high: inclusive bounds of a number the agent accepts (None: unbounded).
        serve: what ``twilight serve`` accepts from a request, or None: the option is not
            served (refused in a request). For ``int``/``float`` a ``(low, high)`` pair, the
            server's cap; for ``str`` a tuple of the words allowed (never a file name:
            shipped models are ``"default"`` or ``"model"``).
        doc: one line for the documentation.
        holds: what a ``str`` option's value names, for code that compares or checks specs
            (:func:`twilight_env.agents.base.canonical_spec`, the run checkpoints' file
            digests): ``""`` (a plain value), ``"path"`` (a file or run folder the agent
            reads, unless the value is the default, ``""`` or one of :attr:`serve`'s words:
            :meth:`names_path`) or ``"spec"`` (another agent's spec, its commas written
            ``;``).
        requires: the other options a value other than this one's default needs, as
            ``((option, value), ...)``: ``Option("trees", int, 1, requires=(("backend",
            "numba"),))`` says that ``trees=2`` needs ``backend=numba``; a tuple of values
            is met by any of them (``("exact_tricks", (1, 2, 3))``). Checked by
            :meth:`AgentDecl.check_options` on the spec's values, defaults filled in.
        at_most: the name of another number option this one may not exceed (e.g. ``trees``
            at most ``iterations``), or None.
        choices: the words a ``str`` option takes (its default among them), e.g.
            ``("independent", "joint")``; None: any text.
        exact_target: on a ``holds="spec"`` option, True if the held spec must name an agent
            declared :attr:`AgentDecl.exact_target` (one whose action probabilities are known:
            ``respond``'s ``model``); checked by
            :func:`twilight_env.agents.base.canonical_spec` and by the agent.

    Raises:
        ValueError: a bad name or type, a ``serve`` value that does not fit the type, a
            ``holds`` other than ``""``, ``"path"`` and ``"spec"`` (or on a non-``str`` option),
            a ``requires`` that is not a tuple of ``(name, value)`` pairs, ``choices``
            that are not a non-empty tuple of words holding the default (on a ``str`` option),
            or ``exact_target`` on an option that does not hold a spec.
    """

    name: str
    type: type
    default: Any = None
    low: float | None = None
    high: float | None = None
    serve: tuple | None = None
    doc: str = ""
    holds: str = ""
    requires: tuple = ()
    at_most: str | None = None
    choices: tuple | None = None
    exact_target: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"an option name is a Python identifier, got {self.name!r}")
        if not isinstance(self.requires, tuple) or not all(
                isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], str) for r in self.requires):
            raise ValueError(f"option {self.name!r}: requires is a tuple of (option name, value) pairs, "
                             f"got {self.requires!r}")
        if self.at_most is not None and (not isinstance(self.at_most, str) or self.type not in (int, float)):
            raise ValueError(f"option {self.name!r}: at_most names another option, on a number option only, "
                             f"got {self.at_most!r}")
        if self.type not in OPTION_TYPES:
            raise ValueError(f"option {self.name!r}: type must be one of int, float, str, bool, got {self.type!r}")
        if self.choices is not None:
            if self.type is not str:
                raise ValueError(f"option {self.name!r}: choices on a str option only")
            if not isinstance(self.choices, tuple) or not self.choices or not all(isinstance(c, str) for c in self.choices):
                raise ValueError(f"option {self.name!r}: choices is a non-empty tuple of words, got {self.choices!r}")
            if self.default is not None and self.default not in self.choices:
                raise ValueError(f"option {self.name!r}: the default {self.default!r} is none of its choices {self.choices}")
        if self.exact_target is not False and (self.exact_target is not True or self.holds != "spec"):
            raise ValueError(f"option {self.name!r}: exact_target is True only on a holds='spec' option, "
                             f"got {self.exact_target!r} (holds={self.holds!r})")
        if self.holds not in HOLDS or (self.holds and self.type is not str):
            raise ValueError(f"option {self.name!r}: holds must be one of {', '.join(map(repr, HOLDS))} (path and spec "
                             f"on a str option only), got {self.holds!r}")
        if self.serve is None:
            return
        if not isinstance(self.serve, tuple) or not self.serve:
            raise ValueError(f"option {self.name!r}: serve must be None or a non-empty tuple, got {self.serve!r}")
        if self.type in (int, float):
            lo_hi = self.serve
            if (len(lo_hi) != 2 or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                                       for v in lo_hi) or lo_hi[0] > lo_hi[1]):
                raise ValueError(f"option {self.name!r}: serve of a number is (low, high), got {self.serve!r}")
        elif self.type is str:
            if not all(isinstance(v, str) for v in self.serve):
                raise ValueError(f"option {self.name!r}: serve of a text option is a tuple of words, got {self.serve!r}")
        else:
            raise ValueError(f"option {self.name!r}: a {self.type.__name__} option cannot be served")

    def names_path(self, value: Any) -> bool:
        """Whether ``value`` of this option names a file or folder: a ``holds="path"``
        option's string other than the default, ``""`` and the served words (``"default"``,
        ``"model"``, ``"uniform"``: the shipped files and the built-in choices)."""
        return (self.holds == "path" and isinstance(value, str) and value not in ("", self.default)
                and value not in (self.serve or ()))

    def allowed(self) -> str:
        """What the option takes, in words, for messages: ``"an integer >= 1"``,
        ``"a finite number in [0, 100]"``, ``"true or false"``, or for text ``"text: "`` and
        its :attr:`doc` (e.g. ``"text: 'auto', 'torch' or 'numpy'"``)."""
        if self.type is int:
            return _number_words("an integer", self.low, self.high)
        if self.type is float:
            return _number_words("a finite number", self.low, self.high)
        if self.type is bool:
            return "true or false"
        if self.choices:
            return f"one of {', '.join(self.choices)}"
        return f"text: {self.doc}" if self.doc else "text"

    def check(self, value: Any, agent: str = "") -> Any:
        """``value`` if the option takes it, as a spec's parser gives it (an int, a float,
        a bool or a string).

        ``None`` passes where the default is ``None`` (the agent chooses). An ``int``
        option takes an int (not a bool) within ``low``/``high``; a ``float`` option an
        int or a float (not a bool), finite (NaN and inf are refused), within
        ``low``/``high``; a ``bool`` option a bool; a ``str`` option a string.

        Args:
            value: the option's value.
            agent: the agent's name, for the message.

        Raises:
            ValueError: ``"<agent> option <name> must be <allowed>, got <value>"`` with
                :meth:`allowed`.
        """
        if value is None and self.default is None:
            return value
        if self.type is str:
            ok = isinstance(value, str) and (self.choices is None or value in self.choices)
        elif self.type is bool:
            ok = isinstance(value, bool)
        else:
            kinds = (int,) if self.type is int else (int, float)
            ok = (isinstance(value, kinds) and not isinstance(value, bool) and math.isfinite(value)
                  and (self.low is None or value >= self.low) and (self.high is None or value <= self.high))
        if not ok:
            where = f"{agent} option {self.name}" if agent else f"option {self.name}"
            raise ValueError(f"{where} must be {self.allowed()}, got {value!r}")
        return value


def _word(value: Any) -> str:
    """A value as a spec writes it: ``numba``, ``2``, ``true``; a tuple of values (any of them,
    :attr:`Option.requires`) as ``1, 2 or 3``."""
    if isinstance(value, tuple):
        words = [_word(v) for v in value]
        return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _meets(value: Any, needed: Any) -> bool:
    """Whether ``value`` is the value a rule needs (one of them, for a tuple)."""
    return value in needed if isinstance(needed, tuple) else value == needed


def _number_words(kind: str, low: float | None, high: float | None) -> str:
    """A number option's range in words: ``"an integer in 0..7"``, ``"a finite number >= 0"``."""
    integer = kind == "an integer"
    show = (lambda v: str(int(v))) if integer else (lambda v: f"{v:g}")
    if low is not None and high is not None:
        return f"{kind} in {show(low)}..{show(high)}" if integer else f"{kind} in [{show(low)}, {show(high)}]"
    if low is not None:
        return f"{kind} >= {show(low)}"
    if high is not None:
        return f"{kind} <= {show(high)}"
    return kind


@dataclass(frozen=True)
class AgentDecl:
    """The declaration of one agent: everything the package knows about it by name.

    Args:
        name: the spec's first part (:data:`NAME_CHARS`), e.g. ``"pimc"``.
        factory: the class or function that builds it, called with the spec's options as
            keyword arguments; or ``"module:attribute"`` naming it (imported when first built).
        summary: one line saying what the agent is.
        options: its options, in the factory's order (:class:`Option`).
        shipped_weights: True if the agent may read the shipped weights (``agents/weights``):
            a network agent whose ``path`` is ``default`` or absent, or an agent whose
            targets do (``respond``). Resumed runs compare those weights between sittings.
        bare_option: the option a bare word (no ``=``) sets, e.g. ``"path"`` for
            ``policy:default`` or ``neural:runs/x/checkpoint.pt``; None: a bare word is an error.
        leading_option: the option that may come first, ended by ``:``, e.g. ``"bot"`` for
            ``openspiel:ismcts:iterations=50``; None: no such part.
        served: True if ``twilight serve`` may build it (each served option says its cap).
        needs: the package of an extra the agent's module imports (e.g. ``"torch"``), or
            None; the server lists agents that need a missing package as unavailable.
        searches: True if one decision may search (seconds): the server runs it in its
            heavy pool.
        exact_target: True if the search responder (``respond``) can simulate the agent's
            policy exactly (its action probabilities are known).
        replaced_by: a deprecated name's replacement, e.g. ``"policy"``: the spec still
            builds the same agent as before, with a one-line :class:`DeprecationWarning`
            naming the replacement; None: a current name.
        family: the network an agent plays with (``"dmc"``, ``"exit"``), or None.

    Raises:
        ValueError: a bad name, factory, option list or flag (naming the field).
    """

    name: str
    factory: Callable[..., Any] | str
    summary: str = ""
    options: tuple[Option, ...] = ()
    shipped_weights: bool = False
    bare_option: str | None = None
    leading_option: str | None = None
    served: bool = False
    needs: str | None = None
    searches: bool = False
    exact_target: bool = False
    replaced_by: str | None = None
    family: str | None = None
    module: str = field(default="", compare=False)
    """The module that declared it (set by :func:`declare`), or ``""``."""

    def __post_init__(self):
        check_name(self.name)
        f = self.factory
        if isinstance(f, str):
            mod, sep, attr = f.partition(":")
            if not (sep and mod and attr.isidentifier()):
                raise ValueError(f"agent {self.name!r}: a factory string is 'module:attribute', got {f!r}")
        elif not callable(f):
            raise ValueError(f"agent {self.name!r}: factory must be callable or 'module:attribute', got {f!r}")
        if not isinstance(self.options, tuple) or not all(isinstance(o, Option) for o in self.options):
            raise ValueError(f"agent {self.name!r}: options must be a tuple of Option")
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"agent {self.name!r}: an option is declared twice: {names}")
        for key in ("bare_option", "leading_option"):
            v = getattr(self, key)
            if v is not None and v not in names:
                raise ValueError(f"agent {self.name!r}: {key} {v!r} is none of its options {names}")
        if self.served and self.needs is not None and not isinstance(self.needs, str):
            raise ValueError(f"agent {self.name!r}: needs must be a package name or None, got {self.needs!r}")
        if self.replaced_by is not None:
            check_name(self.replaced_by)
        for o in self.options:
            for other in [r[0] for r in o.requires] + ([o.at_most] if o.at_most else []):
                if other not in names or other == o.name:
                    raise ValueError(f"agent {self.name!r}: option {o.name!r} names {other!r}, which is none of "
                                     f"its other options {names}")

    def option(self, key: str) -> Option | None:
        """The option ``key``, or None."""
        return next((o for o in self.options if o.name == key), None)

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` if every declared one is of its type and within its bounds
        (:meth:`Option.check`) and the rules between options hold (:attr:`Option.requires`,
        :attr:`Option.at_most`, on the given values with the defaults filled in); keys the
        declaration does not list are left to the factory.

        Raises:
            ValueError: naming the agent, the option, what it takes and the value given; for
                a rule between options, both options and their values, e.g. ``"ismcts option
                trees=2 needs backend=numba (it is python); use trees=1 or backend=numba"``.
        """
        for key, value in options.items():
            declared = self.option(key)
            if declared is not None:
                try:
                    declared.check(value, self.name)
                except ValueError as e:
                    raise ValueError(f"{e}{self._semicolon_hint(declared, value)}") from None
        values = {o.name: options.get(o.name, o.default) for o in self.options}
        for o in self.options:
            value = values[o.name]
            if o.name in options and value != o.default:
                for other, needed in o.requires:
                    if not _meets(values[other], needed):
                        raise ValueError(
                            f"{self.name} option {o.name}={_word(value)} needs {other}={_word(needed)} "
                            f"(it is {_word(values[other])}); use {o.name}={_word(o.default)} or "
                            f"{other}={_word(needed)}")
            bound = values.get(o.at_most) if o.at_most else None
            if value is not None and bound is not None and value > bound:
                raise ValueError(f"{self.name} option {o.name}={_word(value)} must be at most "
                                 f"{o.at_most} (it is {_word(bound)})")
        return options

    def _semicolon_hint(self, declared: Option, value: Any) -> str:
        """For a number or bool option whose text value joins another option with ``;``
        (``worlds=8;rollouts=2``: ``;`` joins the options of a spec held in another), the
        ``,`` spelling to add to its error; else ``""``."""
        if declared.type is str or not isinstance(value, str) or ";" not in value:
            return ""
        rest = value.split(";")[1:]
        if not all(self.option(part.partition("=")[0].strip()) is not None for part in rest):
            return ""
        return f"; options are separated by ',': {declared.name}={','.join([value.split(';')[0], *rest])}"

    def served_options(self) -> dict[str, Option]:
        """``{key: Option}`` of the options a server request may set, in declared order."""
        return {o.name: o for o in self.options if o.serve is not None}


# ---------------------------------------------------------------------------------------------
# reading declarations from a module's source, without importing it
# ---------------------------------------------------------------------------------------------

_CALLS = {"AgentDecl": AgentDecl, "Option": Option}
_CONSTANTS = {"int": int, "float": float, "str": str, "bool": bool, "None": None, "True": True, "False": False}
DECLARE = "declare"
"""The name of the registering call a declaration statement is written with."""


def _literal(node: ast.AST, module: str, where: str):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, module, where) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand, module, where)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS:
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            raise ValueError(f"{where}: a declaration takes no *args or **kwargs")
        is_decl = node.func.id == "AgentDecl"

        def value(arg, is_factory):
            if is_factory and isinstance(arg, ast.Name) and arg.id not in _CONSTANTS:
                return f"{module}:{arg.id}"  # the factory, imported when the agent is first built
            return _literal(arg, module, where)

        args = [value(a, is_decl and i == 1) for i, a in enumerate(node.args)]
        kwargs = {k.arg: value(k.value, is_decl and k.arg == "factory") for k in node.keywords}
        return _CALLS[node.func.id](*args, **kwargs)
    raise ValueError(f"{where}: a declaration is written with literals, Option(...) and the factory's name; "
                     f"cannot read {ast.unparse(node)!r}")


def read_declarations(path: str | Path, module: str) -> list[AgentDecl]:
    """The declarations a module's source registers, read without importing the module.

    A declaration statement is a module-level ``declare(AgentDecl(...), ...)`` call. Its
    factory, a bare name in the source, becomes ``"module:Name"``.

    Args:
        path: the module's ``.py`` file.
        module: its dotted name, e.g. ``"twilight_env.agents.pimc"``.

    Returns:
        The declarations in source order (empty when the module declares none).

    Raises:
        OSError: the file cannot be read.
        ValueError: a declaration written with something other than literals (naming the
            file and line).
    """
    text = Path(path).read_text(encoding="utf-8")
    if DECLARE + "(" not in text:
        return []
    out = []
    for node in ast.parse(text, filename=str(path)).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == DECLARE:
            where = f"{path}:{node.lineno}"
            for arg in call.args:
                decl = _literal(arg, module, where)
                if not isinstance(decl, AgentDecl):
                    raise ValueError(f"{where}: declare() takes AgentDecl(...) arguments")
                out.append(_with_module(decl, module))
    return out


def _with_module(decl: AgentDecl, module: str) -> AgentDecl:
    from dataclasses import replace

    return replace(decl, module=module)


__all__ = ["AgentDecl", "DECLARE", "HOLDS", "NAME_CHARS", "OPTION_TYPES", "Option", "check_name", "read_declarations"]
