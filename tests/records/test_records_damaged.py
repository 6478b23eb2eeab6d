"""Damaged record and deal files: one line naming the file, never a traceback; a JSON-lines
records file cut by a crash reads back every whole record and says where it ends."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import zlib

import pytest
from records_helpers import play_match

from twilight_env.records.dealsets import generate_deals, load_deals, save_deals
from twilight_env.records import game_records as records
from twilight_env.cli import main
from twilight_env.rules.engine import Config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAMAGES = ["truncated-gzip", "deep", "not-json", "folder", "missing"]


@pytest.fixture(scope="module")
def deals():
    """Deal records of one 4-player match (several deals)."""
    return play_match(Config(), 3, max_deals=12)[0]


def _damaged(tmp_path, name: str, damage: str, good: bytes) -> str:
    """A path named ``name`` holding ``good`` damaged by ``damage`` (gzip for ``.gz``)."""
    path = tmp_path / damage / name
    path.parent.mkdir(exist_ok=True)
    if damage == "folder":
        path.mkdir()
    elif damage == "missing":
        pass
    elif damage == "truncated-gzip":
        data = gzip.compress(good)
        path.write_bytes(data[:len(data) // 2])
    else:
        text = b"[" * 100_000 + b"]" * 100_000 + b"\n" if damage == "deep" else b'{"format": "twilight-deal", oops\n'
        path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    return str(path)


def _one_line(error: BaseException, path: str) -> str:
    msg = str(error)
    assert "\n" not in msg and path in msg, msg
    return msg


def _want(damage: str) -> str:
    return {"truncated-gzip": "truncated", "deep": "levels deep", "not-json": "not valid JSON",
            "folder": "is a folder", "missing": "does not exist"}[damage]


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("name", ["r.json", "r.json.gz", "r.jsonl", "r.jsonl.gz"])
def test_record_readers_refuse_damage_in_one_line(tmp_path, deals, damage, name):
    if damage == "truncated-gzip" and not name.endswith(".gz"):
        name += ".gz"
    many = ".jsonl" in name
    good = b"".join(json.dumps(d).encode() + b"\n" for d in deals) if many else json.dumps(deals[0]).encode()
    path = _damaged(tmp_path, name, damage, good)
    readers = [records.load_any] + ([lambda p: list(records.load_many(p))] if many else [records.load])
    for read in readers:
        with pytest.raises(records.RecordFileError) as e:
            read(path)
        assert isinstance(e.value, ValueError) and isinstance(e.value, records.RecordError)
        assert _want(damage) in _one_line(e.value, path)


@pytest.mark.parametrize("damage", DAMAGES)
def test_replay_command_refuses_damage_in_one_line(tmp_path, deals, damage, capsys):
    for name in ("r.json.gz", "r.jsonl.gz"):
        good = b"".join(json.dumps(d).encode() + b"\n" for d in deals)
        path = _damaged(tmp_path, name, damage, good if "jsonl" in name else json.dumps(deals[0]).encode())
        assert main(["replay", path]) == 2
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert "\n" not in err and err.startswith("twilight replay: error: ") and path in err, err
        assert _want(damage) in err and "Traceback" not in err
        assert captured.out == "" or damage == "truncated-gzip"


def test_replay_command_subprocess_has_no_traceback(tmp_path, deals):
    """The installed entry point, as a person runs it: deep JSON and a cut gzip."""
    for damage in ("deep", "truncated-gzip"):
        path = _damaged(tmp_path, "r.json.gz", damage, json.dumps(deals[0]).encode())
        p = subprocess.run([sys.executable, "-m", "twilight_env.cli", "replay", path], capture_output=True,
                           text=True, timeout=120, cwd=ROOT)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert p.stderr.count("\n") == 1 and p.stderr.startswith("twilight replay: error: record file")


@pytest.mark.parametrize("damage", DAMAGES)
def test_deal_files_refuse_damage_in_one_line(tmp_path, damage, capsys):
    good = tmp_path / "good.json"
    save_deals(str(good), generate_deals(3, 1), 1, 4)
    path = _damaged(tmp_path, "deals.json.gz" if damage == "truncated-gzip" else "deals.json", damage,
                    good.read_bytes())
    with pytest.raises(ValueError) as e:
        load_deals(path)
    assert _want(damage) in _one_line(e.value, path)
    rc = main(["arena", "random", "random", "--deals-file", path, "--workers", "1", "--quiet",
               "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "--deals-file" in err and path in err and _want(damage) in err
    assert not (tmp_path / "out").exists()


def test_readers_accept_a_byte_order_mark(tmp_path, deals, capsys):
    bom = "\ufeff".encode()
    one = tmp_path / "one.json"
    one.write_bytes(bom + json.dumps(deals[0]).encode())
    assert records.load(one) == deals[0]
    many = tmp_path / "many.jsonl"
    many.write_bytes(bom + b"".join(json.dumps(d).encode() + b"\n" for d in deals))
    assert list(records.load_many(many)) == deals
    assert main(["replay", str(one)]) == 0 and main(["replay", str(many), "--index", "2"]) == 0
    capsys.readouterr()
    good = tmp_path / "good.json"
    save_deals(str(good), generate_deals(2, 5), 5, 4)
    with_bom = tmp_path / "bom.json"
    with_bom.write_bytes(bom + good.read_bytes())
    assert load_deals(str(with_bom))[0] == generate_deals(2, 5)


# ---------------------------------------------------------------------------------
# a records file cut by a crash
# ---------------------------------------------------------------------------------

def _write_and_cut(tmp_path, deals, name: str, keep: float) -> tuple[str, bytes]:
    path = tmp_path / name
    with records.RecordWriter(path) as w:
        for d in deals:
            w.write(d)
    data = path.read_bytes()
    cut = tmp_path / ("cut-" + name)
    cut.write_bytes(data[:int(len(data) * keep)])
    return str(cut), data


@pytest.mark.parametrize("name", ["r.jsonl.gz", "r.jsonl"])
@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_cut_records_file_reads_back_every_whole_record(tmp_path, deals, name, keep):
    path, data = _write_and_cut(tmp_path, deals, name, keep)
    got = []
    with pytest.raises(records.TruncatedRecordsError) as e:
        for rec in records.load_many(path):
            got.append(rec)
    # every whole record before the cut, in order
    text = zlib.decompressobj(31).decompress(data[:int(len(data) * keep)]) if name.endswith(".gz") \
        else data[:int(len(data) * keep)]
    whole = text.count(b"\n")
    assert got == deals[:whole] and e.value.count == whole and whole < len(deals)
    msg = _one_line(e.value, path)
    assert f"ends after record {whole}: truncated" in msg
    assert ("gzip stream ends early" if name.endswith(".gz") else f"line {whole + 1} stops") in msg
    # load_any has no partial answer: it raises the same error
    with pytest.raises(records.TruncatedRecordsError, match=f"ends after record {whole}"):
        records.load_any(path)


def test_replay_prints_the_whole_records_of_a_cut_file_then_one_line(tmp_path, deals, capsys):
    path, data = _write_and_cut(tmp_path, deals, "r.jsonl", 0.8)
    whole = data[:int(len(data) * 0.8)].count(b"\n")
    assert main(["replay", path, "--all"]) == 2
    captured = capsys.readouterr()
    assert captured.out.count("=== Record ") == whole and captured.out.count("Deal score: ") >= whole
    err = captured.err.strip()
    assert err == f"twilight replay: error: {records.TruncatedRecordsError(path, whole, '').args[0]}".replace(
        "truncated ()", f"truncated (line {whole + 1} stops in the middle of a record)")
    # one record asked for: printed, then the same line
    assert main(["replay", path, "--index", "1"]) == 2
    captured = capsys.readouterr()
    assert "Deal score: " in captured.out and f"ends after record {whole}: truncated" in captured.err
    # a record past the cut: one line, nothing printed
    assert main(["replay", path, "--index", str(whole)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"twilight replay: error: --index {whole}: ")


def test_records_of_an_arena_killed_with_sigkill_read_back(tmp_path):
    """A real ``twilight arena --records`` killed with -9 mid-run: replay reads the whole
    records (and names the cut when the kill landed inside a block's write), without a
    traceback."""
    rec_dir = tmp_path / "rec"
    path = rec_dir / "arena.records.jsonl.gz"
    cmd = [sys.executable, "-m", "twilight_env.cli", "arena", "random", "random", "--deals", "100000",
           "--workers", "1", "--quiet", "--out", str(tmp_path / "out"), "--records", str(rec_dir)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists() and path.stat().st_size > 40_000:  # several compressed blocks written
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()
        assert path.exists() and path.stat().st_size > 40_000, "the arena wrote no records in time"
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    # the file holds whole blocks (gzip members), and at most a part of one more after them
    got, cut = [], None
    try:
        for rec in records.load_many(path):
            got.append(rec)
    except records.TruncatedRecordsError as e:
        cut = e
    assert len(got) >= 1 and all(r["format"] == records.FORMAT_DEAL for r in got)
    assert cut is None or cut.count == len(got)
    p = subprocess.run([sys.executable, "-m", "twilight_env.cli", "replay", str(path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert "Traceback" not in p.stderr and "Deal score: " in p.stdout
    if cut is None:
        assert p.returncode == 0, p.stderr
    else:
        assert p.returncode == 2 and p.stderr.strip() == f"twilight replay: error: {cut}"


@pytest.mark.parametrize("name", ["r.json.gz", "r.jsonl.gz"])
def test_a_gz_name_that_is_not_gzip_is_one_line(tmp_path, deals, name):
    path = tmp_path / name
    path.write_text(json.dumps(deals[0]) + "\n")
    with pytest.raises(records.RecordFileError, match="is not a valid gzip file") as e:
        records.load_any(path)
    _one_line(e.value, str(path))


def test_a_device_and_an_endless_line_are_refused_in_one_line(tmp_path, monkeypatch):
    """``/dev/zero`` (no end, no newline) is refused before reading; a line longer than any
    record stops the read at the limit instead of filling the memory."""
    from twilight_env.records import game_records as rec_mod
    for name in ("zero.jsonl", "zero.json"):
        link = tmp_path / name
        link.symlink_to("/dev/zero")
        with pytest.raises(ValueError, match="is not a regular file"):
            rec_mod.load_any(link)
    long_line = tmp_path / "long.jsonl"
    long_line.write_bytes(b"[" * 5000)
    monkeypatch.setattr(rec_mod, "MAX_LINE_BYTES", 1000)
    with pytest.raises(ValueError, match="has a line of more than 1,000 bytes"):
        list(rec_mod.load_many(long_line))
