"""pokegym: Gymnasium and PettingZoo environments over real Pokémon Showdown battles.

Importing the package only registers the environment ids (entry points are
strings, so nothing heavy loads until ``gym.make``)::

    import gymnasium as gym
    import pokegym

    env = gym.make("Showdown-Gen9OU")
    obs, info = env.reset(seed=7)
"""

from __future__ import annotations

import importlib
from typing import Any

from gymnasium.envs.registration import register, registry

from pokegym.formats import registered_formats

__version__ = "0.1.0"

# id -> (Showdown format, extra kwargs): one per format of the registry that names an id.
ENV_IDS: dict[str, tuple[str, dict[str, Any]]] = {
    entry.gym_id: (entry.id, dict(entry.gym_kwargs))
    for entry in registered_formats()
    if entry.gym_id is not None
}

for _env_id, (_format, _kwargs) in ENV_IDS.items():
    if _env_id not in registry:
        register(
            id=_env_id,
            entry_point="pokegym.env:ShowdownEnv",
            kwargs={"battle_format": _format, **_kwargs},
        )

# Puzzle suites (pokegym.puzzles.env): one scenario per episode.
_PUZZLE_IDS = {"Showdown-Puzzle1v1-v0": "1v1", "Showdown-PuzzleTera-v0": "tera"}
_PUZZLE_IDS["Showdown-PuzzleDynamax-v0"] = "dynamax"
_PUZZLE_IDS["Showdown-PuzzleStall-v0"] = "stall"
_PUZZLE_IDS["Showdown-PuzzleSwitching-v0"] = "switching"
for _env_id, _suite in _PUZZLE_IDS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point="pokegym.puzzles.env:PuzzleEnv", kwargs={"suite": _suite})

_LAZY = {
    "ShowdownEnv": "pokegym.env",
    "ShowdownParallelEnv": "pokegym.parallel_env",
    "ShowdownVectorEnv": "pokegym.vector",
    "ActionCodec": "pokegym.actions",
    "ObservationEncoder": "pokegym.observation",
    "Simulator": "pokegym.showdown.simulator",
    "LocalServer": "pokegym.showdown.server",
    "TeamPool": "pokegym.teams",
    "Team": "pokegym.teams",
    "make_agent": "pokegym.agents",
    "register_agent": "pokegym.agents",
    "resolve_format": "pokegym.formats",
}

__all__ = ["ENV_IDS", "__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pokegym' has no attribute {name!r}")

    return getattr(importlib.import_module(module), name)
