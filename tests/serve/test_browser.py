"""The page in real headless Chromium (Debian's ``chromium`` and ``chromium-driver``), driven
by Selenium against a live server on 127.0.0.1: a whole 3-player deal played by clicks, and
a record stepped forwards and backwards."""

from __future__ import annotations

import gzip
import json
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from serve_live import Browser, LiveServer, browser_missing  # noqa: E402

_why = browser_missing()
pytestmark = pytest.mark.skipif(_why is not None, reason=f"browser tests need headless Chromium: {_why}")


@pytest.fixture(scope="module")
def server():
    from twilight_env.serve.app import create_app

    with LiveServer(create_app()) as srv:
        yield srv


@pytest.fixture(scope="module")
def driver():
    with Browser() as d:
        yield d


def _wait(driver, cond, timeout=20.0, what="the page"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = cond()
        except Exception:  # a node replaced while read: try again
            v = None
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}; page state: {driver.execute_script('return document.body.dataset.state')}")


def _idle_state(driver):
    """'your-turn' or 'over' once no request is in flight and no agent move is due."""
    return driver.execute_script(
        "if (app.busy || !app.view) return null;"
        "const s = document.body.dataset.state;"
        "if (s === 'your-turn' || s === 'over') return s; return null;")


def test_play_a_3_player_deal_by_clicking(server, driver):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.get(server.url + "/?speed=0")
    _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
    Select(driver.find_element(By.ID, "play-players")).select_by_value("3")
    Select(driver.find_element(By.ID, "play-seat")).select_by_value("1")
    driver.find_element(By.ID, "play-seed").send_keys("12")
    driver.find_element(By.ID, "start-play").click()
    clicks = 0
    while True:
        state = _wait(driver, lambda: _idle_state(driver), what="your turn or the end")
        if state == "over":
            break
        step = driver.execute_script("return app.view.step")
        legal = driver.find_elements(By.CSS_SELECTOR, ".legal")
        assert legal, "your turn, but nothing is highlighted"
        # cards that are not legal moves carry no action
        for el in driver.find_elements(By.CSS_SELECTOR, ".card:not(.legal)"):
            assert el.get_attribute("data-action") is None
        try:
            legal[clicks % len(legal)].click()
        except StaleElementReferenceException:
            continue
        clicks += 1
        _wait(driver, lambda: driver.execute_script("return app.view.step") > step, what="the move to land")
        assert clicks < 60
    assert clicks >= 7  # every seat chooses once per trick (R3.1)
    final = driver.find_element(By.ID, "final")
    shown = {"sun": int(final.get_attribute("data-sun")), "moon": int(final.get_attribute("data-moon"))}
    gid = driver.execute_script("return app.gid")
    game = server.server.config.app.state.store.get(gid)
    assert game.over and game.num_players == 3
    pts = game.env.infos["player_0"]["deal_points"]
    solo = next(p for p in game.players if game.env.seat_of(p) == 0)
    assert shown["moon"] == pts[solo]
    assert all(shown["sun"] == pts[p] for p in game.players if p != solo)
    assert driver.find_element(By.ID, "download").is_displayed()
    # the header says the game is over, not that it is being played; the board says the result
    status = driver.find_element(By.ID, "status").text
    assert status.startswith("Game over · you played · 3 players") and "Playing" not in status, status
    prompt = driver.find_element(By.ID, "prompt")
    assert prompt.is_displayed() and prompt.text == final.text, (prompt.text, final.text)
    assert driver.find_element(By.ID, "score-sun").get_attribute("data-score") == str(shown["sun"])
    # the deal is over: the score is final, and each player's credited points are shown (R7.5)
    assert driver.find_element(By.ID, "score-head").get_attribute("textContent") == "Final"
    rows = driver.find_elements(By.CSS_SELECTOR, "#credited tr[data-line]")
    assert [(r.get_attribute("data-line"), int(r.get_attribute("data-points"))) for r in rows] \
        == [(p.replace("_", " "), pts[p]) for p in game.players]
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"the page logged errors: {errors}"


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(float(x)) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])


def test_a_hint_does_not_look_like_an_error(server, driver):
    from selenium.webdriver.common.by import By

    driver.get(server.url + "/?speed=0")
    _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
    driver.find_element(By.ID, "play-seed").send_keys("5")
    driver.find_element(By.ID, "start-play").click()
    assert _wait(driver, lambda: _idle_state(driver), what="your turn") == "your-turn"
    driver.find_element(By.ID, "hint").click()
    hint = driver.find_element(By.ID, "hint-text")
    _wait(driver, lambda: "would" in hint.text, what="the hint")
    assert driver.find_elements(By.CSS_SELECTOR, ".hinted")
    style = lambda el, k: driver.execute_script(f"return getComputedStyle(arguments[0]).{k}", el)  # noqa: E731
    err = driver.find_element(By.ID, "error")
    r, g, b = _rgb(style(hint, "color"))
    assert not (r > 120 and r > 2 * g and r > 2 * b), f"the hint is red: {style(hint, 'color')}"
    assert _rgb(style(hint, "color")) != _rgb(style(err, "backgroundColor"))
    assert _rgb(style(hint, "color")) != _rgb(style(err, "color"))


def test_replay_a_record_forwards_and_backwards(server, driver, tmp_path):
    import httpx
    from selenium.webdriver.common.by import By

    with httpx.Client(base_url=server.url) as c:
        v = c.post("/api/games", json={"mode": "watch", "players": 4, "seed": 31}).json()
        end = c.post(f"/api/games/{v['id']}/advance", json={"steps": 1000}).json()
        rec = c.get(f"/api/games/{v['id']}/record").json()
        frames = c.post("/api/replay", json=rec).json()["frames"]
    assert end["over"]
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(rec))

    driver.get(server.url + "/")
    _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
    driver.find_element(By.ID, "tab-replay").click()
    driver.find_element(By.ID, "replay-file").send_keys(str(path))
    _wait(driver, lambda: driver.execute_script("return app.count") == len(frames), what="the record")

    def shown():
        trick = [el.get_attribute("data-card") for el in driver.find_elements(By.CSS_SELECTOR, "#trick .card")]
        hands = [[el.get_attribute("data-card") for el in driver.find_elements(By.CSS_SELECTOR, f"#seat-{s} .hand .card")]
                 for s in range(4)]
        return trick, hands, driver.find_element(By.ID, "rp-text").text

    def expected(i):
        f = frames[i]
        cur = [p["card"] for p in f["current_trick"] if p]
        if not cur and f["phase"] != "hold" and f["tricks"]:
            cur = [c["card"] for c in f["tricks"][-1]["cards"]]
        return cur, [s["hand"] for s in f["seats"]], f"{i} / {len(frames) - 1}: {f['text']}"

    assert shown() == expected(0)
    # the answer names the agents once per deal; the page shows them on every seat
    who = [driver.find_element(By.CSS_SELECTOR, f"#seat-{s} .who").text for s in range(4)]
    assert who == rec["agents"], who
    seen = [shown()]
    for i in range(1, 12):
        driver.find_element(By.ID, "rp-next").click()
        _wait(driver, lambda: shown() == expected(i), what=f"frame {i} after 'next'")
        seen.append(shown())
    for i in range(10, -1, -1):
        driver.find_element(By.ID, "rp-prev").click()
        _wait(driver, lambda: shown() == seen[i], what=f"frame {i} after 'previous'")
    driver.find_element(By.ID, "rp-last").click()
    _wait(driver, lambda: shown() == expected(len(frames) - 1), what="the last frame")
    sun = driver.find_element(By.ID, "score-sun").get_attribute("data-score")
    assert int(sun) == next(s["score"] for s in end["sides"] if s["cult"] == "sun")
    driver.find_element(By.TAG_NAME, "body").send_keys("\ue012")  # the left arrow key steps back
    _wait(driver, lambda: shown() == expected(len(frames) - 2), what="the frame before the last")

    # JSON lines, gzip-compressed (as `twilight arena --records` writes): the index picks a record
    with httpx.Client(base_url=server.url) as c:
        w = c.post("/api/games", json={"mode": "watch", "players": 3, "seed": 32}).json()
        c.post(f"/api/games/{w['id']}/advance", json={"steps": 1000})
        rec3 = c.get(f"/api/games/{w['id']}/record").json()
        frames3 = c.post("/api/replay", json=rec3).json()["frames"]
    gz = tmp_path / "plays.jsonl.gz"
    with gzip.open(gz, "wt") as f:
        f.write(json.dumps(rec) + "\n" + json.dumps(rec3) + "\n")
    driver.find_element(By.ID, "tab-replay").click()
    driver.find_element(By.ID, "replay-file").send_keys(str(gz))
    _wait(driver, lambda: driver.execute_script("return app.records && app.records.length") == 2, what="2 records")
    # the board says which record it shows and keeps a picker for the others
    # app.count already equals len(frames) from the record shown before, so wait for the status line itself
    _wait(driver, lambda: "record 0 of 2" in driver.find_element(By.ID, "status").text, what="record 0 of 2 shown")
    assert driver.execute_script("return app.count") == len(frames)
    assert driver.find_element(By.ID, "rp-records").is_displayed()
    assert not driver.find_element(By.ID, "rp-rec-prev").is_enabled()
    driver.find_element(By.ID, "rp-rec-next").click()
    _wait(driver, lambda: driver.execute_script("return app.pages.get(0)[0].num_players") == 3, what="record 1")
    assert "record 1 of 2" in driver.find_element(By.ID, "status").text
    assert driver.execute_script("return app.count") == len(frames3)
    assert not driver.find_element(By.ID, "rp-rec-next").is_enabled()
    driver.find_element(By.ID, "rp-last").click()
    # the end of a 3-player deal: final, with each player's credited points as the record's lines (R7.5)
    assert driver.find_element(By.ID, "score-head").get_attribute("textContent") == "Final"
    rows = driver.find_elements(By.CSS_SELECTOR, "#credited tr[data-line]")
    assert [(r.get_attribute("data-line"), int(r.get_attribute("data-points"))) for r in rows] \
        == list(zip(rec3["lines"], rec3["deal_points"]))
    driver.save_screenshot(str(tmp_path / "replay_board.png"))
    box = driver.find_element(By.ID, "rp-record")
    box.clear()
    box.send_keys("0\n")
    _wait(driver, lambda: driver.execute_script("return app.pages.get(0)[0].num_players") == 4, what="record 0 again")
    assert "record 0 of 2" in driver.find_element(By.ID, "status").text
    assert driver.find_element(By.ID, "score-head").get_attribute("textContent") == "This deal so far"
    driver.find_element(By.ID, "tab-replay").click()
    box = driver.find_element(By.ID, "replay-index")
    box.clear()
    box.send_keys("1")
    driver.find_element(By.ID, "replay-open").click()
    _wait(driver, lambda: driver.execute_script("return app.count && app.pages.get(0)[0].num_players") == 3,
          what="record 1")
    assert driver.execute_script("return app.count") == len(frames3)
    driver.find_element(By.ID, "rp-last").click()
    hands = [[el.get_attribute("data-card") for el in driver.find_elements(By.CSS_SELECTOR, f"#seat-{s} .hand .card")]
             for s in range(4)]
    assert hands == [[], [], [], []] and frames3[-1]["num_players"] == 3
    moon = driver.find_element(By.ID, "score-moon").get_attribute("data-score")
    assert int(moon) == next(s["score"] for s in frames3[-1]["sides"] if s["cult"] == "moon")


def test_the_page_works_with_the_token_of_allow_remote(driver):
    """``twilight serve --allow-remote``: the printed address (``?token=``) opens the page,
    whose requests then carry the token as a cookie; without it the server answers 403."""
    from selenium.webdriver.common.by import By

    from twilight_env.serve.app import create_app

    token = "browser-token-" + "z" * 20
    with LiveServer(create_app(host="0.0.0.0", token=token)) as srv:
        driver.delete_all_cookies()
        driver.get(srv.url + "/api/agents")
        assert "token" in driver.find_element(By.TAG_NAME, "body").text
        driver.get_log("browser")  # drained: those 403s were meant
        driver.get(srv.url + f"/?token={token}&speed=0")
        _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
        driver.find_element(By.ID, "play-seed").send_keys("7")
        driver.find_element(By.ID, "start-play").click()
        assert _wait(driver, lambda: _idle_state(driver), what="your turn") == "your-turn"
        assert len(srv.server.config.app.state.store) == 1
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, f"the page logged errors: {errors}"
        driver.delete_all_cookies()


def test_the_layout_fits_a_phone_and_a_laptop_screen(server, driver):
    """At a 400x800 window the page does not scroll sideways and the score and the buttons are
    on screen; in a 1280x800 window (a laptop screen: the viewport is smaller by the browser's
    bars) every glowing card is in view without scrolling whenever it is the person's turn.
    Checked through a whole 3-player deal as the solo, whose board is the tallest: the new
    moon's open hand sits above the trick and the person also chooses for it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    rect = "const b = arguments[0].getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom];"
    try:
        driver.set_window_size(400, 800)
        driver.get(server.url + "/?speed=0")
        _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
        driver.find_element(By.ID, "play-seed").send_keys("5")
        driver.find_element(By.ID, "start-play").click()
        assert _wait(driver, lambda: _idle_state(driver), what="your turn") == "your-turn"
        iw, cw, sw = driver.execute_script("const d = document.documentElement;"
                                           "return [window.innerWidth, d.clientWidth, d.scrollWidth]")
        assert iw <= 420, f"the window is not narrow: innerWidth {iw}"
        assert sw <= iw, f"the page scrolls sideways at {iw} px: scrollWidth {sw}"
        shown = ["scores", "score-sun", "score-moon", "hint", "pause", "step-one", "new-game",
                 "tab-play", "tab-watch", "tab-replay"]
        for name in shown:
            left, _, right, _ = driver.execute_script(rect, driver.find_element(By.ID, name))
            assert 0 <= left and right <= cw, f"#{name} spans x {left:.0f}..{right:.0f}, off the {cw} px screen"
        for el in driver.find_elements(By.CSS_SELECTOR, ".legal"):
            left, _, right, _ = driver.execute_script(rect, el)
            assert 0 <= left and right <= cw, f"a glowing move spans x {left:.0f}..{right:.0f}, off the screen"

        driver.set_window_size(1280, 800)
        driver.get(server.url + "/?speed=0")
        _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
        Select(driver.find_element(By.ID, "play-players")).select_by_value("3")
        Select(driver.find_element(By.ID, "play-seat")).select_by_value("0")
        driver.find_element(By.ID, "play-seed").send_keys("1")
        driver.find_element(By.ID, "start-play").click()
        turns = 0
        while _wait(driver, lambda: _idle_state(driver), what="your turn or the end") == "your-turn":
            assert driver.execute_script("return window.scrollY") == 0
            ih, sw, iw = driver.execute_script("return [window.innerHeight, document.documentElement.scrollWidth,"
                                               " window.innerWidth]")
            assert sw <= iw, f"the page scrolls sideways at {iw} px: scrollWidth {sw}"
            cards = driver.find_elements(By.CSS_SELECTOR, ".card.legal")
            for el in cards:
                left, top, right, bottom = driver.execute_script(rect, el)
                assert 0 <= top and bottom <= ih and 0 <= left and right <= iw, \
                    (f"turn {turns}: glowing card {el.get_attribute('data-card')} at y {top:.0f}..{bottom:.0f}"
                     f" is not in the {iw}x{ih} viewport without scrolling")
            step = driver.execute_script("return app.view.step")
            (cards or driver.find_elements(By.CSS_SELECTOR, ".legal"))[0].click()
            _wait(driver, lambda: driver.execute_script("return app.view.step") > step, what="the move to land")
            turns += 1
            assert turns < 60
        assert turns >= 7
    finally:
        driver.set_window_size(1400, 1000)


def test_the_page_offers_only_agents_this_install_can_run(server, driver, monkeypatch):
    """Without torch the agent suggestions leave out ``exit`` and ``exit-search`` and the page
    says why; naming one anyway is answered on the page, with no game created; watching
    agents that can run starts."""
    import sys

    from selenium.webdriver.common.by import By

    monkeypatch.setitem(sys.modules, "torch", None)  # the server runs in this process
    driver.get(server.url + "/?speed=0")
    _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
    offered = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#agent-list option")]
    assert "heuristic" in offered and "exit" not in offered and "exit-search" not in offered, offered
    note = driver.find_element(By.ID, "agents-off")
    assert note.is_displayed() and "exit (needs torch)" in note.text and "exit-search (needs torch)" in note.text
    store = server.server.config.app.state.store
    before = len(store)
    driver.find_element(By.ID, "tab-watch").click()
    box = driver.find_element(By.ID, "watch-agent-0")
    box.clear()
    box.send_keys("exit")
    driver.find_element(By.ID, "start-watch").click()
    err = driver.find_element(By.ID, "error")
    _wait(driver, lambda: err.is_displayed() and "needs torch" in err.text, what="the error")
    assert len(store) == before
    box.clear()
    box.send_keys("random")
    driver.find_element(By.ID, "start-watch").click()
    _wait(driver, lambda: driver.execute_script("return app.view && app.mode === 'watch' && app.view.step > 0"),
          what="the agents to play")
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"the page logged errors: {errors}"


def test_at_400_px_the_solos_hand_and_the_final_score_are_on_screen(server, driver):
    """A 400x800 window, a 3-player deal as the solo (the tallest board: the new moon's open
    hand above the trick): on each of the person's turns their own hand and every glowing
    move are on screen without scrolling, and at the end the final score is."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    rect = "const b = arguments[0].getBoundingClientRect(); return [b.top, b.bottom];"
    try:
        driver.set_window_size(400, 800)
        driver.get(server.url + "/?speed=0")
        _wait(driver, lambda: driver.execute_script("return document.body.dataset.ready"), what="the page to load")
        Select(driver.find_element(By.ID, "play-players")).select_by_value("3")
        Select(driver.find_element(By.ID, "play-seat")).select_by_value("0")
        driver.find_element(By.ID, "play-seed").send_keys("1")
        driver.find_element(By.ID, "start-play").click()
        turns = 0
        while _wait(driver, lambda: _idle_state(driver), what="your turn or the end") == "your-turn":
            ih, y = driver.execute_script("return [window.innerHeight, window.scrollY]")
            assert y == 0, f"turn {turns}: the page scrolled to {y}"
            for el in [driver.find_element(By.ID, "pos-bottom")] + driver.find_elements(By.CSS_SELECTOR, ".legal"):
                top, bottom = driver.execute_script(rect, el)
                assert 0 <= top and bottom <= ih, \
                    f"turn {turns}: {el.get_attribute('id') or el.get_attribute('data-card')} at y {top:.0f}..{bottom:.0f}, below the {ih} px fold"
            step = driver.execute_script("return app.view.step")
            (driver.find_elements(By.CSS_SELECTOR, ".card.legal") or driver.find_elements(By.CSS_SELECTOR, ".legal"))[0].click()
            _wait(driver, lambda: driver.execute_script("return app.view.step") > step, what="the move to land")
            turns += 1
            assert turns < 60
        ih = driver.execute_script("return window.innerHeight")
        for name in ("final", "prompt"):
            top, bottom = driver.execute_script(rect, driver.find_element(By.ID, name))
            assert 0 <= top and bottom <= ih, f"#{name} at y {top:.0f}..{bottom:.0f}, below the {ih} px fold"
        assert driver.find_element(By.ID, "prompt").text.startswith("Final: Sun ")
    finally:
        driver.set_window_size(1400, 1000)
