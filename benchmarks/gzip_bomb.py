"""Gzip bombs against the record readers: time and peak memory of ``twilight replay`` and
of ``twilight arena --deals-file`` on small gzip files that grow to gigabytes.

Each file kind is read up to its own size limit (``docs/RECORDS.md``, "Size limits") and
refused as soon as the limit is passed. This script writes, in a temporary folder:

- ``bomb.json.gz``: one "record" of ``--gib`` GiB of spaces (about 1 MB per GiB);
- ``bomb.jsonl.gz``: a records file of ``--gib`` GiB of blank lines;
- ``deals.json.gz``: a deal file of ``--gib`` GiB of spaces;

then runs the command on each in a fresh process and prints the wall time, the child's
peak resident memory (``ru_maxrss``), the exit status and the error line.

Usage::

    python benchmarks/gzip_bomb.py [--gib 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import zlib


def write_bomb(path: str, size: int, unit: bytes) -> int:
    """A gzip file that decompresses to ``size`` bytes of ``unit``; returns its size in bytes."""
    chunk = unit * ((1 << 20) // len(unit))
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for _ in range(size // len(chunk)):
            f.write(c.compress(chunk))
        f.write(c.flush())
    return os.path.getsize(path)


def measure(cmd: list[str]) -> tuple[float, float, int, str]:
    """Run ``cmd`` in a fresh process (``resource`` sees one child at a time): seconds, peak
    resident MB, exit status, last line of stderr."""
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode); "
            "print((p.stderr.strip().splitlines() or [''])[-1])")
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True, check=True).stdout
    first, last = out.split("\n", 1)
    seconds, rss_kb, rc = first.split()
    return float(seconds), int(rss_kb) / 1024, int(rc), last.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.0, help="uncompressed size of each bomb (GiB)")
    args = ap.parse_args()
    size = int(args.gib * (1 << 30))
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >= 0
    twilight = [sys.executable, "-m", "twilight_env.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("record", "bomb.json.gz", b" ", ["replay"]),
                 ("records file", "bomb.jsonl.gz", b"\n", ["replay"]),
                 ("deal file", "deals.json.gz", b" ",
                  ["arena", "random", "random", "--deals", "2", "--quiet", "--out", os.path.join(tmp, "o"),
                   "--deals-file"])]
        print(f"{'file':<13} {'gz bytes':>10} {'seconds':>8} {'peak MB':>8} {'exit':>5}  error line")
        for kind, name, unit, cmd in cases:
            path = os.path.join(tmp, name)
            t0 = time.perf_counter()
            gz = write_bomb(path, size, unit)
            made = time.perf_counter() - t0
            seconds, peak, rc, line = measure(twilight + cmd + [path])
            print(f"{kind:<13} {gz:>10,} {seconds:>8.2f} {peak:>8.0f} {rc:>5}  {line[:150]}"
                  f"  (bomb made in {made:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
