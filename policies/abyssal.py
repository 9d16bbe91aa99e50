"""``abyssal``: a rule-based heuristic bot in the Abyssal tradition.

Every decision starts from one small model of the position: expected damage of
every known or likely attack both ways (a simplified damage formula over real or
estimated stats, types including Tera types, STAB, boosts, burn, screens, weather,
cheap item and ability effects, accuracy), who moves first, and how many hits each
side needs. On top of it, rules run in a fixed order, the first that fires decides:

1. **Force switch**: the switch-in with the best matchup after hazard damage.
2. **Finish**: a move that knocks the opponent out before it can act (priority
   moves included) is used at once.
3. **Switch out** of a bad matchup when a clearly better switch-in exists (never
   when trapped; a recent voluntary switch raises the bar, against ping-pong;
   the switch-in is charged the hazards and the hit it takes on the way in).
4. **Entry hazards**: Stealth Rock, Spikes, Toxic Spikes, Sticky Web while the
   opponent has Pokémon left to hit and the layer is not maxed.
5. **Hazard removal**: Rapid Spin, Mortal Spin, Defog, Tidy Up, Court Change when
   our side has hazards, we have Pokémon left to protect and removal can work.
6. **Recovery** when low and healing outpaces the damage taken.
7. **Setup** (Swords Dance, Nasty Plot, Dragon Dance, ...) when healthy, not
   threatened with a 2HKO and not boosted enough already.
8. **Status** (Toxic, Will-O-Wisp, Thunder Wave, sleep) on targets it can affect,
   when our attacks are not already doing the job.
9. **Attack** with the best expected-value move (Terastallizing when it pays).

Team Preview leads with the Pokémon with the best average matchup against the
opponent's six. Opponent sets: revealed moves first; in random battles the
species' move pools, abilities and levels from Showdown's own random-battle data;
otherwise STAB attacks of its types are assumed.
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
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder, SingleBattleOrder

from pokegym.world.data import to_id
from pokegym.world.speed import action_speed, effective_speed
from policies.base import Policy

# --------------------------------------------------------------------------- constants

RANDOM_BATTLE_EVS = 85
"""EVs Showdown's random-battle generator gives every stat (neutral nature, 31 IVs)."""
TEAM_FORMAT_EVS = 128
"""Assumed EVs per stat for opponents in team formats: the middle of 0-252 (sets unknown)."""
ASSUMED_STAB_POWER = 85
"""Base power of the STAB attack assumed for an opponent whose moves are unknown."""
RANDOM_FACTOR = 0.925
"""Mean of the damage roll (uniform 0.85-1.00)."""
UNREVEALED_MOVE_WEIGHT = 0.85
"""A possible but unrevealed opponent move counts for this share of its damage: the
opponent may not carry it (random sets carry 4 of a pool of 5-10)."""

SPEED_WEIGHT = 0.25
"""Matchup points for moving first (subtracted when moving second)."""
KO_FIRST_WEIGHT = 0.75
"""Matchup points for knocking the other side out before it can act."""
SWITCH_THRESHOLD = -0.35
"""Matchups below this are bad enough to consider switching out."""
SWITCH_MARGIN = 0.55
"""A switch-in must beat staying in by this much (it gives the opponent a free turn)."""
PING_PONG_MARGIN = 0.6
"""Extra margin when we switched voluntarily the turn before: stops endless swapping."""
BOOSTED_STAY_MARGIN = 0.3
"""Extra margin per positive boost stage on the active Pokémon (boosts are lost on switching)."""

HAZARD_MIN_TARGETS = 2
"""Set hazards only while the opponent has at least this many Pokémon that could still
switch in (the active one included): each switch-in pays them."""
HAZARD_REMOVAL_MIN_MONS = 2
"""Remove our hazards only while we have at least this many Pokémon left."""
TOXIC_SPIKES_MIN_TARGETS = 3
"""Toxic Spikes pay less (Poison and Steel types are immune; one Poison type absorbs them)."""

RECOVER_BELOW = 0.55
"""Use a healing move only at or below this HP fraction."""
REST_BELOW = 0.4
"""Rest (two turns asleep) only at or below this HP fraction."""

SETUP_MIN_HP = 0.6
"""Set up only with at least this HP fraction."""
SETUP_MAX_THREAT = 0.45
"""Set up only when the opponent's best hit takes less than this share of our HP (no
2HKO): the boost must live long enough to be used."""
SETUP_MAX_STAGE = 2
"""Stop boosting an attacking stat at this stage (+2 already doubles damage)."""

STATUS_MIN_TARGET_HP = 0.5
"""Spread status only onto targets with at least this HP fraction (it needs time to pay)."""
STATUS_IF_DAMAGE_BELOW = 0.5
"""Use status only when our best attack takes less than this share of the target's HP."""

TERA_OFFENSE_GAIN = 1.35
"""Terastallize when it multiplies our best damage by at least this much..."""
TERA_DEFENSE_GAIN = 0.6
"""...or cuts the opponent's best damage to at most this share (without losing offense)."""
TERA_DEFENSE_MIN_HP = 0.5
"""A defensive Tera is only worth it on a Pokémon with at least this HP fraction."""

KO_BONUS = 0.5
"""Move value added for a likely knockout (one fewer opponent is worth more than damage)."""
RECOIL_WEIGHT = 0.5
"""Share of recoil damage counted against a move (our HP matters less than theirs)."""
SELF_DROP_PENALTY = 0.04
"""Move value lost per stage of self-inflicted stat drop (Draco Meteor, Close Combat)."""
PIVOT_BONUS = 0.08
"""Move value added to U-turn and Volt Switch when a good switch-in is available."""

HAZARD_CONDITIONS = {
    "stealthrock": (SideCondition.STEALTH_ROCK, 1),
    "spikes": (SideCondition.SPIKES, 3),
    "toxicspikes": (SideCondition.TOXIC_SPIKES, 2),
    "stickyweb": (SideCondition.STICKY_WEB, 1),
}
"""Hazard-setting moves: the side condition they set and its maximum layers."""
HAZARD_ORDER = ("stealthrock", "spikes", "stickyweb", "toxicspikes")
"""Which hazard to set first when several are possible (most damage first)."""
HAZARD_WEIGHT = {
    SideCondition.STEALTH_ROCK: 1.0,
    SideCondition.SPIKES: 0.6,
    SideCondition.TOXIC_SPIKES: 0.5,
    SideCondition.STICKY_WEB: 0.6,
}
"""How much a hazard (per layer for Spikes) hurts the side it is on, for removal choices."""
REMOVAL_MOVES = ("rapidspin", "mortalspin", "tidyup", "defog", "courtchange")
"""Moves that clear hazards from our side (Defog and Court Change also touch theirs)."""

SETUP_STATS = {"atk", "spa", "spe"}
"""Stats whose boosts make a move count as setup (defensive-only boosts do not)."""

# Ability and item effects Showdown implements as code (not data): only the cheap,
# common ones that change which move is best.
ABSORBING_ABILITIES = {
    "levitate": PokemonType.GROUND,
    "eartheater": PokemonType.GROUND,
    "flashfire": PokemonType.FIRE,
    "wellbakedbody": PokemonType.FIRE,
    "voltabsorb": PokemonType.ELECTRIC,
    "lightningrod": PokemonType.ELECTRIC,
    "motordrive": PokemonType.ELECTRIC,
    "waterabsorb": PokemonType.WATER,
    "stormdrain": PokemonType.WATER,
    "dryskin": PokemonType.WATER,
    "sapsipper": PokemonType.GRASS,
}
STATUS_IMMUNE_ABILITIES = {
    Status.TOX: {"immunity", "pastelveil", "poisonheal", "purifyingsalt", "comatose", "guts"},
    Status.PSN: {"immunity", "pastelveil", "poisonheal", "purifyingsalt", "comatose", "guts"},
    Status.BRN: {
        "waterveil",
        "waterbubble",
        "thermalexchange",
        "purifyingsalt",
        "comatose",
        "flashfire",
        "wellbakedbody",
        "guts",
    },
    Status.PAR: {
        "limber",
        "purifyingsalt",
        "comatose",
        "voltabsorb",
        "lightningrod",
        "motordrive",
        "guts",
        "quickfeet",
    },
    Status.SLP: {"insomnia", "vitalspirit", "sweetveil", "purifyingsalt", "comatose"},
}
"""Abilities that make a status fail, get absorbed, or backfire (Guts, Quick Feet)."""
STATUS_IMMUNE_TYPES = {
    Status.TOX: {PokemonType.POISON, PokemonType.STEEL},
    Status.PSN: {PokemonType.POISON, PokemonType.STEEL},
    Status.BRN: {PokemonType.FIRE},
    Status.PAR: {PokemonType.ELECTRIC},
    Status.SLP: set(),
}
REFLECTING_ABILITIES = {"magicbounce", "goodasgold"}
"""Abilities that bounce or block status moves aimed at their holder."""


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
        from pokegym.showdown.install import showdown_package_dir

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
            hp=mon.current_hp_fraction,
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


# --------------------------------------------------------------------------- policy


class AbyssalPolicy(Policy):
    """Rule-based heuristic bot (see the module docstring for the rules, in order).

    Args:
        seed: seed of ``self.rng`` (only used to break exact ties).
        switch_threshold: matchup below which switching out is considered.
        switch_margin: how much better a switch-in must be.
        hazards, setup, status, tera, switching: turn single rules off (for ablations).
    """

    name = "abyssal"

    def __init__(
        self,
        seed: int | None = None,
        *,
        switch_threshold: float = SWITCH_THRESHOLD,
        switch_margin: float = SWITCH_MARGIN,
        hazards: bool = True,
        setup: bool = True,
        status: bool = True,
        tera: bool = True,
        switching: bool = True,
    ):
        super().__init__(seed)
        self.switch_threshold = switch_threshold
        self.switch_margin = switch_margin
        self.use_hazards = hazards
        self.use_setup = setup
        self.use_status = status
        self.use_tera = tera
        self.use_switching = switching
        self._last_switch_turn: dict[str, int] = {}
        #: The rule that made the last decision (for tests and analysis).
        self.last_rule = ""

    # ----------------------------------------------------------------- entry points
    def choose(self, battle: AbstractBattle) -> BattleOrder:
        order, rule = self._decide(battle)
        self.last_rule = rule
        return order

    def team_preview(self, battle: AbstractBattle) -> str:
        team = list(battle.team.values())
        opponents = list(battle.teampreview_opponent_team or [])
        if not team:
            return "/team 1"
        if not opponents:
            return super().team_preview(battle)
        model = Model(battle)
        scores = []
        for index, mon in enumerate(team):
            mine = model.combatant(mon, ours=True)
            total = sum(model.matchup(mine, model.combatant(o, ours=False)) for o in opponents)
            scores.append((total / len(opponents), -index))
        ranked = sorted(range(len(team)), key=lambda i: scores[i], reverse=True)
        lead = ranked[0]
        order = [lead] + [i for i in range(len(team)) if i != lead]
        return "/team " + "".join(str(i + 1) for i in order)

    # ----------------------------------------------------------------- decision
    def _decide(self, battle: AbstractBattle) -> tuple[BattleOrder, str]:
        active = battle.active_pokemon
        opponent = battle.opponent_active_pokemon
        moves = list(battle.available_moves)
        switches = list(battle.available_switches)
        if active is None or opponent is None or (not moves and switches):
            if switches:
                return self._best_switch_order(battle, switches, free=True), "forced_switch"
            return DefaultBattleOrder(), "default"
        if not moves:
            return DefaultBattleOrder(), "default"
        if len(moves) == 1 and moves[0].id in ("struggle", "recharge"):
            return SingleBattleOrder(moves[0]), "forced_move"

        model = Model(battle)
        me = model.combatant(active, ours=True)
        them = model.combatant(opponent, ours=False)
        ctx = _Context(battle, model, me, them, moves, switches)

        # 2. Finish the opponent when a move knocks it out before it can act.
        finisher = ctx.finishing_move()
        if finisher is not None:
            return self._attack_order(ctx, finisher), "finish"

        # 3. Switch out of a bad matchup.
        if self.use_switching and switches and not battle.trapped:
            choice = self._switch_out(ctx)
            if choice is not None:
                self._last_switch_turn[battle.battle_tag] = battle.turn
                return SingleBattleOrder(choice), "switch_out"

        acts_before_ko = not ctx.dies_before_acting()
        if self.use_hazards and acts_before_ko:
            move = ctx.hazard_move()
            if move is not None:
                return SingleBattleOrder(move), "hazard"
            move = ctx.removal_move()
            if move is not None:
                return SingleBattleOrder(move), "hazard_removal"
        if acts_before_ko:
            move = ctx.recovery_move()
            if move is not None:
                return SingleBattleOrder(move), "recovery"
        if self.use_setup and acts_before_ko:
            move = ctx.setup_move()
            if move is not None:
                return SingleBattleOrder(move, terastallize=self._tera_defensive(ctx)), "setup"
        if self.use_status and acts_before_ko:
            move = ctx.status_move()
            if move is not None:
                return SingleBattleOrder(move), "status"
        return self._attack_order(ctx, None), "attack"

    # ----------------------------------------------------------------- attacking
    def _attack_order(self, ctx: _Context, chosen: Move | None) -> BattleOrder:
        battle = ctx.battle
        if chosen is not None:  # a finishing move needs no Tera
            return SingleBattleOrder(chosen)
        move, value = ctx.best_move(ctx.me)
        if move is None:
            return self._fallback(ctx)
        if self.use_tera and battle.can_tera and ctx.me.tera_type is not None:
            tera_me = ctx.me.as_tera()
            tera_move, tera_value = ctx.best_move(tera_me)
            if tera_move is not None and self._tera_pays(ctx, tera_me, value, tera_value):
                return SingleBattleOrder(tera_move, terastallize=True)
        return SingleBattleOrder(move)

    def _tera_pays(
        self, ctx: _Context, tera_me: Combatant, value: float, tera_value: float
    ) -> bool:
        model, me, them = ctx.model, ctx.me, ctx.them
        if tera_me.tera_type == PokemonType.STELLAR:
            return ctx.remaining_mons() == 1
        _, taken = model.best_damage(them, me)
        _, tera_taken = model.best_damage(them, tera_me)
        kills_now = ctx.kills(me)
        kills_tera = ctx.kills(tera_me)
        if kills_tera and not kills_now and tera_taken <= taken * 1.25:
            return True
        if value > 0 and tera_value >= value * TERA_OFFENSE_GAIN and tera_taken <= taken:
            return True
        if (
            me.hp >= TERA_DEFENSE_MIN_HP
            and taken > 0
            and tera_taken <= taken * TERA_DEFENSE_GAIN
            and tera_value >= value * 0.8
        ):
            return True
        return ctx.remaining_mons() == 1 and tera_value >= value and tera_taken <= taken

    def _tera_defensive(self, ctx: _Context) -> bool:
        if not (self.use_tera and ctx.battle.can_tera and ctx.me.tera_type is not None):
            return False
        tera_me = ctx.me.as_tera()
        if tera_me.tera_type == PokemonType.STELLAR:
            return False
        _, taken = ctx.model.best_damage(ctx.them, ctx.me)
        _, tera_taken = ctx.model.best_damage(ctx.them, tera_me)
        return taken > 0.2 and tera_taken <= taken * TERA_DEFENSE_GAIN

    def _fallback(self, ctx: _Context) -> BattleOrder:
        """No move with a positive value: any usable status move, else a switch, else move 1."""
        for move in ctx.moves:
            if move.category == MoveCategory.STATUS and ctx.status_usable(move):
                return SingleBattleOrder(move)
        if ctx.switches and not ctx.battle.trapped:
            return self._best_switch_order(ctx.battle, ctx.switches, free=False)
        return SingleBattleOrder(ctx.moves[0])

    # ----------------------------------------------------------------- switching
    def _switch_out(self, ctx: _Context) -> Pokemon | None:
        stay = ctx.model.matchup(ctx.me, ctx.them)
        if stay >= self.switch_threshold:
            return None
        best, best_score = self._rank_switches(ctx, free=False)
        if best is None:
            return None
        margin = self.switch_margin
        last = self._last_switch_turn.get(ctx.battle.battle_tag)
        if last is not None and ctx.battle.turn - last <= 1:
            margin += PING_PONG_MARGIN
        margin += BOOSTED_STAY_MARGIN * sum(
            v for k, v in ctx.me.boosts.items() if v > 0 and k in SETUP_STATS
        )
        if best_score - stay >= margin:
            return best
        return None

    def _rank_switches(self, ctx: _Context, *, free: bool) -> tuple[Pokemon | None, float]:
        model, them = ctx.model, ctx.them
        incoming, _ = (None, 0.0) if free else model.best_damage(them, ctx.me)
        best: Pokemon | None = None
        best_score = -math.inf
        for mon in ctx.switches:
            candidate = model.combatant(mon, ours=True)
            hp = candidate.hp - model.hazard_damage(candidate, ctx.battle.side_conditions)
            if incoming is not None:
                hp -= model.damage(incoming, them, candidate) * incoming.accuracy
            score = model.matchup(candidate, them, my_hp=hp)
            if score > best_score:
                best, best_score = mon, score
        return best, best_score

    def _best_switch_order(
        self, battle: AbstractBattle, switches: list[Pokemon], *, free: bool
    ) -> BattleOrder:
        opponent = battle.opponent_active_pokemon
        if opponent is None:
            return SingleBattleOrder(max(switches, key=lambda m: m.current_hp_fraction))
        model = Model(battle)
        them = model.combatant(opponent, ours=False)
        best, best_score = switches[0], -math.inf
        for mon in switches:
            candidate = model.combatant(mon, ours=True)
            hp = candidate.hp - model.hazard_damage(candidate, battle.side_conditions)
            score = model.matchup(candidate, them, my_hp=hp)
            if score > best_score:
                best, best_score = mon, score
        return SingleBattleOrder(best)


class _Context:
    """Per-decision facts shared by the rules."""

    def __init__(
        self,
        battle: AbstractBattle,
        model: Model,
        me: Combatant,
        them: Combatant,
        moves: list[Move],
        switches: list[Pokemon],
    ):
        self.battle = battle
        self.model = model
        self.me = me
        self.them = them
        self.moves = moves
        self.switches = switches
        self._incoming: float | None = None

    # ----------------------------------------------------------------- threat
    def incoming(self) -> float:
        """The opponent's best expected hit on our active Pokémon (fraction of max HP)."""
        if self._incoming is None:
            self._incoming = self.model.best_damage(self.them, self.me)[1]
        return self._incoming

    def dies_before_acting(self) -> bool:
        """The opponent outspeeds and its best hit knocks our active Pokémon out."""
        return self.model.moves_first(self.me, self.them) <= 0.0 and self.incoming() >= self.me.hp

    def remaining_mons(self) -> int:
        return sum(1 for m in self.battle.team.values() if not m.fainted)

    def opponent_remaining(self) -> int:
        size = len(self.battle.teampreview_opponent_team or []) or 6
        fainted = sum(1 for m in self.battle.opponent_team.values() if m.fainted)
        return max(size - fainted, 0)

    # ----------------------------------------------------------------- attacks
    def move_value(self, move: Move, me: Combatant) -> float:
        """Expected value of using ``move``: damage dealt (capped at the target's HP),
        accuracy, a knockout bonus, recoil, drain, self drops and pivoting."""
        attack = _attack_from_move(move)
        if attack.category == MoveCategory.STATUS:
            return 0.0
        them = self.them
        damage = self.model.damage(attack, me, them)
        if damage <= 0:
            return 0.0
        dealt = min(damage, them.hp)
        value = dealt * attack.accuracy
        if damage >= them.hp:
            first = self.model.moves_first(me, them, attack.priority)
            survives = self.incoming() < me.hp
            value += KO_BONUS * attack.accuracy * (1.0 if first or survives else 0.3)
        value -= RECOIL_WEIGHT * attack.recoil * dealt
        value += 0.5 * attack.drain * dealt * (1 - me.hp)
        if damage < them.hp:
            value -= SELF_DROP_PENALTY * attack.self_drop
        if attack.self_destruct:
            value *= 0.3 if me.hp > 0.3 and not self.dies_before_acting() else 1.0
        if attack.recharge and damage < them.hp:
            value *= 0.6
        if attack.self_switch and self.switches and not self.battle.trapped:
            value += PIVOT_BONUS
        if attack.id in ("suckerpunch", "thunderclap"):
            value *= 0.75
        if attack.id == "focuspunch":
            value *= 0.4
        return value

    def best_move(self, me: Combatant) -> tuple[Move | None, float]:
        best: Move | None = None
        best_value = 0.0
        for move in self.moves:
            value = self.move_value(move, me)
            if value > best_value:
                best, best_value = move, value
        return best, best_value

    def kills(self, me: Combatant) -> bool:
        """Some move likely knocks the opponent out (before or after its reply)."""
        for move in self.moves:
            attack = _attack_from_move(move)
            if attack.accuracy >= 0.8 and self.model.damage(attack, me, self.them) >= self.them.hp:
                return True
        return False

    def finishing_move(self) -> Move | None:
        """The most reliable move that knocks the opponent out before it acts."""
        best: Move | None = None
        best_key = (0.0, 0.0)
        for move in self.moves:
            attack = _attack_from_move(move)
            if attack.category == MoveCategory.STATUS or attack.self_destruct:
                continue
            first = self.model.moves_first(self.me, self.them, attack.priority)
            if first < 1.0:
                continue
            damage = self.model.damage(attack, self.me, self.them)
            if damage < self.them.hp * 1.05:
                continue
            key = (attack.accuracy, -attack.recoil - 0.1 * attack.self_drop)
            if attack.id in ("suckerpunch", "thunderclap"):
                key = (attack.accuracy * 0.8, key[1])
            if attack.accuracy >= 0.7 and key > best_key:
                best, best_key = move, key
        return best

    # ----------------------------------------------------------------- hazards
    def hazard_move(self) -> Move | None:
        """A hazard to set: the opponent has Pokémon left to hit and the layer is not full."""
        if self.opponent_remaining() < HAZARD_MIN_TARGETS:
            return None
        if self.them.has_ability("magicbounce") > 0:
            return None
        side = self.battle.opponent_side_conditions
        available = {m.id: m for m in self.moves}
        for move_id in HAZARD_ORDER:
            move = available.get(move_id)
            if move is None:
                continue
            condition, max_layers = HAZARD_CONDITIONS[move_id]
            if side.get(condition, 0) >= max_layers:
                continue
            if move_id == "toxicspikes" and self.opponent_remaining() < TOXIC_SPIKES_MIN_TARGETS:
                continue
            return move
        return None

    def hazard_burden(self, side: dict[SideCondition, int]) -> float:
        return sum(HAZARD_WEIGHT.get(c, 0.0) * max(n, 1) for c, n in side.items())

    def removal_move(self) -> Move | None:
        """A move that clears our hazards, when it can work and is worth it."""
        ours = self.hazard_burden(self.battle.side_conditions)
        if ours <= 0 or self.remaining_mons() < HAZARD_REMOVAL_MIN_MONS:
            return None
        theirs = self.hazard_burden(self.battle.opponent_side_conditions)
        available = {m.id: m for m in self.moves}
        for move_id in REMOVAL_MOVES:
            move = available.get(move_id)
            if move is None:
                continue
            if move_id in ("rapidspin", "mortalspin"):
                # A damaging spin does nothing against a type immune to it.
                if self.model.effectiveness(move.type, self.them) == 0:
                    continue
            elif move_id == "defog":
                if self.them.has_ability("goodasgold") >= 1 or theirs >= ours:
                    continue
            elif move_id == "courtchange" and theirs >= ours:
                continue
            return move
        return None

    # ----------------------------------------------------------------- recovery
    def heal_amount(self, move: Move) -> float:
        if move.id == "rest":
            if self.me.hp > REST_BELOW or self.me.has_ability("insomnia") >= 1:
                return 0.0
            if Field.ELECTRIC_TERRAIN in self.battle.fields:
                return 0.0
            return 1.0 - self.me.hp
        heal = float(move.heal)
        if move.id in ("moonlight", "morningsun", "synthesis"):
            if self.model.weather in (Weather.SUNNYDAY, Weather.DESOLATELAND):
                heal = 2 / 3
            elif self.model.weather is not None:
                heal = 0.25
        if move.id == "shoreup" and self.model.weather == Weather.SANDSTORM:
            heal = 2 / 3
        if move.id == "strengthsap":
            heal = min(0.5, _stat(self.them, "atk") / self.me.max_hp)
        return min(heal, 1.0 - self.me.hp)

    def recovery_move(self) -> Move | None:
        if self.me.hp > RECOVER_BELOW:
            return None
        if Effect.HEAL_BLOCK in self.me.mon.effects:
            return None
        best, best_heal = None, 0.0
        for move in self.moves:
            heal = self.heal_amount(move)
            if heal > best_heal:
                best, best_heal = move, heal
        if best is None:
            return None
        incoming = self.incoming()
        # Healing must outpace the damage, and we must survive the hit after it.
        if incoming < best_heal and incoming < self.me.hp + best_heal:
            return best
        return None

    # ----------------------------------------------------------------- setup
    def setup_move(self) -> Move | None:
        me, them = self.me, self.them
        if me.hp < SETUP_MIN_HP or self.incoming() >= me.hp * SETUP_MAX_THREAT:
            return None
        if them.has_ability("unaware") >= 1:
            return None
        if self.kills(me):
            return None
        has_physical = any(m.category == MoveCategory.PHYSICAL for m in self.moves)
        has_special = any(m.category == MoveCategory.SPECIAL for m in self.moves)
        for move in self.moves:
            boosts = dict(move.boosts or {}) if _targets_self(move) else {}
            if move.id == "curse" and PokemonType.GHOST not in me.types:
                boosts = {"atk": 1, "def": 1, "spe": -1}
            if move.id == "bellydrum":
                if me.hp < 0.75:
                    continue
                boosts = {"atk": 6}
            useful = []
            for stat, amount in boosts.items():
                if amount <= 0 or stat not in SETUP_STATS:
                    continue
                if stat == "atk" and not has_physical:
                    continue
                if stat == "spa" and not has_special:
                    continue
                useful.append(stat)
            if not useful:
                continue
            attack_stats = [s for s in useful if s in ("atk", "spa")] or useful
            if min(me.boosts.get(s, 0) for s in attack_stats) >= SETUP_MAX_STAGE:
                continue
            return move
        return None

    # ----------------------------------------------------------------- status
    def status_usable(self, move: Move) -> bool:
        """``move`` inflicts a major status the current target can actually get."""
        status = move.status
        if status is None or move.category != MoveCategory.STATUS:
            return False
        them = self.them
        if them.status is not None or them.hp < STATUS_MIN_TARGET_HP:
            return False
        if Effect.SUBSTITUTE in them.mon.effects:
            return False
        if sum(them.has_ability(a) for a in REFLECTING_ABILITIES) > 0:
            return False
        if SideCondition.SAFEGUARD in self.battle.opponent_side_conditions:
            return False
        immune_types = STATUS_IMMUNE_TYPES.get(status, set())
        if set(them.types) & immune_types and not (
            status in (Status.TOX, Status.PSN) and self.me.has_ability("corrosion") >= 1
        ):
            return False
        if sum(them.has_ability(a) for a in STATUS_IMMUNE_ABILITIES.get(status, ())) > 0:
            return False
        if move.id == "thunderwave" and self.model.effectiveness(move.type, them) == 0:
            return False
        if "powder" in move.flags and (
            PokemonType.GRASS in them.types
            or them.item == "safetygoggles"
            or them.has_ability("overcoat") > 0
        ):
            return False
        if status == Status.SLP:
            if any(m.status == Status.SLP for m in self.battle.opponent_team.values()):
                return False  # Sleep Clause
            if Field.ELECTRIC_TERRAIN in self.battle.fields and them.grounded():
                return False
        if Field.MISTY_TERRAIN in self.battle.fields and them.grounded():
            return False
        if status == Status.BRN and them.stats["atk"] < them.stats["spa"]:
            return False  # burn is for physical attackers
        return True

    def status_move(self) -> Move | None:
        _, best_value = self.best_move(self.me)
        if self.them.hp > 0 and best_value / max(self.them.hp, 0.01) >= STATUS_IF_DAMAGE_BELOW:
            return None
        order = {Status.SLP: 0, Status.BRN: 1, Status.PAR: 2, Status.TOX: 3, Status.PSN: 4}
        candidates = [m for m in self.moves if self.status_usable(m)]
        if not candidates:
            return None
        return min(candidates, key=lambda m: order.get(m.status, 9))


def _targets_self(move: Move) -> bool:
    target = move.target
    return target is not None and target.name in ("SELF", "ADJACENT_ALLY_OR_SELF", "ALLIES")
