"""Use :class:`~pokegym.vector.ShowdownVectorEnv` as a stable-baselines3 ``VecEnv``.

stable-baselines3 has its own vector-env interface. :func:`to_sb3` wraps a
``ShowdownVectorEnv`` (forced into ``same_step`` autoreset, SB3's convention) so that
``PPO`` or sb3-contrib's ``MaskablePPO`` train on many pipelined battles::

    from sb3_contrib import MaskablePPO
    from pokegym.sb3 import to_sb3
    from pokegym.vector import ShowdownVectorEnv

    venv = to_sb3(ShowdownVectorEnv(8, "gen9randombattle", autoreset_mode="same_step"))
    model = MaskablePPO("MultiInputPolicy", venv).learn(10_000)

stable-baselines3 is imported only when :func:`to_sb3` is called.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from pokegym.vector import ShowdownVectorEnv


def to_sb3(vec_env: ShowdownVectorEnv) -> Any:
    """An SB3 ``VecEnv`` over ``vec_env`` (which must use ``same_step`` autoreset)."""
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    if vec_env.autoreset_mode != AutoresetMode.SAME_STEP:
        raise ValueError(
            "stable-baselines3 expects the reset observation in the same step: create the "
            "ShowdownVectorEnv with autoreset_mode='same_step'."
        )

    class ShowdownSB3VecEnv(VecEnv):  # type: ignore[misc]
        """SB3 view of a :class:`ShowdownVectorEnv` (infos carry ``terminal_observation``)."""

        def __init__(self, env: ShowdownVectorEnv):
            self.venv = env
            super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
            self._actions: np.ndarray | None = None

        def reset(self) -> Any:
            seeds = [s for s in self._seeds] if any(s is not None for s in self._seeds) else None
            obs, _ = self.venv.reset(seed=seeds)
            self._reset_seeds()
            self._reset_options()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions)

        def step_wait(self) -> Any:
            assert self._actions is not None
            obs, rewards, terminated, truncated, infos = self.venv.step(self._actions)
            dones = terminated | truncated
            out: list[dict[str, Any]] = []
            for i in range(self.num_envs):
                info: dict[str, Any] = {"turn": int(infos["turn"][i])}
                if dones[i]:
                    final = infos["final_obs"][i]
                    info["terminal_observation"] = final
                    info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                    won = infos["final_info"][i].get("won")
                    if won is not None:
                        info["is_success"] = bool(won)
                out.append(info)
            return obs, rewards.astype(np.float32), dones, out

        def close(self) -> None:
            self.venv.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(self.venv, attr_name)] * len(self._indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(
            self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any
        ) -> list[Any]:
            chosen = self._indices(indices)
            if method_name == "action_masks":
                masks = self.venv.action_masks()
                return [masks[i] for i in chosen]
            result = getattr(self.venv, method_name)(*args, **kwargs)
            return [result] * len(chosen)

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False] * len(self._indices(indices))

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def _indices(self, indices: Any) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            if isinstance(indices, int):
                return [indices]
            return list(indices)

    return ShowdownSB3VecEnv(vec_env)
