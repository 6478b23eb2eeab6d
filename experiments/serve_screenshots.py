"""Screenshots of the ``twilight serve`` page in headless Chromium: ``docs/serve_*.png``.

Starts the app on a free loopback port (uvicorn in a thread), drives Debian's
``chromium`` with Selenium and saves three pictures: a 3-player deal being played
(with a hint), a 4-player deal watched between agents, and a record replayed.

    python experiments/serve_screenshots.py [--out docs]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "serve"))


def _wait(cond, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if cond():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise RuntimeError("timed out")


def _shot_play(d, url: str, out: str) -> None:
    """Screenshot ``serve_play.png`` into ``out`` with the browser ``d`` on the server at ``url``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    # 1. play: 3 players, the person on the Sun side, a few moves in, with a hint
    d.get(url + "/?speed=0")
    _wait(lambda: d.execute_script("return document.body.dataset.ready"))
    Select(d.find_element(By.ID, "play-players")).select_by_value("3")
    Select(d.find_element(By.ID, "play-seat")).select_by_value("1")
    d.find_element(By.ID, "play-seed").send_keys("5")
    d.find_element(By.ID, "start-play").click()
    for _ in range(4):
        _wait(lambda: d.execute_script("return !app.busy && document.body.dataset.state === 'your-turn'"))
        d.find_elements(By.CSS_SELECTOR, ".legal")[0].click()
        time.sleep(0.3)
    _wait(lambda: d.execute_script("return !app.busy && document.body.dataset.state === 'your-turn'"))
    d.execute_script("document.getElementById('howto').open = false")
    d.find_element(By.ID, "hint").click()
    _wait(lambda: d.find_element(By.ID, "hint-text").text)
    d.save_screenshot(os.path.join(out, "serve_play.png"))


def _shot_watch(d, out: str) -> None:
    """Screenshot ``serve_watch.png`` into ``out`` (the browser ``d`` already shows the app)."""
    from selenium.webdriver.common.by import By

    # 2. watch: 4 players, agents only, half-way through the deal
    d.find_element(By.ID, "tab-watch").click()
    d.find_element(By.ID, "watch-seed").send_keys("3")
    d.find_element(By.ID, "start-watch").click()
    _wait(lambda: d.execute_script("return app.view && app.view.step >= 1"))
    d.find_element(By.ID, "pause").click()
    d.execute_script("app.paused = true")
    for _ in range(26):
        d.execute_script("agentStep()")
        _wait(lambda: d.execute_script("return !app.busy"))
    d.save_screenshot(os.path.join(out, "serve_watch.png"))


def _shot_replay(d, url: str, out: str) -> None:
    """Screenshot ``serve_replay.png`` into ``out``: a record played on the server at ``url``, loaded in ``d``."""
    import httpx
    from selenium.webdriver.common.by import By

    # 3. replay: a finished 3-player deal, stepped to the middle
    with httpx.Client(base_url=url) as c:
        v = c.post("/api/games", json={"mode": "watch", "players": 3, "seed": 8}).json()
        c.post(f"/api/games/{v['id']}/advance", json={"steps": 1000})
        rec = c.get(f"/api/games/{v['id']}/record").json()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "record.json")
        with open(path, "w") as f:
            json.dump(rec, f)
        d.find_element(By.ID, "tab-replay").click()
        d.find_element(By.ID, "replay-file").send_keys(path)
        _wait(lambda: d.execute_script("return app.count > 0"))
        d.execute_script("showFrame(23)")
        d.save_screenshot(os.path.join(out, "serve_replay.png"))


def main(argv=None) -> int:
    # the optional packages are imported first, so a missing one fails before a server starts
    import httpx  # noqa: F401
    from selenium.webdriver.common.by import By  # noqa: F401
    from selenium.webdriver.support.ui import Select  # noqa: F401
    from serve_live import Browser, LiveServer

    from twilight_env.serve.app import create_app

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=os.path.join(ROOT, "docs"))
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)  # a screenshot into a missing folder fails silently
    with LiveServer(create_app()) as srv, Browser() as d:
        _shot_play(d, srv.url, args.out)
        _shot_watch(d, args.out)
        _shot_replay(d, srv.url, args.out)
    missing = [n for n in ("play", "watch", "replay") if not os.path.isfile(os.path.join(args.out, f"serve_{n}.png"))]
    if missing:
        print(f"error: no screenshot written for {', '.join(missing)} in {args.out!r}", file=sys.stderr)
        return 1
    print("wrote", ", ".join(os.path.join(args.out, f"serve_{n}.png") for n in ("play", "watch", "replay")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
