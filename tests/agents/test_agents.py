"""Agent protocol, legality under fuzzing, determinism by seed, no peeking (issue 4)."""

from __future__ import annotations

import numpy as np
import pytest

from positions import Spec, positions
from twilight_env.rules.engine import HOLD, NEW_MOON, State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents.base import available_agents, make_agent, play_deal

# small settings keep the default run short; the slow fuzz uses the defaults
FAST_SPECS = ["random", "heuristic", "pimc:worlds=3", "pimc:worlds=2,solver_tricks=3,rollout=random",
              "ismcts:iterations=25", "ismcts:iterations=15,rollout=random,c=1.5"]
SEARCH_SPECS = ["pimc:worlds=4", "pimc:worlds=3,rollouts=2,epsilon=0.3", "ismcts:iterations=40"]


def _decisions(seed, count, num_players):
    """(state, infoset) pairs of random positions, from the deciding seat's view."""
    return [(st, InfoSet(st, st.deciding_seat)) for st in positions(Spec(num_players, seed, count))]


@pytest.mark.parametrize("spec", FAST_SPECS)
def test_protocol(spec):
    agent = make_agent(spec)
    assert isinstance(agent.name, str) and agent.name
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset()
    st, info = _decisions(1, 1, 4)[0]
    a = agent.act(info, info.legal_actions, np.random.default_rng(0))
    assert type(a) is int and a in info.legal_actions


@pytest.mark.parametrize("spec", FAST_SPECS)
@pytest.mark.parametrize("num_players", [4, 3])
def test_fuzz_always_legal(spec, num_players):
    """Random positions of every kind (both phases; in 3 players the solo deciding for
    the new moon, R7.3): the action is always legal and nothing raises."""
    agent = make_agent(spec)
    rng = np.random.default_rng(3)
    kinds = set()
    n = 40 if spec in ("random", "heuristic") else 12
    for st, info in _decisions(20 + num_players, n, num_players):
        a = agent.act(info, info.legal_actions, rng)
        assert type(a) is int and a in info.legal_actions, (spec, st)
        kinds.add((st.phase, st.acting_seat == NEW_MOON and num_players == 3))
    if n >= 40:
        assert (HOLD, False) in kinds and (0, False) in kinds
        if num_players == 3:
            assert (0, True) in kinds  # the solo chose for the new moon


@pytest.mark.parametrize("spec", ["heuristic", "pimc:worlds=3", "ismcts:iterations=20"])
@pytest.mark.parametrize("num_players", [4, 3])
def test_full_deals_legal(spec, num_players):
    """Whole deals against random seats: play_deal raises on any illegal action."""
    rng = np.random.default_rng(num_players)
    agents = [make_agent(spec), make_agent("random"), make_agent(spec), make_agent("random")]
    for _ in range(2 if spec != "heuristic" else 30):
        st = play_deal(State.random(rng, 0, num_players), agents, rng)
        assert st.done


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["heuristic", "pimc", "ismcts:iterations=300"])
@pytest.mark.parametrize("num_players", [4, 3])
def test_fuzz_always_legal_long(spec, num_players):
    agent = make_agent(spec)
    rng = np.random.default_rng(99)
    n = 2000 if spec == "heuristic" else 60
    for st, info in _decisions(500 + num_players, n, num_players):
        a = agent.act(info, info.legal_actions, rng)
        assert type(a) is int and a in info.legal_actions, (spec, st)


@pytest.mark.parametrize("spec", ["random"] + SEARCH_SPECS + ["heuristic"])
def test_same_seed_same_action(spec):
    for num_players in (4, 3):
        for st, info in _decisions(40 + num_players, 4, num_players):
            a1 = make_agent(spec).act(info, info.legal_actions, np.random.default_rng(123))
            a2 = make_agent(spec).act(info, info.legal_actions, np.random.default_rng(123))
            assert a1 == a2


@pytest.mark.parametrize("spec", ["heuristic"] + SEARCH_SPECS)
def test_action_depends_only_on_the_infoset(spec):
    """Two true deals that the viewer cannot tell apart (a world sampled from its own
    information set) give the same action with the same rng seed: agents read only the
    information set (R2.5)."""
    rng = np.random.default_rng(8)
    checked = 0
    for num_players in (4, 3):
        for st, info in _decisions(60 + num_players, 6, num_players):
            other = info.sample_state(rng)
            info2 = InfoSet(other, st.deciding_seat)
            if other.hands == st.hands:
                continue
            assert info2.known_masks == info.known_masks and info2.hand_counts == info.hand_counts
            assert info2.history == info.history and info2.legal_actions == info.legal_actions
            a1 = make_agent(spec).act(info, info.legal_actions, np.random.default_rng(5))
            a2 = make_agent(spec).act(info2, info2.legal_actions, np.random.default_rng(5))
            assert a1 == a2
            checked += 1
    assert checked >= 6


def test_spec_errors_are_clear():
    with pytest.raises(ValueError, match="valid agents"):
        make_agent("nosuchagent")
    assert {"heuristic", "pimc", "ismcts", "random"} <= set(available_agents())
    for bad, word in [("pimc:worlds=0", "worlds"), ("pimc:solver_tricks=9", "solver_tricks"),
                      ("pimc:rollout=magic", "rollout"), ("pimc:epsilon=2", "epsilon"), ("pimc:backend=gpu", "backend"),
                      ("ismcts:iterations=-1", "iterations"), ("ismcts:c=-1", "c must"),
                      ("ismcts:rollout=x", "rollout"), ("pimc:bogus=1", "options")]:
        with pytest.raises(ValueError, match=word):
            make_agent(bad)


@pytest.mark.parametrize("spec", ["heuristic", "pimc:worlds=2", "ismcts:iterations=5"])
def test_empty_legal_actions_rejected(spec):
    rng = np.random.default_rng(0)
    st = positions(Spec(4, 0))[0]
    with pytest.raises(ValueError, match="legal action"):
        make_agent(spec).act(InfoSet(st, st.deciding_seat), (), rng)
