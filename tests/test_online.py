"""``pokegym ladder | accept | challenge``: agents on a Showdown server.

End to end on a real local Showdown server with two ``pokegym`` processes; the password
rules and the named errors as unit tests (the login server is the only double: a local
HTTP endpoint that answers as Showdown's ``action.php`` does).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from helpers import process_group_alive
from poke_env.ps_client import AccountConfiguration, ServerConfiguration
from websockets.exceptions import ConnectionClosedOK

from pokegym.errors import InvalidTeamError, UnknownFormatError
from pokegym.online import (
    AgentFailedError,
    BattleResult,
    LoginRefusedError,
    OnlineConfig,
    OpponentNotFoundError,
    Password,
    PasswordError,
    ServerUnreachableError,
    read_password,
    run_online,
    summary_table,
)
from pokegym.online.account import fetch_assertion, parse_login_answer
from pokegym.online.cli import read_team
from pokegym.online.player import OnlineClient, popup_error
from pokegym.online.session import check_format, check_server
from pokegym.showdown.server import LocalServer, free_port
from pokegym.stats import wilson_interval

SECRET = "hunter2-Secret!pw"
INVALID_TEAM = "Pikachu @ Light Ball\nAbility: Static\n- Thunderbolt\n- Lovely Kiss\n"


def pokegym(*args: str) -> list[str]:
    return [sys.executable, "-m", "pokegym.cli", *args]


def _interruptible() -> None:
    """In the child before it runs: Ctrl-C as a terminal delivers it. A test run started as
    a background job of a script inherits SIGINT ignored, and so would the commands."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True,
                            preexec_fn=_interruptible)  # fmt: skip


def run(args: list[str], env: dict[str, str] | None = None, timeout: float = 120):
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("pokegym: error: ") and "Traceback" not in stderr
    return lines[0]


def results(folder: Path) -> list[dict]:
    path = folder / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for_results(folder: Path, count: int, procs: list[subprocess.Popen[str]]) -> None:
    for _ in range(1200):
        if len(results(folder)) >= count:
            return
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} battles finished in {folder}")


def play_args(mode: str, server: str, name: str, out: Path, games: int, *extra: str) -> list[str]:
    return pokegym(mode, "--server", server, "--username", name, "--games", str(games),
                   "--out", str(out), *extra)  # fmt: skip


# ------------------------------------------------------------------ password rules


def test_password_is_masked_everywhere():
    password = Password(SECRET)
    config = OnlineConfig("ladder", "random", "localhost:8000", "pgA", password=password)
    for text in (repr(password), str(password), f"{password}", f"{password!r}", repr(config),
                 str(config), f"{password:>20}", "%r" % (password,)):  # noqa: UP031  # fmt: skip
        assert SECRET not in text
    assert "********" in repr(config)
    assert password.reveal() == SECRET
    with pytest.raises(TypeError, match="not stored"):
        pickle.dumps(config)


def test_password_from_a_file_or_the_environment(tmp_path):
    secret_file = tmp_path / "password"
    secret_file.write_text(SECRET + "\n")
    other = {"POKEGYM_PASSWORD": "from-the-environment"}
    assert read_password(secret_file, other).reveal() == SECRET  # the file wins
    assert read_password(None, other).reveal() == "from-the-environment"
    assert read_password(None, {}) is None
    assert read_password(None, {"POKEGYM_PASSWORD": ""}) is None


@pytest.mark.parametrize("content", [None, b"", b"\n\n", b"\xff\xfe" + SECRET.encode()])
def test_unusable_password_file_is_a_named_error(tmp_path, content):
    path = tmp_path / "password"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(PasswordError) as caught:
        read_password(path, {})
    assert str(path) in str(caught.value) and SECRET not in str(caught.value)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (']{"actionsuccess":false,"assertion":";;Wrong password."}', "Wrong password"),
        (']{"actionsuccess":true,"assertion":";"}', "is registered"),
        (']{"actionsuccess":false,"assertion":false}', "wrong password"),
        ("<html>not a login server</html>", "no usable answer"),
    ],
)
def test_login_answers_that_refuse(answer, reason):
    with pytest.raises(LoginRefusedError, match=reason):
        parse_login_answer(answer, "pgA", "https://login.example/action.php")


def test_login_answer_with_a_token():
    token = "challenge,pga,2,1700000000,sim3;signature"
    assert parse_login_answer(']{"assertion":"' + token + '"}', "pgA", "x") == token


class LoginServer:
    """A local stand-in for Showdown's login server: answers every POST with ``answer``
    and keeps the request bodies."""

    def __init__(self, answer: str):
        bodies: list[dict[str, list[str]]] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                bodies.append(parse_qs(body))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(answer.encode())

            def log_message(self, *args: object) -> None:
                return None

        self.bodies = bodies
        self.http = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_port}/action.php"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def login_server(request) -> Iterator[LoginServer]:
    server = LoginServer(request.param)
    yield server
    server.close()


@pytest.mark.parametrize(
    "login_server", [']{"actionsuccess":false,"assertion":";;Wrong password."}'], indirect=True
)
def test_wrong_password_at_the_login_server(login_server):
    with pytest.raises(LoginRefusedError, match="Wrong password") as caught:
        fetch_assertion(login_server.url, "pgA", Password(SECRET), "4|abc")
    assert SECRET not in str(caught.value)
    assert login_server.bodies == [
        {"act": ["login"], "name": ["pgA"], "pass": [SECRET], "challstr": ["4%7Cabc"]}
    ]


@pytest.mark.parametrize(
    "url",
    ["http://login.example.org/action.php", "ftp://127.0.0.1/action.php", "login.example.org"],
)
def test_no_password_goes_to_a_login_server_over_plain_http(url):
    # Refused before anything is sent (no network needed); the message names the rule.
    with pytest.raises(PasswordError, match="https://") as caught:
        fetch_assertion(url, "pgA", Password(SECRET), "4|abc", timeout=1)
    assert SECRET not in str(caught.value)


def test_login_server_that_does_not_answer():
    url = f"http://127.0.0.1:{free_port()}/action.php"
    with pytest.raises(ServerUnreachableError, match="did not answer") as caught:
        fetch_assertion(url, "pgA", Password(SECRET), "4|abc", timeout=5)
    assert SECRET not in str(caught.value)


# ------------------------------------------------------------- errors, no server


def test_server_popups_become_named_errors():
    team = popup_error(
        "Your team was rejected for the following reasons:||||- Pikachu can't learn Lovely "
        "Kiss.||- Lovely Kiss is banned.||- If you're not using a custom client, please "
        "report this as a bug.",
        "gen9ou",
    )
    assert isinstance(team, InvalidTeamError) and "\n" not in str(team)
    assert "Pikachu can't learn Lovely Kiss; Lovely Kiss is banned." in str(team)
    assert "custom client" not in str(team)
    fmt = popup_error('Your selected format is invalid:||||- Unrecognized format "gen9x"', "gen9x")
    assert isinstance(fmt, UnknownFormatError) and "gen9x" in str(fmt)
    ladder = popup_error("Error: Your format gen9x is not ladderable.", "gen9x")
    assert isinstance(ladder, UnknownFormatError)
    assert isinstance(popup_error("The user 'nobody' was not found.", "gen9ou"),
                      OpponentNotFoundError)  # fmt: skip
    assert popup_error("You have been idle for a while.", "gen9ou") is None


def _client(on_battle_message) -> OnlineClient:
    return OnlineClient(
        AccountConfiguration("pgUnit", None),
        password=None,
        login_server="http://127.0.0.1:9/action.php",
        battle_format="gen9randombattle",
        log_level=logging.CRITICAL + 1,
        on_battle_message=on_battle_message,
        start_listening=False,
        server_configuration=ServerConfiguration("ws://127.0.0.1:9", ""),
    )


def test_a_battle_message_met_by_a_closed_connection_is_not_an_error():
    """A battle that starts as the run is interrupted: its first answer (``/timer on``) meets
    the closed connection. That ends the message quietly, and nothing else is swallowed."""

    async def closed(split_messages: list[list[str]]) -> None:
        raise ConnectionClosedOK(None, None)

    async def broken(split_messages: list[list[str]]) -> None:
        raise ValueError("a parser error")

    message = ">battle-gen9randombattle-7\n|init|battle"
    asyncio.run(_client(closed)._handle_message(message))
    with pytest.raises(ValueError, match="a parser error"):
        asyncio.run(_client(broken)._handle_message(message))


def test_summary_table_counts_timer_losses_apart():
    def battle(result: str, ended_by: str = "battle") -> BattleResult:
        return BattleResult("battle-x-1", "gen9ou", "a", "b", result, ended_by, 10, "logs/x")

    table = summary_table([battle("win"), battle("win", "timer"), battle("loss"),
                           battle("loss", "timer"), battle("tie")])  # fmt: skip
    header, row = table.splitlines()
    assert header.split() == ["games", "wins", "losses", "ties", "win", "rate", "95", "%",
                              "interval", "lost", "on", "timer"]  # fmt: skip
    low, high = wilson_interval(2.5, 5)
    assert row.split() == ["5", "2", "2", "1", "50.0", "%",
                           f"{100 * low:.1f}-{100 * high:.1f}", "%", "1"]  # fmt: skip
    assert summary_table([]).splitlines()[1].split()[:4] == ["0", "0", "0", "0"]


@pytest.mark.parametrize("bad", ["foo", "", "9ou", "gen0ou"])
def test_what_is_not_a_format_id(bad):
    with pytest.raises(UnknownFormatError, match="not a Showdown format id"):
        check_format(bad)


def test_server_addresses():
    assert check_server("localhost:8000") == "ws://localhost:8000/showdown/websocket"
    assert check_server("wss://sim3.psim.us") == "wss://sim3.psim.us/showdown/websocket"
    for bad in ("localhost:", "localhost:port", ""):
        with pytest.raises(ServerUnreachableError, match="not a server address"):
            check_server(bad)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot be read"), (b"\xff\xfe\x00", "not UTF-8"), (b"\n\n", "no Pok"),
     (b"@@@ ???\n- - -", "not a Showdown team")],
)  # fmt: skip
def test_bad_team_files(tmp_path, content, message):
    path = tmp_path / "team.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InvalidTeamError, match=message):
        read_team(str(path))


def test_team_file_is_packed(tmp_path):
    path = tmp_path / "team.txt"
    path.write_text(INVALID_TEAM)
    assert read_team(str(path)) == "Pikachu||lightball|static|thunderbolt,lovelykiss|||||||"


def test_unreachable_server_is_one_line(tmp_path):
    port = free_port()
    result = run(play_args("ladder", f"127.0.0.1:{port}", "pgA", tmp_path / "out", 1,
                           "--agent", "random"))  # fmt: skip
    assert result.returncode == 2
    line = one_error_line(result.stderr)
    assert f"Could not connect to the Showdown server at ws://127.0.0.1:{port}" in line


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [(["--format", "foo"], "not a Showdown format id"),
     (["--team", "/nonexistent/team.txt"], "cannot be read"),
     (["--games", "0"], "--games must be at least 1"),
     (["--password-file", "/nonexistent/pw"], "Cannot read the password file")],
)  # fmt: skip
def test_bad_arguments_fail_before_connecting(tmp_path, extra, fragment):
    result = run(play_args("ladder", "localhost:8000", "pgA", tmp_path / "out", 1,
                           "--agent", "random", *extra))  # fmt: skip
    assert result.returncode == 2
    assert fragment in one_error_line(result.stderr)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------- on a local server


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A local Showdown server of this module's own (``--no-security``)."""
    with LocalServer() as local:
        yield f"127.0.0.1:{local.port}"


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(300)
def test_accept_and_challenge_play_ten_games(server, tmp_path):
    accept = start(play_args("accept", server, "pgAccept", tmp_path / "a", 10,
                             "--agent", "random", "--opponent", "pgChallenge"))  # fmt: skip
    challenge = start(play_args("challenge", server, "pgChallenge", tmp_path / "c", 10,
                                "--agent", "max_power", "--opponent", "pgAccept"))  # fmt: skip
    outputs = {}
    for name, proc in (("c", challenge), ("a", accept)):
        out, err = proc.communicate(timeout=280)
        outputs[name] = out
        assert proc.returncode == 0, err
        assert err == ""  # no error, no warning
    for name, me, them in (("a", "pgAccept", "pgChallenge"), ("c", "pgChallenge", "pgAccept")):
        folder = tmp_path / name
        lines = results(folder)
        assert len(lines) == 10
        assert {r["player"] for r in lines} == {me} and {r["opponent"] for r in lines} == {them}
        assert all(r["format"] == "gen9randombattle" and r["turns"] > 0 for r in lines)
        for r in lines:
            log = (folder / r["log"]).read_text()
            assert log.startswith("|init|battle\n") and "|request|" not in log
            assert "Battle timer is ON" in log
            assert f"|win|{me}" in log if r["result"] == "win" else f"|win|{them}" in log
        wins = sum(r["result"] == "win" for r in lines)
        losses = sum(r["result"] == "loss" for r in lines)
        table = outputs[name].split("games  wins", 1)[1].splitlines()[1].split()
        assert table[:3] == ["10", str(wins), str(losses)]
        assert f"Results: {folder / 'results.jsonl'}" in outputs[name]
    by_tag = {r["battle"]: r["result"] for r in results(tmp_path / "a")}
    mirror = {"win": "loss", "loss": "win", "tie": "tie"}
    assert by_tag == {r["battle"]: mirror[r["result"]] for r in results(tmp_path / "c")}


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(300)
def test_two_players_on_the_ladder(server, tmp_path):
    procs = [
        start(play_args("ladder", server, name, tmp_path / name, 2, "--agent", "random"))
        for name in ("pgLadderA", "pgLadderB")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=280)
        assert proc.returncode == 0 and err == "", err
    a, b = results(tmp_path / "pgLadderA"), results(tmp_path / "pgLadderB")
    assert len(a) == len(b) == 2
    assert [r["battle"] for r in a] == [r["battle"] for r in b]
    assert {r["opponent"] for r in a} == {"pgLadderB"}


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("login_server", "reason"),
    [
        (']{"actionsuccess":false,"assertion":";;Wrong password."}', "Wrong password"),
        # A token the login server signs but this server cannot verify: the Showdown
        # server itself refuses the login.
        (']{"actionsuccess":true,"assertion":"abc,pgpassword,2,1,local;sig"}',
         "The server refused the login as pgPassword"),
    ],
    indirect=["login_server"],
)  # fmt: skip
def test_password_never_shows_in_a_run(server, tmp_path, login_server, reason):
    env = {**os.environ, "POKEGYM_PASSWORD": SECRET}
    out = tmp_path / "out"
    result = run(pokegym("-v", "ladder", "--server", server, "--username", "pgPassword",
                         "--agent", "random", "--games", "1", "--out", str(out),
                         "--login-server", login_server.url), env=env)  # fmt: skip
    assert result.returncode == 2
    assert reason in [line for line in result.stderr.splitlines() if "error" in line][-1]
    assert "<<<" in result.stderr  # -v logs the traffic with the server
    assert login_server.bodies[0]["pass"] == [SECRET]  # the password went to the login server
    written = [p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()]
    for text in (result.stdout, result.stderr, *written):
        assert SECRET not in text


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(180)
def test_unknown_format_and_rejected_team_on_the_server(server, tmp_path):
    unknown = run(play_args("ladder", server, "pgFormat", tmp_path / "f", 1,
                            "--agent", "random", "--format", "gen9nonexistent"))  # fmt: skip
    assert unknown.returncode == 2
    assert "cannot play gen9nonexistent" in one_error_line(unknown.stderr)
    team = tmp_path / "team.txt"
    team.write_text(INVALID_TEAM)
    rejected = run(play_args("ladder", server, "pgTeam", tmp_path / "t", 1, "--agent", "random",
                             "--format", "gen9ou", "--team", str(team)))  # fmt: skip
    assert rejected.returncode == 2
    line = one_error_line(rejected.stderr)
    assert "rejected the team for gen9ou" in line and "Lovely Kiss" in line
    absent = run(play_args("challenge", server, "pgAlone", tmp_path / "n", 1, "--agent",
                           "random", "--opponent", "pgNobody", "--wait", "1"))  # fmt: skip
    assert absent.returncode == 2
    assert "pgNobody is not online" in one_error_line(absent.stderr)


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(300)
def test_a_server_that_dies_mid_run_keeps_the_finished_battles(tmp_path):
    with LocalServer() as local:
        address = f"127.0.0.1:{local.port}"
        procs = [
            start(play_args("accept", address, "pgDropA", tmp_path / "a", 500,
                            "--agent", "random")),
            start(play_args("challenge", address, "pgDropC", tmp_path / "c", 500,
                            "--agent", "random", "--opponent", "pgDropA")),
        ]  # fmt: skip
        wait_for_results(tmp_path / "c", 2, procs)
    for proc, name in zip(procs, "ac", strict=True):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2
        assert "The connection to ws://" in one_error_line(err)
        kept = results(tmp_path / name)
        assert len(kept) >= 2 and all((tmp_path / name / r["log"]).exists() for r in kept)
        assert "games  wins" in out  # the summary of what finished
        assert process_group_alive(proc.pid) == []


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(300)
def test_sigterm_forfeits_writes_and_exits(server, tmp_path):
    accept = start(play_args("accept", server, "pgTermA", tmp_path / "a", 500,
                             "--agent", "random"))  # fmt: skip
    challenge = start(play_args("challenge", server, "pgTermC", tmp_path / "c", 500,
                                "--agent", "random", "--opponent", "pgTermA"))  # fmt: skip
    wait_for_results(tmp_path / "c", 2, [accept, challenge])
    challenge.send_signal(signal.SIGTERM)
    out, err = challenge.communicate(timeout=60)
    assert challenge.returncode == 128 + signal.SIGTERM
    assert "interrupted (SIGTERM)" in err and "Traceback" not in err
    assert "games  wins" in out
    # The accepting side saw every battle end (the last one by forfeit) and waits for more.
    for _ in range(100):
        if len(results(tmp_path / "a")) == len(results(tmp_path / "c")):
            break
        time.sleep(0.1)
    finished = results(tmp_path / "c")
    assert len(finished) >= 2
    assert [r["battle"] for r in results(tmp_path / "a")] == [r["battle"] for r in finished]
    accept.send_signal(signal.SIGINT)
    _, err = accept.communicate(timeout=60)
    assert accept.returncode == 128 + signal.SIGINT and "Traceback" not in err
    for proc in (accept, challenge):
        assert process_group_alive(proc.pid) == []


class BrokenAgent:
    """An agent with a bug: it raises on its first decision."""

    def choose(self, battle):
        raise ZeroDivisionError("a bug in the agent")


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(180)
def test_an_agent_that_fails_forfeits_and_stops_the_run(server, tmp_path):
    challenge = start(play_args("challenge", server, "pgSound", tmp_path / "c", 1,
                                "--agent", "random", "--opponent", "pgBroken"))  # fmt: skip
    config = OnlineConfig("accept", "broken", server, "pgBroken", games=1,
                          out=str(tmp_path / "a"))  # fmt: skip
    with pytest.raises(AgentFailedError, match="ZeroDivisionError: a bug in the agent"):
        run_online(config, BrokenAgent())
    _, err = challenge.communicate(timeout=120)
    assert challenge.returncode == 0, err
    [won] = results(tmp_path / "c")
    assert won["result"] == "win" and won["ended_by"] == "forfeit"
    [lost] = results(tmp_path / "a")
    assert lost["result"] == "loss" and lost["battle"] == won["battle"]


@pytest.mark.parametrize("closing", ["|deinit", "|expire|This room has been deleted.", "|noinit|"])
def test_a_room_closed_before_a_result_is_abandoned_and_frees_the_player(tmp_path, closing):
    """A battle room that the server closes before |win| or |tie| (it expired, it was
    deleted) is written as `abandoned`, left out of the games, and no longer blocks the next
    game (poke-env alone keeps waiting for its end)."""
    import asyncio

    from pokegym.online.player import OnlinePlayer, ResultWriter

    writer = ResultWriter(tmp_path / "out")
    writer.prepare()
    seen = []
    player = OnlinePlayer(object(), writer, username="pokegym-a", password=None,
                          server="ws://127.0.0.1:1/showdown/websocket",
                          login_server="http://127.0.0.1:1/action.php",
                          on_result=seen.append, battle_format="gen9randombattle")  # fmt: skip
    room = ">battle-gen9randombattle-7"
    opening = [room, "|init|battle", "|title|pokegym-a vs. other", "|j|☆pokegym-a",
               "|player|p1|pokegym-a|1|", "|player|p2|other|2|", "|gen|9",
               "|tier|[Gen 9] Random Battle", "|start", "|turn|1"]  # fmt: skip

    async def feed(lines: list[str]) -> None:
        await player._handle_battle_message([line.split("|") for line in lines])

    asyncio.run(feed(opening))
    assert player.unfinished_battles() == ["battle-gen9randombattle-7"]
    assert not player.client.idle.is_set()
    asyncio.run(feed([room, closing]))
    assert player.unfinished_battles() == []
    assert player.client.idle.is_set()
    assert [r.result for r in seen] == ["abandoned"] and seen[0].ended_by == "room closed"
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["result"] == "abandoned"
    asyncio.run(feed([room, closing]))  # said again: written once
    assert len(seen) == 1
    table = summary_table(seen).splitlines()
    assert table[1].split()[:4] == ["0", "0", "0", "0"]
    assert table[2].startswith("1 battle(s) abandoned")
