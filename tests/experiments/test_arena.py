"""``twilight arena``: duplicate format, reproducibility, output files, clear errors."""

import csv
import json

import numpy as np
import pytest

import twilight_env.experiments.arena as arena
from twilight_env.experiments.common import play_seeded
from twilight_env.records.dealsets import generate_deals, save_deals
from twilight_env.cli import main


def _run(tmp_path, *extra, name="out"):
    """Run ``twilight arena`` in-process (one worker unless given) and load its JSON."""
    out = tmp_path / name
    workers = [] if "--workers" in extra else ["--workers", "1"]
    assert main(["arena", *extra, *workers, "--out", str(out), "--quiet"]) == 0
    return out, json.loads((out / "arena.json").read_text())


@pytest.mark.parametrize("players", [4, 3])
def test_duplicate_plays_same_cards_same_seats_sides_swapped(monkeypatch, players):
    """Play 1 of a pair has the same hands on the same seats as play 0, with A and B swapped."""
    calls = []

    def spy(state, specs, seed, deal_index, play):
        calls.append((state.initial_hands, list(specs), play))
        return play_seeded(state, specs, seed, deal_index, play)

    monkeypatch.setattr(arena, "play_seeded", spy)
    deal = generate_deals(1, seed=4)[0]
    (r,) = arena._play_pair((0, deal, "random", "random:", players, 7, 0))
    (h0, s0, p0), (h1, s1, p1) = calls
    assert h0 == h1  # same cards on the same seats
    assert s0 == ["random", "random:", "random", "random:"]  # A on seats 0, 2 (3p: A solo + new moon)
    assert s1 == ["random:", "random", "random:", "random"]  # swapped
    assert p0 != p1
    # A's points: own side minus the other, side 0 in play 0 and side 1 in play 1
    (a0, b0), (a1, b1) = r["side_scores"]
    assert r["points"] == [a0 - b0, b1 - a1]


def test_arena_4p_files_and_sane_contents(tmp_path):
    out, doc = _run(tmp_path, "random", "random", "--deals", "3", "--seed", "5")
    res = doc["results"]
    assert doc["num_players"] == 4 and doc["deals"] == 3 and doc["seed"] == 5
    (p,) = res["pairings"]
    assert (p["a"], p["b"], p["deals"]) == ("random", "random#2", 3)
    assert len(p["pair_scores"]) == 3 and 0 <= p["win_rate"] <= 1
    assert p["mean"] == pytest.approx(np.mean(p["pair_scores"]))
    assert p["ci_low"] <= p["mean"] <= p["ci_high"]
    for (a0, b0), (a1, b1) in p["side_scores"]:
        assert 0 <= min(a0, b0, a1, b1) and max(a0, b0, a1, b1) <= 360  # R5.3
    assert p["pair_scores"] == [((a0 - b0) + (b1 - a1)) / 2 for (a0, b0), (a1, b1) in p["side_scores"]]
    assert {r["agent"] for r in res["ratings"]} == {"random", "random#2"}
    for r in res["ratings"]:
        assert r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"])
    rows = list(csv.DictReader((out / "arena.csv").open()))
    assert len(rows) == 1 and rows[0]["a"] == "random" and float(rows[0]["mean"]) == pytest.approx(p["mean"])
    assert len(list(csv.DictReader((out / "ratings.csv").open()))) == 2


def test_arena_3p_reports_roles(tmp_path, capsys):
    _, doc = _run(tmp_path, "random", "random", "random", "--players", "3", "--deals", "2")
    pairs = doc["results"]["pairings"]
    assert len(pairs) == 3  # round robin of three specs
    for p in pairs:
        solo = [(a0 - b0) for (a0, b0), _ in p["side_scores"]]  # A solo: Moon (side 0) minus Sun
        sun = [(b1 - a1) for _, (a1, b1) in p["side_scores"]]   # A on the Sun seats
        assert p["a_as_solo"]["mean"] == pytest.approx(np.mean(solo))
        assert p["a_as_sun"]["mean"] == pytest.approx(np.mean(sun))
    text = capsys.readouterr().out
    assert "A as solo" in text and "A as Sun" in text and "ordinal" in text


def test_arena_reproducible_by_seed_and_worker_count(tmp_path):
    args = ["random", "random", "--deals", "4", "--seed", "3", "--players", "3"]
    _, a = _run(tmp_path, *args, "--workers", "1", name="a")
    _, b = _run(tmp_path, *args, "--workers", "1", name="b")
    _, c = _run(tmp_path, *args, "--workers", "2", name="c")
    assert a["results"] == b["results"] == c["results"]
    _, d = _run(tmp_path, "random", "random", "--deals", "4", "--seed", "4", "--players", "3", name="d")
    assert d["results"]["pairings"][0]["side_scores"] != a["results"]["pairings"][0]["side_scores"]


def test_arena_deals_file_round_trip(tmp_path):
    saved = tmp_path / "deals.json"
    _, a = _run(tmp_path, "random", "random", "--deals", "3", "--seed", "8", "--save-deals", str(saved), name="a")
    _, b = _run(tmp_path, "random", "random", "--deals-file", str(saved), "--seed", "8", name="b")
    assert a["results"] == b["results"]
    assert b["deals_source"]["source"] == "file"


def test_arena_deals_file_without_seed_uses_the_files_seed(tmp_path):
    """A saved deal file alone repeats the run that saved it: the agents' streams take the
    seed stored in the file unless --seed is given."""
    saved = tmp_path / "deals.json"
    _, a = _run(tmp_path, "random", "random:", "--deals", "4", "--seed", "8", "--save-deals", str(saved), name="a")
    _, b = _run(tmp_path, "random", "random:", "--deals-file", str(saved), name="b")
    assert b["seed"] == 8 and b["results"] == a["results"]
    _, c = _run(tmp_path, "random", "random:", "--deals-file", str(saved), "--seed", "9", name="c")
    assert c["seed"] == 9 and c["results"] != a["results"]


@pytest.mark.parametrize("spec", ["nosuchagent", "random:depth=3", ""])
def test_bad_spec_exit_2_lists_valid_agents(tmp_path, capsys, spec):
    rc = main(["arena", "random", spec, "--deals", "2", "--workers", "1", "--out", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err
    if spec != "random:depth=3":
        assert "valid agents: " in err and "random" in err
    else:
        assert "has no option 'depth'" in err
    assert not (tmp_path / "o").exists()


def test_bad_deals_file_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"deals": [[["SP"]]], "num_players": 4}')
    assert main(["arena", "random", "random", "--deals-file", str(bad), "--workers", "1", "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    assert "deal 0 is not valid" in capsys.readouterr().err
    good = tmp_path / "good.json"
    save_deals(str(good), generate_deals(2, 0), 0, num_players=4)
    assert main(["arena", "random", "random", "--players", "3", "--deals-file", str(good), "--workers", "1",
                 "--out", str(tmp_path / "o")]) == 2
    assert "holds 4-player deals" in capsys.readouterr().err


@pytest.mark.parametrize("players", [4, 3])
def test_lockstep_blocks_give_the_same_results(players):
    """Pairings with the batched neural agent are played in blocks side by side; the
    figures equal deal-by-deal play (each seat keeps its own stream; neural is greedy)."""
    pytest.importorskip("torch")
    deals = generate_deals(6, seed=11)
    specs = ["neural:default", "random", "heuristic"]
    assert arena.lockstep_ok(specs[:2]) and not arena.lockstep_ok(["random", "heuristic"])
    a = arena.play_arena(specs, deals, players, seed=3, workers=1, progress=False, lockstep=True)
    b = arena.play_arena(specs, deals, players, seed=3, workers=1, progress=False, lockstep=False)
    for pa, pb in zip(a["pairings"], b["pairings"]):
        assert pa["pair_scores"] == pb["pair_scores"] and pa["side_scores"] == pb["side_scores"]


def test_the_ratings_table_is_explained(tmp_path, capsys):
    """The printed mu / sigma / ordinal table says what its columns are, and ordinal is
    mu - 3 sigma as it says."""
    from twilight_env.experiments.arena import RATINGS_NOTE
    from twilight_env.cli import main as cli

    assert cli(["arena", "random", "heuristic", "--deals", "4", "--workers", "1", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert RATINGS_NOTE in out and "ordinal = mu - 3 sigma" in out
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] in ("random", "heuristic"):
            mu, sigma, ordinal = map(float, parts[1:])
            assert abs(ordinal - (mu - 3 * sigma)) <= 0.025  # each printed to 2 decimals: at most 0.005 + 3 x 0.005 off


def test_pairing_figures_of_known_points():
    # A's points per play: deal 0 +30 / -10, deal 1 0 / +20, deal 2 -40 / -40 (deal points, R5)
    points = [[30, -10], [0, 20], [-40, -40]]
    sides = [[[30, 0], [0, 10]], [[0, 0], [0, 20]], [[0, 40], [40, 0]]]
    f = arena.pairing_figures(points, sides, 3)
    assert f["deals"] == 3 and f["pair_scores"] == [10.0, 10.0, -40.0] and f["side_scores"] == sides
    assert f["mean"] == pytest.approx(-20 / 3) and f["ci_low"] < f["mean"] < f["ci_high"]
    assert f["win_rate"] == pytest.approx((1 + 0 + 0 + 1 + 0.5 + 0) / 6)  # a tie counts half
    assert f["a_as_solo"]["mean"] == pytest.approx(-10 / 3) and f["a_as_sun"]["mean"] == pytest.approx(-10)
    assert f["a_as_solo"]["win_rate"] == pytest.approx(0.5) and "a_as_solo" not in arena.pairing_figures(points, sides, 4)


def test_ratings_do_not_depend_on_the_order_of_the_deals():
    """The online OpenSkill update weighs the last games most; the ratings are averaged over
    seeded orders, so the same results give the same ratings in any order of the deals, and
    the agent with more wins is rated higher (165 wins, 131 losses, 4 draws)."""
    from twilight_env.experiments.arena import rate

    scores = [10.0] * 165 + [-10.0] * 131 + [0.0] * 4
    first = rate(["A", "B"], [(0, 1)], [{"pair_scores": scores}], len(scores))
    second = rate(["A", "B"], [(0, 1)], [{"pair_scores": scores[::-1]}], len(scores))
    assert first == second
    by = {r["agent"]: r for r in first}
    assert by["A"]["mu"] > by["B"]["mu"] and first[0]["agent"] == "A"


def test_seed_takes_a_held_out_deal_set_by_name_as_twilight_edge_does(tmp_path, capsys):
    """``twilight arena --seed heldout-3`` plays the deals of that set's seed, as ``twilight edge`` reads it."""
    out = tmp_path / "a"
    assert main(["arena", "random", "heuristic", "--players", "3", "--deals", "2", "--seed", "heldout-3",
                 "--workers", "1", "--quiet", "--out", str(out)]) == 0
    doc = json.loads((out / "arena.json").read_text())
    assert doc["seed"] == 2_026_120_103
    with pytest.raises(SystemExit) as e:  # argparse's usage error
        main(["arena", "random", "heuristic", "--players", "3", "--deals", "2", "--seed", "heldout-9", "--workers", "1",
              "--quiet", "--out", str(tmp_path / "b")])
    assert e.value.code == 2
    assert "held-out deal set (heldout-1, heldout-2, heldout-3), got 'heldout-9'" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
