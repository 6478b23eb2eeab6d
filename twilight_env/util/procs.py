"""Child processes that end with their parent: no orphans after a ``kill -9``.

Pool workers and self-play actors call :func:`die_with_parent` once, first thing (in the
pool's initializer, or at the top of the actor's entry function). From then on the child
ends as soon as the process that started it ends, however it ended (``kill -9``, a crash,
a closed terminal), instead of playing on for minutes with nobody to read its results.

How: on Linux the kernel sends the child a signal when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), and the child checks once, after arming it, that its parent
is still the process that started it (the parent may have died in between). Where
``prctl`` is missing (macOS) or the child's parent is not the process that started it (a
fork server), a daemon thread in the child polls the parent instead. Standard library
only: this is a lowest-layer module, importable from every layer.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

POLL_S = 0.5
"""Seconds between two looks at the parent in the polling fallback."""

GRACE_S = 2.0
"""Seconds the polling fallback waits, after sending its signal, before ``os._exit``
(for a child whose signal handler does not end it)."""

def _set_pdeathsig(sig: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, sig)`` on Linux; False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a dead process not yet reaped).

    Args:
        pid: a process id (int > 0).
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] not in (b"Z", b"X")
    except (OSError, ValueError):  # no /proc (macOS): os.kill said it exists
        return True


def _end_self(sig: int) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(GRACE_S)  # a handler ran and did not end the process
    os._exit(128 + int(sig))


def _watch(parent: int, ppid: int, sig: int, poll_s: float) -> None:
    while os.getppid() == ppid and pid_alive(parent):
        time.sleep(poll_s)
    _end_self(sig)


def die_with_parent(parent_pid: int | None = None, sig: int = signal.SIGTERM, use_prctl: bool = True,
                    poll_s: float = POLL_S) -> bool:
    """Make this process end when its parent process ends. Call it in the child.

    Args:
        parent_pid: the process whose end ends this one. Default: the process that started
            this one through ``multiprocessing`` (``multiprocessing.parent_process()``, known
            before the child ran, so a parent that died before this call is noticed too).
        sig: the signal this process gets (int; default ``SIGTERM``, whose default action
            ends the process at once and prints nothing; the caller leaves SIGTERM at its
            default action). The polling fallback follows it with ``os._exit`` after
            :data:`GRACE_S` seconds if the process is still there.
        use_prctl: False skips the Linux parent-death signal and uses the polling thread
            (tests, or a child started by a thread that ends before the parent process).
        poll_s: seconds between two looks at the parent in the polling fallback (> 0).

    Returns:
        True when armed; False (nothing done) in a process that ``multiprocessing`` did not
        start, called without ``parent_pid``. A parent already gone ends this process now.

    Raises:
        ValueError: ``parent_pid`` is not a positive int, or ``poll_s`` is not > 0.
    """
    if parent_pid is None:
        import multiprocessing

        parent = multiprocessing.parent_process()
        if parent is None or parent.pid is None:
            return False
        parent_pid = parent.pid
    if isinstance(parent_pid, bool) or not isinstance(parent_pid, int) or parent_pid <= 0:
        raise ValueError(f"die_with_parent: parent_pid must be a positive int, got {parent_pid!r}")
    if not poll_s > 0:
        raise ValueError(f"die_with_parent: poll_s must be > 0 seconds, got {poll_s!r}")
    ppid = os.getppid()
    direct = ppid == parent_pid
    if direct and use_prctl and _set_pdeathsig(sig):
        # the parent may have died before prctl: then this process was already handed to
        # another parent (init or a subreaper) and no signal will come
        if os.getppid() != parent_pid:
            _end_self(sig)
        return True
    if (direct and os.getppid() != parent_pid) or not pid_alive(parent_pid):
        _end_self(sig)
    threading.Thread(target=_watch, args=(parent_pid, ppid, sig, poll_s), name="die-with-parent",
                     daemon=True).start()
    return True
