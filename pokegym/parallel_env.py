"""``ShowdownParallelEnv``: both players learn (PettingZoo Parallel API, self-play).

A Showdown turn is simultaneous, so the two-player env is a ``ParallelEnv``: each
step takes one action per live agent. When only one player has a decision (the
other waits while its opponent replaces a fainted Pokémon) the waiting player's
mask allows only action 14 (wait), which may also be omitted from ``actions``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from pokegym.actions import N_ACTIONS, WAIT
from pokegym.env import BattleSetup, battle_info, default_lead
from pokegym.errors import IllegalActionError, PokegymError
from pokegym.observation import observation_space
from pokegym.render import render_battle

AGENTS = ("player_0", "player_1")


class ShowdownParallelEnv(BattleSetup, ParallelEnv):  # type: ignore[misc]
    """Two learning agents in one Showdown battle.

    Observation and action spaces are those of :class:`~pokegym.env.ShowdownEnv`
    (``player_0`` plays ``team``, ``player_1`` plays ``opponent_team``). Rewards are
    computed per player from its own battle object (zero-sum for ``"win_loss"``).
    Both agents terminate together when the battle ends; both are truncated at
    ``max_turns``. ``infos[agent]["battle"]`` is that player's poke-env battle.

    Keyword arguments are those of :class:`~pokegym.env.BattleSetup`.
    """

    metadata = {"name": "showdown_v0", "render_modes": ["ansi", "human"], "is_parallelizable": True}

    def __init__(
        self,
        battle_format: str = "gen9randombattle",
        *,
        render_mode: str | None = None,
        **setup: Any,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        super().__init__(battle_format, **setup)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._observation_space = observation_space()
        self._action_space = spaces.Discrete(N_ACTIONS)
        self._rewards = [self._make_reward(), self._make_reward()]
        self._np_random, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> spaces.Space:  # type: ignore[override]
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:  # type: ignore[override]
        return self._action_space

    # ------------------------------------------------------------------- API
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        session = self._start_session(self._np_random)
        if not self.team_preview and session.battles[0].teampreview:
            session.choose({side: default_lead(session.battles[side]) for side in (0, 1)})
        self.agents = list(AGENTS)
        for side in (0, 1):
            self._rewards[side].reset(session.battles[side])
        return self._observations(), self._infos()

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, Any],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        session = self.session
        if session is None or not self.agents:
            raise PokegymError("The battle is over (or not started); call reset().")
        session.raise_if_failed()
        choices: dict[int, str] = {}
        checked: dict[int, int] = {}
        for side, agent in enumerate(AGENTS):
            battle = session.battles[side]
            waiting = not session.needs_choice(side)
            action = actions.get(agent, WAIT if waiting else None)
            if action is None:
                raise IllegalActionError(
                    f"{agent} must act this step (its mask shows its choices)."
                )
            checked[side] = self.codec.check(action, battle, waiting=waiting)
        for side, index in checked.items():
            choice = self.codec.to_choice(index, session.battles[side])
            if choice is not None:
                choices[side] = choice
        session.choose(choices)
        finished = session.finished
        truncated = not finished and session.battles[0].turn >= self.max_turns
        rewards = {
            agent: float(self._rewards[side](session.battles[side]))
            for side, agent in enumerate(AGENTS)
        }
        obs, infos = self._observations(), self._infos()
        terminations = dict.fromkeys(AGENTS, finished)
        truncations = dict.fromkeys(AGENTS, truncated)
        if finished or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        if self.render_mode is None or self.session is None:
            return None
        text = "\n\n".join(
            f"{agent}:\n{render_battle(self.session.battles[side], self.codec)}"
            for side, agent in enumerate(AGENTS)
        )
        if self.render_mode == "human":
            print(text, flush=True)
            return None
        return text

    def close(self) -> None:
        self._close_battle()

    def action_mask(self, agent: str) -> np.ndarray:
        """The legal actions of ``agent`` now (int8)."""
        assert self.session is not None
        side = AGENTS.index(agent)
        return self.codec.mask(
            self.session.battles[side], waiting=not self.session.needs_choice(side)
        )

    # --------------------------------------------------------------- helpers
    def _observations(self) -> dict[str, Any]:
        assert self.session is not None
        return {
            agent: self._observe(side, waiting=not self.session.needs_choice(side))
            for side, agent in enumerate(AGENTS)
        }

    def _infos(self) -> dict[str, dict[str, Any]]:
        assert self.session is not None
        return {agent: battle_info(self.session, side) for side, agent in enumerate(AGENTS)}
