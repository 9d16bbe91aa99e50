"""Battles for browser sessions: one thread per battle, running the terminal's battle loop.

Each battle runs :func:`pokegym.play.run_battle` in its own thread, with a
:class:`WebFrontEnd` in place of the terminal: it publishes the state the page draws
and waits for the choice the page posts. The HTTP handlers (any thread) validate a
posted choice against the decision that is open *now* (a stale or unknown choice is
refused with a message, and the battle goes on) and hand it to the battle's thread.

All battles share one Showdown simulator process (its round trips are serialised by
a lock); each has its own agent instance. A battle whose page has not been seen for
``abandon_after`` seconds (a closed tab) is forfeited, its replay and playtest record
are saved, and the simulator drops it.
"""

from __future__ import annotations

import logging
import queue
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle

from pokegym.agents import make_agent, parse_agent_spec
from pokegym.choices import ChoiceOption, InputError, resolve_input
from pokegym.errors import PokegymError
from pokegym.play import (
    BattleEvents,
    PlayerLeft,
    PlayResult,
    display_names,
    make_play_setup,
    run_battle,
    save_battle,
    save_replay,
)
from pokegym.showdown.simulator import Simulator
from pokegym.text.render import GameNames
from pokegym.web.replay import REPLAY_SUFFIXES, ReplayError
from pokegym.web.sprites import SpriteIndex, sprites_folder
from pokegym.web.view import battle_view

logger = logging.getLogger("pokegym.web")
_WAIT_STEP = 0.25  # seconds between checks for a closed tab or a stopping server


class WebPlayError(PokegymError):
    """A request the page (or a script) sent cannot be served; ``status`` is the HTTP code."""

    status = 400


class StaleChoiceError(WebPlayError):
    """A choice posted for a decision that is no longer open (a double click, an old tab)."""

    status = 409


class UnknownChoiceError(WebPlayError):
    """A choice posted for the open decision that names none of its legal choices."""

    status = 422


class NoBattleError(WebPlayError):
    """This browser session has no battle."""

    status = 404


class BattleInProgressError(WebPlayError):
    """This browser session already plays a battle."""

    status = 409


class TooManyBattlesError(WebPlayError):
    """The server runs as many battles as it allows."""

    status = 503


@dataclass(frozen=True)
class WebConfig:
    """What ``pokegym play --web`` serves."""

    battle_format: str = "gen9randombattle"
    """Showdown format id of every battle."""
    opponents: tuple[str, ...] = ("abyssal",)
    """Agent specs a person may pick from (the first is the default)."""
    team: str | None = None
    """The person's team file or folder (formats with teams); None: the built-in pool."""
    opponent_team: str | None = None
    """The agents' team file or folder; None: the built-in pool."""
    replays: str = "replays"
    """Folder for replays (log + JSON) and ``playtest.jsonl``."""
    abandon_after: float = 60.0
    """Seconds without a request from a battle's page before it is forfeited."""
    poll_seconds: float = 20.0
    """How long a state request waits for a change before it answers unchanged."""
    max_battles: int = 16
    """Battles running at once; more are refused until one ends."""
    max_turns: int = 500
    """Battles end (truncated) at this turn."""
    replay_files: tuple[str, ...] = ()
    """Files ``pokegym replay`` serves (besides the replays folder)."""
    ask_rating: bool = True
    """Ask for the 1-5 difficulty rating at the end of each battle."""

    def __post_init__(self) -> None:
        if self.abandon_after <= 0 or self.poll_seconds <= 0:
            raise PokegymError("abandon_after and poll_seconds are positive numbers of seconds.")
        if self.max_battles < 1:
            raise PokegymError("max_battles must be at least 1.")


# ------------------------------------------------------------------ a battle
class WebBattle:
    """The state of one browser session's battle, shared by its thread and the handlers."""

    def __init__(
        self,
        *,
        opponent_spec: str,
        names: tuple[str, str],
        battle_format: str,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.id = secrets.token_hex(8)
        self.opponent_spec = opponent_spec
        self.names = names
        self.battle_format = battle_format
        self.clock = clock
        self.lock = threading.Lock()
        self.inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.stopping = threading.Event()
        self.done = threading.Event()
        self.version = 0
        self.status = "starting"  # choosing, waiting, rating, finished, error
        self.decision = 0
        self.options: list[ChoiceOption] = []
        self.unavailable: list[str] = []
        self.view: dict[str, Any] | None = None
        self.log: list[dict[str, Any]] = []
        self.message: str | None = None
        self.result: dict[str, Any] | None = None
        self.started_at = time.time()
        self.decision_at = self.started_at
        self.last_seen = clock()
        self._listeners: list[Callable[[], None]] = []
        self.thread: threading.Thread | None = None

    # ---------------------------------------------------------- from the page
    def touch(self) -> None:
        """The page was seen now."""
        self.last_seen = self.clock()

    def absent_for(self) -> float:
        return self.clock() - self.last_seen

    def running(self) -> bool:
        return not self.done.is_set()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "id": self.id,
                "version": self.version,
                "status": self.status,
                "decision": self.decision if self.status == "choosing" else None,
                "format": self.battle_format,
                "player_name": self.names[0],
                "opponent_name": self.names[1],
                "opponent": self.opponent_spec,
                "view": self.view,
                "log": list(self.log),
                "message": self.message,
                "result": self.result,
                "started_at": self.started_at,
                "decision_at": self.decision_at,
                "server_time": time.time(),
            }

    def submit_choice(self, decision: Any, option: Any = None, text: Any = None) -> ChoiceOption:
        """Hand the person's choice to the battle.

        Raises:
            StaleChoiceError: ``decision`` is not the open decision (or none is open).
            UnknownChoiceError: the open decision has no such choice.
        """
        with self.lock:
            if self.status != "choosing":
                raise StaleChoiceError(
                    "No choice is open now (the opponent is thinking, or the battle is over); "
                    "the page shows the battle as it is."
                )
            if not isinstance(decision, int) or decision != self.decision:
                raise StaleChoiceError(
                    f"That choice was for decision {decision}, but decision {self.decision} is "
                    "open now; choose again from the buttons shown."
                )
            typed = str(option) if option is not None else str(text or "")
            try:
                chosen = resolve_input(typed, self.options, self.unavailable)
            except InputError as exc:
                raise UnknownChoiceError(str(exc)) from None
            self.status = "waiting"
            self.message = None
            self._bump()
        self.inbox.put(("choice", (chosen, typed)))
        return chosen

    def submit_forfeit(self) -> None:
        with self.lock:
            if self.status not in ("choosing", "waiting", "starting"):
                raise StaleChoiceError("The battle is over; there is nothing to forfeit.")
            self.message = "Forfeiting..."
            self._bump()
        self.inbox.put(("forfeit", None))

    def submit_rating(self, rating: Any) -> None:
        if rating is not None and (
            not isinstance(rating, int) or isinstance(rating, bool) or not 1 <= rating <= 5
        ):
            raise UnknownChoiceError("A rating is a whole number from 1 (easy) to 5 (very hard).")
        with self.lock:
            if self.status != "rating":
                raise StaleChoiceError("No rating is asked for now.")
            self.status = "saving"
            self._bump()
        self.inbox.put(("rating", rating))

    def listen(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from any thread) at every change of the state."""
        with self.lock:
            self._listeners.append(callback)

    def unlisten(self, callback: Callable[[], None]) -> None:
        with self.lock:
            if callback in self._listeners:
                self._listeners.remove(callback)

    # -------------------------------------------------------- from the thread
    def _bump(self) -> None:
        """A change under ``self.lock``: new version, listeners told."""
        self.version += 1
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:  # a listener whose event loop has closed
                logger.debug("state listener failed", exc_info=True)

    def update(self, **changes: Any) -> None:
        with self.lock:
            for key, value in changes.items():
                setattr(self, key, value)
            self._bump()

    def add_log(self, kind: str, text: str) -> None:
        with self.lock:
            self.log.append({"kind": kind, "text": text})
            self._bump()


class WebFrontEnd:
    """The page's side of :func:`pokegym.play.run_battle` (a
    :class:`~pokegym.play.PlayFrontEnd`)."""

    def __init__(self, web: WebBattle, config: WebConfig, sprites: SpriteIndex | None):
        self.web = web
        self.config = config
        self.sprites = sprites
        self.battle: AbstractBattle | None = None
        self.names: GameNames | None = None
        self.events: BattleEvents | None = None

    def _view(self, options: Sequence[ChoiceOption] = ()) -> dict[str, Any]:
        assert self.battle is not None and self.names is not None
        return battle_view(self.battle, self.names, options, sprites=self.sprites)

    def _log_events(self) -> None:
        assert self.events is not None
        text = self.events.new()
        for line in text.splitlines():
            if line.strip():
                self.web.add_log("turn", line)

    def _next(self) -> tuple[str, Any]:
        """The next message from the page; :class:`PlayerLeft` when the page is gone."""
        while True:
            if self.web.stopping.is_set():
                raise PlayerLeft("shutdown")
            if self.web.absent_for() > self.config.abandon_after:
                raise PlayerLeft("abandoned")
            try:
                return self.web.inbox.get(timeout=_WAIT_STEP)
            except queue.Empty:
                continue

    def begin(self, battle: AbstractBattle, names: GameNames, intro: str) -> None:
        self.battle, self.names = battle, names
        self.events = BattleEvents(battle, names)
        self.web.add_log("notice", intro)

    def choose(
        self,
        battle: AbstractBattle,
        options: Sequence[ChoiceOption],
        unavailable: Sequence[str],
    ) -> tuple[ChoiceOption | None, str]:
        self._log_events()
        view = self._view(options)
        with self.web.lock:
            self.web.decision += 1
            self.web.options = list(options)
            self.web.unavailable = list(unavailable)
            self.web.view = view
            self.web.status = "choosing"
            self.web.decision_at = time.time()
            self.web._bump()
        while True:
            kind, payload = self._next()
            if kind == "choice":
                option, typed = payload
                return option, typed
            if kind == "forfeit":
                return None, "forfeit"

    def tell(self, text: str) -> None:
        self.web.add_log("notice", text)
        self.web.update(message=text)

    def end(self, result: PlayResult, text: str) -> None:
        self._log_events()
        self.web.add_log("notice", text)
        self.web.update(view=self._view(), status="ended", message=text)

    def rate(self) -> int | None:
        self.web.update(status="rating")
        while True:
            try:
                kind, payload = self._next()
            except PlayerLeft:
                return None
            if kind == "rating":
                return payload  # type: ignore[no-any-return]


# ------------------------------------------------------------------ manager
class BattleManager:
    """The battles of all browser sessions, on one simulator process.

    Building it checks the format, the teams and every opponent spec once, so a
    mistake is reported before the server starts listening.
    """

    def __init__(
        self,
        config: WebConfig,
        *,
        simulator: Simulator | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):

        self.config = config
        self.clock = clock
        self._owns_simulator = simulator is None
        self.simulator = simulator or Simulator()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.battles: dict[str, WebBattle] = {}
        self.opponents: dict[str, str] = {}
        try:
            for spec in config.opponents:
                make_agent(spec)  # a spec that cannot be built fails here, once
                self.opponents[spec] = parse_agent_spec(spec)[0]
            self.template = (
                make_play_setup(
                    config.battle_format,
                    names=("Player", "opponent"),
                    team=config.team,
                    opponent_team=config.opponent_team,
                    max_turns=config.max_turns,
                    simulator=self.simulator,
                )
                if config.opponents
                else None
            )
            gen = self.template.fmt.gen if self.template is not None else 9
            self.names = {gen: GameNames(gen)}
            self.sprites = SpriteIndex(sprites_folder(), self.names[gen].dex.species)
        except BaseException:
            self.close()
            raise

    def warm_up(self) -> None:
        """Start and drop one battle, so that the first person's battle does not pay for
        the simulator's first team generation (~0.5 s for random-team formats)."""
        if self.template is None:
            return

        session = self.template._start_session(np.random.default_rng(0))
        session.close()
        self.template.session = None

    def game_names(self, gen: int) -> GameNames:
        if gen not in self.names:
            self.names[gen] = GameNames(gen)
        return self.names[gen]

    # ---------------------------------------------------------------- battles
    def battle_of(self, browser: str) -> WebBattle:
        with self.lock:
            web = self.battles.get(browser)
        if web is None:
            raise NoBattleError("No battle in this browser session; start one.")
        return web

    def start(self, browser: str, opponent: Any, player_name: Any) -> WebBattle:
        """Start a battle for ``browser`` against ``opponent`` (one of the allowed specs).

        Raises:
            WebPlayError: an unknown opponent or a bad name (400), a battle already
                running in this browser session (409), too many battles (503).
        """
        if self.template is None:
            raise WebPlayError("This server only shows replays.")
        if self.stopping.is_set():
            raise TooManyBattlesError("The server is stopping; it starts no more battles.")
        if opponent not in self.opponents:
            raise WebPlayError(
                f"Unknown opponent {opponent!r}; this server offers {', '.join(self.opponents)}."
            )
        try:
            names = display_names(str(player_name or "Player"), self.opponents[opponent])
        except PokegymError as exc:
            raise WebPlayError(str(exc).replace("--name", "Your name")) from None
        with self.lock:
            current = self.battles.get(browser)
            if current is not None and current.running():
                raise BattleInProgressError(
                    "A battle is already running in this browser session: finish or "
                    "forfeit it first."
                )
            if sum(b.running() for b in self.battles.values()) >= self.config.max_battles:
                raise TooManyBattlesError(
                    f"The server is running its maximum of {self.config.max_battles} battles; "
                    "try again when one ends."
                )
            web = WebBattle(
                opponent_spec=opponent,
                names=names,
                battle_format=self.template.fmt.id,
                clock=self.clock,
            )
            self.battles[browser] = web
        # A daemon thread: close() forfeits and joins it; one whose agent thinks past the
        # join's timeout must not keep the process alive after the server stopped.
        web.thread = threading.Thread(
            target=self._run, args=(web,), name=f"battle-{web.id}", daemon=True
        )
        web.thread.start()
        return web

    def _run(self, web: WebBattle) -> None:
        assert self.template is not None
        config = self.config
        front = WebFrontEnd(web, config, self.sprites)
        try:
            agent = make_agent(web.opponent_spec)
            setup = make_play_setup(
                config.battle_format,
                names=web.names,
                team=self.template.team_pool,
                opponent_team=self.template.opponent_pool,
                max_turns=config.max_turns,
                simulator=self.simulator,
                validate_teams=False,
            )
            result = run_battle(
                setup,
                agent,
                front,
                player_name=web.names[0],
                opponent_name=web.names[1],
                ask_rating=config.ask_rating,
            )
        except PokegymError as exc:
            logger.warning("battle %s broke off: %s", web.id, exc)
            partial = getattr(exc, "play_result", None)
            if partial is not None:
                self._save(web, partial, broken=True)
            web.update(status="error", message=f"The battle broke off: {exc}")
            web.done.set()
            return
        except Exception as exc:  # keep the server up; the page gets the message
            logger.exception("battle %s failed", web.id)
            web.update(status="error", message=f"The battle failed: {exc}")
            web.done.set()
            return
        self._save(web, result)
        web.done.set()

    def _save(self, web: WebBattle, result: PlayResult, broken: bool = False) -> None:
        folder = self.config.replays
        try:
            if broken:
                _, json_path = save_replay(result, folder, opponent_spec=web.opponent_spec)
            else:
                _, json_path = save_battle(
                    result, folder, opponent_spec=web.opponent_spec, front_end="web"
                )
        except OSError as exc:
            logger.error("could not save the replay of battle %s: %s", web.id, exc)
            web.update(message=f"The replay could not be saved: {exc}")
            json_path = None
        if broken:
            return
        text = web.message
        if result.ended_by in ("abandoned", "shutdown"):
            text = (
                "The page was left: the battle was forfeited."
                if result.ended_by == "abandoned"
                else "The server stopped: the battle was forfeited."
            )
        web.update(
            status="finished",
            message=text,
            result={
                "result": result.result,
                "winner": result.winner,
                "ended_by": result.ended_by,
                "turns": result.turns,
                "rating": result.rating,
                "text": text,
                "replay": json_path.name if json_path is not None else None,
            },
        )

    def running(self) -> list[WebBattle]:
        with self.lock:
            return [b for b in self.battles.values() if b.running()]

    def simulator_battles(self) -> int:
        """Battles the simulator process holds now (its own count)."""
        if not self.simulator.is_running():
            return 0
        return int(self.simulator.call([["stats"]])[0]["battles"])

    def close(self, timeout: float = 30.0) -> None:
        """Forfeit every running battle (replays and records are saved), stop the simulator."""
        self.stopping.set()
        battles = self.running()
        for web in battles:
            web.stopping.set()
        deadline = time.monotonic() + timeout
        for web in battles:
            if web.thread is not None:
                web.thread.join(max(0.0, deadline - time.monotonic()))
        if self._owns_simulator:
            self.simulator.close()

    # ---------------------------------------------------------------- replays
    def replay_path(self, name: str) -> Path:
        """A replay the server may show: an index into ``replay_files`` or a file name
        in the replays folder (no folders, no other kinds of file)."""
        if name.isdigit() and int(name) < len(self.config.replay_files):
            return Path(self.config.replay_files[int(name)])
        if "/" in name or "\\" in name or name.startswith(".") or not name:
            raise ReplayError(f"{name!r} is not the name of a replay in the replays folder.")
        path = Path(self.config.replays) / name
        if path.suffix.lower() not in REPLAY_SUFFIXES or not path.is_file():
            raise ReplayError(f"There is no replay {name!r} in {self.config.replays}.")
        return path
