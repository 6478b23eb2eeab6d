"""A live ``twilight serve`` (uvicorn in a thread on a free loopback port) and headless Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1000")


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium; it is in the test extra)"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a daemon thread, with the options of
    ``twilight serve`` (``twilight_env.serve.conn.uvicorn_options``, overridden by
    ``options``); ``url`` is its address."""

    def __init__(self, app, **options):
        import uvicorn

        from twilight_env.serve.conn import uvicorn_options

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                **{**uvicorn_options(), **options})
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


class Browser:
    """Headless Chromium through Selenium, with a fresh profile folder removed on exit."""

    def __enter__(self):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="twilight-chromium-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for f in CHROME_FLAGS:
            opts.add_argument(f)
        opts.add_argument(f"--user-data-dir={self.profile}")
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        self.driver.set_page_load_timeout(30)
        return self.driver

    def __exit__(self, *exc):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)


class ServerProcess:
    """``twilight serve`` in its own process on a free loopback port (so its memory can be
    measured apart from the test's); ``url``, ``port`` and ``pid``."""

    def __init__(self, *args: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = args

    def __enter__(self):
        import http.client
        import subprocess
        import sys

        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen([sys.executable, "-m", "twilight_env.cli", "serve", "--port", str(self.port),
                                      *self.args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 60
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/api/agents")
                c.getresponse().read()
                c.close()
                return self
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.proc.kill()
                    raise RuntimeError("twilight serve did not start: " + self.proc.stderr.read().decode()[-2000:])
                time.sleep(0.1)

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
            self.proc.wait(10)
        self.proc.stderr.close()


def memory_kib(pid: int) -> dict:
    """``{"rss": KiB now, "peak": highest KiB so far}`` of a process (Linux ``/proc``)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                out["rss"] = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                out["peak"] = int(line.split()[1])
    return out
