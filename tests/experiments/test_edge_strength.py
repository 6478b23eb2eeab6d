"""``twilight edge --ladder``: the edge at every rung of a ladder on the held-out set
heldout-2, read back or resumed on a second run, with the top-two difference and the
projection to a ±2 half-width."""

import json
import math
import shlex
import shutil
import signal

import numpy as np
import pytest

import twilight_env.experiments.edge.command as command
import twilight_env.experiments.edge.edge_strength as es
import twilight_env.experiments.ladder as ladder
import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.cli import main
from twilight_env.rules.heldout import HELDOUT_SEEDS
from twilight_env.util.argtypes import Interrupted


def _fits_the_terminal(printed: str) -> None:
    """What ``twilight edge`` prints stays within 100 characters a line, as in the default
    mode (test_cli_outputs_and_flags)."""
    lines = printed.splitlines()
    assert lines and max(len(line) for line in lines) <= edge.TERMINAL_WIDTH == 100, max(lines, key=len)


@pytest.fixture(scope="module")
def lad(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lad")
    ladder.run_ladder(["random", "heuristic", "heuristic:"], num_players=3, deals=4, boot=20, workers=1,
                      out=str(folder), progress=False, verbose=False)
    return folder


def test_edge_at_every_rung_but_random(lad, tmp_path, monkeypatch):
    out = tmp_path / "el"
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--out", str(out), "--quiet", "--boot", "10",
                 "--matches", "20", "--workers", "1"]) == 0
    doc = json.loads((out / "edge_vs_strength.json").read_text())
    assert doc["seed"] == HELDOUT_SEEDS["heldout-2"]
    assert [r["spec"] for r in doc["rungs"]] == ["heuristic", "heuristic:"]
    for r in doc["rungs"]:
        e = json.loads((out / r["folder"].split("/")[-1] / "edge.json").read_text())
        assert e["deals"] == 4 and e["seed"] == HELDOUT_SEEDS["heldout-2"]
        assert r["diff"] == e["results"][0]["figures"]["diff"]
        assert r["half_width"] == pytest.approx((r["diff"]["ci_high"] - r["diff"]["ci_low"]) / 2)
    t = doc["top_two"]
    a, b = (sum(r["diff_per_deal"]) / 4 for r in doc["rungs"][::-1])
    assert t["difference"] == pytest.approx(a - b)
    assert t["ci_low"] <= t["difference"] <= t["ci_high"]
    assert (out / "edge_vs_strength.png").stat().st_size > 5000
    # a second run reads every finished rung back and plays nothing
    calls = []
    monkeypatch.setattr(edge, "run_study", lambda *a, **k: calls.append(a))
    es.run_edge_ladder(str(lad), 4, out=str(out), workers=1, progress=False, verbose=False)
    assert calls == []
    with pytest.raises(ValueError, match="use another --out"):  # fewer deals than a finished rung holds
        es.run_edge_ladder(str(lad), 3, out=str(out), workers=1, progress=False, verbose=False)


def test_more_deals_grow_the_finished_rungs(lad, tmp_path, monkeypatch):
    """Asking finished rungs for more deals plays only the new deals, and the figures are
    those of a run of that many deals from the start."""
    out, ref = tmp_path / "el", tmp_path / "ref"
    opts = dict(workers=1, progress=False, verbose=False, boot=10, matches=20)
    es.run_edge_ladder(str(lad), 3, out=str(out), **opts)
    es.run_edge_ladder(str(lad), 5, out=str(ref), **opts)
    real = edge._play_edge_deal
    played = []
    monkeypatch.setattr(edge, "_play_edge_deal", lambda task: (played.append(task[0]), real(task))[1])
    es.run_edge_ladder(str(lad), 5, out=str(out), workers=1, progress=False, verbose=False)
    assert len(played) == 2 * 2  # two rungs, two new deals each
    grown = json.loads((out / "edge_vs_strength.json").read_text())["rungs"]
    fresh = json.loads((ref / "edge_vs_strength.json").read_text())["rungs"]
    assert [(r["deals"], r["diff"], r["diff_per_deal"], r["p_solo_wins"]) for r in grown] == \
        [(r["deals"], r["diff"], r["diff_per_deal"], r["p_solo_wins"]) for r in fresh]
    for r in grown:
        assert (out / r["folder"].split("/")[-1] / "edge.previous.json").is_file()


def test_an_interrupted_rung_resumes(lad, tmp_path, monkeypatch, capsys):
    """SIGTERM or Ctrl-C while a rung plays: exit 128 + signal, the rung's deals saved, and
    one line with the ladder command that continues (``--out`` the folder, the options that
    decide the play); the rung alone resumes with ``--resume`` too, and the printed command
    then finishes the study with the figures of an uninterrupted run, playing nothing again."""
    out = tmp_path / "el"
    ref = tmp_path / "ref"
    es.run_edge_ladder(str(lad), 4, out=str(ref), workers=1, progress=False, verbose=False, boot=10, matches=20)
    real = edge._play_edge_deal
    n = []
    stops = {6: Interrupted(signal.SIGTERM), 7: KeyboardInterrupt()}  # rung 1 done (4 deals), rung 2 part done

    def stop(task):
        n.append(1)
        if len(n) in stops:
            raise stops[len(n)]
        return real(task)

    monkeypatch.setattr(edge, "_play_edge_deal", stop)
    args = ["edge", "--ladder", str(lad), "--deals", "4", "--rung-deals", "heuristic:=4", "--boot", "10",
            "--matches", "20", "--out", str(out)]
    printed = ["twilight", *args]
    sub = out / "edge_2_heuristic_"
    for status, how in ((143, "stopped by SIGTERM: "), (130, "interrupted: ")):
        capsys.readouterr()
        assert main(args + ["--workers", "1", "--quiet"]) == status
        out_text, err = capsys.readouterr()
        assert out_text == "" and "Traceback" not in err
        last = err.strip().splitlines()[-1]  # the rungs' progress lines come first
        assert last.startswith(how + f"rung 2 (heuristic:) has 1 finished deal(s) saved in {sub}"), last
        assert "--resume" not in err  # the rung's own line gives way to the ladder's
        cont = shlex.split(last.split("continue with: ", 1)[1])
        assert cont == printed and "--ladder" in cont and "--out" in cont
    assert not (out / "edge_vs_strength.json").exists()
    assert len(edge.Checkpoint.load(str(sub)).finished(edge.config_key("heuristic:", "heuristic:"))) == 1
    monkeypatch.setattr(edge, "_play_edge_deal", lambda task: (n.append(1), real(task))[1])
    assert main(["edge", "--resume", str(sub), "--workers", "1", "--quiet"]) == 0  # the rung alone
    assert len(n) == 7 + 3
    assert main(cont[1:] + ["--workers", "1", "--quiet"]) == 0  # the printed command: plays nothing again
    assert len(n) == 10
    got = json.loads((out / "edge_vs_strength.json").read_text())
    want = json.loads((ref / "edge_vs_strength.json").read_text())
    assert [r["diff_per_deal"] for r in got["rungs"]] == [r["diff_per_deal"] for r in want["rungs"]]


def test_continue_command_names_the_folder_and_what_decides_the_play():
    s = es.LadderSettings("lad dir", 600, rung_deals={"ismcts:iterations=4800": 200}, off_ladder=("o1", "o2"),
                          boot=50, ray="auto", workers=3, progress=False)
    assert shlex.split(es.continue_command(s, "out/x y")) == [
        "twilight", "edge", "--ladder", "lad dir", "--deals", "600", "--rung-deals", "ismcts:iterations=4800=200",
        "--off-ladder", "o1", "--off-ladder", "o2", "--boot", "50", "--ray", "auto", "--out", "out/x y"]


def test_projection_scales_as_one_over_root_n():
    p = es.projection(4.0, 100, 3600.0)
    assert p["deals_needed"] == 400 and p["hours_here"] == pytest.approx(4.0)
    assert p["hours_on"]["8"] == pytest.approx(0.5)
    assert es.projection(4.0, 100, 3600.0, used=2)["hours_on"]["8"] == pytest.approx(1.0)
    assert es.projection(1.5, 100, 10.0)["deals_needed"] == 100  # already met
    assert es.projection(math.nan, 100, 10.0)["deals_needed"] is None


def test_ladder_option_errors(lad, tmp_path, capsys):
    assert main(["edge", "--ladder", str(lad), "--quiet"]) == 2
    assert "the ladder mode (twilight edge --ladder FOLDER) needs --deals N" in capsys.readouterr().err
    assert main(["edge", "heuristic", "--ladder", str(lad), "--deals", "4"]) == 2
    err = capsys.readouterr().err
    assert "the ladder mode" in err and "does not take SPEC (heuristic); it takes --ladder, --deals" in err
    assert main(["edge", "--ladder", str(tmp_path), "--deals", "4"]) == 2
    assert "no readable ladder.json" in capsys.readouterr().err


def test_rung_deals_give_each_rung_its_own_n_and_zero_leaves_it_out(lad, tmp_path):
    out = tmp_path / "el"
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--rung-deals", "heuristic:=0", "--rung-deals",
                 "heuristic=3", "--out", str(out), "--quiet", "--boot", "10", "--matches", "20",
                 "--workers", "1"]) == 0
    doc = json.loads((out / "edge_vs_strength.json").read_text())
    assert [(r["spec"], r["deals"]) for r in doc["rungs"]] == [("heuristic", 3)]
    with pytest.raises(ValueError, match="not rungs of the ladder"):
        es.run_edge_ladder(str(lad), 4, out=str(out), rung_deals={"pimc": 5}, progress=False, verbose=False)
    with pytest.raises(ValueError, match="N must be 0"):
        es.run_edge_ladder(str(lad), 4, out=str(out), rung_deals={"heuristic": 1}, progress=False, verbose=False)
    assert command.parse_rung_deals(["ismcts:iterations=4800=200"]) == {"ismcts:iterations=4800": 200}
    with pytest.raises(ValueError, match="SPEC=N"):
        command.parse_rung_deals(["heuristic"])


def test_off_ladder_agents_are_tabulated_apart_against_the_top_rung(lad, tmp_path, capsys):
    """--off-ladder adds finished one-agent edge runs on the same deal set: their own table
    and plot panel, each with its edge minus the top rung's (paired by deal), and no ladder rating."""
    seed = HELDOUT_SEEDS["heldout-2"]
    opts = ["--quiet", "--boot", "10", "--matches", "20", "--workers", "1"]
    off = tmp_path / "off"
    assert main(["edge", "random", "--deals", "4", "--seed", str(seed), "--out", str(off), *opts]) == 0
    out = tmp_path / "el"
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(off), "--out", str(out),
                 *opts]) == 0
    doc = json.loads((out / "edge_vs_strength.json").read_text())
    (row,) = doc["off_ladder"]
    e = json.loads((off / "edge.json").read_text())
    assert row["spec"] == "random" and row["deals"] == 4 and "rating" not in row
    assert row["diff"] == e["results"][0]["figures"]["diff"]
    m = row["minus_top"]
    assert m["lower"] == doc["rungs"][-1]["spec"]
    assert m["difference"] == pytest.approx(sum(row["diff_per_deal"]) / 4 - sum(doc["rungs"][-1]["diff_per_deal"]) / 4)
    assert m["ci_low"] <= m["difference"] <= m["ci_high"]
    md = (out / "edge_vs_strength.md").read_text()
    assert "## Off the ladder" in md and "| random | 4 |" in md
    printed = capsys.readouterr().out
    assert "Off the ladder:" in printed
    _fits_the_terminal(printed)  # the wide tables are in edge_vs_strength.md
    assert "\nrung 1: heuristic\n" in printed and "\nrandom\n" in printed
    shown = es.table_rows(doc)[1][0][4]  # rung 1's Moon − Sun, as in the file's table
    assert any(line.startswith("  Moon − Sun [95% CI]: ") and line.endswith(" " + shown)
               for line in printed.splitlines())
    # the rungs' figures are those of a run without --off-ladder
    ref = tmp_path / "ref"
    es.run_edge_ladder(str(lad), 4, out=str(ref), workers=1, progress=False, verbose=False, boot=10, matches=20)
    keys = ("spec", "deals", "diff", "diff_per_deal", "p_moon_outscores", "p_solo_wins")
    assert [[r[k] for k in keys] for r in json.loads((ref / "edge_vs_strength.json").read_text())["rungs"]] == \
        [[r[k] for k in keys] for r in doc["rungs"]]


def test_off_ladder_errors(lad, tmp_path, capsys):
    opts = ["--quiet", "--boot", "10", "--matches", "20", "--workers", "1"]
    other = tmp_path / "other"  # deals of another seed
    assert main(["edge", "random", "--deals", "3", "--seed", "5", "--out", str(other), *opts]) == 0
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(other), *opts]) == 2
    err = capsys.readouterr().err
    assert "played the deals of seed 5" in err and f"--seed {HELDOUT_SEEDS['heldout-2']}" in err
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(tmp_path / "none"), *opts]) == 2
    assert "no finished edge run" in capsys.readouterr().err
    mixed = tmp_path / "mixed"
    assert main(["edge", "--solo", "random", "--sun", "heuristic", "--deals", "3", "--seed",
                 str(HELDOUT_SEEDS["heldout-2"]), "--out", str(mixed), *opts]) == 0
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(mixed), *opts]) == 2
    err = capsys.readouterr().err
    assert "one agent on all three chairs" in err and "solo=random, sun=heuristic" in err
    seed = str(HELDOUT_SEEDS["heldout-2"])
    rung = tmp_path / "rung"  # an agent that is a rung of the ladder
    assert main(["edge", "heuristic", "--deals", "3", "--seed", seed, "--out", str(rung), *opts]) == 0
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(rung), *opts]) == 2
    assert "a rung of the ladder" in capsys.readouterr().err
    short = tmp_path / "short"  # matches to another target
    assert main(["edge", "random", "--deals", "3", "--seed", seed, "--target", "500", "--out", str(short),
                 *opts]) == 0
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(short), *opts]) == 2
    assert "matches to 500" in capsys.readouterr().err
    one = tmp_path / "one"
    assert main(["edge", "random", "--deals", "3", "--seed", seed, "--out", str(one), *opts]) == 0
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(one), "--off-ladder",
                 str(one), *opts]) == 2
    assert "gives random twice" in capsys.readouterr().err
    colon = tmp_path / "colon"  # `random:` is the agent `random` (canonical_spec): the same agent twice
    assert main(["edge", "random:", "--deals", "3", "--seed", seed, "--out", str(colon), *opts]) == 0
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(one), "--off-ladder",
                 str(colon), *opts]) == 2
    assert "gives random: twice" in (err := capsys.readouterr().err) and "random there and random: here are the same" in err
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / edge.CHECKPOINT).write_text("{}")
    assert main(["edge", "--ladder", str(lad), "--deals", "4", "--off-ladder", str(unfinished), *opts]) == 2
    assert f"finish it first with `twilight edge --resume {unfinished}`" in capsys.readouterr().err
    assert main(["edge", "heuristic", "--deals", "3", "--off-ladder", str(other), *opts]) == 2
    assert "--off-ladder goes with --ladder" in capsys.readouterr().err
    # checked before any rung plays: nothing was written into the output folder
    assert not (tmp_path / "el").exists()


def test_differences_between_runs_are_paired_by_deal():
    """Two runs on one deal set share their first deals: the difference is taken deal by deal
    over the deals both played (a one-sample Student-t interval on the differences), and
    where the deals' luck dominates it is far narrower than Welch's, which ignores the pairing."""
    from scipy import stats

    rng = np.random.default_rng(5)
    luck = rng.normal(0, 50, 300)                      # what the deal itself gives, shared by both runs
    upper = {"spec": "a", "diff_per_deal": (luck + 3 + rng.normal(0, 5, 300)).tolist()}
    lower = {"spec": "b", "diff_per_deal": (luck[:200] + rng.normal(0, 5, 200)).tolist()}
    p = es._paired(upper, lower)
    d = np.asarray(upper["diff_per_deal"][:200]) - np.asarray(lower["diff_per_deal"])
    ci = stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert p["deals"] == 200 and (p["upper"], p["lower"]) == ("a", "b")
    assert p["difference"] == pytest.approx(d.mean())
    assert (p["ci_low"], p["ci_high"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert p["ci_low"] > 0                               # the +3 shows through the pairing ...
    w = p["welch"]
    assert w["ci_low"] < 0 < w["ci_high"]                # ... but not through Welch's interval
    assert (p["ci_high"] - p["ci_low"]) * 4 < w["ci_high"] - w["ci_low"]
    assert es.top_two([{"spec": "b", **lower}, upper]) == p


def test_compare_two_runs_paired_by_deal(tmp_path, capsys):
    """``twilight edge --compare A B`` prints run A's edge minus run B's, paired by deal over
    the deals both played (runs of one seed share their first deals); it refuses runs it
    cannot pair."""
    opts = ["--quiet", "--boot", "10", "--matches", "20", "--workers", "1"]
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert main(["edge", "heuristic", "--deals", "5", "--seed", "3", "--out", str(a), *opts]) == 0
    assert main(["edge", "random", "--deals", "4", "--seed", "3", "--out", str(b), *opts]) == 0
    assert main(["edge", "random", "--deals", "4", "--seed", "4", "--out", str(c), *opts]) == 0
    capsys.readouterr()
    assert main(["edge", "--compare", str(a), str(b)]) == 0
    printed = capsys.readouterr().out
    _fits_the_terminal(printed)
    line = " ".join(part.strip() for part in printed.splitlines())  # the sentence, unwrapped
    assert line == es.compare_line(es.compare_runs(str(a), str(b)))
    ra, rb = (json.loads((f / "edge.json").read_text())["results"][0] for f in (a, b))
    per = [np.mean(np.subtract(r["moon_points"], r["sun_points"]), axis=1) for r in (ra, rb)]
    d = per[0][:4] - per[1]
    assert "heuristic minus Moon − Sun at random, paired by deal over the first 4 deals of seed 3" in line
    assert f"{d.mean():+.1f} [" in line
    assert main(["edge", "--compare", str(a), str(c)]) == 2
    assert "seed 3" in capsys.readouterr().err
    assert main(["edge", "--compare", str(a), str(tmp_path / "none")]) == 2
    assert "no finished edge run" in capsys.readouterr().err
    assert main(["edge", "--compare", str(a), str(b), "--deals", "3"]) == 2
    assert "the compare mode" in (err := capsys.readouterr().err) and "does not take --deals; it takes nothing else" in err
    both = tmp_path / "both"
    assert main(["edge", "random", "heuristic", "--deals", "3", "--seed", "3", "--out", str(both), *opts]) == 0
    capsys.readouterr()
    assert main(["edge", "--compare", str(both), str(b)]) == 2
    assert "2 configurations" in capsys.readouterr().err
    assert main(["edge", "--compare", str(a), str(a) + "/"]) == 2  # one folder twice
    assert "names one folder twice" in capsys.readouterr().err
    twin = tmp_path / "twin"
    shutil.copytree(a, twin)
    assert main(["edge", "--compare", str(a), str(twin)]) == 2  # one agent twice: the same games
    assert "difference is 0 by construction" in capsys.readouterr().err
    shutil.rmtree(twin)
    # One spec, two agents (a `default` file replaced between the runs): compared, named by folder.
    other = tmp_path / "other"
    shutil.copytree(a, other)
    doc = json.loads((other / "edge.json").read_text())
    doc["results"][0]["moon_points"][0] = [p + 10 for p in doc["results"][0]["moon_points"][0]]
    (other / "edge.json").write_text(json.dumps(doc))
    c2 = es.compare_runs(str(other), str(a))
    assert c2["difference"] == pytest.approx(10 / len(per[0]))
    assert c2["upper"] == f"heuristic ({other})" and c2["lower"] == f"heuristic ({a})"
    assert main(["edge", "--compare", str(a), str(b), str(c)]) == 2
    assert "the compare mode" in (err := capsys.readouterr().err) and f"does not take SPEC ({c})" in err
    ind = tmp_path / "ind"
    assert main(["edge", "random", "--scoring", "individual", "--deals", "3", "--seed", "3", "--out", str(ind),
                 *opts]) == 0
    capsys.readouterr()
    assert main(["edge", "--compare", str(a), str(ind)]) == 2
    assert "--scoring individual run (R8)" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "edge.json").write_text("{}")
    assert main(["edge", "--compare", str(a), str(broken)]) == 2
    assert "its edge.json is not a finished edge run's output" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--off-ladder .* its edge.json is not a finished edge run's output"):
        es._off_ladder_row(str(broken), 3, "heldout-2", None)
