"""The search responder (training/search_response.py): it replays the public actions, its
simulated target is the target agent itself, the worlds it keeps are those the target's
play allows (no leak: a function of the information set), and it plays legal moves."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.envs.vector import VectorEngine  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.training.search_response import (SearchResponder, TargetPolicy, initial_hands,  # noqa: E402
                                                   public_actions)
from positions import Spec, positions  # noqa: E402


def _played(seed, n, steps):
    """A deal played ``steps`` random legal actions (fewer if the deal would end)."""
    return positions(Spec(n, seed, steps=steps))[0]


@pytest.mark.parametrize("n", [3, 4])
def test_public_actions_and_initial_hands_rebuild_the_deal(n):
    for seed in range(30):
        st = _played(seed, n, seed % 40)
        info = InfoSet(st, st.deciding_seat)
        init = initial_hands(info, np.array([st.hands], dtype=np.int64))
        eng = VectorEngine(1, n)
        eng.reset(deals=init, leaders=[st.first_leader])
        for a in public_actions(info):
            eng.apply(np.array([a]))
        back = eng.to_state(0)
        assert back.hands == st.hands and back.history == st.history and back.cards == st.cards
        assert back.phase == st.phase and back.holder == st.holder


@pytest.mark.parametrize("spec", ["exit:default", "neural:default", "policy:default", "heuristic"])
def test_the_simulated_target_is_the_agent(spec):
    """On real positions, the policy the responder simulates picks the agent's own action."""
    target, agent = TargetPolicy(spec), make_agent(spec)
    for n in (3, 4):
        states = [_played(k, n, 3 + k % 30) for k in range(24)]
        infos = [InfoSet(s, s.deciding_seat) for s in states]
        mine = []
        for s, info in zip(states, infos):
            one = VectorEngine(1, n)
            one.reset(deals=[s.initial_hands], leaders=[s.first_leader])
            for a in public_actions(info):
                one.apply(np.array([a]))
            mine.append(int(target.actions(one, np.array([0]))[0]))
        want = [agent.act(info, info.legal_actions, np.random.default_rng(0)) for info in infos]
        assert mine == want


def test_kept_worlds_agree_with_the_targets_play_and_depend_only_on_the_information_set():
    target = make_agent("exit:default")
    me = SearchResponder("exit:default", worlds=16, candidates=4)
    # a 4-player deal where seats 1 and 3 (side 1) are the target and side 0 plays randomly
    rng = np.random.default_rng(11)
    st = State.random(rng, 0, 4)
    for _ in range(14):
        la = st.legal_actions()
        a = target.act(InfoSet(st, st.deciding_seat), la, rng) if st.deciding_seat & 1 else la[0]
        st.apply(a)
    info = InfoSet(st, 0 if st.deciding_seat & 1 else st.deciding_seat)
    kept = me.consistent_worlds(info, np.random.default_rng(5))
    assert 0 < me.last_consistent <= 64 and len(kept) == min(16, me.last_consistent)
    tp = TargetPolicy("exit:default")
    for w in kept:  # replaying each kept world, the target makes every one of its recorded decisions
        eng = VectorEngine(1, 4)
        eng.reset(deals=[w], leaders=[st.first_leader])
        for a in public_actions(info):
            if eng.deciding_seat[0] & 1:
                assert tp.actions(eng, np.array([0]))[0] == a
            eng.apply(np.array([a]))
        assert w[info.seat] == st.initial_hands[info.seat]  # its own hand is the real one
    # no leak: another deal of the hidden cards, the same information set, the same worlds
    redeal = InfoSet(info.world_state(info.sample_hands(np.random.default_rng(2))), info.seat)
    again = me.consistent_worlds(redeal, np.random.default_rng(5))
    assert np.array_equal(kept, again)


def test_plays_legal_moves_and_refuses_bad_targets():
    me = make_agent("respond:target=exit:default,worlds=4,candidates=2")
    for n in (3, 4):
        st = State.random(np.random.default_rng(n), 0, n)
        rng = np.random.default_rng(0)
        while not st.done:
            info = InfoSet(st, st.deciding_seat)
            a = me.act(info, info.legal_actions, rng)
            assert a in info.legal_actions
            st.apply(a)
    with pytest.raises(ValueError, match="action probabilities are known"):
        make_agent("respond:target=pimc")
    with pytest.raises(ValueError, match="worlds"):
        make_agent("respond:worlds=0")


def test_exact_endgames_play_the_exact_best_response_of_the_solo():
    """With ``exact_tricks=K`` the 3-player solo's play in the last K tricks is the exact best
    response of ``br_validation`` (no gap on any position)."""
    from twilight_env.training import br_validation as V

    exact = "respond:target=exit:default,worlds=4,candidates=2,exact_tricks=2"
    r = V.validate("exit:default", [exact], 3, "solo", 8, 2, 21, progress=False)
    assert r["summary"][exact]["mean_gap"][0] == 0 and r["summary"][exact]["first_is_best"] == 1
    assert make_agent(exact).name == exact + ",max_worlds=2000"


def test_exact_endgames_with_a_partner_play_legal_moves():
    """A seat with a partner (4 players) plays legal moves in exact mode, the whole deal."""
    me = make_agent("respond:target=exit:default,worlds=4,candidates=2,exact_tricks=2")
    st = State.random(np.random.default_rng(9), 1, 4)
    rng = np.random.default_rng(0)
    while not st.done:
        info = InfoSet(st, st.deciding_seat)
        a = me.act(info, info.legal_actions, rng) if st.deciding_seat % 2 == 0 else info.legal_actions[0]
        assert a in info.legal_actions
        st.apply(a)


@pytest.mark.parametrize("spec,match", [("respond:exact_tricks=4", "exact_tricks"),
                                        ("respond:exact_tricks=1.5", "exact_tricks"),
                                        ("respond:max_worlds=0", "max_worlds")])
def test_bad_exact_options_are_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        make_agent(spec)


@pytest.mark.parametrize("spec", ["policy:default,temperature=1", "exit:default,temperature=0.5",
                                  "neural:default,temperature=0.05"])
def test_the_simulated_probabilities_are_the_agents(spec):
    """For a sampled target, the probabilities the responder simulates on batch-engine rows
    are the agent's own ``action_probs`` from the information set (float32 tolerance)."""
    target, agent = TargetPolicy(spec), make_agent(spec)
    assert not target.deterministic
    for n in (3, 4):
        states = [_played(k, n, 3 + k % 30) for k in range(16)]
        for s in states:
            info = InfoSet(s, s.deciding_seat)
            one = VectorEngine(1, n)
            one.reset(deals=[s.initial_hands], leaders=[s.first_leader])
            for a in public_actions(info):
                one.apply(np.array([a]))
            got = target.probs(one, np.array([0]))[0]
            assert np.allclose(got, agent.action_probs(info, info.legal_actions), atol=1e-5)


@pytest.mark.parametrize("spec,match", [
    ("respond:target=heuristic,temperature=1", "the heuristic target has none"),
    ("respond:target=policy:default,temperature=-1", r"respond option temperature must be a finite number in \[0, 100\]"),
])
def test_a_bad_target_temperature_is_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        make_agent(spec)
    with pytest.raises(ValueError, match="given twice"):
        SearchResponder("policy:default,temperature=1", temperature=0.5)


def test_a_target_temperature_reaches_the_target_and_zero_is_the_greedy_responder():
    """``respond:...,temperature=T`` samples the target at T; ``temperature=0`` is the greedy
    target of before: the same worlds and the same decisions as without the option."""
    me = make_agent("respond:target=policy:default,temperature=0.5,worlds=4,candidates=2")
    assert me.target.temperature == 0.5 and me.target.spec == "policy:default,temperature=0.5"
    plain = make_agent("respond:target=policy:default,worlds=4,candidates=2")
    zero = make_agent("respond:target=policy:default,temperature=0,worlds=4,candidates=2")
    assert zero.target.deterministic
    st = State.random(np.random.default_rng(4), 0, 3)
    for _ in range(12):
        st.apply(st.legal_actions()[0])
    info = InfoSet(st, st.deciding_seat)
    a = plain.action_values(info, info.legal_actions, np.random.default_rng(3))
    assert zero.action_values(info, info.legal_actions, np.random.default_rng(3)) == a
