"""Record options of the commands: deal --json, play --record, arena/edge --records, replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import twilight_env.experiments.arena as arena
from twilight_env.records.dealsets import generate_deals
from twilight_env.experiments.play import play_game
from twilight_env.records import game_records as records
from twilight_env.cli import main
from twilight_env.records.deal_log import format_deal, play_random_deal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _no_created(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k != "created"}


# ---------------------------------------------------------------------------------
# twilight deal --json and twilight replay
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["--seed", "5"], ["--seed", "8", "--dealer", "1"],
                                  ["--seed", "9", "--players", "3", "--solo", "2"]])
def test_deal_json_is_the_logged_deal(capsys, tmp_path, argv):
    assert main(["deal", "--json", *argv]) == 0
    rec = json.loads(capsys.readouterr().out)
    records.replay(rec)
    seed = int(argv[1])
    players = int(argv[argv.index("--players") + 1]) if "--players" in argv else 4
    m = play_random_deal(seed, players, dealer=1 if "--dealer" in argv else None, solo=2 if "--solo" in argv else None)
    assert records.actions_of_history(m.state.history) == [a["action"] for a in rec["actions"]]
    assert rec["seed"] == seed and rec["agents"] == ["random"] * 4
    assert rec["dealer"] == (m.dealer if players == 4 else None) and rec["solo"] == (m.solo if players == 3 else None)
    # replay prints the same deal log as `twilight deal` (the printing code is shared)
    path = tmp_path / "d.json"
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert format_deal(m, seed) in out
    assert out.startswith("Agents by seat: 0: random, 1: random, 2: random, 3: random\n")


def test_replay_refuses_a_tampered_record(capsys, tmp_path):
    assert main(["deal", "--json", "--seed", "3"]) == 0
    rec = json.loads(capsys.readouterr().out)
    rec["tricks"][0]["taker"] = None if rec["tricks"][0]["taker"] is not None else 0
    records.dump(rec, tmp_path / "bad.json")
    assert main(["replay", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert "twilight replay: error:" in err and "field 'taker'" in err and "step " in err


def test_replay_match_and_index(capsys, tmp_path):
    from records_helpers import play_match
    from twilight_env.rules.engine import Config

    deals, match, _ = play_match(Config(num_players=3, target=700), 3)
    assert len(deals) >= 3
    records.dump(match, tmp_path / "m.json.gz")
    assert main(["replay", str(tmp_path / "m.json.gz")]) == 0
    out = capsys.readouterr().out
    assert out.count("=== Deal ") == len(deals) and "Match totals: " in out and "Winner(s): " in out
    assert main(["replay", str(tmp_path / "m.json.gz"), "--index", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("=== Deal ") == 1 and f"=== Deal 2 of {len(deals)} ===" in out
    assert "Totals: " in out  # the second deal starts from the first one's totals
    assert main(["replay", str(tmp_path / "m.json.gz"), "--index", str(len(deals))]) == 2
    assert f"so K is 0..{len(deals) - 1}" in capsys.readouterr().err
    # many records in one file
    records.dump_many(deals, tmp_path / "d.jsonl")
    assert main(["replay", str(tmp_path / "d.jsonl"), "--index", "1"]) == 0
    assert f"solo p{(deals[0]['solo'] + 2) % 3} (seat 0)" in capsys.readouterr().out  # passed on (R7.4)
    assert main(["replay", str(tmp_path / "d.jsonl"), "--index", str(len(deals))]) == 2
    assert f"holds {len(deals)} record(s)" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "missing.json")]) == 2


# ---------------------------------------------------------------------------------
# twilight play --record
# ---------------------------------------------------------------------------------

def _first_legal(prompt: str) -> str:
    return prompt[prompt.index("[") + 1: prompt.rindex("]")].split(" | ")[0]


@pytest.mark.parametrize("players,seat", [(4, 1), (3, 0)])
def test_play_record_writes_the_finished_deal(tmp_path, players, seat):
    path = tmp_path / "game.json"
    lines = []
    assert play_game(players, seat, "random", "heuristic", seed=4, ask=_first_legal, say=lines.append,
                     record=str(path)) == 0
    rec = records.load(path)
    states = records.replay(rec)
    assert states[-1].done and rec["seed"] == 4
    assert rec["agents"][seat] == "human" and rec["meta"] == {"source": "twilight play", "human_seat": seat}
    if players == 3:
        assert rec["agents"][2] == "human"  # the person (solo) decides for the new moon (R7.3)
    assert f"Record of the deal written to {path}" in "\n".join(lines)
    # the person's choices are the first legal input at each of their decisions
    human_steps = [i for i, a in enumerate(rec["actions"]) if a["seat"] == seat]
    assert human_steps


def test_play_quit_writes_no_record(tmp_path):
    path = tmp_path / "game.json"
    answers = iter(["quit"])
    assert play_game(4, 0, "random", "random", seed=1, ask=lambda p: next(answers), say=lambda s: None,
                     record=str(path)) == 0
    assert not path.exists()


def _never_asked(prompt: str) -> str:
    raise AssertionError("the deal started before --record was checked")


def _play_refused(path, capsys, *extra) -> str:
    """``twilight play --record PATH`` (stdin never read): exit 2 and one line naming --record."""
    import builtins

    old = builtins.input
    builtins.input = _never_asked
    try:
        rc = main(["play", "--opponents", "random", "--record", str(path), *extra])
    finally:
        builtins.input = old
    captured = capsys.readouterr()
    assert rc == 2 and captured.out == "", captured
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("twilight play: error: --record ") and str(path) in err, err
    return err


def test_play_record_refuses_a_folder_before_the_deal(tmp_path, capsys):
    err = _play_refused(tmp_path, capsys)
    assert "is a folder" in err and "takes a file path" in err


def test_play_record_keeps_an_existing_file_unless_force(tmp_path, capsys):
    path = tmp_path / "game.json"
    path.write_text("keep me")
    assert "exists already; give --force" in _play_refused(path, capsys)
    assert path.read_text() == "keep me"
    # with --force the file is replaced by the finished deal's record
    assert play_game(4, 0, "random", "random", seed=2, ask=_first_legal, say=lambda s: None,
                     record=str(path), force=True) == 0
    assert records.load(path)["seed"] == 2


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_play_record_refuses_an_unwritable_path_up_front(tmp_path, capsys, where):
    if where == "proc":
        if not os.path.isdir("/proc/sys") or os.access("/proc/sys", os.W_OK):
            pytest.skip("needs a /proc/sys that refuses new files")
        path = "/proc/sys/x/game.json"
        assert "no permission to create files in '/proc/sys'" in _play_refused(path, capsys)
    else:
        (tmp_path / "f").write_text("")
        path = tmp_path / "f" / "game.json"
        assert "is a file, not a folder" in _play_refused(path, capsys)


def test_play_record_refuses_a_read_only_folder(tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert "no permission" in _play_refused(ro / "game.json", capsys)
    finally:
        ro.chmod(0o700)


@pytest.mark.parametrize("case", ["a-file", "under-a-file", "proc", "existing-records"])
def test_records_folder_checked_before_anything_is_played(tmp_path, case):
    (tmp_path / "f").write_text("")
    if case == "a-file":
        folder, why = tmp_path / "f", "is a file; --records takes a folder"
    elif case == "under-a-file":
        folder, why = tmp_path / "f" / "recs", "is a file, not a folder"
    elif case == "proc":
        if not os.path.isdir("/proc/sys") or os.access("/proc/sys", os.W_OK):
            pytest.skip("needs a /proc/sys that refuses new files")
        folder, why = "/proc/sys/x", "no permission to create files in '/proc/sys'"
    else:
        folder, why = tmp_path / "recs", "exists already; give --force"
        folder.mkdir()
        (folder / arena.RECORDS_FILE).write_text("")
    with pytest.raises(ValueError, match=why) as e:
        records.check_records_folder(folder, arena.RECORDS_FILE)
    assert str(e.value).startswith(f"--records {str(folder)!r}"[:-1]) and "\n" not in str(e.value)
    if case == "existing-records":
        assert records.check_records_folder(folder, arena.RECORDS_FILE, force=True) == str(
            folder / arena.RECORDS_FILE)
    # a new folder is fine and is not created by the check
    new = tmp_path / "new" / "recs"
    assert records.check_records_folder(new, "x.jsonl.gz") == str(new / "x.jsonl.gz") and not new.exists()


@pytest.mark.parametrize("command", ["arena", "edge"])
@pytest.mark.parametrize("case", ["passwd-like-file", "under-a-file", "proc"])
def test_records_flag_refused_before_anything_is_made(tmp_path, capsys, command, case):
    """``--records`` that cannot be a records folder: one line naming --records, exit 2,
    no output folder made and nothing played."""
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    if case == "proc":
        if not os.path.isdir("/proc/sys") or os.access("/proc/sys", os.W_OK):
            pytest.skip("needs a /proc/sys that refuses new files")
        folder = "/proc/sys/x"
    else:
        folder = str(tmp_path / "passwd") if case == "passwd-like-file" else str(tmp_path / "passwd" / "recs")
    out = tmp_path / "out"
    argv = (["arena", "random", "random", "--deals", "2"] if command == "arena" else ["edge", "random", "--deals", "2"])
    rc = main(argv + ["--workers", "1", "--quiet", "--out", str(out), "--records", folder])
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert rc == 2 and "\n" not in err and err.startswith(f"twilight {command}: error: --records {folder!r}"), err
    assert not out.exists() and (tmp_path / "passwd").read_text() == "root:x:0:0\n"


def test_records_flag_keeps_an_existing_records_file_unless_force(tmp_path, capsys):
    rec_dir = tmp_path / "rec"
    rec_dir.mkdir()
    (rec_dir / arena.RECORDS_FILE).write_text("earlier run")
    argv = ["arena", "random", "random", "--deals", "2", "--workers", "1", "--quiet", "--records", str(rec_dir)]
    assert main(argv + ["--out", str(tmp_path / "a")]) == 2
    assert "exists already; give --force" in capsys.readouterr().err
    assert (rec_dir / arena.RECORDS_FILE).read_text() == "earlier run" and not (tmp_path / "a").exists()
    assert main(argv + ["--out", str(tmp_path / "b"), "--force"]) == 0
    assert len(list(records.load_many(rec_dir / arena.RECORDS_FILE))) == 2 * 2  # 2 deals, 2 plays each


def test_play_record_option_parses():
    from twilight_env.cli import build_parser
    from twilight_env.experiments.play import add_arguments

    parser, subs = build_parser()
    add_arguments(subs["play"])
    args = parser.parse_args(["play", "--record", "x.json"])
    assert args.record == "x.json" and args.force is False
    assert parser.parse_args(["play", "--record", "x.json", "--force"]).force is True


# ---------------------------------------------------------------------------------
# twilight arena --records, twilight edge --records
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("players", [4, 3])
def test_arena_records_agree_with_arena_json(tmp_path, players):
    out, rec_dir = tmp_path / "out", tmp_path / "rec"
    assert main(["arena", "random", "heuristic", "random:", "--players", str(players), "--deals", "2", "--seed", "3",
                 "--workers", "1", "--quiet", "--out", str(out), "--records", str(rec_dir)]) == 0
    doc = json.loads((out / "arena.json").read_text())
    recs = list(records.load_many(rec_dir / arena.RECORDS_FILE))
    pairings = doc["results"]["pairings"]
    assert len(recs) == len(pairings) * 2 * 2  # pairings x deals x plays
    for rec in recs:
        records.replay(rec)
        m = rec["meta"]
        p = pairings[m["pairing"]]
        assert (m["a"], m["b"]) == (p["a_spec"], p["b_spec"]) and rec["seed"] == doc["seed"]
        assert rec["agents"] == arena.duplicate_seats(m["a"], m["b"], players, m["play"])
        # the deal points in the record are those in arena.json (R5)
        assert rec["side_scores"] == p["side_scores"][m["deal"]][m["play"]]
        s0, s1 = rec["side_scores"]
        assert rec["deal_points"] == ([s0, s1] if players == 4 else [s0, s1, s1])  # 3p: p0 is solo (R7.5)
        # A's pair score: A's side is side 0 in play 0 and side 1 in play 1
        assert p["pair_scores"][m["deal"]] == pytest.approx(
            sum((r["side_scores"][r["meta"]["play"]] - r["side_scores"][1 - r["meta"]["play"]]) / 2
                for r in recs if r["meta"]["pairing"] == m["pairing"] and r["meta"]["deal"] == m["deal"]))
    # the deals are the arena's deal set, the same cards in both plays of a pair
    deals = generate_deals(2, 3)
    assert all(rec["deal"] == [list(h) for h in deals[rec["meta"]["deal"]]] for rec in recs)


def test_arena_records_lockstep_equal_deal_by_deal():
    """The lockstep worker's records equal those of the deal-by-deal worker."""
    deals = generate_deals(2, 5)
    block = arena._play_pair_lockstep(([0, 1], deals, "random", "heuristic", 4, 9, 0, True))
    single = [arena._play_pair((d, deals[d], "random", "heuristic", 4, 9, 0, True))[0] for d in (0, 1)]
    for b, s in zip(block, single):
        assert [_no_created(r) for r in b["records"]] == [_no_created(r) for r in s["records"]]
        assert b["side_scores"] == [r["side_scores"] for r in b["records"]]
    assert "records" not in arena._play_pair((0, deals[0], "random", "random", 4, 9, 0))[0]


def test_edge_records_agree_with_edge_json(tmp_path):
    out, rec_dir = tmp_path / "out", tmp_path / "rec"
    assert main(["edge", "random", "--solo", "heuristic", "--deals", "2", "--seed", "4", "--workers", "1",
                 "--boot", "5", "--matches", "10", "--quiet", "--out", str(out), "--records", str(rec_dir)]) == 0
    doc = json.loads((out / "edge.json").read_text())
    recs = list(records.load_many(rec_dir / "edge.records.jsonl.gz"))
    assert len(recs) == len(doc["results"]) * 2 * 3  # configurations x deals x plays
    by_label = {(r["solo_spec"], r["sun_spec"]): r for r in doc["results"]}
    for rec in recs:
        records.replay(rec)
        m = rec["meta"]
        res = by_label[(m["solo_spec"], m["sun_spec"])]
        assert rec["agents"] == [m["solo_spec"], m["sun_spec"], m["solo_spec"], m["sun_spec"]]
        assert rec["side_scores"] == [res["moon_points"][m["deal"]][m["play"]], res["sun_points"][m["deal"]][m["play"]]]
    assert main(["edge", "--resume", str(out), "--records", str(rec_dir)]) == 2


# ---------------------------------------------------------------------------------
# purity
# ---------------------------------------------------------------------------------

def test_records_module_is_pure():
    """records and the replay command import neither PettingZoo, Gymnasium nor torch."""
    import ast

    code = ("import sys, types, importlib.util; _pkg = types.ModuleType('twilight_env'); "
            "_pkg.__path__ = list(importlib.util.find_spec('twilight_env').submodule_search_locations); "
            "sys.modules['twilight_env'] = _pkg; "  # the package's __init__ (env registration) not run
            "import twilight_env.records.game_records, twilight_env.records.replay_log; "
            "print(sorted({m.split('.')[0] for m in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    loaded = set(ast.literal_eval(out))
    assert not loaded & {"pettingzoo", "gymnasium", "torch", "numba", "scipy", "jsonschema"}, loaded


def test_arena_records_do_not_depend_on_workers(tmp_path):
    """Records arrive in task order with the same content whatever --workers is."""
    got = []
    for workers in ("1", "2"):
        rec_dir = tmp_path / f"rec{workers}"
        assert main(["arena", "random", "heuristic", "--deals", "3", "--seed", "6", "--workers", workers, "--quiet",
                     "--out", str(tmp_path / f"out{workers}"), "--records", str(rec_dir)]) == 0
        got.append([_no_created(r) for r in records.load_many(rec_dir / arena.RECORDS_FILE)])
    assert got[0] == got[1] and len(got[0]) == 6
    assert [(r["meta"]["deal"], r["meta"]["play"]) for r in got[0]] == [(d, p) for d in range(3) for p in (0, 1)]


def test_edge_records_stay_readable_after_an_interrupt(tmp_path, monkeypatch):
    """Ctrl-C during deal 1: the records of deal 0 are in a complete, readable file."""
    import twilight_env.experiments.edge.solo_edge as edge

    real, calls = edge.play_seeded, []

    def interrupted(*args):
        calls.append(args)
        if len(calls) == 4:  # deal 1, play 0
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(edge, "play_seeded", interrupted)
    with pytest.raises(KeyboardInterrupt) as interrupt:
        edge.run_study(["random"], deals=3, seed=2, workers=1, out=str(tmp_path / "out"), progress=False,
                       verbose=False, boot=5, matches=10, records=str(tmp_path / "rec"))
    # read while the traceback (and so the run's frames) still lives: the file was closed, not collected
    recs = list(records.load_many(tmp_path / "rec" / edge.RECORDS_FILE))
    assert interrupt.value is not None
    assert [(r["meta"]["deal"], r["meta"]["play"]) for r in recs] == [(0, 0), (0, 1), (0, 2)]


def test_replay_of_a_many_record_file_says_which_record_it_printed(tmp_path, capsys):
    from twilight_env.cli import main as cli_main

    out = tmp_path / "a"
    assert cli_main(["arena", "random", "heuristic", "--deals", "2", "--workers", "1", "--quiet", "--out", str(out),
                     "--records", str(tmp_path / "recs")]) == 0
    capsys.readouterr()
    path = str(tmp_path / "recs" / "arena.records.jsonl.gz")
    assert cli_main(["replay", path]) == 0
    assert "record 0 of the 4" in capsys.readouterr().err
    assert cli_main(["replay", path, "--index", "1"]) == 0
    assert "record 0 of" not in capsys.readouterr().err


def test_a_closed_pipe_ends_replay_quietly(tmp_path):
    import subprocess
    import sys

    from twilight_env.records import game_records as records

    path = tmp_path / "deal.json"
    assert subprocess.run([sys.executable, "-m", "twilight_env.cli", "deal", "--seed", "5", "--json"],
                          stdout=open(path, "w"), check=False).returncode == 0
    records.load(str(path))
    proc = subprocess.run(f"{sys.executable} -m twilight_env.cli replay {path} | head -1", shell=True,
                          capture_output=True, text=True, executable="/bin/bash")
    assert "Broken pipe" not in proc.stderr and "error" not in proc.stderr, proc.stderr


def test_replay_ends_with_what_it_checked(tmp_path, capsys):
    """A successful replay says what was replayed on the engine."""
    from twilight_env.cli import main as cli_main
    from twilight_env.records.replay_log import CHECKED

    out = tmp_path / "d.json"
    assert cli_main(["deal", "--seed", "4", "--json"]) == 0
    out.write_text(capsys.readouterr().out)
    assert cli_main(["replay", str(out)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(CHECKED.format(what="the record"))
