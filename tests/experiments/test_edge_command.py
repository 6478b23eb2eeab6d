"""``twilight edge`` as one table of modes (experiments/edge/command.py) and the study
settings as frozen dataclasses checked once when built."""

import argparse
import dataclasses
import json
import re
import shlex
from pathlib import Path

import pytest

from twilight_env.cli import main
from twilight_env.experiments.edge import command, core, edge_strength, individual_edge, solo_edge
from twilight_env.experiments.edge.command import FLAGS, MODES, choose_mode

ROOT = Path(__file__).resolve().parents[2]

# a value for every option (a list: the words after the flag)
VALUES = {"specs": [], "solo": ["random"], "sun": ["random"], "deals": ["3"], "seed": ["1"],
          "deals_file": ["d.json"], "save_deals": ["s.json"], "target": ["10"], "boot": ["5"], "matches": ["5"],
          "scoring": ["team"], "records": ["rec"], "out": ["o"], "force": [], "workers": ["1"], "ray": ["auto"],
          "quiet": [], "resume": ["F"], "ladder": ["L"], "rung_deals": ["random=2"], "off_ladder": ["X"],
          "compare": ["A", "B"], "crossplay": ["random", "heuristic"], "status": ["F"], "spread": ["A", "B", "C"]}


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="twilight edge")
    command.add_arguments(p)
    return p.parse_args(argv)


def _option(dest: str) -> list[str]:
    return ["random"] if dest == "specs" else [FLAGS[dest], *VALUES[dest]]


def _selecting(mode) -> list[str]:
    """A command line that selects ``mode`` with everything it needs."""
    argv = [] if mode.chosen_by is None else (
        ["--scoring", "individual"] if mode.chosen_by[0] == "scoring" else _option(mode.chosen_by[0]))
    for dest, _ in mode.needs:
        argv += _option(dest)
    return argv


def test_every_mode_has_a_runner_and_every_option_a_flag():
    assert {m.name for m in MODES} == set(command.RUNS)
    assert MODES[-1].chosen_by is None and all(m.chosen_by is not None for m in MODES[:-1])
    for m in MODES:
        assert set(m.takes) <= set(FLAGS), m.name
    args = _args([])
    assert set(FLAGS) == set(vars(args)), "an option of the parser is not in FLAGS, or the reverse"


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_each_mode_takes_its_own_options(mode):
    argv = _selecting(mode)
    for dest in mode.takes:
        if dest == "scoring" and mode.name == "study":
            argv += ["--scoring", "team"]
        elif dest not in dict(mode.needs):
            argv += _option(dest)
    assert choose_mode(_args(argv)) is mode


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_each_mode_refuses_an_option_it_does_not_take_naming_the_options_it_takes(mode):
    earlier = {m.chosen_by[0] for m in MODES[:MODES.index(mode)]}  # these select another mode
    refused = [d for d in FLAGS if d not in mode.takes and d not in earlier
               and (mode.chosen_by is None or d != mode.chosen_by[0])]
    assert refused, f"the {mode.name} mode takes every option"
    for dest in refused:
        args = _args(_option(dest) + _selecting(mode))  # first: a selector of nargs="+" takes what follows it
        with pytest.raises(ValueError) as e:
            choose_mode(args)
        msg = str(e.value)
        assert msg.startswith(f"the {mode.name} mode ({mode.usage}: "), msg
        assert f"does not take {FLAGS[dest]}" in msg, msg
        allowed = ", ".join(mode.allowed()) if mode.takes else "nothing else"
        assert f"it takes {allowed}" in msg, msg


def test_an_option_of_one_other_mode_says_which(capsys, tmp_path):
    with pytest.raises(ValueError, match=r"\(--rung-deals goes with --ladder\)"):
        choose_mode(_args(["random", "--rung-deals", "random=2"]))
    with pytest.raises(ValueError, match=r"\(--off-ladder goes with --ladder\)"):
        choose_mode(_args(["--scoring", "individual", "--off-ladder", "X"]))
    # through the command: exit status 2, one line, nothing written
    out = tmp_path / "o"
    assert main(["edge", "random", "--deals", "2", "--records", str(tmp_path / "r"), "--scoring", "individual",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the individual mode" in err and "does not take --records" in err
    assert not out.exists() and not (tmp_path / "r").exists()


def test_a_mode_without_what_it_needs_says_so():
    with pytest.raises(ValueError, match=r"the ladder mode \(twilight edge --ladder FOLDER\) needs --deals N"):
        choose_mode(_args(["--ladder", "L"]))


def test_help_lists_every_mode_and_what_it_takes(capsys):
    with pytest.raises(SystemExit):
        main(["edge", "--help"])
    out = capsys.readouterr().out
    for m in MODES:
        assert m.usage in out
    assert "takes --deals, --workers, --ray, --quiet" in out  # the resume mode's row


def _documented_edge_lines() -> list[tuple[str, str]]:
    """(file, command line) of every ``twilight edge`` command in the README, docs/,
    notebooks/ and results/*/README.md: in fenced code blocks (a ``# comment`` cut,
    ``\\`` continuations joined) and in inline code spans (which may wrap)."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "notebooks").glob("*.ipynb")),
             *sorted((ROOT / "results").glob("*/README.md"))]
    found = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        if f.suffix == ".ipynb":
            text = "\n\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
        for block in blocks:
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split(" #")[0].strip()
                if line.startswith("twilight edge"):
                    found.append((f.relative_to(ROOT).as_posix(), line))
        prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
        for span in re.findall(r"`([^`]+)`", prose):
            line = " ".join(span.split())
            if line.startswith("twilight edge"):
                found.append((f.relative_to(ROOT).as_posix(), line))
    return [(f, line) for f, line in found if "..." not in line and "[" not in line]  # not usage sketches


def test_every_documented_edge_command_line_is_accepted():
    lines = _documented_edge_lines()
    assert len(lines) > 20
    for where, line in lines:
        words = [{"N": "3", "SPEC": "random"}.get(w, w) for w in shlex.split(line)[2:]]
        try:
            args = _args(words)
        except SystemExit as e:
            if e.code == 0:  # --help
                continue
            pytest.fail(f"{where}: `{line}` does not parse")
        try:
            choose_mode(args)
        except ValueError as e:
            if f"needs {FLAGS['deals']} N" in str(e) and "--ladder LADDER" in line:
                continue  # prose naming the mode (`twilight edge --ladder LADDER` plays ...), not a command
            pytest.fail(f"{where}: `{line}` is refused: {e}")


# ---------------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------------

def test_study_settings_are_frozen_and_checked_once_when_built():
    s = core.StudySettings(["random"], deals=4, seed=2)
    assert s.specs == ("random",) and (s.target_or_default, s.boot_or_default, s.matches_or_default) == (1000, 200,
                                                                                                           1000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.deals = 5
    for bad, message in ((dict(deals=1), "--deals must be at least 2"), (dict(workers=0), "--workers"),
                         (dict(seed=-1), "--seed"), (dict(target=0), "--target must be an integer in 1..100000"),
                         (dict(boot=10_000, matches=10_000), "--boot × --matches"),
                         (dict(scoring="both"), "--scoring must be one of team, individual"),
                         (dict(specs=["bogus"]), "unknown agent 'bogus'"), (dict(solo="bogus"), "--solo"),
                         (dict(resume="F", seed=3), "keeps the settings.*--seed"),
                         (dict(scoring="individual", records="r"), "do not give --records"),
                         (dict(ray="not an address"), "--ray takes")):
        with pytest.raises(ValueError, match=message):
            core.StudySettings(**bad)
    with pytest.raises(TypeError, match="no study setting dealz; the settings are specs, solo"):
        core.StudySettings.of(["random"], dealz=3)
    assert core.StudySettings.of(s, deals=6) == dataclasses.replace(s, deals=6)
    assert core.StudySettings.of(s) is s


def test_prepared_run_is_named(tmp_path):
    s = core.StudySettings(["random"], deals=3, seed=2, out=str(tmp_path / "o"))
    run = core.prepare_run(s, solo_edge.Checkpoint, "edge")
    assert (run.configs, run.seed, run.target, run.boot, run.matches, len(run.deals), run.folder) == (
        [("random", "random")], 2, 1000, 200, 1000, 3, str(tmp_path / "o"))
    assert run.deals_source["source"] == "seed" and (tmp_path / "o" / core.CHECKPOINT).is_file()
    again = core.prepare_run(core.StudySettings(resume=run.folder), solo_edge.Checkpoint, "edge")
    assert (again.configs, again.seed, again.deals, again.folder) == (run.configs, 2, run.deals, run.folder)


def test_a_settings_object_runs_the_study_as_keywords_do(tmp_path):
    small = dict(boot=5, matches=5, workers=1, progress=False, verbose=False)
    a = solo_edge.run_study(core.StudySettings(["random"], deals=3, seed=4, out=str(tmp_path / "a"), **small))
    b = solo_edge.run_study(["random"], deals=3, seed=4, out=str(tmp_path / "b"), **small)
    ra, rb = (json.loads((Path(f) / "edge.json").read_text())["results"] for f in (a, b))
    assert [r["moon_points"] for r in ra] == [r["moon_points"] for r in rb]
    with pytest.raises(ValueError, match="individual_edge.run_study"):
        solo_edge.run_study(["random"], scoring="individual", deals=3)
    c = individual_edge.run_study(core.StudySettings(["random"], deals=3, seed=4, out=str(tmp_path / "c"), **small))
    assert json.loads((Path(c) / individual_edge.RESULT).read_text())["scoring"] == "individual"


def test_ladder_settings_are_frozen_and_checked_once_when_built():
    s = edge_strength.LadderSettings("L", 4, rung_deals={"heuristic": 0, "pimc": 3}, off_ladder=["X"])
    assert s.seed == 2_026_120_102 and s.off_ladder == ("X",)
    with pytest.raises(TypeError):
        s.rung_deals["pimc"] = 5  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.deals = 5
    for bad, message in ((dict(deals=1), "--deals must be at least 2"),
                         (dict(rung_deals={"pimc": 1}), "N must be 0"), (dict(deal_set="heldout-9"), "held-out"),
                         (dict(workers=0), "--workers"), (dict(boot=0), "--boot")):
        with pytest.raises(ValueError, match=message):
            edge_strength.LadderSettings(**{"ladder": "L", "deals": 4, **bad})
    with pytest.raises(TypeError, match="no ladder setting rungs"):
        edge_strength.run_edge_ladder("L", 4, rungs={})


# ---------------------------------------------------------------------------------
# the order of the study's modules
# ---------------------------------------------------------------------------------

EDGE_ORDER = [("matches",), ("core",), ("solo_edge", "individual_edge"), ("interim",),
              ("edge_strength", "goals_333", "handicap", "control_variate", "crossplay", "spread"),
              ("command",)]
"""experiments/edge/, low to high: a module imports only modules of rows before its own."""


def _edge_imports(path: Path) -> set[str]:
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for n in names:
            if n.startswith("twilight_env.experiments.edge."):
                found.add(n.split(".")[3])
    return found


def test_the_edge_modules_import_only_lower_rows():
    folder = ROOT / "experiments" / "edge"
    row = {m: i for i, names in enumerate(EDGE_ORDER) for m in names}
    assert set(row) == {p.stem for p in folder.glob("*.py")} - {"__init__"}, "a module of experiments/edge/ is on no row"
    bad = [f"{p.stem} imports {m}" for p in folder.glob("*.py") if p.stem in row
           for m in _edge_imports(p) if m in row and row[m] >= row[p.stem] and m != p.stem]
    assert bad == []


def _interrupted_heuristic_run(out, monkeypatch) -> dict:
    """A ``heuristic`` edge run of 6 deals of seed 3 in ``out``, stopped (as by Ctrl-C) when its
    4th deal starts: 3 deals finished in its progress file. Returns the small study settings."""
    real, calls = solo_edge._play_edge_deal, []

    def stop_at_4(task):
        calls.append(task[0])
        if len(calls) == 4:
            raise KeyboardInterrupt("stop here")
        return real(task)

    small = dict(boot=5, matches=5, workers=1, progress=False, verbose=False)
    monkeypatch.setattr(solo_edge, "_play_edge_deal", stop_at_4)
    with pytest.raises(KeyboardInterrupt):
        solo_edge.run_study(["heuristic"], deals=6, seed=3, out=str(out), **small)
    monkeypatch.setattr(solo_edge, "_play_edge_deal", real)
    return small


def test_status_gives_the_interim_figures_of_the_finished_deals(tmp_path, monkeypatch, capsys):
    """``--status``: Moon - Sun over the deals finished so far equals what the run's own
    figures are over the same deals (a run of only those deals), and it plays nothing."""
    from twilight_env.experiments.edge import interim

    small = _interrupted_heuristic_run(tmp_path / "run", monkeypatch)
    (r,) = interim.interim_figures(str(tmp_path / "run"))
    assert (r["label"], r["done"], r["deals"]) == ("heuristic", 3, 6)
    solo_edge.run_study(["heuristic"], deals=3, seed=3, out=str(tmp_path / "three"), **small)
    whole = solo_edge.load_result(str(tmp_path / "three"))["results"][0]["figures"]
    assert r["figures"]["diff"] == pytest.approx(whole["diff"])
    assert main(["edge", "--status", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "heuristic: 3 of 6 deals" in out and "interim" in out and f"{whole['diff']['mean']:+.1f}" in out
    assert main(["edge", "--status", str(tmp_path / "three")]) == 2
    assert "has finished" in capsys.readouterr().err
    assert main(["edge", "--status", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["edge", "--status", str(tmp_path / "empty")]) == 2
    assert "no edge run" in capsys.readouterr().err
    result = tmp_path / "three" / "edge.json"  # a file, not a folder: named as one, not as missing
    assert main(["edge", "--status", str(result)]) == 2
    assert f"{str(result)!r} is a file, not a folder (give the output folder of an unfinished twilight edge run" \
        in capsys.readouterr().err


def test_compare_pairs_an_unfinished_run_over_its_first_finished_deals(tmp_path, monkeypatch, capsys):
    """``--compare`` with a run under way: its deals finished from deal 0 are paired with the
    other run's, the same figure as a finished run of those deals gives."""
    from twilight_env.experiments.edge import edge_strength

    small = _interrupted_heuristic_run(tmp_path / "run", monkeypatch)
    solo_edge.run_study(["random"], deals=6, seed=3, out=str(tmp_path / "other"), **small)
    solo_edge.run_study(["heuristic"], deals=3, seed=3, out=str(tmp_path / "three"), **small)
    interim = edge_strength.compare_runs(str(tmp_path / "run"), str(tmp_path / "other"))
    whole = edge_strength.compare_runs(str(tmp_path / "three"), str(tmp_path / "other"))
    assert interim["deals"] == whole["deals"] == 3
    assert (interim["difference"], interim["ci_low"], interim["ci_high"]) == pytest.approx(
        (whole["difference"], whole["ci_low"], whole["ci_high"]))
    assert interim["upper"] == "heuristic (under way: its first 3 of 6 deals)"
    assert interim["welch"]["difference"] == pytest.approx(whole["difference"])  # Welch over the same 3 deals
    assert main(["edge", "--compare", str(tmp_path / "run"), str(tmp_path / "other")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "under way: its first 3 of 6 deals" in out and "interim" in out and "Welch over the same deals" in out
    solo_edge.run_study(["random"], deals=4, seed=4, out=str(tmp_path / "seed4"), **small)
    assert main(["edge", "--compare", str(tmp_path / "run"), str(tmp_path / "seed4")]) == 2
    assert "seed" in capsys.readouterr().err
    # the same agent under way and finished: one agent twice, refused as two finished runs of it are
    for pair in ((tmp_path / "run", tmp_path / "three"), (tmp_path / "three", tmp_path / "run")):
        assert main(["edge", "--compare", *map(str, pair)]) == 2
        assert "both runs play heuristic on the deals of seed 3" in " ".join(capsys.readouterr().err.split())
