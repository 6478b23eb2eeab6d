"""One core's memory bandwidth with NumPy: the bound on writing observations.

Prints GB/s for ``fill`` (pure writes) and ``copyto`` (read + write) of a 512 MiB float32
array, best of 5, and the observation write rate that bandwidth allows for the
968-float32 observation vector (``twilight_env.obs.encoding.OBS_SIZE``). Used for the
batch-engine target (issue: >= 20x OpenSpiel decisions/s with an observation per
decision): at N decisions/s the observations alone are N * OBS_SIZE * 4 bytes/s.

Usage::

    python benchmarks/memory_bandwidth.py
"""

from __future__ import annotations

import os
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from twilight_env.obs.encoding import OBS_SIZE  # noqa: E402


def main() -> int:
    n = 1 << 27  # 512 MiB of float32
    a = np.empty(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    a.fill(0)
    fill = copy = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        a.fill(1.0)
        fill = min(fill, time.perf_counter() - t)
        t = time.perf_counter()
        np.copyto(a, b)
        copy = min(copy, time.perf_counter() - t)
    gb = n * 4 / 1e9
    obs_bytes = OBS_SIZE * 4
    print(f"fill (writes only): {gb / fill:.1f} GB/s")
    print(f"copyto: {gb / copy:.1f} GB/s read + {gb / copy:.1f} GB/s written")
    print(f"observation: {OBS_SIZE} float32 = {obs_bytes} bytes; at the fill rate at most "
          f"{gb / fill * 1e9 / obs_bytes / 1e6:.2f}M observations/s written, with no other work")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
