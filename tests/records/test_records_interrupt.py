"""Records files survive an interruption anywhere in their writing: Ctrl-C landing inside
a block's compression or write, inside ``close``, or a real SIGINT sent to a writing
process at a random time. Every file reads back every whole record, and a file cut or
damaged after some records says so with the file, the record count, the line and the byte.

The in-process test interrupts the real :class:`RecordWriter` code: a trace function
raises ``KeyboardInterrupt`` at a chosen line of the writer's methods or of the ``gzip``
module while the records are written (a signal handler raises at the same places, between
two bytecode lines). The subprocess test sends real SIGINTs (``-m slow`` runs 200 of them:
``pytest -q -p no:cacheprovider -m slow tests/records/test_records_interrupt.py``).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import signal
import subprocess
import sys
import time
import zlib

import pytest
from records_helpers import play_match

from twilight_env.records import game_records as records
from twilight_env.rules.engine import Config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRIALS = 200


@pytest.fixture(scope="module")
def deals():
    """Deal records of two matches (4 and 3 players), 16 records or more."""
    out = play_match(Config(), 3, max_deals=10)[0] + play_match(Config(num_players=3), 4, max_deals=10)[0]
    assert len(out) >= 16
    return out


def _watched(code) -> bool:
    """A line of the writing machinery: the writer's methods or the gzip module."""
    name = os.path.basename(code.co_filename)
    return name == "gzip.py" or (name == "game_records.py" and code.co_name in
                                 ("write", "flush", "close", "__exit__", "__init__", "count"))


class _Interrupt:
    """A trace function that raises KeyboardInterrupt at the ``at``-th watched line (0: never)."""

    def __init__(self, at: int):
        self.at, self.seen, self.fired = at, 0, False

    def __call__(self, frame, event, arg):
        return self._line if _watched(frame.f_code) else None

    def _line(self, frame, event, arg):
        if event == "line":
            self.seen += 1
            if self.seen == self.at:
                self.fired = True
                raise KeyboardInterrupt
        return self._line


def _write(path: str, deals: list, at: int, block_bytes: int) -> tuple[int, str, _Interrupt]:
    """Write ``deals`` with a RecordWriter, interrupted at watched line ``at``; like ``arena``
    and ``edge``, a writer interrupted in ``write`` is closed by the caller's ``finally``.

    Returns:
        (records whose ``write`` returned, where the interrupt landed: "write", "close" or
        "none", the tracer).
    """
    tracer = _Interrupt(at)
    done, where = 0, "none"
    w = records.RecordWriter(path, block_bytes=block_bytes)
    sys.settrace(tracer)
    try:
        try:
            for d in deals:
                w.write(d)
                done += 1
        except KeyboardInterrupt:
            where = "write"
        if where == "none":
            try:
                w.close()
            except KeyboardInterrupt:
                where = "close"
    finally:
        sys.settrace(None)
    if where == "write":
        w.close()  # the run's `finally`, after the interrupt
    return done, where, tracer


def _read(path: str) -> tuple[list, BaseException | None]:
    got, error = [], None
    try:
        for rec in records.load_many(path):
            got.append(rec)
    except Exception as e:  # noqa: BLE001 - the test reports any error as a failure below
        error = e
    return got, error


@pytest.mark.parametrize("name, trials", [("r.jsonl.gz", TRIALS), ("r.jsonl", TRIALS // 4)])
def test_interrupts_anywhere_in_the_writer_leave_every_file_readable(tmp_path, deals, name, trials):
    deals = deals[:6]
    block = 2 * len(json.dumps(deals[0], separators=(",", ":")))  # a block every two or three records
    total = _write(str(tmp_path / ("full-" + name)), deals, 0, block)[2].seen
    assert total > 50  # the writing runs through many watched lines
    rng = random.Random(48)
    where_seen, unreadable = set(), []
    for trial in range(trials):
        path = str(tmp_path / f"{trial}-{name}")
        at = rng.randint(1, total)
        done, where, tracer = _write(path, deals, at, block)
        assert tracer.fired
        where_seen.add(where)
        got, error = _read(path)
        ok = got == deals[:len(got)]
        if where == "write":  # closed after the interrupt: every accepted record, no error
            ok = ok and error is None and len(got) >= done
        else:  # interrupted inside close (a second Ctrl-C): the whole blocks, then at most a cut
            ok = ok and (error is None or (isinstance(error, records.TruncatedRecordsError)
                                           and error.count == len(got)))
        if not ok:
            unreadable.append((trial, at, where, done, len(got), repr(error)))
    assert not unreadable, f"{len(unreadable)} of {trials} files unreadable: {unreadable[:5]}"
    assert where_seen == {"write", "close"}


def test_a_writer_interrupted_inside_a_block_write_rewrites_the_block(tmp_path, deals, monkeypatch):
    """``os.pwrite`` interrupted after writing half a block: the next flush cuts the half
    block off and writes it again, so no record is lost or doubled."""
    path = str(tmp_path / "r.jsonl.gz")
    real = os.pwrite
    calls = []

    def half_then_interrupt(fd, data, offset):
        calls.append(offset)
        if len(calls) == 2:  # the second block: half of it reaches the disk, then Ctrl-C
            real(fd, bytes(data[:len(data) // 2]), offset)
            raise KeyboardInterrupt
        return real(fd, data, offset)

    monkeypatch.setattr(records.os, "pwrite", half_then_interrupt)
    w = records.RecordWriter(path, block_bytes=1)  # one block per record
    with pytest.raises(KeyboardInterrupt):
        for d in deals[:4]:
            w.write(d)
    w.close()
    monkeypatch.undo()
    assert list(records.load_many(path)) == deals[:2]
    assert calls[1] == calls[2]  # the interrupted block was written again at the same place


def test_a_full_disk_keeps_the_whole_blocks_and_names_the_file(tmp_path, deals, monkeypatch):
    import errno

    path = str(tmp_path / "r.jsonl.gz")
    real = os.pwrite
    w = records.RecordWriter(path, block_bytes=1)
    w.write(deals[0])
    w.write(deals[1])

    def full(fd, data, offset):
        real(fd, bytes(data[:10]), offset)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(records.os, "pwrite", full)
    with pytest.raises(OSError) as e:
        w.write(deals[2])
    assert e.value.errno == errno.ENOSPC and str(e.value) == \
        f"cannot write {path!r}: no space left on the device (errno 28)"
    with pytest.raises(OSError, match="no space left"):
        w.close()
    assert list(records.load_many(path)) == deals[:2]  # no half block at the end


def test_a_damaged_member_reads_back_the_records_before_it(tmp_path, deals):
    """A gzip member whose check fails (as an interrupted writer of the past left it) or
    whose data does not decompress: every record before it, then one line naming the
    file, the record count, the line and the byte offset."""
    lines = [json.dumps(d, separators=(",", ":")).encode() + b"\n" for d in deals[:6]]
    first, second = gzip.compress(b"".join(lines[:4])), bytearray(gzip.compress(b"".join(lines[4:])))
    offset = len(b"".join(lines[:4]))
    bad_crc = bytes(second[:-8]) + bytes(8)  # a wrong CRC and length trailer
    bad_data = bytes(second[:10]) + b"\xff" * 20 + bytes(second[30:])
    for kind, member in (("crc", bad_crc), ("data", bad_data)):
        path = tmp_path / f"{kind}.jsonl.gz"
        path.write_bytes(first + member)
        got = []
        with pytest.raises(records.DamagedRecordsError) as e:
            for rec in records.load_many(path):
                got.append(rec)
        assert isinstance(e.value, records.PartialRecordsError) and isinstance(e.value, records.RecordFileError)
        assert e.value.count == len(got) and got == deals[:len(got)]
        if kind == "data":  # the damage is in the second member's data: the first member's records
            assert len(got) == 4 and e.value.line == 5 and e.value.offset == offset
        else:  # the data is whole, its check is not
            assert len(got) == 6
        msg = str(e.value)
        assert "\n" not in msg and repr(str(path)) in msg and f"damaged after record {len(got)}" in msg
        assert f"from line {e.value.line}, byte {e.value.offset:,}" in msg


def test_replay_prints_the_records_before_damage_then_one_line(tmp_path, deals, capsys):
    from twilight_env.cli import main

    lines = [json.dumps(d, separators=(",", ":")).encode() + b"\n" for d in deals[:3]]
    member = gzip.compress(b"".join(lines))
    path = tmp_path / "r.jsonl.gz"
    path.write_bytes(member + member[:-8] + bytes(8))
    assert main(["replay", str(path), "--all"]) == 2
    captured = capsys.readouterr()
    assert captured.out.count("=== Record ") == 6
    assert captured.err.startswith(f"twilight replay: error: {str(path)!r} is damaged after record 6 ")


def test_blocks_are_gzip_members_that_every_gzip_reader_reads(tmp_path, deals):
    path = tmp_path / "r.jsonl.gz"
    with records.RecordWriter(path, block_bytes=1) as w:
        for d in deals[:5]:
            w.write(d)
    data = path.read_bytes()
    assert data.count(b"\x1f\x8b\x08") >= 5  # one member per record here
    text = gzip.decompress(data)
    assert [json.loads(x) for x in text.splitlines()] == deals[:5]
    assert zlib.decompressobj(31).decompress(data).count(b"\n") == 1  # a single-member reader sees the first


_CHILD = r"""
import json, sys
from twilight_env.records.game_records import RecordWriter
deals = [json.loads(x) for x in open(sys.argv[2])]
w = RecordWriter(sys.argv[1], block_bytes=int(sys.argv[3]))
try:
    print("ready", flush=True)
    while True:
        for d in deals:
            w.write(d)
finally:
    w.close()
"""


def _sigint_runs(tmp_path, deals, runs: int, seed: int) -> list:
    """Start a writing process ``runs`` times, SIGINT it after a random time; the files'
    faults (an empty list when every file reads back)."""
    src = tmp_path / "deals.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in deals))
    rng = random.Random(seed)
    faults = []
    for k in range(runs):
        path = tmp_path / f"{k}.jsonl.gz"
        block = rng.choice([1, 5000, 20000])
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), str(src), str(block)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        time.sleep(rng.uniform(0.0, 0.3))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert "KeyboardInterrupt" in err, err
        got, error = _read(str(path))
        n = len(deals)
        if error is not None or any(g != deals[i % n] for i, g in enumerate(got)):
            faults.append((k, block, len(got), repr(error)))
    return faults


def test_a_writing_process_stopped_by_sigint_leaves_a_readable_file(tmp_path, deals):
    assert _sigint_runs(tmp_path, deals, 3, 1) == []


@pytest.mark.slow
def test_200_writing_processes_stopped_by_sigint_leave_readable_files(tmp_path, deals):
    faults = _sigint_runs(tmp_path, deals, TRIALS, 2)
    assert not faults, f"{len(faults)} of {TRIALS} files unreadable: {faults[:5]}"
