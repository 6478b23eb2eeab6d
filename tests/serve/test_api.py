"""HTTP API of ``twilight serve`` (Starlette TestClient): moves, errors, games kept apart,
limits, hints, watched games, records, and what a person's seat may see (R2.5, R7.1)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from twilight_env.rules.cards import CARDS, CULT  # noqa: E402
from twilight_env.rules.engine import State  # noqa: E402
from twilight_env.records import game_records as records  # noqa: E402
from twilight_env.serve.app import create_app  # noqa: E402
from twilight_env.serve.games import Limits  # noqa: E402

# one fixed deal by seat (R2.2): seat 0 holds SP and more Sun, etc.
DEAL = [["SP", "SC2", "S5", "SA", "MC1", "M4", "MO"],
        ["SC1", "S3", "S6", "ST", "MP", "MC3", "M5"],
        ["SC3", "SC4", "S7", "SO", "MC2", "M6", "MA"],
        ["SC5", "S4", "MC4", "MC5", "M3", "M7", "MT"]]
CODE = re.compile(r"\b[SM](?:P|C[1-5]|[3-7]|A|T|O)\b")


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def client():
    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield c


def new_game(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def play_to_end(client, view, rng, collect=None):
    """Play the person's moves at random (legal ones) and let the agents move; returns the last view."""
    gid = view["id"]
    while not view["over"]:
        if view["to_act"]:
            move = view["legal"][int(rng.integers(len(view["legal"])))]
            r = client.post(f"/api/games/{gid}/move", json={"action": move["action"], "step": view["step"]})
        else:
            r = client.post(f"/api/games/{gid}/advance", json={"steps": 1})
        assert r.status_code == 200, r.text
        view = r.json()
        if collect is not None:
            collect.append(view)
    return view


def side_scores_by_cult(view) -> dict:
    return {s["cult"]: s["score"] for s in view["sides"]}


# -- moves and errors -----------------------------------------------------------------

def test_illegal_move_is_422_and_changes_nothing(client):
    v = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=1)  # seat 0 leads (R2.4)
    assert v["to_act"] and v["phase"] == "choose"
    gid = v["id"]
    legal = {m["action"] for m in v["legal"]}
    illegal = [a for a in range(31) if a not in legal]
    assert CARDS.index("MC1") in illegal  # a Moon card is not the Sun chooser's to play (R3.2)
    for a in illegal:
        r = client.post(f"/api/games/{gid}/move", json={"action": a})
        assert r.status_code == 422, (a, r.text)
        assert "illegal move" in r.json()["error"] and "legal:" in r.json()["error"]
        assert client.get(f"/api/games/{gid}").json() == v
    for body in ({}, {"action": "SP"}, {"action": True}, {"action": 31}, {"action": -1}, {"action": 1.0}, [1]):
        r = client.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == 400, (body, r.text)
        assert "action" in r.json()["error"]
    r = client.post(f"/api/games/{gid}/move", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "JSON" in r.json()["error"]
    r = client.post(f"/api/games/{gid}/move", json={"action": min(legal), "step": 5})
    assert r.status_code == 409 and "step" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == v
    # a legal move is applied; then it is the agents' turn, so another move is refused
    r = client.post(f"/api/games/{gid}/move", json={"action": min(legal)})
    assert r.status_code == 200 and r.json()["step"] == 1
    after = r.json()
    r = client.post(f"/api/games/{gid}/move", json={"action": min(legal)})
    assert r.status_code == 409 and "not your turn" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == after


@pytest.mark.parametrize("body, words", [
    ({"players": 5}, "'players' must be 3 or 4"),
    ({"players": 3, "seat": 2}, "2 is the new moon"),
    ({"seat": 4}, "0..3"),
    ({"mode": "spectate"}, "'mode'"),
    ({"episode": "tournament"}, "'episode'"),
    ({"opponents": "grandmaster"}, "valid agents"),
    ({"opponents": "heuristic:depth=3"}, "no option"),
    ({"colour": "red"}, "unknown option"),
    ({"seed": -1}, "'seed'"),
    ({"mode": "watch", "agents": ["random"] * 3}, "list of 4"),
    ({"mode": "watch", "seat": 1}, "'seat' is for mode 'play'"),
    ({"deal": [["SP"]]}, "deal"),
    ({"players": 3, "dealer": 1}, "'dealer' is for 4 players"),
])
def test_bad_game_options_are_400_with_a_reason(client, body, words):
    r = client.post("/api/games", json=body)
    assert r.status_code == 400, r.text
    assert words in r.json()["error"]
    assert len(client.app.state.store) == 0


def test_unknown_game_and_path_are_404(client):
    for method, path in [("GET", "/api/games/nope"), ("POST", "/api/games/nope/move"),
                         ("POST", "/api/games/nope/advance"), ("POST", "/api/games/nope/hint"),
                         ("GET", "/api/games/nope/record"), ("DELETE", "/api/games/nope"),
                         ("GET", "/api/nothing")]:
        r = client.request(method, path, json={"action": 0})
        assert r.status_code == 404, (method, path, r.text)
        assert "error" in r.json()


def test_page_and_static_files_are_served(client):
    r = client.get("/")
    assert r.status_code == 200 and "/static/app.js" in r.text and "request" in r.text.lower()
    for f in ("app.js", "style.css"):
        assert client.get(f"/static/{f}").status_code == 200
    agents = client.get("/api/agents").json()
    assert "heuristic" in agents["agents"] and agents["default"] == "heuristic"


def test_the_agent_list_names_the_agents_this_install_cannot_run(client, monkeypatch):
    """``GET /api/agents`` lists under ``unavailable`` the served agents whose package is
    missing (``exit`` and ``exit-search`` without torch), with the 400 message a game that
    names one gets, so the page can leave them out."""
    import importlib.util
    import sys

    from twilight_env.serve.specs import NEEDS

    here = client.get("/api/agents").json()["unavailable"]
    assert set(here) == {n for n, p in NEEDS.items() if importlib.util.find_spec(p) is None}
    monkeypatch.setitem(sys.modules, "torch", None)  # an install without torch
    monkeypatch.delitem(sys.modules, "twilight_env.agents.exit", raising=False)
    off = client.get("/api/agents").json()["unavailable"]
    assert set(off) == {"exit", "exit-search"}
    assert off["exit"]["needs"] == "torch" and "train" in off["exit"]["message"]
    r = client.post("/api/games", json={"mode": "watch", "players": 4, "agents": "exit-search:iterations=5"})
    assert r.status_code == 400 and "needs torch" in r.json()["error"], r.text


def test_the_agents_said_to_need_a_package_are_those_that_fail_without_it():
    """:data:`twilight_env.serve.specs.NEEDS` is right: with torch blocked, exactly the agents
    it names fail to import (the others run on the NumPy backends)."""
    import os
    import subprocess
    import sys

    code = ("import sys\nsys.modules['torch'] = None\n"
            "from twilight_env.agents.base import agent_factory\n"
            "from twilight_env.serve.specs import ALLOWED\n"
            "failed = []\n"
            "for name in sorted(ALLOWED):\n"
            "    try:\n        agent_factory(name)\n"
            "    except ImportError:\n        failed.append(name)\n"
            "print(','.join(failed))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    from twilight_env.serve.specs import NEEDS
    assert r.stdout.strip().split(",") == sorted(n for n, p in NEEDS.items() if p == "torch")


def test_two_games_do_not_share_state(client):
    a = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=3)
    b = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=3)
    assert a["id"] != b["id"]
    b_before = client.get(f"/api/games/{b['id']}").json()
    assert play_to_end(client, a, np.random.default_rng(0))["over"]
    end = client.get(f"/api/games/{a['id']}").json()
    assert client.get(f"/api/games/{b['id']}").json() == b_before
    # the other game plays on from its own start
    end_b = play_to_end(client, b_before, np.random.default_rng(1))
    assert end_b["over"] and client.get(f"/api/games/{a['id']}").json() == end


# -- whole deals against the engine ------------------------------------------------------

@pytest.mark.parametrize("players, seat", [(4, 1), (3, 0), (3, 3)])
def test_full_deal_score_equals_the_engines(client, players, seat):
    deal = DEAL
    extra = {"dealer": 3} if players == 4 else {}
    v = new_game(client, players=players, seat=seat, deal=deal, seed=5, **extra)
    assert v["you"]["seat"] == seat
    end = play_to_end(client, v, np.random.default_rng(players + seat))
    assert end["over"] and end["phase"] == "over" and end["to_act"] is False
    rec = client.get(f"/api/games/{v['id']}/record").json()
    # the record holds the deal that was asked for, and replays in the engine to the same score
    state = State.from_deal(deal, 0, players)
    assert [sorted(h) for h in rec["deal"]] == [sorted(h) for h in deal]
    for a in rec["actions"]:
        state.apply(a["action"])
    assert state.done
    sides = side_scores_by_cult(end)
    cult = state.seat_cult
    assert sides == {("sun", "moon")[cult[0]]: state.side_scores()[0], ("sun", "moon")[cult[1]]: state.side_scores()[1]}
    # and the env's own deal points agree
    game = client.app.state.store.get(v["id"])
    pts = game.env.infos["player_0"]["deal_points"]
    if players == 4:
        assert pts == {"sun": sides["sun"], "moon": sides["moon"]}
    else:
        solo = game.players[[game.env.seat_of(p) for p in game.players].index(0)]
        assert all(pts[p] == (sides["moon"] if p == solo else sides["sun"]) for p in game.players)
    assert end["deals"][0]["points"] == [pts[k.replace(" ", "_")] for k in end["lines"]]
    # the view names score lines as the record does, and credits them as it does (R5, R7.5)
    assert end["lines"] == rec["lines"] and end["deals"][0]["points"] == rec["deal_points"]
    assert [c["line"] for c in end["credited"]] == rec["lines"]
    assert [c["points"] for c in end["credited"]] == rec["deal_points"]
    if players == 3:  # solo line: seats 0 and 2 (the new moon); the others their own seat (R7.4)
        assert [c["seats"] for c in end["credited"]] == \
            [[0, 2] if i == rec["solo"] else [(0, 1, 3)[(i - rec["solo"]) % 3]] for i in range(3)]
        assert end["credited"][end["you"]["line"]]["seats"][0] == seat
    else:
        assert [c["seats"] for c in end["credited"]] == [[s for s in range(4) if cult[s % 2] == k] for k in (0, 1)]
        assert end["you"]["line"] == seat % 2
    assert v["credited"] is None  # nothing credited before the end


@pytest.mark.parametrize("players", [3, 4])
def test_match_plays_several_deals_to_the_target(client, players):
    v = new_game(client, players=players, seat=1, episode="match", target=150, seed=11)
    end = play_to_end(client, v, np.random.default_rng(2))
    assert end["over"] and len(end["deals"]) >= 1
    assert max(end["totals"]) >= 150
    assert end["totals"] == [sum(d["points"][i] for d in end["deals"]) for i in range(len(end["lines"]))]
    rec = client.get(f"/api/games/{v['id']}/record").json()
    records.validate(rec)
    assert rec["format"] == records.FORMAT_MATCH and rec["done"] and rec["totals"] == end["totals"]
    assert rec["agents"][1 if players == 4 else 0] == "human"
    # the winners shown are the record's (R6.1, R7.5): indices into the same lines
    assert end["lines"] == rec["lines"] and end["winners"] == rec["winners"] and end["winners"]
    for d, rd in zip(end["deals"], rec["deals"]):
        assert d["lines"] == rd["lines"] and d["points"] == rd["deal_points"] and d["totals"] == rd["totals_after"]
        assert [c["points"] for c in d["credited"]] == rd["deal_points"]
        assert rd["agents"][2] == (rd["agents"][0] if players == 3 else rd["agents"][2])
    assert end["credited"] == end["deals"][-1]["credited"]
    states = records.replay(rec)
    finals = [s for s in states if s.done]
    assert len(finals) == len(end["deals"])
    for s, d in zip(finals, end["deals"]):
        assert list(s.side_scores()) == d["sides"]


# -- hints and watched games ---------------------------------------------------------------

def test_hint_is_a_legal_move_of_the_chosen_agent(client):
    from twilight_env.agents.base import make_agent

    v = new_game(client, players=4, seat=0, deal=DEAL, dealer=3, seed=2)
    gid = v["id"]
    h = client.post(f"/api/games/{gid}/hint", json={"agent": "heuristic"}).json()
    assert h["action"] in {m["action"] for m in v["legal"]} and h["agent"] == "heuristic"
    game = client.app.state.store.get(gid)
    info = game.env.infoset(game.human)
    assert h["action"] == make_agent("heuristic").act(info, info.legal_actions, np.random.default_rng(0))
    assert client.get(f"/api/games/{gid}").json() == v  # a hint changes nothing
    r = client.post(f"/api/games/{gid}/hint", json={"agent": "oracle"})
    assert r.status_code == 400 and "valid agents" in r.json()["error"]
    client.post(f"/api/games/{gid}/move", json={"action": h["action"]})
    r = client.post(f"/api/games/{gid}/hint", json={"agent": "random"})
    assert r.status_code == 409


def test_watch_game_agents_play_to_the_end(client):
    v = new_game(client, mode="watch", players=3, agents=["heuristic", "random", "heuristic"], seed=4)
    gid = v["id"]
    assert v["you"] is None and v["legal"] == [] and v["agents_to_move"]
    assert all(s["hand"] is not None for s in v["seats"])  # a spectator sees every hand
    r = client.post(f"/api/games/{gid}/move", json={"action": 0})
    assert r.status_code == 409 and "watched" in r.json()["error"]
    r = client.post(f"/api/games/{gid}/advance", json={"steps": 3})
    assert r.json()["made"] == 3 and r.json()["step"] == 3
    for bad in ({"steps": 0}, {"steps": "all"}, {"steps": 10**6}):
        assert client.post(f"/api/games/{gid}/advance", json=bad).status_code == 400
    r = client.post(f"/api/games/{gid}/advance", json={"steps": 1000})
    end = r.json()
    assert end["over"] and end["step"] == 3 + r.json()["made"]
    assert client.get(f"/api/games/{gid}/record").status_code == 200


# -- records --------------------------------------------------------------------------------

def test_a_drawn_seed_is_shown_only_after_the_game(client):
    v = new_game(client, players=3, seat=0)
    views = [v]
    play_to_end(client, v, np.random.default_rng(4), collect=views)
    assert all(x["seed"] is None for x in views[:-1]) and views[-1]["over"]
    rec = client.get(f"/api/games/{v['id']}/record").json()
    assert views[-1]["seed"] == rec["seed"] and isinstance(rec["seed"], int)
    assert new_game(client, players=3, seed=77)["seed"] == 77  # a seed the person chose is theirs anyway


@pytest.mark.parametrize("seat", [0, 1])
def test_3p_record_names_the_person_human_and_the_new_moon_as_the_solo(client, seat):
    # docs/RECORDS.md: agents by seat, "human" for a person; seat 2 is decided by the solo (R7.3)
    v = new_game(client, players=3, seat=seat, opponents="random", partner="heuristic", seed=21)
    play_to_end(client, v, np.random.default_rng(seat))
    rec = client.get(f"/api/games/{v['id']}/record").json()
    records.validate(rec)
    solo = "human" if seat == 0 else "random"
    sun = {0: ["random", "random"], 1: ["human", "heuristic"]}[seat]
    assert rec["agents"] == [solo, sun[0], solo, sun[1]]
    answer = client.post("/api/replay", json=rec).json()
    assert answer["frames"][0]["deal"] == 1 and "who" not in answer["frames"][0]  # named once per deal
    assert answer["who"]["1"][2] == f"new moon ({solo})" and answer["who"]["1"][0] == solo


def test_record_download_equals_replay(client):
    v = new_game(client, players=4, seat=2, seed=8)
    assert client.get(f"/api/games/{v['id']}/record").status_code == 409  # not over yet
    views = [v]
    end = play_to_end(client, v, np.random.default_rng(3), collect=views)
    r = client.get(f"/api/games/{v['id']}/record")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    rec = r.json()
    assert rec["format"] == records.FORMAT_DEAL and rec["agents"][2] == "human"
    states = records.replay(json.loads(json.dumps(rec)))
    assert states[-1].done and len(states) == len(rec["actions"]) + 1
    assert {("sun", "moon")[states[-1].seat_cult[i]]: states[-1].side_scores()[i] for i in (0, 1)} \
        == side_scores_by_cult(end)
    frames = client.post("/api/replay", json=rec).json()
    assert frames["count"] == len(states)
    assert frames["frames"][-1]["sides"] == end["sides"]
    assert frames["frames"][-1]["tricks"] == end["tricks"]
    assert frames["frames"][-1]["credited"] == end["credited"] and frames["frames"][0]["credited"] is None
    # every position the person saw is a replay position (public parts equal)
    by_step = {f["index"]: f for f in frames["frames"]}
    for view in views:
        f = by_step[view["step"]]
        assert f["current_trick"] == view["current_trick"] and f["pending"] == view["pending"]
    bad = dict(rec, actions=rec["actions"][:5] + [dict(rec["actions"][5], action=27)] + rec["actions"][6:])
    r = client.post("/api/replay", json=bad)
    assert r.status_code == 422 and "cannot replay" in r.json()["error"]
    assert client.post("/api/replay", json={"hello": 1}).status_code == 422
    assert client.post("/api/replay", json=[rec]).status_code == 422
    r = client.post("/api/replay", content=b" " * (4 * 1024 * 1024 + 1), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "at most" in r.json()["error"]


# -- limits ---------------------------------------------------------------------------------

def test_idle_and_finished_games_are_dropped_and_the_cap_holds():
    clock = FakeClock()
    app = create_app(Limits(max_games=2, idle_seconds=100, finished_seconds=10), clock=clock)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        a = new_game(c, mode="watch", players=4, seed=1)
        b = new_game(c, players=4, seed=2)
        r = c.post("/api/games", json={"players": 4})
        assert r.status_code == 503 and "maximum of 2" in r.json()["error"]
        c.post(f"/api/games/{a['id']}/advance", json={"steps": 1000})  # a is over now
        clock.t += 5
        d = new_game(c, players=4, seed=3)  # displaces the finished game a
        assert c.get(f"/api/games/{a['id']}").status_code == 404
        assert c.get(f"/api/games/{b['id']}").status_code == 200
        clock.t += 60
        assert c.get(f"/api/games/{d['id']}").status_code == 200  # used: its idle time starts again
        clock.t += 60
        assert c.get(f"/api/games/{b['id']}").status_code == 404  # 120 s idle
        assert c.get(f"/api/games/{d['id']}").status_code == 200
        e = new_game(c, mode="watch", players=3, seed=4)
        c.post(f"/api/games/{e['id']}/advance", json={"steps": 1000})
        clock.t += 11
        assert c.get(f"/api/games/{e['id']}").status_code == 404  # finished 11 s ago
        assert len(app.state.store) == 1
        assert c.delete(f"/api/games/{d['id']}").status_code == 200
        assert len(app.state.store) == 0


def test_limits_reject_bad_values():
    for kw in ({"max_games": 0}, {"idle_seconds": 0}, {"finished_seconds": -1}, {"max_games": 1.5}):
        with pytest.raises(ValueError):
            Limits(**kw)


# -- hidden information (R2.5, R7.1) ---------------------------------------------------------

def _codes_in(obj) -> set[str]:
    out: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            out |= _codes_in(k) | _codes_in(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= _codes_in(v)
    elif isinstance(obj, str):
        out |= set(CODE.findall(obj))
    return out


@pytest.mark.parametrize("players, seat", [(4, 0), (4, 3), (3, 0), (3, 1)])
def test_responses_name_only_cards_the_seat_may_know(client, players, seat):
    v = new_game(client, players=players, seat=seat, seed=21 + seat)
    views = [v]
    play_to_end(client, v, np.random.default_rng(seat), collect=views)
    for view in views:
        me = view["you"]["seat"]
        visible = set(view["seats"][me]["hand"])
        if players == 3:
            visible |= set(view["seats"][2]["hand"])  # the new moon's open hand (R7.1)
        played = {c["card"] for t in view["tricks"] for c in t["cards"]}
        played |= {p["card"] for p in view["current_trick"] if p}
        for s, seat_view in enumerate(view["seats"]):
            if s != me and not (players == 3 and s == 2):
                assert seat_view["hand"] is None or seat_view["hand"] == []
        leaked = _codes_in(view) - visible - played
        assert not leaked, f"response at step {view['step']} names hidden cards {leaked}"


def _swap_hidden(deal, a: int, b: int, rng) -> list[list[str]]:
    """The deal with every card of hidden seats a and b re-dealt between them, cult counts kept (R2.5)."""
    out = [list(h) for h in deal]
    for cult in (0, 1):
        pool = [c for s in (a, b) for c in out[s] if CULT[CARDS.index(c)] == cult]
        n_a = sum(CULT[CARDS.index(c)] == cult for c in out[a])
        rng.shuffle(pool)
        keep_a = [c for c in out[a] if CULT[CARDS.index(c)] != cult]
        keep_b = [c for c in out[b] if CULT[CARDS.index(c)] != cult]
        out[a], out[b] = keep_a + pool[:n_a], keep_b + pool[n_a:]
    return out


@pytest.mark.parametrize("players, hidden", [(4, (1, 2)), (4, (1, 3)), (3, (1, 3))])
def test_counterfactual_redeal_of_hidden_hands_gives_the_same_response(client, players, hidden):
    rng = np.random.default_rng(7)
    extra = {"dealer": 3} if players == 4 else {}
    base = new_game(client, players=players, seat=0, deal=DEAL, seed=9, **extra)
    assert base["to_act"]
    for _ in range(5):
        other = _swap_hidden(DEAL, *hidden, rng)
        assert other != DEAL
        v = new_game(client, players=players, seat=0, deal=other, seed=9, **extra)
        assert {**v, "id": None} == {**base, "id": None}
        h1 = client.post(f"/api/games/{base['id']}/hint", json={"agent": "heuristic"}).json()
        h2 = client.post(f"/api/games/{v['id']}/hint", json={"agent": "heuristic"}).json()
        assert h1 == h2


def test_who_plays_each_seat(client):
    v = new_game(client, players=4, seat=0, opponents="heuristic", partner="random")
    assert v["who"] == ["you", "heuristic", "random", "heuristic"]
    v = new_game(client, players=3, seat=1, opponents="heuristic", partner="random")
    assert v["who"] == ["heuristic", "you", "new moon (heuristic)", "random"]
    v = new_game(client, players=3, seat=0, opponents="random")
    assert v["who"] == ["you", "random", "new moon (you decide)", "random"]
    assert v["seats"][2]["role"] == "new moon" and v["seats"][2]["hand"]  # open (R7.1)


def test_same_move_from_two_tabs_is_applied_once():
    import http.client
    import threading

    from serve_live import LiveServer

    with LiveServer(create_app()) as srv:
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        c.request("POST", "/api/games", body=json.dumps({"players": 4, "seat": 0, "deal": DEAL, "dealer": 3}),
                  headers={"Content-Type": "application/json"})
        v = json.loads(c.getresponse().read())
        action = v["legal"][0]["action"]
        statuses = []

        def tab():
            t = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
            t.request("POST", f"/api/games/{v['id']}/move", body=json.dumps({"action": action, "step": 0}),
                      headers={"Content-Type": "application/json"})
            statuses.append(t.getresponse().status)

        threads = [threading.Thread(target=tab) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(statuses) == [200] + [409] * 5
        c.request("GET", f"/api/games/{v['id']}")
        assert json.loads(c.getresponse().read())["step"] == 1


def test_an_agent_error_is_a_json_500(client, monkeypatch):
    v = new_game(client, mode="watch", players=4, seed=1)
    game = client.app.state.store.get(v["id"])

    def broken(*a, **k):
        raise RuntimeError("agent bug")
    for agent in game.agents.values():
        monkeypatch.setattr(agent, "act", broken)
    with TestClient(client.app, raise_server_exceptions=False, base_url="http://127.0.0.1") as c:
        r = c.post(f"/api/games/{v['id']}/advance", json={"steps": 1})
    assert r.status_code == 500 and "agent bug" in r.json()["error"]
    assert c.get(f"/api/games/{v['id']}").json()["step"] == 0
