"""The agent protocol's optional members (``reset``, ``stateless``, ``act_batch``) are
declared in ``twilight_env.agents.base`` and read through one helper, ``optional_member``."""

import os
import subprocess
import sys

import numpy as np
import pytest

from twilight_env.agents import base
from twilight_env.agents.declaration import read_declarations
from twilight_env.agents.base import OPTIONAL_MEMBERS, Agent, BatchAgent, make_agent, optional_member
from twilight_env.experiments import common


class Bare:
    name = "bare"

    def act(self, infoset, legal_actions, rng):
        return legal_actions[0]


class Batched(Bare):
    name = "batched"
    stateless = True

    def act_batch(self, infosets, legal_actions_list):
        return [legal[0] for legal in legal_actions_list]


class SwitchedOff(Bare):
    """Declares the members but switches batching off: ``act_batch = None``."""

    name = "switched-off"
    stateless = True
    act_batch = None


def test_defaults_for_an_agent_without_the_optional_members():
    a = Bare()
    assert isinstance(a, Agent)
    assert optional_member(a, "reset") is None
    assert optional_member(a, "stateless") is False
    assert optional_member(a, "act_batch") is None
    assert set(OPTIONAL_MEMBERS) == {"reset", "stateless", "act_batch"}


def test_members_are_returned_when_present():
    a = Batched()
    assert isinstance(a, BatchAgent) and not isinstance(Bare(), BatchAgent)
    assert optional_member(a, "stateless") is True
    assert optional_member(a, "act_batch")([None], [(3, 4)]) == [3]


def test_none_means_absent():
    a = SwitchedOff()
    assert optional_member(a, "act_batch") is None


def test_unknown_member_is_refused_with_the_list():
    with pytest.raises(ValueError, match="reset, stateless, act_batch"):
        optional_member(Bare(), "act_fast")


@pytest.mark.parametrize("spec", ["random", "heuristic", "pimc:worlds=2", "ismcts:iterations=5"])
def test_shipped_agents_declare_stateless(spec):
    a = make_agent(spec)
    assert optional_member(a, "stateless") is True
    assert optional_member(a, "act_batch") is None


@pytest.fixture
def registered():
    names = []

    def add(name, cls):
        base.register(name)(cls)
        names.append(name)

    yield add
    for n in names:
        base._REGISTRY.pop(n, None)
    for key in [k for k in common._AGENT_CACHE if k[0] in names]:
        del common._AGENT_CACHE[key]


def test_lockstep_reads_the_helper(registered):
    registered("test-batched", Batched)
    registered("test-switched-off", SwitchedOff)
    assert common.lockstep_ok(["test-batched", "random"])
    # hasattr would see act_batch here; the protocol says None means no batch method
    assert not common.lockstep_ok(["test-switched-off", "random"])
    rng = np.random.default_rng(0)
    from twilight_env.rules.engine import State

    games = [(State.random(rng), ["test-batched", "random", "test-batched", "random"], 0, d, 0) for d in range(3)]
    done = common.play_lockstep(games)
    assert all(s.done for s in done)


# ---------------------------------------------------------------------------------
# the agent table
# ---------------------------------------------------------------------------------

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_shipped_agents_are_declared_once_in_their_own_module_and_register_nowhere_else():
    """``AGENTS`` is a view of the declarations: every shipped agent is declared once, in the
    module of its factory (``declare(AgentDecl(...))`` at the module's end), and no module of
    the package registers an agent any other way."""
    assert base._REGISTRY is base.AGENTS
    assert base.available_agents() == sorted(base.AGENTS) == list(base.declarations())
    seen = {}
    for folder in ("agents", "training", "experiments", "twilight_env"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            module = "twilight_env." + rel[:-3].replace("/", ".").removeprefix("twilight_env.")
            for decl in read_declarations(path, module):
                assert decl.name not in seen, f"{decl.name} declared in {seen[decl.name]} and {rel}"
                seen[decl.name] = rel
                mod, sep, attr = decl.factory.partition(":")
                assert sep and mod == module and attr[:1].isupper(), decl
    for name in ("random", "heuristic", "pimc", "ismcts", "neural", "exit", "exit-search", "guided", "policy"):
        assert seen[name].startswith("agents/"), name
    assert seen["respond"] == "training/search_response.py"
    assert seen["openspiel"] == "twilight_env/interop/openspiel_bots.py"
    offenders = []
    for folder in ("agents", "training", "experiments", "twilight_env"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "@register(" in text and path.name != "make_notebook.py":  # the notebook shows a user's agent
                offenders.append(path.relative_to(ROOT).as_posix())
    assert offenders == [], f"declare agents at the end of their module instead: {offenders}"


@pytest.mark.parametrize("name", ["random", "heuristic", "pimc", "ismcts", "exit", "exit-search"])
def test_every_declaration_names_an_agent_class(name):
    factory = base.agent_factory(name)
    assert isinstance(factory, type) and callable(getattr(factory, "act", None))
    assert base.declaration(name).module == factory.__module__
    assert base.AGENTS[name] == f"{factory.__module__}:{factory.__name__}"  # building it changed no entry


def test_listing_and_parsing_import_no_agent_module_and_building_imports_only_its_own():
    """Listing the agents and parsing specs read the declarations from source: no agent
    module (nor torch) is imported until an agent is built, and then only its own."""
    code = (
        "import sys\n"
        "import twilight_env.experiments\n"
        "from twilight_env.agents import base\n"
        "def agent_modules():\n"
        "    return sorted(m for m in sys.modules if m.startswith(('twilight_env.agents.', 'twilight_env.training.',"
        " 'twilight_env.interop.')) and m not in before)\n"
        "before = set(sys.modules)\n"
        "assert len(base.available_agents()) >= 11\n"
        "base.parse_spec('neural:default'); base.parse_spec('respond:target=policy'); base.parse_spec('openspiel:random')\n"
        "assert agent_modules() == [] and 'torch' not in sys.modules, agent_modules()\n"
        "base.make_agent('random')\n"
        "assert agent_modules() == ['twilight_env.agents.random_agent'], agent_modules()\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_register_adds_and_replaces_and_refuses_a_name_a_spec_cannot_hold(registered):
    registered("test-bare", Bare)
    assert "test-bare" in base.available_agents() and base.agent_factory("test-bare") is Bare
    assert make_agent("test-bare").name == "bare"
    registered("test-bare", Batched)  # a second registration replaces the first
    assert make_agent("test-bare").name == "batched"
    for bad in ("", "a:b", "a,b", "a=b", "a b", None):
        with pytest.raises(ValueError, match="an agent name is letters, digits"):
            base.register(bad)
    with pytest.raises(ValueError, match="unknown agent 'nope'; valid agents: .*heuristic"):
        base.agent_factory("nope")
