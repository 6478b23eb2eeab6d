"""Result files are written whole or not at all, and a full disk is one line naming the file.

A full disk is simulated by opening files for writing through a wrapper whose writes raise
``OSError(ENOSPC)`` once a few bytes have gone through (as a real full disk does part of
the way through a file): the run ends with ``twilight CMD: error: cannot write 'FILE': no
space left on the device (errno 28)``, no ``*.tmp*`` file is left behind and a result
file of an earlier run is left as it was.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os

import pytest

from twilight_env.cli import main
from twilight_env.util import atomic


class _FullDisk:
    """Open files for writing under ``folder`` through a wrapper whose writes fail with
    ENOSPC after ``budget`` bytes; ``io.open`` (which ``os.fdopen`` calls) and
    ``builtins.open`` are both patched, so old and new writing code meet the same disk."""

    def __init__(self, monkeypatch, folder, budget: int = 64, only: str | None = None):
        self.folder, self.budget, self.real, self.only = os.path.realpath(folder), budget, io.open, only
        self.failed: list[str] = []
        monkeypatch.setattr(io, "open", self.open)
        monkeypatch.setattr(builtins, "open", self.open)

    def _path(self, file) -> str:
        if isinstance(file, int):
            return os.readlink(f"/proc/self/fd/{file}")
        return os.path.realpath(os.fspath(file))

    def open(self, file, mode="r", *args, **kwargs):
        f = self.real(file, mode, *args, **kwargs)
        path = self._path(file)
        if any(m in mode for m in "wax+") and path.startswith(self.folder + os.sep) \
                and (self.only is None or os.path.basename(path).startswith(self.only)):
            return _Failing(f, self)
        return f


class _Failing:
    def __init__(self, f, disk: _FullDisk):
        self._f, self._disk, self._left = f, disk, disk.budget

    def write(self, data):
        if len(data) > self._left:
            self._f.write(data[:self._left])
            self._left = 0
            self._f.flush()
            self._disk.failed.append(self._f.name if isinstance(self._f.name, str) else str(self._f.name))
            raise OSError(errno.ENOSPC, "No space left on device")
        self._left -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __iter__(self):
        return iter(self._f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def _assert_whole(path) -> None:
    data = path.read_bytes()
    if path.suffix == ".json":
        json.loads(data)
    elif path.suffix == ".png":
        assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82"), path
    else:
        assert data.endswith(b"\n") and len(data) > 20, path


def _leftovers(folder) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if ".tmp" in p.name)


def test_atomic_write_keeps_the_old_file_on_a_full_disk(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_text('{"old": true}')
    _FullDisk(monkeypatch, tmp_path)
    with pytest.raises(OSError) as e:
        atomic.write_json(path, {"new": "x" * 1000})
    assert isinstance(e.value, atomic.WriteError) and e.value.errno == errno.ENOSPC
    assert str(e.value) == f"cannot write {str(path)!r}: no space left on the device (errno 28)"
    assert path.read_text() == '{"old": true}' and _leftovers(tmp_path) == []
    monkeypatch.undo()
    atomic.write_json(path, {"new": 1})
    assert json.loads(path.read_text()) == {"new": 1} and _leftovers(tmp_path) == []


def test_atomic_write_leaves_nothing_when_the_body_fails(tmp_path):
    path = tmp_path / "a.txt"
    with pytest.raises(TypeError):
        atomic.write_json(path, {"x": object()})
    with pytest.raises(RuntimeError):
        with atomic.atomic_file(path) as f:
            f.write("half")
            raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(atomic.WriteError, match="cannot write .*no-such-folder"):
        atomic.write_text(tmp_path / "no-such-folder" / "x.txt", "x")


def test_a_figure_is_saved_atomically(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure()
    path = tmp_path / "f.png"
    atomic.save_figure(fig, path, dpi=50)
    good = path.read_bytes()
    assert good.startswith(b"\x89PNG")
    _FullDisk(monkeypatch, tmp_path)
    with pytest.raises(atomic.WriteError, match="f.png.*no space left"):
        atomic.save_figure(fig, path, dpi=60)
    plt.close(fig)
    assert path.read_bytes() == good and _leftovers(tmp_path) == []


@pytest.mark.parametrize("command, only", [(["arena", "random", "random"], None), (["edge", "random"], None),
                                           (["arena", "random", "random"], "arena.json"),
                                           (["edge", "random"], "edge.png")])
def test_a_run_on_a_full_disk_says_which_file_and_leaves_no_partial_file(tmp_path, monkeypatch, capsys, command,
                                                                         only):
    out = tmp_path / "out"
    argv = command + ["--deals", "2", "--workers", "1", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    results = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"arena.json", "edge.json"} & set(results)
    capsys.readouterr()
    disk = _FullDisk(monkeypatch, out, only=only)  # only: the disk fills when that file is written
    assert main(argv + ["--force"]) == 2
    err = capsys.readouterr().err.strip()
    assert disk.failed, "no write met the full disk"
    name = only or f"{command[0]}.checkpoint.json"  # the checkpoint is the first file of a run
    assert "\n" not in err and err.startswith(f"twilight {command[0]}: error: cannot write {str(out / name)!r}"), err
    assert err.endswith(": no space left on the device (errno 28)"), err
    monkeypatch.undo()
    assert _leftovers(out) == []
    if only is not None:  # the file the disk filled on is the first run's, whole
        assert (out / only).read_bytes() == results[only]
    for name in results:  # every result file whole: the first run's, or the second's when written before
        _assert_whole(out / name)


def test_play_record_checks_the_disk_before_the_deal(tmp_path, monkeypatch, capsys):
    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", full)
    monkeypatch.setattr(builtins, "input", lambda prompt: pytest.fail("the deal started before the check"))
    path = tmp_path / "game.json"
    assert main(["play", "--opponents", "random", "--record", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"twilight play: error: --record {str(path)!r} cannot be written: no space left on the device"
    assert list(tmp_path.iterdir()) == []


def test_play_record_on_a_disk_that_fills_during_the_deal_leaves_no_empty_file(tmp_path, monkeypatch):
    from twilight_env.experiments.play import play_game

    def first_legal(prompt: str) -> str:
        return prompt[prompt.index("[") + 1: prompt.rindex("]")].split(" | ")[0]

    path = tmp_path / "game.json.gz"
    _FullDisk(monkeypatch, tmp_path, budget=0)  # the trial write goes through os.write and passes
    with pytest.raises(OSError) as e:
        play_game(4, 1, "random", "random", seed=3, ask=first_legal, say=lambda s: None, record=str(path))
    assert str(e.value) == f"cannot write {str(path)!r}: no space left on the device (errno 28)"
    assert list(tmp_path.iterdir()) == []  # neither a 0-byte record nor a temporary file


def test_play_record_into_a_new_folder_makes_it_before_the_deal(tmp_path):
    from twilight_env.experiments.play import play_game
    from twilight_env.records import game_records as records

    def first_legal(prompt: str) -> str:
        return prompt[prompt.index("[") + 1: prompt.rindex("]")].split(" | ")[0]

    path = tmp_path / "new" / "deeper" / "game.json"
    assert play_game(4, 2, "random", "random", seed=6, ask=first_legal, say=lambda s: None, record=str(path)) == 0
    assert records.load(path)["agents"][2] == "human" and sorted(os.listdir(path.parent)) == ["game.json"]
