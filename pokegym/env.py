"""``ShowdownEnv``: a single-agent Gymnasium environment over real Showdown battles."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from poke_env.battle import AbstractBattle

from pokegym.actions import MOVE, N_ACTIONS, N_MOVES, SWITCH, ActionCodec
from pokegym.agents import Agent, make_agent
from pokegym.backends import Backend, BattleSession, make_backend
from pokegym.errors import IllegalActionError, InvalidTeamError, PokegymError
from pokegym.formats import BattleFormat, resolve_format
from pokegym.observation import ObservationEncoder, observation_space
from pokegym.render import render_battle
from pokegym.rewards import RewardFunction, make_reward
from pokegym.showdown.simulator import Simulator
from pokegym.teams import Team, TeamPool, builtin_pool, validate_team

TeamSpec = str | Path | Team | TeamPool | Sequence[str | Path | Team] | None
AGENT, OPPONENT = 0, 1


class MaskedDiscrete(spaces.Discrete):
    """``Discrete`` whose ``sample()`` without a mask returns a legal action.

    ``sample(mask=...)`` behaves exactly like Gymnasium's. Without a mask it asks
    the environment for the current legal actions and returns a random legal move
    slot (actions 0-3) when one is legal, otherwise a random legal action, so that
    generic code that calls ``env.action_space.sample()`` keeps a battle going. The
    link to the environment is dropped when the space is pickled (e.g. sent to a
    subprocess vector env); there it is a plain ``Discrete``.
    """

    def __init__(self, n: int, mask_fn: Any = None, seed: int | None = None):
        super().__init__(n, seed=seed)
        self._mask_fn = mask_fn

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None and self._mask_fn is not None:
            legal = self._mask_fn()
            if legal is not None and legal.any():
                moves = legal.copy()
                moves[N_MOVES:] = 0
                pick = moves if moves[MOVE : MOVE + N_MOVES].any() else legal
                return super().sample(mask=pick.astype(np.int8))
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_mask_fn"] = None
        return state

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, spaces.Discrete) and self.n == other.n and self.start == other.start
        )

    __hash__ = spaces.Discrete.__hash__


def _team_pool(spec: TeamSpec, fmt: BattleFormat) -> TeamPool | None:
    if fmt.random_teams:
        if spec is not None:
            raise InvalidTeamError(
                f"{fmt.name} generates its own teams; do not pass a team for it "
                "(use a format with user teams such as gen9ou)."
            )
        return None
    if spec is None:
        return builtin_pool(fmt.id)
    if isinstance(spec, TeamPool):
        return spec
    if isinstance(spec, str | Path | Team):
        return TeamPool.from_sources([spec], fmt.id)
    return TeamPool.from_sources(list(spec), fmt.id)


class BattleSetup:
    """What every pokegym environment shares: format, teams, backend, encoding.

    Args:
        battle_format: a Showdown format id, e.g. ``gen9ou`` or ``gen9randombattle``.
        team: the agent's team(s) for formats without random teams: a file path,
            export text, a :class:`~pokegym.teams.Team`, a list of those, a folder of
            ``.txt`` files or a :class:`~pokegym.teams.TeamPool`. Default: the
            built-in pool of the format (15 Gen 9 OU teams).
        opponent_team: the same for the opponent (default: the built-in pool).
        mirror: both sides play the same team (drawn from ``team``).
        dynamax: allow Dynamax in gen 8 (False adds Showdown's Dynamax Clause).
        team_preview: make the Team Preview lead choice a decision of the agent
            (actions 8-13). When False the agent leads with the first Pokémon of
            its team sheet.
        reward: ``"win_loss"``, ``"shaped"`` or a :class:`~pokegym.rewards.RewardFunction`.
        max_turns: truncate the episode when the battle reaches this turn.
        backend: ``"sim"`` (embedded simulator, default) or ``"server"``.
        server_url: for ``backend="server"``: a websocket URL such as
            ``ws://localhost:8000/showdown/websocket``; None starts a local server.
        validate_teams: check every team with Showdown's validator first.
        simulator: share a :class:`~pokegym.showdown.simulator.Simulator` process.
        timeout: seconds a battle may go without an answer before it is declared stalled
            (:class:`~pokegym.errors.BattleTimeoutError`). None: 60 s, or the limit of the
            ``simulator`` passed in.
        log_battles: keep Showdown's spectator log of each battle ("spectator")
            or the omniscient one ("omniscient"); see ``info["log"]`` at the end.
    """

    def __init__(
        self,
        battle_format: str = "gen9randombattle",
        *,
        team: TeamSpec = None,
        opponent_team: TeamSpec = None,
        mirror: bool = False,
        dynamax: bool = True,
        team_preview: bool = False,
        reward: str | RewardFunction = "win_loss",
        max_turns: int = 500,
        backend: str | Backend = "sim",
        server_url: str | None = None,
        validate_teams: bool = True,
        simulator: Simulator | None = None,
        timeout: float | None = None,
        log_battles: str | None = None,
    ):
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if log_battles not in (None, "spectator", "omniscient"):
            raise ValueError("log_battles is None, 'spectator' or 'omniscient'")
        self.backend = make_backend(
            backend, server_url=server_url, simulator=simulator, timeout=timeout
        )
        sim = getattr(self.backend, "simulator", None) or simulator
        self.fmt = resolve_format(battle_format, dynamax=dynamax, simulator=sim)
        self.codec = ActionCodec(self.fmt.gimmick)
        team_size = self.fmt.picked_team_size or 6
        self.encoder = ObservationEncoder(self.fmt.gen, team_size=team_size)
        self.team_pool = _team_pool(team, self.fmt)
        self.opponent_pool = None if mirror else _team_pool(opponent_team, self.fmt)
        if mirror and opponent_team is not None:
            raise ValueError(
                "mirror=True plays the agent's team on both sides; drop opponent_team."
            )
        self.mirror = mirror
        if validate_teams:
            for pool in (self.team_pool, self.opponent_pool):
                if pool is not None:
                    pool.validate(sim)
        self.team_preview = team_preview
        self._reward_spec = reward
        self.team_size = team_size
        self.max_turns = max_turns
        self.log_battles = log_battles
        self.session: BattleSession | None = None
        # A backend built here from a name is ours to close; one passed in is not.
        self._owns_backend = not isinstance(backend, Backend)

    def _close_battle(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        if self._owns_backend:
            self.backend.close()

    def _make_reward(self) -> RewardFunction:
        return make_reward(self._reward_spec, team_size=self.team_size)

    def _start_session(self, rng: np.random.Generator) -> BattleSession:
        if self.session is not None:
            self.session.close()
            self.session = None
        self.backend.ensure_running()
        seeds = tuple(int(x) for x in rng.integers(0, 2**63 - 1, size=3))
        teams: list[str | None] = [None, None]
        if self.team_pool is not None:
            own = self.team_pool.sample(rng)
            teams[0] = own.text
            if self.mirror:
                teams[1] = own.text
            else:
                assert self.opponent_pool is not None
                teams[1] = self.opponent_pool.sample(rng).text
        self.session = self.backend.start(
            self.fmt,
            teams=teams,
            seeds=seeds,
            log=self.log_battles,  # type: ignore[arg-type]
        )
        return self.session

    def _observe(self, side: int, *, waiting: bool = False) -> dict[str, np.ndarray]:
        assert self.session is not None
        battle = self.session.battles[side]
        return {
            "observation": self.encoder.encode(battle),
            "action_mask": self.codec.mask(battle, waiting=waiting),
        }

    def validate(self, team: str | Path | Team) -> str:
        """Validate one team for this env's format (returns it packed)."""
        return validate_team(team, self.fmt.id, getattr(self.backend, "simulator", None))


class ShowdownEnv(BattleSetup, gym.Env[dict[str, np.ndarray], np.int64]):
    """A Pokémon Showdown battle against a fixed opponent, as a Gymnasium env.

    The game is a partially observable Markov game: both players choose at once
    each turn; the agent sees its own team in full and the opponent only as
    revealed. This env plays one side; ``opponent`` plays the other.

    ## Observation space
    ``Dict{"observation": Box(-1, 10, (2148,), float32), "action_mask": Box(0, 1, (15,), int8)}``.
    ``observation`` = own team (6 blocks of 176: presence, active, fainted, HP
    fraction, status, current types, Tera Type, base stats, boosts, level,
    item/ability known, 4 moves with power, accuracy, priority, PP, type,
    category, effectiveness against the opposing active and STAB), the opponent's
    team as revealed so far (same blocks; unknown values are 0 with "known"
    flags), then 36 field values (weather, terrain, Trick Room, Gravity, hazards
    and screens on both sides, gimmick used, turn, Team Preview / forced-switch
    flags, Pokémon remaining). ``pokegym.observation.layout_table()`` lists every
    slot. ``action_mask`` marks the legal actions.

    ## Action space
    ``Discrete(15)``: 0-3 move slots, 4-7 the same moves with Terastallization
    (gen 9) or Dynamax (gen 8), 8-13 switch to team slot 1-6 (at Team Preview:
    lead with it), 14 wait (never legal here). An action is an integer of any integer
    type, or a whole-number float such as ``3.0``; bools, other floats (``inf``, ``nan``,
    ``1.5``) and non-numbers are refused like illegal actions. Illegal actions raise
    :class:`~pokegym.errors.IllegalActionError` (a ``ValueError``) naming the
    legal ones; nothing is sent and the battle is unchanged. ``action_masks()``
    serves sb3-contrib's MaskablePPO.

    ## Rewards
    ``"win_loss"``: +1 win, -1 loss, 0 tie and otherwise. ``"shaped"`` adds the
    potential-based HP and faint terms of :mod:`pokegym.rewards`.

    ## Episode end
    Terminated when the battle ends (win, loss or tie). Truncated when the battle
    reaches ``max_turns`` (default 500); the battle is then abandoned.

    ## Info
    ``info["battle"]``: the live poke-env battle object of the agent;
    ``info["turn"]``; at the end ``info["won"]`` and, when ``log_battles`` is
    set, ``info["log"]`` with Showdown's protocol log.

    ## Arguments
    ``opponent``: a registered agent name (``"random"`` default, ``"max_power"``,
    options as ``"name:key=value"``), an object with ``choose(battle)``, a poke-env
    ``Player``, or a callable ``f(battle) -> BattleOrder``. See
    :class:`BattleSetup` for the rest (format, teams, backend, reward, ...).

    ## Version History
    * v0 (unversioned ids): initial release; observation layout v0.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 2}

    def __init__(
        self,
        battle_format: str = "gen9randombattle",
        *,
        opponent: Any = "random",
        render_mode: str | None = None,
        **setup: Any,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        super().__init__(battle_format, **setup)
        self.render_mode = render_mode
        self.opponent: Agent = make_agent(opponent)
        self.observation_space = observation_space()
        self.action_space = MaskedDiscrete(N_ACTIONS, mask_fn=self._current_mask)
        self._reward = self._make_reward()
        self._last_obs: dict[str, np.ndarray] | None = None

    # ---------------------------------------------------------------- gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self._seed_opponent()
        self._start_session(self.np_random)
        battle = self.battle
        self._advance()
        self._reward.reset(battle)
        obs = self._observe(AGENT)
        self._last_obs = obs
        return obs, self._info()

    def step(
        self, action: Any
    ) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        session = self.session
        if session is None:
            raise PokegymError("Call reset() before step().")
        session.raise_if_failed()
        if session.finished or self._truncated():
            raise PokegymError("The battle is over; call reset() to start a new one.")
        battle = session.battles[AGENT]
        index = self.codec.check(action, battle)
        self._advance(self.codec.to_choice(index, battle))
        terminated = session.finished
        truncated = not terminated and self._truncated()
        reward = float(self._reward(battle))
        obs = self._observe(AGENT)
        self._last_obs = obs
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, self._info()

    def render(self) -> str | None:  # type: ignore[override]
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi'.")
            return None
        text = (
            "No battle yet; call reset()."
            if self.session is None
            else render_battle(self.battle, self.codec)
        )
        if self.render_mode == "human":
            print(text, flush=True)
            return None
        return text

    def close(self) -> None:
        self._close_battle()

    # ---------------------------------------------------------------- helpers
    @property
    def battle(self) -> AbstractBattle:
        """The agent's live poke-env battle object."""
        if self.session is None:
            raise PokegymError("No battle yet; call reset().")
        return self.session.battles[AGENT]

    def action_masks(self) -> np.ndarray:
        """Legal actions as booleans (for sb3-contrib's MaskablePPO)."""
        return self.codec.mask(self.battle).astype(bool)

    def _current_mask(self) -> np.ndarray | None:
        if self.session is None or self.session.finished:
            return None
        return self.codec.mask(self.battle)

    def _seed_opponent(self) -> None:
        seed_fn = getattr(self.opponent, "seed", None)
        if callable(seed_fn):
            seed_fn(int(self.np_random.integers(2**63 - 1)))

    def _truncated(self) -> bool:
        return self.battle.turn >= self.max_turns

    def _info(self) -> dict[str, Any]:
        assert self.session is not None
        return battle_info(self.session, AGENT)

    def _advance(self, agent_choice: str | None = None) -> None:
        """Send the agent's choice, then let the opponent play until the agent must decide."""
        session = self.session
        assert session is not None
        for _ in range(10_000):
            if self._truncated():
                return
            choices = next_choices(
                session,
                agent_choice=agent_choice,
                team_preview=self.team_preview,
                opponent=self.opponent,
                codec=self.codec,
                rng=self.np_random,
            )
            if choices is None:
                return
            agent_choice = None
            session.choose(choices)
        raise PokegymError("The opponent kept playing without end; call reset().")


def battle_info(session: BattleSession, side: int) -> dict[str, Any]:
    """The info dict of one player: its live battle, the turn, and at the end the
    result and (when kept) Showdown's protocol log."""
    battle = session.battles[side]
    info: dict[str, Any] = {"battle": battle, "turn": battle.turn}
    if battle.finished:
        info["won"] = battle.won
        log = session.replay_log()
        if log is not None:
            info["log"] = log
    return info


def default_lead(battle: AbstractBattle) -> str:
    """Team Preview choice that keeps the team-sheet order (slot 1 leads)."""
    return "team " + "".join(str(i + 1) for i in range(len(battle.team)))


def opponent_choice(
    opponent: Agent, battle: AbstractBattle, codec: ActionCodec, rng: np.random.Generator
) -> str:
    """Ask a scripted opponent for its choice and check it against the rules."""
    if battle.teampreview:
        preview = getattr(opponent, "team_preview", None) or getattr(opponent, "teampreview", None)
        if callable(preview):
            return codec.order_to_choice(str(preview(battle)), battle)
        lead = int(rng.integers(len(battle.team)))
        return codec.to_choice(SWITCH + lead, battle) or "default"
    order = opponent.choose(battle)
    try:
        return codec.order_to_choice(order, battle)
    except IllegalActionError as exc:
        raise IllegalActionError(f"The opponent agent chose an illegal order: {exc}") from exc


def next_choices(
    session: BattleSession,
    *,
    agent_choice: str | None,
    team_preview: bool,
    opponent: Agent,
    codec: ActionCodec,
    rng: np.random.Generator,
) -> dict[int, str] | None:
    """The choices to send next in a battle against a scripted opponent.

    Returns None when nothing can be sent: the battle is over, or the agent must
    decide and ``agent_choice`` is None. The agent's Team Preview is answered with
    :func:`default_lead` unless ``team_preview`` makes it the agent's decision.
    """
    session.raise_if_failed()
    if session.finished:
        return None
    choices: dict[int, str] = {}
    if session.needs_choice(AGENT):
        battle = session.battles[AGENT]
        if battle.teampreview and not team_preview:
            choices[AGENT] = default_lead(battle)
        elif agent_choice is not None:
            choices[AGENT] = agent_choice
        else:
            return None
    if session.needs_choice(OPPONENT):
        choices[OPPONENT] = opponent_choice(opponent, session.battles[OPPONENT], codec, rng)
    if not choices:
        raise PokegymError(
            "Neither player has a decision to make but the battle is not over; "
            "the battle is out of sync. Call reset()."
        )
    return choices
