"""``pokegym play --web`` in real browsers: first paint, click latency, concurrent sessions.

Drives Debian's headless Chromium (``/usr/bin/chromium`` + ``chromedriver``) with
selenium against the real server, simulator and agent, the way the page is used: pick
an opponent, click the first legal choice until the battle ends, rate it. Times come
from the page's own user-timing marks (``performance.mark`` in ``static/app.js``), so
selenium's round trips are not counted:

- first paint: the click on "Start battle" -> the first choices drawn;
- click latency: a click on a choice -> the next choices drawn (or the end), and the
  same minus the agent's own decision time (from the battle's playtest record);
- concurrency: ``--sessions`` browsers at once, ``--battles`` battles each; every
  battle that raises, shows a console error or does not end counts as an error.

Baseline measured in the same run: the terminal front end of the same battle loop
(``run_battle`` with scripted answers), seconds per decision without the agent's time.

    pokegym bench web_play                     # 8 sessions x 10 battles vs random
    pokegym bench web_play --quick             # 2 sessions x 1 battle
    pokegym bench web_play --screenshot docs/img/web-play.png --sessions 1 --battles 1
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pokegym.agents import make_agent
from pokegym.play import PROMPT, TerminalFrontEnd, display_names, make_play_setup, run_battle
from pokegym.stats import percentile
from pokegym.web.app import make_server
from pokegym.web.session import BattleManager, WebConfig

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,900",
)  # fmt: skip


@dataclass
class SessionResult:
    first_paint: list[float] = field(default_factory=list)  # seconds
    latencies: list[float] = field(default_factory=list)
    minus_agent: list[float] = field(default_factory=list)  # per battle: mean latency - agent
    battles: int = 0
    errors: list[str] = field(default_factory=list)


def browser(profile: str) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def play_one(driver: Any, opponent: str, screenshot: Path | None) -> tuple[dict[str, float], int]:
    """One battle in the page; returns the user-timing marks (ms) and the clicks."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait

    wait = WebDriverWait(driver, 300)
    wait.until(EC.element_to_be_clickable((By.ID, "start-button")))
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"#opponent option[value='{opponent}']"))
    Select(driver.find_element(By.ID, "opponent")).select_by_value(opponent)
    driver.find_element(By.ID, "start-button").click()

    def ready(d: Any) -> Any:
        if d.find_element(By.ID, "rating").is_displayed():
            return "rating"
        buttons = [
            b for b in d.find_elements(By.CSS_SELECTOR, "#choices .choice") if b.is_enabled()
        ]
        return buttons[0] if buttons else None

    clicks = 0
    while True:
        found = wait.until(ready)
        if found == "rating":
            break
        if screenshot is not None and clicks == 4:
            driver.save_screenshot(str(screenshot))
            screenshot = None
        found.click()
        clicks += 1
        wait.until(EC.staleness_of(found))
        if clicks > 1000:
            raise RuntimeError("the battle does not end")
    driver.find_element(By.CSS_SELECTOR, "#rating-buttons button[data-rating='3']").click()
    wait.until(EC.visibility_of_element_located((By.ID, "new-battle")))
    marks = driver.execute_script(
        "return performance.getEntriesByType('mark').map(m => [m.name, m.startTime]);"
    )
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    if errors:
        raise RuntimeError(f"console errors: {errors}")
    driver.find_element(By.ID, "new-battle").click()
    return {name: float(at) for name, at in marks}, clicks


def latencies(marks: dict[str, float]) -> tuple[float, list[float]]:
    """(first paint, click latencies) in seconds from the page's marks."""
    first = (marks["pokegym:choices:1"] - marks["pokegym:start"]) / 1000
    found = []
    for name, at in marks.items():
        if name.startswith("pokegym:click:"):
            decision = int(name.rsplit(":", 1)[1])
            after = marks.get(f"pokegym:choices:{decision + 1}", marks.get("pokegym:ended"))
            if after is not None:
                found.append((after - at) / 1000)
    return first, found


def session(
    index: int, base: str, args: argparse.Namespace, replays: Path, out: SessionResult
) -> None:
    profile = tempfile.mkdtemp(prefix=f"bench-web-{index}-")
    driver = None
    try:
        driver = browser(profile)
        driver.get(base + "/")
        for battle in range(args.battles):
            shot = Path(args.screenshot) if args.screenshot and index == 0 and battle == 0 else None
            try:
                marks, _ = play_one(driver, args.opponent, shot)
            except Exception as exc:
                out.errors.append(f"session {index} battle {battle}: {exc!r}")
                driver.get(base + "/")
                continue
            first, clicks = latencies(marks)
            out.first_paint.append(first)
            out.latencies += clicks
            out.battles += 1
    except Exception:
        out.errors.append(f"session {index}: {traceback.format_exc(limit=3)}")
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def agent_seconds(replays: Path) -> list[tuple[float, int]]:
    """(agent seconds, person's decisions) of every battle in the records."""
    found = []
    for line in (replays / "playtest.jsonl").read_text().splitlines():
        record = json.loads(line)
        found.append((sum(record["opponent_seconds"]), len(record["decision_seconds"])))
    return found


def terminal_baseline(opponent: str, battles: int) -> float:
    """The terminal front end's answer -> next prompt, minus the agent's time, per decision
    (what the web's click latency measures, with text instead of a page)."""
    gaps: list[float] = []
    agent = 0.0
    for seed in range(battles + 1):  # the first battle warms the simulator up, untimed
        names = display_names("Bench", opponent)
        setup = make_play_setup("gen9randombattle", names=names)
        marks: list[float] = []

        def answer(prompt: str, marks: list[float] = marks) -> str:
            if prompt == PROMPT:
                marks.append(time.perf_counter())
            return "1"

        result = run_battle(setup, make_agent(opponent), TerminalFrontEnd(answer, io.StringIO()),
                            seed=seed, ask_rating=False, player_name=names[0],
                            opponent_name=names[1])  # fmt: skip
        setup.backend.close()
        if seed:
            gaps += [after - before for before, after in itertools.pairwise(marks)]
            agent += sum(result.opponent_seconds[:-1])  # the last one follows the last prompt
    return (sum(gaps) - agent) / max(1, len(gaps))


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    return (
        f"median {1000 * statistics.median(values):.0f} ms, p90 {1000 * percentile(values, 90):.0f}"
        f" ms, max {1000 * max(values):.0f} ms (n={len(values)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=8, help="browsers at once")
    parser.add_argument("--battles", type=int, default=10, help="battles per browser")
    parser.add_argument("--opponent", default="random", help="agent spec")
    parser.add_argument("--quick", action="store_true", help="2 sessions x 1 battle")
    parser.add_argument("--screenshot", help="save session 0's page at its 5th decision")
    parser.add_argument("--baseline-battles", type=int, default=3, help="terminal battles")
    args = parser.parse_args(argv)
    if args.quick:
        args.sessions, args.battles, args.baseline_battles = 2, 1, 1
    replays = Path(tempfile.mkdtemp(prefix="bench-web-replays-"))
    config = WebConfig(
        opponents=(args.opponent,), replays=str(replays), max_battles=max(16, args.sessions)
    )
    manager = BattleManager(config)
    manager.warm_up()  # as `pokegym play --web` does before it prints its URL
    server = make_server(manager, host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.run, name="web-server")
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.05)
    base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    results = [SessionResult() for _ in range(args.sessions)]
    started = time.perf_counter()
    try:
        workers = [
            threading.Thread(target=session, args=(i, base, args, replays, results[i]))
            for i in range(args.sessions)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        wall = time.perf_counter() - started
        leftover = manager.simulator_battles()
    finally:
        server.should_exit = True
        thread.join(60)
        manager.close()
    first = [x for r in results for x in r.first_paint]
    clicks = [x for r in results for x in r.latencies]
    errors = [e for r in results for e in r.errors]
    done = sum(r.battles for r in results)
    agent = agent_seconds(replays) if (replays / "playtest.jsonl").exists() else []
    agent_total = sum(a for a, _ in agent)
    minus_agent = (sum(clicks) - agent_total) / len(clicks) if clicks else float("nan")
    print(f"{args.sessions} browser sessions x {args.battles} battles vs {args.opponent}: "
          f"{done} battles finished, {len(errors)} errors, {wall:.0f} s wall, "
          f"simulator battles left {leftover}")  # fmt: skip
    print(f"first paint (Start -> first choices drawn): {summary(first)}")
    print(f"click -> next choices drawn:                {summary(clicks)}")
    print(
        f"the same minus the agent's own time:        mean {1000 * minus_agent:.0f} ms "
        f"(agent {1000 * agent_total / max(1, len(clicks)):.0f} ms per click)"
    )
    baseline = terminal_baseline(args.opponent, args.baseline_battles)
    print(f"baseline, terminal front end per decision (minus agent): {1000 * baseline:.1f} ms")
    if clicks and baseline > 0:
        note = (
            ""
            if args.sessions == 1
            else (f" (the baseline runs alone: this includes {args.sessions} browsers' contention)")
        )
        print(f"web click latency minus agent / terminal: {minus_agent / baseline:.1f}x{note}")
    print(f"replays and playtest records: {replays}")
    if args.screenshot:
        print(f"screenshot: {args.screenshot}")
    for error in errors:
        print("error:", error, file=sys.stderr)
    return 1 if errors or leftover else 0


if __name__ == "__main__":
    sys.exit(main())
