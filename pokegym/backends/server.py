"""The ``server`` backend: battles on a Showdown server over poke-env's websocket client.

Two accounts connect to the server (the local one pokegym starts, or any URL), one
challenges the other for each battle, and every protocol line that reaches a
client is fed into that side's :class:`~pokegym.backends.base.PlayerView`, just
like the embedded backend does. The websocket traffic runs on poke-env's event-loop
thread; the environment waits on a condition variable with a deadline, so a dead
or stalled server raises instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import string
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

import orjson
from poke_env.concurrency import POKE_LOOP
from poke_env.data import to_id_str
from poke_env.ps_client import AccountConfiguration, PSClient, ServerConfiguration
from poke_env.teambuilder import Teambuilder

from pokegym.backends.base import ROLES, Backend, BattleSession, PlayerView
from pokegym.errors import BattleTimeoutError, InvalidTeamError, ServerError
from pokegym.formats import BattleFormat
from pokegym.showdown.server import LocalServer, shared_server

AUTH_URL = "https://play.pokemonshowdown.com/action.php?"


def websocket_url(url: str) -> str:
    """Normalise ``host:port``, ``http(s)://host:port`` or a ws URL to Showdown's socket URL."""
    url = url.strip().rstrip("/")
    if url.startswith(("ws://", "wss://")):
        return url if url.endswith("/showdown/websocket") else url + "/showdown/websocket"
    if url.startswith("https://"):
        return "wss://" + url[len("https://") :] + "/showdown/websocket"
    if url.startswith("http://"):
        url = url[len("http://") :]
    return f"ws://{url}/showdown/websocket"


def _account(prefix: str) -> AccountConfiguration:
    tail = "".join(random.SystemRandom().choices(string.ascii_lowercase + string.digits, k=8))
    return AccountConfiguration(f"{prefix}{tail}"[:18], None)


def _run(coro: Any, timeout: float) -> Any:
    future = asyncio.run_coroutine_threadsafe(coro, POKE_LOOP)
    return future.result(timeout)


class _Client:
    """One logged-in account and the battle rooms it sees."""

    def __init__(
        self,
        account: AccountConfiguration,
        config: ServerConfiguration,
        on_battle: Callable[[_Client, str, str], None],
        on_challenges: Callable[[_Client, dict[str, str]], None],
        timeout: float,
    ):
        self.on_battle = on_battle
        self.on_challenges = on_challenges
        self.client = PSClient(
            account,
            server_configuration=config,
            on_battle_message=self._battle_message,
            on_update_challenges=self._update_challenges,
            on_challenge_request=self._challenge_request,
            log_level=50,
            open_timeout=timeout,
        )
        self.username = account.username
        self.user_id = to_id_str(account.username)
        deadline = time.monotonic() + timeout
        while not self.client.logged_in.is_set():
            listening: Future[Any] = self.client._listening_coroutine
            if listening.done():
                raise ServerError(
                    f"Could not connect to the Showdown server at {config.websocket_url} "
                    "(connection refused or closed). Is the server running?"
                )
            if time.monotonic() > deadline:
                raise ServerError(
                    f"Could not log in to {config.websocket_url} as {account.username} within "
                    f"{timeout:.0f} s. For a public server pass accounts with passwords."
                )
            time.sleep(0.01)

    def alive(self) -> bool:
        return not self.client._listening_coroutine.done()

    async def _battle_message(self, split_messages: list[list[str]]) -> None:
        room = split_messages[0][0][1:]
        text = "\n".join("|".join(parts) for parts in split_messages[1:])
        self.on_battle(self, room, text)

    async def _update_challenges(self, split_message: list[str]) -> None:
        data = orjson.loads(split_message[2])
        self.on_challenges(self, data.get("challengesFrom", {}) or {})

    async def _challenge_request(self, split_message: list[str]) -> None:
        user = to_id_str(split_message[2].strip())
        parts = split_message[4].split("|") if len(split_message) > 4 else []
        fmt = split_message[5] if len(split_message) > 5 else (parts[1] if len(parts) > 1 else "")
        self.on_challenges(self, {user: fmt})

    def send(self, message: str, room: str = "", timeout: float = 10.0) -> None:
        if not self.alive():
            raise ServerError("The connection to the Showdown server closed (did it die?).")
        _run(self.client.send_message(message, room), timeout)

    def close(self) -> None:
        if self.alive():
            # Closing a socket that is dying anyway is not an error worth raising.
            with contextlib.suppress(Exception):
                _run(self.client.stop_listening(), 5.0)


class ServerBattleSession(BattleSession):
    """A battle in a server room, both sides fed by their websocket clients."""

    def __init__(self, backend: ServerBackend, fmt: BattleFormat, teams: Sequence[str | None]):
        self.backend = backend
        self.fmt = fmt
        self.room: str | None = None
        self.teams = teams
        self.views = None  # type: ignore[assignment]
        self._pending: list[list[tuple[int, str]]] = []
        self._closed = False

    def bind(self, room: str) -> None:
        """Create the two views once the server has opened the battle room."""
        self.room = room
        names = [client.username for client in self.backend.clients]
        self.views = tuple(  # type: ignore[assignment]
            PlayerView(
                room, names[side], names[1 - side], ROLES[side], self.fmt.gen,
                self.teams[side], synthetic_header=False,
            )
            for side in (0, 1)
        )  # fmt: skip

    def _send(self, choices: Mapping[int, str]) -> None:
        b = self.backend
        views = self.views
        with b.condition:
            before = [view.request_count for view in views]
            rejected_before = [view.rejections for view in views]
            for side in choices:
                views[side].needs_choice = False
                views[side].error = None
        b.send_all(
            [(side, f"/choose {choice}", self.room or "") for side, choice in choices.items()]
        )

        def settled() -> bool:
            # The battle moves on (and every side gets a new request) unless a choice
            # was rejected; then only the rejected side hears back: at once for an
            # invalid choice, with an updated request for an unavailable one.
            if self.finished:
                return True
            rejected = [s for s in choices if views[s].rejections > rejected_before[s]]
            if rejected:
                return all(
                    views[s].request_count > before[s] or not views[s].last_rejection_unavailable
                    for s in rejected
                )
            return all(
                view.request_count > count for view, count in zip(views, before, strict=True)
            )

        b.wait_for(settled, f"the answer to {dict(choices)} in {self.room}")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        b = self.backend
        if self.room is None:
            return
        with contextlib.suppress(ServerError, TimeoutError):  # the server may be gone
            if not self.finished:
                b.clients[0].send("/forfeit", self.room)
            for client in b.clients:
                client.send(f"/leave {self.room}")
        b.sessions.pop(self.room, None)


class ServerBackend(Backend):
    """Battles on a Showdown server between two accounts of this process.

    Args:
        server_url: a server address (``localhost:8000``, ``ws://.../showdown/websocket``);
            None starts (or reuses) the process-wide local server.
        accounts: two poke-env ``AccountConfiguration``s (needed on public servers);
            default: fresh guest names, fine on servers without security.
        timeout: seconds to wait for any answer from the server.
    """

    name = "server"
    deterministic = False

    def __init__(
        self,
        server_url: str | None = None,
        *,
        accounts: Sequence[AccountConfiguration] | None = None,
        timeout: float = 60.0,
        local_server: LocalServer | None = None,
    ):
        self.server_url = server_url
        self.timeout = timeout
        self._accounts = list(accounts) if accounts else None
        self._local = local_server
        self.condition = threading.Condition()
        self.clients: list[_Client] = []
        self.sessions: dict[str, ServerBattleSession] = {}
        self._starting: ServerBattleSession | None = None
        self._expected_challenge: tuple[str, str, str | None] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self._sending: Future[Any] | None = None

    # ----------------------------------------------------------- connection
    def _url(self) -> str:
        if self.server_url:
            return websocket_url(self.server_url)
        server = self._local or shared_server()
        self._local = server
        server.start()
        return server.websocket_url

    def ensure_running(self) -> None:
        if self.clients and all(c.alive() for c in self.clients):
            if self._local is None or self._local.is_running():
                return
        self.close()
        url = self._url()
        config = ServerConfiguration(url, AUTH_URL)
        accounts = self._accounts or [_account("pgymA"), _account("pgymB")]
        self.clients = [
            _Client(account, config, self._on_battle, self._on_challenges, self.timeout)
            for account in accounts[:2]
        ]

    def close(self) -> None:
        for session in list(self.sessions.values()):
            session.close()
        for client in self.clients:
            client.close()
        self.clients = []
        self.sessions = {}

    # -------------------------------------------------------------- battles
    def start(
        self,
        fmt: BattleFormat,
        *,
        teams: Sequence[str | None],
        seeds: tuple[int, int, int],
        log: str | None = None,
    ) -> BattleSession:
        """Challenge the second account with the first and wait for both first requests.

        The server picks its own random seed: ``seeds`` are not used here.
        """
        self.ensure_running()
        session = ServerBattleSession(self, fmt, teams)
        packed = [_packed(team) for team in teams]
        with self.condition:
            self._starting = session
            self._expected_challenge = (self.clients[0].user_id, fmt.id, packed[1])
        self.clients[0].send(f"/utm {packed[0] or 'null'}")
        self.clients[0].send(f"/challenge {self.clients[1].user_id}, {fmt.id}")

        def ready() -> bool:
            return session.views is not None and all(v.request_count > 0 for v in session.views)

        try:
            self.wait_for(ready, f"the {fmt.id} battle to start")
        finally:
            with self.condition:
                self._starting = None
                self._expected_challenge = None
        return session

    def send_all(self, messages: Sequence[tuple[int, str, str]]) -> None:
        """Hand several messages to poke-env's event loop without waiting for them.

        The caller waits for the server's answer anyway (:meth:`wait_for`), which
        also reports a failed send; not waiting here saves a thread round trip.
        """
        for side, _, _ in messages:
            if not self.clients[side].alive():
                raise ServerError("The connection to the Showdown server closed (did it die?).")

        async def _send() -> None:
            for side, message, room in messages:
                await self.clients[side].client.send_message(message, room)

        self._sending = asyncio.run_coroutine_threadsafe(_send(), POKE_LOOP)

    def _on_challenges(self, client: _Client, challenges: dict[str, str]) -> None:
        with self.condition:
            expected = self._expected_challenge
            if expected is None or client is not self.clients[1]:
                return
            user, format_id, team = expected
            for challenger, fmt in challenges.items():
                if to_id_str(challenger) == user and (
                    not fmt or to_id_str(fmt) == to_id_str(format_id)
                ):
                    self._expected_challenge = None
                    # We are on poke-env's event loop: schedule the accept there.
                    task = asyncio.ensure_future(client.client.accept_challenge(user, team))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                    return

    def _on_battle(self, client: _Client, room: str, text: str) -> None:
        side = 0 if client is self.clients[0] else 1
        with self.condition:
            session = self.sessions.get(room)
            if session is None and self._starting is not None and "|init|battle" in text:
                session = self._starting
                session.bind(room)
                self.sessions[room] = session
            if session is None or session.views is None:
                return
            session.views[side].feed(text)
            self.condition.notify_all()

    def wait_for(
        self,
        predicate: Callable[[], bool],
        what: str,
        timeout: float | None = None,
        raise_on_timeout: bool = True,
    ) -> None:
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self.condition:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if not raise_on_timeout:
                        return
                    raise BattleTimeoutError(
                        f"The Showdown server did not deliver {what} within {limit:g} s."
                    )
                sending = self._sending
                if sending is not None and sending.done() and sending.exception() is not None:
                    raise ServerError(
                        f"Sending to the Showdown server failed: {sending.exception()!r}"
                    )
                if not all(c.alive() for c in self.clients) or (
                    self._local is not None and not self._local.is_running()
                ):
                    raise ServerError(
                        "The connection to the Showdown server closed or the server died; "
                        "the battle is lost. The next reset() reconnects (and restarts a local "
                        "server)."
                    )
                self.condition.wait(min(remaining, 0.25))


def _packed(team: str | None) -> str | None:
    if not team:
        return None
    if "\n" not in team and "|" in team:
        return team
    try:
        return Teambuilder.join_team(Teambuilder.parse_showdown_team(team))
    except Exception as exc:  # poke-env raises various errors on unreadable text
        raise InvalidTeamError(f"Could not pack the team for the server: {exc}") from exc


__all__ = ["ROLES", "ServerBackend", "ServerBattleSession", "websocket_url"]
