"""One declaration per agent (``twilight_env.agents.declaration``): everything that lists
agents comes from the declarations, and no other list of agent names is left in the package."""

from __future__ import annotations

import ast
import re
import inspect
import warnings
from pathlib import Path

import pytest

import twilight_env.experiments  # noqa: F401  (declares respond and openspiel, as the commands do)
from twilight_env import cli
from twilight_env.agents import base
from twilight_env.agents.declaration import AgentDecl, Option, read_declarations
from twilight_env.serve import pool, specs

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("exit", "exit-search", "guided", "heuristic", "ismcts", "mmd", "neural", "nfsp", "openspiel", "pimc", "policy",
           "random", "respond")


class Dummy:
    """An agent declared by a test only."""

    def __init__(self, depth: int = 3, mood: str = "calm"):
        self.name, self.depth, self.mood = "dummy", depth, mood

    def act(self, infoset, legal_actions, rng):
        return legal_actions[0]


@pytest.fixture
def dummy():
    base.declare(AgentDecl(name="test-dummy", factory=Dummy, summary="a test's agent", served=True, searches=True,
                           options=(Option("depth", int, 3, low=1, serve=(1, 5)),
                                    Option("mood", str, "calm", serve=("calm", "bold")))))
    yield "test-dummy"
    del base.AGENTS["test-dummy"]


def test_a_declared_agent_is_in_the_registry_the_parser_the_server_and_the_cli(dummy, capsys):
    assert dummy in base.available_agents() and dummy in base.AGENTS and base.agent_factory(dummy) is Dummy
    assert base.parse_spec(f"{dummy}:depth=4,mood=bold") == (dummy, {"depth": 4, "mood": "bold"})
    agent = base.make_agent(f"{dummy}:depth=2")
    assert isinstance(agent, Dummy) and agent.depth == 2
    # the server's allow-list, its caps and its agent list
    assert dummy in specs.allowed_agents() and dummy in specs.ALLOWED
    assert specs.describe()[dummy] == {"depth": {"type": "int", "min": 1, "max": 5},
                                       "mood": {"type": "choice", "values": ["calm", "bold"]}}
    assert specs.check_allowed(f" {dummy}:depth=5 ") == f"{dummy}:depth=5"
    with pytest.raises(specs.SpecError, match=r"option 'depth' of agent 'test-dummy' must be an int 1\.\.5"):
        specs.check_allowed(f"{dummy}:depth=6")
    with pytest.raises(specs.SpecError, match="must be one of 'calm', 'bold'"):
        specs.check_allowed(f"{dummy}:mood=/etc/passwd")
    assert pool.is_heavy(f"{dummy}:depth=1") and dummy in pool.heavy_agents()
    # the valid agents a command lists
    assert cli.main(["arena", "nope", "random", "--deals", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("twilight arena: error: unknown agent 'nope'"), err
    listed = err[0].rpartition("valid agents: ")[2].split(", ")
    assert listed == base.available_agents() and dummy in listed
    del base.AGENTS[dummy]
    assert dummy not in base.available_agents() and dummy not in specs.ALLOWED
    base.declare(AgentDecl(name=dummy, factory=Dummy))  # the fixture removes it again


def test_every_shipped_agent_is_declared_and_each_layer_declares_its_own():
    decls = base.declarations()
    assert tuple(decls) == SHIPPED
    assert decls["respond"].module == "twilight_env.training.search_response"
    assert decls["openspiel"].module == "twilight_env.interop.openspiel_bots"
    for name, decl in decls.items():
        if not decl.module.startswith(("twilight_env.training.", "twilight_env.interop.")):
            assert decl.module.startswith("twilight_env.agents."), name


@pytest.mark.parametrize("name", SHIPPED)
def test_the_declaration_read_from_source_is_the_one_the_module_registers_and_fits_its_factory(name):
    """Reading a module's source gives the declaration importing it registers, and the
    declared options are the factory's keywords, in order, with its defaults."""
    decl = base.declaration(name)
    path = Path(inspect.getsourcefile(base.agent_factory(name)))  # imports the module: declare() runs
    read = {d.name: d for d in read_declarations(path, decl.module)}[name]
    assert read == base.declaration(name)
    params = [p for p in inspect.signature(base.agent_factory(name)).parameters.values() if p.name != "self"]
    assert [o.name for o in decl.options] == [p.name for p in params]
    for opt, p in zip(decl.options, params):
        assert opt.default == p.default, (name, opt.name)
        if opt.default is not None:
            assert isinstance(opt.default, opt.type), (name, opt.name)


# spec -> (name, options) as parse_spec read it before the declarations: the same agent and options
SPECS = {
    "random": ("random", {}),
    " heuristic ": ("heuristic", {}),
    "pimc:worlds=32,epsilon=0.1,inference=model": ("pimc", {"worlds": 32, "epsilon": 0.1, "inference": "model"}),
    "ismcts:iterations=1000,backend=numba": ("ismcts", {"iterations": 1000, "backend": "numba"}),
    "neural:default": ("neural", {"path": "default"}),
    "neural:runs/x/checkpoint.pt": ("neural", {"path": "runs/x/checkpoint.pt"}),
    "neural:path=net.npz,backend=numpy,temperature=0.5": ("neural", {"path": "net.npz", "backend": "numpy",
                                                                     "temperature": 0.5}),
    "policy:default": ("policy", {"path": "default"}),
    "policy:runs/net.npz,temperature=1": ("policy", {"path": "runs/net.npz", "temperature": 1}),
    "guided:default,iterations=50": ("guided", {"path": "default", "iterations": 50}),
    "exit:path=default,threads=2": ("exit", {"path": "default", "threads": 2}),
    "exit-search:default,iterations=20,w=0.5": ("exit-search", {"path": "default", "iterations": 20, "w": 0.5}),
    "openspiel:ismcts:iterations=50": ("openspiel", {"bot": "ismcts", "iterations": 50}),
    "openspiel:random": ("openspiel", {"bot": "random"}),
    "openspiel:iterations=5": ("openspiel", {"iterations": 5}),
    "respond:target=policy:default,worlds=8": ("respond", {"target": "policy:default", "worlds": 8}),
}


@pytest.mark.parametrize("spec", SPECS)
def test_every_spec_parses_to_the_same_agent_and_options_as_before(spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert base.parse_spec(spec) == SPECS[spec]


@pytest.mark.parametrize("spec", SPECS)
def test_a_canonical_spec_fills_every_default_and_parses_back_to_itself(spec):
    """canonical_spec is a spec of the same agent: parse_spec reads the given options plus
    every declared default (None defaults left out; a spec held in an option as its own
    canonical spec, commas as ';'), and it is its own canonical spec."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        canon = base.canonical_spec(spec)
        name, given = SPECS[spec]
        decl = base.declaration(name)
        want = {o.name: given.get(o.name, o.default) for o in decl.options if given.get(o.name, o.default) is not None}
        want.update((o.name, base.canonical_spec(want[o.name]).replace(",", ";"))
                    for o in decl.options if o.holds == "spec" and o.name in want)
        assert base.parse_spec(canon) == (name, want)
        assert list(base.parse_spec(canon)[1]) == [o.name for o in decl.options if o.name in want]  # declared order
        assert base.canonical_spec(canon) == canon


def test_specs_equal_only_through_defaults_are_the_same_agent():
    canon = base.canonical_spec("pimc")
    assert canon.startswith("pimc:worlds=32,solver_tricks=2,rollouts=1,rollout=heuristic,epsilon=0.0,")
    for same in ("pimc:worlds=32", " pimc:rollouts=1,worlds=32 ", "pimc:epsilon=0", "pimc:epsilon=0.0,backend=auto"):
        assert base.canonical_spec(same) == canon and base.same_agent("pimc", same)
    for other in ("pimc:worlds=31", "pimc:epsilon=0.1", "ismcts", "pimc:inference=model"):
        assert base.canonical_spec(other) != canon and not base.same_agent("pimc", other)
    assert base.canonical_spec("mmd:run/policy.npz") == "mmd:path=run/policy.npz,temperature=1.0"
    assert base.same_agent("openspiel:ismcts:iterations=5", "openspiel:iterations=5")  # bot=ismcts by default
    assert base.canonical_spec("random") == "random"
    # paths are written normalised; a spec held in an option is written canonical, its commas as ';'
    assert base.same_agent("mmd:./run/", "mmd:run") and not base.same_agent("mmd:run", "mmd:other")
    assert base.same_agent("policy:a//b/../net.npz", "policy:path=a/net.npz")
    assert base.same_agent("respond:target=pimc", "respond:target=pimc:worlds=32")
    assert base.same_agent("respond:target=mmd:./line/,model=policy:default", "respond:target=mmd:line,model=policy")
    assert not base.same_agent("respond:target=pimc", "respond:target=pimc:worlds=8;rollouts=2")
    # a held spec is checked as its own spec, as make_agent checks it
    with pytest.raises(ValueError, match=r"respond option target writes .*'pimc:worlds=32', not 'pimc;worlds=32'"):
        base.canonical_spec("respond:target=pimc;worlds=32")
    with pytest.raises(ValueError, match="respond option model writes .*'nosuch:x=1', not 'nosuch;x=1'"):
        base.canonical_spec("respond:target=policy:default,model=nosuch;x=1")
    for bad, why in (("respond:target=pimc:c=1,model=policy:default", "agent 'pimc' has no option 'c'"),
                     ("respond:target=heuristic:foo=1", "agent 'heuristic' has no option 'foo'"),
                     ("respond:target=pimc:worlds=0,model=heuristic", "pimc option worlds must be an integer"),
                     ("respond:target=nosuch,model=heuristic", "unknown agent 'nosuch'")):
        with pytest.raises(ValueError, match=why):
            base.canonical_spec(bad)
        with pytest.raises(ValueError, match=why):
            base.make_agent(bad)
    nested = base.canonical_spec("respond:target=respond:target=pimc")  # two levels: the inner one as written
    assert nested.startswith("respond:target=respond:target=pimc,") and base.canonical_spec(nested) == nested
    # a file named as one of the words that name no file keeps its ./ (./model is a file, model the shipped one)
    assert "inference=./model," in base.canonical_spec("ismcts:inference=./model")
    assert not base.same_agent("ismcts:inference=./model", "ismcts:inference=model")
    assert base.same_agent("ismcts:inference=ckpt/", "ismcts:inference=ckpt")
    with pytest.raises(ValueError, match="pimc option worlds must be an integer >= 1, got 0"):
        base.canonical_spec("pimc:worlds=0")
    with pytest.raises(ValueError, match="unknown agent 'nosuch'"):
        base.canonical_spec("nosuch:x=1")
    with pytest.raises(ValueError, match=r"agent 'pimc' has no option 'c'; its options: worlds, solver_tricks"):
        base.canonical_spec("pimc:c=1")  # as make_agent refuses it
    with pytest.raises(ValueError, match="agent 'heuristic' has no option 'foo'; its options: none"):
        base.canonical_spec("heuristic:foo=1")
    assert base.same_agent("nosuch:x=1", " nosuch:x=1") and not base.same_agent("nosuch:x=1", "nosuch:x=2")


@pytest.mark.parametrize("spec,bad", [("pimc:worlds32", "bad option 'worlds32'"), ("random:x", "bad option 'x'"),
                                      ("respond:policy", "bad option 'policy'")])
def test_a_bare_word_is_refused_where_no_option_takes_it(spec, bad):
    with pytest.raises(ValueError, match=bad):
        base.parse_spec(spec)


@pytest.mark.parametrize("old,new,cls", [("exit", "policy", "ExitAgent"), ("exit-search", "guided", "ExitSearchAgent")])
def test_a_deprecated_name_warns_once_naming_its_replacement_and_builds_the_same_agent(old, new, cls, monkeypatch):
    monkeypatch.setattr(base, "_WARNED", set())
    with pytest.warns(DeprecationWarning, match=f"agent name '{old}' is deprecated, use '{new}'") as caught:
        base.parse_spec(f"{old}:default")
        base.parse_spec(old)
    assert len([w for w in caught if issubclass(w.category, DeprecationWarning)]) == 1
    assert str(caught[0].message).count("\n") == 0
    assert base.AGENTS[old] == f"twilight_env.agents.exit:{cls}"
    assert base.declaration(old).family == base.declaration(new).family == "exit"
    assert base.declaration(new).replaced_by is None


def test_the_cli_says_a_deprecated_name_in_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(base, "_WARNED", set())
    assert cli.main(["arena", "exit-search:iterations=0", "random", "--deals", "2",
                     "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == ("twilight arena: note: agent name 'exit-search' is deprecated, use 'guided' (docs/API.md, "
                      "Agents); 'exit-search' still builds the agent it built before"), err
    assert len(err) == 2 and err[1].startswith("twilight arena: error:"), err


def test_shipped_weights_servers_needs_and_targets_come_from_the_declarations():
    from twilight_env.training import search_response

    decls = base.declarations()
    assert base.shipped_weight_agents() == ("exit", "exit-search", "guided", "neural", "policy", "respond")
    assert base.reads_shipped_weights("respond") and base.reads_shipped_weights("policy")
    assert not base.reads_shipped_weights("policy:runs/net.npz") and base.reads_shipped_weights("pimc:inference=model")
    assert dict(specs.NEEDS) == {"exit": "torch", "exit-search": "torch"}
    assert search_response.TARGETS == ("exit", "heuristic", "mmd", "neural", "nfsp", "policy")
    assert specs.allowed_agents() == sorted(n for n, d in decls.items() if d.served)
    assert "openspiel" not in specs.ALLOWED and "respond" not in specs.ALLOWED
    assert sorted(pool.heavy_agents()) == sorted(n for n, d in decls.items() if d.searches)


def test_a_declaration_must_be_written_with_literals(tmp_path):
    f = tmp_path / "mod.py"
    f.write_text("from twilight_env.agents.base import AgentDecl, declare\nW = 3\n"
                 "declare(AgentDecl(name='x', factory=Thing, options=(Option('w', int, W),)))\n")
    with pytest.raises(ValueError, match=r"mod\.py:3: a declaration is written with literals.*'W'"):
        read_declarations(f, "pkg.mod")
    f.write_text("declare(AgentDecl(name='x', factory=Thing, options=(Option('w', int, -3, low=-4),)))\n")
    (decl,) = read_declarations(f, "pkg.mod")
    assert decl.factory == "pkg.mod:Thing" and decl.options[0].default == -3 and decl.module == "pkg.mod"


@pytest.mark.parametrize("kwargs,message", [
    (dict(name="a:b", factory="m:F"), "an agent name is letters"),
    (dict(name="a", factory="nope"), "a factory string is 'module:attribute'"),
    (dict(name="a", factory="m:F", options=(Option("w", int), Option("w", float))), "declared twice"),
    (dict(name="a", factory="m:F", bare_option="path"), "bare_option 'path' is none of its options"),
    (dict(name="a", factory="m:F", options=(Option("w", int, 1, requires=(("x", 1),)),)), "names 'x', which is none"),
    (dict(name="a", factory="m:F", options=(Option("w", int, 1, at_most="w"),)), "names 'w', which is none"),
])
def test_a_bad_declaration_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AgentDecl(**kwargs)


@pytest.mark.parametrize("kwargs,message", [
    (dict(name="w", type=list), "type must be one of"),
    (dict(name="w", type=int, serve=(5, 1)), r"serve of a number is \(low, high\)"),
    (dict(name="w", type=str, serve=(1,)), "serve of a text option is a tuple of words"),
    (dict(name="w", type=bool, serve=(True,)), "cannot be served"),
    (dict(name="w", type=str, holds="file"), "holds must be one of '', 'path', 'spec'"),
    (dict(name="w", type=int, holds="path"), "path and spec on a str option only"),
    (dict(name="w", type=int, requires=("backend", "numba")), r"requires is a tuple of \(option name, value\) pairs"),
    (dict(name="w", type=str, at_most="n"), "on a number option only"),
])
def test_a_bad_option_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Option(**kwargs)


# ---------------------------------------------------------------------------------------------
# no list of agent names outside the declarations
# ---------------------------------------------------------------------------------------------

PACKAGE_FOLDERS = ("agents", "training", "experiments", "twilight_env")

NOT_AGENT_NAMES = {
    ("agents/pimc.py", "rollout_policy not in"): "the values of pimc's option rollout (rollout policies)",
    ("twilight_env/interop/openspiel_bots.py", "BOTS ="): "OpenSpiel's bot names, the option bot of openspiel",
    ("training/config.py", "eval_opponents: tuple ="): "the default evaluation opponents: specs to play, a setting",
    ("experiments/checkpoint_checks.py", "_3p.pt\": ("): "the agents that read a weights file that left the package (history)",
    ("experiments/checkpoint_checks.py", "_4p.pt\": ("): "the agents that read a weights file that left the package (history)",
}
"""Literals the scan below finds that are not lists of what agents are: (file, text on the
literal's first line) -> why."""


def agent_name_lists(root: Path, names: set[str]) -> list[tuple[str, int, str]]:
    """Every literal list of agent names in the package's modules, outside the declarations.

    Scanned: every ``.py`` file under ``agents/``, ``training/``, ``experiments/`` and
    ``twilight_env/``, parsed with :mod:`ast`. Found: a tuple, list or set display, or the
    keys of a dict display, of two or more elements that are all string constants naming
    declared agents (a spec with options, such as ``"pimc:worlds=8"``, is not a name, so a
    list of specs to play such as the ladder's default rungs is not found); and any ``SPEC.split(":")[0]`` or ``SPEC.partition(":")[0]`` whose receiver's text
    holds ``spec`` (use :func:`twilight_env.agents.base.agent_name`), outside
    ``agent_name`` itself. Not found: what the ``declare(...)`` calls hold, and comparisons
    with one name (``kind == "policy"``: a module's own dispatch).

    Returns:
        ``(file, line, text of the line)`` of each, sorted.
    """
    out = []
    for folder in PACKAGE_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            tree = ast.parse(text, filename=rel)
            inside = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "declare":
                    inside |= {id(n) for n in ast.walk(node)}
                if isinstance(node, ast.FunctionDef) and node.name == "agent_name" and rel == "agents/base.py":
                    inside |= {id(n) for n in ast.walk(node)}
            for node in ast.walk(tree):
                if id(node) in inside:
                    continue
                elts = None
                if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                    elts = node.elts
                elif isinstance(node, ast.Dict):
                    elts = [k for k in node.keys if k is not None]
                if (elts and len(elts) >= 2
                        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value in names
                                for e in elts)):
                    out.append((rel, node.lineno, lines[node.lineno - 1].strip()))
                if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call)
                        and isinstance(node.value.func, ast.Attribute)
                        and node.value.func.attr in ("split", "partition") and node.value.args
                        and isinstance(node.value.args[0], ast.Constant) and node.value.args[0].value == ":"
                        and isinstance(node.slice, ast.Constant) and node.slice.value == 0
                        and "spec" in ast.unparse(node.value.func.value)):
                    out.append((rel, node.lineno, lines[node.lineno - 1].strip()))
    return sorted(set(out))


def test_no_list_of_agent_names_outside_the_declarations():
    found = [(rel, line, src) for rel, line, src in agent_name_lists(ROOT, set(base.declarations()))
             if not any(rel == f and key in src for f, key in NOT_AGENT_NAMES)]
    assert found == [], "agent names listed outside their declarations (derive them from " \
                        "twilight_env.agents.base.declarations()):\n" + "\n".join(map(str, found))


def test_the_scan_finds_the_lists_it_is_meant_to(tmp_path):
    """The scan finds the kinds of list the declarations replaced (a table, an allow-list,
    a frozenset, a membership test, a spec cut at ':'), and leaves specs and one-name
    dispatch alone."""
    mod = tmp_path / "training" / "x.py"
    mod.parent.mkdir()
    mod.write_text(
        'AGENTS = {"random": "m:R", "pimc": "m:P"}\n'
        'HEAVY = frozenset({"pimc", "ismcts"})\n'
        'def f(name, spec):\n'
        '    if name in ("neural", "exit"):\n'
        '        return spec.split(":")[0]\n'
        '    return spec.strip().partition(":")[0]\n'
        'RUNGS = ("random", "pimc:worlds=8")\n'
        'CONTROLS = ("heuristic", "value")\n'
        'def g(kind):\n'
        '    return kind == "policy"\n'
        'declare(AgentDecl(name="a", factory=F, options=(Option("p", str, serve=("random", "pimc")),)))\n')
    found = agent_name_lists(tmp_path, set(SHIPPED))
    assert [line for _, line, _ in found] == [1, 2, 4, 5, 6], found


def test_threads_that_read_the_declarations_first_all_see_the_whole_table(monkeypatch):
    """The server's threads may ask for the registry first at the same time: none may get
    the table while another thread is still reading the sources."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(base, "_READ", set())
    monkeypatch.setattr(base, "_DECLS", {})
    real = base.read_declarations

    def slow(path, module):
        time.sleep(0.005)
        return real(path, module)

    monkeypatch.setattr(base, "read_declarations", slow)
    with ThreadPoolExecutor(4) as ex:
        tables = list(ex.map(lambda _: tuple(base.declarations()), range(4)))
    assert tables == [SHIPPED] * 4


def test_the_higher_layers_agents_are_found_through_the_entry_points_without_importing_them():
    """A fresh interpreter that imports only the agents layer knows respond and openspiel (the
    twilight_env.agents entry points of the installed package), builds openspiel:random, and
    has loaded neither the training layer's responder nor torch to list them."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from twilight_env.agents.base import make_agent, parse_spec\n"
            "assert parse_spec('respond:target=heuristic') == ('respond', {'target': 'heuristic'})\n"
            "from twilight_env.agents.base import canonical_spec\n"
            "assert canonical_spec('policy:default').startswith('policy:path=default,')\n"
            "assert 'twilight_env.training.search_response' not in sys.modules\n"
            "assert 'torch' not in sys.modules\n"
            "print(type(make_agent('openspiel:random')).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()


def test_an_agent_declared_outside_the_package_keeps_options_its_declaration_does_not_list(dummy):
    """Only this package's declarations are known to list every keyword of their factory."""
    assert base.canonical_spec(f"{dummy}:zeta=2,alpha=1") == f"{dummy}:depth=3,mood=calm,alpha=1,zeta=2"


# ---------------------------------------------------------------------------------------------
# rules between options (Option.requires, Option.at_most)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,message", [
    ("ismcts:trees=2", "ismcts option trees=2 needs backend=numba (it is python); use trees=1 or backend=numba"),
    ("ismcts:scoring=individual", "scoring=individual needs backend=numba (it is python)"),
    ("ismcts:backend=numba,inference=model", "inference=model needs backend=python (it is numba)"),
    ("ismcts:backend=numba,iterations=3,trees=5", "trees=5 must be at most iterations (it is 3)"),
    ("respond:target=ismcts:trees=2", "ismcts option trees=2 needs backend=numba"),
    ("respond:team=joint", "respond option team=joint needs exact_tricks=1, 2 or 3 (it is 0); "
                           "use team=independent or exact_tricks=1, 2 or 3"),
    ("respond:team=bogus,exact_tricks=2", "respond option team must be one of independent, joint, got 'bogus'"),
    ("respond:team=,exact_tricks=2", "respond option team must be one of independent, joint, got ''"),
])
def test_canonical_spec_refuses_what_make_agent_refuses_across_options(spec, message):
    """A spec whose options break a rule between them is refused by canonical_spec (no agent
    built) with the message make_agent gives, so a run never starts on a spec it cannot build."""
    with pytest.raises(ValueError, match=re.escape(message)):
        base.canonical_spec(spec)
    if not spec.startswith("respond:target="):
        with pytest.raises(ValueError, match=re.escape(message)):
            base.make_agent(spec)


@pytest.mark.parametrize("model", ["ismcts:trees=2", "ismcts", "nosuch", "pimc:worlds=2"])
def test_a_model_whose_probabilities_are_not_known_gets_one_message_from_canonical_spec_and_make_agent(model):
    """respond's model is declared exact_target: its kind is checked before its options, by
    canonical_spec as by the responder, so ``model=ismcts:trees=2`` is refused for being a
    search (not for its trees) by both."""
    spec = f"respond:target=policy:default,model={model.replace(',', ';')}"
    message = f"respond: the model must be an agent whose action probabilities are known (exit, "
    texts = []
    for build in (base.canonical_spec, base.make_agent):
        with pytest.raises(ValueError, match=re.escape(message)) as e:
            build(spec)
        texts.append(str(e.value))
    assert texts[0].endswith(f"got model={model!r}") and texts[1] == f"{texts[0]} (agent spec {spec!r})"


def test_check_exact_target_is_public_and_refuses_what_is_not_a_spec():
    """Read across modules (the responder's model check): exported, and a value that is not
    a spec string is refused as the other kinds are."""
    assert "check_exact_target" in base.__all__
    base.check_exact_target("respond", "model", "policy:default;temperature=0.5")
    with pytest.raises(ValueError, match=r"known \(exit, .*; the networks at any temperature\), got model=3$"):
        base.check_exact_target("respond", "model", 3)


def test_a_model_that_is_an_exact_target_passes_canonical_spec():
    assert ",model=policy:path=default;temperature=0.5," in base.canonical_spec(
        "respond:target=ismcts,model=policy:default;temperature=0.5")


@pytest.mark.parametrize("kwargs", [dict(exact_target=True), dict(exact_target=True, holds="path"),
                                    dict(exact_target=1, holds="spec")])
def test_exact_target_is_declared_only_on_an_option_that_holds_a_spec(kwargs):
    with pytest.raises(ValueError, match="exact_target is True only on a holds='spec' option"):
        Option("model", str, None, **kwargs)


@pytest.mark.parametrize("spec", ["ismcts:backend=numba,trees=2", "ismcts:trees=1", "ismcts:backend=numba,scoring=individual",
                                  "ismcts:inference=model", "ismcts:backend=numba,iterations=4,trees=4"])
def test_the_rules_between_options_let_every_allowed_combination_through(spec):
    assert base.canonical_spec(spec).startswith("ismcts:")


@pytest.mark.parametrize("spec,meant", [("respond:target=pimc:worlds=8,rollouts=2", "target=pimc:worlds=8;rollouts=2"),
                                        ("respond:target=pimc,rollouts=2", "target=pimc:rollouts=2"),
                                        ("respond:target=policy,model=pimc,worlds=8,rollout=random",
                                         "model=pimc:rollout=random")])
def test_an_option_of_a_held_spec_written_after_a_comma_names_the_semicolon_spelling(spec, meant):
    """``respond:target=pimc:worlds=8,rollouts=2`` gives ``rollouts`` to respond, which has no
    such option; the message says how the held spec takes it."""
    key = meant.rsplit(";", 1)[-1].rsplit(":", 1)[-1].split("=")[0]
    for build in (base.canonical_spec, base.make_agent):
        with pytest.raises(ValueError, match=re.escape(f"agent 'respond' has no option {key!r}; its options: target, ")) as e:
            build(spec)
        held = meant.split("=")[0]
        assert str(e.value).endswith(f"; if {key} is the {held}'s option, write the {held}'s options after ';': {meant}")


@pytest.mark.parametrize("spec,meant", [("mmd:run:temperature=0", "mmd:run,temperature=0"),
                                        ("policy:net.npz:temperature=0.5", "policy:net.npz,temperature=0.5")])
def test_options_after_a_path_written_with_a_colon_name_the_comma(spec, meant):
    for build in (base.canonical_spec, base.make_agent):
        with pytest.raises(ValueError, match=re.escape(f"; options are separated by ',': {meant}")):
            build(spec)


@pytest.mark.parametrize("spec,meant", [("pimc:worlds=8;rollouts=2", "worlds=8,rollouts=2"),
                                        ("ismcts:iterations=50;c=0.5", "iterations=50,c=0.5")])
def test_options_joined_by_a_semicolon_outside_a_held_spec_name_the_comma(spec, meant):
    """';' joins the options of a spec held in another (respond's target); at the top level a
    number option's value holding one names the ',' spelling."""
    for build in (base.canonical_spec, base.make_agent):
        with pytest.raises(ValueError, match=re.escape(f"; options are separated by ',': {meant}")):
            build(spec)


def test_a_text_option_with_choices_and_a_rule_needing_one_of_several_values():
    """``Option.choices`` lists the words a text option takes; a ``requires`` value that is a
    tuple is met by any of its values."""
    decl = AgentDecl(name="thing", factory="m:F", options=(
        Option("n", int, 0, low=0, high=3), Option("mode", str, "a", choices=("a", "b"), requires=(("n", (1, 2)),))))
    assert decl.option("mode").allowed() == "one of a, b"
    decl.check_options({"mode": "b", "n": 2})
    with pytest.raises(ValueError, match=re.escape("thing option mode must be one of a, b, got 'c'")):
        decl.check_options({"mode": "c", "n": 1})
    with pytest.raises(ValueError, match=re.escape("thing option mode=b needs n=1 or 2 (it is 3); use mode=a or n=1 or 2")):
        decl.check_options({"mode": "b", "n": 3})
    for bad, why in ((dict(type=int, choices=(1, 2)), "choices on a str option only"),
                     (dict(type=str, default="c", choices=("a", "b")), "default 'c' is none of its choices"),
                     (dict(type=str, choices=()), "choices is a non-empty tuple of words")):
        with pytest.raises(ValueError, match=why):
            Option("w", **bad)


def test_a_rule_between_options_is_read_from_the_declaration_source(tmp_path):
    src = tmp_path / "mod.py"
    src.write_text("declare(AgentDecl(name='thing', factory=Thing, options=(\n"
                   "    Option('n', int, 8), Option('mode', str, 'a'),\n"
                   "    Option('k', int, 1, requires=(('mode', 'b'),), at_most='n'))))\n")
    (decl,) = read_declarations(src, "pkg.mod")
    k = decl.option("k")
    assert k.requires == (("mode", "b"),) and k.at_most == "n"
    decl.check_options({"k": 1})  # the default needs nothing
    decl.check_options({"k": 3, "mode": "b"})
    with pytest.raises(ValueError, match=re.escape("thing option k=3 needs mode=b (it is a)")):
        decl.check_options({"k": 3})
    with pytest.raises(ValueError, match=re.escape("thing option k=9 must be at most n (it is 8)")):
        decl.check_options({"k": 9, "mode": "b"})


def test_a_refused_spec_is_named_once_and_carried_by_the_error():
    """make_agent's errors end with the spec they refused (AgentSpecError.spec); a spec held in
    another (respond's model) is named, and the outer spec is not named after it."""
    with pytest.raises(base.AgentSpecError) as e:
        base.make_agent("pimc:worlds=0")
    assert e.value.spec == "pimc:worlds=0" and str(e.value).endswith("(agent spec 'pimc:worlds=0')")
    with pytest.raises(base.AgentSpecError) as e:
        base.make_agent("respond:target=ismcts,model=policy:path=no_such_weights.npz")
    assert e.value.spec == "policy:path=no_such_weights.npz"
    assert str(e.value).count("(agent spec ") == 1 and "respond:target" not in str(e.value)
    with pytest.raises(base.AgentSpecError) as e:
        base.make_agent("respond:target=ismcts:trees=2,model=policy:default")
    assert e.value.spec == "ismcts:trees=2" and str(e.value).count("(agent spec ") == 1


def test_a_refusal_that_already_writes_the_spec_out_is_an_agent_spec_error_too():
    """respond's refusal of a target whose policy is not known writes the spec out in its
    example (respond:target=ismcts,model=...): it is still an AgentSpecError carrying the spec,
    and the spec is not appended a second time."""
    with pytest.raises(base.AgentSpecError) as e:
        base.make_agent("respond:target=ismcts")
    assert e.value.spec == "respond:target=ismcts"
    assert "respond:target=ismcts,model=policy:default" in str(e.value) and "(agent spec " not in str(e.value)


class _Loose:
    """An agent declared outside the package that takes options its declaration does not list."""

    def __init__(self, **options):
        self.options = options

    def act(self, infoset, legal_actions, rng):
        return legal_actions[0]


def test_a_non_finite_undeclared_option_is_refused_as_an_agent_spec_error():
    base.declare(AgentDecl(name="test-loose", factory=_Loose, summary="a test's agent"))
    try:
        assert base.make_agent("test-loose:scale=2.5").options == {"scale": 2.5}
        with pytest.raises(base.AgentSpecError) as e:
            base.make_agent("test-loose:scale=nan")
        assert e.value.spec == "test-loose:scale=nan"
        assert str(e.value) == "agent 'test-loose' option 'scale' must be a finite number, got nan (agent spec 'test-loose:scale=nan')"
    finally:
        del base.AGENTS["test-loose"]
