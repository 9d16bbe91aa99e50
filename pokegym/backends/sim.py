"""The embedded backend: battles run inside one Node process of Showdown's simulator.

No server, no ports, no login: a battle is a ``BattleStream`` in the
:class:`~pokegym.showdown.simulator.Simulator` process, seeded so that the same
seed and the same choices replay the same battle byte for byte.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from pokegym.backends.base import ROLES, Backend, BattleSession, PlayerView
from pokegym.errors import InvalidTeamError, SimulatorError
from pokegym.formats import BattleFormat
from pokegym.showdown.simulator import Simulator, shared_simulator

PLAYER_NAMES = ("p1", "p2")


def seed_string(seed: int) -> str:
    """A Showdown PRNG seed from a non-negative integer (its low 64 bits).

    Showdown accepts two generators: ChaCha20 ("sodium", its default for new
    battles) and the games' own 64-bit LCG ("gen5"). Both are deterministic; the
    LCG makes a simulated turn cheaper (docs/backends.md), which is why it is used here.
    """
    if seed < 0:
        raise ValueError(f"seeds are non-negative integers, got {seed}")
    seed &= (1 << 64) - 1
    words = [(seed >> shift) & 0xFFFF for shift in (48, 32, 16, 0)]
    if not any(words):
        words[3] = 1
    return ",".join(str(w) for w in words)


class SimBattleSession(BattleSession):
    """A battle hosted by a :class:`Simulator`.

    Args:
        simulator: the Node process (started if needed).
        fmt: the battle format.
        teams: export text (or packed text) per side; None for random-team formats.
        seeds: ``(battle seed, p1 team seed, p2 team seed)`` as integers. The team
            seeds only matter in random-team formats.
        log: keep the spectator log ("spectator") or the omniscient log ("omniscient")
            for replays and analysis.
        timeout: seconds each answer of the simulator may take in this battle before it
            is declared stalled (:class:`~pokegym.errors.BattleTimeoutError`); None: the
            simulator's own limit. Battles sharing a process each keep their own.
    """

    def __init__(
        self,
        simulator: Simulator,
        fmt: BattleFormat,
        *,
        teams: Sequence[str | None] = (None, None),
        seeds: tuple[int, int, int],
        log: str | None = None,
        names: tuple[str, str] = PLAYER_NAMES,
        start: bool = True,
        timeout: float | None = None,
    ):
        simulator.ensure_running()
        self.simulator = simulator
        self.timeout = timeout
        self.fmt = fmt
        self.battle_id = simulator.new_battle_id()
        self._generation = simulator.generation
        self._log: list[str] | None = [] if log else None
        self._closed = False
        # The tag names the battle by its seed: the same seed is the same battle.
        tag = f"battle-{fmt.id.split('@@@')[0]}-{seeds[0] & ((1 << 64) - 1):016x}"
        self.views = (
            PlayerView(tag, names[0], names[1], "p1", fmt.gen, teams[0]),
            PlayerView(tag, names[1], names[0], "p2", fmt.gen, teams[1]),
        )
        spec: dict[str, Any] = {"formatid": fmt.id, "seed": seed_string(seeds[0]), "log": log}
        for side, role in enumerate(ROLES):
            spec[role] = {
                "name": names[side],
                "team": teams[side],
                "seed": seed_string(seeds[side + 1]),
            }
        #: The simulator command that opens the battle (sent now, or batched by the caller).
        self.start_command: list[Any] = ["start", self.battle_id, spec]
        if start:
            self.absorb(simulator.call([self.start_command], timeout=timeout)[0], starting=True)

    # The start and every write return
    # [p1 text, p2 text, log text, ended, errors, p1 requests, p2 requests].
    def _absorb(self, result: Any, starting: bool = False) -> None:
        if isinstance(result, dict):
            raise SimulatorError(
                f"The simulator failed on battle {self.battle_id}: {result['error']}"
            )
        p1_text, p2_text, log_text, _ended, errors, p1_requests, p2_requests = result
        if errors:
            message = errors[0].split("\n")[0]
            if starting and ("team" in message.lower() or "validat" in message.lower()):
                raise InvalidTeamError(f"Showdown could not start the battle: {message}")
            raise SimulatorError(
                f"Showdown raised an error in battle {self.battle_id}: {errors[0]}"
            )
        if self._log is not None and log_text:
            self._log.append(log_text)
        views = self.views
        views[0].feed(p1_text)
        views[1].feed(p2_text)
        if p1_requests:
            views[0].feed_requests(p1_requests)
        if p2_requests:
            views[1].feed_requests(p2_requests)

    def _check_alive(self) -> None:
        if self._closed:
            raise SimulatorError("This battle was closed; call reset() to start a new one.")
        if self.simulator.generation != self._generation or not self.simulator.is_running():
            raise SimulatorError(
                "The Showdown simulator process was restarted or died; this battle is lost. "
                "Call reset() to start a new battle."
            )

    def write_command(self, side: int, choice: str) -> str:
        return f">{ROLES[side]} {choice}"

    def _send(self, choices: Mapping[int, str]) -> None:
        self._check_alive()
        text = "\n".join(self.write_command(side, choice) for side, choice in choices.items())
        for side in choices:
            self.views[side].needs_choice = False
        result = self.simulator.call([["write", self.battle_id, text]], timeout=self.timeout)[0]
        self._absorb(result)

    # Batched stepping for vector environments: many battles, one round trip.
    def command(self, choices: Mapping[int, str]) -> list[Any]:
        """The simulator command for :meth:`choose`, for batching with other battles."""
        self._check_alive()
        for side in choices:
            if not self.needs_choice(side):
                raise SimulatorError(f"{ROLES[side]} has no decision to make in this battle.")
        text = "\n".join(self.write_command(side, choice) for side, choice in choices.items())
        for side in choices:
            self.views[side].needs_choice = False
        return ["write", self.battle_id, text]

    def absorb(self, result: Any, starting: bool = False) -> None:
        """Apply the result of :attr:`start_command` or of a :meth:`command`."""
        self._absorb(result, starting=starting)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.simulator.generation == self._generation and self.simulator.is_running():
            with contextlib.suppress(SimulatorError):  # a dead process holds no battles
                self.simulator.call([["close", self.battle_id]], timeout=self.timeout)

    def close_command(self) -> list[Any] | None:
        """A batched close (vector envs); marks the session closed."""
        if self._closed:
            return None
        self._closed = True
        return ["close", self.battle_id]

    def teams(self) -> list[list[dict[str, Any]]]:
        """Both sides' full sets as Showdown holds them (species, item, ability, moves,
        nature, EVs, IVs, level, Tera Type): the omniscient view, for analysis."""
        self._check_alive()
        result = self.simulator.call([["teams", self.battle_id]], timeout=self.timeout)[0]
        if isinstance(result, dict):
            raise SimulatorError(
                f"The simulator failed on battle {self.battle_id}: {result['error']}"
            )
        return result  # type: ignore[no-any-return]

    def replay_log(self) -> str | None:
        return "\n".join(self._log) if self._log is not None else None


class SimBackend(Backend):
    """Battles inside a Showdown simulator process (seeded, reproducible)."""

    name = "sim"
    deterministic = True

    def __init__(self, simulator: Simulator | None = None, *, timeout: float | None = None):
        self.simulator = simulator or shared_simulator()
        self.timeout = timeout  # per battle; None: the simulator's own limit

    def start(
        self,
        fmt: BattleFormat,
        *,
        teams: Sequence[str | None],
        seeds: tuple[int, int, int],
        log: str | None = None,
    ) -> BattleSession:
        return SimBattleSession(
            self.simulator, fmt, teams=teams, seeds=seeds, log=log, timeout=self.timeout
        )

    def ensure_running(self) -> None:
        self.simulator.ensure_running()
