"""``abyssal``'s model of a position: expected damage of every known or likely attack both
ways (a simplified damage formula over real or estimated stats), who moves first, and
how many hits each side needs.

The damage formula and the boost table here are this bot's own, on purpose, and are not
the world model's calculator (:mod:`pokegym.world.damage`): they model the estimate the
Abyssal bot makes (an expected value as a fraction of max HP, a few cheap item, ability
and field effects, stats it guesses for the opponent), not the game's exact rolls, and
the bot's rules are written against that estimate. Speed is the exception: it is
Showdown's rule, from :mod:`pokegym.world.speed`.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from poke_env.battle import (
    AbstractBattle,
    Effect,
    Field,
    Move,
    MoveCategory,
    Pokemon,
    PokemonType,
    SideCondition,
    Status,
    Weather,
)
from poke_env.data import GenData

from pokegym.hp import hp_fraction
from pokegym.showdown.install import showdown_package_dir
from pokegym.world.data import to_id
from pokegym.world.speed import action_speed, effective_speed
from policies.abyssal.constants import (
    ABSORBING_ABILITIES,
    ASSUMED_STAB_POWER,
    KO_FIRST_WEIGHT,
    RANDOM_BATTLE_EVS,
    RANDOM_FACTOR,
    SPEED_WEIGHT,
    TEAM_FORMAT_EVS,
    UNREVEALED_MOVE_WEIGHT,
)

# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Attack:
    """What the damage estimate needs to know about a move."""

    id: str
    type: PokemonType
    category: MoveCategory
    base_power: int
    accuracy: float
    priority: int
    hits: float
    fixed: str | int | None
    contact: bool
    recoil: float
    drain: float
    self_drop: int
    self_destruct: bool
    charge: bool
    recharge: bool
    self_switch: bool
    secondary: bool


@cache
def _attack(move_id: str, gen: int) -> Attack:
    move = Move(move_id, gen)
    return _attack_from_move(move)


def _attack_from_move(move: Move) -> Attack:
    drops = move.self_boost or {}
    flags = move.flags
    return Attack(
        id=move.id,
        type=move.type,
        category=move.category,
        base_power=move.base_power,
        accuracy=float(move.accuracy),
        priority=move.priority,
        hits=float(move.expected_hits),
        fixed=move.damage or None,
        contact="contact" in flags,
        recoil=float(move.recoil),
        drain=float(move.drain),
        self_drop=-sum(v for v in drops.values() if v < 0),
        self_destruct=bool(move.self_destruct),
        charge="charge" in flags,
        recharge="recharge" in flags,
        self_switch=bool(move.self_switch),
        secondary=bool(move.secondary),
    )


def _assumed_stab(type_: PokemonType, category: MoveCategory) -> Attack:
    return Attack(
        id="assumedstab",
        type=type_,
        category=category,
        base_power=ASSUMED_STAB_POWER,
        accuracy=1.0,
        priority=0,
        hits=1.0,
        fixed=None,
        contact=False,
        recoil=0.0,
        drain=0.0,
        self_drop=0,
        self_destruct=False,
        charge=False,
        recharge=False,
        self_switch=False,
        secondary=False,
    )


@cache
def random_battle_sets(gen: int) -> dict[str, Any]:
    """Showdown's random-battle data for ``gen`` (species -> level, move pools, abilities).

    Empty when the installed Showdown has no such file.
    """
    try:
        folder = showdown_package_dir(install=False, quiet=True) / "data" / "random-battles"
        for name in ("sets.json", "data.json"):
            path = folder / f"gen{gen}" / name
            if path.exists():
                return json.loads(path.read_text())  # type: ignore[no-any-return]
    except Exception:  # no installed Showdown data: fall back to the opponent's own types
        return {}
    return {}


@cache
def _random_pool(gen: int, species: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(move ids, ability ids) a random-battle set of ``species`` may have."""
    entry = random_battle_sets(gen).get(species)
    if not entry:
        return (), ()
    moves: set[str] = set()
    abilities: set[str] = set()
    for role in entry.get("sets", []):
        moves.update(to_id(m) for m in role.get("movepool", []))
        abilities.update(to_id(a) for a in role.get("abilities", []))
    if "moves" in entry:  # older generations' layout
        moves.update(to_id(m) for m in entry["moves"])
    return tuple(sorted(moves)), tuple(sorted(abilities))


def _boost_multiplier(stage: int) -> float:
    return (2 + stage) / 2 if stage >= 0 else 2 / (2 - stage)


# --------------------------------------------------------------------------- combatants


@dataclass
class Combatant:
    """One Pokémon as the damage estimate sees it (ours: real stats; theirs: estimated)."""

    mon: Pokemon
    stats: dict[str, float]
    max_hp: float
    hp: float  # fraction of max HP
    types: tuple[PokemonType, ...]
    original_types: tuple[PokemonType, ...]
    tera_type: PokemonType | None
    terastallized: bool
    abilities: tuple[str, ...]  # known ability, or the candidates
    item: str | None  # None when unknown
    boosts: dict[str, int]
    status: Status | None
    level: int
    attacks: list[tuple[Attack, float]]  # (attack, weight: 1 known, <1 possible)
    ours: bool

    def grounded(self) -> bool:
        if PokemonType.FLYING in self.types or self.item == "airballoon":
            return False
        return "levitate" not in self.abilities

    def has_ability(self, ability: str) -> float:
        """Chance that this Pokémon has ``ability`` (uniform over candidates)."""
        if not self.abilities:
            return 0.0
        return self.abilities.count(ability) / len(self.abilities)

    def as_tera(self) -> Combatant:
        """This Pokémon after Terastallizing (a copy)."""
        if self.tera_type is None or self.terastallized:
            return self
        types = self.types if self.tera_type == PokemonType.STELLAR else (self.tera_type,)
        return Combatant(**{**self.__dict__, "types": types, "terastallized": True})


class Model:
    """Damage, speed and matchup estimates for one decision."""

    def __init__(self, battle: AbstractBattle):
        self.battle = battle
        self.gen = battle.gen
        self.type_chart = GenData.from_gen(self.gen).type_chart
        tag = (battle.format or battle.battle_tag or "").lower()
        self.random_format = "random" in tag
        self.weather = next(iter(battle.weather), None)
        self.weather_id = to_id(self.weather.name) if self.weather is not None else ""
        self.terrain_id = next(
            (to_id(f.name) for f in battle.fields if f.name.endswith("_TERRAIN")), ""
        )
        self.trick_room = Field.TRICK_ROOM in battle.fields
        self._tera_types = self._request_tera_types(battle)
        self._combatants: dict[int, Combatant] = {}

    # ----------------------------------------------------------------- building
    @staticmethod
    def _request_tera_types(battle: AbstractBattle) -> dict[str, PokemonType]:
        request = battle.last_request or {}
        found: dict[str, PokemonType] = {}
        for entry in (request.get("side") or {}).get("pokemon", []):
            tera = entry.get("teraType")
            if tera:
                with contextlib.suppress(ValueError, KeyError):
                    found[entry["ident"].split(": ", 1)[-1]] = PokemonType.from_name(tera)
        return found

    def combatant(self, mon: Pokemon, ours: bool) -> Combatant:
        key = id(mon)
        found = self._combatants.get(key)
        if found is None:
            found = self._build(mon, ours)
            self._combatants[key] = found
        return found

    def _build(self, mon: Pokemon, ours: bool) -> Combatant:
        level = mon.level or 100
        base = mon.base_stats
        stats: dict[str, float] = {}
        if ours and mon.stats and mon.stats.get("atk"):
            stats = {k: float(v) for k, v in mon.stats.items() if v}
            max_hp = float(mon.max_hp or self._stat_hp(base["hp"], level, 31))
        else:
            evs = RANDOM_BATTLE_EVS if self.random_format else TEAM_FORMAT_EVS
            for stat in ("atk", "def", "spa", "spd", "spe"):
                stats[stat] = math.floor((2 * base[stat] + 31 + evs // 4) * level / 100) + 5
            max_hp = float(self._stat_hp(base["hp"], level, evs))
        original = tuple(t for t in (mon.base_types or mon.types) if t is not None)
        if ours:
            tera_type = self._tera_types.get(mon.name) or mon.tera_type
        else:
            tera_type = mon.tera_type if mon.is_terastallized else None
        abilities: tuple[str, ...]
        pool_moves: tuple[str, ...] = ()
        if mon.ability:
            abilities = (mon.ability,)
        else:
            pool_moves, pool_abilities = (
                _random_pool(self.gen, mon.species) if self.random_format else ((), ())
            )
            abilities = pool_abilities or tuple(mon.possible_abilities or ())
        if not ours and not pool_moves and self.random_format:
            pool_moves = _random_pool(self.gen, mon.species)[0]
        item = mon.item
        if item == GenData.from_gen(self.gen).UNKNOWN_ITEM:
            item = None
        combatant = Combatant(
            mon=mon,
            stats=stats,
            max_hp=max(max_hp, 1.0),
            hp=hp_fraction(mon),
            types=tuple(mon.types),
            original_types=original,
            tera_type=tera_type,
            terastallized=mon.is_terastallized,
            abilities=abilities,
            item=item,
            boosts=dict(mon.boosts),
            status=mon.status,
            level=level,
            attacks=[],
            ours=ours,
        )
        combatant.attacks = self._attacks(mon, combatant, ours, pool_moves)
        return combatant

    @staticmethod
    def _stat_hp(base: int, level: int, evs: int) -> int:
        if base == 1:  # Shedinja
            return 1
        return math.floor((2 * base + 31 + evs // 4) * level / 100) + level + 10

    def _attacks(
        self, mon: Pokemon, combatant: Combatant, ours: bool, pool: tuple[str, ...]
    ) -> list[tuple[Attack, float]]:
        known = [(_attack_from_move(m), 1.0) for m in mon.moves.values()]
        if ours or len(known) >= 4:
            return known
        seen = {a.id for a, _ in known}
        attacks = list(known)
        for move_id in pool:
            if move_id in seen:
                continue
            try:
                attack = _attack(move_id, self.gen)
            except Exception:
                continue
            if attack.category != MoveCategory.STATUS and not attack.self_destruct:
                attacks.append((attack, UNREVEALED_MOVE_WEIGHT))
        if not pool:
            physical = combatant.stats["atk"] >= combatant.stats["spa"]
            category = MoveCategory.PHYSICAL if physical else MoveCategory.SPECIAL
            for type_ in combatant.original_types:
                attacks.append((_assumed_stab(type_, category), UNREVEALED_MOVE_WEIGHT))
        return attacks

    # ----------------------------------------------------------------- speed
    def speed(self, c: Combatant) -> float:
        """Speed as Showdown computes it (:func:`pokegym.world.speed.effective_speed`),
        from what this side knows: an unknown item counts as none, and an ability that is
        one of several candidates by its share (the mean over the candidates)."""
        speeds = self._speeds(c)
        return sum(speed for speed, _ in speeds) / len(speeds)

    def action_speed(self, c: Combatant) -> float:
        """What actions of one priority are ordered by, higher first (Trick Room
        included: :func:`pokegym.world.speed.action_speed`), as a mean over candidates."""
        speeds = self._speeds(c)
        return sum(action for _, action in speeds) / len(speeds)

    def _speeds(self, c: Combatant) -> list[tuple[int, int]]:
        """``(getStat('spe'), action speed)`` for each candidate ability of ``c``."""
        mon = c.mon
        side = self.battle.side_conditions if c.ours else self.battle.opponent_side_conditions
        effects = mon.effects
        found = []
        for ability in c.abilities or ("",):
            speed = effective_speed(
                int(c.stats["spe"]),
                boost=c.boosts.get("spe", 0),
                item=c.item or "",
                ability=ability,
                status=c.status.name.lower() if c.status is not None else "",
                tailwind=SideCondition.TAILWIND in side,
                swamp=SideCondition.GRASS_PLEDGE in side,
                weather=self.weather_id,
                terrain=self.terrain_id,
                speed_ability_boost=Effect.PROTOSYNTHESISSPE in effects
                or Effect.QUARKDRIVESPE in effects,
                # poke-env's battle object does not say whether an item was lost on the
                # field (Unburden): an item-less Pokémon may never have held one.
                item_lost=False,
                slow_start=Effect.SLOW_START in effects,
                dynamaxed=mon.is_dynamaxed,
                species=mon.species,
                gen=self.gen,
            )
            found.append((speed, action_speed(speed, self.trick_room)))
        return found

    def moves_first(self, mine: Combatant, theirs: Combatant, priority: int = 0) -> float:
        """1.0 when ``mine`` acts first with a move of ``priority``, 0 second, 0.5 tie."""
        if priority > 0:
            return 1.0
        if priority < 0:
            return 0.0
        ours, other = self.action_speed(mine), self.action_speed(theirs)
        return 1.0 if ours > other else 0.0 if ours < other else 0.5

    # ----------------------------------------------------------------- damage
    def effectiveness(self, attack_type: PokemonType, defender: Combatant) -> float:
        types = defender.types
        return attack_type.damage_multiplier(
            types[0], types[1] if len(types) > 1 else None, type_chart=self.type_chart
        )

    def attack_type(self, attack: Attack, attacker: Combatant) -> PokemonType:
        if attack.id == "terablast" and attacker.terastallized and attacker.tera_type:
            if attacker.tera_type != PokemonType.STELLAR:
                return attacker.tera_type
        if attack.id == "weatherball" and self.weather is not None:
            return {
                Weather.SUNNYDAY: PokemonType.FIRE,
                Weather.DESOLATELAND: PokemonType.FIRE,
                Weather.RAINDANCE: PokemonType.WATER,
                Weather.PRIMORDIALSEA: PokemonType.WATER,
                Weather.SANDSTORM: PokemonType.ROCK,
                Weather.SNOW: PokemonType.ICE,
                Weather.HAIL: PokemonType.ICE,
            }.get(self.weather, attack.type)
        return attack.type

    def damage(self, attack: Attack, attacker: Combatant, defender: Combatant) -> float:
        """Expected damage of one use (hit assumed) as a fraction of ``defender``'s max HP."""
        if attack.category == MoveCategory.STATUS:
            return 0.0
        move_type = self.attack_type(attack, attacker)
        effectiveness = self.effectiveness(move_type, defender)
        if attack.id == "freezedry" and PokemonType.WATER in defender.types:
            effectiveness *= 4
        if attack.id == "thousandarrows" and effectiveness == 0:
            effectiveness = 1.0
        immune = _absorb_chance(defender, move_type)
        if move_type == PokemonType.GROUND and defender.item == "airballoon":
            immune = 1.0
        if defender.has_ability("wonderguard") and effectiveness <= 1:
            immune = 1.0
        if attack.priority > 0 and defender.has_ability("armortail") + defender.has_ability(
            "dazzling"
        ):
            immune = max(immune, 0.5)
        if effectiveness == 0 or immune >= 1.0:
            return 0.0
        reach = 1.0 - immune
        if attack.fixed == "level":
            return reach * attacker.level / defender.max_hp
        if isinstance(attack.fixed, int) and attack.fixed > 0:
            return reach * attack.fixed / defender.max_hp
        if attack.id in ("superfang", "ruination", "naturesmadness"):
            return reach * defender.hp / 2
        if attack.id == "finalgambit":
            return reach * attacker.hp * attacker.max_hp / defender.max_hp
        power = self._base_power(attack, attacker, defender)
        if power <= 0:
            return 0.0
        category = attack.category
        if attack.id == "terablast" and attacker.terastallized:
            physical = _stat(attacker, "atk") > _stat(attacker, "spa")
            category = MoveCategory.PHYSICAL if physical else MoveCategory.SPECIAL
        physical = category == MoveCategory.PHYSICAL
        if attack.id == "foulplay":
            attack_stat = _stat(defender, "atk")
        elif attack.id == "bodypress":
            attack_stat = _stat(attacker, "def")
        else:
            attack_stat = _stat(attacker, "atk" if physical else "spa")
        targets_def = physical or attack.id in ("psyshock", "psystrike", "secretsword")
        defense_stat = _stat(defender, "def" if targets_def else "spd")
        if physical:
            attack_stat *= 1 + attacker.has_ability("hugepower") + attacker.has_ability("purepower")
            if attacker.item == "choiceband":
                attack_stat *= 1.5
        elif attacker.item == "choicespecs":
            attack_stat *= 1.5
        if defender.item == "assaultvest" and not targets_def:
            defense_stat *= 1.5
        if defender.item == "eviolite":
            defense_stat *= 1.5
        base = math.floor(2 * attacker.level / 5 + 2) * power * attack_stat / defense_stat / 50 + 2
        modifier = RANDOM_FACTOR * effectiveness * reach * attack.hits
        modifier *= self._stab(move_type, attacker)
        if attacker.status == Status.BRN and physical and attack.id != "facade":
            modifier *= 1 - 0.5 * (1 - attacker.has_ability("guts"))
        if attacker.status is not None and physical:
            modifier *= 1 + 0.5 * attacker.has_ability("guts")
        modifier *= self._weather_modifier(move_type)
        modifier *= self._item_modifier(attacker, effectiveness)
        modifier *= self._ability_modifier(attack, attacker, defender, move_type, power)
        modifier *= self._defender_modifier(attack, defender, move_type, effectiveness, physical)
        side = (
            self.battle.opponent_side_conditions if attacker.ours else self.battle.side_conditions
        )
        if (SideCondition.REFLECT in side and physical) or (
            SideCondition.LIGHT_SCREEN in side and not physical
        ):
            modifier *= 0.5
        elif SideCondition.AURORA_VEIL in side:
            modifier *= 0.5
        return base * modifier / defender.max_hp

    def _base_power(self, attack: Attack, attacker: Combatant, defender: Combatant) -> float:
        power = float(attack.base_power)
        move_id = attack.id
        if move_id == "knockoff" and defender.item != "":
            power *= 1.5
        elif move_id in ("facade",) and attacker.status is not None:
            power *= 2
        elif move_id in ("hex", "infernalparade", "bittermalice") and defender.status is not None:
            power *= 2
        elif move_id == "acrobatics" and attacker.item in ("", None):
            power *= 2
        elif move_id in ("eruption", "waterspout", "dragonenergy"):
            power = max(1.0, power * attacker.hp)
        elif move_id in ("storedpower", "powertrip"):
            power = 20 + 20 * sum(v for v in attacker.boosts.values() if v > 0)
        elif move_id in ("fakeout", "firstimpression") and not attacker.mon.first_turn:
            return 0.0
        elif move_id == "dreameater" and defender.status != Status.SLP:
            return 0.0
        elif move_id == "poltergeist" and defender.item == "":
            return 0.0
        elif move_id in ("lastresort", "belch", "synchronoise"):
            power *= 0.5
        elif move_id == "boltbeak" or move_id == "fishiousrend":
            power *= 1.5 if self.moves_first(attacker, defender) >= 1 else 1
        if attack.charge and not (
            move_id in ("solarbeam", "solarblade") and self.weather == Weather.SUNNYDAY
        ):
            power *= 0.5
        return power

    def _stab(self, move_type: PokemonType, attacker: Combatant) -> float:
        adaptability = attacker.has_ability("adaptability")
        original = move_type in attacker.original_types
        if attacker.terastallized and attacker.tera_type == move_type:
            return 2.0 + 0.25 * adaptability if original else 1.5 + 0.5 * adaptability
        if original:
            return 1.5 + 0.5 * adaptability
        if (
            attacker.terastallized
            and attacker.tera_type == PokemonType.STELLAR
            and move_type is not None
        ):
            return 1.2
        return 1.0

    def _weather_modifier(self, move_type: PokemonType) -> float:
        if self.weather in (Weather.SUNNYDAY, Weather.DESOLATELAND):
            return {PokemonType.FIRE: 1.5, PokemonType.WATER: 0.5}.get(move_type, 1.0)
        if self.weather in (Weather.RAINDANCE, Weather.PRIMORDIALSEA):
            return {PokemonType.WATER: 1.5, PokemonType.FIRE: 0.5}.get(move_type, 1.0)
        return 1.0

    @staticmethod
    def _item_modifier(attacker: Combatant, effectiveness: float) -> float:
        if attacker.item == "lifeorb":
            return 1.3
        if attacker.item == "expertbelt" and effectiveness > 1:
            return 1.2
        return 1.0

    @staticmethod
    def _ability_modifier(
        attack: Attack,
        attacker: Combatant,
        defender: Combatant,
        move_type: PokemonType,
        power: float,
    ) -> float:
        modifier = 1.0
        if power <= 60:
            modifier += 0.5 * attacker.has_ability("technician")
        if attack.contact:
            modifier += 0.3 * attacker.has_ability("toughclaws")
        if attack.secondary:
            modifier += 0.3 * attacker.has_ability("sheerforce")
        if attack.hits > 1 and attack.id not in ("populationbomb",):
            modifier += (5 / attack.hits - 1) * attacker.has_ability("skilllink") * 0.6
        if attacker.hp <= 1 / 3:
            pinch = {
                PokemonType.FIRE: "blaze",
                PokemonType.WATER: "torrent",
                PokemonType.GRASS: "overgrow",
                PokemonType.BUG: "swarm",
            }.get(move_type)
            if pinch:
                modifier += 0.5 * attacker.has_ability(pinch)
        return modifier

    @staticmethod
    def _defender_modifier(
        attack: Attack,
        defender: Combatant,
        move_type: PokemonType,
        effectiveness: float,
        physical: bool,
    ) -> float:
        modifier = 1.0
        if defender.hp >= 1.0:
            modifier -= 0.5 * (
                defender.has_ability("multiscale") + defender.has_ability("shadowshield")
            )
        if move_type in (PokemonType.FIRE, PokemonType.ICE):
            modifier -= 0.5 * defender.has_ability("thickfat")
        if move_type == PokemonType.FIRE:
            modifier -= 0.5 * defender.has_ability("heatproof")
            modifier -= 0.5 * defender.has_ability("waterbubble")
        if move_type == PokemonType.GHOST:
            modifier -= 0.5 * defender.has_ability("purifyingsalt")
        if effectiveness > 1:
            modifier -= 0.25 * (
                defender.has_ability("filter")
                + defender.has_ability("solidrock")
                + defender.has_ability("prismarmor")
            )
        if physical:
            modifier -= 0.5 * defender.has_ability("furcoat")
        else:
            modifier -= 0.5 * defender.has_ability("icescales")
        if attack.contact:
            modifier -= 0.5 * defender.has_ability("fluffy")
        return max(modifier, 0.25)

    # ----------------------------------------------------------------- aggregates
    def best_damage(self, attacker: Combatant, defender: Combatant) -> tuple[Attack | None, float]:
        """The attacker's most damaging likely attack and its expected damage (accuracy in)."""
        best: Attack | None = None
        best_damage = 0.0
        for attack, weight in attacker.attacks:
            value = self.damage(attack, attacker, defender) * attack.accuracy * weight
            if value > best_damage:
                best, best_damage = attack, value
        return best, best_damage

    def hazard_damage(self, c: Combatant, side: dict[SideCondition, int]) -> float:
        """HP fraction ``c`` loses to entry hazards on ``side`` when it switches in."""
        if c.item == "heavydutyboots" or c.has_ability("magicguard") >= 1:
            return 0.0
        loss = 0.0
        if SideCondition.STEALTH_ROCK in side:
            loss += 0.125 * self.effectiveness(PokemonType.ROCK, c)
        layers = side.get(SideCondition.SPIKES, 0)
        if layers and c.grounded():
            loss += {1: 1 / 8, 2: 1 / 6}.get(layers, 1 / 4)
        if (
            SideCondition.TOXIC_SPIKES in side
            and c.grounded()
            and c.status is None
            and not {PokemonType.POISON, PokemonType.STEEL} & set(c.types)
        ):
            loss += 0.1  # toxic poison: a few turns of damage
        return loss

    def matchup(
        self,
        mine: Combatant,
        theirs: Combatant,
        *,
        my_hp: float | None = None,
        their_hp: float | None = None,
    ) -> float:
        """How well ``mine`` fares against ``theirs``: share of the other's remaining HP
        each takes per turn (ours minus theirs, each capped at a knockout), plus speed
        and who knocks out whom first."""
        my_hp = mine.hp if my_hp is None else my_hp
        their_hp = theirs.hp if their_hp is None else their_hp
        if my_hp <= 0:
            return -2.0 - KO_FIRST_WEIGHT
        _, out = self.best_damage(mine, theirs)
        _, taken = self.best_damage(theirs, mine)
        offense = min(out / max(their_hp, 0.01), 1.0)
        defense = min(taken / max(my_hp, 0.01), 1.0)
        first = self.moves_first(mine, theirs)
        score = offense - defense + SPEED_WEIGHT * (2 * first - 1)
        if offense >= 1.0 and first >= 1.0:
            score += KO_FIRST_WEIGHT
        elif defense >= 1.0 and first <= 0.0:
            score -= KO_FIRST_WEIGHT
        return score


def _stat(c: Combatant, stat: str) -> float:
    return c.stats[stat] * _boost_multiplier(c.boosts.get(stat, 0))


def _absorb_chance(defender: Combatant, move_type: PokemonType) -> float:
    return sum(
        defender.has_ability(ability)
        for ability, absorbed in ABSORBING_ABILITIES.items()
        if absorbed == move_type
    )
