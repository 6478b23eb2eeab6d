"""Edited records are refused by replay (or validate) with the step, field and reason of the fault."""

from __future__ import annotations

import copy

import pytest

from records_helpers import one_deal, play_match
from twilight_env.records import game_records as records
from twilight_env.rules.engine import Config, State


def _refused(rec, step, field, reason, deal=None):
    with pytest.raises(records.RecordError, match=reason) as e:
        records.replay(rec)
    assert (e.value.step, e.value.field, e.value.deal) == (step, field, deal), str(e.value)
    assert e.value.reason in str(e.value)
    return e.value


def _first_request(rec):
    return next(i for i, a in enumerate(rec["actions"]) if a["action"] >= 28)


@pytest.fixture(params=[4, 3], ids=["4p", "3p"])
def rec(request):
    return one_deal(Config(num_players=request.param), 31)[0]


def test_untouched_record_replays(rec):
    assert len(records.replay(rec)) == len(rec["actions"]) + 1


def test_illegal_action(rec):
    bad = copy.deepcopy(rec)
    k = 10
    st = records.replay(rec)[k]
    illegal = next(a for a in range(31) if a not in st.legal_actions())
    bad["actions"][k]["action"] = illegal
    _refused(bad, k, "action", rf"illegal action {illegal} .*legal actions: \[")


def test_wrong_card(rec):
    bad = copy.deepcopy(rec)
    k = next(i for i, a in enumerate(rec["actions"]) if a["card"] is not None and i > 5)
    bad["actions"][k]["card"] = "MP" if rec["actions"][k]["card"] != "MP" else "SP"
    _refused(bad, k, "card", "stored card")


def test_card_on_a_request(rec):
    bad = copy.deepcopy(rec)
    k = _first_request(rec)
    bad["actions"][k]["card"] = "SC1"
    _refused(bad, k, "card", "stored card 'SC1' but the engine gives None")


@pytest.mark.parametrize("key", ["chooser", "holder", "seat"])
def test_wrong_seat_fields(rec, key):
    bad = copy.deepcopy(rec)
    k = _first_request(rec)
    bad["actions"][k][key] = (rec["actions"][k][key] + 1) % 4
    _refused(bad, k, key, f"stored {key}")


def _trick_end_step(rec, t):
    """Index of the action that finished trick ``t``: the 4th card of it."""
    cards = [i for i, a in enumerate(rec["actions"]) if a["card"] is not None]
    return cards[4 * t + 3]


def test_wrong_trick_winner(rec):
    bad = copy.deepcopy(rec)
    t = next(t for t, tr in enumerate(rec["tricks"]) if tr["taker"] is not None)
    bad["tricks"][t]["taker"] = (rec["tricks"][t]["taker"] + 1) % 4
    _refused(bad, _trick_end_step(rec, t), "taker", rf"trick {t + 1}: stored trick taker \(R4.1, R4.2\)")


def test_taken_trick_marked_pending_and_wrong_pile():
    """R4.3: a Purgatory trick has no taker; the pending pile after it is checked too."""
    for seed in range(200):
        rec = one_deal(Config(), seed)[0]
        pend = [t for t, tr in enumerate(rec["tricks"][:6]) if tr["taker"] is None]
        if pend:
            break
    t = pend[0]
    bad = copy.deepcopy(rec)
    bad["tricks"][t]["taker"] = rec["tricks"][t]["leader"]
    _refused(bad, _trick_end_step(rec, t), "taker", "stored trick taker")
    bad = copy.deepcopy(rec)
    bad["tricks"][t]["pending"] = rec["tricks"][t]["pending"][:-1]
    _refused(bad, _trick_end_step(rec, t), "pending", r"pending pile \(R4.3\)")


@pytest.mark.parametrize("key", ["deal_points", "side_scores", "totals_after"])
def test_wrong_score(rec, key):
    bad = copy.deepcopy(rec)
    bad[key][0] += 1
    if key == "totals_after":  # validate: totals_after is totals_before + deal_points (R6.1)
        _refused(bad, None, key, r"totals_after must be totals_before \+ deal_points")
        return
    if key == "deal_points":  # consistent totals, so that the engine's deal score is what differs
        bad["totals_after"][0] += 1
    _refused(bad, len(rec["actions"]), key, f"stored {key}")


def test_wrong_neutral_pile(rec):
    bad = copy.deepcopy(rec)
    bad["neutral"] = ["SO"] if rec["neutral"] != ["SO"] else []
    _refused(bad, len(rec["actions"]), "neutral", r"R4.4")


def test_truncated_actions(rec):
    bad = copy.deepcopy(rec)
    del bad["actions"][-3:]
    n = len(bad["actions"])
    _refused(bad, n, "actions", f"the actions end after {n} steps .* before the deal is over")


def test_extra_action_after_the_end(rec):
    bad = copy.deepcopy(rec)
    bad["actions"].append(dict(rec["actions"][-1]))
    n = len(rec["actions"])
    _refused(bad, n, "actions", "after the deal is over")


def test_wrong_leader_and_dealer():
    rec = one_deal(Config(), 12)[0]
    bad = copy.deepcopy(rec)
    bad["leader"] = (rec["leader"] + 1) % 4
    _refused(bad, 0, "leader", r"the seat after the dealer \(R2.4\)")
    bad = copy.deepcopy(rec)
    bad["dealer"] = (rec["dealer"] + 1) % 4  # the leader no longer follows the dealer
    _refused(bad, 0, "leader", "stored leader")


def test_swapped_hands_make_actions_illegal_or_cards_wrong(rec):
    bad = copy.deepcopy(rec)
    bad["deal"][1], bad["deal"][3] = rec["deal"][3], rec["deal"][1]
    with pytest.raises(records.RecordError) as e:
        records.replay(bad)
    assert e.value.field in ("action", "card", "holder", "seat")


# ---------------------------------------------------------------------------------
# schema faults (validate)
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("edit, field, reason", [
    (lambda r: r.__setitem__("version", 2), "version",
     "unsupported twilight-deal version 2; this twilight-env reads version 1"),
    (lambda r: r.__setitem__("version", "1"), "version", "version must be an int"),
    (lambda r: r.__setitem__("format", "twilight-game"), "format", "unknown format 'twilight-game'"),
    (lambda r: r.pop("deal_points"), "deal_points", "missing key 'deal_points' in record"),
    (lambda r: r.pop("format"), "format", "missing key 'format'"),
    (lambda r: r["actions"][3].pop("holder"), "actions[3].holder", r"missing key 'holder' in actions\[3\]"),
    (lambda r: r.__setitem__("extra", 1), "record", "unknown key"),
    (lambda r: r["deal"][0].__setitem__(0, "S9"), "deal[0][0]", "unknown card code 'S9'"),
    (lambda r: r["deal"][0].__setitem__(0, r["deal"][1][0]), "deal", "dealt twice"),
    (lambda r: r["tricks"][1]["pending"].append("XX"), "tricks[1].pending[0]", "unknown card code 'XX'"),
    (lambda r: r["actions"][0].__setitem__("action", 31), "actions[0].action", "must be an int 0..30"),
    (lambda r: r["actions"][0].__setitem__("action", True), "actions[0].action", "must be an int 0..30"),
    (lambda r: r["tricks"].pop(), "tricks", "7 tricks"),
    (lambda r: r.__setitem__("seed", "7"), "seed", "seed must be an int >= 0 or null"),
    (lambda r: r["config"].__setitem__("target", 0), "config.target", "positive int"),
    (lambda r: r["config"].__setitem__("three_player_scoring", "solo"), "config.three_player_scoring",
     "'team' or 'individual'"),
    (lambda r: r["config"].pop("goals_333"), "config.goals_333", "missing key 'goals_333' in config"),
    (lambda r: r.__setitem__("dealer", None), "dealer", "dealer must be a seat 0..3 in 4 players"),
    (lambda r: r.__setitem__("solo", 0), "solo", "solo must be null in 4 players"),
    (lambda r: r.__setitem__("deal_points", [1, 2, 3]), "deal_points", "one per score line"),
    (lambda r: r.__setitem__("agents", ["random"]), "agents", "list of 4 agent specs"),
    (lambda r: r.__setitem__("meta", []), "meta", "meta must be a JSON object"),
])
def test_schema_faults(edit, field, reason):
    rec = one_deal(Config(), 14)[0]
    bad = copy.deepcopy(rec)
    edit(bad)
    for check in (records.validate, records.replay):
        with pytest.raises(records.RecordError, match=reason) as e:
            check(bad)
        assert e.value.field == field and e.value.step is None


def test_not_a_record():
    with pytest.raises(records.RecordError, match="a record is a JSON object, got list"):
        records.validate([])


# ---------------------------------------------------------------------------------
# match records
# ---------------------------------------------------------------------------------

def test_match_tampered_deal_and_totals():
    deals, match, _ = play_match(Config(target=300), 3)
    assert len(deals) >= 2
    records.replay(match)
    bad = copy.deepcopy(match)
    bad["deals"][1]["tricks"][0]["taker"] = (match["deals"][1]["tricks"][0]["taker"] or 0) + 1
    with pytest.raises(records.RecordError) as e:
        records.replay(bad)
    assert e.value.deal == 1 and e.value.field == "taker"
    bad = copy.deepcopy(match)
    bad["totals"][1] += 10
    e = _refused(bad, len(deals[-1]["actions"]), "totals", "stored match totals", deal=len(deals) - 1)
    bad = copy.deepcopy(match)
    bad["winners"] = [1 - match["winners"][0]]
    _refused(bad, len(deals[-1]["actions"]), "winners", "stored match winners", deal=len(deals) - 1)
    bad = copy.deepcopy(match)
    bad["deals"][0]["config"]["target"] = 400
    _refused(bad, 0, "config", "is not the match's", deal=0)


def test_match_rotation_and_continuation():
    deals, match, _ = play_match(Config(num_players=3, target=10**6), 5, max_deals=3)
    # the second deal with the first one's solo: R7.4 passes the solo on
    bad = copy.deepcopy(match)
    d = bad["deals"][1]
    st = State.from_deal(d["deal"], 0, 3)
    d2 = records.deal_record(st, [a["action"] for a in d["actions"]], config=Config(num_players=3, target=10**6),
                             solo=match["deals"][0]["solo"], scores=d["totals_before"])
    bad["deals"][1] = d2
    _refused(bad, 0, "solo", r"R7.4: the solo passes on", deal=1)
    # a deal that starts from other totals
    bad = copy.deepcopy(match)
    bad["deals"][2]["totals_before"][0] += 1
    bad["deals"][2]["totals_after"][0] += 1
    _refused(bad, 0, "totals_before", "the previous deal ended with", deal=2)
    # a deal after the match was decided
    deals, match, _ = play_match(Config(target=200), 6)
    bad = copy.deepcopy(match)
    bad["deals"].append(copy.deepcopy(deals[-1]))
    bad["deals_played"] += 1
    _refused(bad, 0, "deals", "the match was decided", deal=len(deals))


def test_match_fixed_solo_keeps_the_solo():
    deals, match, _ = play_match(Config(num_players=3, fixed_solo=True, target=10**6), 2, max_deals=3)
    assert len({d["solo"] for d in deals}) == 1
    records.replay(match)


def test_match_unknown_version():
    _, match, _ = play_match(Config(target=300), 3)
    bad = copy.deepcopy(match)
    bad["deals"][1]["version"] = 3
    with pytest.raises(records.RecordError, match="unsupported twilight-deal version 3") as e:
        records.validate(bad)
    assert e.value.deal == 1 and e.value.field == "version"
    bad = copy.deepcopy(match)
    bad["version"] = 0
    with pytest.raises(records.RecordError, match="unsupported twilight-match version 0"):
        records.replay(bad)
