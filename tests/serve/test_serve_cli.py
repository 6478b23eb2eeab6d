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


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "myhost.example"])
def test_serve_beyond_loopback_is_refused_without_allow_remote(monkeypatch, capsys, host):
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("must not start"))
    assert cli.main(["serve", "--host", host]) == 2
    err = capsys.readouterr().err
    assert "--allow-remote" in err and host in err


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_serve_on_loopback_needs_no_token(monkeypatch, capsys, host):
    from starlette.testclient import TestClient

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: seen.update(app=app))
    assert cli.main(["serve", "--host", host]) == 0
    out, err = capsys.readouterr()
    assert "token" not in out and "WARNING" not in err
    with TestClient(seen["app"], base_url="http://127.0.0.1") as c:
        assert c.get("/api/agents").status_code == 200
    assert cli.main(["serve", "--host", host, "--token", "x" * 20]) == 2
    assert "beyond loopback" in capsys.readouterr().err


def test_serve_with_allow_remote_warns_and_needs_the_printed_token(monkeypatch, capsys):
    from starlette.testclient import TestClient

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: seen.update(app=app, host=host))
    assert cli.main(["serve", "--host", "0.0.0.0", "--allow-remote", "--port", "8123"]) == 0
    out, err = capsys.readouterr()
    assert "WARNING" in err and "beyond this machine" in err and "token" in err
    url = next(w for w in out.split() if "?token=" in w)
    token = url.split("?token=")[1]
    assert url.startswith("http://127.0.0.1:8123/?token=") and len(token) >= 40
    remote = next(line for line in out.splitlines() if line.startswith("from another machine"))
    assert not any(name in remote.split("one of", 1)[-1] for name in ("127.0.0.1", "localhost", "::1")), remote
    with TestClient(seen["app"], base_url="http://127.0.0.1") as c:
        assert c.get("/api/agents").status_code == 403
        assert c.get("/api/agents", headers={"Authorization": f"token {token}"}).status_code == 200
        assert c.get(f"/?token={token}").status_code == 200
        assert c.get("/api/agents").status_code == 200  # the cookie set by the page
    # a fresh token each start; a given one is checked
    assert cli.main(["serve", "--host", "0.0.0.0", "--allow-remote"]) == 0
    assert token not in capsys.readouterr().out
    assert cli.main(["serve", "--host", "0.0.0.0", "--allow-remote", "--token", "short"]) == 2
    assert "--token must be" in capsys.readouterr().err
    assert cli.main(["serve", "--host", "0.0.0.0", "--allow-remote", "--token", "k" * 24]) == 0
    assert "?token=" + "k" * 24 in capsys.readouterr().out
