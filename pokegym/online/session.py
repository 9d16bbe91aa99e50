"""One run of an agent on a Showdown server: log in, play N games, write, summarise.

:func:`run_online` drives poke-env's ``ladder``/``accept_challenges``/``send_challenges``
on poke-env's event loop and watches them from the calling thread: a refused login, a
rejected team, an unknown format or a closed connection ends the run with its named
error, and Ctrl-C (or SIGTERM, raised as ``KeyboardInterrupt`` by the command) forfeits
the battle in progress, leaves, and returns what finished. Each battle is written as it
ends, so every way out keeps the finished ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from poke_env.concurrency import POKE_LOOP
from poke_env.data import to_id_str

from pokegym.errors import UnknownFormatError
from pokegym.online.account import LOGIN_SERVER, Password
from pokegym.online.errors import (
    OpponentNotFoundError,
    ServerDisconnectedError,
    ServerUnreachableError,
)
from pokegym.online.player import BattleResult, OnlinePlayer, ResultWriter
from pokegym.stats import wilson_interval

Mode = Literal["ladder", "accept", "challenge"]
POLL_SECONDS = 0.2


@dataclass(frozen=True)
class OnlineConfig:
    """What one run plays, where, and as whom.

    Attributes:
        mode: ``ladder`` (search rated games), ``accept`` (wait for challenges) or
            ``challenge`` (challenge ``opponent``).
        agent: the agent spec (``pokegym.agents.make_agent``), e.g. ``abyssal``.
        server: the server's address (``localhost:8000``, ``wss://host/showdown/websocket``).
        username: the account's name.
        password: the account's password (masked in every repr); None on servers
            without security.
        battle_format: the format id.
        team: the team in export or packed text (formats with teams).
        games: battles to play.
        opponent: who to challenge (``challenge``), or the only name accepted from
            (``accept``; None accepts anyone).
        out: the folder for ``results.jsonl`` and ``logs/``.
        login_server: the login server's ``action.php`` address (used with a password).
        timer: turn the battle timer on at the start of each battle.
        login_timeout: seconds to wait for the login.
        opponent_wait: seconds ``challenge`` waits for the opponent to come online.
    """

    mode: Mode
    agent: str
    server: str
    username: str
    password: Password | None = None
    battle_format: str = "gen9randombattle"
    team: str | None = None
    games: int = 1
    opponent: str | None = None
    out: str = "online"
    login_server: str = LOGIN_SERVER
    timer: bool = True
    login_timeout: float = 30.0
    opponent_wait: float = 120.0


@dataclass
class OnlineRun:
    """The outcome of a run: the finished battles and whether it was interrupted."""

    config: OnlineConfig
    results: list[BattleResult] = field(default_factory=list)
    interrupted: bool = False

    def table(self) -> str:
        return summary_table(self.results)


def summary_table(results: list[BattleResult]) -> str:
    """Games, wins, losses, ties, the win rate (ties count half) with its 95 % Wilson
    interval, and the losses on the battle timer; battles whose room closed before a result
    (``abandoned``) are not games, and a last line counts them."""
    abandoned = sum(r.result == "abandoned" for r in results)
    results = [r for r in results if r.result != "abandoned"]
    n = len(results)
    wins = sum(r.result == "win" for r in results)
    losses = sum(r.result == "loss" for r in results)
    ties = n - wins - losses
    on_timer = sum(r.result == "loss" and r.ended_by == "timer" for r in results)
    score = wins + 0.5 * ties
    low, high = wilson_interval(score, n)
    rate = f"{100 * score / n:.1f} %" if n else "-"
    header = f"{'games':>5}  {'wins':>4}  {'losses':>6}  {'ties':>4}  {'win rate':>8}  " \
             f"{'95 % interval':>14}  {'lost on timer':>13}"  # fmt: skip
    row = f"{n:>5}  {wins:>4}  {losses:>6}  {ties:>4}  {rate:>8}  " \
          f"{f'{100 * low:.1f}-{100 * high:.1f} %':>14}  {on_timer:>13}"  # fmt: skip
    table = header + "\n" + row
    if abandoned:
        table += f"\n{abandoned} battle(s) abandoned: the server closed the room before a result"
    return table


def check_format(battle_format: str) -> str:
    """The format's id; a clear error for what cannot be a Showdown format id."""
    format_id = to_id_str(battle_format)
    if not re.fullmatch(r"gen[1-9][a-z0-9]+", format_id):
        raise UnknownFormatError(
            f"{battle_format!r} is not a Showdown format id: ids start with the generation, "
            "e.g. gen9randombattle or gen9ou."
        )
    return format_id


def check_server(address: str) -> str:
    """The server's websocket URL; a clear error for what is not a server address."""
    # urlsplit: read only to check an address
    from urllib.parse import urlsplit

    # the server backend (poke-env's websocket client) loads only to check an address
    from pokegym.backends.server import websocket_url

    url = websocket_url(address)
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if not parts.hostname or parts.netloc.endswith(":") or port == -1:
        raise ServerUnreachableError(
            f"{address!r} is not a server address: write host:port (localhost:8000) or a "
            "ws:// or wss:// URL (wss://sim3.psim.us/showdown/websocket)."
        )
    return url


def run_online(
    config: OnlineConfig,
    agent: Any,
    *,
    on_login: Callable[[str], None] | None = None,
    on_result: Callable[[BattleResult], None] | None = None,
    log_level: int | None = None,
) -> OnlineRun:
    """Play ``config.games`` battles with ``agent`` on the server.

    Raises:
        ServerUnreachableError, LoginRefusedError, ServerDisconnectedError,
        OpponentNotFoundError, UnknownFormatError, InvalidTeamError: the run cannot go
            on; what finished before is written.
        KeyboardInterrupt: never: an interruption returns the run with ``interrupted``.
    """
    format_id = check_format(config.battle_format)
    server = check_server(config.server)
    writer = ResultWriter(config.out)
    writer.prepare()
    run = OnlineRun(config, writer.results)
    player = OnlinePlayer(
        agent,
        writer,
        username=config.username,
        password=config.password,
        server=server,
        login_server=config.login_server,
        on_result=on_result,
        log_level=log_level,
        battle_format=format_id,
        team=config.team,
        start_timer_on_battle_start=config.timer,
    )
    driver: Future[Any] | None = None
    try:
        _wait_for_login(player, config)
        if on_login is not None:
            on_login(player.username)
        if config.mode == "challenge":
            _wait_for_opponent(player, config)
        driver = asyncio.run_coroutine_threadsafe(_drive(player, config), POKE_LOOP)
        _watch(player, driver)
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        _leave(player, config, driver)
    return run


async def _drive(player: OnlinePlayer, config: OnlineConfig) -> None:
    if config.mode == "ladder":
        await player.ladder(config.games)
    elif config.mode == "accept":
        await player.accept_challenges(config.opponent, config.games)
    else:
        await player.send_challenges(to_id_str(config.opponent or ""), config.games)


def _check(player: OnlinePlayer) -> None:
    """Raise the failure the server reported, or the closed connection."""
    client = player.client
    if client.failure is not None:
        raise client.failure
    if client.closed():
        raise ServerDisconnectedError(
            f"The connection to {client.websocket_url} closed (the server stopped or dropped "
            f"this player); {len(player.writer.results)} finished battle(s) are in "
            f"{player.writer.path}."
        )


def _wait_for_login(player: OnlinePlayer, config: OnlineConfig) -> None:
    client = player.client
    deadline = time.monotonic() + config.login_timeout
    while not client.logged_in.is_set():
        if client.failure is not None:
            raise client.failure
        if client.closed():
            raise ServerUnreachableError(
                f"Could not connect to the Showdown server at {client.websocket_url} "
                "(nothing answers, or it closed the connection). Is the address right and "
                "the server running (`pokegym showdown start` for a local one)?"
            )
        if time.monotonic() > deadline:
            raise ServerUnreachableError(
                f"No login on {client.websocket_url} as {config.username} within "
                f"{config.login_timeout:g} s; is it a Showdown server?"
            )
        time.sleep(POLL_SECONDS / 4)


def _wait_for_opponent(player: OnlinePlayer, config: OnlineConfig) -> None:
    """Ask the server every second whether the opponent is online, up to the wait."""
    opponent = to_id_str(config.opponent or "")
    deadline = time.monotonic() + config.opponent_wait
    while True:
        player.client.online.pop(opponent, None)
        asyncio.run_coroutine_threadsafe(
            player.client.send_message(f"/query userdetails {opponent}"), POKE_LOOP
        ).result(10)
        answer_by = time.monotonic() + 1.0
        while opponent not in player.client.online and time.monotonic() < answer_by:
            _check(player)
            time.sleep(POLL_SECONDS / 4)
        if player.client.online.get(opponent):
            return
        if time.monotonic() > deadline:
            raise OpponentNotFoundError(
                f"{config.opponent} is not online on {player.client.websocket_url} (waited "
                f"{config.opponent_wait:g} s): start the other side first (`pokegym accept`)."
            )


def _watch(player: OnlinePlayer, driver: Future[Any]) -> None:
    while True:
        _check(player)
        try:
            driver.result(POLL_SECONDS)
            return
        except TimeoutError:
            continue


def _leave(player: OnlinePlayer, config: OnlineConfig, driver: Future[Any] | None) -> None:
    """Forfeit the battles in progress, withdraw searches and challenges, disconnect.

    Never raises: it runs on every way out, the server may be gone.
    """
    if driver is not None:
        driver.cancel()
    client = player.client
    player.stop_asking()

    def send(message: str, room: str = "") -> None:
        if not client.closed() and client.logged_in.is_set():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(
                    client.send_message(message, room), POKE_LOOP
                ).result(5)

    unfinished = player.unfinished_battles()
    for room in unfinished:
        send("/forfeit", room)
    if config.mode == "ladder":
        send(f"/cancelsearch {to_id_str(config.battle_format)}")
    elif config.mode == "challenge" and config.opponent:
        send(f"/cancelchallenge {to_id_str(config.opponent)}")
    # The forfeited battles end at once; wait (a little) for their result lines.
    deadline = time.monotonic() + 5.0
    while unfinished and player.unfinished_battles() and time.monotonic() < deadline:
        if client.closed():
            break
        time.sleep(POLL_SECONDS / 4)
    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(client.stop_listening(), POKE_LOOP).result(5)
    player.stop_thinking()
    logging.getLogger(__name__).info("left %s", client.websocket_url)


__all__ = [
    "OnlineConfig",
    "OnlineRun",
    "check_format",
    "check_server",
    "run_online",
    "summary_table",
]
