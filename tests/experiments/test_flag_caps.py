"""Flags that size a run are capped: ``--deals`` above the cap is refused with the allowed
range before anything is drawn, more ``--workers`` than CPU cores print a warning, and more than
``MAX_WORKERS`` are refused before any process starts."""

from __future__ import annotations

import pytest

import twilight_env.experiments.common as common
import twilight_env.experiments.edge.solo_edge as edge
from twilight_env.cli import main
from twilight_env.util.argtypes import MAX_DEALS


def _exit_status(argv) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse refuses a flag's value with status 2
        return e.code


@pytest.mark.parametrize("argv", [["edge", "random", "--deals", str(10 ** 12)],
                                  ["arena", "random", "random", "--deals", str(2 ** 63)],
                                  ["ladder", "random", "heuristic", "--deals", str(MAX_DEALS + 1)]])
def test_deals_above_the_cap_are_refused_with_the_range(tmp_path, capsys, argv):
    assert _exit_status(argv + ["--out", str(tmp_path / "o"), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert f"1..{MAX_DEALS:,}" in err and "--deals" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_deals_above_the_cap_are_refused_in_the_api(tmp_path):
    with pytest.raises(ValueError, match=f"--deals must be an integer in 2..{MAX_DEALS:,}"):
        edge.run_study(["random"], deals=10 ** 12, out=str(tmp_path / "o"), workers=1, progress=False)
    assert not (tmp_path / "o").exists()


def test_more_workers_than_cores_warn(monkeypatch, capsys):
    monkeypatch.setattr(common.os, "cpu_count", lambda: 2)
    assert common.check_workers(2) == 2
    assert capsys.readouterr().err == ""
    assert common.check_workers(30) == 30
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--workers 30 is more than the 2 CPU core(s)" in err


@pytest.mark.parametrize("argv", [["arena", "random", "random", "--deals", "1000"],
                                  ["edge", "random", "--deals", "1000"],
                                  ["ladder", "random", "heuristic", "--deals", "1000"]])
def test_workers_above_the_cap_are_refused(tmp_path, capsys, argv):
    assert _exit_status(argv + ["--out", str(tmp_path / "o"), "--workers", "100000"]) == 2
    err = capsys.readouterr().err
    assert f"--workers must be at most {common.MAX_WORKERS}" in err and "100,000" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists()
    assert common.check_workers(common.MAX_WORKERS) == common.MAX_WORKERS
