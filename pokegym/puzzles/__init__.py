"""Puzzle suites: fixed scenarios an agent solves by winning (docs/puzzles.md).

``pokegym puzzles build`` generates a suite from Showdown's own random-battle sets with a
seed; ``pokegym puzzles run`` measures agents' solve rates with 95 % intervals;
:class:`~pokegym.puzzles.env.PuzzleEnv` (``gym.make("Showdown-Puzzle1v1-v0")``) plays one
scenario per episode.
"""

from __future__ import annotations

from pokegym.puzzles.scenarios import (
    SUITES,
    Scenario,
    ScenarioIndexError,
    Suite,
    SuiteFileError,
    UnknownSuiteError,
    load_suite,
)

__all__ = [
    "SUITES",
    "Scenario",
    "ScenarioIndexError",
    "Suite",
    "SuiteFileError",
    "UnknownSuiteError",
    "load_suite",
]
