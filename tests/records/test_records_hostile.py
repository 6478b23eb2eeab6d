"""Hostile record files: agent specs longer than any real one (refused when written and
when read), terminal escape sequences in agent specs (printed escaped by ``twilight
replay``) and gzip bombs (each file kind refused as soon as its size limit is passed)."""

from __future__ import annotations

import copy
import gzip
import json
import os
import time
import tracemalloc
import zlib

import pytest
from records_helpers import one_deal

from twilight_env.cli import main
from twilight_env.records import game_records as records
from twilight_env.records import replay_log
from twilight_env.records.dealsets import MAX_DEAL_FILE_BYTES, load_deals
from twilight_env.rules.engine import Config, State


@pytest.fixture(scope="module")
def rec():
    return one_deal(Config(), 11)[0]


# ---------------------------------------------------------------------------------
# agent specs: at most 200 characters
# ---------------------------------------------------------------------------------

def test_an_agent_spec_of_200_characters_is_kept_and_201_are_refused_when_writing(tmp_path, rec):
    ok = copy.deepcopy(rec)
    ok["agents"][1] = "p" * records.MAX_AGENT_CHARS
    records.dump(ok, tmp_path / "ok.json")
    assert records.load(tmp_path / "ok.json")["agents"][1] == ok["agents"][1]
    long = copy.deepcopy(rec)
    long["agents"][2] = "x" * 5000
    for write in (lambda: records.dump(long, tmp_path / "long.json"),
                  lambda: records.dump_many([rec, long], tmp_path / "long.jsonl.gz")):
        with pytest.raises(records.RecordError) as e:
            write()
        msg = str(e.value)
        assert e.value.field == "agents[2]" and "5,000 characters long" in msg and "at most 200" in msg
        assert len(msg) < 300  # the name itself is not repeated
    assert not (tmp_path / "long.json").exists()
    state = State.from_deal(rec["deal"], leader=rec["leader"])
    with pytest.raises(ValueError, match=r"agents\[0\] is 201 characters long"):
        records.deal_record(state, [a["action"] for a in rec["actions"]], agents=["a" * 201, None, None, None])
    with pytest.raises(ValueError, match=r"agents\[1\] is 300 characters long"):
        records.match_record([rec], config=Config(), agents=[None, "m" * 300, None, None])


@pytest.mark.parametrize("name", ["long.json", "long.json.gz", "long.jsonl", "long.jsonl.gz"])
def test_a_file_with_a_longer_agent_spec_is_refused_when_read(tmp_path, rec, name):
    long = copy.deepcopy(rec)
    long["agents"][3] = "y" * 100_000
    text = (json.dumps(long) + "\n").encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    with pytest.raises(records.RecordFileError) as e:
        records.load_any(path)
    msg = str(e.value)
    assert str(path) in msg and "agents[3] is 100,000 characters long" in msg and len(msg) < 400, msg
    assert main(["replay", str(path)]) == 2


def test_the_json_schema_caps_agent_specs_too(rec):
    jsonschema = pytest.importorskip("jsonschema")
    with open(records.SCHEMA_FILE) as f:
        v = jsonschema.Draft202012Validator(json.load(f))
    long = copy.deepcopy(rec)
    long["agents"][0] = "z" * 201
    assert v.is_valid(rec) and not v.is_valid(long)


# ---------------------------------------------------------------------------------
# terminal escape sequences in agent specs
# ---------------------------------------------------------------------------------

HOSTILE = ["\x1b]0;owned\x07",            # set the window title
           "\x1b[2J\x1b[H",               # clear the screen
           "\x1b]52;c;ZWNobyBoaQ==\x07",  # OSC 52: write the clipboard
           "\u202eevil\u009b31m"]         # a bidirectional override and a C1 control sequence introducer


def test_replay_prints_agent_specs_escaped(tmp_path, rec, capsys):
    hostile = copy.deepcopy(rec)
    hostile["agents"] = list(HOSTILE)
    for name in ("h.json", "h.jsonl"):
        path = tmp_path / name
        path.write_text(json.dumps(hostile) + "\n")
        assert main(["replay", str(path)]) == 0
        out = capsys.readouterr().out
        assert not any(c in out for c in "\x1b\x07\u202e\u009b"), repr(out[:300])
        assert r"0: \x1b]0;owned\x07" in out and r"\x1b]52;c;ZWNobyBoaQ==\x07" in out
        assert r"3: \u202eevil\x9b31m" in out
    match = records.match_record([rec], config=Config(), agents=list(HOSTILE))
    text = replay_log.format_record(match)
    assert "\x1b" not in text and r"seat 1: \x1b[2J\x1b[H" in text


def test_printable_keeps_ordinary_specs_and_escapes_the_rest():
    assert replay_log.printable("pimc:worlds=32") == "pimc:worlds=32"
    assert replay_log.printable("policy:weights=é/ü.npz") == "policy:weights=é/ü.npz"
    assert replay_log.printable(None) == "None"
    assert replay_log.printable("a\\x1b\tb\nc\U000e0001") == r"a\\x1b\x09b\x0ac\U000e0001"


# ---------------------------------------------------------------------------------
# gzip bombs: a size limit for each file kind, reading stops as soon as it is passed
# ---------------------------------------------------------------------------------

def _bomb(path, size: int, unit: bytes = b" ") -> int:
    """A gzip file that decompresses to ``size`` bytes of ``unit`` (a few KB per MB)."""
    chunk = unit * (1 << 20 // len(unit))
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for _ in range(size // len(chunk)):
            f.write(c.compress(chunk))
        f.write(c.compress(unit * ((size % len(chunk)) // len(unit))))
        f.write(c.flush())
    return os.path.getsize(path)


def _peak(fn) -> tuple[BaseException, float, int]:
    """Run ``fn`` (which must raise); the error, seconds and peak traced memory (bytes)."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - returned to the test
        error = e
    else:
        raise AssertionError("no error")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return error, time.perf_counter() - t0, peak


def test_a_single_record_bomb_is_refused_at_the_record_limit(tmp_path, capsys):
    path = tmp_path / "bomb.json.gz"
    small = _bomb(path, records.MAX_RECORD_BYTES + (4 << 20))
    assert small < 100_000
    error, seconds, peak = _peak(lambda: records.load(path))
    assert isinstance(error, records.RecordFileError)
    assert f"holds more than {records.MAX_RECORD_BYTES:,} bytes uncompressed" in str(error)
    assert peak < 3 * records.MAX_RECORD_BYTES, peak  # not the whole file
    assert main(["replay", str(path)]) == 2
    assert "holds more than 16,777,216 bytes uncompressed" in capsys.readouterr().err


def test_a_records_file_bomb_of_blank_lines_stops_early(tmp_path, rec):
    path = tmp_path / "bomb.jsonl.gz"
    _bomb(path, 64 << 20, b"\n")
    t0 = time.perf_counter()
    with pytest.raises(records.RecordFileError, match="holds more than 1,000 blank lines"):
        list(records.load_many(path))
    assert time.perf_counter() - t0 < 2.0  # 64 MiB of newlines would take about a minute line by line
    # a few blank lines between records are read as before
    path2 = tmp_path / "blanks.jsonl"
    path2.write_text("\n\n" + json.dumps(rec) + "\n\n" + json.dumps(rec) + "\n")
    assert len(list(records.load_many(path2))) == 2


def test_a_records_file_line_bomb_and_the_file_limit(tmp_path, monkeypatch, rec):
    path = tmp_path / "line.jsonl.gz"
    _bomb(path, records.MAX_LINE_BYTES + (1 << 20))
    error, _, peak = _peak(lambda: list(records.load_many(path)))
    assert "has a line of more than 16,777,216 bytes" in str(error) and peak < 3 * records.MAX_LINE_BYTES
    # the whole-file limit: records read up to it, then one line naming the file
    line = len(json.dumps(rec, separators=(",", ":"))) + 1
    monkeypatch.setattr(records, "MAX_RECORDS_FILE_BYTES", 3 * line + 10)
    many = tmp_path / "many.jsonl.gz"
    records.dump_many([rec] * 5, many)
    got = []
    with pytest.raises(records.RecordFileError, match=f"holds more than {3 * line + 10:,} bytes uncompressed"):
        for r in records.load_many(many):
            got.append(r)
    assert len(got) == 3


def test_a_deal_file_bomb_is_refused_at_the_deal_file_limit(tmp_path, monkeypatch):
    from twilight_env.records import dealsets

    assert MAX_DEAL_FILE_BYTES == 256 << 20  # over a million deals; the test uses a smaller limit
    monkeypatch.setattr(dealsets, "MAX_DEAL_FILE_BYTES", 8 << 20)
    path = tmp_path / "deals.json.gz"
    _bomb(path, 9 << 20)
    error, seconds, peak = _peak(lambda: load_deals(str(path)))
    assert f"deal file {str(path)!r} holds more than {8 << 20:,} bytes uncompressed" in str(error)
    assert peak < 4 * (8 << 20)  # the bytes read up to the limit, not the whole file
