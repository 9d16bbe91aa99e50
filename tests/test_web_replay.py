"""Offline replays (``pokegym replay``): the files ``pokegym play`` and ``compare --replays``
write, read back turn by turn into the same view as a live battle."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from web_helpers import Client, running_server

from pokegym.agents import make_agent
from pokegym.arena import Arena, ArenaConfig
from pokegym.play import display_names, make_play_setup, play_battle_interactive, save_battle
from pokegym.text.render import GameNames
from pokegym.web.replay import ReplayError, read_replay, replay_frames
from pokegym.web.session import WebConfig

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A terminal battle against max_power, six moves then Ctrl-D: (log, sidecar)."""
    folder = tmp_path_factory.mktemp("replays")
    names = display_names("Tester", "max_power")
    setup = make_play_setup("gen9randombattle", names=names)
    answers = iter(["1"] * 6)

    def typed(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    result = play_battle_interactive(
        setup, make_agent("max_power"), input_fn=typed, output=io.StringIO(), seed=21,
        player_name=names[0], opponent_name=names[1],
    )  # fmt: skip
    log_path, json_path = save_battle(result, folder, opponent_spec="max_power")
    assert log_path is not None
    return log_path, json_path


def test_a_play_log_becomes_one_frame_per_turn(played):
    log_path, json_path = played
    replay = read_replay(log_path)
    assert replay.players == ("Tester", "max_power") and replay.gen == 9
    assert read_replay(json_path).lines == replay.lines  # the sidecar points at the log
    frames = replay_frames(replay, GameNames(9))
    turns = [f["turn"] for f in frames]
    assert turns[0] == 0 and turns == sorted(turns)
    data = json.loads(json_path.read_text())
    assert turns[-1] == data["turns"]
    assert frames[-1]["result"] == "max_power won."  # Ctrl-D forfeited
    assert all(f["result"] is None for f in frames[:-1])
    lead = frames[0]["view"]
    assert lead["player"]["active"] and lead["opponent"]["active"]
    assert lead["player"]["name"] == "Tester" and lead["opponent"]["name"] == "max_power"
    assert frames[1]["events"].startswith("Turn 1: ")
    assert frames[0]["view"]["choices"] == []  # a replay offers no choices
    json.dumps(frames)


@pytest.mark.slow
def test_an_arena_html_replay_is_read_offline(tmp_path):
    config = ArenaConfig(
        agents=["max_power", "random"], battles_per_pair=1, concurrency=1, simulators=1,
        replays=str(tmp_path), clock_bank=None,
    )  # fmt: skip
    result = Arena(config).run()
    [record] = result.battles
    assert record.replay is not None and record.replay.endswith(".html")
    replay = read_replay(record.replay)
    assert replay.players == ("p1", "p2")  # the arena's simulator names the sides only
    frames = replay_frames(replay, GameNames(replay.gen))
    assert frames[-1]["turn"] == record.turns
    side = "p1" if record.winner == record.p1 else "p2"
    assert frames[-1]["result"] == f"{side} won."
    assert all(f["view"]["player"]["active"] for f in frames)


def test_files_that_are_not_replays_are_refused(tmp_path, played):
    with pytest.raises(ReplayError, match="No replay file"):
        read_replay(tmp_path / "missing.log")
    (tmp_path / "notes.txt").write_text("|turn|1\n")
    with pytest.raises(ReplayError, match=r"\.log \(pokegym play\)"):
        read_replay(tmp_path / "notes.txt")
    (tmp_path / "page.html").write_text("<html>no battle here</html>")
    with pytest.raises(ReplayError, match="battle-log-data"):
        read_replay(tmp_path / "page.html")
    (tmp_path / "side.json").write_text(json.dumps({"log": None}))
    with pytest.raises(ReplayError, match="names no protocol log"):
        read_replay(tmp_path / "side.json")
    (tmp_path / "empty.log").write_text("|j|someone\n|c|someone|hello\n")
    with pytest.raises(ReplayError, match="holds no battle"):
        read_replay(tmp_path / "empty.log")


def test_replays_over_http(played):
    log_path, json_path = played
    folder = log_path.parent
    with running_server(WebConfig(opponents=("random",), replays=str(folder))) as (base, _):
        client = Client(base)
        status, body = client.call("GET", f"/api/replay?name={json_path.name}")
        assert status == 200 and body["players"] == ["Tester", "max_power"]
        assert body["frames"][-1]["result"] == "max_power won."
        for bad in ("..%2Fetc%2Fpasswd", ".hidden.log", "missing.log", "playtest.jsonl", ""):
            status, body = client.call("GET", f"/api/replay?name={bad}")
            assert status == 404 and body["error"], bad
    replay_only = WebConfig(opponents=(), replay_files=(str(log_path),), replays=str(folder))
    with running_server(replay_only) as (base, _):
        client = Client(base)
        status, config = client.call("GET", "/api/config")
        assert status == 200 and config["replays_only"] and config["opponents"] == []
        status, body = client.call("GET", "/api/replay?name=0")
        assert status == 200 and body["name"] == log_path.name
        status, body = client.call("POST", "/api/battle", {"opponent": "random"})
        assert status == 400 and "only shows replays" in body["error"]


@pytest.mark.timeout(180)
def test_the_replay_command(played, tmp_path):
    log_path, _ = played
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    missing = subprocess.run(
        [sys.executable, "-m", "pokegym.cli", "replay", str(tmp_path / "nope.log")],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert missing.returncode == 2 and "No replay file" in missing.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "pokegym.cli", "replay", str(log_path), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("Replay on http://127.0.0.1:"), line
        url = line.split(" on ")[1].split()[0]
        base = url.split("/replay")[0]
        status, body = Client(base).call("GET", "/api/replay?name=0")
        assert status == 200 and len(body["frames"]) > 2
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "The server stopped." in out
