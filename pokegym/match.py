"""Battles between two agents (no learner): what ``pokegym battle`` runs.

Sides alternate between battles (agent A is player 1 in even battles and player 2
in odd ones) so that neither agent keeps a seat advantage.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pokegym.actions import ActionCodec
from pokegym.agents import Agent
from pokegym.backends import Backend, BattleSession
from pokegym.env import BattleSetup, opponent_choice
from pokegym.errors import PokegymError
from pokegym.stats import percentile, wilson_interval


@dataclass
class BattleRecord:
    """The outcome of one battle between agents ``names[0]`` and ``names[1]``."""

    seed: int
    seats: tuple[int, int]  # seats[k]: the side (0 = p1, 1 = p2) agent k played
    winner: int | None  # index of the winning agent, None for a tie or truncation
    turns: int
    truncated: bool
    seconds: float
    log: str | None = None

    def named_log(self, names: tuple[str, str]) -> str | None:
        """The protocol log with each side's player named after the agent that sat there
        (``names[k]`` is agent k's), in its ``|player|`` and ``|win|`` lines; the simulator
        names the sides ``p1`` and ``p2``."""
        if self.log is None:
            return None
        by_side = {f"p{side + 1}": names[agent] for agent, side in enumerate(self.seats)}
        lines = []
        for line in self.log.split("\n"):
            parts = line.split("|")
            if len(parts) > 3 and parts[1] == "player" and parts[3] == parts[2] in by_side:
                parts[3] = by_side[parts[2]]
            elif len(parts) == 3 and parts[1] == "win" and parts[2] in by_side:
                parts[2] = by_side[parts[2]]
            lines.append("|".join(parts))
        return "\n".join(lines)


@dataclass
class MatchResult:
    names: tuple[str, str]
    battles: list[BattleRecord] = field(default_factory=list)
    latencies: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))

    def wins(self, agent: int) -> int:
        return sum(1 for b in self.battles if b.winner == agent)

    @property
    def ties(self) -> int:
        return sum(1 for b in self.battles if b.winner is None)

    def win_rate(self, agent: int) -> tuple[float, float, float]:
        """(rate, low, high): ties count as half a win; 95 % Wilson interval."""
        n = len(self.battles)
        score = self.wins(agent) + 0.5 * self.ties
        low, high = wilson_interval(score, n)
        return (score / n if n else float("nan")), low, high

    def summary(self) -> str:
        n = len(self.battles)
        if not n:
            return "No battles were played."
        turns = [b.turns for b in self.battles]
        seconds = sum(b.seconds for b in self.battles)
        lines = [
            f"{n} battles, {self.ties} ties/truncations, mean {np.mean(turns):.1f} turns "
            f"(median {np.median(turns):.0f}), {seconds:.1f} s ({n / seconds:.2f} battles/s)"
        ]
        width = max(len(name) for name in self.names)
        for k, name in enumerate(self.names):
            rate, low, high = self.win_rate(k)
            lat = self.latencies[k]
            lines.append(
                f"  {name:<{width}}  wins {self.wins(k):>4}  win rate {rate:6.1%}  "
                f"95% CI [{low:.1%}, {high:.1%}]  decision ms p50 {percentile(lat, 50) * 1e3:.2f} "
                f"p95 {percentile(lat, 95) * 1e3:.2f}"
            )
        return "\n".join(lines)


def play_battle(
    session: BattleSession,
    agents: Sequence[Agent],
    codec: ActionCodec,
    rng: np.random.Generator,
    *,
    max_turns: int,
    latencies: Sequence[list[float]] | None = None,
) -> bool:
    """Play a started battle to its end; ``agents[side]`` plays that side.

    Returns True when the battle was truncated at ``max_turns``.
    """
    for _ in range(100_000):
        if session.finished:
            return False
        if session.battles[0].turn >= max_turns:
            return True
        choices: dict[int, str] = {}
        for side in (0, 1):
            if session.needs_choice(side):
                start = time.perf_counter()
                choices[side] = opponent_choice(agents[side], session.battles[side], codec, rng)
                if latencies is not None:
                    latencies[side].append(time.perf_counter() - start)
        if not choices:
            raise PokegymError("Neither side can move but the battle is not over.")
        session.choose(choices)
    raise PokegymError("The battle did not end.")


def random_play_views(
    session: BattleSession,
    codec: ActionCodec,
    rng: np.random.Generator,
    side: int = 0,
    max_choices: int = 1_000,
) -> Iterator[Any]:
    """Play a started battle with uniformly random legal choices on both sides, and yield
    ``side``'s battle view before each of its decisions after team preview (the caller
    looks at it, e.g. builds a prompt, before the choice is made).

    Stops when the battle ends or after ``max_choices`` rounds of choices."""
    for _ in range(max_choices):
        if session.finished:
            return
        choices: dict[int, str] = {}
        for who in (0, 1):
            if not session.needs_choice(who):
                continue
            view = session.battles[who]
            if who == side and not view.teampreview:
                yield view
            choices[who] = codec.to_choice(int(rng.choice(codec.legal_actions(view))), view)
        session.choose(choices)


def run_match(
    setup: BattleSetup,
    agents: tuple[Agent, Agent],
    names: tuple[str, str],
    n_battles: int,
    *,
    seed: int = 0,
    keep_logs: bool = False,
    on_battle: Callable[[BattleRecord], None] | None = None,
) -> MatchResult:
    """Play ``n_battles`` between two agents on ``setup``'s format, teams and backend."""
    backend: Backend = setup.backend
    rng = np.random.default_rng(seed)
    result = MatchResult(names=names)
    for index in range(n_battles):
        battle_seed = int(rng.integers(2**63 - 1))
        battle_rng = np.random.default_rng(battle_seed)
        seats = (0, 1) if index % 2 == 0 else (1, 0)
        seated: list[Any] = [None, None]
        for agent_index, side in enumerate(seats):
            seated[side] = agents[agent_index]
            seed_fn = getattr(agents[agent_index], "seed", None)
            if callable(seed_fn):
                seed_fn(int(battle_rng.integers(2**63 - 1)))
        backend.ensure_running()
        start = time.perf_counter()
        session = setup._start_session(battle_rng)
        side_latencies: list[list[float]] = [[], []]
        try:
            truncated = play_battle(
                session,
                seated,
                setup.codec,
                battle_rng,
                max_turns=setup.max_turns,
                latencies=side_latencies,
            )
            winner_side = session.winner if not truncated else None
            log = session.replay_log() if keep_logs else None
        finally:
            session.close()
            setup.session = None
        for agent_index, side in enumerate(seats):
            result.latencies[agent_index].extend(side_latencies[side])
        record = BattleRecord(
            seed=battle_seed,
            seats=seats,
            winner=None if winner_side is None else seats.index(winner_side),
            turns=session.battles[0].turn,
            truncated=truncated,
            seconds=time.perf_counter() - start,
            log=log,
        )
        result.battles.append(record)
        if on_battle is not None:
            on_battle(record)
    return result
