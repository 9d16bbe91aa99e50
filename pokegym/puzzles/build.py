"""The generator of the ``1v1`` suite (``pokegym puzzles build``).

Candidate ``j`` of seed ``S`` is drawn from ``numpy.random.default_rng([S, j])``: two
Gen 8 random-battle teams from Showdown's own generator (``Teams.generate``, each with
its own seed), one Pokémon of each (a slot drawn at random), the battle seed, and the
seeds of the reference agent's tries. The reference agent (``abyssal``) plays player 1
against the suite's opponent up to ``tries`` times, each with another battle seed; the
candidate is kept when it wins one of them. The battle seed a scenario is scored with
is drawn apart from the tries' seeds, so that the reference agent's own solve rate is
measured, not given.

The battles are played in ``gen8randombattle`` with the teams passed to the simulator:
random-battle mechanics and rules exactly (levels from the random set, Dynamax allowed,
no Team Preview), one Pokémon a side.

The ``tera`` suite draws Gen 9 random-battle candidates the same way and keeps those
where Terastallizing decides the game (:mod:`pokegym.puzzles.mechanic`); its scenarios are
scored with the battle seed the check played first. The ``dynamax`` suite does the same
with Gen 8 sets and Dynamax.

The ``stall`` (three a side) and ``switching`` (two a side) suites draw their teams from
a pool of Gen 8 random-battle teams (:mod:`pokegym.puzzles.attrition`) and keep a
candidate, as ``1v1`` does, when the reference agent wins one of its tries against the
suite's opponent (``abyssal`` with the attrition team; the switching rule agent).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pokegym.agents import make_agent
from pokegym.errors import PokegymError
from pokegym.puzzles.attrition import POOL_TEAMS, SIDE_SIZE, pick_sides
from pokegym.puzzles.mechanic import mechanic_decides
from pokegym.puzzles.play import play_teams, puzzle_setup
from pokegym.puzzles.scenarios import (
    Scenario,
    Suite,
    check_suite_name,
    export_set,
    export_team,
)
from pokegym.puzzles.switcher import SWITCHER, register_puzzle_agents
from pokegym.showdown.install import lock_hash
from pokegym.showdown.simulator import Simulator

#: Per suite: the format its sets and battles are in, and the reference agent's tries.
SUITE_DEFAULTS = {
    "1v1": ("gen8randombattle", 3),
    "tera": ("gen9randombattle", 2),
    "dynamax": ("gen8randombattle", 2),
    "stall": ("gen8randombattle", 2),
    "switching": ("gen8randombattle", 2),
}
#: The opponent a suite is built and played against, where it is not ``abyssal``.
SUITE_OPPONENTS = {"switching": SWITCHER}


@dataclass(frozen=True)
class BuildConfig:
    """How a suite is generated.

    Attributes:
        suite: the suite's name.
        seed: the generator's seed.
        n: scenarios to keep.
        tries: battles the reference agent gets per candidate (None: the suite's).
        reference: the agent spec a scenario must be won by.
        opponent: the agent spec playing player 2 (None: the suite's, ``abyssal`` or
            for ``switching`` the rule agent of :mod:`pokegym.puzzles.switcher`).
        format: the Showdown format of the sets and the battles (None: the suite's).
        max_turns: a battle still going at this turn counts as not won.
    """

    suite: str = "1v1"
    seed: int = 0
    n: int = 1000
    tries: int | None = None
    reference: str = "abyssal"
    opponent: str | None = None
    format: str | None = None
    max_turns: int = 100

    def __post_init__(self) -> None:
        check_suite_name(self.suite)
        if self.n < 1 or self.n_tries < 1 or self.max_turns < 1:
            raise BuildConfigError(
                f"n, tries and max_turns are at least 1 (got n={self.n}, tries={self.n_tries}, "
                f"max_turns={self.max_turns})."
            )
        if self.seed < 0:
            raise BuildConfigError(f"The seed is a non-negative integer, got {self.seed}.")

    @property
    def battle_format(self) -> str:
        """The format given, or the suite's."""
        return self.format or SUITE_DEFAULTS[self.suite][0]

    @property
    def opponent_spec(self) -> str:
        """The opponent given, or the suite's."""
        return self.opponent or SUITE_OPPONENTS.get(self.suite, "abyssal")

    @property
    def n_tries(self) -> int:
        """The tries given, or the suite's."""
        return SUITE_DEFAULTS[self.suite][1] if self.tries is None else self.tries


class BuildConfigError(PokegymError, ValueError):
    """A puzzle suite cannot be built with these settings."""


@dataclass(frozen=True)
class Candidate:
    """One draw of the generator: the teams, the scored battle seed, the tries' seeds."""

    number: int
    teams: tuple[str, str]
    battle_seed: int
    try_seeds: tuple[int, ...]


def _team_seed(rng: np.random.Generator) -> str:
    return ",".join(str(int(w)) for w in rng.integers(1, 1 << 16, size=4))


def draw_candidate(sim: Simulator, config: BuildConfig, number: int) -> Candidate | None:
    """Candidate ``number`` of ``config.seed`` (the same on every run); None where a
    ``stall`` or ``switching`` draw finds too few fitting sets."""
    rng = np.random.default_rng([config.seed, number])
    if config.suite in SIDE_SIZE:
        return _draw_teams(sim, config, number, rng)
    team_seeds = [_team_seed(rng), _team_seed(rng)]
    slots = [int(s) for s in rng.integers(0, 6, size=2)]
    battle_seed = int(rng.integers(2**63 - 1))
    try_seeds = tuple(int(rng.integers(2**63 - 1)) for _ in range(config.n_tries))
    sim.ensure_running()
    generated = sim.call([["generate", config.battle_format, s] for s in team_seeds])
    teams = []
    for sets, slot in zip(generated, slots, strict=True):
        if isinstance(sets, dict) or not sets:
            raise BuildConfigError(
                f"Showdown could not generate a {config.battle_format} team ({sets}); the suites "
                "need a random-team format."
            )
        teams.append(export_set(sets[slot % len(sets)]))
    return Candidate(number, (teams[0], teams[1]), battle_seed, try_seeds)


def _draw_teams(
    sim: Simulator, config: BuildConfig, number: int, rng: np.random.Generator
) -> Candidate | None:
    team_seeds = [_team_seed(rng) for _ in range(POOL_TEAMS)]
    battle_seed = int(rng.integers(2**63 - 1))
    try_seeds = tuple(int(rng.integers(2**63 - 1)) for _ in range(config.n_tries))
    sim.ensure_running()
    pool = sim.call([["generate", config.battle_format, s] for s in team_seeds])
    if any(isinstance(sets, dict) or not sets for sets in pool):
        raise BuildConfigError(
            f"Showdown could not generate a {config.battle_format} team; the suites need a "
            "random-team format."
        )
    sides = pick_sides(config.suite, pool, rng)
    if sides is None:
        return None
    teams = (export_team(sides[0]), export_team(sides[1]))
    return Candidate(number, teams, battle_seed, try_seeds)


def build_suite(
    config: BuildConfig,
    *,
    progress: Callable[[int, int], None] | None = None,
    max_candidates: int | None = None,
) -> Suite:
    """Draw candidates in order and keep those the reference agent wins, until
    ``config.n`` are kept (or ``max_candidates`` were drawn)."""
    shell = Suite(
        name=config.suite, format=config.battle_format, seed=config.seed,
        opponent=config.opponent_spec,
        reference=config.reference, tries=config.n_tries, max_turns=config.max_turns,
        candidates=0, showdown=lock_hash(),
    )  # fmt: skip
    setup = puzzle_setup(shell)
    sim = setup.backend.simulator  # type: ignore[attr-defined]
    register_puzzle_agents()
    reference, opponent = make_agent(config.reference), make_agent(config.opponent_spec)
    kept: list[Scenario] = []
    number = 0
    limit = max_candidates if max_candidates is not None else 20 * config.n
    try:
        while len(kept) < config.n and number < limit:
            candidate = draw_candidate(sim, config, number)
            number += 1
            scenario = None
            if candidate is not None:
                scenario = _check(setup, config, candidate, reference, opponent)
            if scenario is not None:
                kept.append(replace(scenario, index=len(kept)))
            if progress is not None:
                progress(len(kept), number)
    finally:
        setup._close_battle()
    return Suite(**{**shell.__dict__, "candidates": number, "scenarios": tuple(kept)})


def _check(
    setup: Any, config: BuildConfig, candidate: Candidate, reference: Any, opponent: Any
) -> Scenario | None:
    """The candidate as a scenario when the suite keeps it, else None."""
    if config.suite in ("tera", "dynamax"):
        seeds = (candidate.battle_seed, *candidate.try_seeds)[: config.n_tries]
        if mechanic_decides(config.suite, setup, candidate.teams, seeds, reference, opponent):
            return Scenario(0, candidate.teams, candidate.battle_seed, candidate.number, 0)
        return None
    for attempt, seed in enumerate(candidate.try_seeds):
        won, _, _ = play_teams(setup, candidate.teams, seed, reference, opponent)
        if won:
            return Scenario(0, candidate.teams, candidate.battle_seed, candidate.number, attempt)
    return None
