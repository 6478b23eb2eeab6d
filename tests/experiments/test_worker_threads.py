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
