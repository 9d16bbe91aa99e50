"""A pokegym agent as a poke-env ``Player`` on a Showdown server.

:class:`OnlinePlayer` is poke-env's ``Player`` (its ``ladder``, ``accept_challenges`` and
``send_challenges`` drive the battles) with the agent's ``choose``/``team_preview``
answering the requests. The agent thinks in a worker thread, so the connection keeps
answering the server while a search runs. Each battle's protocol log and result line
are written as the battle ends (:class:`ResultWriter`). :class:`OnlineClient` is
poke-env's client with pokegym's login (the password rules of
:mod:`pokegym.online.account`) and the server's refusals (a bad login, a rejected
team, an unknown format, an absent opponent) kept as named errors.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from poke_env.battle import AbstractBattle
from poke_env.data import to_id_str
from poke_env.player import Player
from poke_env.player.battle_order import BattleOrder
from poke_env.ps_client import AccountConfiguration, PSClient, ServerConfiguration
from websockets.exceptions import ConnectionClosed

from pokegym.errors import InvalidTeamError, PokegymError, UnknownFormatError
from pokegym.online.account import Password, fetch_assertion
from pokegym.online.errors import AgentFailedError, LoginRefusedError, OpponentNotFoundError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BattleResult:
    """One finished battle, as one line of ``results.jsonl``.

    Attributes:
        battle: the battle room, e.g. ``battle-gen9randombattle-42``.
        format: the format id.
        player: the name this player had.
        opponent: the opponent's name.
        result: ``win``, ``loss``, ``tie``, or ``abandoned`` (the server closed the room
            before the battle had a result: not a game, left out of the summary).
        ended_by: ``timer`` (a side lost on the battle timer), ``forfeit``, ``battle``, or
            ``room closed``.
        turns: turns played.
        log: the protocol log's file, relative to the results folder.
    """

    battle: str
    format: str
    player: str
    opponent: str
    result: str
    ended_by: str
    turns: int
    log: str


# Battle-room messages after which the room is gone (``deinit``: closed; ``noinit``: it
# does not exist; ``expire``: it expired).
ROOM_CLOSED = frozenset({"deinit", "noinit", "expire"})


class ResultWriter:
    """Appends a result line to ``OUT/results.jsonl`` and writes ``OUT/logs/<room>.log``
    for each battle, as it ends (a crash later loses nothing written)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.logs = self.folder / "logs"
        self.path = self.folder / "results.jsonl"
        self.results: list[BattleResult] = []
        self._lock = threading.Lock()

    def prepare(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)

    def write(self, result: BattleResult, protocol: list[str]) -> None:
        with self._lock:
            (self.folder / result.log).write_text("\n".join(protocol) + "\n", encoding="utf-8")
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(asdict(result)) + "\n")
                handle.flush()
            self.results.append(result)


def popup_error(text: str, battle_format: str) -> PokegymError | None:
    """The named error a server popup means (None: a notice, not a failure)."""
    lines = [line.strip().lstrip("- ").strip() for line in text.split("||") if line.strip()]
    lines = [line.removeprefix("Error: ").rstrip(".") for line in lines
             if not line.startswith("If you're not using a custom client")]  # fmt: skip
    joined = "; ".join(lines)
    lowered = joined.lower()
    if "team was rejected" in lowered:
        reasons = "; ".join(lines[1:]) or joined
        return InvalidTeamError(
            f"The server rejected the team for {battle_format}: {reasons}. Pass a valid team "
            "with --team FILE."
        )
    if "format" in lowered and any(
        word in lowered for word in ("invalid", "unrecognized", "not ladderable", "not found")
    ):
        return UnknownFormatError(
            f"The server cannot play {battle_format}: {joined}. See the server's format list "
            "(ids look like gen9randombattle or gen9ou)."
        )
    if "was not found" in lowered or "is not online" in lowered:
        return OpponentNotFoundError(f"The server says: {joined}")
    return None


class OnlineClient(PSClient):
    """poke-env's websocket client, logging in by pokegym's rules and keeping the
    server's refusals in :attr:`failure` (read by the thread that drives the run)."""

    def __init__(
        self,
        account: AccountConfiguration,
        *,
        password: Password | None,
        login_server: str,
        battle_format: str,
        **options: Any,
    ):
        self.password = password
        self.login_server = login_server
        self.battle_format = battle_format
        self.failure: PokegymError | None = None
        self.online: dict[str, bool] = {}
        # Set while no battle is in progress: one battle at a time, so a challenge is
        # neither sent nor accepted while a battle runs (its clock would run unseen).
        self.idle = asyncio.Event()
        self.idle.set()
        super().__init__(account, **options)

    def _create_logger(self, log_level: int | None) -> logging.Logger:
        # No handler of its own: records go to the root logger the command configures.
        logger = logging.getLogger(f"pokegym.online.{to_id_str(self.username)}")
        if log_level is not None:
            logger.setLevel(log_level)
        return logger

    def closed(self) -> bool:
        """True once the connection has ended (or never opened)."""
        return bool(self._listening_coroutine.done())

    def fail(self, error: PokegymError) -> None:
        if self.failure is None:
            self.failure = error

    async def log_in(self, split_message: list[str]) -> None:
        assertion = ""
        if self.password is not None:
            challstr = split_message[2] + "|" + split_message[3]
            loop = asyncio.get_running_loop()
            try:
                assertion = await loop.run_in_executor(
                    None, fetch_assertion, self.login_server, self.username, self.password,
                    challstr,
                )  # fmt: skip
            except PokegymError as exc:
                self.fail(exc)
                await self.websocket.close()
                return
        # Sent directly: the client's own send_message logs what it sends.
        await self.websocket.send(f"|/trn {self.username},0,{assertion}")

    async def accept_challenge(self, username: str, packed_team: str | None) -> None:
        await self.idle.wait()
        await super().accept_challenge(username, packed_team)

    async def challenge(self, username: str, format_: str, packed_team: str | None) -> None:
        await self.idle.wait()
        await super().challenge(username, format_, packed_team)

    async def _handle_message(self, message: str) -> None:
        head = message.split("\n", 1)[0]
        parts = head.split("|")
        kind = parts[1] if len(parts) > 1 else ""
        if kind == "nametaken":
            reason = "|".join(parts[3:]).strip() or "no reason given"
            self.fail(LoginRefusedError(f"The server refused the login as {self.username}: "
                                        f"{reason}"))  # fmt: skip
        elif kind == "popup":
            text = "|".join(parts[2:])
            error = popup_error(text, self.battle_format)
            if error is not None:
                self.fail(error)
            else:
                log.warning("the server says: %s", text.replace("||", " "))
        elif kind == "queryresponse" and len(parts) > 3 and parts[2] == "userdetails":
            details = json.loads("|".join(parts[3:]))
            if isinstance(details, dict) and details.get("userid"):
                self.online[str(details["userid"])] = details.get("rooms") is not False
        else:
            try:
                await super()._handle_message(message)
            except ConnectionClosed:
                # The connection ended while this message was answered (a battle that
                # starts as the run is interrupted): nothing can be sent any more, and an
                # unexpected close is reported by the run's own check of the connection.
                log.debug("connection closed while handling %s", head)


class OnlinePlayer(Player):
    """A pokegym agent playing through poke-env on a server.

    Args:
        agent: an object with ``choose(battle)`` (and optionally ``team_preview`` and
            ``battle_finished``), as :func:`pokegym.agents.make_agent` builds.
        writer: where each finished battle goes.
        username, password, login_server: the account and how it logs in.
        server: the server's websocket address.
        on_result: called with each :class:`BattleResult` (on poke-env's thread).
        options: poke-env ``Player`` options (``battle_format``, ``team``, ...).
    """

    def __init__(
        self,
        agent: Any,
        writer: ResultWriter,
        *,
        username: str,
        password: Password | None,
        server: str,
        login_server: str,
        on_result: Callable[[BattleResult], None] | None = None,
        log_level: int | None = None,
        **options: Any,
    ):
        self.agent = agent
        self.writer = writer
        self.on_result = on_result
        self._protocol: dict[str, list[str]] = {}
        self._abandoned: set[str] = set()
        self._thinking = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pokegym-agent")
        self._stopped = False
        account = AccountConfiguration(username, None)
        config = ServerConfiguration(server, login_server)
        super().__init__(account, server_configuration=config, log_level=log_level,
                         start_listening=False, **options)  # fmt: skip
        # poke-env's Player builds a plain client; this one logs in by pokegym's rules.
        self.ps_client = OnlineClient(
            account,
            password=password,
            login_server=login_server,
            battle_format=self.format,
            log_level=log_level,
            on_battle_message=self._handle_battle_message,
            on_update_challenges=self._update_challenges,
            on_challenge_request=self._handle_challenge_request,
            server_configuration=config,
        )

    @property
    def client(self) -> OnlineClient:
        return self.ps_client  # type: ignore[return-value]

    def choose_move(self, battle: AbstractBattle) -> Any:
        # An awaitable: poke-env awaits it, and the connection stays served meanwhile.
        if self._stopped:  # leaving: the battle is being forfeited
            return self.choose_default_move()
        return asyncio.get_running_loop().run_in_executor(self._thinking, self._choose, battle)

    def _choose(self, battle: AbstractBattle) -> BattleOrder:
        try:
            return self.agent.choose(battle)  # type: ignore[no-any-return]
        except Exception as exc:  # the run stops with it; the battle is forfeited
            self.client.fail(AgentFailedError(
                f"The agent failed in {battle.battle_tag}, turn {battle.turn}: "
                f"{type(exc).__name__}: {exc}"))  # fmt: skip
            log.debug("the agent failed", exc_info=True)
            return self.choose_default_move()

    def teampreview(self, battle: AbstractBattle) -> Any:
        preview = getattr(self.agent, "team_preview", None)
        if preview is None or self._stopped:
            return self.random_teampreview(battle)
        return asyncio.get_running_loop().run_in_executor(self._thinking, preview, battle)

    async def _handle_battle_message(self, split_messages: list[list[str]]) -> None:
        room = split_messages[0][0][1:]
        if room.startswith("battle-"):
            if any(len(parts) > 1 and parts[1] == "init" for parts in split_messages[1:]):
                self.client.idle.clear()
            lines = self._protocol.setdefault(room, [])
            for parts in split_messages[1:]:
                if len(parts) > 1 and parts[1] == "request":
                    continue  # the player's own requests: not part of the battle's log
                if parts and any(parts):
                    lines.append("|".join(parts))
        # poke-env's battle parser knows no |noinit| (a room that does not exist): not passed on
        kept = [parts for parts in split_messages if len(parts) < 2 or parts[1] != "noinit"]
        if len(kept) > 1:
            await super()._handle_battle_message(kept)
        closed = any(len(parts) > 1 and parts[1] in ROOM_CLOSED for parts in split_messages[1:])
        battle = self.battles.get(room)
        if closed and battle is not None and not battle.finished and room not in self._abandoned:
            self._abandon(battle)

    def _abandon(self, battle: AbstractBattle) -> None:
        """The server closed a battle's room before it had a result (the room expired, the
        server is restarting): written as ``abandoned``, so the next game can start."""
        self._abandoned.add(battle.battle_tag)
        lines = self._protocol.pop(battle.battle_tag, [])
        result = self._result(battle, "abandoned", "room closed")
        self.writer.write(result, lines)
        if not self.unfinished_battles():
            self.client.idle.set()
        if self.on_result is not None:
            self.on_result(result)

    def _battle_finished_callback(self, battle: AbstractBattle) -> None:
        lines = self._protocol.pop(battle.battle_tag, [])
        outcome = "win" if battle.won else ("loss" if battle.lost else "tie")
        result = self._result(battle, outcome, _ended_by(lines))
        self.writer.write(result, lines)
        if not self.unfinished_battles():
            self.client.idle.set()
        finished = getattr(self.agent, "battle_finished", None)
        if callable(finished):
            finished(battle)
        if self.on_result is not None:
            self.on_result(result)

    def _result(self, battle: AbstractBattle, outcome: str, ended_by: str) -> BattleResult:
        return BattleResult(
            battle=battle.battle_tag,
            format=self.format,
            player=self.username,
            opponent=str(battle.opponent_username or ""),
            result=outcome,
            ended_by=ended_by,
            turns=int(battle.turn),
            log=f"logs/{battle.battle_tag}.log",
        )

    def unfinished_battles(self) -> list[str]:
        return [
            tag
            for tag, battle in list(self.battles.items())
            if not battle.finished and tag not in self._abandoned
        ]

    def stop_asking(self) -> None:
        """From now on, requests get Showdown's default move (the player is leaving)."""
        self._stopped = True

    def stop_thinking(self) -> None:
        """Stop the agent's thread (a decision under way finishes there)."""
        self._stopped = True
        self._thinking.shutdown(wait=False, cancel_futures=True)


def _ended_by(lines: list[str]) -> str:
    for line in reversed(lines):
        if line.startswith("|-message|"):
            if line.endswith("lost due to inactivity."):
                return "timer"
            if line.endswith("forfeited."):
                return "forfeit"
    return "battle"
