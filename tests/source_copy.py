"""A copy of the source files a clone has, for tests that build the wheel.

Building from the checkout itself writes ``build/`` and ``*.egg-info`` into it, so two
builds at once (``pytest -n 2``) race on the same folders and an earlier build's leftovers
can enter the wheel. A build from this copy, in a folder of the test's own, does neither.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_source(dest: Path) -> Path:
    """Copy the files git would give a clone (tracked, plus new files that are not ignored)
    into ``dest`` and return it; without git (or outside a repository), return the checkout
    itself."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return ROOT
    listed = subprocess.run(["git", "--no-optional-locks", "-C", str(ROOT), "ls-files", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, text=True, check=True).stdout
    for rel in listed.splitlines():
        f = ROOT / rel
        if f.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest / rel)
    return dest
