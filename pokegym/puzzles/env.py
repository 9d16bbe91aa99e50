"""A puzzle suite as a Gymnasium environment: each episode is one scenario.

    env = gym.make("Showdown-Puzzle1v1-v0")
    obs, info = env.reset(options={"scenario": 12})   # or reset(seed=...) for a seeded draw
    info["scenario"]                                    # the scenario played

The agent is player 1 with the scenario's first team; the suite's opponent plays the
other, seeded from the scenario's battle seed as ``pokegym puzzles run`` seeds it.
The reward is the environment's (``win_loss`` by default: +1 solves the scenario).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pokegym.backends import BattleSession
from pokegym.env import ShowdownEnv
from pokegym.puzzles.play import start_scenario
from pokegym.puzzles.scenarios import Scenario, Suite, load_suite
from pokegym.puzzles.switcher import register_puzzle_agents


class PuzzleEnv(ShowdownEnv):
    """:class:`~pokegym.env.ShowdownEnv` over a puzzle suite's scenarios.

    Args:
        suite: a suite name (``"1v1"``), a suite file, or a :class:`Suite`.
        opponent: the agent playing player 2 (default: the suite's opponent).
        **setup: the rest of :class:`~pokegym.env.ShowdownEnv`'s arguments (backend,
            reward, log_battles, ...); the format and turn limit are the suite's.
    """

    def __init__(self, suite: str | Suite = "1v1", *, opponent: Any = None, **setup: Any):
        self.suite = suite if isinstance(suite, Suite) else load_suite(suite)
        register_puzzle_agents()  # the switching suite's opponent, by name
        setup.setdefault("max_turns", self.suite.max_turns)
        setup.setdefault("validate_teams", False)
        super().__init__(
            self.suite.format,
            opponent=self.suite.opponent if opponent is None else opponent,
            **setup,
        )
        self.scenario: Scenario | None = None
        self._asked: int | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a scenario: ``options={"scenario": i}``, otherwise one drawn with the
        env's seeded generator.

        Raises:
            ScenarioIndexError: ``i`` is not a scenario of the suite.
        """
        asked = (options or {}).get("scenario")
        if asked is not None:
            self.suite.scenario(asked)  # a bad index fails before any battle starts
        self._asked = asked
        obs, info = super().reset(seed=seed, options=options)
        return obs, info

    def _start_session(self, rng: np.random.Generator) -> BattleSession:
        if self.session is not None:
            self.session.close()
            self.session = None
        index = self._asked if self._asked is not None else int(rng.integers(len(self.suite)))
        self.scenario = self.suite.scenario(index)
        battle_rng = np.random.default_rng(self.scenario.battle_seed)
        battle_rng.integers(2**63 - 1)  # the agent's seed in `puzzles run`
        seed_fn = getattr(self.opponent, "seed", None)
        if callable(seed_fn):
            seed_fn(int(battle_rng.integers(2**63 - 1)))
        self.session = start_scenario(
            self, self.scenario.teams, self.scenario.battle_seed, log=self.log_battles
        )
        return self.session

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        if self.scenario is not None:
            info["scenario"] = self.scenario.index
        return info
