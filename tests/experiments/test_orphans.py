"""No orphans: pool workers and self-play actors end when their parent dies, even by kill -9.

Each end-to-end test starts a real command in its own session, waits until its child
processes are at work, sends the command ``SIGKILL`` and then looks, every 0.1 s for 5 s,
for any process left in that session (its workers, their own children, multiprocessing's
resource tracker). Survivors are killed in a ``finally`` so a failing test leaves nothing
behind. Linux only (the session's processes are read from ``/proc``); the mechanism itself
is :func:`twilight_env.util.procs.die_with_parent`.
"""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from twilight_env.util.procs import die_with_parent, pid_alive

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN_S = 5.0
START_TIMEOUT_S = 240.0

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc (Linux)")


def _stat(pid: int) -> list[str] | None:
    """Fields of ``/proc/PID/stat`` after the command name (state first), or None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()


def session_members(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid``, ``sid`` itself left out."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != sid:
            st = _stat(int(name))
            if st is not None and st[0] not in ("Z", "X") and int(st[3]) == sid:
                out.append(int(name))
    return sorted(out)


def cpu_seconds(pid: int) -> float:
    st = _stat(pid)
    return 0.0 if st is None else (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:160]
    except OSError:
        return "?"


class Session:
    """A command run in its own session (``start_new_session``), its stdout and stderr
    kept in one file; on exit every process still in the session is killed."""

    def __init__(self, cmd: list[str], tmp_path: Path):
        self.err_path = tmp_path / "stderr.txt"
        self._err = open(self.err_path, "wb")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                     stdout=self._err, stderr=self._err, start_new_session=True)
        self.sid = self.proc.pid

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for pid in [self.sid] * (self.proc.poll() is None) + session_members(self.sid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=30)
        self._err.close()

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def wait_until(self, ready, what: str, timeout: float = START_TIMEOUT_S) -> list[int]:
        """Poll until ``ready(members)`` holds; the members then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the command ended early ({self.proc.returncode}): {self.stderr()[-3000:]}"
            members = session_members(self.sid)
            if ready(members):
                return members
            time.sleep(0.2)
        raise AssertionError(f"not {what} after {timeout} s: {self.stderr()[-3000:]}")

    def kill9_and_wait(self) -> tuple[list[int], float]:
        """SIGKILL the command; the session's processes still there after
        :data:`GONE_WITHIN_S` seconds (none: ``[]``) and the seconds it took them to go."""
        os.kill(self.sid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        t0 = time.monotonic()
        while time.monotonic() - t0 < GONE_WITHIN_S:
            left = session_members(self.sid)
            if not left:
                return [], time.monotonic() - t0
            time.sleep(0.1)
        left = session_members(self.sid)
        return left, time.monotonic() - t0


def _assert_none_left(s: Session, before: list[int]):
    left, _ = s.kill9_and_wait()
    assert not left, (f"still running {GONE_WITHIN_S} s after kill -9 of the parent: "
                      + "; ".join(f"{p} {cmdline(p)}" for p in left) + f" (children before: {before})")
    # the workers end on SIGTERM at its default action: nothing printed, no traceback
    assert "Traceback" not in s.stderr(), s.stderr()[-3000:]


# ---------------------------------------------------------------------------------
# end to end: the commands
# ---------------------------------------------------------------------------------

def test_kill_9_of_a_two_worker_edge_leaves_no_process(tmp_path):
    """``twilight edge --workers 2`` (the pool of ``twilight_env.experiments.common.run_tasks``, shared
    by ``arena``, ``ladder`` and the other studies)."""
    cmd = [sys.executable, "-m", "twilight_env.cli", "edge", "heuristic", "--deals", "200000", "--workers", "2",
           "--out", str(tmp_path / "x"), "--quiet"]
    with Session(cmd, tmp_path) as s:
        # both workers have played deals: they are past their initializer
        before = s.wait_until(lambda m: len(m) >= 2 and sum(cpu_seconds(p) >= 1.0 for p in m) >= 2,
                              "two busy workers")
        _assert_none_left(s, before)


needs_train = pytest.mark.skipif(importlib.util.find_spec("torch") is None
                                 or importlib.util.find_spec("tensorboard") is None,
                                 reason="needs the 'train' extra (torch, tensorboard)")


@needs_train
def test_kill_9_of_train_with_an_actor_process_leaves_no_process(tmp_path):
    """``twilight train --actors 1``: the actor process (spawned by torch.multiprocessing)
    and multiprocessing's resource tracker."""
    logdir = tmp_path / "runs"
    cmd = [sys.executable, "-m", "twilight_env.cli", "train", "--players", "3", "--actors", "1", "--minutes", "5",
           "--logdir", str(logdir), "--eval-every", "0", "--eval-deals", "0", "--no-progress",
           "--games-per-actor", "16", "--batch-size", "256"]

    def learning(members):  # the learner logged a step: a chunk came from the actor, in its loop
        events = list(logdir.glob("*/events.out.tfevents.*"))
        return bool(members) and bool(events) and events[0].stat().st_size > 1000

    with Session(cmd, tmp_path) as s:
        before = s.wait_until(learning, "a step learned from the actor's chunk")
        assert any("spawn_main" in cmdline(p) for p in before), [cmdline(p) for p in before]
        _assert_none_left(s, before)


@needs_train
def test_kill_9_of_exit_generate_with_two_workers_leaves_no_process(tmp_path):
    """``python -m twilight_env.training.exit generate --workers 2`` (a spawn ``multiprocessing.Pool``)."""
    out = tmp_path / "data"
    cmd = [sys.executable, "-m", "twilight_env.training.exit", "generate", "--out", str(out), "--players", "3",
           "--deals", "400", "--chunk-deals", "1", "--workers", "2", "--no-progress",
           "--agent", "ismcts:iterations=200"]
    with Session(cmd, tmp_path) as s:
        before = s.wait_until(lambda m: len(list(out.glob("*.npz"))) >= 2 and len(m) >= 2, "two chunks written")
        _assert_none_left(s, before)


# ---------------------------------------------------------------------------------
# the mechanism: every start method, with and without prctl, and the start-up race
# ---------------------------------------------------------------------------------

_PARENT = textwrap.dedent("""
    import multiprocessing as mp, os, sys, time
    from twilight_env.util.procs import die_with_parent

    def child(use_prctl, race):
        if race:  # the parent dies before the child arms anything
            while os.getppid() == mp.parent_process().pid:
                time.sleep(0.01)
        die_with_parent(use_prctl=use_prctl, poll_s=0.1)
        print("armed", os.getpid(), flush=True)
        time.sleep(120)

    if __name__ == "__main__":
        method, use_prctl, race = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
        p = mp.get_context(method).Process(target=child, args=(use_prctl, race))
        p.start()
        print("child", p.pid, flush=True)
        if race:
            os._exit(0)
        time.sleep(120)
""")


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
@pytest.mark.parametrize("use_prctl", [True, False], ids=["prctl", "poll"])
def test_a_child_ends_within_5_s_of_its_parents_kill_9(tmp_path, method, use_prctl):
    """The forkserver's children are not the parent's own: they are watched through the
    fork server, which ends with the parent."""
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    with Session([sys.executable, str(script), method, str(int(use_prctl)), "0"], tmp_path) as s:
        before = s.wait_until(lambda m: bool(m) and "armed" in s.stderr(), "the child armed")
        _assert_none_left(s, before)


@pytest.mark.parametrize("use_prctl", [True, False], ids=["prctl", "poll"])
def test_a_child_whose_parent_died_before_it_armed_ends_at_once(tmp_path, use_prctl):
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    with Session([sys.executable, str(script), "spawn", str(int(use_prctl)), "1"], tmp_path) as s:
        s.proc.wait(timeout=60)  # the parent exits as soon as the child is started
        deadline = time.monotonic() + 60
        while "child" not in s.stderr() and time.monotonic() < deadline:
            time.sleep(0.1)
        child = int(s.stderr().split("child", 1)[1].split()[0])
        deadline = time.monotonic() + 60
        while pid_alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not pid_alive(child), "the orphaned child did not end"
        assert "armed" not in s.stderr() and "Traceback" not in s.stderr(), s.stderr()


def test_nothing_is_armed_outside_a_multiprocessing_child():
    assert mp.parent_process() is None
    assert die_with_parent() is False


@pytest.mark.parametrize("kw", [dict(parent_pid=0), dict(parent_pid=True), dict(parent_pid="1"),
                                dict(parent_pid=1, poll_s=0)])
def test_bad_arguments_are_refused(kw):
    with pytest.raises(ValueError, match="parent_pid|poll_s"):
        die_with_parent(**kw)


def test_pid_alive():
    assert pid_alive(os.getpid())
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert not pid_alive(p.pid)
