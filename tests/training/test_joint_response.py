"""The joint responder (``respond:...,team=joint``, training/search_response.py): in the exact
endgame both seats of the responder's side are the team's decisions, solved with both of the
side's hands known below the deciding seat's action (an upper bound on a team without
communication, TMECor's setting for the 3-player Sun side, R7). Its values are checked
against a second computation (the depth-first :func:`exact_value` on each of the partner's
hands) and between the independent responder's and the clairvoyant team's values."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from twilight_env.agents.base import make_agent  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.rules.infoset import InfoSet  # noqa: E402
from twilight_env.training import br_validation as V  # noqa: E402
from twilight_env.training.search_response import (Target, exact_value, split_by_action,  # noqa: E402
                                                   tree_value, weighted_worlds)
from test_br_validation import clairvoyant  # noqa: E402

TARGET = "policy:default"
SAMPLED = "policy:default,temperature=1"
"""A sampled target keeps every world of positive likelihood: in 3 players the greedy
network's play leaves about one world two tricks from the end, the sampled one several."""


def _positions(players, seat, n, tricks_left, seed, spec=TARGET):
    target = Target(spec)
    return target, V.endgame_positions(target, players, frozenset({seat}), n, tricks_left, seed)


def _joint(st, target):
    """The joint value per root action (tree_value with the partner split), the worlds and
    their likelihood weights."""
    info = InfoSet(st, st.deciding_seat)
    side = frozenset(s for s in range(4) if (s & 1) == (info.seat & 1))
    worlds, w = weighted_worlds(info, target, side)
    total, per = tree_value(worlds, w, target, side, info.seat & 1, partner=info.seat ^ 2)
    return info, side, (worlds, w), total, per


@pytest.mark.parametrize("players,seat,spec", [(3, 1, SAMPLED), (3, 3, SAMPLED), (4, 0, TARGET), (4, 1, SAMPLED)])
def test_the_joint_value_is_the_sum_over_the_partners_hands_of_the_teams_exact_value(players, seat, spec):
    """Below each root action, the joint value is the sum over the partner's possible hands of
    the exact value of the side deciding for both seats with both hands known (
    :func:`exact_value` on each hand's worlds alone, a separate computation), and its maximum
    over actions; the positions hold several partner hands."""
    target, states = _positions(players, seat, 5, 2, 40 + seat, spec)
    hands_seen = 0
    for st in states:
        info, side, (worlds, w), total, per = _joint(st, target)
        assert set(per) == set(st.legal_actions()) and total == max(per.values())
        partner = info.seat ^ 2
        hands_seen = max(hands_seen, len({s.hands[partner] for s in worlds}))
        for a, v in per.items():
            after = split_by_action(worlds, [a] * len(worlds))[a]
            by_hand = 0.0
            for h in sorted({s.hands[partner] for s in after}):
                keep = [i for i, s in enumerate(after) if s.hands[partner] == h]
                by_hand += exact_value([after[i] for i in keep], target, side, info.seat & 1, w[keep])[0]
            assert v == pytest.approx(by_hand)
    assert hands_seen >= 2


def test_the_joint_value_lies_between_the_independent_and_the_clairvoyant_teams():
    """The team does at least as well as with the partner playing the target (it may play as
    the target does) and at most as well as knowing every hand; on some position strictly
    better than the independent value (the partner's play matters)."""
    target, states = _positions(3, 1, 10, 2, 7)
    better = 0
    for st in states:
        info, side, (worlds, w), total, _ = _joint(st, target)
        independent = exact_value(worlds, target, frozenset({info.seat}), info.seat & 1, w)[0]
        clair = sum(clairvoyant(s, target, side, info.seat & 1) for s in worlds)  # both seats choose
        assert independent <= total + 1e-9 <= clair + 2e-9
        better += total > independent + 1e-9
    assert better >= 1


def test_the_joint_responder_plays_the_best_joint_action_in_the_endgame_and_legal_moves_throughout():
    """A Sun pair of joint responders plays whole 3-player deals legally; in the last two
    tricks each seat's action is the best of its joint values (lowest id on ties)."""
    me = make_agent(f"respond:target={TARGET},worlds=4,candidates=2,exact_tricks=2,team=joint")
    target = Target(TARGET)
    checked = 0
    for seed in range(3):
        st = State.random(np.random.default_rng(seed), 0, 3)
        rng = np.random.default_rng(seed)
        while not st.done:
            info = InfoSet(st, st.deciding_seat)
            if st.deciding_seat in (1, 3) and len(info.legal_actions) > 1:
                a = me.act(info, info.legal_actions, rng)
                if 7 - st.trick <= 2:
                    per = _joint(st, target)[4]
                    assert a == max(sorted(per), key=lambda x: (per[x], -x))
                    checked += 1
            else:
                a = target.actions([st])[0]
            assert a in info.legal_actions
            st.apply(a)
    assert checked >= 3


@pytest.mark.parametrize("spec,match", [("respond:team=joint", "exact_tricks"),
                                        ("respond:team=both,exact_tricks=1", "independent, joint")])
def test_bad_team_options_are_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        make_agent(spec)


def test_endgame_validation_of_a_team_measures_gaps_to_the_information_sharing_bound():
    """``br_validation`` mode ``team=1`` (the 3-player Sun pair): the bound is at least every
    responder pair's value (gaps >= 0), each pair playing both seats from their own information
    sets; the joint pair reaches it on some position."""
    joint = f"respond:target={SAMPLED},exact_tricks=2,team=joint"
    alone = f"respond:target={SAMPLED},exact_tricks=2"
    r = V.validate(SAMPLED, [alone, joint], 3, "team=1", 4, 2, 5, progress=False)
    for row in r["rows"]:
        for spec in (alone, joint):
            assert row["responders"][spec]["gap"] >= -1e-6 * max(1.0, abs(row["exact"]))  # sums of float weights
        assert row["exact"] >= row["target_value"] - 1e-6 * max(1.0, abs(row["exact"]))
    assert r["summary"][joint]["no_gap"] > 0
    assert "team=1" in V.report(r) and joint in V.report(r)


@pytest.mark.parametrize("mode,players", [("team=0", 3), ("team=2", 3), ("team=x", 4), ("teams=1", 3)])
def test_bad_team_modes_are_refused(mode, players):
    with pytest.raises(ValueError, match="seat must be one of|mode must be"):
        V.responder_seats(mode, players)
