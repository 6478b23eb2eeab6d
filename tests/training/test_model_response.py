"""The search responder to a modelled target (``respond:target=SPEC,model=MODEL``,
``training/search_response.py``, ``training/target_model.py``): with the target itself as the
model and no mixing it is the known-target responder, world for world and decision for
decision; its likelihood weights equal an enumeration by hand of the model's probabilities
mixed with the uniform one on small endgames (2 tricks left, R3-R5); no world's weight is 0
when the real target plays what the model never would; bad specs say what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.training import br_validation as V  # noqa: E402
from twilight_env.training.search_response import SearchResponder, initial_hands, public_actions  # noqa: E402
from twilight_env.training.target_model import MODEL_EPSILON, MixedTarget, mix_uniform  # noqa: E402

SMALL = "worlds=8,candidates=4"


def _position(seed: int, players: int, steps: int, other=None):
    """A deal after ``steps`` actions, seat 0's side playing its first legal action and the
    other side ``other`` (an agent; None: also the first legal action), and the information
    set of the next seat of side 0 to decide (seat 0's side is the responder's)."""
    rng = np.random.default_rng(seed)
    st = State.random(rng, 0, players)
    for _ in range(steps):
        info = InfoSet(st, st.deciding_seat)
        odd = st.deciding_seat & 1
        st.apply(other.act(info, info.legal_actions, rng) if odd and other else info.legal_actions[0])
    while st.deciding_seat & 1:
        info = InfoSet(st, st.deciding_seat)
        st.apply(info.legal_actions[0])
    return st, InfoSet(st, st.deciding_seat)


@pytest.mark.parametrize("target", ["policy:default", "policy:default;temperature=1"])
def test_the_target_as_its_own_model_is_the_known_target_responder(target):
    """``model`` equal to the target with ``epsilon=0``: the same worlds, weights, action
    values and decisions as ``respond:target=TARGET`` (3 and 4 players, several positions)."""
    known = make_agent(f"respond:target={target},{SMALL}")
    modelled = make_agent(f"respond:target={target},model={target},epsilon=0,{SMALL}")
    assert modelled.modelled and modelled.target.spec == known.target.spec
    assert modelled.filters == known.filters == (target == "policy:default")
    for players in (3, 4):
        for seed in range(3):
            _, info = _position(seed, players, 10 + 7 * seed, make_agent(target.replace(";", ",")))
            w1, c1 = known.weighted_worlds(info, np.random.default_rng(seed))
            w2, c2 = modelled.weighted_worlds(info, np.random.default_rng(seed))
            assert np.array_equal(w1, w2) and (c1 is None) == (c2 is None)
            assert c1 is None or np.array_equal(c1, c2)
            v1 = known.action_values(info, info.legal_actions, np.random.default_rng(seed))
            assert modelled.action_values(info, info.legal_actions, np.random.default_rng(seed)) == v1
            assert (modelled.act(info, info.legal_actions, np.random.default_rng(seed))
                    == known.act(info, info.legal_actions, np.random.default_rng(seed)))


def _by_hand(info, world, agent, resp, epsilon):
    """The likelihood of the public actions in one world under the model, by hand: at each
    decision of a seat outside ``resp``, ``(1 - epsilon) p(a) + epsilon / |legal|`` with
    ``p`` the model's ``action_probs`` (a greedy model: 1 on its ``act``, 0 elsewhere; with
    ``epsilon=1`` the model may be None)."""
    st = State([int(h) for h in initial_hands(info, np.array([world], dtype=np.int64))[0]],
               info.first_leader, info.num_players)
    like = 1.0
    for a in public_actions(info):
        if st.deciding_seat not in resp:
            seen = InfoSet(st, st.deciding_seat)
            if epsilon == 1:  # the uniform share alone: the model is not asked
                p = 0.0
            elif getattr(agent, "temperature", 0):
                p = float(agent.action_probs(seen, seen.legal_actions)[a])
            else:
                p = float(agent.act(seen, seen.legal_actions, np.random.default_rng(0)) == a)
            like *= (1 - epsilon) * p + epsilon / len(seen.legal_actions)
        st.apply(a)
    return like


@pytest.mark.parametrize("model,players,mode", [("policy:default", 3, "solo"),
                                                ("policy:default;temperature=1", 4, "seat=0")])
def test_the_mixed_weights_equal_an_enumeration_by_hand(model, players, mode):
    """Every deal of the unseen cards of small endgames, its likelihood by hand: the
    responder's batch-engine likelihoods and :func:`weighted_worlds` with the mixed model
    (its whole side's seats as the responder's) give the same posterior, every world keeps
    a positive weight, and for the greedy model the unmixed filter would have lost some."""
    eps = 0.1
    spec = model.replace(";", ",")
    agent = make_agent(spec)
    states = V.endgame_positions(V.Target("policy:default"), players, V.responder_seats(mode, players), 3, 2, 4)
    me = make_agent(f"respond:target=pimc,model={model},epsilon={eps},{SMALL}")
    lost = False
    for st in states:
        info = InfoSet(st, st.deciding_seat)
        side = frozenset(s for s in range(4) if (s & 1) == (info.seat & 1))
        every = V.enumerate_hands(info)
        hand = np.array([_by_hand(info, w, agent, side, eps) for w in every])
        assert (hand > 0).all()
        post = hand / hand.sum()
        like = me.likelihoods(info, initial_hands(info, np.array(every, dtype=np.int64)))
        assert np.allclose(like / like.sum(), post, rtol=1e-4, atol=1e-12)
        kept, weights = V.weighted_worlds(info, MixedTarget(V.Target(spec), eps), side, every)
        assert len(kept) == len(every)
        got = dict(zip((tuple(k.hands) for k in kept), weights / weights.sum()))
        assert np.allclose([got[tuple(w)] for w in every], post, rtol=1e-4, atol=1e-12)
        lost |= bool((np.array([_by_hand(info, w, agent, side, 0.0) for w in every]) == 0).any())
    assert lost or model != "policy:default"  # the mixing kept worlds that the filter drops


@pytest.mark.parametrize("players,mode", [(3, "solo"), (4, "seat=0")])
def test_the_blind_responder_weighs_by_the_legal_counts_alone(players, mode):
    """``model`` the target itself with ``epsilon=1`` (the blind responder of
    ``training/README.md``): each world's likelihood is the product of ``1 / |legal|`` over the other
    side's past decisions, by hand, the same for two targets of different play (nothing is
    read off the target's play), and the same in every consistent world: how many cards of
    each cult a hand holds is public (R2.5), so the count of legal actions is too."""
    states = V.endgame_positions(V.Target("policy:default"), players, V.responder_seats(mode, players), 3, 2, 4)
    blind = [make_agent(f"respond:target={t},model={t},epsilon=1,{SMALL}")
             for t in ("policy:default", "policy:default;temperature=1")]
    for st in states:
        info = InfoSet(st, st.deciding_seat)
        side = frozenset(s for s in range(4) if (s & 1) == (info.seat & 1))
        every = V.enumerate_hands(info)
        hand = np.array([_by_hand(info, w, None, side, 1.0) for w in every])
        init = initial_hands(info, np.array(every, dtype=np.int64))
        for me in blind:
            assert np.allclose(me.likelihoods(info, init), hand, rtol=1e-9, atol=0)
        assert np.ptp(hand) == 0 and hand[0] < 1  # uniform over the worlds, some choice seen


def test_no_world_is_lost_when_the_target_plays_what_the_model_never_would():
    """The other side plays ``random``; the greedy model would never have played some of
    its actions, so the known-target responder's likelihood of the true deal is 0, the
    modelled one's positive (and every candidate's), and the responder decides."""
    st, info = _position(3, 3, 18, make_agent("random"))
    init = initial_hands(info, np.array([st.hands], dtype=np.int64))
    known = SearchResponder("policy:default", worlds=8, candidates=4)
    modelled = make_agent(f"respond:target=random,model=policy:default,{SMALL}")
    assert modelled.epsilon == MODEL_EPSILON and not modelled.filters
    assert known.likelihoods(info, init)[0] == 0.0
    assert modelled.likelihoods(info, init)[0] > 0.0
    worlds, counts = modelled.weighted_worlds(info, np.random.default_rng(1))
    assert modelled.last_consistent == 32 and counts.sum() == 8
    assert modelled.act(info, info.legal_actions, np.random.default_rng(1)) in info.legal_actions


def test_mix_uniform_keeps_a_distribution_positive_on_the_legal_actions():
    legal = np.zeros((2, 31), dtype=bool)
    legal[0, [1, 4, 9]] = legal[1, [0, 30]] = True
    p = np.zeros((2, 31))
    p[0, 4] = p[1, 30] = 1.0
    m = mix_uniform(p, legal, 0.3)
    assert np.allclose(m.sum(1), 1) and (m[legal] > 0).all() and (m[~legal] == 0).all()
    assert m[0, 4] == pytest.approx(0.7 + 0.1) and m[0, 1] == pytest.approx(0.1) and m[1, 0] == pytest.approx(0.15)
    assert mix_uniform(p, legal, 0) is not None and np.array_equal(mix_uniform(p, legal, 0), p)


def test_a_modelled_target_plays_legal_moves_to_the_end_and_its_name_rebuilds_it():
    """Against a search target (3 players, the solo's seat) with the exact endgame on for the
    last trick (the exact best response to the mixed model's weights)."""
    me = make_agent("respond:target=ismcts:iterations=50;backend=python,model=policy:default,temperature=1,"
                    "worlds=4,candidates=2,exact_tricks=1")
    assert make_agent(me.name).name == me.name and me.real_target == "ismcts:iterations=50,backend=python"
    st = State.random(np.random.default_rng(5), 0, 3)
    rng = np.random.default_rng(0)
    while not st.done:
        info = InfoSet(st, st.deciding_seat)
        a = me.act(info, info.legal_actions, rng) if st.deciding_seat % 2 == 0 else info.legal_actions[-1]
        assert a in info.legal_actions
        st.apply(a)


@pytest.mark.parametrize("spec,match", [
    ("respond:target=ismcts", r"action probabilities are known.*model=policy:default"),
    ("respond:target=ismcts,model=ismcts", "the model must be an agent whose action probabilities are known"),
    ("respond:target=ismcts,model=nosuch", "the model must be an agent whose action probabilities are known"),
    ("respond:target=ismcts,model=policy:no/such.npz", "bad model"),
    ("respond:target=nosuch,model=policy:default", "not a valid agent spec"),
    ("respond:target=ismcts:iterations=0,model=policy:default", "not a valid agent spec"),
    ("respond:target=ismcts,model=policy:default,epsilon=0", "epsilon=0 is allowed only when the model is the target"),
    ("respond:target=policy:default,model=policy:default;temperature=1,epsilon=0", "epsilon=0 is allowed only"),
    ("respond:target=ismcts,model=policy:default,epsilon=1.5", "epsilon"),
    ("respond:target=policy:default,epsilon=0.1", "needs model=SPEC"),
    ("respond:target=ismcts,model=heuristic,temperature=1", "the heuristic target has none"),
    ("respond:target=ismcts,model=policy:default;temperature=1,temperature=0.5", "given twice"),
])
def test_a_bad_model_spec_is_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        make_agent(spec)


def test_a_badly_spelled_target_gets_the_spelling_not_the_model_hint():
    """A target whose options are written ``NAME;key=value`` is told how options are written;
    a known agent with a bad option is told what the option takes; only an agent whose
    probabilities are not known is told to give a model."""
    with pytest.raises(ValueError) as bad_spelling:
        make_agent("respond:target=pimc;worlds=32")
    message = str(bad_spelling.value)
    assert "respond option target writes the agent's options after its name and ':'" in message
    assert "'pimc:worlds=32', not 'pimc;worlds=32'" in message and "pimc,worlds" not in message
    assert "give a model" not in message
    with pytest.raises(ValueError) as bad_option:
        make_agent("respond:target=pimc:worlds=0")
    message = str(bad_option.value)
    assert "worlds must be an integer >= 1" in message and "give a model" not in message
    assert message.count("(agent spec ") == 1, message  # named once
    with pytest.raises(ValueError, match=r"give a model of it, e\.g\. respond:target=pimc:worlds=8;rollouts=2,model="):
        make_agent("respond:target=pimc:worlds=8;rollouts=2")
