"""Checkpoint files (twilight_env.agents.nn.checkpoint): atomic, fsync-ed writes and clear errors on bad files."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from twilight_env.agents.nn import checkpoint as ck
from twilight_env.agents.nn.checkpoint import (CHECKPOINT_NAME, FORMAT, VERSION, load_checkpoint, model_from_checkpoint,
                                  save_checkpoint)
from twilight_env.agents.nn.network import NetConfig, QNetwork


def write_random_checkpoint(path, num_players, seed=0):
    torch.manual_seed(seed)
    net = NetConfig(num_roles=1 if num_players == 4 else 4, trunk=(32,), head=(16,))
    save_checkpoint({"format": FORMAT, "version": VERSION, "num_players": num_players, "net": net.to_dict(),
                     "model": QNetwork(net).state_dict()}, path)

ROOT = Path(__file__).resolve().parents[2]

_SAVER = r"""
import sys, torch
sys.path.insert(0, {root!r})
from twilight_env.agents.nn.checkpoint import FORMAT, VERSION, save_checkpoint
from twilight_env.agents.nn.network import NetConfig, QNetwork
path = {path!r}
net = NetConfig(num_roles=1, trunk=(32,), head=(16,))
ck = {{"format": FORMAT, "version": VERSION, "num_players": 4, "net": net.to_dict(), "model": QNetwork(net).state_dict()}}
save_checkpoint(ck, path)
ck["payload"] = torch.arange(12_000_000, dtype=torch.float32)  # 48 MB: a save takes a while
print("ready", flush=True)
while True:
    save_checkpoint(ck, path)
"""


def test_kill_9_while_saving_leaves_a_loadable_checkpoint(tmp_path):
    """A process killed with SIGKILL in the middle of ``save_checkpoint`` leaves the previous
    (or the new) checkpoint whole: it loads and builds its network."""
    path = tmp_path / CHECKPOINT_NAME
    killed_mid_write = False
    for attempt in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _SAVER.format(root=str(ROOT), path=str(path))],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
            deadline = time.time() + 30
            # kill while a temporary file is being written (the loop is almost always in one)
            while not list(tmp_path.glob(f"{CHECKPOINT_NAME}.tmp*")) and time.time() < deadline:
                time.sleep(0.01)
            time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
        killed_mid_write = bool(list(tmp_path.glob(f"{CHECKPOINT_NAME}.tmp*")))
        ckpt = load_checkpoint(path, 4)
        model_from_checkpoint(ckpt, str(path))
        if killed_mid_write:
            break
        path.unlink()
    assert killed_mid_write, "the saver was never caught in the middle of a write"


def test_failed_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    """A write that fails midway (disk full) raises, removes its temporary file, and the
    previous checkpoint still loads unchanged."""
    path = tmp_path / CHECKPOINT_NAME
    write_random_checkpoint(path, 3, seed=5)
    before = load_checkpoint(path)
    real_save = torch.save

    def half_then_fail(obj, f, *a, **k):
        real_save(obj, f, *a, **k)
        f.seek(0)
        f.truncate(100)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ck.torch, "save", half_then_fail)
    with pytest.raises(OSError, match="No space"):
        save_checkpoint({**before, "decisions": 123}, path)
    monkeypatch.undo()
    after = load_checkpoint(path, 3)
    assert "decisions" not in after
    assert all(torch.equal(before["model"][k], after["model"][k]) for k in before["model"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [CHECKPOINT_NAME]


def test_data_is_fsynced_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(ck.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(ck.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    write_random_checkpoint(tmp_path / "a.pt", 4)
    assert events[:2] == ["fsync", "replace"]
    assert events.count("fsync") == 2  # the file, then its folder


def test_corrupt_checkpoint_error_names_the_file(tmp_path):
    path = tmp_path / "run" / CHECKPOINT_NAME
    path.parent.mkdir()
    write_random_checkpoint(path, 4)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(ValueError, match=r"cannot read neural checkpoint '.*run/checkpoint\.pt'.*corrupt"):
        load_checkpoint(path.parent)  # the run directory is resolved to its checkpoint file


def test_run_directory_without_checkpoint(tmp_path):
    with pytest.raises(ValueError, match=r"not found: the run directory .* holds no checkpoint\.pt"):
        load_checkpoint(tmp_path)


@pytest.mark.parametrize("path", ["/dev/null", "/dev/zero"])
def test_a_device_is_not_read_as_a_checkpoint(path):
    """Not "not found" (it exists), and never read (``/dev/zero`` has no end)."""
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    with pytest.raises(ValueError, match=r"is not a regular file"):
        load_checkpoint(path)
    from twilight_env.agents.inference import read_checkpoint

    with pytest.raises(ValueError, match=r"is not a regular file"):
        read_checkpoint(path)


@pytest.mark.parametrize("content", [b"", b"hello\n", b"\x00" * 64, b"[" * 100_000])
def test_files_that_are_not_checkpoints_name_the_option_at_build(tmp_path, content):
    """An agent built with such a file fails at once, naming the option and the file."""
    from twilight_env.agents.base import make_agent

    path = tmp_path / "x.pt"
    path.write_bytes(content)
    for spec in (f"neural:path={path}", f"exit:path={path}", f"pimc:inference={path}"):
        with pytest.raises(ValueError, match=rf"(path|inference)='{path}'.*corrupt"):
            make_agent(spec)
