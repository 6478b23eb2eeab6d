"""Records holding scores or totals that no game reaches are refused, naming the field."""

from __future__ import annotations

import copy

import pytest
from records_helpers import one_deal, play_match

from twilight_env.records import game_records as records
from twilight_env.rules.engine import Config, State


def _refused(rec, field, reason, *, deal=None, validate=True):
    checks = (records.validate, records.replay) if validate else (records.replay,)
    for check in checks:
        with pytest.raises(records.RecordError, match=reason) as e:
            check(rec)
        assert (e.value.field, e.value.deal) == (field, deal), str(e.value)


@pytest.fixture(params=[4, 3], ids=["4p", "3p"])
def rec(request):
    return one_deal(Config(num_players=request.param), 31)[0]


def test_negative_totals_before(rec):
    bad = copy.deepcopy(rec)
    bad["totals_before"][0] = -5
    bad["totals_after"][0] -= 5  # consistent, so only the negative total is wrong
    _refused(bad, "totals_before", r"totals_before must be ints >= 0 .*R5.3, R6.1")


def test_totals_after_not_totals_before_plus_deal_points(rec):
    bad = copy.deepcopy(rec)
    bad["totals_before"][1] += 40  # a later deal's totals, but the after-totals kept
    _refused(bad, "totals_after", r"totals_after must be totals_before \+ deal_points")


@pytest.mark.parametrize("scores, why", [([361, 0], "two ints 0..360"), ([-1, 0], "two ints 0..360"),
                                         ([200, 200], "sum of at most 360")])
def test_side_scores_out_of_reach(scores, why):
    bad = copy.deepcopy(one_deal(Config(), 31)[0])
    bad["side_scores"] = scores
    _refused(bad, "side_scores", why)


def test_negative_deal_points(rec):
    bad = copy.deepcopy(rec)
    bad["deal_points"][0] = -3
    bad["totals_after"][0] = bad["totals_before"][0] - 3
    _refused(bad, "deal_points", r"deal_points must be ints 0..360")


def test_negative_seed(rec):
    bad = copy.deepcopy(rec)
    bad["seed"] = -1
    _refused(bad, "seed", "seed must be an int >= 0 or null")


def test_unequal_sun_totals_under_fixed_solo():
    rec = one_deal(Config(num_players=3, fixed_solo=True), 4)[0]
    bad = copy.deepcopy(rec)
    sun = next(p for p in range(3) if p != rec["solo"])
    bad["totals_before"][sun] += 10
    bad["totals_after"][sun] += 10
    _refused(bad, "totals_before", r"share one score line \(R7.6, R7.5\)")


def test_totals_that_already_decided_the_match():
    rec = one_deal(Config(), 31)[0]
    bad = copy.deepcopy(rec)
    bad["totals_before"] = [1200, 500]
    bad["totals_after"] = [1200 + rec["deal_points"][0], 500 + rec["deal_points"][1]]
    records.validate(bad)  # structure is fine: the engine's match rules say it is unreachable
    _refused(bad, "totals_before", r"already decide the match .*R6.1", validate=False)
    with pytest.raises(ValueError, match="already decide the match"):
        records.deal_record(State.from_deal(rec["deal"], rec["leader"]), [a["action"] for a in rec["actions"]],
                            scores=[1200, 500])
    # a tie at the target is played on (R6.1), so a deal may start from it
    tie = records.deal_record(State.from_deal(rec["deal"], rec["leader"]), [a["action"] for a in rec["actions"]],
                              scores=[1000, 1000])
    records.replay(tie)
    # goals_333: exactly 333 for one side alone decides (R6.2)
    goals = Config(goals_333=True)
    with pytest.raises(ValueError, match="already decide the match"):
        records.deal_record(State.from_deal(rec["deal"], rec["leader"]), [a["action"] for a in rec["actions"]],
                            config=goals, scores=[333, 20])


def test_deal_record_refuses_negative_scores():
    rec = one_deal(Config(), 31)[0]
    with pytest.raises(ValueError, match="scores must be ints >= 0"):
        records.deal_record(State.from_deal(rec["deal"], rec["leader"]), [a["action"] for a in rec["actions"]],
                            scores=[-10, 0])


@pytest.fixture(scope="module")
def match():
    deals, match, _ = play_match(Config(target=700), 6)
    assert match["done"] and len(deals) >= 2
    return match


@pytest.mark.parametrize("edit, field, reason", [
    (lambda m: m["scores"].__setitem__(0, -1), "scores", r"scores must be ints >= 0"),
    (lambda m: m.__setitem__("totals", [m["scores"][0] - 1, m["totals"][1]]), "totals", "at least the starting"),
    (lambda m: m.__setitem__("done", False), "done", "done must be true exactly when there are winners"),
    (lambda m: m.__setitem__("winners", m["winners"] * 2), "winners", "each score line once"),
    (lambda m: m.__setitem__("deals_played", m["deals_played"] + 5), "deals_played", "the number of deals listed"),
])
def test_match_fields_out_of_reach(match, edit, field, reason):
    bad = copy.deepcopy(match)
    edit(bad)
    _refused(bad, field, reason)


def test_match_deal_with_negative_totals_names_the_deal(match):
    bad = copy.deepcopy(match)
    bad["deals"][1]["totals_before"][1] = -7
    _refused(bad, "totals_before", "must be ints >= 0", deal=1)
