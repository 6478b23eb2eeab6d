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
