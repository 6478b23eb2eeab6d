"""The training commands the docs name (``python -m twilight_env.training.MODULE --help``)
give every option's default: each option whose default is set says it in its help."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def options_without_default(help_text: str) -> list[str]:
    """The options of an argparse ``--help`` page whose help says no default, bar ``-h`` and
    flags that are off unless given (their help says what they turn on)."""
    body = help_text.split("options:", 1)[1]
    out = []
    for block in re.split(r"\n  (?=-)", "\n" + body):
        text = " ".join(block.split())
        m = re.match(r"(--[\w-]+)( [A-Z][A-Z_:]*\b| \{| \[)?", text)  # the option and its metavar, if any
        if not m or m.group(1) == "--help" or m.group(2) is None or "default" in text or "required" in text:
            continue
        out.append(m.group(1))
    return out


@pytest.mark.parametrize("module", ["best_response", "bench", "inference_data", "br_validation", "reduced_solve"])
def test_every_option_with_a_value_gives_its_default(module):
    r = subprocess.run([sys.executable, "-m", f"twilight_env.training.{module}", "--help"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith(f"usage: python -m twilight_env.training.{module}"), r.stdout[:200]
    missing = options_without_default(r.stdout)
    allowed = {"best_response": {"--out", "--resume", "--evaluate", "--ray", "--actors"},
               "br_validation": {"--responder", "--out"}}.get(module, set())
    assert set(missing) <= allowed, missing


def test_the_scan_finds_an_option_without_its_default():
    page = ("usage: x\n\noptions:\n  -h, --help  show this help message and exit\n"
            "  --seed SEED  random seed\n  --deals DEALS  deals (default 5)\n  --quiet  no progress\n")
    assert options_without_default(page) == ["--seed"]
