"""``pokegym play --web`` in a real browser: Debian's headless Chromium driven by selenium,
against the real server, simulator and agents. Nothing is mocked."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait
from web_helpers import chromium, console_errors, running_server, wait_until

from pokegym.teams import builtin_pool
from pokegym.web.session import WebConfig

pytestmark = pytest.mark.timeout(300)
RESULT = re.compile(r"You won against random in \d+ turns!|You lost: random won in \d+ turns\.|tie")
NICKNAME = "<b>x</b><script>"  # 16 characters: Showdown accepts it as a nickname


def start_battle(driver: Any, base: str, opponent: str = "random", name: str = "Tester") -> None:
    driver.get(base + "/")
    start_battle_here(driver, opponent, name)


def start_battle_here(driver: Any, opponent: str = "random", name: str = "Tester") -> None:
    wait = WebDriverWait(driver, 60)
    wait.until(EC.element_to_be_clickable((By.ID, "start-button")))
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"#opponent option[value='{opponent}']"))
    Select(driver.find_element(By.ID, "opponent")).select_by_value(opponent)
    field = driver.find_element(By.ID, "name")
    field.clear()
    field.send_keys(name)
    driver.find_element(By.ID, "start-button").click()


def rating_shown(driver: Any) -> bool:
    return driver.find_element(By.ID, "rating").is_displayed()


def choice_buttons(driver: Any) -> list[Any]:
    return [
        b for b in driver.find_elements(By.CSS_SELECTOR, "#choices button.choice") if b.is_enabled()
    ]


def click_a_choice(driver: Any, *, tera: bool = False) -> bool:
    """Click one legal choice and wait for the page to take it; False once the battle is
    over (the rating is asked)."""
    wait = WebDriverWait(driver, 120)
    wait.until(lambda d: rating_shown(d) or choice_buttons(d))
    if rating_shown(driver):
        return False
    toggles = driver.find_elements(By.ID, "tera-toggle")
    if tera and toggles and not toggles[0].is_selected():
        toggles[0].click()
    buttons = choice_buttons(driver)
    button = buttons[0]
    try:
        button.click()
    except StaleElementReferenceException:  # redrawn between the lookup and the click
        return True
    wait.until(EC.staleness_of(button))
    return True


def play_to_the_end(driver: Any, rating: int) -> str:
    clicks = 0
    while click_a_choice(driver, tera=clicks == 0):
        clicks += 1
        assert clicks < 500, "the battle does not end"
    driver.find_element(By.CSS_SELECTOR, f"#rating-buttons button[data-rating='{rating}']").click()
    WebDriverWait(driver, 60).until(
        EC.text_to_be_present_in_element((By.ID, "rating-done"), f"{rating}/5")
    )
    return str(driver.find_element(By.ID, "result-text").text)


def records(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "playtest.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.slow
def test_a_whole_battle_by_clicking_then_its_replay(tmp_path):
    config = WebConfig(opponents=("max_power", "random"), replays=str(tmp_path))
    with running_server(config) as (base, manager), chromium() as driver:
        start_battle(driver, base)
        WebDriverWait(driver, 60).until(lambda d: choice_buttons(d))
        assert driver.find_element(By.ID, "decision-title").text == "Turn 1"
        assert "Tester vs random" in driver.find_element(By.ID, "subtitle").text
        # What the page shows of the battle: HP bars, types, the Tera toggle, both teams.
        assert driver.find_elements(By.CSS_SELECTOR, "#player-info .hp-bar .hp-fill")
        assert driver.find_elements(By.CSS_SELECTOR, "#opponent-info .type")
        assert driver.find_elements(By.ID, "tera-toggle")
        assert len(driver.find_elements(By.CSS_SELECTOR, "#player-team li")) == 6
        moves = driver.find_elements(By.CSS_SELECTOR, "#choices button.move")
        assert moves and all("PP" in m.text for m in moves)
        assert driver.find_elements(By.CSS_SELECTOR, "#arena .sprite, #arena .silhouette")
        text = play_to_the_end(driver, rating=3)
        assert RESULT.search(text), text
        assert "You rated this opponent 3/5." in driver.find_element(By.ID, "rating-done").text
        log = driver.find_element(By.ID, "log").text
        assert "Turn 1: " in log and text in log
        assert console_errors(driver) == []
        first_replay = driver.find_element(By.ID, "replay-link").get_attribute("href")
        # A second battle in the same page, forfeited with the page's own buttons.
        driver.find_element(By.ID, "new-battle").click()
        start_battle_here(driver, "max_power")
        for _ in range(3):
            assert click_a_choice(driver)
        WebDriverWait(driver, 60).until(lambda d: choice_buttons(d))
        assert "Tester vs max_power" in driver.find_element(By.ID, "subtitle").text
        assert "Turn 1: " in driver.find_element(By.ID, "log").text  # a fresh log
        assert text not in driver.find_element(By.ID, "log").text
        driver.find_element(By.ID, "forfeit").click()
        driver.find_element(By.ID, "forfeit-yes").click()
        WebDriverWait(driver, 60).until(rating_shown)
        assert "You forfeited. max_power wins." in driver.find_element(By.ID, "result-text").text
        driver.find_element(By.ID, "rating-skip").click()
        WebDriverWait(driver, 60).until(
            EC.text_to_be_present_in_element((By.ID, "rating-done"), "No rating given.")
        )
        assert console_errors(driver) == []
        # The first battle's replay, offline, in the same view.
        driver.get(first_replay)
        WebDriverWait(driver, 60).until(EC.visibility_of_element_located((By.ID, "replay-bar")))
        turn = driver.find_element(By.ID, "replay-turn")
        assert turn.text.startswith("Turn 0 (1/")
        driver.find_element(By.ID, "replay-next").click()
        assert turn.text.startswith("Turn 1 (2/")
        assert "Turn 1: " in driver.find_element(By.ID, "log").text
        driver.find_element(By.ID, "replay-last").click()
        assert driver.find_element(By.ID, "replay-result").text.endswith(("won.", "tie."))
        assert console_errors(driver) == []
        wait_until(lambda: manager.simulator_battles() == 0, 10, "the simulator to drop it")
    record, forfeited = records(tmp_path)
    assert (record["rating"], record["front_end"], record["opponent"]) == (3, "web", "random")
    assert record["result"] in ("won", "lost", "tie")
    assert (forfeited["opponent"], forfeited["result"], forfeited["rating"]) == (
        "max_power", "forfeit", None,
    )  # fmt: skip
    log_text = (tmp_path / record["replay"]).with_suffix(".log").read_text()
    assert "|-terastallize|p1a:" in log_text  # the first click was a Tera move


@pytest.mark.slow
def test_two_sessions_at_once(tmp_path):
    config = WebConfig(opponents=("random",), replays=str(tmp_path))
    with running_server(config) as (base, manager), chromium() as first, chromium() as second:
        start_battle(first, base, name="Alice")
        start_battle(second, base, name="Bob")
        for driver in (first, second):
            WebDriverWait(driver, 60).until(lambda d: choice_buttons(d))
        assert len(manager.running()) == 2
        going = {"first": True, "second": True}
        turns = 0
        while any(going.values()):
            for key, driver in (("first", first), ("second", second)):
                if going[key]:
                    going[key] = click_a_choice(driver)
            turns += 1
            assert turns < 500
        results = []
        for driver, rating in ((first, 1), (second, 5)):
            driver.find_element(
                By.CSS_SELECTOR, f"#rating-buttons button[data-rating='{rating}']"
            ).click()
            WebDriverWait(driver, 60).until(
                EC.text_to_be_present_in_element((By.ID, "rating-done"), f"{rating}/5")
            )
            results.append(driver.find_element(By.ID, "result-text").text)
            assert console_errors(driver) == []
        assert all(RESULT.search(text) for text in results), results
        assert "Alice vs random" in first.find_element(By.ID, "subtitle").text
        assert "Bob vs random" in second.find_element(By.ID, "subtitle").text
    found = sorted((r["player_name"], r["rating"]) for r in records(tmp_path))
    assert found == [("Alice", 1), ("Bob", 5)]


def send_from_page(driver: Any, payload: dict[str, Any]) -> int:
    script = (
        "const done = arguments[arguments.length - 1];"
        "window.pokegymSend(arguments[0]).then((answer) => done(answer.status));"
    )
    return int(driver.execute_async_script(script, payload))


@pytest.mark.slow
def test_an_illegal_or_stale_choice_posted_gets_a_message_and_the_battle_goes_on(tmp_path):
    config = WebConfig(opponents=("random",), replays=str(tmp_path))
    with running_server(config) as (base, manager), chromium() as driver:
        start_battle(driver, base)
        WebDriverWait(driver, 60).until(lambda d: choice_buttons(d))
        web = manager.running()[0]
        decision = web.decision
        message = driver.find_element(By.ID, "message")
        assert send_from_page(driver, {"decision": decision, "option": 42}) == 422
        assert "There is no choice 42" in message.text and "error" in message.get_attribute("class")
        assert send_from_page(driver, {"decision": decision + 3, "option": 1}) == 409
        assert f"decision {decision} is open now" in message.text
        assert send_from_page(driver, {"decision": decision, "text": "<i>boom</i>"}) == 422
        assert "<i>boom</i>" in message.text  # the server's message, shown as text
        assert not driver.find_elements(By.CSS_SELECTOR, "#message i")
        assert web.decision == decision and web.status == "choosing"  # nothing was sent
        assert click_a_choice(driver)
        wait_until(lambda: web.decision > decision or not web.running(), 60, "the next decision")
        errors = console_errors(driver)
        # Only the refused requests themselves, reported by the browser's network layer.
        assert len(errors) == 3 and all(
            re.search(r"status of (409|422)", e["message"]) for e in errors
        ), errors


@pytest.mark.slow
def test_a_nickname_with_markup_shows_as_text(tmp_path):
    text = builtin_pool("gen9ou").teams[0].text
    species = text.split("@")[0].split("\n")[0].strip()
    team = tmp_path / "team.txt"
    team.write_text(text.replace(species, f"{NICKNAME} ({species})", 1))
    config = WebConfig(
        battle_format="gen9ou", opponents=("random",), team=str(team),
        opponent_team=str(team), replays=str(tmp_path / "replays"),
    )  # fmt: skip
    with running_server(config) as (base, _), chromium() as driver:
        start_battle(driver, base)
        wait = WebDriverWait(driver, 60)
        wait.until(lambda d: choice_buttons(d))
        assert driver.find_element(By.ID, "decision-title").text == "Team Preview: choose your lead"
        label = f"{NICKNAME} ({species})"
        lead = [b for b in choice_buttons(driver) if label in b.text]
        assert len(lead) == 1, [b.text for b in choice_buttons(driver)]
        assert label in driver.find_element(By.ID, "player-team").text
        lead[0].click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "player-info"), label))
        # The opponent's Pokémon of that name shows as text too, whenever it is seen.
        assert not driver.find_elements(By.CSS_SELECTOR, "#battle b, #battle script")
        assert driver.execute_script("return document.querySelectorAll('script').length") == 1
        assert console_errors(driver) == []


@pytest.mark.slow
def test_a_closed_tab_forfeits_after_the_timeout(tmp_path):
    config = WebConfig(opponents=("random",), replays=str(tmp_path), abandon_after=3.0)
    with running_server(config) as (base, manager):
        with chromium() as driver:
            start_battle(driver, base)
            WebDriverWait(driver, 60).until(lambda d: choice_buttons(d))
            web = manager.running()[0]
            assert click_a_choice(driver)
            WebDriverWait(driver, 60).until(lambda d: choice_buttons(d))
        # The browser is gone (its long poll with it): the battle is forfeited.
        wait_until(lambda: web.done.is_set(), 60, "the battle to be forfeited")
        assert web.result is not None
        assert (web.result["result"], web.result["ended_by"]) == ("forfeit", "abandoned")
        wait_until(lambda: manager.simulator_battles() == 0, 10, "the simulator to drop it")
    [record] = records(tmp_path)
    assert (record["ended_by"], record["result"], record["rating"]) == (
        "abandoned",
        "forfeit",
        None,
    )
