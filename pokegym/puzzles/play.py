"""Playing scenarios: one battle of an agent against the suite's opponent, and a
suite's solve rate for several agents (``pokegym puzzles run``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pokegym.agents import Agent, make_agent, parse_agent_spec
from pokegym.backends import BattleSession
from pokegym.env import BattleSetup
from pokegym.match import play_battle
from pokegym.puzzles.scenarios import Scenario, Suite
from pokegym.stats import wilson_interval

AGENT, OPPONENT = 0, 1


@dataclass(frozen=True)
class Outcome:
    """How one scenario went for one agent."""

    index: int
    won: bool
    turns: int
    truncated: bool
    seconds: float


def puzzle_setup(suite: Suite, **kwargs: Any) -> BattleSetup:
    """The battle layer for ``suite``'s format (the embedded simulator by default)."""
    return BattleSetup(suite.format, max_turns=suite.max_turns, validate_teams=False, **kwargs)


def start_scenario(
    setup: BattleSetup, teams: Sequence[str], battle_seed: int, *, log: str | None = None
) -> BattleSession:
    """Start the battle of two given teams with ``battle_seed`` (the teams are passed to
    Showdown as they are, also in a random-team format)."""
    setup.backend.ensure_running()
    seed = int(battle_seed) & ((1 << 63) - 1)
    return setup.backend.start(setup.fmt, teams=list(teams), seeds=(seed, 0, 0), log=log)


def play_teams(
    setup: BattleSetup,
    teams: Sequence[str],
    battle_seed: int,
    agent: Agent,
    opponent: Agent,
) -> tuple[bool, int, bool]:
    """Play ``agent`` (player 1, ``teams[0]``) against ``opponent``; returns
    (won, turns, truncated). Both agents are seeded from ``battle_seed``."""
    rng = np.random.default_rng(int(battle_seed))
    for player in (agent, opponent):
        seed_fn = getattr(player, "seed", None)
        if callable(seed_fn):
            seed_fn(int(rng.integers(2**63 - 1)))
    session = start_scenario(setup, teams, battle_seed)
    try:
        truncated = play_battle(
            session, [agent, opponent], setup.codec, rng, max_turns=setup.max_turns
        )
        won = not truncated and session.winner == AGENT
        return won, session.battles[AGENT].turn, truncated
    finally:
        session.close()
        setup.session = None


def play_scenario(setup: BattleSetup, scenario: Scenario, agent: Agent, opponent: Agent) -> Outcome:
    start = time.perf_counter()
    won, turns, truncated = play_teams(setup, scenario.teams, scenario.battle_seed, agent, opponent)
    return Outcome(scenario.index, won, turns, truncated, time.perf_counter() - start)


@dataclass
class AgentScore:
    """One agent's outcomes on a suite."""

    spec: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def solved(self) -> int:
        return sum(o.won for o in self.outcomes)

    def rate(self) -> tuple[float, float, float]:
        """(solve rate, low, high) with a 95 % Wilson interval."""
        n = len(self.outcomes)
        low, high = wilson_interval(self.solved, n)
        return (self.solved / n if n else float("nan")), low, high

    def to_json(self) -> dict[str, Any]:
        rate, low, high = self.rate()
        return {
            "agent": self.spec,
            "scenarios": len(self.outcomes),
            "solved": self.solved,
            "solve_rate": rate,
            "ci95": [low, high],
            "results": [
                {"scenario": o.index, "won": o.won, "turns": o.turns, "truncated": o.truncated}
                for o in self.outcomes
            ],
        }


def run_suite(
    suite: Suite,
    agents: Sequence[str],
    *,
    indices: Sequence[int] | None = None,
    setup: BattleSetup | None = None,
    on_outcome: Callable[[str, Outcome], None] | None = None,
) -> list[AgentScore]:
    """Play every scenario (or ``indices``) once per agent spec, against the suite's
    opponent; agents are built by name with :func:`pokegym.agents.make_agent`."""
    chosen = [suite.scenario(i) for i in (range(len(suite)) if indices is None else indices)]
    built = [(spec, make_agent(spec)) for spec in agents]
    opponent = make_agent(suite.opponent)
    own = setup is None
    setup = setup or puzzle_setup(suite)
    scores = [AgentScore(spec) for spec, _ in built]
    try:
        for score, (spec, agent) in zip(scores, built, strict=True):
            for scenario in chosen:
                outcome = play_scenario(setup, scenario, agent, opponent)
                score.outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(spec, outcome)
    finally:
        if own:
            setup._close_battle()
    return scores


def format_table(suite: Suite, scores: Sequence[AgentScore]) -> str:
    """The solve-rate table: one row per agent, with the 95 % Wilson interval."""
    names = [parse_agent_spec(s.spec)[0] if len(s.spec) > 28 else s.spec for s in scores]
    width = max([len("agent"), *(len(n) for n in names)])
    lines = [
        f"Suite {suite.name} ({suite.format}, opponent {suite.opponent})",
        f"{'agent':<{width}}  {'solved':>6}  {'n':>5}  {'rate':>6}  95% CI",
    ]
    for name, score in zip(names, scores, strict=True):
        rate, low, high = score.rate()
        lines.append(
            f"{name:<{width}}  {score.solved:>6}  {len(score.outcomes):>5}  {rate:>6.1%}  "
            f"[{low:.1%}, {high:.1%}]"
        )
    return "\n".join(lines)
