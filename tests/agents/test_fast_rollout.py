"""The compiled heuristic rollout (twilight_env.agents.fast_rollout) against the Python heuristic:
the same action at every decision, the same final state and scores, the same random
draws with epsilon, and the same search decisions in pimc and ismcts."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from twilight_env.rules.engine import HOLD, NUM_TRICKS
from twilight_env.rules.state import _FIELDS
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents import fast_rollout
from twilight_env.agents import heuristic
from twilight_env.agents.base import make_agent
from twilight_env.agents.ismcts import ISMCTSAgent
from twilight_env.agents.pimc import PIMCAgent, RolloutScorer, rollout as python_rollout
from positions import Spec, positions

needs_numba = pytest.mark.skipif(not fast_rollout.HAVE_NUMBA, reason="numba is not installed")

PLAYER_ORDER = (4, 4, 3, 3, 3)
"""The players of successive states. A deal's engine state is the same under every match
variant (goals_333, individual scoring, fixed_solo), so only the number of players matters."""


def _states(seed: int, n: int):
    """``n`` states of deals of 4 and 3 players (in :data:`PLAYER_ORDER`), played forward by
    random legal actions for 0..49 steps (any trick, place and phase, hold phases included)."""
    made = {p: iter(positions(Spec(p, seed, n, steps=(0, 50)))) for p in (4, 3)}
    return [next(made[PLAYER_ORDER[i % len(PLAYER_ORDER)]]) for i in range(n)]


def _fields(st):
    return {f: getattr(st, f) for f in _FIELDS}


@needs_numba
def test_states_cover_hold_phases_mid_trick_and_both_player_counts():
    sts = _states(11, 300)
    assert any(s.phase == HOLD for s in sts)
    assert any(s.place == 3 for s in sts)
    assert {s.num_players for s in sts} == {3, 4}
    assert any(s.trick == NUM_TRICKS - 1 for s in sts)


@needs_numba
def test_every_decision_equals_the_python_heuristic():
    """Along the Python heuristic's own rollout from each state, the compiled decision
    equals ``heuristic.decide_state`` at every decision point (thousands of them)."""
    decisions = 0
    for st in _states(1, 160):
        s = st.clone()
        while not s.done:
            a = heuristic.decide_state(s)
            assert fast_rollout.decide_state(s) == a, (s, s.cards, s.captured)
            s.apply(a)
            decisions += 1
    assert decisions > 3000


@needs_numba
def test_rollout_reaches_the_python_rollouts_final_state_and_scores():
    rng = np.random.default_rng(0)
    for st in _states(2, 160):
        want = python_rollout(st.clone(), rng, "heuristic", 0.0)
        got = fast_rollout.rollout(st.clone())
        assert _fields(got) == _fields(want)
        assert fast_rollout.rollout_scores(st) == want.side_scores()
        assert got.returns() == want.returns() and got.seat_scores() == want.seat_scores()
        assert fast_rollout.rollout_actions(st) == _actions(st, want)


def _actions(start, final):
    """The actions that lead from ``start`` to ``final`` (requests from the history)."""
    s = start.clone()
    acts = []
    for chooser, holder, card in final.history[len(start.history):]:
        if s.holder < 0 and holder != chooser:
            acts.append(28 + ((holder - chooser) & 3) - 1)
            s.apply(acts[-1])
        acts.append(card)
        s.apply(card)
    return acts


@needs_numba
def test_rollout_from_sampled_worlds_of_information_sets():
    """The states the search agents roll out: determinizations of an information set."""
    rng = np.random.default_rng(5)
    for st in _states(3, 60):
        info = InfoSet(st, st.deciding_seat)
        world = info.sample_state(rng)
        want = python_rollout(world.clone(), rng, "heuristic", 0.0)
        assert fast_rollout.rollout_scores(world) == want.side_scores()
        assert _fields(fast_rollout.rollout(world.clone())) == _fields(want)


@needs_numba
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0])
def test_epsilon_rollout_draws_the_same_random_stream(epsilon):
    """With epsilon the compiled rollout makes the same draws as the Python one: the same
    actions, and the Generator is left in the same state."""
    for i, st in enumerate(_states(4, 40)):
        r_py, r_nb = np.random.default_rng(i), np.random.default_rng(i)
        want = python_rollout(st.clone(), r_py, "heuristic", epsilon)
        got = fast_rollout.rollout(st.clone(), r_nb, epsilon)
        assert _fields(got) == _fields(want)
        assert r_py.bit_generator.state == r_nb.bit_generator.state
        r_py, r_nb = np.random.default_rng(i), np.random.default_rng(i)
        assert fast_rollout.rollout_scores(st, r_nb, epsilon) == \
            python_rollout(st.clone(), r_py, "heuristic", epsilon).side_scores()
        assert r_py.bit_generator.state == r_nb.bit_generator.state


@needs_numba
def test_constants_are_read_from_the_heuristic_not_compiled_in(monkeypatch):
    """Other values of the heuristic's constants change the play, and the compiled
    rollout follows them (it reads them through ``params()``, not from its compiled cache)."""
    rng = np.random.default_rng(0)
    sts = _states(6, 60)
    before = [python_rollout(st.clone(), rng, "heuristic", 0.0).history for st in sts]
    for name, value in [("TIP", 40.0), ("DENY", 0.05), ("LEAD", 30.0), ("P_UNSURE", 0.9),
                        ("LATER_OWN", 0.0), ("LATER_OTHER", 12.0)]:
        monkeypatch.setattr(heuristic, name, value)
    monkeypatch.setattr(fast_rollout, "_PARAMS", None)
    changed = 0
    for st, old in zip(sts, before):
        want = python_rollout(st.clone(), rng, "heuristic", 0.0)
        assert _fields(fast_rollout.rollout(st.clone())) == _fields(want)
        changed += want.history != old
    assert changed > 0


@needs_numba
@pytest.mark.parametrize("spec", ["ismcts:iterations=60", "pimc:worlds=6,solver_tricks=1"])
def test_search_agents_decide_the_same_with_either_backend(spec):
    """pimc and ismcts make the same decisions with the compiled and the Python rollout
    (the same rollout results and the same random draws); ismcts builds the same tree."""
    for i, st in enumerate(_states(7, 20)):
        info = InfoSet(st, st.deciding_seat)
        legal = info.legal_actions
        py = make_agent(spec + ",rollout_backend=python")
        nb = make_agent(spec + ",rollout_backend=numba")
        r_py, r_nb = np.random.default_rng(i), np.random.default_rng(i)
        assert py.act(info, legal, r_py) == nb.act(info, legal, r_nb)
        assert r_py.bit_generator.state == r_nb.bit_generator.state
        if isinstance(py, ISMCTSAgent) and len(legal) > 1:
            t_py = py.search(info, np.random.default_rng(i))
            t_nb = nb.search(info, np.random.default_rng(i))
            assert t_py.visits == t_nb.visits and t_py.value == t_nb.value
        if isinstance(py, PIMCAgent) and len(legal) > 1:
            assert py.action_means(info, legal, np.random.default_rng(i)) == \
                nb.action_means(info, legal, np.random.default_rng(i))


@needs_numba
def test_auto_backend_is_numba_when_installed_and_agents_pickle():
    for spec in ("pimc", "ismcts"):
        agent = make_agent(spec)
        assert agent._score.compiled
        again = pickle.loads(pickle.dumps(agent))
        assert again._score.compiled
        assert not make_agent(spec + ":rollout_backend=python")._score.compiled
        assert not make_agent(spec + ":rollout=random")._score.compiled


def test_backend_options_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="rollout_backend must be 'auto', 'numba' or 'python'"):
        make_agent("ismcts:rollout_backend=fast")
    with pytest.raises(ValueError, match="rollout_backend must be"):
        PIMCAgent(rollout_backend="c")
    monkeypatch.setattr(fast_rollout, "HAVE_NUMBA", False)
    assert fast_rollout.resolve_backend("auto") == "python"
    assert not RolloutScorer("heuristic", 0.0, "auto").compiled
    with pytest.raises(ValueError, match="needs the numba package"):
        make_agent("pimc:rollout_backend=numba")


def test_without_numba_the_message_names_the_option_given():
    """With numba blocked, ``ismcts:backend=numba`` names ``backend`` (not ``rollout_backend``,
    which the user did not give) and suggests ``backend='python'``; ``rollout_backend=numba``
    names ``rollout_backend``; ``guided`` (compiled only) suggests no option it lacks."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\n"
        "sys.modules['numba'] = None\n"
        "from twilight_env.agents.base import make_agent\n"
        "from twilight_env.agents import guided\n"
        "for spec in ('ismcts:backend=numba', 'ismcts:rollout_backend=numba', 'pimc:rollout_backend=numba'):\n"
        "    try:\n"
        "        make_agent(spec)\n"
        "    except ValueError as e:\n"
        "        print(e)\n"
        "try:\n"
        "    guided._nb()\n"
        "except ValueError as e:\n"
        "    print(e)\n")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    search, rollout, pimc, compiled = r.stdout.strip().splitlines()
    assert search.startswith("backend='numba' needs the numba package")
    assert search.endswith("use backend='python' (agent spec 'ismcts:backend=numba')")  # make_agent names the spec
    assert "rollout_backend" not in search.partition(" (agent spec")[0]
    for line, spec in ((rollout, "ismcts:rollout_backend=numba"), (pimc, "pimc:rollout_backend=numba")):
        assert line.startswith("rollout_backend='numba' needs the numba package")
        assert line.endswith(f"use rollout_backend='python' (agent spec '{spec}')")
    assert "needs the numba package" in compiled and "backend" not in compiled


@needs_numba
def test_bad_inputs_are_refused():
    st = _states(8, 1)[0]
    with pytest.raises(ValueError, match="epsilon must be a number in"):
        fast_rollout.rollout_actions(st, np.random.default_rng(0), 1.5)
    with pytest.raises(ValueError, match="needs rng"):
        fast_rollout.rollout_actions(st, None, 0.5)
    with pytest.raises(ValueError, match="expected a twilight_env.rules.engine.State"):
        fast_rollout.state_array(object())
    done = fast_rollout.rollout(st.clone())
    with pytest.raises(ValueError, match="the deal is over"):
        fast_rollout.decide_state(done)
    assert fast_rollout.rollout_actions(done) == []


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, strategies as hst  # noqa: E402


@needs_numba
@given(seed=hst.integers(0, 2**32 - 1))
def test_property_rollout_parity_over_seeds(seed):
    """Any seed: random states of every variant roll out to the Python rollout's final
    state, decision by decision."""
    rng = np.random.default_rng(seed)
    for st in _states(seed, 3):
        want = python_rollout(st.clone(), rng, "heuristic", 0.0)
        assert fast_rollout.rollout_actions(st) == _actions(st, want)
        assert fast_rollout.rollout_scores(st) == want.side_scores()
