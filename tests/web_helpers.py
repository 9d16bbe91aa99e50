"""Helpers of the web tests: the real server in a thread, an HTTP client with a cookie
jar (one browser session), and Debian's headless Chromium driven by selenium."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pokegym.web.app import make_server
from pokegym.web.session import BattleManager, WebConfig

CHROMIUM = os.environ.get("POKEGYM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("POKEGYM_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,900",
)  # fmt: skip


def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def running_server(
    config: WebConfig, **manager_options: Any
) -> Iterator[tuple[str, BattleManager]]:
    """The app on uvicorn on a free loopback port, in a thread; stopped (and its battles
    forfeited, its simulator closed) on exit."""
    manager = BattleManager(config, **manager_options)
    server = make_server(manager, host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.run, name="web-server")
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), 60, "the server to start")
        assert server.started, "the web server did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}", manager
    finally:
        manager.stopping.set()  # as a signal does: open long polls answer at once
        server.should_exit = True
        thread.join(60)
        manager.close()
        assert not thread.is_alive(), "the web server did not stop"


class Client:
    """One browser session over plain HTTP (its own cookie jar)."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def call(
        self,
        method: str,
        path: str,
        data: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any]:
        body = raw if raw is not None else None if data is None else json.dumps(data).encode()
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=body,
            headers={"Content-Type": content_type, **(headers or {})},
        )
        try:
            with self.opener.open(request, timeout=60) as response:
                payload = response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            payload, status = exc.read(), exc.code
        try:
            return status, json.loads(payload) if payload else None
        except ValueError:
            return status, payload.decode("utf-8", "replace")

    def state(self, after: int = -1) -> dict[str, Any]:
        status, state = self.call("GET", f"/api/state?after={after}")
        assert status == 200, (status, state)
        return state

    def until(self, statuses: set[str], after: int = -1, timeout: float = 120) -> dict[str, Any]:
        """The battle's state once its status is one of ``statuses``."""
        deadline = time.monotonic() + timeout
        state = self.state(after)
        while state["status"] not in statuses:
            assert time.monotonic() < deadline, f"still {state['status']!r}, not {statuses}"
            state = self.state(state["version"])
        return state


def chromium_missing() -> str | None:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).exists() or shutil.which(path)):
            return (
                f"{path} is missing: install Debian's chromium and chromium-driver "
                "(apt-get install chromium chromium-driver; .ci/run does it)."
            )
    return None


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A selenium driver of the system's headless Chromium with a fresh profile."""
    problem = chromium_missing()
    assert problem is None, problem
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="pokegym-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        with contextlib.suppress(Exception):  # already quit by the test
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver: Any) -> list[dict[str, Any]]:
    """The page's console entries of level SEVERE (errors, failed requests)."""
    return [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
