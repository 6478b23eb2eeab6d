"""DMC features: the same from an engine state and an information set, and no hidden information (R2.5, R7.1)."""

import numpy as np
import pytest
import torch

from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents.nn.features import (ACTION_FEATURES, ACTION_SIZE, NUM_MASKS, STATE_SIZE, expand_rows, infoset_row,
                               state_row)
from twilight_env.agents.nn.network import NetConfig, QNetwork
from positions import Spec, random_points


def _random_decisions(num_players, deals, seed):
    """Every decision of ``deals`` random deals, with a generator for the test's own draws."""
    rng = np.random.default_rng(seed)
    for st in random_points(Spec(num_players, seed, deals)):
        if not st.done:
            yield st, rng


@pytest.mark.parametrize("num_players", [4, 3])
def test_state_row_equals_infoset_row(num_players):
    """Self-play (engine state) and the agent (InfoSet) see the same features."""
    n = 0
    for st, _ in _random_decisions(num_players, 30, seed=num_players):
        row = state_row(st)
        assert row == infoset_row(InfoSet(st, st.deciding_seat))
        assert len(row) == NUM_MASKS and all(0 <= x < 2 ** 28 for x in row)
        n += 1
    assert n > 1000


@pytest.mark.parametrize("num_players", [4, 3])
def test_r2_5_features_ignore_hidden_cards(num_players):
    """R2.5/R7.1: redealing the cards the viewer cannot see (sample_state) leaves its features unchanged."""
    changed = 0
    for st, rng in _random_decisions(num_players, 15, seed=10 + num_players):
        v = st.deciding_seat
        info = InfoSet(st, v)
        other = info.sample_state(rng)
        changed += other.hands != st.hands
        assert state_row(other, v) == state_row(st, v)
    assert changed > 100  # the redeal really moved hidden cards


def test_r7_3_solo_sees_new_moon_hand_as_acting_hand():
    """3 players: when the solo decides for the new moon, the acting-hand mask is the open hand (R7.3)."""
    seen = 0
    for st, _ in _random_decisions(3, 20, seed=5):
        if st.acting_seat == 2:
            row = state_row(st)
            assert st.deciding_seat == 0
            assert row[2] == st.hands[2] == row[1]
            seen += 1
    assert seen > 50


def test_expand_matches_network_expansion():
    st = State.random(np.random.default_rng(0), 0, 4)
    rows = np.array([state_row(st)], dtype=np.int64)
    net = QNetwork(NetConfig(trunk=(8,), head=(4,)))
    got = net.expand(torch.from_numpy(rows)).numpy()
    assert got.shape == (1, STATE_SIZE)
    np.testing.assert_array_equal(got, expand_rows(rows))
    # own hand: bit i of mask 0 is card id i
    assert [i for i in range(28) if got[0, i]] == [i for i in range(28) if st.hands[0] >> i & 1]


def test_action_features_table():
    assert ACTION_FEATURES.shape == (31, ACTION_SIZE)
    np.testing.assert_array_equal(ACTION_FEATURES[:, :31], np.eye(31, dtype=np.float32))
    assert ACTION_FEATURES[0, 31] == 1.0          # SP: Purgatory, strength 7/7 (R1)
    assert ACTION_FEATURES[27, 33] == 1.0         # MO: Obelisk multiplier 3/3 (R5.2)
    assert ACTION_FEATURES[28:, 35].tolist() == [1.0, 1.0, 1.0]  # requests (R3.2)


def test_infoset_row_refuses_a_viewer_not_to_act():
    st = State.random(np.random.default_rng(0), 0, 4)
    with pytest.raises(ValueError, match="not to act"):
        infoset_row(InfoSet(st, 1))
