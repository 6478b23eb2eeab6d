"""The batch encoder's tables agree with the scalar encoder's: seat field offsets and
the 3-player role flags (one definition, ``encoding._ROLE_3P``)."""

import numpy as np
import pytest

from twilight_env.obs import encoding as E
from twilight_env.obs import vector_obs
from twilight_env.rules.engine import State
from twilight_env.envs.vector import VectorEngine


@pytest.mark.parametrize("name", ["HAND", "PLAYED_FOR", "HELD_BY", "TAKEN", "COUNTS"])
@pytest.mark.parametrize("rel", range(4))
def test_seat_field_is_the_seat_record_offset(name, rel):
    assert vector_obs._seat_field(name, rel) == E.SEATS + E.SEAT_SIZE * rel + getattr(E, name)


def test_seat_field_hand_holds_the_viewers_cards():
    s = State.random(np.random.default_rng(2))
    vec = E.encode_observation(s, 0)
    off = vector_obs._seat_field("HAND", 0)
    held = [c for c in range(28) if s.hands[0] >> c & 1]
    assert np.flatnonzero(vec[off:off + 28]).tolist() == held


def test_three_player_roles_have_one_definition():
    np.testing.assert_array_equal(vector_obs._ROLE_3P, np.array(E._ROLE_3P))
    try:
        from twilight_env.obs import _encoding_nb
    except ImportError:  # numba not installed
        pass
    else:
        np.testing.assert_array_equal(_encoding_nb._ROLE_3P, np.array(E._ROLE_3P))
        np.testing.assert_array_equal(_encoding_nb._ROLE_4P, np.array(E._ROLE_4P))
    # seats 0 (solo), 1 (left Sun), 3 (right Sun): three distinct 3-player role flags (R7.2)
    assert sorted(E._ROLE_3P[s] for s in (0, 1, 3)) == [2, 3, 4]


@pytest.mark.parametrize("seat", [0, 1, 3])
def test_three_player_role_flags_agree_between_encoders(seat):
    rng = np.random.default_rng(seat)
    states = [State.random(rng, num_players=3) for _ in range(3)]
    eng = VectorEngine(3, 3)
    eng.set_states(states)
    batch = eng.observe(np.full(3, seat))
    for i, s in enumerate(states):
        row = E.encode_observation(s, seat)
        np.testing.assert_array_equal(batch[i], row)
        assert np.flatnonzero(row[E.ROLE:E.ROLE + 5]).tolist() == [E._ROLE_3P[seat]]
