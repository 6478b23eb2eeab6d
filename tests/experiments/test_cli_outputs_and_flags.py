"""Command-line hardening: output paths are never replaced without ``--force``, every
argument error names its flag, and an unknown flag prints the subcommand's usage."""

import os

import pytest

from twilight_env.cli import main


def _run(argv, capsys):
    """``(exit status, stderr)`` of ``twilight ARGV`` whether argparse exits or run returns."""
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    return rc, capsys.readouterr().err


def _arena(out, *extra):
    return ["arena", "random", "random", "--deals", "2", "--workers", "1", "--quiet", "--out", str(out), *extra]


def _edge(out, *extra):
    return ["edge", "random", "--deals", "2", "--boot", "5", "--matches", "5", "--workers", "1", "--quiet",
            "--out", str(out), *extra]


def _snapshot(folder):
    return {f: (folder / f).read_bytes() for f in sorted(os.listdir(folder))}


@pytest.mark.parametrize("command", [_arena, _edge])
def test_existing_out_folder_is_refused_unless_force(tmp_path, capsys, command):
    out = tmp_path / "run"
    assert _run(command(out), capsys)[0] == 0
    before = _snapshot(out)
    rc, err = _run(command(out, "--seed", "5"), capsys)
    assert rc == 2
    assert err.count("\n") == 1 and "--out" in err and "already holds files" in err and "--force" in err
    assert _snapshot(out) == before  # nothing replaced
    assert _run(command(out, "--seed", "5", "--force"), capsys)[0] == 0
    assert _snapshot(out) != before
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run(command(empty), capsys)[0] == 0  # an empty folder holds nothing to replace


@pytest.mark.parametrize("command", [_arena, _edge])
def test_out_naming_a_file_is_a_clear_error(tmp_path, capsys, command):
    f = tmp_path / "notes.txt"
    f.write_text("keep me")
    for force in ((), ("--force",)):
        rc, err = _run(command(f, *force), capsys)
        assert rc == 2 and err.count("\n") == 1
        assert "--out" in err and "is an existing file, not a folder" in err and "Errno" not in err
    rc, err = _run(command(f / "sub"), capsys)
    assert rc == 2 and "is a file, not a folder" in err and "Errno" not in err
    assert f.read_text() == "keep me"


@pytest.mark.parametrize("command", [_arena, _edge])
def test_existing_save_deals_file_is_refused_unless_force(tmp_path, capsys, command):
    deals = tmp_path / "deals.json"
    deals.write_text("previous deal file")
    rc, err = _run(command(tmp_path / "a", "--save-deals", str(deals)), capsys)
    assert rc == 2 and err.count("\n") == 1
    assert "--save-deals" in err and "exists already" in err and "--force" in err
    assert deals.read_text() == "previous deal file"
    assert not (tmp_path / "a").exists()  # refused before anything was written
    assert _run(command(tmp_path / "b", "--save-deals", str(deals), "--force"), capsys)[0] == 0
    assert '"twilight-deals"' in deals.read_text()
    rc, err = _run(command(tmp_path / "c", "--save-deals", str(tmp_path)), capsys)
    assert rc == 2 and "--save-deals" in err and "is a folder" in err


@pytest.mark.parametrize("argv,flag", [
    (["deal", "--seed", "-3"], "--seed"),
    (["deal", "--seed", "x"], "--seed"),
    (["deal", "--players", "3", "--dealer", "1"], "--dealer"),
    (["deal", "--solo", "1"], "--solo"),
    (["arena", "random", "random", "--seed", "-1"], "--seed"),
    (["arena", "random", "random", "--deals", "0"], "--deals"),
    (["arena", "random", "random", "--workers", "0"], "--workers"),
    (["arena", "random", "random", "--deals-file", "/no/such/file.json"], "--deals-file"),
    (["edge", "--target", "0"], "--target"),
    (["edge", "--boot", "-2"], "--boot"),
    (["edge", "--matches", "many"], "--matches"),
    (["edge", "--seed", "-1"], "--seed"),
    (["edge", "--solo", "bogus", "--deals", "2"], "--solo"),
    (["edge", "--sun", "bogus", "--deals", "2"], "--sun"),
    (["edge", "--deals", "1"], "--deals"),
    (["play", "--seed", "-1"], "--seed"),
    (["play", "--opponents", "bogus"], "--opponents"),
    (["play", "--partner", "bogus"], "--partner"),
    (["play", "--seat", "5"], "--seat"),
])
def test_argument_errors_name_their_flag(tmp_path, capsys, monkeypatch, argv, flag):
    monkeypatch.chdir(tmp_path)  # nothing may land in the checkout
    rc, err = _run(argv, capsys)
    assert rc == 2
    last = err.strip().splitlines()[-1]
    assert flag in last and "Traceback" not in err, err
    assert last.startswith(f"twilight {argv[0]}: error: ")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv,flag", [
    (["train", "--decisions", "0"], "--decisions"),
    (["train", "--epsilon", "2"], "--epsilon"),
    (["train", "--minutes", "-1"], "--minutes"),
    (["train", "--seed", "-1"], "--seed"),
    (["train", "--decisions", "5", "--device", "tpu"], "--device"),
    (["train", "--decisions", "5", "--eval-opponents", "random,bogus"], "--eval-opponents"),
    (["train", "--decisions", "5", "--resume", "/no/such/run"], "--resume"),
])
def test_train_argument_errors_name_their_flag(tmp_path, capsys, monkeypatch, argv, flag):
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    rc, err = _run(argv + ["--logdir", str(tmp_path / "runs"), "--no-progress"], capsys)
    assert rc == 2
    assert flag in err.strip().splitlines()[-1] and "Traceback" not in err, err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command", ["arena", "edge", "deal", "play"])
def test_unknown_flag_prints_the_subcommands_usage(capsys, command):
    argv = [command] + (["random", "random"] if command == "arena" else []) + ["--bogus"]
    rc, err = _run(argv, capsys)
    assert rc == 2
    assert err.startswith(f"usage: twilight {command} ")
    assert f"twilight {command}: error: unrecognized arguments: --bogus" in err


def test_train_logdir_that_is_a_file_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("torch")
    f = tmp_path / "runs"
    f.write_text("not a folder")
    rc, err = _run(["train", "--decisions", "5", "--logdir", str(f), "--eval-deals", "0", "--no-progress"], capsys)
    assert rc == 2 and "--logdir" in err and "is a file, not a folder" in err and "Errno" not in err
    assert f.read_text() == "not a folder"


def test_any_subcommand_interrupted_ends_in_one_line(monkeypatch, capsys):
    """Ctrl-C (KeyboardInterrupt) exits 130 and SIGTERM 143, each with one line, and the
    previous SIGTERM handler is back afterwards."""
    import signal
    import time

    import twilight_env.records.deal_log as deal_log

    def ctrl_c(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(deal_log, "run", ctrl_c)
    assert main(["deal"]) == 130
    assert capsys.readouterr().err == "twilight deal: interrupted\n"

    def sigterm(args):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises at once
        return 0

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(deal_log, "run", sigterm)
    assert main(["deal"]) == 143
    assert capsys.readouterr().err == "twilight deal: stopped by SIGTERM\n"
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("agents", [["heuristic"], ["heuristic", "random"]])
def test_edge_output_fits_100_columns_and_says_the_verdict_depends_on_strength(tmp_path, capsys, agents):
    """What ``twilight edge`` prints stays within 100 characters a line (the wide table is
    in edge.md), and the run ends by saying the verdict depends on the agents' strength and
    where the strong-play answer is (a page that exists)."""
    from pathlib import Path
    from twilight_env.experiments.edge.solo_edge import STRENGTH_NOTE, STRENGTH_NOTE_FILE, TERMINAL_WIDTH
    specs = agents
    assert main(["edge", *specs, "--deals", "40", "--workers", "1", "--boot", "20", "--matches", "20",
                 "--out", str(tmp_path / "e")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= TERMINAL_WIDTH, max(lines, key=len)
    flat = " ".join(line.strip() for line in lines)
    assert STRENGTH_NOTE in flat
    assert "docs/RESULTS.md" in STRENGTH_NOTE
    assert (Path(__file__).resolve().parents[2] / "docs" / "RESULTS.md").is_file()
    written = (tmp_path / "e" / "edge.md").read_text()  # the file names the document by its repository path
    assert STRENGTH_NOTE_FILE in written and STRENGTH_NOTE_FILE.endswith("Figures and commands: docs/RESULTS.md.")
    assert STRENGTH_NOTE_FILE.rpartition("Figures")[0] == STRENGTH_NOTE.rpartition("Figures")[0]
    assert str(Path(__file__).resolve().parents[2]) not in written
    for spec in specs:  # one column per configuration
        assert spec in lines[0]


def test_individual_edge_output_fits_100_columns(tmp_path, capsys):
    """``twilight edge --scoring individual`` keeps to 100 characters a line too: its wide
    table (in individual.md) printed as one block per configuration, its answers wrapped
    (the ladder and compare modes: test_edge_strength)."""
    import json
    from twilight_env.experiments.edge import individual_edge
    from twilight_env.experiments.edge.solo_edge import TERMINAL_WIDTH
    out = tmp_path / "i"
    assert main(["edge", "heuristic", "random", "--scoring", "individual", "--deals", "3", "--workers", "1",
                 "--boot", "5", "--matches", "5", "--quiet", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= TERMINAL_WIDTH, max(lines, key=len)
    results = json.loads((out / individual_edge.RESULT).read_text())["results"]
    header, rows = individual_edge.table_rows(results)
    for row in rows:  # every figure of the file's table is printed, beside its column's name
        assert row[0] in lines
        for name, value in zip(header[1:], row[1:]):
            assert any(line.startswith(f"  {name}: ") and line.endswith(f" {value}") for line in lines), name
    flat = " ".join(line.strip() for line in lines)
    assert all(r["answer"] in flat for r in results)


@pytest.mark.parametrize("argv,flag", [
    (["edge", "heuristic", "--boot", "1000000000000"], "--boot must be an integer in 1..10000"),
    (["edge", "heuristic", "--matches", "1000000000000"], "--matches must be an integer in 1..100000"),
    (["edge", "heuristic", "--target", "1000000000000"], "--target must be an integer in 1..100000"),
    (["edge", "heuristic", "--boot", "10000", "--matches", "10000"], "--boot × --matches must be at most 10,000,000"),
    (["edge", "heuristic", "--scoring", "individual", "--boot", "1000000000000"], "--boot must be an integer in 1..10000"),
    (["ladder", "random", "heuristic", "--boot", "1000000000000"], "--boot must be an integer in 1..100000"),
])
def test_study_sizes_beyond_their_bounds_are_refused_before_playing(tmp_path, capsys, monkeypatch, argv, flag):
    """A careless --boot, --matches or --target would play every deal and then fail for
    memory (or never end): refused first, in one line, with no folder made."""
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--deals", "4", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert flag in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_the_strength_note_quotes_the_readme_and_names_the_strongest_agent():
    """The note printed after every edge run gives the held-out figures the README's table
    gives (each interval printed is one the README prints), the strongest agent's among them,
    and does not claim a lead that the figures printed beside it contradict."""
    import re
    from pathlib import Path
    from twilight_env.experiments.edge.solo_edge import STRENGTH_NOTE

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    figures = re.findall(r"[-+]\d+\.\d \[[-+]\d+\.\d, [-+]\d+\.\d\]", STRENGTH_NOTE)
    assert len(figures) == 5 and all(f in readme for f in figures), figures
    assert "guided:default" in STRENGTH_NOTE and "-1.3 [-2.3, -0.3]" in STRENGTH_NOTE
    assert "heldout-2" in STRENGTH_NOTE and "not a held-out set" in STRENGTH_NOTE
    assert "4 to 10" not in STRENGTH_NOTE


def test_the_answer_names_the_agents_and_whether_the_deals_are_held_out(tmp_path):
    from twilight_env.experiments.edge import solo_edge
    from twilight_env.rules.heldout import HELDOUT_SEEDS

    assert solo_edge.agents_words("policy", "policy") == "policy, the shipped network"
    assert solo_edge.agents_words("pimc", "heuristic") == "pimc (solo) against heuristic (Sun)"
    # a responder plays its target's network: the shipped one only when its target (or model) is
    assert solo_edge.agents_words("mmd:RUN", "respond:target=mmd:RUN,exact_tricks=2") == (
        "mmd:RUN (solo) against respond:target=mmd:RUN,exact_tricks=2 (Sun)")
    assert solo_edge.agents_words("heuristic", "respond").endswith("respond, the shipped network (Sun)")
    assert solo_edge.agents_words("heuristic", "respond:target=ismcts,model=policy:default").endswith(
        "the shipped network (Sun)")
    assert solo_edge.deals_words({"source": "seed", "seed": 0}, 8000) == "8000 deals of seed 0 (not a held-out set)"
    held = {"source": "seed", "seed": HELDOUT_SEEDS["heldout-2"]}
    assert solo_edge.deals_words(held, 600) == "the held-out deal set heldout-2 (600 deals)"
    out = solo_edge.run_study(["heuristic"], deals=4, seed=0, workers=1, boot=5, matches=5, out=str(tmp_path / "e"),
                              progress=False, verbose=False)
    answer = solo_edge.load_result(out)["results"][0]["answer"]
    assert answer.startswith("heuristic: for these agents (heuristic) on 4 deals of seed 0 (not a held-out set), ")
