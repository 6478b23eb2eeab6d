"""The tests' one position generator, ``tests/positions.py``: the same spec gives the same
states, the first leader follows R2.4 and R7.2, no position is a finished deal, an endgame
has the tricks it asks for, and a bad spec is refused in one line."""

from __future__ import annotations

import pytest

from positions import Spec, positions, random_points
from twilight_env.agents.heuristic import decide_state
from twilight_env.rules.engine import PurePythonState, State


def _key(st: State):
    return (st.num_players, st.first_leader, tuple(st.initial_hands), tuple(st.history), st.trick, st.place,
            st.phase, st.holder, tuple(st.hands))


@pytest.mark.parametrize("players", [4, 3])
def test_the_same_spec_gives_the_same_states_and_another_seed_others(players):
    a, b = positions(Spec(players, 11, 30)), positions(Spec(players, 11, 30))
    assert [_key(s) for s in a] == [_key(s) for s in b]
    assert len({_key(s) for s in a}) == 30
    assert {_key(s) for s in positions(Spec(players, 12, 30))}.isdisjoint(_key(s) for s in a)


def test_first_leaders_follow_r2_4_and_r7_2_and_no_deal_is_finished():
    """4 players: the first leader is drawn (R2.4); 3 players: the solo, seat 0, leads (R7.2)."""
    four = positions(Spec(4, 3, 60))
    three = positions(Spec(3, 3, 60))
    assert {s.first_leader for s in four} == {0, 1, 2, 3}
    assert {s.first_leader for s in three} == {0}
    # 55..59 actions finish most deals: each is dealt again for half as many
    late = positions(Spec(4, 4, 40, steps=(55, 60))) + positions(Spec(3, 4, 40, steps=(55, 60)))
    assert not any(s.done for s in four + three + late)


def test_steps_and_endgames_reach_what_they_ask():
    assert all(not s.history and s.trick == 0 and s.place == 0 for s in positions(Spec(4, 0, 10, steps=0)))
    assert all(not s.history for s in positions(Spec(3, 0, 10, steps=(0, 1))))
    for players in (4, 3):
        for left in (1, 2, 5):
            ends = positions(Spec(players, left, 25, tricks_left=left))
            assert all(7 - s.trick == left and not s.done for s in ends)
            assert len({(s.place, s.phase) for s in ends}) > 1  # not always the trick's start
        drawn = positions(Spec(players, 9, 40, tricks_left=(2, 5)))
        assert {7 - s.trick for s in drawn} == {2, 3, 4} and not any(s.done for s in drawn)


def test_either_engine_class_gets_the_same_positions():
    spec = dict(players=3, seed=4, count=10, steps=(5, 40))
    fast, pure = positions(Spec(**spec)), positions(Spec(**spec, state_class=PurePythonState))
    assert all(type(s) is PurePythonState for s in pure) and all(type(s) is State for s in fast)
    assert [_key(s) for s in fast] == [_key(s) for s in pure]


def test_heuristic_share_one_plays_the_heuristic_only():
    """``heuristic=1``: every action is ``decide_state``'s, replayed on the same deal."""
    for st in positions(Spec(4, 8, 5, steps=(5, 20), heuristic=1.0)):
        again = State(list(st.initial_hands), st.first_leader, st.num_players)
        for _ in range(20):
            if _key(again) == _key(st):
                break
            again.apply(decide_state(again))
        assert _key(again) == _key(st)


def test_random_points_walk_whole_deals_the_same_for_the_same_spec():
    """Every ``every``-th decision and the end of each of ``count`` deals, the same for the same spec."""
    a = list(random_points(Spec(3, 2, 4), every=3))
    assert [_key(s) for s in a] == [_key(s) for s in random_points(Spec(3, 2, 4), every=3)]
    assert sum(s.done for s in a) == 4 and a[-1].done and {s.first_leader for s in a} == {0}
    starts = [s for s in a if not s.history and s.trick == 0 and s.place == 0]
    assert len(starts) == 4
    every = list(random_points(Spec(4, 2, 1)))
    assert [_key(s) for s in every][::3] == [_key(s) for s in random_points(Spec(4, 2, 1), every=3)][:len(every[::3])]
    with pytest.raises(ValueError, match="whole deals"):
        next(random_points(Spec(4, 0, steps=3)))
    with pytest.raises(ValueError, match="every"):
        next(random_points(Spec(4, 0), every=0))


@pytest.mark.parametrize("kw,word", [(dict(players=5), "players must be 4 or 3"), (dict(count=0), "count"),
                                     (dict(steps=-1), "steps"), (dict(steps=(5, 5)), "steps"),
                                     (dict(tricks_left=0), "tricks_left"), (dict(tricks_left=2, steps=3), "tricks_left"),
                                     (dict(tricks_left=(3, 3)), "tricks_left"), (dict(tricks_left=(0, 4)), "tricks_left"),
                                     (dict(heuristic=1.5), "heuristic"), (dict(state_class=int), "state_class")])
def test_a_bad_spec_is_refused_naming_the_field(kw, word):
    args = dict(players=4, seed=0) | kw
    with pytest.raises(ValueError, match=word):
        Spec(**args)
