"""Test-suite setup shared by every test directory.

- The repository root goes on ``sys.path``, so the tests run from a plain checkout
  (``pytest`` in the repository root) as well as from an installed package; so does
  ``tests/`` itself, for the helper modules every layer's tests share (``positions``, the
  one seeded position generator).
- Without torch (the ``train`` extra) the training tests are not collected; without
  tensorboard the ones that run a training loop skip.
- Hypothesis profiles: ``default`` (used unless told otherwise) keeps the property tests
  quick and deterministic (no deadline: the machine may be shared); ``thorough``
  (``HYPOTHESIS_PROFILE=thorough pytest tests/rules``) runs many more examples.
- Tests write only under their temporary folders: a test during which something new
  appears in the checkout's ``out/`` or ``runs/`` (the commands' default output
  folders) fails, naming what appeared (``_checkout_stays_clean``).
"""

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
TESTS = os.path.join(ROOT, "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

collect_ignore = []
if importlib.util.find_spec("torch") is None:  # the training tests need the `train` extra's torch
    collect_ignore.append("training")

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is in the `test` extra; the property tests skip without it
    pass
else:
    settings.register_profile("default", deadline=None, max_examples=100, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("thorough", deadline=None, max_examples=2000,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


class ProcessKiller:
    """A background thread that SIGKILLs the first process whose command line starts
    with ``prefix`` (e.g. a busy Ray worker, ``ray::_run_block``); ``killed`` holds its
    pid once done. Use as a context manager around the run to disturb."""

    def __init__(self, prefix: str):
        import threading

        self.prefix, self.killed, self._stop = prefix, [], threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        import signal
        import time

        import psutil

        while not self._stop.is_set() and not self.killed:
            for proc in psutil.process_iter(["pid", "cmdline"]):
                if " ".join(proc.info["cmdline"] or []).startswith(self.prefix):
                    try:
                        os.kill(proc.info["pid"], signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    self.killed.append(proc.info["pid"])
                    return
            time.sleep(0.005)

    def __enter__(self) -> "ProcessKiller":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


import pytest as _pytest  # noqa: E402


@_pytest.fixture
def process_killer():
    """:class:`ProcessKiller` by prefix: ``with process_killer("ray::_run_block") as k: ...``."""
    return ProcessKiller


_OUTPUT_DIRS = ("out", "runs")
"""The commands' default output folders under the working directory."""


def _outputs() -> set[str]:
    found = set()
    for d in _OUTPUT_DIRS:
        path = os.path.join(ROOT, d)
        if os.path.isdir(path):
            found.update(os.path.join(d, name) for name in os.listdir(path))
    return found


@pytest.fixture(autouse=True)
def _checkout_stays_clean():
    """Fail a test during which a new entry appears in the checkout's ``out/`` or ``runs/``
    (with ``-n 2`` the other worker's test may be the writer: the message says so)."""
    before = _outputs()
    yield
    new = sorted(_outputs() - before)
    if new:
        pytest.fail(f"new in the checkout while this test ran (this test or one running beside it): {new}; "
                    "tests write under tmp_path (or chdir there before running a command)", pytrace=False)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster of 2 CPUs for one test module; yields the ray module (skips
    without the ``dist`` extra)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
                 object_store_memory=80 * 1024 * 1024)
    yield ray
    ray.shutdown()
