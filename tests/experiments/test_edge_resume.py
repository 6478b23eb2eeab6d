"""``twilight edge`` checkpoints: an interrupted run resumes to the figures of an
uninterrupted one, playing only the missing deals; bad checkpoints and conflicting
options give clear errors."""

import json
import os

import pytest

import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.cli import main
from twilight_env.experiments.common import with_digest
from twilight_env.records.dealsets import generate_deals

SMALL = dict(boot=20, matches=50, workers=1, progress=False, verbose=False)


def _points(folder):
    doc = json.loads((folder / "edge.json").read_text())
    return [(r["label"], r["moon_points"], r["sun_points"], r["figures"]) for r in doc["results"]]


def _counting(monkeypatch, fail_at=None, exc=KeyboardInterrupt):
    """Wrap the deal worker: count calls, raise ``exc`` on call number ``fail_at``."""
    real = edge._play_edge_deal
    calls = []

    def worker(task):
        calls.append(task[0])
        if fail_at is not None and len(calls) == fail_at:
            raise exc("stop here")
        return real(task)

    monkeypatch.setattr(edge, "_play_edge_deal", worker)
    return calls


@pytest.mark.parametrize("exc,every", [(KeyboardInterrupt, 1000.0), (RuntimeError, 0.0)])
def test_interrupted_edge_resumes_to_the_uninterrupted_figures(tmp_path, monkeypatch, exc, every):
    """Ctrl-C writes the checkpoint at once; after a crash (no final write) the periodic
    writes are what is left. Either way the resumed run's figures are the same."""
    a, b = tmp_path / "a", tmp_path / "b"
    edge.run_study(["random", "heuristic"], deals=6, seed=3, out=str(a), **SMALL)
    monkeypatch.setattr(edge, "CHECKPOINT_EVERY_S", every)
    _counting(monkeypatch, fail_at=8, exc=exc)  # config 1 done (6 deals), config 2 has 1
    with pytest.raises(exc):
        edge.run_study(["random", "heuristic"], deals=6, seed=3, out=str(b), **SMALL)
    assert not (b / "edge.json").exists()
    saved = edge.Checkpoint.load(str(b))
    assert sum(len(v) for v in saved.done.values()) == 7
    monkeypatch.setattr(edge, "CHECKPOINT_EVERY_S", 20.0)
    calls = _counting(monkeypatch)
    edge.run_study(resume=str(b), workers=1, progress=False, verbose=False)
    assert len(calls) == 12 - 7  # only the missing deals were played
    assert _points(b) == _points(a)
    assert json.loads((b / "edge.json").read_text())["resumed"] is True
    assert not (b / edge.CHECKPOINT).exists()  # a finished run removes its checkpoint
    assert not [f for f in os.listdir(b) if ".tmp" in f]


def test_resume_errors_are_clear(tmp_path, capsys):
    SMALL = dict(workers=1, progress=False, verbose=False)
    folder = tmp_path / "run"
    folder.mkdir()
    with pytest.raises(ValueError, match="no edge checkpoint"):
        edge.run_study(resume=str(folder), **SMALL)
    path = folder / edge.CHECKPOINT
    path.write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON.*; restore it from a copy, or start a new run"):
        edge.run_study(resume=str(folder), **SMALL)
    path.write_text(json.dumps({"kind": "something else"}))
    with pytest.raises(ValueError, match="not a twilight edge checkpoint"):
        edge.run_study(resume=str(folder), **SMALL)
    path.write_text(json.dumps({"kind": edge.CHECKPOINT_KIND, "version": 1, "settings": {}}))
    with pytest.raises(ValueError, match="malformed"):
        edge.run_study(resume=str(folder), **SMALL)
    with pytest.raises(ValueError, match="keeps the settings.*--seed"):
        edge.run_study(seed=4, resume=str(folder), **SMALL)
    assert main(["edge", "--resume", str(folder), "--seed", "5", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "Traceback" not in err


def test_a_finished_run_grows_to_the_figures_of_a_longer_run(tmp_path, monkeypatch, capsys):
    """``--resume FOLDER --deals N`` after a finished run plays only the new deals and ends
    with the figures (bootstrap included) of one run of N deals; nothing is lost."""
    short, long_ = tmp_path / "short", tmp_path / "long"
    edge.run_study(["random", "heuristic"], deals=4, seed=5, out=str(short), **SMALL)
    edge.run_study(["random", "heuristic"], deals=7, seed=5, out=str(long_), **SMALL)
    before = json.loads((short / "edge.json").read_text())
    calls = _counting(monkeypatch)
    assert main(["edge", "--resume", str(short), "--deals", "7", "--quiet", "--workers", "1"]) == 0
    assert len(calls) == 2 * 3  # two configurations, three new deals each
    assert _points(short) == _points(long_)
    doc = json.loads((short / "edge.json").read_text())
    assert doc["deals"] == 7 and doc["run_seconds"] >= before["run_seconds"]
    assert json.loads((short / "edge.previous.json").read_text()) == before
    assert not (short / edge.CHECKPOINT).exists()
    capsys.readouterr()
    # an interrupted run grows too
    part, ref = tmp_path / "part", tmp_path / "ref"
    edge.run_study(["heuristic"], deals=8, seed=6, out=str(ref), **SMALL)
    _counting(monkeypatch, fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        edge.run_study(["heuristic"], deals=5, seed=6, out=str(part), **SMALL)
    calls = _counting(monkeypatch)
    edge.grow_run(str(part), 8)
    edge.run_study(resume=str(part), workers=1, progress=False, verbose=False)
    assert len(calls) == 8 - 2
    assert _points(part) == _points(ref)


def test_growing_errors_are_clear(tmp_path, capsys):
    run = tmp_path / "run"
    edge.run_study(["random"], deals=4, seed=5, out=str(run), **SMALL)
    with pytest.raises(ValueError, match="holds 4 deals.*more than 4"):
        edge.grow_run(str(run), 4)
    with pytest.raises(ValueError, match="nothing to grow"):
        edge.grow_run(str(tmp_path), 9)
    deals = tmp_path / "deals.json"
    edge.run_study(["random"], deals=3, seed=5, out=str(tmp_path / "d"), save_deals=str(deals), **SMALL)
    edge.run_study(["random"], deals_file=str(deals), out=str(tmp_path / "f"), **SMALL)
    with pytest.raises(ValueError, match="deals from a file"):
        edge.grow_run(str(tmp_path / "f"), 9)
    assert main(["edge", "--resume", str(run), "--deals", "3", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "more than 4" in err and "Traceback" not in err
    assert (run / "edge.json").is_file()  # a refused grow leaves the run as it was


def test_malformed_checkpoints_are_refused_before_any_play(tmp_path, monkeypatch):
    """Hand-edited checkpoints: every kind of damage is a ValueError naming it, raised
    when the checkpoint is read (not later from a worker), never a traceback."""
    good = tmp_path / "good"
    _counting(monkeypatch, fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        edge.run_study(["random"], deals=4, seed=2, out=str(good), **SMALL)
    doc = json.loads((good / edge.CHECKPOINT).read_text())
    key = next(iter(doc["done"]))
    assert doc["deals"] is None and doc["num_deals"] == 4  # drawn deals: the seed gives them

    def listed(d):  # the form that stores the deals (files written before null; still read)
        d["deals"] = generate_deals(4, 2)
        return d

    def damaged(name, change):
        d = json.loads(json.dumps(doc))
        change(d)
        folder = tmp_path / name
        folder.mkdir()
        (folder / edge.CHECKPOINT).write_text(json.dumps(with_digest(d)))  # consistent edits: field checks
        return str(folder)

    cases = {
        "done-list": (lambda d: d.update(done=[1, 2]), "'done' is not an object"),
        "done-entry": (lambda d: d["done"].update({key: [1, 2]}), "are not an object"),
        "no-source": (lambda d: d["settings"].pop("deals_source"), "'deals_source'"),
        "bad-seed": (lambda d: d["settings"].update(seed="x"), "'seed' must be an integer >= 0"),
        "bad-deal": (lambda d: listed(d)["deals"].__setitem__(3, "abc"), "deal 3 is not valid"),
        "bad-card": (lambda d: listed(d)["deals"][3][0].__setitem__(0, "XX9"), "deal 3 is not valid"),
        "edited-deal": (lambda d: listed(d)["deals"].__setitem__(3, generate_deals(9, 7)[8]), "not the first 4"),
        "bad-result": (lambda d: d["done"][key].update({"0": [[1, 2], [3]]}), "malformed result for deal 0"),
        "other-spec": (lambda d: d["settings"].update(configs=[["heuristic", "heuristic"]]),
                       "settings do not list"),
    }
    calls = _counting(monkeypatch)
    for name, (change, message) in cases.items():
        with pytest.raises(ValueError, match=message):
            edge.run_study(resume=damaged(name, change), workers=1, progress=False, verbose=False)
    assert calls == []  # nothing was played
    edge.run_study(resume=str(good), workers=1, progress=False, verbose=False)
    with pytest.raises(ValueError, match="already finished"):
        edge.run_study(resume=str(good), workers=1, progress=False, verbose=False)


def test_checkpoint_is_written_while_a_run_goes(tmp_path, monkeypatch):
    """The checkpoint is written before the first deal (the folder is resumable from the
    start) and, with the interval at 0, every finished deal is on disk before the next starts."""
    monkeypatch.setattr(edge, "CHECKPOINT_EVERY_S", 0.0)
    seen = []
    real = edge._play_edge_deal

    def worker(task):
        path = tmp_path / "c" / edge.CHECKPOINT
        if path.exists():
            seen.append(sum(len(v) for v in json.loads(path.read_text())["done"].values()))
        return real(task)

    monkeypatch.setattr(edge, "_play_edge_deal", worker)
    edge.run_study(["random"], deals=4, seed=1, out=str(tmp_path / "c"), **SMALL)
    assert seen == [0, 1, 2, 3]


def test_drawn_deals_are_stored_as_their_seed_and_both_forms_resume_alike(tmp_path, monkeypatch):
    """A run on deals drawn from a seed stores ``"deals": null`` (the seed and ``num_deals``
    give them back); a file holding the list (as files written before did) resumes to the
    same figures; deals from a file stay in the checkpoint, and null is refused there."""
    _counting(monkeypatch, fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        edge.run_study(["random"], deals=6, seed=4, out=str(tmp_path / "drawn"), **SMALL)
    doc = json.loads((tmp_path / "drawn" / edge.CHECKPOINT).read_text())
    assert doc["deals"] is None and doc["num_deals"] == 6
    old = json.loads(json.dumps(doc))
    old["deals"] = generate_deals(6, doc["settings"]["deals_source"]["seed"])
    old.pop("sha256")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / edge.CHECKPOINT).write_text(json.dumps(with_digest(old)))
    _counting(monkeypatch)
    a = edge.load_result(edge.run_study(resume=str(tmp_path / "drawn"), workers=1, progress=False, verbose=False))
    b = edge.load_result(edge.run_study(resume=str(tmp_path / "old"), workers=1, progress=False, verbose=False))
    assert a["results"][0]["figures"] == b["results"][0]["figures"] and a["deals"] == b["deals"] == 6

    deals = tmp_path / "deals.json"
    edge.run_study(["random"], deals=3, seed=5, out=str(tmp_path / "d"), save_deals=str(deals), **SMALL)
    _counting(monkeypatch, fail_at=2)
    with pytest.raises(KeyboardInterrupt):
        edge.run_study(["random"], deals_file=str(deals), out=str(tmp_path / "f"), **SMALL)
    doc = json.loads((tmp_path / "f" / edge.CHECKPOINT).read_text())
    assert len(doc["deals"]) == 3
    doc["deals"] = None
    doc.pop("sha256")
    (tmp_path / "f" / edge.CHECKPOINT).write_text(json.dumps(with_digest(doc)))
    with pytest.raises(ValueError, match="deals from a file are stored in the file"):
        edge.run_study(resume=str(tmp_path / "f"), workers=1, progress=False, verbose=False)
