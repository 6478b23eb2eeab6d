"""What ``twilight serve`` guards against (docs/SERVE.md, What the server guards against):
agents only from the server's list with capped options and no file names, JSON bodies
only, trusted Host and Origin, security headers, the body limit while reading, nested
JSON, bounded replay answers and watched matches, hints and advances that never hold a
game's lock for long."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from twilight_env.serve import specs  # noqa: E402
from twilight_env.serve.app import MAX_BODY, REPLAY_PAGE, create_app, replay_frames  # noqa: E402
from twilight_env.serve.games import DEALS_SHOWN, MAX_TARGET, Game  # noqa: E402
from twilight_env.serve.guard import CSP  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "records"))
from records_helpers import play_match  # noqa: E402

from serve_live import LiveServer, ServerProcess, memory_kib  # noqa: E402

BASE = "http://127.0.0.1"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def client():
    with TestClient(create_app(), base_url=BASE) as c:
        yield c


def new_game(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


# -- agents: a list of names with capped options, no files -------------------------------------

FILE_SPECS = [
    ("pimc:inference={}", ["/etc/passwd", "/no/such/file"]),
    ("ismcts:inference={}", ["/etc/passwd", "/no/such/file"]),
    ("neural:path={}", ["/proc/self/environ", "/no/such/file"]),
    ("neural:{}", ["/etc/passwd", "/no/such/file"]),
    ("exit:path={}", ["/etc/hostname", "/no/such/file"]),
    ("exit-search:path={},iterations=10", ["/etc/passwd", "/no/such/file"]),
    ("guided:path={},iterations=10", ["/etc/passwd", "/no/such/file"]),
    ("pimc:inference={}", ["agents/weights/inference_4p.pt", "no_such.pt"]),  # relative paths too
    ("neural:path={}", ["..", "run"]),
]


@pytest.mark.parametrize("template, paths", FILE_SPECS)
def test_a_spec_naming_a_file_gets_the_same_answer_whether_or_not_it_exists(client, template, paths):
    answers = []
    for path in paths:
        spec = template.format(path)
        for url, body in [("/api/games", {"opponents": spec}), ("/api/games", {"partner": spec}),
                          ("/api/games", {"mode": "watch", "agents": spec})]:
            r = client.post(url, json=body)
            answers.append((url, json.dumps(body).replace(path, "PATH"), r.status_code, r.text))
            assert r.status_code == 400 and path not in r.text, r.text
            assert "loads no file" in r.json()["error"]
    by_path = [answers[:len(answers) // 2], answers[len(answers) // 2:]]
    assert [a[2:] for a in by_path[0]] == [a[2:] for a in by_path[1]]  # same status and body
    assert len(client.app.state.store) == 0
    # a hint naming a file is refused the same way
    v = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=1)
    hints = [client.post(f"/api/games/{v['id']}/hint", json={"agent": template.format(p)}) for p in paths]
    assert hints[0].status_code == hints[1].status_code == 400 and hints[0].text == hints[1].text


DEAL = [["SP", "SC2", "S5", "SA", "MC1", "M4", "MO"],
        ["SC1", "S3", "S6", "ST", "MP", "MC3", "M5"],
        ["SC3", "SC4", "S7", "SO", "MC2", "M6", "MA"],
        ["SC5", "S4", "MC4", "MC5", "M3", "M7", "MT"]]


@pytest.mark.parametrize("spec, words", [
    ("ismcts:iterations=1000000000", f"1..{specs.MAX_ITERATIONS}"),
    ("exit-search:iterations=1000000000", f"1..{specs.MAX_ITERATIONS}"),
    ("guided:iterations=1000000000", f"1..{specs.MAX_ITERATIONS}"),
    ("guided:batch=100000", "1..256"),
    ("guided:lam=2", "option 'lam'"),
    ("pimc:worlds=100000", f"1..{specs.MAX_WORLDS}"),
    ("pimc:solver_tricks=7", "0..3"),
    ("ismcts:c=nan", "option 'c'"),
    ("ismcts:c=inf", "option 'c'"),
    ("ismcts:iterations=1e9", "must be an int"),
    ("neural:threads=64", "takes no option 'threads'"),
    ("openspiel:ismcts", "not served here"),
    ("pimc:" + "worlds=1," * 40, "at most"),
])
def test_options_beyond_the_caps_are_refused(client, spec, words):
    for body in ({"opponents": spec}, {"mode": "watch", "agents": spec}):
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and words in r.json()["error"], r.text
    v = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=1)
    r = client.post(f"/api/games/{v['id']}/hint", json={"agent": spec})
    assert r.status_code == 400 and words in r.json()["error"], r.text
    assert len(client.app.state.store) == 1


def test_the_allowed_agents_and_caps_are_listed(client):
    r = client.get("/api/agents").json()
    assert r["agents"] == specs.allowed_agents() and "openspiel" not in r["agents"]
    assert r["options"]["ismcts"]["iterations"] == {"type": "int", "min": 1, "max": specs.MAX_ITERATIONS}
    assert r["options"]["pimc"]["inference"] == {"type": "choice", "values": ["uniform", "model"]}
    assert r["options"]["neural"]["path"]["values"] == ["default"]


def test_shipped_models_are_named_not_pathed(client):
    v = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=1,
                 opponents="pimc:worlds=4,inference=model", partner="neural:default")
    assert v["who"] == ["you", "pimc:worlds=4,inference=model", "neural:default", "pimc:worlds=4,inference=model"]
    h = client.post(f"/api/games/{v['id']}/hint", json={"agent": f"ismcts:iterations={specs.MAX_ITERATIONS}"})
    assert h.status_code == 200 and h.json()["action"] in {m["action"] for m in v["legal"]}  # at the cap: answers


# -- decisions never hold a game for long --------------------------------------------------------

def test_a_hint_thinks_outside_the_game_lock(client, monkeypatch):
    """While a hint's agent thinks, the game answers and takes the person's move."""
    thinking, release = threading.Event(), threading.Event()
    real = Game.hint_for

    def slow_hint(spec, info, step):
        thinking.set()
        assert release.wait(30)
        return real(spec, info, step)
    monkeypatch.setattr(Game, "hint_for", staticmethod(slow_hint))
    v = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=1)
    answer = {}
    t = threading.Thread(target=lambda: answer.update(
        r=client.post(f"/api/games/{v['id']}/hint", json={"agent": "heuristic"})))
    t.start()
    assert thinking.wait(30)
    r = client.post(f"/api/games/{v['id']}/move", json={"action": v["legal"][0]["action"]})
    assert r.status_code == 200 and r.json()["step"] == 1  # the lock was free while the hint thought
    release.set()
    t.join(30)
    assert answer["r"].status_code == 200  # the hint answers for the position it was asked about


def test_an_abandoned_advance_frees_its_game(monkeypatch):
    """A client that asks for 1000 slow agent moves and hangs up: the advance stops after
    the decision under way, and the game answers at once (no waiting for 1000 moves). The
    advance's time budget is lifted here, so only the hang-up can stop it."""
    import twilight_env.serve.app as app_module

    monkeypatch.setattr(app_module, "ADVANCE_SECONDS", 3600.0)
    app = create_app()
    with LiveServer(app) as srv:
        c = TestClient(app, base_url=BASE)
        # a match to 10,000 lasts far more than 1000 moves: only the hang-up can end the advance early
        v = c.post("/api/games", json={"mode": "watch", "players": 4, "seed": 3, "episode": "match",
                                       "target": 10_000}).json()
        game = app.state.store.get(v["id"])
        calls = []
        for agent in game.agents.values():
            real = agent.act

            def slow(info, legal, rng, real=real):
                calls.append(1)
                time.sleep(0.05)
                return real(info, legal, rng)
            agent.act = slow
        s = socket.create_connection(("127.0.0.1", srv.port))
        body = b'{"steps": 1000}'
        s.sendall(b"POST /api/games/%s/advance HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (v["id"].encode(), len(body), body))
        deadline = time.monotonic() + 60
        while len(calls) < 3 and time.monotonic() < deadline:  # the advance is under way
            time.sleep(0.01)
        assert len(calls) >= 3
        s.close()  # the client goes away
        import http.client
        h = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        h.request("GET", f"/api/games/{v['id']}")
        r = h.getresponse()
        view = json.loads(r.read())
        assert r.status == 200
        # the GET waits for the game's lock: without the hang-up check it would come after all
        # 1000 moves (50 s); it came within a few decisions of the hang-up
        assert view["step"] < 200, view["step"]


def test_an_advance_stops_after_its_time_budget(client, monkeypatch):
    import twilight_env.serve.app as app_module

    monkeypatch.setattr(app_module, "ADVANCE_SECONDS", 0.0)
    v = new_game(client, mode="watch", players=4, seed=2)
    r = client.post(f"/api/games/{v['id']}/advance", json={"steps": 1000})
    assert r.status_code == 200 and r.json()["made"] == 1  # at least one move, then the budget stops it


# -- bodies ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("headers, content", [
    ({"Content-Type": "text/plain"}, b'{"players": 4}'),
    ({"Content-Type": "application/x-www-form-urlencoded"}, b"players=4"),
    ({"Content-Type": "multipart/form-data; boundary=x"}, b"--x--"),
    ({}, b'{"players": 4}'),  # no Content-Type at all
    ({"Content-Type": "application/json; charset=latin-1"}, b'{"players": 4}'),
    ({"Content-Type": "application/jsonp"}, b'{"players": 4}'),
])
def test_only_json_bodies_are_accepted(client, headers, content):
    for path in ("/api/games", "/api/replay"):
        r = client.post(path, content=content, headers=headers)
        assert r.status_code == 415 and "application/json" in r.json()["error"], r.text
    assert len(client.app.state.store) == 0


def test_json_with_charset_and_a_byte_order_mark_is_accepted(client):
    r = client.post("/api/games", content=b'{"players": 3}',
                    headers={"Content-Type": "application/json; charset=UTF-8"})
    assert r.status_code == 201
    r = client.post("/api/games", content=b'\xef\xbb\xbf{"players": 4}', headers=JSON)
    assert r.status_code == 201 and r.json()["num_players"] == 4


@pytest.mark.parametrize("path", ["/api/games", "/api/replay"])
def test_json_nested_100000_deep_is_a_one_line_400(client, path):
    body = b"[" * 100_000 + b"]" * 100_000
    r = client.post(path, content=body, headers=JSON)
    assert r.status_code == 400, r.text
    msg = r.json()["error"]
    assert "deep" in msg and "\n" not in msg and len(msg) < 300
    assert len(client.app.state.store) == 0


@pytest.mark.parametrize("path", ["/api/games", "/api/replay"])
def test_an_integer_of_100000_digits_is_a_one_line_400(client, path):
    """Python refuses to read integers of more than 4,300 digits: a 400 naming the body, not a 500."""
    r = client.post(path, content=b'{"players": ' + b"9" * 100_000 + b"}", headers=JSON)
    assert r.status_code == 400, r.text
    msg = r.json()["error"]
    assert msg.startswith("the request body") and "digits" in msg and "\n" not in msg
    assert len(client.app.state.store) == 0


def _post_chunked(port: int, path: str, total: int, chunk: int = 64 * 1024) -> tuple[int, bytes, int]:
    """POST ``total`` bytes in chunks without Content-Length; stop sending once the server
    answers. Returns (status, body, bytes sent)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")
    data = b" " * chunk
    sent = 0
    got = b""
    try:
        while sent < total:
            if select.select([s], [], [], 0)[0]:
                break
            s.sendall(b"%x\r\n" % len(data) + data + b"\r\n")
            sent += len(data)
        else:
            s.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        while b"\r\n\r\n" not in got or len(got) < got.index(b"\r\n\r\n") + 4 + 40:
            part = s.recv(65536)
            if not part:
                break
            got += part
    except ConnectionResetError:
        pass
    s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    return int(head.split()[1]), body, sent


def test_a_chunked_body_over_the_limit_is_refused_while_reading():
    """48 MiB sent chunked, with no Content-Length: 413 once 4 MiB have come, and the
    server's peak memory grows by a few MiB, not by the body."""
    with ServerProcess() as srv:
        before = memory_kib(srv.pid)
        status, body, sent = _post_chunked(srv.port, "/api/replay", 48 * 1024 * 1024)
        after = memory_kib(srv.pid)
    grew = (after["peak"] - before["peak"]) / 1024
    print(f"chunked 48 MiB: status {status}, {sent / 2**20:.1f} MiB sent before the answer; "
          f"server peak memory {before['peak'] / 1024:.1f} -> {after['peak'] / 1024:.1f} MiB (+{grew:.1f})")
    assert status == 413 and b"at most" in body
    assert sent < 48 * 1024 * 1024  # the server answered before the body ended
    assert grew < 16, f"the server's peak memory grew by {grew:.1f} MiB"


# -- bounded answers ---------------------------------------------------------------------------------

def big_match_record(max_bytes: int = MAX_BODY - 64 * 1024) -> dict:
    """A match record of random play just under ``max_bytes`` of JSON (many deals, target out of reach)."""
    from twilight_env.rules.engine import Config

    _, rec, _ = play_match(Config(num_players=4, target=10**7), 5, max_deals=860)
    while len(json.dumps(rec)) > max_bytes:
        _, rec, _ = play_match(Config(num_players=4, target=10**7), 5, max_deals=len(rec["deals"]) - 40)
    return rec


def test_replay_pages_match_the_whole_replay(client):
    from twilight_env.rules.engine import Config

    _, rec, _ = play_match(Config(num_players=3, target=10**7), 2, max_deals=3)
    whole = replay_frames(rec)
    pages = []
    offset = 0
    while True:
        r = client.post(f"/api/replay?offset={offset}&limit=7", json=rec).json()
        assert r["count"] == whole["count"] and r["offset"] == offset
        if not r["frames"]:
            break
        pages += r["frames"]
        offset += 7
    assert pages == whole["frames"]
    for bad in ("limit=0", f"limit={REPLAY_PAGE + 1}", "offset=-1", "offset=x", "limit=1e3"):
        r = client.post(f"/api/replay?{bad}", json=rec)
        assert r.status_code == 400 and "'" in r.json()["error"], (bad, r.text)


def test_a_large_match_record_gives_a_bounded_answer_and_memory():
    rec = big_match_record()
    raw = json.dumps(rec).encode()
    import http.client

    with ServerProcess() as srv:
        before = memory_kib(srv.pid)
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
        c.request("POST", "/api/replay", body=raw, headers=JSON)
        r = c.getresponse()
        first = r.read()
        c.request("POST", "/api/replay?offset=40000&limit=500", body=raw, headers=JSON)
        r2 = c.getresponse()
        later = json.loads(r2.read())
        after = memory_kib(srv.pid)
    page = json.loads(first)
    grew = (after["peak"] - before["peak"]) / 1024
    print(f"replay of a {len(raw) / 1e6:.2f} MB match record ({len(rec['deals'])} deals, {page['count']} positions): "
          f"first answer {len(first) / 1e6:.2f} MB; server peak memory {before['peak'] / 1024:.0f} -> "
          f"{after['peak'] / 1024:.0f} MiB (+{grew:.0f})")
    assert r.status == 200 and len(page["frames"]) == REPLAY_PAGE and page["count"] > 40000
    assert len(first) < 2_000_000  # a page, not the 87 MB of every position
    assert r2.status == 200 and later["frames"][0]["index"] == 40000
    assert grew < 160, f"the server's peak memory grew by {grew:.0f} MiB"


def test_a_watched_match_keeps_a_window_of_deals(client):
    r = client.post("/api/games", json={"mode": "watch", "episode": "match", "target": 10**9})
    assert r.status_code == 400 and f"1..{MAX_TARGET}" in r.json()["error"]
    v = new_game(client, mode="watch", episode="match", target=MAX_TARGET, agents="random", seed=1)
    sizes = {}
    while v["deals_played"] < 3 * DEALS_SHOWN and not v["over"]:
        v = client.post(f"/api/games/{v['id']}/advance", json={"steps": 1000}).json()
        if v["deals_played"] in (DEALS_SHOWN + 1, 3 * DEALS_SHOWN) or v["deals_played"] >= 3 * DEALS_SHOWN:
            sizes.setdefault(v["deals_played"] > DEALS_SHOWN + 1, len(json.dumps(v)))
    assert v["deals_played"] >= 3 * DEALS_SHOWN
    assert len(v["deals"]) == DEALS_SHOWN and v["deals"][-1]["deal"] == v["deals_played"]
    assert sizes[True] < 1.2 * sizes[False]  # the view stopped growing with the deals


# -- hosts, origins, headers -------------------------------------------------------------------------

PATHS = [("GET", "/"), ("GET", "/static/app.js"), ("GET", "/api/agents"), ("POST", "/api/games"),
         ("GET", "/api/games/nope"), ("POST", "/api/replay"), ("GET", "/nothing")]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "attacker",
                                  "localhost.evil.example:80", "", "127.0.0.1:notaport", "user@127.0.0.1"])
def test_a_foreign_host_is_refused_on_every_path(client, host):
    for method, path in PATHS:
        r = client.request(method, path, headers={"Host": host, **JSON}, content=b"{}")
        assert r.status_code == 400 and "Host" in r.json()["error"], (host, path, r.text)
    assert len(client.app.state.store) == 0


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1", "[::1]:8000", "[::1]", "LOCALHOST"])
def test_loopback_hosts_are_served(client, host):
    assert client.get("/api/agents", headers={"Host": host}).status_code == 200


def test_the_bound_address_and_extra_names_are_trusted():
    with TestClient(create_app(host="192.168.7.9", allow_hosts=("twilight.lan",)), base_url=BASE) as c:
        for host in ("192.168.7.9:8000", "twilight.lan", "127.0.0.1"):
            assert c.get("/api/agents", headers={"Host": host}).status_code == 200, host
        assert c.get("/api/agents", headers={"Host": "192.168.7.10"}).status_code == 400


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:9999", "http://localhost",
                                    "file://", "http://127.0.0.1.evil.example"])
def test_a_foreign_origin_is_refused(client, origin):
    # the client's Host is 127.0.0.1: only http(s)://127.0.0.1 is its own origin
    for method, path in PATHS:
        r = client.request(method, path, headers={"Origin": origin, **JSON}, content=b"{}")
        assert r.status_code == 403 and "other sites" in r.json()["error"], (origin, path, r.text)
    assert len(client.app.state.store) == 0


def test_same_origin_and_no_origin_are_served(client):
    assert client.post("/api/games", json={}, headers={"Origin": BASE}).status_code == 201
    assert client.post("/api/games", json={}).status_code == 201  # curl and scripts send no Origin
    r = client.post("/api/games", json={}, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403 and len(client.app.state.store) == 2


def test_security_headers_on_every_answer(client):
    answers = [client.get("/"), client.get("/static/app.js"), client.get("/api/agents"),
               client.post("/api/games", json={}), client.get("/api/games/nope"), client.get("/nothing"),
               client.post("/api/games", json={"players": 5}), client.post("/api/games", content=b"x"),
               client.get("/", headers={"Host": "evil.example"}), client.get("/", headers={"Origin": "null"}),
               client.post("/api/replay", content=b" " * (MAX_BODY + 1), headers=JSON)]
    assert sorted({r.status_code for r in answers}) == [200, 201, 400, 403, 404, 413, 415]
    for r in answers:
        assert r.headers["content-security-policy"] == CSP
        assert "frame-ancestors 'none'" in CSP and "default-src 'self'" in CSP
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"


def test_an_internal_error_has_the_headers_too(client, monkeypatch):
    v = new_game(client, mode="watch", players=4, seed=1)
    game = client.app.state.store.get(v["id"])
    for agent in game.agents.values():
        monkeypatch.setattr(agent, "act", lambda *a, **k: 1 / 0)
    with TestClient(client.app, raise_server_exceptions=False, base_url=BASE) as c:
        r = c.post(f"/api/games/{v['id']}/advance", json={"steps": 1})
    assert r.status_code == 500 and "ZeroDivisionError" in r.json()["error"]
    assert r.headers["x-frame-options"] == "DENY" and r.headers["content-security-policy"] == CSP


def test_the_page_needs_no_inline_script_or_style():
    """CSP forbids inline scripts and styles: the page has none (the browser tests play with it)."""
    import re

    from twilight_env.serve.app import STATIC_DIR

    html = open(os.path.join(STATIC_DIR, "index.html"), encoding="utf-8").read()
    js = open(os.path.join(STATIC_DIR, "app.js"), encoding="utf-8").read()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert not re.search(r"<style|\sstyle=|\son[a-z]+=|javascript:", html, re.I)
    assert not re.search(r"\sstyle=|\son[a-z]+=|javascript:|<script", js, re.I)


# -- the token for --allow-remote ------------------------------------------------------------------

def test_a_token_is_needed_on_every_request_when_set():
    token = "t0ken-" + "x" * 20
    with TestClient(create_app(host="0.0.0.0", token=token), base_url=BASE) as c:
        for method, path in PATHS:
            r = c.request(method, path, headers=JSON, content=b"{}")
            assert r.status_code == 403 and "token" in r.json()["error"], (path, r.text)
        for bad in ("Authorization", "token wrong-" + "y" * 20), ("Authorization", f"Basic {token}"):
            assert c.get("/api/agents", headers=dict([bad])).status_code == 403
        assert c.get("/api/agents", headers={"Authorization": f"token {token}"}).status_code == 200
        assert c.get("/api/agents", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert c.get(f"/api/agents?token=wrong{token}").status_code == 403
        r = c.get(f"/?token={token}")  # the printed address: the answer sets the cookie
        assert r.status_code == 200 and "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in \
            r.headers["set-cookie"]
        assert c.post("/api/games", json={}).status_code == 201  # the cookie carries it from now on
        assert len(c.app.state.store) == 1
