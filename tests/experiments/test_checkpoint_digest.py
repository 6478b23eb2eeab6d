"""Progress files of arena, edge and ladder runs carry a content digest: an edit (even to
another in-range value) or a flipped bit is refused with the file named; files written
before they carried one still resume, with a one-line notice; settings are cross-checked
(the specs and seed the run was started with, the seed its deals were drawn with, the
deal file its deals came from)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import twilight_env.experiments.arena as arena
import twilight_env.experiments.common as common
import twilight_env.experiments.edge.solo_edge as edge
import twilight_env.experiments.ladder as ladder
from twilight_env.cli import main
from twilight_env.records.dealsets import generate_deals, save_deals

NAME = arena.ArenaCheckpoint.NAME


def _interrupt_at(monkeypatch, module, name, at):
    real = getattr(module, name)
    calls = []

    def worker(task):
        calls.append(task)
        if len(calls) == at:
            raise KeyboardInterrupt("stop here")
        return real(task)

    monkeypatch.setattr(module, name, worker)


@pytest.fixture(scope="module")
def arena_run(tmp_path_factory):
    """An interrupted arena run of 3 specs on 4 deals read from a deal file (3 pairings)."""
    base = tmp_path_factory.mktemp("arena")
    deal_file = base / "deals.json"
    save_deals(str(deal_file), generate_deals(4, 11), 11, 4)
    folder = base / "run"
    with pytest.MonkeyPatch.context() as mp:
        _interrupt_at(mp, arena, "_play_task", 6)
        assert main(["arena", "random", "heuristic", "pimc:worlds=1", "--deals-file", str(deal_file), "--workers", "1",
                     "--quiet", "--out", str(folder), "--no-lockstep"]) in (130, 2)
    doc = json.loads((folder / NAME).read_text())
    assert doc["done"] and doc["settings"]["deals_source"]["source"] == "file"
    return doc, deal_file


@pytest.fixture(scope="module")
def edge_doc(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edge") / "run"
    with pytest.MonkeyPatch.context() as mp:
        _interrupt_at(mp, edge, "_play_edge_deal", 3)
        with pytest.raises(KeyboardInterrupt):
            edge.run_study(["random"], deals=4, seed=2, out=str(folder), boot=5, matches=5, workers=1,
                           progress=False, verbose=False)
    return json.loads((folder / edge.CHECKPOINT).read_text())


def _write(tmp_path, doc, name=NAME, sign=False):
    folder = tmp_path / "run"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps(common.with_digest(doc) if sign else doc))
    return folder


def test_checkpoints_carry_the_digest_of_their_content(arena_run, edge_doc):
    for doc in (arena_run[0], edge_doc):
        assert doc[common.DIGEST_KEY] == common.content_digest(doc)


def test_an_in_range_edit_of_a_stored_point_is_refused(tmp_path, arena_run):
    doc = json.loads(json.dumps(arena_run[0]))
    k = next(iter(doc["done"]))
    d = next(iter(doc["done"][k]))
    r = doc["done"][k][d]
    r["side_scores"][0] = r["side_scores"][0][::-1]  # still a pair one deal can give, still A's difference
    r["points"][0] = -r["points"][0]
    if r["points"][0] == 0:
        r["side_scores"][0], r["points"][0] = [0, 0], 0
        r["side_scores"][1], r["points"][1] = [12, 0], (12 if arena.a_side(1) == 0 else -12)
    folder = _write(tmp_path, doc)
    with pytest.raises(ValueError, match="does not match its sha256 digest") as e:
        arena.ArenaCheckpoint.load(str(folder))
    assert str(folder / NAME) in str(e.value) and "\n" not in str(e.value)


def test_edited_arena_specs_are_refused(tmp_path, capsys, arena_run):
    doc = json.loads(json.dumps(arena_run[0]))
    doc["settings"]["specs"] = ["heuristic", "random", "pimc:worlds=1"]  # relabels the pairings' results
    folder = _write(tmp_path, doc)
    assert main(["arena", "--resume", str(folder), "--quiet", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "sha256 digest" in err and NAME in err and err.count("\n") == 1
    # the same edit with a digest made to match: the saved arguments give it away
    _write(tmp_path, doc, sign=True)
    with pytest.raises(ValueError, match=r"settings 'specs' is \['heuristic', 'random', 'pimc:worlds=1'\], but the "
                                         r"run was started with \['random', 'heuristic', 'pimc:worlds=1'\]"):
        arena.ArenaCheckpoint.load(str(folder))


def test_edited_seeds_are_refused(tmp_path, arena_run, edge_doc):
    doc = json.loads(json.dumps(edge_doc))
    doc["settings"]["seed"] = 3
    folder = _write(tmp_path, doc, edge.CHECKPOINT)
    with pytest.raises(ValueError, match="sha256 digest"):
        edge.Checkpoint.load(str(folder))
    _write(tmp_path, doc, edge.CHECKPOINT, sign=True)
    with pytest.raises(ValueError, match="settings 'seed' is 3, but its deals were drawn with seed 2"):
        edge.Checkpoint.load(str(folder))
    doc = json.loads(json.dumps(arena_run[0]))
    doc["settings"]["arguments"]["seed"] = 5  # as if started with --seed 5
    (tmp_path / "a").mkdir()
    _write(tmp_path / "a", doc, sign=True)
    with pytest.raises(ValueError, match="started with --seed 5"):
        arena.ArenaCheckpoint.load(str(tmp_path / "a" / "run"))


def test_deals_from_a_file_are_checked(tmp_path, arena_run):
    doc, deal_file = arena_run
    doc = json.loads(json.dumps(doc))
    doc["deals"][0], doc["deals"][1] = doc["deals"][1], doc["deals"][0]
    folder = _write(tmp_path, doc)
    with pytest.raises(ValueError, match="sha256 digest"):
        arena.ArenaCheckpoint.load(str(folder))
    doc.pop(common.DIGEST_KEY)  # as written before files kept a digest: the file is the check
    _write(tmp_path, doc)
    with pytest.raises(ValueError, match=f"not the first 4 deals of '{deal_file}'"):
        arena.ArenaCheckpoint.load(str(folder))


def test_a_file_without_a_digest_resumes_with_a_notice(tmp_path, capsys, arena_run, edge_doc):
    doc = {k: v for k, v in edge_doc.items() if k != common.DIGEST_KEY}
    folder = _write(tmp_path, doc, edge.CHECKPOINT)
    capsys.readouterr()
    edge.run_study(resume=str(folder), workers=1, progress=False, verbose=False)
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "carries no content digest" in line]
    assert len(notes) == 1 and edge.CHECKPOINT in notes[0]
    assert (folder / "edge.json").is_file()
    # a deal-file run without a digest: its deals match the file, so it loads
    doc = {k: v for k, v in arena_run[0].items() if k != common.DIGEST_KEY}
    (tmp_path / "b").mkdir()
    ck = arena.ArenaCheckpoint.load(str(_write(tmp_path / "b", doc)))
    assert ck.deals == doc["deals"]


def test_a_malformed_digest_is_refused(tmp_path, edge_doc):
    folder = _write(tmp_path, dict(edge_doc, sha256="not hex"), edge.CHECKPOINT)
    with pytest.raises(ValueError, match="64 lowercase hex digits"):
        edge.Checkpoint.load(str(folder))


def test_random_bit_flips_are_all_refused(tmp_path, edge_doc):
    good = json.dumps(edge_doc).encode()
    rng = np.random.default_rng(48)
    folder = tmp_path / "run"
    folder.mkdir()
    path = folder / edge.CHECKPOINT
    accepted = []
    for _ in range(60):
        i, bit = int(rng.integers(len(good))), int(rng.integers(8))
        data = bytearray(good)
        data[i] ^= 1 << bit
        path.write_bytes(bytes(data))
        try:
            edge.Checkpoint.load(str(folder))
        except ValueError as e:
            assert str(path) in str(e)
        else:
            accepted.append((i, bit))
    assert accepted == []


def test_ladder_progress_file_is_digested(tmp_path, monkeypatch):
    folder = tmp_path / "lad"
    real = ladder.play_step
    calls = []

    def step(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(ladder, "play_step", step)
    with pytest.raises(KeyboardInterrupt):
        ladder.run_ladder(["random", "heuristic", "pimc:worlds=1"], deals=2, seed=1, out=str(folder), workers=1,
                          progress=False, verbose=False)
    path = folder / ladder.STEPS_FILE
    doc = json.loads(path.read_text())
    assert doc[common.DIGEST_KEY] == common.content_digest(doc)
    doc["settings"]["seed"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="sha256 digest"):
        ladder.run_ladder(resume=str(folder), workers=1, progress=False, verbose=False)
