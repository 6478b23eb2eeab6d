"""Fixed deal sets: generation by seed, JSON round trip, clear errors on bad files (R2.3)."""

import json

import pytest

from twilight_env.records.dealsets import deal_set, generate_deals, load_deals, save_deals
from twilight_env.rules.cards import CARDS


def test_generate_deals_is_reproducible_and_prefix_stable():
    a = generate_deals(5, seed=9)
    assert a == generate_deals(5, seed=9)
    assert generate_deals(3, seed=9) == a[:3]
    assert generate_deals(5, seed=10) != a
    for deal in a:  # R2.3: 4 hands of 7, all 28 cards once
        assert [len(h) for h in deal] == [7, 7, 7, 7]
        assert sorted(c for h in deal for c in h) == sorted(CARDS)


def test_round_trip(tmp_path):
    deals = generate_deals(4, seed=1)
    path = tmp_path / "d.json"
    save_deals(str(path), deals, seed=1, num_players=3)
    loaded, meta = load_deals(str(path))
    assert loaded == deals
    assert meta["seed"] == 1 and meta["num_players"] == 3
    doc = json.loads(path.read_text())
    assert doc["format"] == "twilight-deals" and len(doc["deals"]) == 4


def test_deal_set_from_file_and_save(tmp_path):
    src = tmp_path / "src.json"
    save_deals(str(src), generate_deals(6, seed=2), seed=2, num_players=4)
    deals, meta = deal_set(4, seed=99, num_players=4, deals_file=str(src), save=str(tmp_path / "copy.json"))
    assert deals == generate_deals(4, seed=2) and meta["source"] == "file"
    assert load_deals(str(tmp_path / "copy.json"))[0] == deals
    with pytest.raises(ValueError, match="holds 6 deals; --deals 10 were asked for"):
        deal_set(10, seed=0, num_players=4, deals_file=str(src))


def _write(tmp_path, doc):
    p = tmp_path / "bad.json"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def _doc(deals, num_players=4):
    return {"format": "twilight-deals", "version": 1, "seed": 0, "num_players": num_players, "deals": deals}


@pytest.mark.parametrize("make,message", [
    (lambda d: "{not json", "not valid JSON"),
    (lambda d: [d], "must be a JSON object"),
    (lambda d: {**_doc(d), "format": "other"}, "format"),
    (lambda d: _doc(d, num_players=5), "num_players must be 3 or 4"),
    (lambda d: _doc([]), "holds no deals"),
    (lambda d: _doc([d, d[:3]]), "deal 1 is not valid: a deal must be 4 hands"),
    (lambda d: _doc([[d[0][:6], d[1], d[2], d[3] + [d[0][6]]]]), "deal 0 is not valid: hand of seat 0 has 6 cards"),
    (lambda d: _doc([[["XX"] + d[0][1:], d[1], d[2], d[3]]]), "deal 0 is not valid: hand of seat 0: unknown card"),
    (lambda d: _doc([[d[0], [d[0][0]] + d[1][1:], d[2], d[3]]]), "dealt twice"),
    (lambda d: {**_doc([d]), "seed": "x"}, "seed must be an integer"),
    (lambda d: {**_doc([d]), "deals": "abc"}, "must be a list of deals"),
])
def test_bad_files_give_clear_errors(tmp_path, make, message):
    deal = generate_deals(1, seed=0)[0]
    path = _write(tmp_path, make(deal))
    with pytest.raises(ValueError, match=message):
        load_deals(path)


def test_missing_file_and_player_mismatch(tmp_path):
    with pytest.raises(ValueError, match="deal file .* does not exist"):
        load_deals(str(tmp_path / "nope.json"))
    p = tmp_path / "d.json"
    save_deals(str(p), generate_deals(2, seed=0), seed=0, num_players=4)
    with pytest.raises(ValueError, match="holds 4-player deals, but 3 players"):
        load_deals(str(p), num_players=3)


def test_generate_rejects_bad_arguments():
    with pytest.raises(ValueError, match="non-negative integer"):
        generate_deals(-1, 0)
    with pytest.raises(ValueError, match="seed"):
        generate_deals(2, -3)


@pytest.mark.parametrize("players", [4, 3])
def test_shipped_deal_files_are_valid_and_match_their_seed(players):
    import os
    from twilight_env.records.dealsets import DEALS_DIR
    deals, meta = load_deals(os.path.join(DEALS_DIR, f"{players}p_seed0_500.json"), num_players=players)
    assert meta["seed"] == 0 and len(deals) == 500
    assert deals == generate_deals(500, seed=0)
