"""The PettingZoo env with ``tricks`` < 7: PettingZoo's api_test, a whole deal by random legal
actions, a given reduced deal, and the left-out cards flagged as gone in the observation."""

import numpy as np
import pytest
from pettingzoo.test import api_test

import twilight_env
from twilight_env.obs.encoding import encode_infoset, encode_observation
from twilight_env.obs.layout import GONE
from twilight_env.rules.cards import deck_mask, card_id
from twilight_env.rules.engine import ReducedState
from twilight_env.rules.infoset import InfoSet


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("tricks", [1, 2])
def test_api_test(players, tricks):
    api_test(twilight_env.env(num_players=players, tricks=tricks), num_cycles=50)


@pytest.mark.parametrize("players", [3, 4])
def test_a_reduced_deal_plays_out_and_pays(players):
    env = twilight_env.raw_env(num_players=players, tricks=2)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) > 0
        env.step(int(rng.choice(legal)))
        steps += 1
    assert 8 <= steps <= 16
    st = env._state
    assert st.done and st.num_tricks == 2
    sun, moon = (st.side_scores() if players == 4 else st.side_scores()[::-1])
    if players == 4:
        assert info["deal_points"] == {"sun": sun, "moon": moon}
    else:
        assert sorted(info["deal_points"].values()) == sorted([moon, sun, sun])


def test_reset_with_a_reduced_deal_and_bad_one():
    env = twilight_env.raw_env(num_players=4, tricks=1)
    env.reset(options={"deal": [["S7"], ["MO"], ["SO"], ["M7"]], "dealer": 3})
    assert env._state.hands == [1 << card_id(c) for c in ("S7", "MO", "SO", "M7")]
    with pytest.raises(ValueError, match="option 'deal'.*not in the deck of 1 tricks"):
        env.reset(options={"deal": [["S7"], ["MO"], ["SO"], ["MC1"]]})
    with pytest.raises(ValueError, match="tricks must be an int 1..7"):
        twilight_env.raw_env(tricks=9)


def test_left_out_cards_are_gone_and_both_encoders_agree():
    rng = np.random.default_rng(1)
    st = ReducedState.random(rng, 0, 4, 2)
    st.apply(st.legal_actions()[0])
    for seat in range(4):
        obs = encode_observation(st, seat)
        assert np.array_equal(obs, encode_infoset(InfoSet(st, seat)))
        gone = obs[GONE:GONE + 28]
        out = [c for c in range(28) if not deck_mask(2) >> c & 1]
        assert gone[out].all()
