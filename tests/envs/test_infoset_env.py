"""``env.unwrapped.infoset(agent)`` and its determinizations, seen from the environment."""

from __future__ import annotations

import numpy as np
import pytest

import twilight_env
from positions import Spec, random_points, viewer_seats
from twilight_env.rules.cards import CARDS, MOON_MASK, SUN_MASK, codes_of, ids_of
from twilight_env.obs.encoding import encode_infoset
from twilight_env.rules.engine import NEW_MOON, DealState, State
from twilight_env.rules.infoset import InfoSet


def _replay(info: InfoSet, world: list[int]) -> State:
    """Deal the world's hands plus every played card back to its holder, then replay the
    public history with the engine (legal at every step, or apply raises)."""
    init = list(world)
    for _, holder, card in info.history:
        init[holder] |= 1 << card
    st = State(init, info.first_leader, info.num_players)
    for chooser, holder, card in info.history:
        if chooser != holder:
            st.apply(28 + (holder - chooser) % 4 - 1)  # the request (R3.2)
        st.apply(card)
    if info.phase == "hold":
        st.apply(28 + (info.holder - info.chooser) % 4 - 1)
    return st


@pytest.mark.parametrize("num_players", [4, 3])
def test_sample_world_agrees_with_knowledge_and_history_replays(num_players):
    rng = np.random.default_rng(40 + num_players)
    n = 0
    for st in random_points(Spec(num_players, 40 + num_players, 10), every=3):
        for seat in viewer_seats(num_players):
            info = InfoSet(st, seat)
            for _ in range(2):
                codes = info.sample_world(rng)
                world = [sum(1 << CARDS.index(c) for c in hand) for hand in codes]
                assert codes[seat] == info.hand
                if num_players == 3:
                    assert codes[NEW_MOON] == info.open_hand
                for s in range(4):
                    assert (bin(world[s] & SUN_MASK).count("1"), bin(world[s] & MOON_MASK).count("1")) == info.counts[s]
                all_cards = world[0] | world[1] | world[2] | world[3] | info.played
                assert all_cards == (1 << 28) - 1
                assert sum(bin(w).count("1") for w in world) + bin(info.played).count("1") == 28
                replayed = _replay(info, world)
                ws = info.world_state(codes)
                assert replayed.hands == ws.hands == world
                assert (replayed.cards, replayed.holders, replayed.pending, replayed.captured, replayed.leader) == (
                    ws.cards, ws.holders, ws.pending, ws.captured, ws.leader)
                assert replayed.legal_actions() == ws.legal_actions()
                # searchable: play the world to its end with the same action encoding
                while not ws.done:
                    legal = ws.legal_actions()
                    ws.apply(legal[int(rng.integers(len(legal)))])
                n += 1
    assert n > 200


def test_sample_world_is_uniform_chi_square():
    """Where each unseen card lands: frequencies match count_s / unseen-of-its-cult."""
    from scipy.stats import chisquare

    rng = np.random.default_rng(7)
    st = State.random(rng, 0, 4)
    for _ in range(9):
        legal = st.legal_actions()
        st.apply(legal[int(rng.integers(len(legal)))])
    info = InfoSet(st, 0)
    hidden = [1, 2, 3]
    unseen = info.unseen_mask
    draws = 2000
    where = np.zeros((28, 3), dtype=int)  # [card, hidden seat] counts
    for _ in range(draws):
        hands = info.sample_hands(rng)
        for j, s in enumerate(hidden):
            where[list(ids_of(hands[s])), j] += 1
    freq = {c: where[c].tolist() for c in ids_of(unseen)}
    pvalues = []
    for c, f in freq.items():
        cult = 0 if c < 14 else 1
        pool = bin(unseen & (SUN_MASK if cult == 0 else MOON_MASK)).count("1")
        expected = [draws * info.counts[s][cult] / pool for s in hidden]
        keep = [j for j in range(3) if expected[j] > 0]
        assert all(f[j] == 0 for j in range(3) if expected[j] == 0)
        if len(keep) > 1:
            pvalues.append(chisquare([f[j] for j in keep], [expected[j] for j in keep]).pvalue)
    assert len(pvalues) >= 10
    assert min(pvalues) > 1e-4, pvalues


@pytest.mark.parametrize("num_players", [4, 3])
def test_env_infoset_matches_observation_and_hides_the_deal(num_players):
    env = twilight_env.env(num_players=num_players, episode="match", target=300)
    env.reset(seed=4)
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, _, _ = env.last()
        if term:
            env.step(None)
            continue
        for a in env.agents:
            info = raw.infoset(a)
            assert encode_infoset(info).tobytes() == raw.observe(a)["observation"].tobytes()
            seat = raw.seat_of(a)
            assert info.seat == seat
            assert info.hand == codes_of(raw._state.hands[seat])
            assert not any(isinstance(v, DealState) for v in (getattr(info, k, None) for k in InfoSet.__slots__))
        info = raw.infoset(agent)
        assert info.to_act and list(info.legal_actions) == np.flatnonzero(obs["action_mask"]).tolist()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    assert steps > 28
    for call in (raw.infoset, raw.observe, raw.seat_of, env.observe):
        with pytest.raises(ValueError, match="unknown agent"):
            call("player_9")
