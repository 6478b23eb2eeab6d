"""Ctrl-C of a study run on a pool of workers ends the process, even when a worker is cut
in the middle of sending its result.

The pool's manager thread reads each result whole; a worker ended while it writes one leaves
part of a message in the result pipe, and the thread then waited for the rest for good. The
interpreter's exit waits on that thread, so ``twilight edge --workers 2`` printed its
``interrupted: ... saved`` line and then hung (4 of 12 runs Ctrl-C'd at random times).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX process groups")

SCRIPT = textwrap.dedent('''
    import gc, os, signal, struct, sys, threading, time
    from multiprocessing.queues import SimpleQueue

    from twilight_env.experiments.common import run_tasks

    MARK = sys.argv[1]


    def task(i):
        if i == 1:  # cut while sending its result: a message header, then nothing
            queue = next(o for o in gc.get_objects() if isinstance(o, SimpleQueue))
            os.write(queue._writer.fileno(), struct.pack("!i", 1 << 20))
            open(MARK, "w").close()
        time.sleep(600)


    def interrupt_once_cut():
        while not os.path.exists(MARK):
            time.sleep(0.05)
        time.sleep(0.3)  # the manager thread is now waiting for the rest of the message
        os.kill(os.getpid(), signal.SIGINT)


    if __name__ == "__main__":
        threading.Thread(target=interrupt_once_cut, daemon=True).start()
        try:
            run_tasks(task, [0, 1], workers=2, progress=False)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
''')


def test_ctrl_c_ends_the_run_when_a_worker_was_cut_mid_result(tmp_path):
    script = tmp_path / "cut.py"
    script.write_text(SCRIPT)
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path / "cut")], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True, text=True)
    start = time.monotonic()
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        pytest.fail(f"the interrupted run did not end within 60 s (it hangs at exit): {out[-500:]}")
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert p.returncode == 0 and "interrupted" in out, out[-500:]
    assert time.monotonic() - start < 45
