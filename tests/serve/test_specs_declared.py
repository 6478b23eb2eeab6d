"""The server's allow-list comes from the agents' declarations: the same agents, options and
caps as the list written out in ``twilight_env/serve/specs.py`` before (kept below as the
expected value), the caps named in ``specs`` match the declared ones, and each served
option's cap lies inside what the agent itself accepts."""

from __future__ import annotations

import pytest

from twilight_env.agents.base import declarations
from twilight_env.serve import specs

ROLLOUT = {"rollout": {"type": "choice", "values": ["heuristic", "random"]},
           "epsilon": {"type": "number", "min": 0.0, "max": 1.0},
           "rollout_backend": {"type": "choice", "values": ["auto", "numba", "python"]}}
DEFAULT = {"path": {"type": "choice", "values": ["default"]}}
INT = lambda lo, hi: {"type": "int", "min": lo, "max": hi}  # noqa: E731
NUM = lambda lo, hi: {"type": "number", "min": lo, "max": hi}  # noqa: E731

BEFORE = {
    "random": {},
    "heuristic": {},
    "pimc": {"worlds": INT(1, 256), "solver_tricks": INT(0, 3), "rollouts": INT(1, 8), **ROLLOUT,
             "backend": {"type": "choice", "values": ["auto", "python", "numba"]},
             "inference": {"type": "choice", "values": ["uniform", "model"]}},
    "ismcts": {"iterations": INT(1, 20000), "c": NUM(0.0, 10.0), **ROLLOUT,
               "inference": {"type": "choice", "values": ["uniform", "model"]},
               "backend": {"type": "choice", "values": ["python", "numba"]},
               "scoring": {"type": "choice", "values": ["team", "individual"]}, "max_depth": INT(0, 28),
               "trees": INT(1, 16)},
    "neural": DEFAULT, "exit": DEFAULT, "policy": DEFAULT,
    "exit-search": {**DEFAULT, "iterations": INT(1, 20000), "c": NUM(0.0, 10.0), "w": NUM(0.0, 100.0),
                    "backend": {"type": "choice", "values": ["auto", "numba", "python"]},
                    "rollout_backend": {"type": "choice", "values": ["auto", "numba", "python"]}},
    "guided": {**DEFAULT, "iterations": INT(1, 20000), "batch": INT(1, 256), "c": NUM(0.0, 10.0),
               "lam": NUM(0.0, 1.0), "fpu": NUM(0.0, 1.0)},
}


def test_the_allow_list_is_the_one_written_out_before():
    assert specs.describe() == BEFORE
    assert list(specs.describe()) == sorted(BEFORE) == specs.allowed_agents()


def test_the_named_caps_are_the_declared_ones():
    served = {n: d.served_options() for n, d in declarations().items() if d.served}
    assert {n: o["iterations"].serve for n, o in served.items() if "iterations" in o} == {
        n: (1, specs.MAX_ITERATIONS) for n in ("exit-search", "guided", "ismcts")}
    assert served["pimc"]["worlds"].serve == (1, specs.MAX_WORLDS)


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_every_served_cap_is_inside_the_agents_own_bounds(name):
    for opt in declarations()[name].served_options().values():
        if opt.type in (int, float):
            lo, hi = opt.serve
            assert opt.low is None or lo >= opt.low, (name, opt.name)
            assert opt.high is None or hi <= opt.high, (name, opt.name)


@pytest.mark.parametrize("spec,words", [("ismcts:trees=2", "trees=2 needs backend=numba"),
                                        ("ismcts:backend=numba,iterations=2,trees=4", "trees=4 must be at most iterations")])
def test_a_served_spec_breaking_a_rule_between_options_is_refused_before_any_agent_is_built(spec, words):
    with pytest.raises(specs.SpecError, match=words):
        specs.check_allowed(spec)
    assert specs.check_allowed("ismcts:backend=numba,iterations=8,trees=4") == "ismcts:backend=numba,iterations=8,trees=4"
