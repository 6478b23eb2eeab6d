"""``twilight serve`` on the command line: registered, loopback by default, limits passed on."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")

from twilight_env import cli  # noqa: E402


def test_serve_binds_to_loopback_by_default(monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: seen.update(app=app, host=host, port=port))
    assert cli.main(["serve"]) == 0
    assert seen["host"] == "127.0.0.1" and seen["port"] == 8000
    limits = seen["app"].state.store.limits
    assert limits.max_games == 200
    assert "http://127.0.0.1:8000/" in capsys.readouterr().out


def test_serve_options_reach_the_server(monkeypatch):
    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: seen.update(app=app, host=host, port=port))
    assert cli.main(["serve", "--host", "0.0.0.0", "--allow-remote", "--port", "8765", "--max-games", "7",
                     "--idle-minutes", "2", "--finished-minutes", "0.5"]) == 0
    limits = seen["app"].state.store.limits
    assert (seen["host"], seen["port"]) == ("0.0.0.0", 8765)
    assert (limits.max_games, limits.idle_seconds, limits.finished_seconds) == (7, 120, 30)


def test_serve_rejects_bad_limits(monkeypatch, capsys):
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("must not start"))
    assert cli.main(["serve", "--max-games", "0"]) == 2
    assert "max_games must be an int >= 1" in capsys.readouterr().err
    assert cli.main(["serve", "--port", "70000"]) == 2
    assert "--port must be 0..65535" in capsys.readouterr().err


def test_serve_is_listed_in_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "serve" in capsys.readouterr().out
