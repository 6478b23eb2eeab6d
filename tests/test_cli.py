"""The `twilight` dispatcher: version, help, and clean errors for missing optional packages."""

import sys

import pytest

from twilight_env import __version__
from twilight_env.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_missing_optional_dependency_is_a_clean_error(monkeypatch, capsys, tmp_path):
    # a core-only install has no tqdm/openskill: the command must name the extra, not crash
    for name in ("tqdm", "tqdm.auto", "openskill", "openskill.models"):
        monkeypatch.setitem(sys.modules, name, None)
    rc = main(["arena", "random", "random", "--deals", "2", "--workers", "1", "--quiet",
               "--out", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "'study' extra" in err and 'pip install -e ".[study]"' in err


@pytest.mark.parametrize("error", [EOFError("Compressed file ended before the end-of-stream marker was reached"),
                                   RecursionError("maximum recursion depth exceeded")])
def test_damaged_input_a_reader_missed_is_still_one_line(monkeypatch, capsys, tmp_path, error):
    """A last guard: EOFError/RecursionError from a reader are one line, exit 2, no traceback."""
    import twilight_env.records.replay_log as replay_log

    def boom(args):
        raise error

    monkeypatch.setattr(replay_log, "run", boom)
    assert main(["replay", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("twilight replay: error: damaged input (") and str(error) in err
