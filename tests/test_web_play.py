"""``pokegym play --web`` over HTTP: real server (uvicorn), real simulator, real agents.

The page's own behaviour in a browser is tested in ``test_web_browser.py``; here the
API is driven directly, the way a script or a second tab could.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from web_helpers import Client, running_server, wait_until

from pokegym.choices import choice_options
from pokegym.play import make_play_setup
from pokegym.text.render import GameNames
from pokegym.web.session import WebConfig
from pokegym.web.sprites import SpriteIndex, slug, sprites_folder
from pokegym.web.view import battle_view

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_battle_view_of_a_real_battle():
    setup = make_play_setup("gen9randombattle", names=("Tester", "random"))
    import numpy as np

    session = setup._start_session(np.random.default_rng(5))
    try:
        battle = session.battles[0]
        names = GameNames(9)
        options = choice_options(battle, setup.codec, names)
        view = battle_view(battle, names, options)
        json.dumps(view)  # plain JSON all the way down
        assert view["turn"] == 1 and view["title"] == "Turn 1"
        assert [c["number"] for c in view["choices"]] == [o.number for o in options]
        moves = [c for c in view["choices"] if c["kind"] == "move"]
        assert moves and all(c["type"] and c["maxpp"] and c["pp"] == c["maxpp"] for c in moves)
        gimmicks = [c for c in view["choices"] if c["kind"] == "gimmick"]
        assert gimmicks and gimmicks[0]["tera_type"] == view["player"]["active"]["tera_type"]
        switches = [c for c in view["choices"] if c["kind"] == "switch"]
        assert len(switches) == 5 and all(c["pokemon"]["hp"] == 1.0 for c in switches)
        own = view["player"]["active"]
        current, total = own["hp_text"].split("/")  # exact HP on our side
        assert int(current) == int(total) > 0
        assert own["ability"] and own["item"] and len(own["moves"]) == 4
        opponent = view["opponent"]["active"]
        assert opponent["hp_text"] == "100%" and opponent["tera_type"] is None
        assert view["opponent"]["unseen"] == 5
        effective = [c["effectiveness"] for c in moves if c["category"] != "Status"]
        assert all(e in (0, 0.25, 0.5, 1, 2, 4) for e in effective)
    finally:
        session.close()


@pytest.mark.parametrize(
    ("name", "expected"),
    [("Mr. Mime", "mr-mime"), ("Type: Null", "type-null"), ("Farfetch’d", "farfetchd"),
     ("Flabébé", "flabebe"), ("Ho-Oh", "ho-oh"), ("Zygarde-10%", "zygarde-10")],
)  # fmt: skip
def test_sprite_file_names(name, expected):
    assert slug(name) == expected


def test_sprite_index_picks_forms_and_refuses_other_paths(tmp_path):
    for stem in ("rotom", "rotom-wash", "necrozma-dusk", "garchomp"):
        (tmp_path / f"{stem}.png").write_bytes(b"\x89PNG")
    index = SpriteIndex(tmp_path, GameNames(9).dex.species)
    assert index.stem("rotomwash") == "rotom-wash"
    assert index.stem("rotomheat") == "rotom"  # the base form's sprite
    assert index.stem("necrozmaduskmane") == "necrozma-dusk"
    assert index.stem("gholdengo") is None  # no file: the page draws a silhouette
    assert index.url("garchomp") == "/sprites/garchomp.png"
    assert index.file("garchomp") == tmp_path / "garchomp.png"
    for bad in ("../garchomp", "Garchomp", "missing", ""):
        assert index.file(bad) is None
    assert len(SpriteIndex(None, {})) == 0 and SpriteIndex(None, {}).url("garchomp") is None


def test_the_npm_install_brings_the_sprites():
    folder = sprites_folder()
    assert folder is not None, "pokegym showdown install installs pokesprite-images"
    index = SpriteIndex(folder, GameNames(9).dex.species)
    assert len(index) > 1000
    assert index.file(index.stem("garchomp") or "")
    assert index.stem("ninetalesalola") == "ninetales-alola"


@pytest.mark.slow
def test_a_whole_battle_over_http_with_stale_and_unknown_choices(tmp_path):
    config = WebConfig(opponents=("random", "max_power"), replays=str(tmp_path))
    with running_server(config) as (base, manager):
        client = Client(base)
        assert client.state() == {"status": "none"}
        status, config_json = client.call("GET", "/api/config")
        assert status == 200 and [o["spec"] for o in config_json["opponents"]] == [
            "random", "max_power",
        ]  # fmt: skip
        status, started = client.call("POST", "/api/battle", {"opponent": "random", "name": "Ash"})
        assert status == 201 and started["player_name"] == "Ash"
        status, again = client.call("POST", "/api/battle", {"opponent": "random", "name": "Ash"})
        assert status == 409 and "already running" in again["error"]
        refusals = 0
        state = client.until({"choosing"})
        while state["status"] == "choosing":
            decision = state["decision"]
            number = state["view"]["choices"][-1]["number"]
            if refusals < 3:  # a few refused posts in the first turns; the battle goes on
                status, body = client.call(
                    "POST", "/api/choice", {"decision": decision + 1, "option": number}
                )
                assert status == 409 and f"decision {decision} is open" in body["error"]
                status, body = client.call(
                    "POST", "/api/choice", {"decision": decision, "option": 99}
                )
                assert status == 422 and "There is no choice 99" in body["error"]
                status, body = client.call("POST", "/api/choice", {"decision": decision,
                                                                   "text": "banana"})  # fmt: skip
                assert status == 422 and "banana" in body["error"]
                refusals += 1
            status, body = client.call(
                "POST", "/api/choice", {"decision": decision, "option": number}
            )
            assert status == 202, body
            status, body = client.call(  # a double click: that decision is closed now
                "POST", "/api/choice", {"decision": decision, "option": number}
            )
            assert status == 409
            state = client.until({"choosing", "rating", "finished", "error"}, state["version"])
        assert state["status"] == "rating", state
        status, body = client.call("POST", "/api/rating", {"rating": 9})
        assert status == 422 and "1 (easy) to 5" in body["error"]
        assert client.call("POST", "/api/rating", {"rating": 2})[0] == 202
        state = client.until({"finished"})
        result = state["result"]
        assert result["result"] in ("won", "lost", "tie") and result["rating"] == 2
        assert result["text"] in [e["text"] for e in state["log"]]
        assert any(e["text"].startswith("Turn 1: ") for e in state["log"])
        wait_until(lambda: manager.simulator_battles() == 0, 10, "the simulator to drop it")
    sidecar = json.loads((tmp_path / result["replay"]).read_text())
    assert sidecar["rating"] == 2 and sidecar["opponent"] == "random"
    assert len(sidecar["decision_seconds"]) == len(sidecar["choices"])
    assert all(c["input"].isdigit() for c in sidecar["choices"])  # the buttons' numbers
    records = [json.loads(line) for line in (tmp_path / "playtest.jsonl").read_text().splitlines()]
    assert len(records) == 1 and records[0]["front_end"] == "web"
    assert records[0]["result"] == result["result"] and records[0]["rating"] == 2
    assert records[0]["replay"] == result["replay"]


@pytest.mark.slow
def test_forfeit_and_then_a_new_battle_in_the_same_browser_session(tmp_path):
    config = WebConfig(opponents=("random",), replays=str(tmp_path))
    with running_server(config) as (base, manager):
        first, second = Client(base), Client(base)
        for client in (first, second):
            assert client.call("POST", "/api/battle", {"opponent": "random"})[0] == 201
        assert len(manager.running()) == 2  # two browser sessions, two battles
        first.until({"choosing"})
        assert first.call("POST", "/api/forfeit", {})[0] == 202
        state = first.until({"rating"})
        assert "You forfeited. random wins." in state["message"]
        assert first.call("POST", "/api/rating", {"rating": None})[0] == 202
        state = first.until({"finished"})
        assert (state["result"]["result"], state["result"]["rating"]) == ("forfeit", None)
        assert first.call("POST", "/api/forfeit", {})[0] == 409  # nothing left to forfeit
        # The second session's battle was untouched; the first may start another.
        assert second.until({"choosing"})["status"] == "choosing"
        status, started = first.call("POST", "/api/battle", {"opponent": "random"})
        assert status == 201 and started["id"] != state["id"]
    # Stopping the server forfeited the battles still running and saved them.
    records = [json.loads(line) for line in (tmp_path / "playtest.jsonl").read_text().splitlines()]
    assert sorted(r["ended_by"] for r in records) == ["forfeit", "shutdown", "shutdown"]
    assert all(r["result"] == "forfeit" for r in records)


@pytest.mark.slow
def test_a_page_that_is_gone_forfeits_after_the_timeout(tmp_path):
    config = WebConfig(opponents=("random",), replays=str(tmp_path), abandon_after=2.0)
    with running_server(config) as (base, manager):
        client = Client(base)
        assert client.call("POST", "/api/battle", {"opponent": "random"})[0] == 201
        client.until({"choosing"})
        web = manager.running()[0]
        wait_until(lambda: web.done.is_set(), 60, "the battle to be forfeited")
        assert client.state()["status"] == "finished"  # a page coming back sees the end
        result = client.state()["result"]
        assert (result["result"], result["ended_by"]) == ("forfeit", "abandoned")
        assert "forfeited" in result["text"]
        wait_until(lambda: manager.simulator_battles() == 0, 10, "the simulator to drop it")
    log = next(tmp_path.glob("*.log")).read_text()
    assert log.rstrip().endswith("|win|random")


@pytest.mark.slow
def test_bad_requests_get_a_message(tmp_path):
    config = WebConfig(opponents=("random",), replays=str(tmp_path))
    with running_server(config) as (base, _):
        client = Client(base)
        status, body = client.call("POST", "/api/battle", raw=b"opponent=random",
                                   content_type="application/x-www-form-urlencoded")  # fmt: skip
        assert status == 400 and "JSON" in body["error"]
        status, body = client.call("POST", "/api/battle", raw=b"{not json")
        assert status == 400 and "not valid JSON" in body["error"]
        status, body = client.call("POST", "/api/battle", {"opponent": "abyssal"})
        assert status == 400 and "Unknown opponent 'abyssal'" in body["error"]
        status, body = client.call("POST", "/api/battle", {"opponent": "random", "name": "a|b"})
        assert status == 400 and body["error"].startswith("Your name")
        status, body = client.call("POST", "/api/choice", {"decision": 1, "option": 1})
        assert status == 404 and "No battle" in body["error"]
        status, _ = client.call("GET", "/api/config", headers={"Host": "evil.example"})
        assert status == 400  # a loopback server answers loopback names only
        status, _ = client.call("GET", "/sprites/..%2Fsecret.png")
        assert status == 404
        status, headers_page = client.call("GET", "/")
        assert status == 200 and "<title>pokegym</title>" in headers_page


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_cli(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pokegym.cli", *args],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    return proc, line


def stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, err


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_command_serves_and_stops_cleanly_on_sigterm(tmp_path):
    port = free_port()
    proc, line = start_cli(
        "play", "--web", "--port", str(port), "--opponent", "random,max_power",
        "--replays", str(tmp_path / "replays"), cwd=tmp_path,
    )  # fmt: skip
    try:
        assert f"http://127.0.0.1:{port}/" in line, line + (
            proc.stderr.read() if proc.stderr else ""
        )
        client = Client(f"http://127.0.0.1:{port}")
        status, config = client.call("GET", "/api/config")
        assert status == 200 and config["format"] == "gen9randombattle"
        assert client.call("POST", "/api/battle", {"opponent": "max_power"})[0] == 201
        client.until({"choosing"})
        simulators = [
            int(p) for p in os.listdir("/proc") if p.isdigit() and _child_of(int(p), proc.pid)
        ]
        assert simulators, "the server runs its battles on a simulator process"
    finally:
        code, err = stop(proc)
    assert code == 0, err
    assert "Traceback" not in err
    assert not [p for p in simulators if Path(f"/proc/{p}").exists()], "simulator left running"
    record = json.loads((tmp_path / "replays" / "playtest.jsonl").read_text())
    assert (record["ended_by"], record["result"]) == ("shutdown", "forfeit")


def _child_of(pid: int, parent: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return int(stat.rsplit(")", 1)[1].split()[1]) == parent and b"sim_bridge" in cmdline


@pytest.mark.timeout(120)
def test_the_command_reports_a_taken_port_and_bad_opponents(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "pokegym.cli", "play", "--web", "--port", str(port),
             "--opponent", "random"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"Cannot listen on 127.0.0.1:{port}" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "pokegym.cli", "play", "--web", "--port", str(free_port()),
         "--opponent", "random,no_such_agent"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert result.returncode == 2 and "No agent named 'no_such_agent'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_wait_for_state_changes_is_a_long_poll(tmp_path):
    config = WebConfig(opponents=("random",), replays=str(tmp_path), poll_seconds=1.0)
    with running_server(config) as (base, _):
        client = Client(base)
        assert client.call("POST", "/api/battle", {"opponent": "random"})[0] == 201
        state = client.until({"choosing"})
        # Nothing changes while the person thinks: the poll answers unchanged.
        again = client.state(state["version"])
        assert again["version"] == state["version"] and again["status"] == "choosing"


def test_the_front_end_waits_for_the_page_and_notices_when_it_is_gone():
    from pokegym.choices import ChoiceOption
    from pokegym.play import PlayerLeft
    from pokegym.web.session import StaleChoiceError, UnknownChoiceError, WebBattle, WebFrontEnd

    now = [100.0]
    web = WebBattle(
        opponent_spec="random", names=("Ash", "random"), battle_format="gen9randombattle",
        clock=lambda: now[0],
    )  # fmt: skip
    front = WebFrontEnd(web, WebConfig(abandon_after=60.0), None)
    web.options = [ChoiceOption(1, "move", "Thunderbolt", "move 1")]
    web.status, web.decision = "choosing", 3
    with pytest.raises(StaleChoiceError, match="decision 2"):
        web.submit_choice(2, option=1)
    with pytest.raises(UnknownChoiceError, match="no choice 2"):
        web.submit_choice(3, option=2)
    assert web.submit_choice(3, text="thunder").choice == "move 1"
    assert front._next() == ("choice", (web.options[0], "thunder"))
    with pytest.raises(StaleChoiceError):  # the decision was taken
        web.submit_choice(3, option=1)
    now[0] += 59.0
    web.submit_forfeit()
    assert front._next() == ("forfeit", None)  # a page seen 59 s ago is still there
    now[0] += 2.0
    with pytest.raises(PlayerLeft) as left:
        front._next()
    assert left.value.how == "abandoned"
    web.status = "rating"
    assert front.rate() is None  # nobody left to rate
    web.touch()
    web.stopping.set()
    with pytest.raises(PlayerLeft) as stopped:
        front._next()
    assert stopped.value.how == "shutdown"
