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
from pokegym.puzzles.mistakes import MISTAKES
from pokegym.puzzles.scenarios import Scenario, Suite
from pokegym.puzzles.switcher import register_puzzle_agents
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
    mistakes: int | None = None
    """The suite's named mistake, times made (None: the suite names none)."""


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
    won, turns, truncated, _ = play_teams_logged(setup, teams, battle_seed, agent, opponent)
    return won, turns, truncated


def play_teams_logged(
    setup: BattleSetup,
    teams: Sequence[str],
    battle_seed: int,
    agent: Agent,
    opponent: Agent,
    *,
    log: str | None = None,
) -> tuple[bool, int, bool, str | None]:
    """:func:`play_teams`, and the battle's protocol log when ``log`` names one
    (``"spectator"`` or ``"omniscient"``)."""
    rng = np.random.default_rng(int(battle_seed))
    for player in (agent, opponent):
        seed_fn = getattr(player, "seed", None)
        if callable(seed_fn):
            seed_fn(int(rng.integers(2**63 - 1)))
    session = start_scenario(setup, teams, battle_seed, log=log)
    try:
        truncated = play_battle(
            session, [agent, opponent], setup.codec, rng, max_turns=setup.max_turns
        )
        won = not truncated and session.winner == AGENT
        return won, session.battles[AGENT].turn, truncated, session.replay_log()
    finally:
        session.close()
        setup.session = None


def play_scenario(
    setup: BattleSetup,
    scenario: Scenario,
    agent: Agent,
    opponent: Agent,
    mistake: Callable[[str], int] | None = None,
) -> Outcome:
    """One scenario; ``mistake`` (a counter over the spectator log) counts the suite's
    named mistake."""
    start = time.perf_counter()
    won, turns, truncated, log = play_teams_logged(
        setup, scenario.teams, scenario.battle_seed, agent, opponent,
        log="spectator" if mistake is not None else None,
    )  # fmt: skip
    count = mistake(log or "") if mistake is not None else None
    return Outcome(scenario.index, won, turns, truncated, time.perf_counter() - start, count)


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

    @property
    def counted(self) -> list[int]:
        """The mistake counts of the battles that counted one."""
        return [o.mistakes for o in self.outcomes if o.mistakes is not None]

    def mistake_rate(self) -> tuple[float, float, float, float]:
        """(share of battles with the mistake, low, high, mean count per battle); the
        interval is a 95 % Wilson interval."""
        counts = self.counted
        n, made = len(counts), sum(1 for c in counts if c > 0)
        low, high = wilson_interval(made, n)
        nan = float("nan")
        return (made / n if n else nan), low, high, (sum(counts) / n if n else nan)

    def to_json(self) -> dict[str, Any]:
        rate, low, high = self.rate()
        data: dict[str, Any] = {
            "agent": self.spec,
            "scenarios": len(self.outcomes),
            "solved": self.solved,
            "solve_rate": rate,
            "ci95": [low, high],
        }
        if self.counted:
            share, m_low, m_high, mean = self.mistake_rate()
            data["mistake"] = {
                "battles": sum(1 for c in self.counted if c > 0),
                "rate": share,
                "ci95": [m_low, m_high],
                "per_battle": mean,
            }
        data["results"] = [_result(o) for o in self.outcomes]
        return data


def _result(outcome: Outcome) -> dict[str, Any]:
    row = {
        "scenario": outcome.index,
        "won": outcome.won,
        "turns": outcome.turns,
        "truncated": outcome.truncated,
    }
    if outcome.mistakes is not None:
        row["mistakes"] = outcome.mistakes
    return row


def run_suite(
    suite: Suite,
    agents: Sequence[str],
    *,
    indices: Sequence[int] | None = None,
    setup: BattleSetup | None = None,
    on_outcome: Callable[[str, Outcome], None] | None = None,
) -> list[AgentScore]:
    """Play every scenario (or ``indices``) once per agent spec, against the suite's
    opponent; agents are built by name with :func:`pokegym.agents.make_agent`. Suites
    with a named mistake (:data:`pokegym.puzzles.mistakes.MISTAKES`) count it per battle."""
    register_puzzle_agents()
    mistake = MISTAKES[suite.name][1] if suite.name in MISTAKES else None
    chosen = [suite.scenario(i) for i in (range(len(suite)) if indices is None else indices)]
    built = [(spec, make_agent(spec)) for spec in agents]
    opponent = make_agent(suite.opponent)
    own = setup is None
    setup = setup or puzzle_setup(suite)
    scores = [AgentScore(spec) for spec, _ in built]
    try:
        for score, (spec, agent) in zip(scores, built, strict=True):
            for scenario in chosen:
                outcome = play_scenario(setup, scenario, agent, opponent, mistake)
                score.outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(spec, outcome)
    finally:
        if own:
            setup._close_battle()
    return scores


def format_table(suite: Suite, scores: Sequence[AgentScore]) -> str:
    """The solve-rate table: one row per agent, with the 95 % Wilson interval; for a
    suite with a named mistake, also the share of battles with it (and its interval)
    and the mean count per battle."""
    names = [parse_agent_spec(s.spec)[0] if len(s.spec) > 28 else s.spec for s in scores]
    width = max([len("agent"), *(len(n) for n in names)])
    with_mistakes = any(score.counted for score in scores)
    head = f"{'agent':<{width}}  {'solved':>6}  {'n':>5}  {'rate':>6}  95% CI"
    if with_mistakes:
        head = f"{head:<{width + 41}}  {'mistake':>7}  {'rate':>6}  {'95% CI':<16}  per battle"
    lines = [f"Suite {suite.name} ({suite.format}, opponent {suite.opponent})", head]
    if suite.name in MISTAKES:
        lines.insert(1, f"Mistake: {MISTAKES[suite.name][0]}")
    for name, score in zip(names, scores, strict=True):
        rate, low, high = score.rate()
        row = (
            f"{name:<{width}}  {score.solved:>6}  {len(score.outcomes):>5}  {rate:>6.1%}  "
            f"[{low:.1%}, {high:.1%}]"
        )
        if with_mistakes:
            share, m_low, m_high, mean = score.mistake_rate()
            made = sum(1 for c in score.counted if c > 0)
            row = f"{row:<{width + 41}}  {made:>7}  {share:>6.1%}  " + (
                f"{f'[{m_low:.1%}, {m_high:.1%}]':<16}  {mean:>10.2f}"
            )
        lines.append(row)
    return "\n".join(lines)
