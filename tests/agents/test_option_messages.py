"""A bad agent option is refused with a message that names the agent, the option and what
it takes (:meth:`twilight_env.agents.declaration.Option.check`, applied by ``make_agent`` to
every declared option of every agent), and a spec that repeats an option is refused."""

from __future__ import annotations

import warnings

import pytest

import twilight_env.experiments  # noqa: F401  (declares respond and openspiel, as the commands do)
from twilight_env.agents import base
from twilight_env.agents.declaration import AgentDecl, Option

pytest.importorskip("torch")  # exit, exit-search and respond read torch


def _number_options():
    """(agent, option) for every declared int or float option of every shipped agent."""
    rows = []
    for name, decl in base.declarations().items():
        if decl.module.startswith("twilight_env."):
            rows += [(name, o.name) for o in decl.options if o.type in (int, float)]
    return rows


def _bad_values(option: Option) -> list[str]:
    """Spec texts the option must refuse: a word, a value below ``low`` and above ``high``,
    a fraction for an integer, NaN."""
    bad = ["abc", "nan", "true"]
    if option.low is not None:
        bad.append(str(option.low - 1))
    if option.high is not None:
        bad.append(str(option.high + 1))
    if option.type is int:
        bad.append("1.5")
    return bad


NUMBER_OPTIONS = _number_options()


def test_every_agent_with_number_options_is_covered():
    agents = {name for name, _ in NUMBER_OPTIONS}
    assert {"ismcts", "pimc", "guided", "policy", "neural", "respond", "openspiel"} <= agents, agents


@pytest.mark.parametrize("agent,key", NUMBER_OPTIONS)
def test_a_bad_number_names_the_agent_the_option_and_what_it_takes(agent, key):
    option = base.declaration(agent).option(key)
    lead = "ismcts:" if agent == "openspiel" else ""  # openspiel:BOT:k=v
    for value in _bad_values(option):
        spec = f"{agent}:{lead}{key}={value}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(ValueError) as e:
                base.make_agent(spec)
        message = str(e.value)
        assert f"{agent} option {key} must be {option.allowed()}, got " in message, (spec, message)
        assert f"(agent spec {spec!r})" in message and "\n" not in message


@pytest.mark.parametrize("value,shown", [("-5", "-5"), ("abc", "'abc'"), ("0", "0"), ("2.5", "2.5")])
def test_ismcts_iterations(value, shown):
    with pytest.raises(ValueError, match=rf"^ismcts option iterations must be an integer >= 1, got {shown} "
                                         rf"\(agent spec 'ismcts:iterations={value}'\)$"):
        base.make_agent(f"ismcts:iterations={value}")


def test_an_agents_own_check_names_its_spec():
    """A value the declaration cannot bound (a word) is checked by the agent; the message
    still ends with the spec, so it names the agent."""
    with pytest.raises(ValueError, match=r"backend must be 'python' or 'numba', got 'cuda' "
                                         r"\(agent spec 'ismcts:backend=cuda'\)$"):
        base.make_agent("ismcts:backend=cuda")


def test_a_repeated_option_is_refused():
    with pytest.raises(ValueError, match=r"option 'iterations' is given twice in agent spec "
                                         r"'ismcts:iterations=5,iterations=6'"):
        base.parse_spec("ismcts:iterations=5,iterations=6")
    with pytest.raises(ValueError, match="option 'path' is given twice"):
        base.parse_spec("policy:default,path=other.npz")  # the bare word is the path too


def test_a_part_without_a_value_lists_the_agents_options():
    with pytest.raises(ValueError, match=r"write key=value \(agent 'pimc' options: worlds, solver_tricks, "):
        base.parse_spec("pimc:worlds")


@pytest.mark.parametrize("spec,word,bare", [("policy:temperature", "temperature", "path"),
                                            ("mmd:run,temperature", "temperature", "path"),
                                            ("neural:backend", "backend", "path")])
def test_an_option_name_without_a_value_is_not_read_as_a_file(spec, word, bare):
    """A network agent reads a bare word as its file (``policy:net.npz``); the name of one of
    its options there is a forgotten ``=VALUE``, not a file name."""
    with pytest.raises(ValueError, match=rf"bad option '{word}' in agent spec '{spec}': {word} is an option of "
                                         rf"{spec.split(':')[0]}; write {word}=VALUE \(a file of that name: "
                                         rf"{bare}={word}\)"):
        base.parse_spec(spec)


@pytest.mark.parametrize("option,words", [
    (Option("n", int, 1, low=1), "an integer >= 1"),
    (Option("n", int, 2, low=0, high=7), "an integer in 0..7"),
    (Option("n", int, 2, high=7), "an integer <= 7"),
    (Option("x", float, 0.0, low=0, high=100), "a finite number in [0, 100]"),
    (Option("x", float, 0.5, low=0), "a finite number >= 0"),
    (Option("x", float, 0.5), "a finite number"),
    (Option("b", bool, False), "true or false"),
    (Option("s", str, "auto", doc="'auto' or 'numpy'"), "text: 'auto' or 'numpy'"),
])
def test_allowed_in_words(option, words):
    assert option.allowed() == words


def test_check_passes_what_fits():
    assert Option("n", int, 1, low=1).check(5, "a") == 5
    assert Option("x", float, 0.5, low=0, high=1).check(1, "a") == 1  # an int passes for a float
    assert Option("n", int, None, low=1).check(None, "a") is None  # the agent's own default
    with pytest.raises(ValueError, match="^a option n must be an integer >= 1, got None$"):
        Option("n", int, 3, low=1).check(None, "a")
    with pytest.raises(ValueError, match="^option s must be text, got 3$"):
        Option("s", str, "x").check(3)


def test_every_declared_default_passes_its_own_check():
    for name, decl in base.declarations().items():
        for option in decl.options:
            assert option.check(option.default, name) == option.default, (name, option.name)


def test_an_agent_declared_by_a_user_gets_the_same_checks():
    class Counter:
        def __init__(self, depth: int = 3):
            self.name, self.depth = "counter", depth

        def act(self, infoset, legal_actions, rng):
            return legal_actions[0]

    base.declare(AgentDecl(name="test-counter", factory=Counter, options=(Option("depth", int, 3, low=1, high=9),)))
    try:
        assert base.make_agent("test-counter:depth=9").depth == 9
        with pytest.raises(ValueError, match=r"^test-counter option depth must be an integer in 1\.\.9, got 10 "):
            base.make_agent("test-counter:depth=10")
    finally:
        del base.AGENTS["test-counter"]
