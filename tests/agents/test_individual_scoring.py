"""The compiled IS-MCTS under 3-player individual scoring (R8): every decider maximizes
its own score line (its seat's tricks; the solo owns seat 0's line and also decides for
the new moon, seat 2, a fourth line), as the environment's reward does."""

import numpy as np
import pytest

from twilight_env.rules.engine import State
from twilight_env.rules.infoset import InfoSet
from twilight_env.agents import fast_rollout
from twilight_env.agents.base import make_agent
from twilight_env.agents.ismcts import ISMCTSAgent

pytestmark = pytest.mark.skipif(not fast_rollout.HAVE_NUMBA, reason="numba is not installed")

from twilight_env.agents import fast_ismcts  # noqa: E402
from positions import Spec, positions  # noqa: E402


def _forced_end(st: State) -> State | None:
    """Play the only legal action until the deal ends; None if some decision has a choice."""
    st = st.clone()
    while not st.done:
        la = st.legal_actions()
        if len(la) != 1:
            return None
        st.apply(la[0])
    return st


def _line_values(st: State) -> list[float]:
    """Per seat: (own seat points − mean of the other three) / 360 (R8, the env's reward)."""
    sc = st.seat_scores()
    t = sum(sc)
    return [(x - (t - x) / 3) / 360 for x in sc]


def _endgames(count: int):
    """Last-trick 3-player decisions whose world is fully known to the decider and in which
    every legal action leads to a forced end: each action's exact outcome is known."""
    out = []
    for seed in range(5000):
        rng = np.random.default_rng(seed)
        st = positions(Spec(3, seed, tricks_left=1))[0]
        if len(st.legal_actions()) < 2:
            continue
        ends = []
        for a in st.legal_actions():
            s2 = st.clone()
            s2.apply(a)
            ends.append(_forced_end(s2))
        if any(e is None for e in ends):
            continue
        info = InfoSet(st, st.deciding_seat)
        worlds = fast_ismcts.sample_hands(info, 30, rng)
        if not (worlds == worlds[0]).all():
            continue
        out.append((st, info, ends))
        if len(out) == count:
            return out
    raise AssertionError("too few endgames found")


def test_individual_values_are_each_deciders_own_line():
    """On known endgames the root values are the exact R8 line values of the decider
    (seat 2's decisions count for the solo's line, seat 0), and team values stay side
    values; the two differ, so the search reads the scoring it is given."""
    differ = 0
    for st, info, ends in _endgames(25):
        line = 0 if st.deciding_seat == 2 else st.deciding_seat
        la = st.legal_actions()
        _, ind = fast_ismcts.search(info, 40, 0.7, np.random.default_rng(1), scoring="individual")
        _, team = fast_ismcts.search(info, 40, 0.7, np.random.default_rng(1), scoring="team")
        want_ind = [_line_values(e)[line] for e in ends]
        sign = 1 if st.deciding_seat % 2 == 0 else -1
        want_team = [sign * (e.side_scores()[0] - e.side_scores()[1]) / 360 for e in ends]
        assert np.allclose([ind[a] for a in la], want_ind)
        assert np.allclose([team[a] for a in la], want_team)
        differ += not np.allclose(want_ind, want_team)
    assert differ > 0


def test_agent_plays_the_best_action_of_its_own_line():
    """Where the R8 line values have one best action, ``scoring=individual`` plays it; in
    some of those positions the team agent plays another action."""
    seen = differ = 0
    ind_agent = make_agent("ismcts:backend=numba,iterations=200,scoring=individual")
    team_agent = make_agent("ismcts:backend=numba,iterations=200")
    for st, info, ends in _endgames(200):
        line = 0 if st.deciding_seat == 2 else st.deciding_seat
        la = list(st.legal_actions())
        v_ind = np.array([_line_values(e)[line] for e in ends])
        bi = int(np.argmax(v_ind))
        if (v_ind == v_ind[bi]).sum() > 1:
            continue
        seen += 1
        assert ind_agent.act(info, la, np.random.default_rng(2)) == la[bi]
        differ += team_agent.act(info, la, np.random.default_rng(2)) != la[bi]
    assert seen >= 20 and differ >= 3


def test_team_scoring_is_the_default_and_unchanged():
    st, info, _ = _endgames(1)[0]
    a = fast_ismcts.search(info, 300, 0.7, np.random.default_rng(5))
    b = fast_ismcts.search(info, 300, 0.7, np.random.default_rng(5), scoring="team")
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert make_agent("ismcts:backend=numba").name == "ismcts:iterations=1000,backend=numba"
    assert make_agent("ismcts:backend=numba,scoring=individual").name.endswith(",scoring=individual")


def test_bad_scoring_is_refused_with_the_allowed_values():
    st, info, _ = _endgames(1)[0]
    with pytest.raises(ValueError, match="scoring must be one of"):
        fast_ismcts.search(info, 10, 0.7, np.random.default_rng(0), scoring="solo")
    with pytest.raises(ValueError, match="'team' or 'individual'"):
        make_agent("ismcts:backend=numba,scoring=pairs")
    with pytest.raises(ValueError, match="scoring=individual needs backend=numba"):
        make_agent("ismcts:scoring=individual")
    with pytest.raises(ValueError, match="needs backend='numba'"):  # the agent's own check, built directly
        ISMCTSAgent(scoring="individual")
    four = State.random(np.random.default_rng(0), 0, 4)
    with pytest.raises(ValueError, match="3-player variant"):
        fast_ismcts.search(InfoSet(four, four.deciding_seat), 10, 0.7, np.random.default_rng(0),
                           scoring="individual")
