"""The arena: tournaments between agents with honest statistics.

Every pair of agents plays ``battles_per_pair`` battles with sides swapped every
other battle (and, with ``mirror=True``, both sides playing the same team). Many
battles run at once on the embedded simulator (``concurrency``), each with its own
agent instances, so results do not depend on concurrency or on the order battles
finish in: battle ``k`` of a pair always gets the same seed.

**Clock.** Showdown's battle timer is reproduced per player: a bank of
``clock_bank`` seconds, ``clock_increment`` seconds added at every decision, and a
decision that takes longer than the bank loses the battle on time. Timeouts count
as losses and are also reported separately (as the PokéChamp paper did).
``clock_bank=None`` turns the clock off.

**What is measured**, per agent and per pair: wins, losses, ties (truncations count
as ties), average turns, timeouts, decision latency (median and 95th percentile),
LLM tokens and calls per decision when the agent reports them (an agent may define
``pop_usage() -> dict`` with keys such as ``tokens_in``, ``tokens_out``, ``calls``,
read after each decision), and type alignment: among decisions where a
super-effective move was available, the share where the agent chose one.

Statistics (:mod:`pokegym.ratings`): Wilson 95 % intervals for every win rate,
exact binomial tests for every pair with Holm–Bonferroni correction over the
family, Bradley–Terry and Elo fitted by maximum likelihood over all games.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle, Move
from poke_env.player.battle_order import SingleBattleOrder

from pokegym.actions import ActionCodec
from pokegym.agents import Agent, make_agent, parse_agent_spec
from pokegym.backends.sim import SimBattleSession
from pokegym.env import opponent_choice
from pokegym.errors import IllegalActionError, PokegymError
from pokegym.formats import resolve_format
from pokegym.journal import BattleJournal, PlayedBattle
from pokegym.scale.resources import split_resources
from pokegym.showdown.simulator import Simulator, wait_for_answers
from pokegym.teams import TeamPool, builtin_pool
from pokegym.tournament import AgentStats, ArenaConfig, ArenaResult, BattleRecord


def super_effective_available(battle: AbstractBattle) -> tuple[bool, set[str]]:
    """Whether a damaging move that is super effective on the opposing active was
    available, and the ids of those moves."""
    target = battle.opponent_active_pokemon
    if target is None:
        return False, set()
    good = set()
    for move in battle.available_moves:
        if move.base_power > 0 and move.category.name != "STATUS":
            if target.damage_multiplier(move) > 1:
                good.add(move.id)
    return bool(good), good


@dataclass
class _Slot:
    """One battle in flight."""

    task: tuple[tuple[str, str], int]
    session: SimBattleSession
    agents: tuple[Agent, Agent]
    names: tuple[str, str]
    rng: np.random.Generator
    bank: list[float]
    started: float
    stats: dict[str, AgentStats]  # this battle's decisions, by agent name
    timeout: str | None = None
    replay: str | None = None


class ArenaConfigError(PokegymError, ValueError):
    """A tournament's configuration cannot be played (agents, pairs, battle counts)."""


class Arena:
    """Runs an :class:`ArenaConfig` (see the module docstring)."""

    def __init__(self, config: ArenaConfig):
        if len(config.agents) < 2:
            raise ArenaConfigError("A tournament needs at least two agents.")
        names = [parse_agent_spec(spec)[0] for spec in config.agents]
        if len(set(names)) != len(names):
            raise ArenaConfigError(f"Agent names must be unique, got {names}.")
        if config.battles_per_pair < 1:
            raise ArenaConfigError("battles_per_pair must be at least 1")
        self.config = config
        # Resource requests (num_cpus=, num_gpus=) are for a Ray cluster's scheduler: they
        # build no agent and change no outcome (pokegym.scale.resources).
        self.specs = {
            name: split_resources(spec)[0] for name, spec in zip(names, config.agents, strict=True)
        }
        for spec in self.specs.values():
            make_agent(spec)  # fail early on unknown names or bad options
        self._agent_pool: dict[str, list[Agent]] = {name: [] for name in self.specs}
        self.pairs = _check_pairs(config.pairs, names)
        self.simulators = [Simulator() for _ in range(max(1, config.simulators))]
        try:
            for sim in self.simulators:
                sim.ensure_running()
            self.fmt = resolve_format(config.battle_format, simulator=self.simulators[0])
            self.codec = ActionCodec(self.fmt.gimmick)
            self.pool: TeamPool | None = None
            if not self.fmt.random_teams:
                self.pool = (
                    TeamPool.from_sources([config.teams], self.fmt.id) if config.teams
                    else builtin_pool(self.fmt.id)
                )  # fmt: skip
                self.pool.validate(self.simulators[0])
        except BaseException:
            for sim in self.simulators:  # a bad format or team leaves no simulator behind
                sim.close()
            raise

    def tasks(self) -> list[tuple[tuple[str, str], int]]:
        return [(pair, k) for pair in self.pairs for k in range(self.config.battles_per_pair)]

    def identity(self) -> dict[str, Any]:
        """Everything that decides the battles' outcomes (what a journal must match to be
        resumed): not ``concurrency``, ``simulators``, ``replays`` or the agents' resource
        requests, which change none."""
        config = self.config
        teams = None
        if self.pool is not None:
            digest = hashlib.sha256()
            for team in self.pool.teams:
                digest.update(team.text.encode() + b"\0")
            teams = digest.hexdigest()
        return {
            "agents": list(self.specs.values()),
            "battle_format": config.battle_format,
            "battles_per_pair": config.battles_per_pair,
            "pairs": [list(pair) for pair in self.pairs],
            "mirror": config.mirror,
            "seed": config.seed,
            "clock_bank": config.clock_bank,
            "clock_increment": config.clock_increment,
            "max_turns": config.max_turns,
            "teams_sha256": teams,
        }

    def close(self) -> None:
        """Stop the simulators (idempotent; :meth:`run` does it when it ends)."""
        for sim in self.simulators:
            sim.close()

    def _battle_seed(self, pair: tuple[str, str], index: int) -> int:
        entropy = [self.config.seed, *map(_stable_hash, pair), index]
        return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0] >> 1)

    def run(
        self,
        progress: Callable[[BattleRecord], None] | None = None,
        journal: BattleJournal | None = None,
    ) -> ArenaResult:
        """Play every task. Battles are pipelined: each simulator gets its battles'
        choices as soon as they are decided, and answers are handled in the order the
        simulators deliver them, so Python decides for some battles while Node
        simulates others.

        With a ``journal`` (opened with this arena's :meth:`identity`), the battles already
        in it are not played again but count in the result, and every battle is written
        to it the moment it ends: an interrupted run loses only the battles in flight.
        The simulators are stopped when this returns or raises (also on Ctrl-C).
        """
        try:
            earlier = self.resume(journal)
            start = time.perf_counter()
            played: list[PlayedBattle] = []
            for battle in self.play(self.missing(earlier)):
                played.append(battle)
                if journal is not None:
                    journal.append(battle.record, battle.stats)
                if progress is not None:
                    progress(battle.record)
        finally:
            self.close()  # ends the battles still in flight (after an error or Ctrl-C)
        return self.result([*earlier, *played], time.perf_counter() - start, len(earlier))

    def resume(self, journal: BattleJournal | None) -> list[PlayedBattle]:
        """The battles of this tournament already in ``journal`` (none without one).

        Raises:
            ArenaConfigError: the journal was opened for another tournament (the
                simulators are stopped).
        """
        if journal is None:
            return []
        if journal.identity != json.loads(json.dumps(self.identity())):
            self.close()
            raise ArenaConfigError(f"{journal.path} was opened for another tournament.")
        wanted = set(self.tasks())
        return [b for b in journal.battles if (b.record.pair, b.record.index) in wanted]

    def missing(self, played: list[PlayedBattle]) -> list[tuple[tuple[str, str], int]]:
        """The tasks not among ``played``, in tournament order."""
        done = {(b.record.pair, b.record.index) for b in played}
        return [task for task in self.tasks() if task not in done]

    def result(
        self, battles: list[PlayedBattle], seconds: float, resumed: int = 0, **extra: Any
    ) -> ArenaResult:
        """The tournament's result from its finished battles (in any order)."""
        stats = {name: AgentStats() for name in self.specs}
        for battle in battles:
            for name, battle_stats in battle.stats.items():
                if name in stats:
                    stats[name].merge(battle_stats)
        records = sorted(
            (b.record for b in battles), key=lambda r: (self.pairs.index(r.pair), r.index)
        )
        return ArenaResult(self.config, records, stats, seconds, resumed, **extra)

    def play(self, tasks: list[tuple[tuple[str, str], int]]) -> Iterator[PlayedBattle]:
        """Play ``tasks`` (``(pair, index)``), ``concurrency`` at a time over this arena's
        simulators, yielding each battle with its players' statistics as it ends.

        The simulators keep running afterwards (:meth:`close` stops them); after an
        error, battles still in flight are left in them: close the arena before playing
        on. A battle's outcome depends only on its task and the configuration.
        """
        config = self.config
        agent_pool = self._agent_pool
        pending = list(reversed(tasks))
        live: list[_Slot] = []
        ended: list[PlayedBattle] = []
        # Entries are (slot, command, kind), kind: "start", "write" or "close".
        in_flight: dict[int, deque[list[tuple[_Slot, str]]]] = {
            id(sim): deque() for sim in self.simulators
        }
        building: dict[int, list[tuple[_Slot, list[Any], str]]] = {}
        chunk = max(1, config.concurrency // (2 * len(self.simulators)))
        sim_index = 0

        def flush(sim: Simulator) -> None:
            batch = building.pop(id(sim), None)
            if batch:
                sim.submit([command for _, command, _ in batch])
                in_flight[id(sim)].append([(slot, kind) for slot, _, kind in batch])

        def queue(slot: _Slot, command: list[Any], kind: str) -> None:
            sim = slot.session.simulator
            entries = building.setdefault(id(sim), [])
            entries.append((slot, command, kind))
            if len(entries) >= chunk or not in_flight[id(sim)]:
                flush(sim)

        def finish(slot: _Slot) -> None:
            live.remove(slot)
            ended.append(PlayedBattle(self._close(slot, agent_pool), slot.stats))
            command = slot.session.close_command()
            if command is not None:
                queue(slot, command, "close")

        def advance(slot: _Slot) -> None:
            """Decide for the battle and queue its command, or close it when it is over."""
            for _ in range(100):
                if self._done(slot):
                    finish(slot)
                    return
                choices = self._decide(slot)
                if slot.timeout is not None:
                    finish(slot)
                    return
                if choices:
                    queue(slot, slot.session.command(choices), "write")
                    return
            raise PokegymError("A battle had nothing to decide and nothing to wait for.")

        while pending or live or ended:
            while ended:
                yield ended.pop(0)
            if not (pending or live):
                break
            while pending and len(live) < config.concurrency:
                sim = self.simulators[sim_index % len(self.simulators)]
                sim_index += 1
                slot = self._open(pending.pop(), sim, agent_pool)
                live.append(slot)
                queue(slot, slot.session.start_command, "start")
            for sim in self.simulators:
                if not in_flight[id(sim)]:
                    flush(sim)
            busy = [sim for sim in self.simulators if in_flight[id(sim)]]
            if not busy:
                continue
            sim = wait_for_answers(busy, max(s.timeout for s in busy))[0]
            batch = in_flight[id(sim)].popleft()
            for (slot, kind), result in zip(batch, sim.collect(), strict=True):
                if kind == "close":
                    continue
                slot.session.absorb(result, starting=kind == "start")
                for side, view in enumerate(slot.session.views):
                    if view.error is not None and not view.unavailable:
                        raise IllegalActionError(
                            f"{slot.names[side]}: Showdown rejected its choice: {view.error}"
                        )
                advance(slot)
        # Hand the simulators their last close commands and read every answer, so the
        # next call starts on a quiet pipe (and Node forgets the finished battles).
        for sim in self.simulators:
            flush(sim)
            while in_flight[id(sim)]:
                in_flight[id(sim)].popleft()
                sim.collect()

    # ------------------------------------------------------------ battles
    def _open(
        self, task: tuple[tuple[str, str], int], sim: Simulator, pool: dict[str, list[Agent]]
    ) -> _Slot:
        pair, index = task
        seed = self._battle_seed(pair, index)
        rng = np.random.default_rng(seed)
        names = pair if index % 2 == 0 else (pair[1], pair[0])
        agents = tuple(
            pool[name].pop() if pool[name] else make_agent(self.specs[name]) for name in names
        )
        for agent in agents:
            seed_fn = getattr(agent, "seed", None)
            if callable(seed_fn):
                seed_fn(int(rng.integers(2**63 - 1)))
        teams: list[str | None] = [None, None]
        if self.pool is not None:
            first = self.pool.sample(rng).text
            teams = [first, first if self.config.mirror else self.pool.sample(rng).text]
        session = SimBattleSession(
            sim, self.fmt, teams=teams, seeds=tuple(int(x) for x in rng.integers(0, 2**62, 3)),
            names=("p1", "p2"), start=False,
        )  # fmt: skip
        bank = self.config.clock_bank
        return _Slot(task, session, agents, names, rng,  # type: ignore[arg-type]
                     [bank or 0.0, bank or 0.0], time.perf_counter(),
                     {name: AgentStats() for name in dict.fromkeys(names)})  # fmt: skip

    def _done(self, slot: _Slot) -> bool:
        session = slot.session
        return (
            session.finished or slot.timeout is not None
            or session.battles[0].turn >= self.config.max_turns
        )  # fmt: skip

    def _decide(self, slot: _Slot) -> dict[int, str]:
        choices: dict[int, str] = {}
        config = self.config
        for side in (0, 1):
            if not slot.session.needs_choice(side):
                continue
            battle = slot.session.battles[side]
            name = slot.names[side]
            agent = slot.agents[side]
            alignable, good = (False, set())
            if not battle.teampreview:
                alignable, good = super_effective_available(battle)
            begin = time.perf_counter()
            if battle.teampreview:
                choice = opponent_choice(agent, battle, self.codec, slot.rng)
                order = None
            else:
                order = self._choose(slot, side, battle)
                choice = self.codec.order_to_choice(order, battle)
            elapsed = time.perf_counter() - begin
            agent_stats = slot.stats[name]
            agent_stats.decisions += 1
            agent_stats.latencies.append(elapsed)
            pop = getattr(agent, "pop_usage", None)
            if callable(pop):
                agent_stats.record_usage(pop())
            if alignable and isinstance(order, SingleBattleOrder) and isinstance(order.order, Move):
                agent_stats.alignable += 1
                agent_stats.aligned += int(order.order.id in good)
            if config.clock_bank is not None:
                slot.bank[side] += config.clock_increment
                slot.bank[side] -= elapsed
                if slot.bank[side] < 0:
                    slot.timeout = name
                    return {}
            choices[side] = choice
        return choices

    def _choose(self, slot: _Slot, side: int, battle: Any) -> Any:
        """The order of ``side``'s agent for this turn (a subclass may watch it)."""
        return slot.agents[side].choose(battle)

    def _close(self, slot: _Slot, pool: dict[str, list[Agent]]) -> BattleRecord:
        pair, index = slot.task
        session = slot.session
        truncated = not session.finished and slot.timeout is None
        winner: str | None = None
        if slot.timeout is not None:
            winner = slot.names[1] if slot.timeout == slot.names[0] else slot.names[0]
        elif session.finished and session.winner is not None:
            winner = slot.names[session.winner]
        replay = None
        if self.config.replays:
            folder = Path(self.config.replays)
            path = folder / f"{pair[0]}-vs-{pair[1]}-{index:04d}.html"
            session.battles[0].save_replay(path)
            replay = str(path)
        record = BattleRecord(
            pair=pair, index=index, seed=self._battle_seed(pair, index), p1=slot.names[0],
            p2=slot.names[1], winner=winner, turns=session.battles[0].turn, truncated=truncated,
            timeout=slot.timeout, seconds=time.perf_counter() - slot.started, replay=replay,
        )  # fmt: skip
        for name, agent in zip(slot.names, slot.agents, strict=True):
            pool[name].append(agent)
        return record


def _check_pairs(pairs: list[tuple[str, str]] | None, names: list[str]) -> list[tuple[str, str]]:
    """The pairs to play: the given ones, checked against the agents, or a round robin."""
    if pairs is None:
        return list(itertools.combinations(names, 2))
    if not pairs:
        raise ArenaConfigError("pairs is empty; give at least one pair or None (round robin).")
    checked: list[tuple[str, str]] = []
    for pair in pairs:
        if isinstance(pair, str) or len(pair) != 2:
            raise ArenaConfigError(f"--pairs: {pair!r} is not a pair of agent names (a:b).")
        a, b = pair
        for name in (a, b):
            if name not in names:
                raise ArenaConfigError(
                    f"--pairs: no agent named {name!r} in this tournament (agents: "
                    f"{', '.join(names)}); pairs use the names without options."
                )
        if a == b:
            raise ArenaConfigError(
                f"--pairs: {a}:{b} pits {a} against itself; the arena's records are by name, "
                "so a pair needs two different agents."
            )
        checked.append((a, b))
    return checked


def _stable_hash(text: str) -> int:
    value = 0
    for char in text.encode():
        value = (value * 131 + char) % (2**31 - 1)
    return value


def run_arena(
    config: ArenaConfig,
    progress: Callable[[BattleRecord], None] | None = None,
    journal: str | Path | None = None,
) -> ArenaResult:
    """Build an :class:`Arena` and run it; with ``journal`` (a ``.jsonl`` path), resume the
    battles already in that file and write each new one to it as it ends
    (:mod:`pokegym.journal`)."""
    arena = Arena(config)
    if journal is None:
        return arena.run(progress)
    try:
        opened = BattleJournal(journal, arena.identity())
    except BaseException:
        arena.close()
        raise
    with opened:
        return arena.run(progress, opened)


__all__ = [
    "Arena",
    "ArenaConfig",
    "ArenaConfigError",
    "ArenaResult",
    "BattleRecord",
    "run_arena",
    "super_effective_available",
]
