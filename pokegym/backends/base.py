"""What every battle backend gives the environments: two player views of one battle.

A backend runs one battle between two sides and exposes, for each side, a normal
poke-env :class:`~poke_env.battle.Battle` fed with exactly the protocol lines that
player would receive from Showdown. Environments, arenas and agents only ever see
these objects, so an agent written against poke-env's battle object plays the same
on the embedded simulator (``sim``) and on any Showdown server (``server``).

Choices are Showdown's own choice strings (``move 2 terastallize``, ``switch 4``,
``team 312456``, ``default``); :class:`~pokegym.actions.ActionCodec` builds them.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from poke_env.battle import Battle, Pokemon, PokemonType
from poke_env.teambuilder import Teambuilder

from pokegym.errors import (
    BattleTimeoutError,
    IllegalActionError,
    PokegymError,
    ServerError,
    SimulatorError,
)
from pokegym.formats import BattleFormat

logger = logging.getLogger("pokegym.battle")

# Player-level messages poke-env's Player also skips (timers, html refreshes).
_PLAYER_IGNORED = frozenset({"t:", "expire", "uhtmlchange", "tempnotify", "tempnotifyoff"})
SIDES = (0, 1)
ROLES = ("p1", "p2")


class ShowdownBattle(Battle):
    """poke-env's ``Battle`` with value equality.

    Two battle objects are equal when they carry the same battle tag, the same
    player and the same protocol history, i.e. they are the same battle seen
    from the same side (a seeded battle replayed with the same choices compares
    equal). The hash uses the tag, which never changes.
    """

    def __init__(self, battle_tag: str, username: str, logger: logging.Logger, gen: int):
        super().__init__(battle_tag, username, logger, gen)
        self.protocol_history = hashlib.blake2b(digest_size=16)
        self._request_entries: dict[str, dict[str, Any]] = {}

    def _update_team_from_request(
        self, side: dict[str, Any], strict_battle_tracking: bool = False
    ) -> None:
        # Every request repeats the whole team; re-applying an entry that is equal to
        # the previous request's (and agrees on who is active) changes nothing, so
        # only the others are passed on. This halves the cost of a request.
        entries = side["pokemon"]
        previous = self._request_entries
        team = self.team
        changed = []
        for entry in entries:
            mon = team.get(entry["ident"])
            if (
                mon is None
                or mon.active != entry["active"]
                or previous.get(entry["ident"]) != entry
            ):
                changed.append(entry)
        self._request_entries = {entry["ident"]: entry for entry in entries}
        if len(changed) != len(entries):
            side = {**side, "pokemon": changed}
        super()._update_team_from_request(side, strict_battle_tracking)
        self._note_tera_types(changed)

    def _note_tera_types(self, entries: list[dict[str, Any]]) -> None:
        """Each own Pokémon's Tera type, from the request (``teraType``).

        poke-env's ``Pokemon.tera_type`` ("None if unknown") is only set once a Pokémon
        terastallizes, so without this a player would not know its own Tera types: the
        observation, the world-model state and the prompts all read them from there.
        """
        team = self.team
        for entry in entries:
            mon = team.get(entry["ident"])
            tera = entry.get("teraType")
            if mon is None or not tera or mon.is_terastallized:
                continue
            with contextlib.suppress(ValueError, KeyError):
                mon._terastallized_type = PokemonType.from_name(tera)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShowdownBattle):
            return NotImplemented
        return (
            self.battle_tag == other.battle_tag
            and self.player_username == other.player_username
            and self.protocol_history.digest() == other.protocol_history.digest()
        )

    def __hash__(self) -> int:
        return hash((self.battle_tag, self.player_username))

    def __deepcopy__(self, memo: dict[int, Any]) -> ShowdownBattle:
        """The live battle itself, not a copy.

        A battle object is a view that its backend keeps updating for as long as the
        battle runs; a frozen copy of it would silently stop following the battle.
        Libraries that deep-copy ``info`` dicts at every step (stable-baselines3's
        ``DummyVecEnv``) therefore get the same object back, at no cost. To keep a
        position, keep what you need from it (or the protocol lines) instead.
        """
        memo[id(self)] = self
        return self


class PlayerView:
    """One player's view of a battle, kept in a poke-env ``Battle``.

    Lines are dispatched the way poke-env's ``Player`` does: requests go to
    ``parse_request``, ``win``/``tie`` end the battle, ``error`` lines are choice
    rejections, everything else goes to ``parse_message``.
    """

    __slots__ = (
        "battle",
        "error",
        "finished",
        "last_rejection_unavailable",
        "needs_choice",
        "rejections",
        "request",
        "request_count",
        "role",
        "unavailable",
    )

    def __init__(
        self,
        battle_tag: str,
        username: str,
        opponent_username: str,
        role: str,
        gen: int,
        team: str | None = None,
        *,
        synthetic_header: bool = True,
    ):
        self.role = role
        self.battle = ShowdownBattle(battle_tag, username, logger, gen)
        if team:
            self.battle.teampreview_team = [
                Pokemon(gen=gen, teambuilder=member)
                for member in Teambuilder.parse_showdown_team(team)
            ]
        if synthetic_header:
            # The simulator never sends these two (a server does); without the title
            # poke-env does not know the opponent's name.
            names = (username, opponent_username) if role == "p1" else (opponent_username, username)
            self.battle.parse_message(["", "init", "battle"])
            self.battle.parse_message(["", "title", f"{names[0]} vs. {names[1]}"])
        self.needs_choice = False
        self.finished = False
        self.request: dict[str, Any] | None = None
        self.request_count = 0
        self.error: str | None = None
        self.unavailable = False
        self.rejections = 0
        self.last_rejection_unavailable = False

    def feed(self, text: str) -> None:
        """Apply a block of protocol lines (as the player receives them)."""
        if not text:
            return
        battle = self.battle
        battle.protocol_history.update(text.encode())
        for line in text.split("\n"):
            if not line or line[0] != "|":
                continue
            if line.startswith("|request|"):
                payload = line[9:]
                if payload:
                    self._on_request(orjson.loads(payload))
                continue
            parts = line.split("|")
            kind = parts[1]
            if kind in _PLAYER_IGNORED:
                continue
            if kind == "win":
                battle.won_by(parts[2])
                self._finish()
            elif kind == "tie":
                battle.tied()
                self._finish()
            elif kind == "error":
                self._on_error(line[7:])
            elif kind == "bigerror":
                logger.warning("Showdown: %s", line)
            else:
                battle.parse_message(parts)

    def feed_requests(self, requests: list[dict[str, Any]]) -> None:
        """Apply requests that arrived already decoded (after this side's lines)."""
        for request in requests:
            self._on_request(request)

    def _on_request(self, request: dict[str, Any]) -> None:
        self.battle.parse_request(request)
        self.request = request
        self.request_count += 1
        self.needs_choice = not request.get("wait", False)
        self.error = None
        self.unavailable = False

    def _on_error(self, message: str) -> None:
        # [Invalid choice]: the request still stands, choose again.
        # [Unavailable choice]: an updated request follows (e.g. a trap revealed);
        # it clears `error`, so `rejections` keeps count for whoever waits on it.
        self.error = message
        self.needs_choice = True
        self.unavailable = message.startswith("[Unavailable choice]")
        self.rejections += 1
        self.last_rejection_unavailable = self.unavailable

    def _finish(self) -> None:
        self.finished = True
        self.needs_choice = False


class BattleSession(ABC):
    """One live battle between two sides, seen through two :class:`PlayerView`s."""

    fmt: BattleFormat
    views: tuple[PlayerView, PlayerView]
    failure: PokegymError | None = None
    """The error that lost this battle (its simulator or server died or stalled), if any."""

    def raise_if_failed(self) -> None:
        """Raise again, with its own type, the error that lost this battle (if one did).

        A battle whose simulator or server failed mid-step cannot go on; every later
        step says so in the same words rather than as a battle out of sync.
        """
        failure = self.failure
        if failure is not None:
            raise type(failure)(f"This battle was lost to an earlier error: {failure}")

    @property
    def battles(self) -> tuple[Battle, Battle]:
        return (self.views[0].battle, self.views[1].battle)

    @property
    def finished(self) -> bool:
        return self.views[0].finished or self.views[1].finished

    def needs_choice(self, side: int) -> bool:
        view = self.views[side]
        return view.needs_choice and not view.finished

    @property
    def winner(self) -> int | None:
        """0 or 1 for the winning side, None for a tie or an unfinished battle."""
        for side in SIDES:
            if self.views[side].battle.won:
                return side
        return None

    def choose(self, choices: Mapping[int, str]) -> None:
        """Send the choices of the sides that must decide, and wait for the battle.

        When this returns, every side either has a decision to make
        (:meth:`needs_choice`), waits for the other, or the battle is over.

        Raises:
            IllegalActionError: Showdown rejected a choice as invalid (the side must
                choose again; the battle is unchanged).
        """
        self.raise_if_failed()
        for side in choices:
            if not self.needs_choice(side):
                raise IllegalActionError(
                    f"Side {ROLES[side]} has no decision to make now (it waits for the "
                    "opponent, or the battle is over)."
                )
        try:
            self._send(choices)
        except (SimulatorError, BattleTimeoutError, ServerError) as exc:
            self.failure = exc
            raise
        for side in choices:
            view = self.views[side]
            if view.error is not None and not view.unavailable:
                message, view.error = view.error, None
                raise IllegalActionError(
                    f"Showdown rejected {ROLES[side]}'s choice {choices[side]!r}: {message}"
                )

    @abstractmethod
    def _send(self, choices: Mapping[int, str]) -> None:
        """Deliver the choices and feed the answers into the views."""

    @abstractmethod
    def close(self) -> None:
        """Release the battle (forfeits it on a server if it is still running)."""

    def replay_log(self) -> str | None:
        """The spectator protocol log when the backend kept one."""
        return None


class Backend(ABC):
    """Starts battles between two sides and hands back a :class:`BattleSession`."""

    name: str
    deterministic: bool

    @abstractmethod
    def start(
        self,
        fmt: BattleFormat,
        *,
        teams: Sequence[str | None],
        seeds: tuple[int, int, int],
        log: str | None = None,
    ) -> BattleSession:
        """Start one battle; returns once both sides have their first request."""

    def ensure_running(self) -> None:
        """Restart whatever process died (called by every ``reset()``)."""
        return None

    def close(self) -> None:
        return None
