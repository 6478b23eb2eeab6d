"""``twilight edge --scoring individual`` (R8): per-seat score lines, the same plays as
the team study for agents that do not read the scoring, match simulation with a fourth
(new-moon) line, and resumable runs."""

import json

import numpy as np
import pytest

import twilight_env.experiments.edge.individual_edge as ind
import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.cli import main
from twilight_env.experiments.common import with_digest

SMALL = dict(boot=20, matches=50, workers=1, progress=False, verbose=False)


def test_same_plays_as_the_team_study_scored_by_seat(tmp_path):
    """For agents that do not read the scoring the plays are those of ``twilight edge``
    with the same seed: the team points of the plays equal that run's Moon and Sun
    points, and each play's seat points are R8's (a seat's own tricks, its own cult)."""
    a, b = tmp_path / "a", tmp_path / "b"
    edge.run_study(["heuristic"], deals=8, seed=11, out=str(a), **SMALL)
    ind.run_study(["heuristic"], deals=8, seed=11, out=str(b), **SMALL)
    team = json.loads((a / "edge.json").read_text())["results"][0]
    plays = np.array(json.loads((b / ind.RESULT).read_text())["results"][0]["plays"])
    assert plays.shape == (8, 3, 6)
    assert plays[:, :, 4].tolist() == team["moon_points"] and plays[:, :, 5].tolist() == team["sun_points"]
    # every line is a deal score (0..360, R5); a seat's sanctuaries multiply only its own
    # souls (R8), so the four lines do not add up to the two sides' scores in every play
    assert (plays[:, :, :4] >= 0).all() and (plays[:, :, :4] <= 360).all()
    assert not (plays[:, :, :4].sum(axis=2) == plays[:, :, 4] + plays[:, :, 5]).all()


def test_line_match_simulation():
    # the new moon takes 400 a deal, the others 100: the new moon wins every match in 3 deals
    pts = np.array([[[100, 100, 400, 100]]])
    r = ind.simulate_lines(pts, np.random.default_rng(0), 10)
    assert r["p_win"][0].tolist() == [0, 0, 1, 0] and r["deals"][0] == 3
    # the solo and the Sun left tie above the target for ever: undecided (R6.1)
    tie = ind.simulate_lines(np.array([[[500, 500, 0, 0]]]), np.random.default_rng(0), 4, max_deals=20)
    assert tie["undecided"][0] == 4


def test_figures_read_the_seat_lines():
    plays = np.zeros((4, 3, 6), dtype=np.int64)
    plays[:, :, 0] = 120  # the solo
    plays[:, :, 1] = 30
    plays[:, :, 3] = 10   # Sun players' mean 20
    plays[:, :, 2] = 60
    plays[1, 0, 0] = 0    # one play where the solo is not highest
    f = ind.figures(plays, 0, 1, boot=10, matches=20)
    assert f["solo"]["mean"] == pytest.approx(120 - 120 / 12)
    assert f["diff"]["mean"] == pytest.approx(f["solo"]["mean"] - 20)
    assert f["p_solo_highest"]["plays"] == 12 and f["p_solo_highest"]["p"] == pytest.approx(11 / 12)
    assert f["matches"]["p_solo_wins"] == 1.0


def test_interrupted_run_resumes_to_the_same_figures(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    ind.run_study(["random"], deals=6, seed=4, out=str(a), **SMALL)
    real, calls = ind._play_deal, []

    def worker(task):
        calls.append(task[0])
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(ind, "_play_deal", worker)
    with pytest.raises(KeyboardInterrupt):
        ind.run_study(["random"], deals=6, seed=4, out=str(b), **SMALL)
    assert len(ind.Checkpoint.load(str(b)).finished(edge.config_key("random", "random"))) == 3
    calls.clear()
    assert main(["edge", "--resume", str(b), "--quiet", "--workers", "1"]) == 0  # found by its checkpoint
    assert len(calls) == 3
    ra, rb = (json.loads((f / ind.RESULT).read_text())["results"] for f in (a, b))
    assert [r["plays"] for r in ra] == [r["plays"] for r in rb]
    assert [r["figures"] for r in ra] == [r["figures"] for r in rb]
    assert not (b / ind.CHECKPOINT).exists()


def test_cli_errors_are_clear(tmp_path, capsys):
    assert main(["edge", "heuristic", "--scoring", "individual", "--ladder", str(tmp_path)]) == 2
    err = capsys.readouterr().err  # --ladder chooses the ladder mode, which plays team scoring
    assert "the ladder mode" in err and "does not take SPEC (heuristic), --scoring" in err
    assert main(["edge", "--scoring", "individual", "--resume", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "the resume mode" in err and "it keeps the run's settings" in err and "does not take --scoring" in err
    assert main(["edge", "nonsense-agent", "--scoring", "individual", "--deals", "3",
                 "--out", str(tmp_path / "x")]) == 2
    assert "nonsense-agent" in capsys.readouterr().err


def test_a_finished_run_grows_to_the_figures_of_a_longer_run(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    ind.run_study(["random"], deals=7, seed=9, out=str(a), **SMALL)
    ind.run_study(["random"], deals=4, seed=9, out=str(b), **SMALL)
    assert main(["edge", "--resume", str(b), "--deals", "7", "--quiet", "--workers", "1"]) == 0
    ra, rb = (json.loads((f / ind.RESULT).read_text()) for f in (a, b))
    assert [r["plays"] for r in ra["results"]] == [r["plays"] for r in rb["results"]]
    assert rb["deals"] == 7 and (b / "individual.previous.json").exists()


def test_growing_errors_are_clear(tmp_path, capsys):
    run = tmp_path / "r"
    ind.run_study(["random"], deals=4, seed=9, out=str(run), **SMALL)
    assert main(["edge", "--resume", str(run), "--deals", "3", "--quiet"]) == 2
    assert "holds 4 deals" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no individual-scoring run"):
        ind.grow_run(str(tmp_path), 9)


def test_malformed_checkpoint_is_refused(tmp_path, monkeypatch):
    run = tmp_path / "r"
    monkeypatch.setattr(ind, "_play_deal", lambda task: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        ind.run_study(["random"], deals=4, seed=9, out=str(run), **SMALL)
    path = run / ind.CHECKPOINT
    doc = json.loads(path.read_text())
    doc["done"] = {str(edge.config_key("random", "random")): {"0": [[1, 2, 3]] * 3}}
    path.write_text(json.dumps(with_digest(doc)))  # a consistent edit: the result check is under test
    with pytest.raises(ValueError, match="3 plays of 6 non-negative ints"):
        ind.Checkpoint.load(str(run))
    doc["done"] = {"12345": {}}
    path.write_text(json.dumps(with_digest(doc)))
    with pytest.raises(ValueError, match="settings do not list"):
        ind.Checkpoint.load(str(run))


def test_verdict_names_the_highest_line_and_warns_below_the_bootstrap_minimum():
    plays = np.zeros((4, 3, 6), dtype=np.int64)
    plays[:, :, 2] = 90  # the new moon takes everything
    plays[:, :, 0] = [[10, 20, 30]] * 4
    f = ind.figures(plays, 0, 1, boot=10, matches=20)
    v = ind.verdict(f, "x", 4)
    assert "the new moon's (90.0 points per deal)" in v and "not reliable" in v
    assert "not reliable" not in ind.verdict(f, "x", edge.MIN_BOOTSTRAP_DEALS)


def test_resume_errors_name_what_is_allowed(tmp_path, capsys):
    run = tmp_path / "r"
    ind.run_study(["random"], deals=4, seed=9, out=str(run), **SMALL)
    assert main(["edge", "--resume", str(run), "--scoring", "team"]) == 2
    assert "does not take --scoring; it takes --resume, --deals, --workers, --ray, --quiet" in capsys.readouterr().err
    assert main(["edge", "--resume", str(tmp_path / "nowhere")]) == 2
    assert "individual.checkpoint.json" in capsys.readouterr().err
