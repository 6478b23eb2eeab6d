"""Interrupting ``twilight arena`` and ``twilight edge``: one line, the finished deals
saved in the output folder's checkpoint, and ``--resume`` ending with the figures of an
uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import twilight_env.experiments.arena as arena
import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _arena_figures(folder):
    doc = json.loads((folder / "arena.json").read_text())
    return doc["results"]


def _stop_after(monkeypatch, k):
    """Make the arena's deal worker raise KeyboardInterrupt on its call number ``k``."""
    real = arena._play_pair
    calls = []

    def worker(task):
        calls.append(task[0])
        if len(calls) == k:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(arena, "_play_pair", worker)
    return calls


@pytest.mark.parametrize("players", [4, 3])
def test_interrupted_arena_resumes_to_the_uninterrupted_figures(tmp_path, monkeypatch, capsys, players):
    a, b = tmp_path / "a", tmp_path / "b"
    args = ["arena", "random", "heuristic", "random", "--players", str(players), "--deals", "5", "--seed", "4",
            "--workers", "1", "--quiet"]
    assert main(args + ["--out", str(a)]) == 0
    capsys.readouterr()
    _stop_after(monkeypatch, 9)  # 3 pairings x 5 deals: the first pairing and 3 deals of the second done
    assert main(args + ["--out", str(b)]) == 130
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert "interrupted: 8 finished deal(s) saved" in err and f"twilight arena --resume {b}" in err
    assert not (b / "arena.json").exists()
    assert arena.ArenaCheckpoint.load(str(b)).count() == 8
    assert main(args + ["--out", str(b)]) == 2  # running it again into the folder is refused
    assert f"it holds an interrupted run (arena.checkpoint.json): continue it with --resume {b}" \
        in capsys.readouterr().err
    monkeypatch.undo()
    calls = _stop_after(monkeypatch, 0)
    assert main(["arena", "--resume", str(b), "--workers", "1", "--quiet"]) == 0
    assert len(calls) == 15 - 8  # only the missing deals were played
    assert _arena_figures(b) == _arena_figures(a)
    doc = json.loads((b / "arena.json").read_text())
    assert doc["resumed"] is True and doc["num_players"] == players
    assert not (b / arena.ArenaCheckpoint.NAME).exists()
    assert not [f for f in os.listdir(b) if ".tmp" in f]


def test_arena_resume_errors(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    assert main(["arena", "--resume", str(folder), "--quiet"]) == 2
    assert "no arena checkpoint" in capsys.readouterr().err
    (folder / arena.ArenaCheckpoint.NAME).write_text(json.dumps({"kind": "x"}))
    assert main(["arena", "--resume", str(folder), "--quiet"]) == 2
    assert "not a twilight arena checkpoint" in capsys.readouterr().err
    assert main(["arena", "random", "random", "--resume", str(folder), "--deals", "3"]) == 2
    err = capsys.readouterr().err
    assert "do not give specs, --deals with it" in err
    from twilight_env.records.dealsets import generate_deals

    doc = {"kind": arena.ArenaCheckpoint.KIND, "version": 1, "elapsed_seconds": 0, "deals": generate_deals(2, 0),
           "done": {}, "settings": {"specs": ["random"], "num_players": 4, "seed": 0, "lockstep": True,
                                    "deals_source": {}, "arguments": {}}}
    (folder / arena.ArenaCheckpoint.NAME).write_text(json.dumps(doc))
    assert main(["arena", "--resume", str(folder), "--quiet"]) == 2
    assert "malformed: settings 'specs'" in capsys.readouterr().err
    good = tmp_path / "good"
    assert main(["arena", "random", "random", "--deals", "2", "--workers", "1", "--quiet", "--out", str(good)]) == 0
    capsys.readouterr()
    assert main(["arena", "--resume", str(good), "--quiet"]) == 2
    assert "already finished" in capsys.readouterr().err


def _wait_for(path, proc, timeout=60.0):
    t0 = time.time()
    while not os.path.exists(path):
        assert proc.poll() is None, proc.communicate()
        assert time.time() - t0 < timeout, f"no {path} after {timeout} s"
        time.sleep(0.05)


def _default_sigint():
    """In the child before it runs: SIGINT back to its default, as in a terminal. A child
    inherits an ignored SIGINT (``nohup pytest &``, some batch runners), and Python then
    leaves Ctrl-C ignored, so the SIGINT these tests send would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_a_run(args, folder, checkpoint_name, sig, wait_s, tmp_path, whole_group):
    """Start ``python -m twilight_env.cli ARGS --out FOLDER`` in its own session (SIGINT at
    its default, :func:`_default_sigint`), wait for its checkpoint and ``wait_s`` more
    seconds, send ``sig`` (to the process group, as a terminal's Ctrl-C, or to the main
    process only) and return ``(returncode, out, err)``."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "twilight_env.cli", *args, "--out", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            cwd=str(tmp_path), env=env, preexec_fn=_default_sigint)
    try:
        _wait_for(folder / checkpoint_name, proc)
        time.sleep(wait_s)
        if whole_group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, err


@pytest.mark.parametrize("command,sig", [
    (["arena", "random", "heuristic"], signal.SIGINT),
    (["edge", "random", "--boot", "5", "--matches", "5"], signal.SIGTERM),
    (["edge", "random", "--boot", "5", "--matches", "5"], signal.SIGINT),
])
def test_signal_to_a_real_run_saves_the_deals_in_one_line(tmp_path, command, sig):
    """Ctrl-C reaches the whole process group (workers too); SIGTERM only the main process.
    Either way: exit 128 + signal, one line on stderr, no traceback from the pool, and a
    checkpoint whose saved deals are the deals a fresh run plays."""
    folder = tmp_path / "run"
    name = arena.ArenaCheckpoint.NAME if command[0] == "arena" else edge.CHECKPOINT
    # 5 s: some deals finish, even on a loaded machine (workers start and import first)
    rc, out, err = _signal_a_run([*command, "--deals", "20000", "--seed", "2", "--workers", "2", "--quiet"], folder,
                                 name, sig, 5.0, tmp_path, whole_group=sig == signal.SIGINT)
    assert rc == 128 + sig, err
    assert out == ""
    err = "".join(line for line in err.splitlines(keepends=True)
                  if not line.startswith("warning: --workers"))  # a machine with one core says so first
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"--resume {folder}" in err
    if command[0] == "arena":
        ckpt = arena.ArenaCheckpoint.load(str(folder))
        saved = ckpt.finished(0)
        assert saved
        for d in sorted(saved)[:3]:  # the saved results are those of the seeded deals
            (r,) = arena._play_pair((d, ckpt.deals[d], "random", "heuristic", 4, 2, 0))
            assert saved[d] == {"points": r["points"], "side_scores": r["side_scores"]}
    else:
        ckpt = edge.Checkpoint.load(str(folder))
        key = edge.config_key("random", "random")
        saved = ckpt.finished(key)
        assert saved
        for d in sorted(saved)[:3]:
            _, m, u = edge._play_edge_deal((d, ckpt.deals[d], "random", "random", 2, key))
            assert saved[d] == (m, u)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_the_compiled_search_in_process_saves_the_deals(tmp_path, sig):
    """With ``--workers 1`` the compiled IS-MCTS runs in the main process: a signal that
    arrives while numba code runs must still end in the one-line save, not a SystemError
    that loses the finished deals."""
    pytest.importorskip("numba")
    folder = tmp_path / "run"
    # about 1.3 s of compiled search per deal here: deals finish within the wait even on a
    # loaded machine, and nearly all of the time is spent in numba code
    spec = "ismcts:backend=numba,iterations=1000"
    rc, out, err = _signal_a_run(["edge", spec, "--deals", "2000", "--seed", "2", "--boot", "5", "--matches", "5",
                                  "--workers", "1", "--quiet"], folder, edge.CHECKPOINT, sig, 8.0, tmp_path,
                                 whole_group=False)
    assert rc == 128 + sig, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"--resume {folder}" in err
    saved = edge.Checkpoint.load(str(folder)).finished(edge.config_key(spec, spec))
    assert saved
