"""``--resume`` checks every setting, value range and stored result of a checkpoint before
any deal is played; damaged checkpoint files (truncated, nested 100,000 deep, not JSON)
give one line naming the file, in every checkpoint reader; a resumed run's play time
adds up its sittings."""

import gzip
import json
import os

import pytest

import twilight_env.experiments.arena as arena
import twilight_env.experiments.common as common
import twilight_env.experiments.edge.individual_edge as individual
import twilight_env.experiments.ladder as ladder
import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.experiments.edge.edge_strength import load_ladder
from twilight_env.cli import main
from twilight_env.records.dealsets import generate_deals

QUIET = dict(workers=1, progress=False, verbose=False)


def _stop_at(monkeypatch, module, name, at):
    """Wrap ``module.name`` (a deal worker): count its calls, raise KeyboardInterrupt on call ``at``."""
    real = getattr(module, name)
    calls = []

    def worker(task):
        calls.append(task)
        if at is not None and len(calls) == at:
            raise KeyboardInterrupt("stop here")
        return real(task)

    monkeypatch.setattr(module, name, worker)
    return calls


def _count_builds(monkeypatch):
    """Count agents built (``make_agent``) from now on."""
    import twilight_env.agents.base

    real = twilight_env.agents.base.make_agent
    built = []

    def make(spec):
        built.append(spec)
        return real(spec)

    monkeypatch.setattr(twilight_env.agents.base, "make_agent", make)
    return built


def _damaged(tmp_path, name, doc, change, file_name):
    d = json.loads(json.dumps(doc))
    change(d)
    if common.DIGEST_KEY in d:  # a consistent edit: the field checks themselves are under test
        d = common.with_digest(d)
    folder = tmp_path / name
    folder.mkdir()
    (folder / file_name).write_text(json.dumps(d))
    return folder


@pytest.fixture(scope="module")
def edge_doc(tmp_path_factory):
    """An interrupted ``edge`` run: 3 of 4 deals finished."""
    folder = tmp_path_factory.mktemp("edge") / "run"
    with pytest.MonkeyPatch.context() as mp:
        _stop_at(mp, edge, "_play_edge_deal", 4)
        with pytest.raises(KeyboardInterrupt):
            edge.run_study(["random"], deals=4, seed=2, out=str(folder), boot=5, matches=5, **QUIET)
    return _listed(json.loads((folder / edge.CHECKPOINT).read_text()))


def _listed(doc):
    """``doc`` in the form that stores its deal list (files written before drawn deals were
    stored as null still have it, and are read): the deal checks below edit the list."""
    assert doc["deals"] is None  # drawn deals: the file keeps the seed, not the list
    return {**doc, "deals": generate_deals(doc["num_deals"], doc["settings"]["deals_source"]["seed"])}


def _key(doc):
    return next(iter(doc["done"]))


EDGE_CASES = {
    "boot 0": (lambda d: d["settings"].update(boot=0), "'boot' must be an integer in 1..10000, got 0"),
    "matches -5": (lambda d: d["settings"].update(matches=-5), "'matches' must be an integer in 1..100000, got -5"),
    "target 0": (lambda d: d["settings"].update(target=0), "'target' must be an integer in 1..100000, got 0"),
    "boot 10^12": (lambda d: d["settings"].update(boot=10 ** 12), "'boot' must be an integer in 1..10000"),
    "matches 10^12": (lambda d: d["settings"].update(matches=10 ** 12), "'matches' must be an integer in 1..100000"),
    "target 10^12": (lambda d: d["settings"].update(target=10 ** 12), "'target' must be an integer in 1..100000"),
    "boot x matches": (lambda d: d["settings"].update(boot=10_000, matches=10_000),
                       r"× settings 'matches' must be at most 10,000,000 simulated matches"),
    "seed -1": (lambda d: d["settings"].update(seed=-1), "'seed' must be an integer >= 0"),
    "seed true": (lambda d: d["settings"].update(seed=True), "'seed' must be an integer >= 0, got True"),
    "boot float": (lambda d: d["settings"].update(boot=2.5), "'boot' must be an integer in 1..10000, got 2.5"),
    "score 10^6": (lambda d: d["done"][_key(d)]["0"][0].__setitem__(1, 10 ** 6), r"deal 0, play 1.*R5"),
    "score 361": (lambda d: d["done"][_key(d)]["0"][1].__setitem__(0, 361), r"deal 0, play 0.*R5"),
    "score -1": (lambda d: d["done"][_key(d)]["1"][0].__setitem__(2, -1), r"deal 1, play 2.*R5"),
    "score prime 61": (lambda d: d["done"][_key(d)]["0"][0].__setitem__(0, 61), r"deal 0, play 0.*R5"),
    "score string": (lambda d: d["done"][_key(d)]["0"][0].__setitem__(0, "5"), "two integer deal scores"),
    "shortened deals": (lambda d: d.update(deals=d["deals"][:3]), r"'num_deals' is 4 but the file holds 3 deals"),
    "shortened deals and count": (lambda d: d.update(deals=d["deals"][:2], num_deals=2),
                                  r"name deal '2'; the run's deals are 0..1"),
    "edited deals": (lambda d: d["deals"].reverse(), "not the first 4 deals of seed 2"),
    "empty deals": (lambda d: d.update(deals=[]),
                    r"the checkpoint's 'deals' is an empty list; it holds a list of the run's 4 deals, or null for "
                    r"deals drawn from the run's seed \(settings 'deals_source' with source 'seed'\)"),
    "empty deals of a file": (lambda d: (d.update(deals=[]), d["settings"]["deals_source"].update(source="file")),
                              r"'deals' is an empty list; it holds a list of the run's 4 deals \(deals from a file "
                              r"are stored in the file\)"),
    "flipped players": (lambda d: d["settings"]["deals_source"].update(num_players=4),
                        r"'num_players' is 4, but the run plays 3 players"),
    "unknown source": (lambda d: d["settings"]["deals_source"].update(source="web"), "'source' must be 'seed' or"),
    "unknown setting": (lambda d: d["settings"].update(workers=3), r"unknown key\(s\) 'workers'"),
    "unknown top key": (lambda d: d.update(extra=1), r"unknown key\(s\) 'extra'"),
    "configs not pairs": (lambda d: d["settings"].update(configs=[["random"]]), "'configs' must be a non-empty"),
    "config twice": (lambda d: d["settings"].update(configs=[["random", "random"]] * 2), "a configuration twice"),
    "spec not a string": (lambda d: d["settings"].update(configs=[[1, 2]]), "'configs' must be a non-empty"),
    "deal out of range": (lambda d: d["done"][_key(d)].update({"9": d["done"][_key(d)]["0"]}), r"deal '9'"),
    "elapsed nan": (lambda d: d.update(elapsed_seconds=float("nan")), "'elapsed_seconds' must be a finite"),
    "elapsed negative": (lambda d: d.update(elapsed_seconds=-3), "'elapsed_seconds' must be a finite"),
    "play seconds negative": (lambda d: d.update(play_seconds={_key(d): -1}), "'play_seconds'.*finite number"),
    "num_deals 0": (lambda d: d.update(num_deals=0), "'num_deals' must be an integer >= 1"),
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_resume_refuses_each_out_of_range_value_before_playing(tmp_path, monkeypatch, capsys, edge_doc, case):
    change, message = EDGE_CASES[case]
    folder = _damaged(tmp_path, "run", edge_doc, change, edge.CHECKPOINT)
    before = (folder / edge.CHECKPOINT).read_bytes()
    calls = _stop_at(monkeypatch, edge, "_play_edge_deal", None)
    built = _count_builds(monkeypatch)
    with pytest.raises(ValueError, match=message) as e:
        edge.run_study(resume=str(folder), **QUIET)
    assert str(folder / edge.CHECKPOINT) in str(e.value) and "\n" not in str(e.value)
    assert calls == [] and built == []  # nothing was played, no agent was built
    assert (folder / edge.CHECKPOINT).read_bytes() == before  # the checkpoint is unchanged
    assert main(["edge", "--resume", str(folder), "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and edge.CHECKPOINT in err
    assert calls == [] and not (folder / "edge.json").exists()


NULL_DEAL_CASES = {
    "num_deals 0": (lambda d: d.update(num_deals=0), "'num_deals' must be an integer >= 1, got 0"),
    "num_deals missing": (lambda d: d.pop("num_deals"), "'num_deals' must be an integer >= 1, got None"),
    "unknown source": (lambda d: d["settings"]["deals_source"].update(source="web"),
                       "'source' must be 'seed' or 'file', got 'web'"),
    "file source": (lambda d: d["settings"]["deals_source"].update(source="file"),
                    "deals from a file are stored in the file"),
    "seed removed": (lambda d: d["settings"]["deals_source"].pop("seed"), "only a run on deals drawn from a seed"),
}


@pytest.mark.parametrize("case", sorted(NULL_DEAL_CASES))
def test_a_checkpoint_of_drawn_deals_checks_what_gives_them_back(tmp_path, monkeypatch, edge_doc, case):
    """A file storing ``"deals": null`` (drawn deals) is refused, naming the field, when its
    number of deals or its seed cannot give the deals back; the intact one resumes."""
    change, message = NULL_DEAL_CASES[case]
    null = {**edge_doc, "deals": None}
    folder = _damaged(tmp_path, "run", null, change, edge.CHECKPOINT)
    calls = _stop_at(monkeypatch, edge, "_play_edge_deal", None)
    with pytest.raises(ValueError, match=message) as e:
        edge.run_study(resume=str(folder), **QUIET)
    assert str(folder / edge.CHECKPOINT) in str(e.value) and calls == []
    intact = _damaged(tmp_path, "intact", null, lambda d: None, edge.CHECKPOINT)
    edge.run_study(resume=str(intact), **QUIET)
    assert len(calls) == 1 and (intact / "edge.json").is_file()


def test_the_undamaged_edge_checkpoint_resumes(tmp_path, monkeypatch, edge_doc):
    """The cases above fail because of their change: the same file unchanged resumes."""
    folder = _damaged(tmp_path, "run", edge_doc, lambda d: None, edge.CHECKPOINT)
    calls = _stop_at(monkeypatch, edge, "_play_edge_deal", None)
    edge.run_study(resume=str(folder), **QUIET)
    assert len(calls) == 1 and (folder / "edge.json").is_file()


@pytest.fixture(scope="module")
def arena_doc(tmp_path_factory):
    """An interrupted 4-player ``arena`` run: 2 of 3 deals finished."""
    folder = tmp_path_factory.mktemp("arena") / "run"
    with pytest.MonkeyPatch.context() as mp:
        _stop_at(mp, arena, "_play_task", 3)
        assert main(["arena", "random", "heuristic", "--deals", "3", "--seed", "5", "--workers", "1", "--quiet",
                     "--out", str(folder)]) == 130
    return _listed(json.loads((folder / arena.ArenaCheckpoint.NAME).read_text()))


def _arena_result(d):
    return d["done"]["0"]["0"]


ARENA_CASES = {
    "flipped players": (lambda d: d["settings"].update(num_players=3), "'num_players' is 3 but the run was started"),
    "flipped players everywhere": (lambda d: (d["settings"].update(num_players=3),
                                              d["settings"]["arguments"].update(players=3)),
                                   r"'num_players' is 4, but the run plays 3 players"),
    "players 5": (lambda d: d["settings"].update(num_players=5), "'num_players' must be 3 or 4"),
    "seed -1": (lambda d: d["settings"].update(seed=-1), "'seed' must be an integer >= 0"),
    "side score 10^6": (lambda d: _arena_result(d)["side_scores"][0].__setitem__(0, 10 ** 6),
                        r"side_scores of play 0 = \[1000000, .*R5"),
    "points not the difference": (lambda d: _arena_result(d)["points"].__setitem__(1, 999),
                                  "points of play 1 is 999"),
    "one play": (lambda d: _arena_result(d).update(points=[0]), "two plays expected"),
    "unknown result key": (lambda d: _arena_result(d).update(extra=0), r"unknown key\(s\) 'extra'"),
    "shortened deals": (lambda d: d.update(deals=d["deals"][:2]), r"'num_deals' is 3 but the file holds 2"),
    "edited deals": (lambda d: d["deals"].reverse(), "not the first 3 deals of seed 5"),
    "one spec": (lambda d: d["settings"].update(specs=["random"]), "at least two agent specs"),
    "lockstep string": (lambda d: d["settings"].update(lockstep="yes"), "'lockstep' must be true or false"),
    "unknown setting": (lambda d: d["settings"].update(target=5), r"unknown key\(s\) 'target'"),
    "pairing 7": (lambda d: d["done"].update({"7": {}}), "pairing '7'"),
    "deal index 3": (lambda d: d["done"]["0"].update({"3": _arena_result(d)}), r"deal '3'"),
}


@pytest.mark.parametrize("case", sorted(ARENA_CASES))
def test_arena_resume_refuses_each_out_of_range_value_before_playing(tmp_path, monkeypatch, capsys, arena_doc, case):
    change, message = ARENA_CASES[case]
    folder = _damaged(tmp_path, "run", arena_doc, change, arena.ArenaCheckpoint.NAME)
    path = folder / arena.ArenaCheckpoint.NAME
    before = path.read_bytes()
    calls = _stop_at(monkeypatch, arena, "_play_task", None)
    built = _count_builds(monkeypatch)
    with pytest.raises(ValueError, match=message) as e:
        arena.ArenaCheckpoint.load(str(folder))
    assert str(path) in str(e.value) and "\n" not in str(e.value)
    assert main(["arena", "--resume", str(folder), "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and arena.ArenaCheckpoint.NAME in err
    assert calls == [] and built == [] and path.read_bytes() == before


def test_the_undamaged_arena_checkpoint_resumes(tmp_path, monkeypatch, capsys, arena_doc):
    folder = _damaged(tmp_path, "run", arena_doc, lambda d: None, arena.ArenaCheckpoint.NAME)
    calls = _stop_at(monkeypatch, arena, "_play_task", None)
    assert main(["arena", "--resume", str(folder), "--quiet", "--workers", "1"]) == 0
    assert len(calls) == 1 and (folder / "arena.json").is_file()


@pytest.fixture(scope="module")
def individual_doc(tmp_path_factory):
    folder = tmp_path_factory.mktemp("individual") / "run"
    with pytest.MonkeyPatch.context() as mp:
        _stop_at(mp, individual, "_play_deal", 3)
        with pytest.raises(KeyboardInterrupt):
            individual.run_study(["random"], deals=3, seed=1, out=str(folder), boot=5, matches=5, **QUIET)
    return json.loads((folder / individual.CHECKPOINT).read_text())


INDIVIDUAL_CASES = {
    "seat 10^6": (lambda d: d["done"][_key(d)]["0"][0].__setitem__(0, 10 ** 6), "solo line of deal 0, play 0"),
    "team 10^6": (lambda d: d["done"][_key(d)]["0"][1].__setitem__(5, 10 ** 6), "team points of deal 0, play 1"),
    "seats above team": (lambda d: d["done"][_key(d)]["1"].__setitem__(0, [6, 0, 0, 0, 0, 0]),
                         "exceed their sides' team points"),
    "scoring team": (lambda d: d["settings"].update(scoring="team"), "'scoring' must be 'individual'"),
    "no scoring": (lambda d: d["settings"].pop("scoring"), "lacks 'scoring'"),
    "matches -5": (lambda d: d["settings"].update(matches=-5), "'matches' must be an integer in 1..100000"),
}


@pytest.mark.parametrize("case", sorted(INDIVIDUAL_CASES))
def test_individual_resume_refuses_each_out_of_range_value(tmp_path, monkeypatch, individual_doc, case):
    change, message = INDIVIDUAL_CASES[case]
    folder = _damaged(tmp_path, "run", individual_doc, change, individual.CHECKPOINT)
    calls = _stop_at(monkeypatch, individual, "_play_deal", None)
    with pytest.raises(ValueError, match=message) as e:
        individual.run_study(resume=str(folder), **QUIET)
    assert str(folder / individual.CHECKPOINT) in str(e.value)
    assert calls == []


@pytest.fixture(scope="module")
def ladder_doc(tmp_path_factory):
    """A ladder of three rungs interrupted in its second step (the first step saved)."""
    folder = tmp_path_factory.mktemp("ladder") / "run"
    with pytest.MonkeyPatch.context() as mp:
        real = ladder.play_step
        n = []

        def step(*a, **k):
            n.append(1)
            if len(n) == 2:
                raise KeyboardInterrupt
            return real(*a, **k)

        mp.setattr(ladder, "play_step", step)
        with pytest.raises(KeyboardInterrupt):
            ladder.run_ladder(["random", "random", "heuristic"], deals=3, seed=4, boot=10, out=str(folder), **QUIET)
    return json.loads((folder / ladder.STEPS_FILE).read_text())


LADDER_CASES = {
    "boot 0": (lambda d: d["settings"].update(boot=0), "'boot' must be an integer in 1..100000, got 0"),
    "boot 10^12": (lambda d: d["settings"].update(boot=10 ** 12), "'boot' must be an integer in 1..100000"),
    "seed -1": (lambda d: d["settings"].update(seed=-1), "'seed' must be an integer >= 0"),
    "players 2": (lambda d: d["settings"].update(num_players=2), "'num_players' must be 3 or 4"),
    "flipped players": (lambda d: d["settings"].update(num_players=4), "'num_players' is 3, but the run plays 4"),
    "points 10^6": (lambda d: d["steps"][0]["points"][0].__setitem__(0, 10 ** 6), "deal 0 holds 1000000"),
    "points fraction": (lambda d: d["steps"][0]["points"][1].__setitem__(1, 0.5), "deal 1 holds 0.5"),
    "shortened deals": (lambda d: d.update(deals=d["deals"][:2]), r"'num_deals' is 3 but the file holds 2"),
    "short points": (lambda d: d["steps"][0].update(points=d["steps"][0]["points"][:2]), "3 pairs"),
    "other rungs": (lambda d: d["settings"].update(rungs=["heuristic", "random", "random"]), "step 0 plays"),
    "too many steps": (lambda d: d["steps"].extend([d["steps"][0]] * 2), "at most 2 finished step"),
    "seconds nan": (lambda d: d["steps"][0].update(seconds=float("nan")), "'seconds' must be a finite"),
    "unknown key": (lambda d: d.update(resume=True), r"unknown key\(s\) 'resume'"),
}


@pytest.mark.parametrize("case", sorted(LADDER_CASES))
def test_ladder_resume_refuses_each_out_of_range_value(tmp_path, monkeypatch, ladder_doc, case):
    change, message = LADDER_CASES[case]
    folder = _damaged(tmp_path, "run", ladder_doc, change, ladder.STEPS_FILE)
    played = []
    monkeypatch.setattr(ladder, "play_step", lambda *a, **k: played.append(a))
    with pytest.raises(ValueError, match=message) as e:
        ladder.run_ladder(resume=str(folder), **QUIET)
    assert str(folder / ladder.STEPS_FILE) in str(e.value) and "\n" not in str(e.value)
    assert played == []


def test_the_undamaged_ladder_file_resumes_with_figures_from_its_points(tmp_path, ladder_doc):
    """A hand-edited margin does not survive: the figures are recomputed from the points."""
    folder = _damaged(tmp_path, "run", ladder_doc, lambda d: d["steps"][0].update(margin=1e9), ladder.STEPS_FILE)
    ladder.run_ladder(resume=str(folder), **QUIET)
    doc = json.loads((folder / "ladder.json").read_text())
    assert len(doc["steps"]) == 2 and abs(doc["steps"][0]["margin"]) <= 360


# ---------------------------------------------------------------------------------
# damaged files: one line naming the file, in every checkpoint reader
# ---------------------------------------------------------------------------------

DAMAGE = {
    "truncated": lambda good: good[:len(good) // 2],
    "nested": lambda good: "[" * 100_000 + "]" * 100_000,
    "malformed": lambda good: "{'kind': twilight}",
    "empty": lambda good: "",
    "not utf-8": lambda good: b"\xff\xfe{}",
}
READERS = {
    "edge": (edge.CHECKPOINT, lambda f: edge.Checkpoint.load(f), ["edge", "--resume"]),
    "arena": (arena.ArenaCheckpoint.NAME, lambda f: arena.ArenaCheckpoint.load(f), ["arena", "--resume"]),
    "individual": (individual.CHECKPOINT, lambda f: individual.Checkpoint.load(f), ["edge", "--resume"]),
    "ladder": (ladder.STEPS_FILE, lambda f: ladder.run_ladder(resume=f, **QUIET), ["ladder", "--resume"]),
    "edge result": ("edge.json", lambda f: edge.load_result(f), ["edge", "--deals", "9", "--resume"]),
    "individual result": (individual.RESULT, lambda f: individual.grow_run(f, 9), ["edge", "--deals", "9", "--resume"]),
    "ladder result": ("ladder.json", lambda f: load_ladder(f), ["edge", "--deals", "4", "--ladder"]),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_damaged_files_give_one_line_naming_the_file(tmp_path, capsys, reader, damage):
    name, read, command = READERS[reader]
    folder = tmp_path / "run"
    folder.mkdir()
    text = DAMAGE[damage](json.dumps({"kind": "x", "version": 1, "settings": {"a": [1, 2, 3]}}))
    (folder / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError) as e:
        read(str(folder))
    assert name in str(e.value) and "\n" not in str(e.value)
    assert main(command + [str(folder), "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and name in err


def test_a_truncated_gzip_reads_as_one_line_too(tmp_path):
    """``read_progress_file`` goes through ``twilight_env.util.jsonfile`` (the same reader as records)."""
    path = tmp_path / "x.json.gz"
    path.write_bytes(gzip.compress(b'{"kind": "k", "version": 1}')[:-8])
    with pytest.raises(ValueError, match="truncated gzip"):
        common.read_progress_file(str(tmp_path), "x.json.gz", "k", 1, "test file", "test")


# ---------------------------------------------------------------------------------
# play time over sittings
# ---------------------------------------------------------------------------------

def test_play_seconds_add_up_every_sitting(tmp_path, monkeypatch):
    """A fake clock that moves 100 s per reading: the first sitting's play time is saved in
    the checkpoint, and the resumed run's ``play_seconds`` is that plus the last sitting's."""
    now = [1_000_000.0]

    def clock():
        now[0] += 100.0
        return now[0]

    monkeypatch.setattr(common, "clock", clock)
    folder = tmp_path / "run"
    _stop_at(monkeypatch, edge, "_play_edge_deal", 3)
    with pytest.raises(KeyboardInterrupt):
        edge.run_study(["random"], deals=4, seed=2, out=str(folder), boot=5, matches=5, **QUIET)
    saved = json.loads((folder / edge.CHECKPOINT).read_text())["play_seconds"]
    (first,) = saved.values()
    assert first >= 100.0
    _stop_at(monkeypatch, edge, "_play_edge_deal", None)
    edge.run_study(resume=str(folder), **QUIET)
    (r,) = json.loads((folder / "edge.json").read_text())["results"]
    # the last sitting read the fake clock at least twice (start, stop): >= 100 s more
    assert r["play_seconds"] >= first + 100.0
    assert r["play_seconds_this_sitting"] < 100.0  # measured with the real clock: this sitting alone


def test_individual_play_seconds_add_up_every_sitting(tmp_path, monkeypatch):
    now = [1_000_000.0]

    def clock():
        now[0] += 100.0
        return now[0]

    monkeypatch.setattr(common, "clock", clock)
    folder = tmp_path / "run"
    _stop_at(monkeypatch, individual, "_play_deal", 2)
    with pytest.raises(KeyboardInterrupt):
        individual.run_study(["random"], deals=3, seed=1, out=str(folder), boot=5, matches=5, **QUIET)
    (first,) = json.loads((folder / individual.CHECKPOINT).read_text())["play_seconds"].values()
    assert first >= 100.0
    _stop_at(monkeypatch, individual, "_play_deal", None)
    individual.run_study(resume=str(folder), **QUIET)
    (r,) = json.loads((folder / individual.RESULT).read_text())["results"]
    assert r["play_seconds"] >= first + 100.0 and r["play_seconds_this_sitting"] < 100.0


def test_play_seconds_survive_growing_a_finished_run(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    edge.run_study(["random"], deals=2, seed=2, out=str(folder), boot=5, matches=5, **QUIET)
    (r,) = json.loads((folder / "edge.json").read_text())["results"]
    edge.grow_run(str(folder), 3)
    ck = edge.Checkpoint.load(str(folder))
    assert list(ck.seconds.values()) == [pytest.approx(r["play_seconds"])]


def test_old_checkpoints_without_the_new_keys_still_resume(tmp_path, monkeypatch, edge_doc):
    """Files written before ``num_deals`` and ``play_seconds`` were added resume (0 s carried)."""
    folder = _damaged(tmp_path, "run", edge_doc, lambda d: (d.pop("num_deals"), d.pop("play_seconds")),
                      edge.CHECKPOINT)
    edge.run_study(resume=str(folder), **QUIET)
    assert (folder / "edge.json").is_file()


# ---------------------------------------------------------------------------------
# --out that cannot be made
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["edge", "random", "--deals", "2"], ["arena", "random", "random", "--deals", "2"],
                                     ["ladder", "random", "random", "--deals", "2"]])
@pytest.mark.parametrize("where", ["/proc/sys/x", "file/inside"])
def test_out_that_cannot_be_made_names_out_before_playing(tmp_path, monkeypatch, capsys, command, where):
    (tmp_path / "file").write_text("x")
    out = where if where.startswith("/") else str(tmp_path / where)
    played = _stop_at(monkeypatch, edge, "_play_edge_deal", None) + _stop_at(monkeypatch, arena, "_play_task", None)
    assert main(command + ["--out", out, "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and out in err and "Traceback" not in err
    assert played == [] and not os.path.exists(out)


def test_out_dir_names_out_when_the_system_refuses(tmp_path, monkeypatch):
    """An OS error while making the folder (e.g. a full disk) names ``--out`` too."""
    def refuse(path, exist_ok=False):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "makedirs", refuse)
    with pytest.raises(ValueError, match=r"--out '.*new' cannot be made: No space left on device"):
        common.out_dir(str(tmp_path / "new"), "edge", 0)


def test_default_out_folders_started_in_the_same_second_are_distinct(tmp_path, monkeypatch):
    """Two runs started in the same second never share (and overwrite) one default folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(common.time, "time", lambda: 1796377953.4)
    first = common.out_dir(None, "arena", 89)
    second = common.out_dir(None, "arena", 89)
    third = common.out_dir(None, "arena", 89)
    assert first == os.path.join("out", "arena__89__1796377953")
    assert second == first + "_2" and third == first + "_3"
    assert all(os.path.isdir(p) and not os.listdir(p) for p in (first, second, third))


def test_default_out_folder_that_cannot_be_made_names_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").write_text("a file where the default folder's parent goes")
    with pytest.raises(ValueError, match=r"the default --out 'out/edge__0__\d+' cannot be made: .*give --out"):
        common.out_dir(None, "edge", 0)
