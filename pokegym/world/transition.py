"""The transition model: ``step(state, action_0, action_1) -> next state``.

An approximate, fast re-implementation of one Showdown turn over a
:class:`~pokegym.world.state.BattleState`, for search. Two modes:

* ``"expected"`` (the PokéChamp paper's): damage, recoil and drain are
  expectations (over the 16 rolls, critical hits and accuracy); discrete events
  (a status, a stat change from a secondary effect, a faint) happen when their
  probability is at least one half, so the state stays a single state.
* ``"sample"``: every random event is drawn with the given NumPy generator.

What a turn does, in Showdown's order: switches (faster first, entry hazards on
arrival), Terastallization, then moves by priority and speed (Trick Room reverses;
speed ties go to side 0 in expected mode, a coin flip when sampling); a move may
miss, be blocked by Protect, fail against an immunity; damage, drain, recoil, Life
Orb; secondary effects (status, boosts, flinch); status moves (boosts, status,
recovery, Rest, hazards and their removal, screens, weather, terrain, Trick Room,
Tailwind, protection); pivots (U-turn, Volt Switch, Flip Turn, Parting Shot,
Teleport) and phazing; sleep, paralysis and freeze checks; then end-of-turn
residuals (weather, Grassy Terrain, Leftovers/Black Sludge, burn, poison, toxic,
Speed Boost, field counters) and replacements for fainted Pokémon.

This module holds the turn's order, switching, hits and damage;
:mod:`pokegym.world.move_effects` what moves do besides damage and the end of the turn;
:mod:`pokegym.world.state_damage` what the damage calculator is given of a state.

Replacements (after a faint, or for a pivot) are chosen by ``replacement``:
by default the healthiest Pokémon left (a fixed rule, so expected mode stays
deterministic). Not modelled: substitutes, Leech Seed and other volatiles except
protection and flinch, Wish, Future Sight, item swaps, abilities other than those
listed in the code, two-turn moves' charge turn, multi-turn locks (Outrage).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from pokegym.world import damage as damage_calc
from pokegym.world.damage import DamageResult
from pokegym.world.data import Dex, to_id
from pokegym.world.move_effects import (
    PHAZING,
    PIVOTS,
    WEATHER_ROCKS,
    MoveInfo,
    after_damage,
    boost,
    chance,
    clear_hazards,
    end_of_turn,
    grounded,
    status_move,
)
from pokegym.world.speed import action_speed, effective_speed
from pokegym.world.state import BattleState, MonState, SideState
from pokegym.world.state_damage import calculate, hp_key, sample_damage

# An action: ("move", move_id, terastallize) or ("switch", team_index, False).
Action = tuple[str, Any, bool]
Replacement = Callable[[BattleState, int], int | None]

ACC_STAGE: Final = {-6: 3 / 9, -5: 3 / 8, -4: 3 / 7, -3: 3 / 6, -2: 3 / 5, -1: 3 / 4, 0: 1.0,
             1: 4 / 3, 2: 5 / 3, 3: 6 / 3, 4: 7 / 3, 5: 8 / 3, 6: 9 / 3}  # fmt: skip
PROTECTS: Final = {"protect", "detect", "kingsshield", "spikyshield", "banefulbunker", "silktrap",
            "burningbulwark", "obstruct", "maxguard"}  # fmt: skip
HAZARD_REMOVAL: Final = {"rapidspin", "defog", "mortalspin", "tidyup", "courtchange"}
WEATHER_ABILITIES: Final = {"drought": "sunnyday", "drizzle": "raindance",
                            "sandstream": "sandstorm", "snowwarning": "snowscape",
                            "orichalcumpulse": "sunnyday"}  # fmt: skip
TERRAIN_ABILITIES: Final = {"electricsurge": "electricterrain", "grassysurge": "grassyterrain",
                     "mistysurge": "mistyterrain",
                     "psychicsurge": "psychicterrain",
                     "hadronengine": "electricterrain", "seedsower": "grassyterrain"}  # fmt: skip
# Moves whose power depends on the user's or the target's exact HP.
HP_SCALED_MOVES: Final = {"eruption", "waterspout", "dragonenergy", "reversal", "flail",
                          "crushgrip", "wringout", "hardpress"}  # fmt: skip


# MoveInfo of every move looked up so far, per Dex object (static game data, shared by
# the models built on that Dex; a model keeps its own table of the moves it was asked).
_MOVE_INFO: Final[dict[int, tuple[Dex, dict[str, MoveInfo]]]] = {}


def _shared_move_info(dex: Dex, move_id: str) -> MoveInfo | None:
    found = _MOVE_INFO.get(id(dex))
    if found is None or found[0] is not dex:
        if len(_MOVE_INFO) >= 16:
            _MOVE_INFO.clear()
        found = _MOVE_INFO[id(dex)] = (dex, {})
    table = found[1]
    info = table.get(move_id)
    if info is None:
        entry = dex.moves.get(move_id)
        if entry is None:
            return None
        info = table[move_id] = MoveInfo(move_id, entry)
    return info


def healthiest_replacement(state: BattleState, side: int) -> int | None:
    """The benched Pokémon with the most HP left (lowest team slot on ties)."""
    team = state.sides[side]
    best, best_hp = None, 0.0
    for i, mon in enumerate(team.mons):
        if i != team.active and mon.hp > 0 and mon.hp_fraction > best_hp:
            best, best_hp = i, mon.hp_fraction
    return best


def _turn_copy(state: BattleState) -> BattleState:
    """A copy for one turn: new sides and field, new active Pokémon, shared bench.

    A turn only changes the active Pokémon and those that come in (``switch_in`` copies
    a Pokémon before it enters), so the benched ones are shared with ``state`` rather
    than copied: states returned by :meth:`TransitionModel.step` must be treated as
    immutable (``state.copy()`` gives a fully independent one to edit).
    """
    sides = []
    for side in state.sides:
        mons = list(side.mons)
        if mons:
            mons[side.active] = mons[side.active].copy()
        copied = SideState(
            mons, side.active, side.stealth_rock, side.spikes, side.toxic_spikes,
            side.sticky_web, side.reflect, side.light_screen, side.aurora_veil,
            side.tailwind, side.tera_used,
        )  # fmt: skip
        sides.append(copied)
    return BattleState(
        sides, state.gen, state.weather, state.weather_turns, state.terrain,
        state.terrain_turns, state.trick_room, state.gravity, state.turn, state.notes,
    )  # fmt: skip


class TransitionModel:
    """Applies turns to :class:`BattleState` objects (see the module docstring).

    Args:
        dex: Showdown's data for the generation.
        mode: ``"expected"`` or ``"sample"``.
        replacement: who comes in after a faint or a pivot.
        ko_rule: in expected mode, a hit knocks its target out when the chance of that
            (over the damage rolls, critical hits and accuracy) is at least one half, like
            the other discrete events, and leaves it a sliver of HP otherwise. Without it
            a hit deals its expected damage, so a move that KOs on most rolls leaves the
            target alive at a few HP, and one that KOs only on a crit can knock it out.
    """

    def __init__(
        self,
        dex: Dex,
        mode: str = "expected",
        replacement: Replacement = healthiest_replacement,
        ko_rule: bool = False,
    ):
        if mode not in ("expected", "sample"):
            raise ValueError("mode is 'expected' or 'sample'")
        self.dex = dex
        self.mode = mode
        self.ko_rule = bool(ko_rule)
        self.replacement = replacement
        self._damage_cache: dict[tuple[Any, ...], dict[str, DamageResult | None]] = {}
        self._combatants: dict[tuple[Any, ...], Any] = {}
        self._moves: dict[str, MoveInfo | None] = {}
        self._attacks: dict[int, list[Any]] = {}

    def move_info(self, move_id: str) -> MoveInfo | None:
        """The move's :class:`MoveInfo` (None for a move Showdown's data does not list)."""
        # Lookups rather than try/except KeyError: a raised exception costs more than the
        # lookup, most of all in the compiled build.
        info = self._moves.get(move_id)
        if info is None and move_id not in self._moves:
            info = self._moves[move_id] = _shared_move_info(self.dex, move_id)
        return info

    # ----------------------------------------------------------------- actions
    def legal_actions(self, state: BattleState, side: int) -> list[Action]:
        """Moves of the active Pokémon (with Tera when available) and switches."""
        team = state.sides[side]
        mon = team.active_mon
        actions: list[Action] = []
        if mon.hp > 0:
            moves = mon.moves
            if mon.choice_lock and mon.choice_lock in moves:
                moves = (mon.choice_lock,)
            if not moves:
                moves = ("struggle",)
            can_tera = (
                state.gen == 9 and not team.tera_used and bool(mon.tera_type)
                and not mon.terastallized
            )  # fmt: skip
            for move in moves:
                actions.append(("move", move, False))
                if can_tera:
                    actions.append(("move", move, True))
        for i, other in enumerate(team.mons):
            if i != team.active and other.hp > 0:
                actions.append(("switch", i, False))
        return actions

    # ------------------------------------------------------------------- turn
    def step(
        self,
        state: BattleState,
        action_0: Action,
        action_1: Action,
        rng: np.random.Generator | None = None,
    ) -> BattleState:
        """The state after both sides play their actions for one turn (a new object)."""
        if self.mode == "sample" and rng is None:
            raise ValueError("sample mode needs a numpy Generator (rng=...)")
        s = _turn_copy(state)
        s.turn += 1
        actions = (action_0, action_1)
        flinched = [False, False]
        protected = [False, False]
        moved = [False, False]

        # Switches go first, the faster switcher first.
        switchers = [side for side in (0, 1) if actions[side][0] == "switch"]
        if len(switchers) == 2 and self.faster(s, 1):
            switchers.reverse()
        for side in switchers:
            self.switch_in(s, side, int(actions[side][1]))

        # Terastallization before any move.
        for side in (0, 1):
            action = actions[side]
            if action[0] == "move" and action[2]:
                team = s.sides[side]
                mon = team.active_mon
                if not team.tera_used and mon.tera_type and s.gen == 9:
                    mon.terastallized = True
                    team.tera_used = True

        movers = [side for side in (0, 1) if actions[side][0] == "move"]
        order = self._move_order(s, movers, actions, rng)
        for position, side in enumerate(order):
            user_team = s.sides[side]
            user = user_team.active_mon
            if user.hp <= 0 or s.sides[1 - side].active_mon is None:
                continue
            if flinched[side]:
                continue
            move_id = actions[side][1]
            if move_id not in self._moves and move_id not in self.dex.moves:
                move_id = to_id(move_id)
            if not self._can_act(user, rng):
                user.protect_streak = 0
                continue
            moved[side] = True
            target_side = 1 - side
            outcome = self._use_move(
                s, side, move_id, protected[target_side], moves_first=position == 0, rng=rng
            )
            if outcome.get("protect"):
                protected[side] = True
            if outcome.get("flinch") and position == 0:
                flinched[target_side] = True
            if user.item in ("choiceband", "choicespecs", "choicescarf") and not user.choice_lock:
                user.choice_lock = move_id
            if outcome.get("pivot") and user.hp > 0 and not s.finished:
                replacement = self.replacement(s, side)
                if replacement is not None:
                    self.switch_in(s, side, replacement)
            if outcome.get("phaze") and not s.finished:
                target_team = s.sides[target_side]
                if target_team.active_mon.hp > 0:
                    replacement = self.replacement(s, target_side)
                    if replacement is not None:
                        self.switch_in(s, target_side, replacement)
        for side in (0, 1):
            if not protected[side]:
                s.sides[side].active_mon.protect_streak = 0

        order = [1, 0] if self.faster(s, 1) else [0, 1]
        end_of_turn(s, order)
        for side in (0, 1):
            team = s.sides[side]
            if team.active_mon.hp <= 0:
                replacement = self.replacement(s, side)
                if replacement is not None:
                    self.switch_in(s, side, replacement)
        return s

    # ------------------------------------------------------------- mechanics
    def _chance(self, p: float, rng: np.random.Generator | None) -> bool:
        return chance(p, self._random(rng))

    def _random(self, rng: np.random.Generator | None) -> np.random.Generator | None:
        """``rng`` when this model samples, None in expected mode."""
        return rng if self.mode == "sample" else None

    def speed(self, s: BattleState, side: int) -> int:
        """The active Pokémon's Speed as Showdown computes it (:func:`effective_speed`)."""
        team = s.sides[side]
        mon = team.active_mon
        return effective_speed(
            mon.stats[5], boost=mon.boosts[4], item=mon.item, ability=mon.ability,
            status=mon.status, tailwind=team.tailwind > 0, weather=s.weather,
            terrain=s.terrain, speed_ability_boost=self._paradox_boost(s, mon) == 5,
            gen=s.gen,
        )  # fmt: skip

    def action_speed(self, s: BattleState, side: int) -> int:
        """What orders actions of one priority, higher first (Trick Room reverses Speed;
        :func:`~pokegym.world.speed.action_speed`)."""
        return action_speed(self.speed(s, side), s.trick_room > 0)

    def faster(self, s: BattleState, side: int) -> bool:
        """``side`` acts before the other among actions of the same priority (a Speed tie
        is not faster)."""
        return self.action_speed(s, side) > self.action_speed(s, 1 - side)

    def _paradox_boost(self, s: BattleState, mon: MonState) -> int | None:
        """The stat (index) Protosynthesis/Quark Drive raise, or None when inactive."""
        active = mon.item == "boosterenergy" or (
            (mon.ability == "protosynthesis" and s.weather in ("sunnyday", "desolateland"))
            or (mon.ability == "quarkdrive" and s.terrain == "electricterrain")
        )
        if not active:
            return None
        stats = mon.stats[1:]
        return 1 + max(range(5), key=lambda i: stats[i])

    def priority(self, s: BattleState, side: int, move_id: str) -> int:
        mon = s.sides[side].active_mon
        info = self.move_info(move_id)
        if info is None:
            priority = 0
        else:
            priority = info.priority
            ability = mon.ability
            if ability == "prankster" and info.category == "Status":
                priority += 1
            elif ability == "galewings" and info.type == "Flying" and mon.hp >= mon.max_hp:
                priority += 1
            elif ability == "triage" and info.heal_flag:
                priority += 3
        if move_id == "grassyglide" and s.terrain == "grassyterrain":
            priority += 1
        return priority

    def _move_order(
        self,
        s: BattleState,
        movers: list[int],
        actions: tuple[Action, Action],
        rng: np.random.Generator | None,
    ) -> list[int]:
        if len(movers) < 2:
            return movers
        keys = []
        for side in movers:
            move_id = actions[side][1]
            if move_id not in self._moves and move_id not in self.dex.moves:
                move_id = to_id(move_id)
            priority = self.priority(s, side, move_id)
            keys.append((priority, self.action_speed(s, side)))
        if keys[0] == keys[1]:
            if self.mode == "sample" and rng is not None and rng.random() < 0.5:
                return [1, 0]
            return [0, 1]
        return [0, 1] if keys[0] > keys[1] else [1, 0]

    def _can_act(self, mon: MonState, rng: np.random.Generator | None) -> bool:
        if mon.status == "slp":
            if mon.status_turns <= 0:
                mon.status = ""
                return True
            mon.status_turns -= 1
            return mon.ability == "comatose"
        if mon.status == "frz":
            if self._chance(0.2, rng):
                mon.status = ""
                return True
            return False
        if mon.status == "par":
            return not self._chance(0.25, rng)
        return True

    def _grounded(self, s: BattleState, mon: MonState) -> bool:
        return grounded(s, mon)

    def switch_in(self, s: BattleState, side: int, index: int) -> None:
        team = s.sides[side]
        if not 0 <= index < len(team.mons) or team.mons[index].hp <= 0:
            return
        leaving = team.active_mon
        leaving.boosts = (0, 0, 0, 0, 0, 0, 0)
        leaving.choice_lock = ""
        leaving.protect_streak = 0
        if leaving.status == "tox":
            leaving.status_turns = 1
        if leaving.ability == "regenerator" and leaving.hp > 0:
            leaving.hp = min(leaving.max_hp, leaving.hp + leaving.max_hp / 3)
        elif leaving.ability == "naturalcure":
            leaving.status = ""
        team.mons[index] = team.mons[index].copy()  # copy on write (see _turn_copy)
        team.active = index
        mon = team.active_mon
        self._entry_hazards(s, team, mon)
        if mon.hp > 0:
            self._on_entry_ability(s, side, mon)

    def _entry_hazards(self, s: BattleState, team: SideState, mon: MonState) -> None:
        if mon.item == "heavydutyboots":
            return
        magic_guard = mon.ability == "magicguard"
        if team.stealth_rock and not magic_guard:
            mon.hp -= mon.max_hp * self.dex.effectiveness("Rock", mon.current_types()) / 8
        grounded = self._grounded(s, mon)
        if grounded and team.spikes and not magic_guard:
            mon.hp -= mon.max_hp * {1: 1 / 8, 2: 1 / 6, 3: 1 / 4}[min(3, team.spikes)]
        if grounded and team.toxic_spikes:
            types = mon.current_types()
            if "Poison" in types:
                team.toxic_spikes = 0
            elif "Steel" not in types and not mon.status:
                mon.status = "tox" if team.toxic_spikes >= 2 else "psn"
                mon.status_turns = 1 if mon.status == "tox" else 0
        if grounded and team.sticky_web:
            self._boost(mon, {"spe": -1})

    def _on_entry_ability(self, s: BattleState, side: int, mon: MonState) -> None:
        ability = mon.ability
        if ability == "intimidate":
            foe = s.sides[1 - side].active_mon
            if foe.hp > 0 and foe.ability not in (
                "clearbody",
                "innerfocus",
                "oblivious",
                "owntempo",
                "scrappy",
                "hypercutter",
            ):
                self._boost(foe, {"atk": -1})
        elif ability in WEATHER_ABILITIES:
            weather = WEATHER_ABILITIES[ability]
            if s.weather != weather:
                s.weather = weather
                rock = WEATHER_ROCKS.get(weather)
                s.weather_turns = 8 if rock and mon.item == rock else 5
        elif ability in TERRAIN_ABILITIES:
            terrain = TERRAIN_ABILITIES[ability]
            if s.terrain != terrain:
                s.terrain = terrain
                s.terrain_turns = 8 if mon.item == "terrainextender" else 5

    def _boost(self, mon: MonState, boosts: dict[str, int]) -> None:
        boost(mon, boosts)

    # ------------------------------------------------------------------ moves
    def _use_move(
        self,
        s: BattleState,
        side: int,
        move_id: str,
        target_protected: bool,
        *,
        moves_first: bool,
        rng: np.random.Generator | None,
    ) -> dict[str, bool]:
        info = self.move_info(move_id)
        user_team, target_team = s.sides[side], s.sides[1 - side]
        user, target = user_team.active_mon, target_team.active_mon
        if info is None:
            return {}
        outcome: dict[str, bool] = {}
        category = info.category
        targets_foe = info.targets_foe

        if move_id in PROTECTS:
            # Each consecutive success divides the odds of the next one by 3.
            if self._chance(1.0 / (3**user.protect_streak), rng):
                user.protect_streak += 1
                outcome["protect"] = True
            else:
                user.protect_streak = 0
            return outcome
        user.protect_streak = 0

        if targets_foe and target.hp > 0 and target_protected and info.protect_flag:
            return outcome
        if targets_foe and target.hp <= 0 and category != "Status":
            return outcome

        hit_chance = self.hit_chance(s, user, target, info) if targets_foe else 1.0

        if category != "Status":
            result = self.damage(s, side, move_id)
            if result is None:
                return outcome
            broken = result.broken_form is not None
            if self.mode == "expected":
                dealt = min(max(target.hp, 0.0), result.expected * hit_chance)
                hit = hit_chance >= 0.5 and (result.max > 0 or broken)
                if self.ko_rule and target.hp > 0 and result.max > 0:
                    if hit_chance * result.ko_chance(math.ceil(target.hp)) >= 0.5:
                        dealt = target.hp
                    elif dealt >= target.hp:
                        dealt = max(0.0, target.hp - 1.0)
            else:
                hit = bool(rng.random() < hit_chance)  # type: ignore[union-attr]
                dealt = 0.0
                if hit:
                    dealt = float(sample_damage(result, rng))
                    dealt = min(max(target.hp, 0.0), dealt)
            if result.max <= 0 and not broken:
                return outcome  # immune
            if target.ability == "sturdy" and target.hp >= target.max_hp and dealt >= target.hp:
                dealt = target.hp - 1
            target.hp -= dealt
            if broken and hit and target.hp > 0:
                self._break_form(target)
            if move_id == "knockoff" and hit and target.item and target.hp > 0:
                target.item = ""
            after_damage(s, side, user, target, info, dealt, hit, self._random(rng), outcome)
            if move_id in PIVOTS and hit:
                outcome["pivot"] = True
            if move_id in PHAZING and hit and target.hp > 0:
                outcome["phaze"] = True
            if move_id in ("rapidspin", "mortalspin", "tidyup") and hit:
                clear_hazards(user_team)
                if move_id == "rapidspin":
                    self._boost(user, {"spe": 1})
            return outcome

        if not self._chance(hit_chance, rng):
            return outcome
        status_move(self.dex, s, side, move_id, info, outcome)
        return outcome

    def _break_form(self, mon: MonState) -> None:
        """Disguise / Ice Face took a hit: the Pokémon takes its broken form."""
        names = ("hp", "atk", "def", "spa", "spd", "spe")
        species, stats = damage_calc.broken_form(
            self.dex, mon.species, dict(zip(names, mon.stats, strict=True)), mon.level
        )
        if species:
            mon.species = species
            mon.stats = tuple(int(stats[n]) for n in names)  # type: ignore[assignment]
            mon.types = tuple(self.dex.species[species]["types"])

    def accuracy(
        self, s: BattleState, user: MonState, target: MonState, entry: dict[str, Any]
    ) -> float:
        """The chance that ``user``'s move (its Showdown entry) hits ``target``."""
        info = self.move_info(entry["id"]) if "id" in entry else None
        if info is None or info.entry is not entry:
            info = MoveInfo(entry.get("id", ""), entry)
        return self.hit_chance(s, user, target, info)

    def hit_chance(self, s: BattleState, user: MonState, target: MonState, info: MoveInfo) -> float:
        """The chance that ``user``'s move hits ``target`` (accuracy, boosts, abilities)."""
        accuracy = info.accuracy
        if accuracy is True or user.ability == "noguard" or target.ability == "noguard":
            return 1.0
        if info.ohko:
            return 0.3
        value = accuracy / 100.0
        if info.id in ("thunder", "hurricane") and s.weather in ("raindance", "primordialsea"):
            return 1.0
        if info.id == "blizzard" and s.weather in ("snowscape", "hail"):
            return 1.0
        stage = max(-6, min(6, user.boosts[5] - target.boosts[6]))
        value *= ACC_STAGE[stage]
        if user.ability == "compoundeyes":
            value *= 1.3
        elif user.ability == "hustle" and info.category == "Physical":
            value *= 0.8
        if user.item == "widelens":
            value *= 1.1
        if s.gravity:
            value *= 5 / 3
        return min(1.0, value)

    def damage(self, s: BattleState, side: int, move_id: str) -> DamageResult | None:
        """The damage calculator's result for ``side``'s active using ``move_id`` on the
        other active now (None when the calculator cannot value the move)."""
        return self.damages(s, side, (move_id,))[0]

    def damages(self, s: BattleState, side: int, moves: Sequence[str]) -> list[DamageResult | None]:
        """:meth:`damage` for each of ``moves``, the matchup's cache key built once."""
        results: list[DamageResult | None] = []
        plain: dict[str, DamageResult | None] | None = None
        exact: dict[str, DamageResult | None] | None = None
        for move_id in moves:
            if move_id in HP_SCALED_MOVES:
                if exact is None:
                    exact = self._matchup_cache(s, side, True)
                table = exact
            else:
                if plain is None:
                    plain = self._matchup_cache(s, side, False)
                table = plain
            result = table.get(move_id)
            if result is None and move_id not in table:
                result = table[move_id] = calculate(self.dex, s, side, move_id)
            results.append(result)
        return results

    def attacks(self, s: BattleState, side: int) -> list[tuple[str, DamageResult | None, float]]:
        """``(move, damage result, chance to hit)`` for each attacking move of ``side``'s
        active against the other active in ``s`` (status moves and moves the data lacks
        left out). Remembered for the last few states asked about, so an evaluator and a
        prior looking at the same search node share the work: a state must not be edited
        after it was asked about (states from :meth:`step` never are)."""
        memo = self._attacks.get(id(s))
        if memo is not None and memo[0] is s:
            found = memo[1 + side]
            if found is not None:
                return found
        else:
            if len(self._attacks) >= 64:
                del self._attacks[next(iter(self._attacks))]
            memo = self._attacks[id(s)] = [s, None, None]
        user = s.sides[side].active_mon
        target = s.sides[1 - side].active_mon
        moves, infos = [], []
        for move in user.moves:
            info = self.move_info(move)
            if info is not None and info.category != "Status":
                moves.append(move)
                infos.append(info)
        results = self.damages(s, side, moves) if moves else []
        found = [(move, result, self.hit_chance(s, user, target, info))
                 for move, info, result in zip(moves, infos, results, strict=True)]  # fmt: skip
        memo[1 + side] = found
        return found

    def _matchup_cache(
        self, s: BattleState, side: int, exact: bool
    ) -> dict[str, DamageResult | None]:
        """The cached results of every move tried in this matchup (the two actives, the
        field and the defender's screens as the damage calculator sees them)."""
        user_team, target_team = s.sides[side], s.sides[1 - side]
        user, target = user_team.active_mon, target_team.active_mon
        # One flat tuple (one allocation, one hash): the two Pokémon as the calculator
        # sees them, then the field.
        key = (
            exact,
            user.species, user.level, user.stats, user.boosts, user.item, user.ability,
            user.status, user.tera_type, user.terastallized, hp_key(user, exact),
            target.species, target.level, target.stats, target.boosts, target.item,
            target.ability, target.status, target.tera_type, target.terastallized,
            hp_key(target, exact),
            s.weather, s.terrain, s.gravity > 0, target_team.reflect > 0,
            target_team.light_screen > 0, target_team.aurora_veil > 0,
            self._paradox_boost(s, user), self._paradox_boost(s, target),
        )  # fmt: skip
        table = self._damage_cache.get(key)
        if table is None:
            if len(self._damage_cache) > 50_000:
                self._damage_cache.clear()
            table = self._damage_cache[key] = {}
        return table
