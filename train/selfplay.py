"""Self-play through the two-player env: the learner against a frozen policy.

:class:`SelfPlayEnv` is a single-agent Gymnasium env over
:class:`~pokegym.parallel_env.ShowdownParallelEnv`: the learner plays
``player_0``; a frozen policy (a snapshot of the learner, or any
``f(observation, mask) -> action``) plays ``player_1`` from the observation and
mask the two-player env gives that player. Steps where the learner can only wait
(the opponent replaces a fainted Pokémon) are played out inside ``step``, so the
learner only ever sees decisions; their rewards are added to the next one.

:class:`ConcatVecEnv` joins stable-baselines3 vector envs side by side, so that
training can mix the pipelined vector env (scripted and snapshot opponents) with
``SelfPlayEnv`` battles in one rollout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pokegym.actions import N_ACTIONS, WAIT
from pokegym.errors import PokegymError
from pokegym.observation import observation_space
from pokegym.parallel_env import ShowdownParallelEnv

FrozenPolicy = Callable[[dict[str, np.ndarray], np.random.Generator], int]


def network_player(network: Any, deterministic: bool = False) -> FrozenPolicy:
    """A frozen :class:`~policies.ppo.PolicyNetwork` as ``f(obs, rng) -> action``."""

    def act(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        logits = network.logits(obs["observation"], mask)
        if deterministic:
            return int(legal[np.argmax(logits[legal])])
        weights = np.exp(logits[legal] - logits[legal].max())
        return int(rng.choice(legal, p=weights / weights.sum()))

    return act


class SelfPlayEnv(gym.Env[dict[str, np.ndarray], np.int64]):
    """The learner (``player_0``) against a frozen policy (``player_1``) in the two-player env.

    Args:
        battle_format: Showdown format id.
        opponent: the frozen policy, ``f(obs, rng) -> action`` over ``player_1``'s
            observation dict; replace it between battles with :meth:`set_opponent`.
            If it has a ``new_battle(rng)`` method, that is called at every reset
            (e.g. to draw which snapshot plays the next battle).
        battle_info: put the live battle object in ``info["battle"]``; turn it off
            under stable-baselines3's ``DummyVecEnv``, which deep-copies every info.
        **setup: keyword arguments of :class:`~pokegym.parallel_env.ShowdownParallelEnv`.

    Observation, action space, rewards and episode end are those of
    :class:`~pokegym.env.ShowdownEnv` (the wait action 14 is never legal here).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        battle_format: str = "gen9randombattle",
        *,
        opponent: FrozenPolicy,
        battle_info: bool = True,
        **setup: Any,
    ):
        self.battle_info = battle_info
        self.env = ShowdownParallelEnv(battle_format, **setup)
        self.opponent = opponent
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._obs: dict[str, Any] | None = None
        self._rng = np.random.default_rng()

    def set_opponent(self, opponent: FrozenPolicy) -> None:
        """Play the next battles against ``opponent``."""
        self.opponent = opponent

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self._rng = np.random.default_rng(int(self.np_random.integers(2**63 - 1)))
        new_battle = getattr(self.opponent, "new_battle", None)
        if callable(new_battle):
            new_battle(self._rng)
        self._obs, infos = self.env.reset(seed=int(self.np_random.integers(2**63 - 1)))
        _, _, done, infos = self._skip_waits(infos)
        if done:
            raise PokegymError("The battle ended before the first decision; call reset().")
        return self._obs["player_0"], self._info(infos)

    def step(
        self, action: Any
    ) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        if self._obs is None or not self.env.agents:
            raise PokegymError("The battle is over (or not started); call reset().")
        reward, terminated, truncated, infos = self._play(int(action))
        if not (terminated or truncated):
            extra, terminated, truncated, infos = self._skip_waits(infos)
            reward += extra
        return self._obs["player_0"], reward, terminated, truncated, self._info(infos)

    def _info(self, infos: dict[str, Any]) -> dict[str, Any]:
        info = dict(infos["player_0"])
        if info.get("won") is not None:
            info["is_success"] = bool(info["won"])
        if not self.battle_info:
            info.pop("battle", None)
        return info

    def action_masks(self) -> np.ndarray:
        assert self._obs is not None
        return self._obs["player_0"]["action_mask"].astype(bool)

    def close(self) -> None:
        self.env.close()

    def _play(self, action: int) -> tuple[float, bool, bool, dict[str, Any]]:
        assert self._obs is not None
        actions = {"player_0": action, "player_1": self.opponent(self._obs["player_1"], self._rng)}
        self._obs, rewards, terminations, truncations, infos = self.env.step(actions)
        return (
            float(rewards["player_0"]),
            bool(terminations["player_0"]),
            bool(truncations["player_0"]),
            infos,
        )

    def _skip_waits(self, infos: dict[str, Any]) -> tuple[float, bool, bool, dict[str, Any]]:
        """Play the steps where the learner can only wait; returns their rewards."""
        total, terminated, truncated = 0.0, False, False
        for _ in range(1000):
            assert self._obs is not None
            mask = self._obs["player_0"]["action_mask"]
            if not (mask[WAIT] and mask.sum() == 1) or not self.env.agents:
                return total, terminated, truncated, infos
            reward, terminated, truncated, infos = self._play(WAIT)
            total += reward
            if terminated or truncated:
                return total, terminated, truncated, infos
        raise PokegymError("The opponent kept playing without end; call reset().")


def concat_vec_envs(envs: list[Any]) -> Any:
    """stable-baselines3 vector envs side by side, as one ``VecEnv`` (masks included)."""
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    class ConcatVecEnv(VecEnv):  # type: ignore[misc]
        def __init__(self, parts: list[Any]):
            self.parts = parts
            self.sizes = [part.num_envs for part in parts]
            first = parts[0]
            super().__init__(sum(self.sizes), first.observation_space, first.action_space)

        def _split(self, values: Any) -> list[Any]:
            out, start = [], 0
            for size in self.sizes:
                out.append(values[start : start + size])
                start += size
            return out

        def reset(self) -> Any:
            seeds = list(self._seeds)
            start = 0
            for part, size in zip(self.parts, self.sizes, strict=True):
                chunk = seeds[start : start + size]
                if any(s is not None for s in chunk):
                    part.seed(chunk[0])
                start += size
            self._reset_seeds()
            return self._merge([part.reset() for part in self.parts])

        def _merge(self, observations: list[Any]) -> Any:
            keys = observations[0].keys()
            return {key: np.concatenate([obs[key] for obs in observations]) for key in keys}

        def step_async(self, actions: np.ndarray) -> None:
            for part, chunk in zip(self.parts, self._split(np.asarray(actions)), strict=True):
                part.step_async(chunk)

        def step_wait(self) -> Any:
            results = [part.step_wait() for part in self.parts]
            obs = self._merge([r[0] for r in results])
            rewards = np.concatenate([r[1] for r in results]).astype(np.float32)
            dones = np.concatenate([r[2] for r in results])
            infos = [info for r in results for info in r[3]]
            return obs, rewards, dones, infos

        def close(self) -> None:
            for part in self.parts:
                part.close()

        def _route(self, indices: Any) -> list[tuple[Any, list[int]]]:
            chosen = range(self.num_envs) if indices is None else (
                [indices] if isinstance(indices, int) else list(indices)
            )  # fmt: skip
            routes: list[tuple[Any, list[int]]] = []
            for index in chosen:
                start = 0
                for part, size in zip(self.parts, self.sizes, strict=True):
                    if index < start + size:
                        if routes and routes[-1][0] is part:
                            routes[-1][1].append(index - start)
                        else:
                            routes.append((part, [index - start]))
                        break
                    start += size
            return routes

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [v for p, i in self._route(indices) for v in p.get_attr(attr_name, i)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            for part, local in self._route(indices):
                part.set_attr(attr_name, value, local)

        def env_method(
            self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any
        ) -> list[Any]:
            return [
                value
                for part, local in self._route(indices)
                for value in part.env_method(method_name, *args, indices=local, **kwargs)
            ]

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [v for p, i in self._route(indices) for v in p.env_is_wrapped(wrapper_class, i)]

        def action_masks(self) -> np.ndarray:
            return np.stack(self.env_method("action_masks"))

    return ConcatVecEnv(envs)
