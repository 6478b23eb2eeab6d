"""Pool workers of ``run_tasks`` run one BLAS thread each (``experiments.common._init_worker``):
the pool already fills the cores, and a multi-threaded BLAS in every worker oversubscribes
them (a network agent's study ran 3.5 times slower)."""

from __future__ import annotations

import numpy as np  # noqa: F401 (loads the BLAS whose threads are counted)
from threadpoolctl import threadpool_info

from twilight_env.experiments.common import run_tasks


def _blas_threads(_task) -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_each_worker_runs_one_blas_thread():
    found = run_tasks(_blas_threads, list(range(4)), workers=2, progress=False)
    assert all(found), "no BLAS library seen in the workers"
    assert {n for threads in found for n in threads} == {1}


def test_tasks_in_this_process_run_one_blas_thread_and_restore_it():
    """``workers=1`` plays in this process: one BLAS thread while it plays (a network agent
    on the default threads used 12 times the CPU), the process's own setting after."""
    before = _blas_threads(None)
    found = run_tasks(_blas_threads, list(range(3)), workers=1, progress=False)
    assert found and {n for threads in found for n in threads} == {1}
    assert _blas_threads(None) == before
