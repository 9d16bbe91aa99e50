"""Helpers shared by the tests (imported as ``helpers``; pytest puts tests/ on sys.path)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

# Battles end long before this many steps; a loop that reaches it is a bug.
MAX_STEPS = 2_000


def masked_random(seed: int) -> Callable[[dict[str, np.ndarray]], int]:
    """A seeded chooser of a uniformly random legal action from an observation."""
    rng = np.random.default_rng(seed)

    def choose(obs: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.size, "a deciding player must have at least one legal action"
        return int(rng.choice(legal))

    return choose


@dataclass
class Episode:
    """What one battle of a single-agent env produced."""

    observations: list[dict[str, np.ndarray]] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    reset_info: dict[str, Any] = field(default_factory=dict)
    final_info: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.actions)


def play_episode(
    env: Any,
    seed: int,
    *,
    action_seed: int | None = None,
    on_state: Callable[[dict[str, np.ndarray], dict[str, Any]], None] | None = None,
    max_steps: int = MAX_STEPS,
) -> Episode:
    """Play one battle to its end with seeded random legal actions.

    ``on_state(obs, info)`` is called on every state the agent decides in (before
    the action is taken), with the live battle in ``info["battle"]``.
    """
    choose = masked_random(seed if action_seed is None else action_seed)
    episode = Episode()
    obs, info = env.reset(seed=seed)
    episode.reset_info = info
    episode.observations.append(obs)
    for _ in range(max_steps):
        if on_state is not None:
            on_state(obs, info)
        action = choose(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        episode.actions.append(action)
        episode.rewards.append(float(reward))
        episode.observations.append(obs)
        if terminated or truncated:
            episode.terminated, episode.truncated = bool(terminated), bool(truncated)
            episode.final_info = info
            return episode
    raise AssertionError(f"the battle did not end within {max_steps} steps")


def process_group_alive(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes in process group ``pgid`` (Linux /proc)."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in ("Z", "X"):
            alive.append(int(entry))
    return alive


def outcome_reward(info: dict[str, Any]) -> float:
    """The win/loss reward the final ``info`` calls for: +1 won, -1 lost, 0 tie."""
    won = info["won"]
    return 1.0 if won else (-1.0 if won is False else 0.0)


class FakeClock:
    """A clock that moves only when told to: deadline logic tested without wall time.

    ``install(monkeypatch, module, ...)`` gives each module a ``time`` whose
    ``monotonic`` and ``perf_counter`` read this clock and whose ``sleep`` advances it
    (the rest is the real ``time`` module), so code that reads ``time.monotonic()`` (the
    search's deadline checks, for one) sees only the time that test doubles report with
    :meth:`advance`, e.g. a scripted model's cost per call.
    """

    def __init__(self, start: float = 1_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def install(self, monkeypatch: Any, *modules: ModuleType) -> None:
        import time

        clock = self

        class FakeTime(ModuleType):
            monotonic = perf_counter = staticmethod(clock)
            sleep = staticmethod(clock.advance)

            def __getattr__(self, name: str) -> Any:
                return getattr(time, name)

        for module in modules:
            monkeypatch.setattr(module, "time", FakeTime("time"))
