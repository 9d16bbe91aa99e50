"""``ShowdownVectorEnv``: many battles per simulator process, one process per core.

A simulated turn costs Showdown ~1-2 ms of Node time and the battle objects cost
about as much Python time, so a single environment leaves one of the two sides
idle while the other works. This vector env runs ``num_envs`` battles on
``num_simulators`` Node processes and pipelines them: it sends one simulator's
batch of choices, then prepares the next batch (opponent decisions) while that one
simulates, and parses each batch's answers while the next simulates. One pipe
round trip serves a whole batch.

It follows Gymnasium's vector API (batched ``Dict`` observations, ``MultiDiscrete``
actions, ``infos`` with ``_key`` masks) with either autoreset mode:
``"next_step"`` (Gymnasium's default: the step after an episode ends resets that
battle and ignores its action) or ``"same_step"`` (the battle is reset at once; the
final observation is in ``infos["final_obs"]``, the convention stable-baselines3
expects).
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from pokegym.actions import N_ACTIONS
from pokegym.agents import Agent, make_agent
from pokegym.backends import SimBackend
from pokegym.backends.sim import SimBattleSession
from pokegym.env import AGENT, BattleSetup, battle_info, next_choices
from pokegym.errors import IllegalActionError, PokegymError, UnknownBackendError
from pokegym.observation import observation_space
from pokegym.rewards import RewardFunction
from pokegym.showdown.simulator import DEFAULT_TIMEOUT, Simulator, wait_for_answers


def _autoreset_mode(value: str | AutoresetMode) -> AutoresetMode:
    if isinstance(value, AutoresetMode):
        return value
    names = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}
    key = value.strip().lower().replace("-", "_")
    if key in names:
        return names[key]
    return AutoresetMode(value)


class _Slot:
    """One battle of the vector env: its session, opponent, reward and RNG."""

    def __init__(self, index: int, simulator: Simulator, opponent: Agent, reward: RewardFunction):
        self.index = index
        self.simulator = simulator
        self.opponent = opponent
        self.reward = reward
        self.rng = np.random.default_rng()
        self.session: SimBattleSession | None = None
        self.agent_choice: str | None = None
        self.needs_reset = True
        self.obs: np.ndarray | None = None
        self.mask: np.ndarray | None = None


class ShowdownVectorEnv(VectorEnv):  # type: ignore[misc]
    """``num_envs`` battles against scripted opponents on the embedded simulator.

    Args:
        num_envs: battles run side by side.
        battle_format: Showdown format id.
        opponent: an agent name/spec (a fresh agent per battle) or an agent object
            (shared by all battles; it must not keep per-battle state).
        num_simulators: Node processes (default: one per CPU core, at most num_envs).
        chunk_size: battles per message to a simulator; small chunks let Python
            parse one chunk while Node simulates the next.
        autoreset_mode: ``"next_step"`` or ``"same_step"`` (see the module doc).
        **setup: the keyword arguments of :class:`~pokegym.env.BattleSetup`
            (teams, reward, max_turns, team_preview, ...; the backend is always ``sim``).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 8,
        battle_format: str = "gen9randombattle",
        *,
        opponent: Any = "random",
        num_simulators: int | None = None,
        chunk_size: int = 2,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        **setup: Any,
    ):
        if num_envs < 1:
            raise ValueError("num_envs must be at least 1")
        if "backend" in setup and setup["backend"] != "sim":
            raise UnknownBackendError(
                f"ShowdownVectorEnv runs on the embedded simulator only (backend='sim'), not "
                f"backend={setup['backend']!r}; use ShowdownEnv for a Showdown server."
            )
        setup.pop("backend", None)
        mode = _autoreset_mode(autoreset_mode)
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError("autoreset_mode must be 'next_step' or 'same_step'")
        n_sims = num_simulators or max(1, min(os.cpu_count() or 1, num_envs))
        self.simulators = [
            Simulator(timeout=setup.get("timeout") or DEFAULT_TIMEOUT) for _ in range(n_sims)
        ]
        for sim in self.simulators:
            sim.ensure_running()
        self.setup = BattleSetup(battle_format, backend=SimBackend(self.simulators[0]), **setup)
        self.num_envs = num_envs
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.chunk_size = chunk_size
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        shared = None if isinstance(opponent, str) else make_agent(opponent)
        self.slots = [
            _Slot(
                i,
                self.simulators[i % n_sims],
                shared or make_agent(opponent),
                self.setup._make_reward(),
            )
            for i in range(num_envs)
        ]
        self.render_mode = None
        self.closed = False

    # ------------------------------------------------------------------- API
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"expected {self.num_envs} seeds, got {len(seeds)}")
        for slot, slot_seed in zip(self.slots, seeds, strict=True):
            if slot_seed is not None:
                slot.rng = np.random.default_rng(slot_seed)
            slot.needs_reset = True
        self._run(set(range(self.num_envs)))
        return self._observations(), self._infos()

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        actions = np.asarray(actions).reshape(-1)
        if actions.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {actions.shape[0]}")
        setup = self.setup
        resetting: set[int] = set()
        for slot, action in zip(self.slots, actions, strict=True):
            if slot.needs_reset:
                resetting.add(slot.index)
                continue
            assert slot.session is not None
            battle = slot.session.battles[AGENT]
            try:
                # slot.mask was computed with the observation the action answers;
                # nothing has been parsed into the battle since.
                index = setup.codec.check(action, battle, mask=self._mask(slot))
            except IllegalActionError as exc:
                raise IllegalActionError(f"Battle {slot.index}: {exc}") from None
            slot.agent_choice = setup.codec.to_choice(index, battle)
        self._run(set(range(self.num_envs)))
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        for slot in self.slots:
            if slot.index in resetting:
                continue
            assert slot.session is not None
            battle = slot.session.battles[AGENT]
            rewards[slot.index] = slot.reward(battle)
            terminated[slot.index] = slot.session.finished
            truncated[slot.index] = not slot.session.finished and battle.turn >= setup.max_turns
            if terminated[slot.index] or truncated[slot.index]:
                slot.needs_reset = True
        observations = self._observations()
        done = np.flatnonzero(terminated | truncated)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and done.size:
            # The finished battles' last observation and info go to final_obs and
            # final_info; the returned ones describe the battles that replace them.
            final_obs = np.empty(self.num_envs, dtype=object)
            final_info = np.empty(self.num_envs, dtype=object)
            has_final = np.zeros(self.num_envs, dtype=bool)
            for i in done:
                final_obs[i] = {key: value[i].copy() for key, value in observations.items()}
                final_info[i] = self._info_of(self.slots[i])
                has_final[i] = True
            self._run({int(i) for i in done})
            observations = self._observations()
            infos = self._infos()
            infos.update(
                final_obs=final_obs, _final_obs=has_final,
                final_info=final_info, _final_info=has_final.copy(),
            )  # fmt: skip
        else:
            infos = self._infos()
        return observations, rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, 15)`` booleans of legal actions (sb3-contrib's MaskablePPO)."""
        return np.stack([self._mask(slot) for slot in self.slots]).astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        for slot in self.slots:
            if slot.session is not None:
                slot.session.close()
                slot.session = None
        for sim in self.simulators:
            sim.close()

    # --------------------------------------------------------------- engine
    def _run(self, active: set[int]) -> None:
        """Drive the given battles until each waits for its agent (or has ended).

        Battles flagged ``needs_reset`` are started first. Work goes out in small
        chunks, each sent as soon as it is built and spread over the simulator
        processes; answers are parsed (and observations encoded) in the order the
        chunks were sent, so Python works on one chunk while Node simulates the
        next. A battle that still has something to send after its answer (the
        opponent replacing a fainted Pokémon, Team Preview) goes out again at once.
        """
        setup = self.setup
        for i in sorted(active):
            slot = self.slots[i]
            slot.obs = None
            if slot.needs_reset:
                if slot.session is not None:
                    slot.session.close()
                slot.simulator.ensure_running()
                seeds = tuple(int(x) for x in slot.rng.integers(0, 2**63 - 1, size=3))
                teams = self._teams(slot)
                seed_fn = getattr(slot.opponent, "seed", None)
                if callable(seed_fn):
                    seed_fn(int(slot.rng.integers(2**63 - 1)))
                slot.session = SimBattleSession(
                    slot.simulator,
                    setup.fmt,
                    teams=teams,
                    seeds=seeds,  # type: ignore[arg-type]
                    log=setup.log_battles,
                    start=False,
                )
                slot.agent_choice = None
        in_flight: dict[int, deque[list[tuple[_Slot, bool]]]] = {
            id(sim): deque() for sim in self.simulators
        }
        building: dict[int, list[tuple[_Slot, list[Any], bool]]] = {}

        def flush(sim: Simulator) -> None:
            chunk = building.pop(id(sim), None)
            if chunk:
                sim.submit([command for _, command, _ in chunk])
                in_flight[id(sim)].append([(slot, starting) for slot, _, starting in chunk])

        def schedule(slot: _Slot) -> None:
            command, starting = self._next_command(slot)
            if command is None:
                self._encode(slot)
                return
            chunk = building.setdefault(id(slot.simulator), [])
            chunk.append((slot, command, starting))
            if len(chunk) >= self.chunk_size:
                flush(slot.simulator)

        for i in sorted(active):
            schedule(self.slots[i])
        for sim in self.simulators:
            flush(sim)
        for _ in range(1_000_000):
            busy = [sim for sim in self.simulators if in_flight[id(sim)]]
            if not busy:
                return
            # Parse whichever simulator has answered first; the others keep working.
            sim = wait_for_answers(busy, max(s.timeout for s in busy))[0]
            chunk = in_flight[id(sim)].popleft()
            results = sim.collect()
            for (slot, starting), result in zip(chunk, results, strict=True):
                assert slot.session is not None
                slot.session.absorb(result, starting=starting)
                self._check_errors(slot)
                if starting:
                    slot.needs_reset = False
                    slot.reward.reset(slot.session.battles[AGENT])
                schedule(slot)
            for other in self.simulators:
                if not in_flight[id(other)]:
                    flush(other)
            if not in_flight[id(sim)]:
                flush(sim)
        raise PokegymError("The battles kept playing without end.")

    def _next_command(self, slot: _Slot) -> tuple[list[Any] | None, bool]:
        """The next simulator command of a battle, or None if it waits for its agent."""
        session = slot.session
        assert session is not None
        if slot.needs_reset:
            return session.start_command, True
        if session.battles[AGENT].turn >= self.setup.max_turns:
            return None, False
        choices = next_choices(
            session,
            agent_choice=slot.agent_choice,
            team_preview=self.setup.team_preview,
            opponent=slot.opponent,
            codec=self.setup.codec,
            rng=slot.rng,
        )
        if choices is None:
            return None, False
        slot.agent_choice = None
        return session.command(choices), False

    def _encode(self, slot: _Slot) -> None:
        assert slot.session is not None
        battle = slot.session.battles[AGENT]
        slot.obs = self.setup.encoder.encode(battle)
        slot.mask = self.setup.codec.mask(battle)

    def _check_errors(self, slot: _Slot) -> None:
        assert slot.session is not None
        for side, view in enumerate(slot.session.views):
            if view.error is not None and not view.unavailable:
                message, view.error = view.error, None
                who = "the agent" if side == AGENT else "the opponent"
                raise IllegalActionError(
                    f"Battle {slot.index}: Showdown rejected {who}'s choice: {message}"
                )

    def _teams(self, slot: _Slot) -> list[str | None]:
        setup = self.setup
        if setup.team_pool is None:
            return [None, None]
        own = setup.team_pool.sample(slot.rng).text
        if setup.mirror:
            return [own, own]
        assert setup.opponent_pool is not None
        return [own, setup.opponent_pool.sample(slot.rng).text]

    def _mask(self, slot: _Slot) -> np.ndarray:
        if slot.mask is None:
            self._encode(slot)
        return slot.mask  # type: ignore[return-value]

    def _observations(self) -> dict[str, np.ndarray]:
        obs = np.empty((self.num_envs, self.setup.encoder.size), dtype=np.float32)
        masks = np.empty((self.num_envs, N_ACTIONS), dtype=np.int8)
        for slot in self.slots:
            if slot.obs is None:
                self._encode(slot)
            obs[slot.index] = slot.obs
            masks[slot.index] = slot.mask
        return {"observation": obs, "action_mask": masks}

    def _info_of(self, slot: _Slot) -> dict[str, Any]:
        assert slot.session is not None
        return battle_info(slot.session, AGENT)

    def _infos(self) -> dict[str, Any]:
        turns = np.zeros(self.num_envs, dtype=np.int64)
        battles = np.empty(self.num_envs, dtype=object)
        won = np.zeros(self.num_envs, dtype=bool)
        finished = np.zeros(self.num_envs, dtype=bool)
        for slot in self.slots:
            assert slot.session is not None
            battle = slot.session.battles[AGENT]
            turns[slot.index] = battle.turn
            battles[slot.index] = battle
            if battle.finished:
                finished[slot.index] = True
                won[slot.index] = bool(battle.won)
        ones = np.ones(self.num_envs, dtype=bool)
        return {
            "turn": turns, "_turn": ones,
            "battle": battles, "_battle": ones,
            "won": won, "_won": finished,
        }  # fmt: skip
