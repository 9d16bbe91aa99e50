"""The world model's own battle state: plain numbers, cheap to copy.

Search expands thousands of nodes per decision, and copying poke-env objects costs
milliseconds, so a :class:`BattleState` is built once per decision from the live
poke-env battle (:func:`state_from_battle`) and then copied per node. The player's
own side is exact (the request gives stats, items, moves and HP). The opponent's
side needs a *determinization*: one full set per opponent Pokémon (from the priors),
with everything revealed in the battle (HP fraction, status, boosts, item lost,
Tera) laid over it. Opponent Pokémon never seen are not in the state.

HP is a float so that the expected-value transition can carry expectations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from poke_env.battle import AbstractBattle, Field, Pokemon, SideCondition, Status, Weather

from pokegym.hp import hp_fraction
from pokegym.world.data import Dex, to_id
from pokegym.world.history import weather_turns_left
from pokegym.world.sets import PokemonSet, compute_stats

BOOSTS = ("atk", "def", "spa", "spd", "spe", "accuracy", "evasion")
STATUS_IDS = {
    Status.BRN: "brn", Status.PAR: "par", Status.PSN: "psn", Status.TOX: "tox",
    Status.SLP: "slp", Status.FRZ: "frz",
}  # fmt: skip
WEATHER_IDS = {
    Weather.SUNNYDAY: "sunnyday", Weather.RAINDANCE: "raindance", Weather.SANDSTORM: "sandstorm",
    Weather.SNOWSCAPE: "snowscape", Weather.HAIL: "hail", Weather.DESOLATELAND: "desolateland",
    Weather.PRIMORDIALSEA: "primordialsea", Weather.DELTASTREAM: "deltastream",
}  # fmt: skip
TERRAIN_IDS = {
    Field.ELECTRIC_TERRAIN: "electricterrain", Field.GRASSY_TERRAIN: "grassyterrain",
    Field.MISTY_TERRAIN: "mistyterrain", Field.PSYCHIC_TERRAIN: "psychicterrain",
}  # fmt: skip
# Turns a field effect lasts when set without an extending item.
DEFAULT_TURNS = 5


# The classes below write their own ``__init__`` (``init=False``): the compiled build
# (pokegym.world._accel) then constructs them natively instead of through the
# interpreted one that ``dataclass`` generates. ``stats`` and ``boosts`` are typed as
# variable-length tuples so that the compiled build stores the tuple objects as they are.
@dataclass(slots=True, init=False)
class MonState:
    """One Pokémon. ``stats`` = (hp, atk, def, spa, spd, spe); ``boosts`` the seven stages
    in BOOSTS order."""

    species: str
    level: int
    types: tuple[str, ...]
    stats: tuple[int, ...]
    hp: float
    moves: tuple[str, ...] = ()
    item: str = ""
    ability: str = ""
    status: str = ""
    status_turns: int = 0  # sleep turns left, or the toxic counter
    boosts: tuple[int, ...] = (0, 0, 0, 0, 0, 0, 0)
    tera_type: str = ""
    terastallized: bool = False
    weight: float = 100.0
    choice_lock: str = ""  # the move a Choice item locks it into ("" if none)
    protect_streak: int = 0  # consecutive successful protections (halves the next one's odds)

    def __init__(
        self,
        species: str,
        level: int,
        types: tuple[str, ...],
        stats: tuple[int, ...],
        hp: float,
        moves: tuple[str, ...] = (),
        item: str = "",
        ability: str = "",
        status: str = "",
        status_turns: int = 0,
        boosts: tuple[int, ...] = (0, 0, 0, 0, 0, 0, 0),
        tera_type: str = "",
        terastallized: bool = False,
        weight: float = 100.0,
        choice_lock: str = "",
        protect_streak: int = 0,
    ) -> None:
        self.species = species
        self.level = level
        self.types = types
        self.stats = stats
        self.hp = hp
        self.moves = moves
        self.item = item
        self.ability = ability
        self.status = status
        self.status_turns = status_turns
        self.boosts = boosts
        self.tera_type = tera_type
        self.terastallized = terastallized
        self.weight = weight
        self.choice_lock = choice_lock
        self.protect_streak = protect_streak

    @property
    def max_hp(self) -> int:
        return self.stats[0]

    @property
    def fainted(self) -> bool:
        return self.hp <= 0

    @property
    def hp_fraction(self) -> float:
        return max(0.0, self.hp) / self.stats[0] if self.stats[0] else 0.0

    def current_types(self) -> tuple[str, ...]:
        if self.terastallized and self.tera_type and self.tera_type != "Stellar":
            return (self.tera_type,)
        return self.types

    def copy(self) -> MonState:
        return MonState(
            self.species, self.level, self.types, self.stats, self.hp, self.moves, self.item,
            self.ability, self.status, self.status_turns, self.boosts, self.tera_type,
            self.terastallized, self.weight, self.choice_lock, self.protect_streak,
        )  # fmt: skip

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as constructor arguments: a pickle loads under the compiled build
        # (pokegym.world._accel) and the pure-Python one alike.
        return (MonState, (
            self.species, self.level, self.types, self.stats, self.hp, self.moves, self.item,
            self.ability, self.status, self.status_turns, self.boosts, self.tera_type,
            self.terastallized, self.weight, self.choice_lock, self.protect_streak,
        ))  # fmt: skip


@dataclass(slots=True, init=False)
class SideState:
    """One player's side: team, active slot, hazards and side conditions (turns left)."""

    mons: list[MonState]
    active: int = 0
    stealth_rock: bool = False
    spikes: int = 0
    toxic_spikes: int = 0
    sticky_web: bool = False
    reflect: int = 0
    light_screen: int = 0
    aurora_veil: int = 0
    tailwind: int = 0
    tera_used: bool = False

    def __init__(
        self,
        mons: list[MonState],
        active: int = 0,
        stealth_rock: bool = False,
        spikes: int = 0,
        toxic_spikes: int = 0,
        sticky_web: bool = False,
        reflect: int = 0,
        light_screen: int = 0,
        aurora_veil: int = 0,
        tailwind: int = 0,
        tera_used: bool = False,
    ) -> None:
        self.mons = mons
        self.active = active
        self.stealth_rock = stealth_rock
        self.spikes = spikes
        self.toxic_spikes = toxic_spikes
        self.sticky_web = sticky_web
        self.reflect = reflect
        self.light_screen = light_screen
        self.aurora_veil = aurora_veil
        self.tailwind = tailwind
        self.tera_used = tera_used

    @property
    def active_mon(self) -> MonState:
        return self.mons[self.active]

    def alive(self) -> list[int]:
        return [i for i, mon in enumerate(self.mons) if mon.hp > 0]

    def copy(self) -> SideState:
        return SideState(
            [mon.copy() for mon in self.mons], self.active, self.stealth_rock, self.spikes,
            self.toxic_spikes, self.sticky_web, self.reflect, self.light_screen,
            self.aurora_veil, self.tailwind, self.tera_used,
        )  # fmt: skip

    def __reduce__(self) -> tuple[Any, ...]:
        return (SideState, (
            self.mons, self.active, self.stealth_rock, self.spikes, self.toxic_spikes,
            self.sticky_web, self.reflect, self.light_screen, self.aurora_veil, self.tailwind,
            self.tera_used,
        ))  # fmt: skip


@dataclass(slots=True, init=False)
class BattleState:
    """Both sides (index 0 = the player the state was built for) and the field."""

    sides: list[SideState]
    gen: int = 9
    weather: str = ""
    weather_turns: int = 0
    terrain: str = ""
    terrain_turns: int = 0
    trick_room: int = 0
    gravity: int = 0
    turn: int = 0
    notes: dict[str, object] = field(default_factory=dict)

    def __init__(
        self,
        sides: list[SideState],
        gen: int = 9,
        weather: str = "",
        weather_turns: int = 0,
        terrain: str = "",
        terrain_turns: int = 0,
        trick_room: int = 0,
        gravity: int = 0,
        turn: int = 0,
        notes: dict[str, object] | None = None,
    ) -> None:
        self.sides = sides
        self.gen = gen
        self.weather = weather
        self.weather_turns = weather_turns
        self.terrain = terrain
        self.terrain_turns = terrain_turns
        self.trick_room = trick_room
        self.gravity = gravity
        self.turn = turn
        self.notes = {} if notes is None else notes

    def copy(self) -> BattleState:
        return BattleState(
            [side.copy() for side in self.sides], self.gen, self.weather, self.weather_turns,
            self.terrain, self.terrain_turns, self.trick_room, self.gravity, self.turn,
            self.notes,
        )  # fmt: skip

    def __reduce__(self) -> tuple[Any, ...]:
        return (BattleState, (
            self.sides, self.gen, self.weather, self.weather_turns, self.terrain,
            self.terrain_turns, self.trick_room, self.gravity, self.turn, self.notes,
        ))  # fmt: skip

    @property
    def finished(self) -> bool:
        return any(not side.alive() for side in self.sides)

    def winner(self) -> int | None:
        """0 or 1 when one side has no Pokémon left, None otherwise (or both out)."""
        out = [not side.alive() for side in self.sides]
        if out[0] and not out[1]:
            return 1
        if out[1] and not out[0]:
            return 0
        return None


# ---------------------------------------------------------------- from poke-env
def _turns_left(start_turn: int, now: int, duration: int = DEFAULT_TURNS) -> int:
    return max(1, duration - max(0, now - start_turn))


def _boosts(mon: Pokemon) -> tuple[int, int, int, int, int, int, int]:
    boosts = mon.boosts
    return tuple(int(boosts.get(stat, 0)) for stat in BOOSTS)  # type: ignore[return-value]


def _status(mon: Pokemon) -> tuple[str, int]:
    status = STATUS_IDS.get(mon.status) if mon.status is not None else ""  # type: ignore[arg-type]
    if status == "tox":
        return status, max(1, mon.status_counter)
    if status == "slp":
        return status, max(0, 3 - mon.status_counter)  # sleep lasts 1-3 turns: expect the rest
    return status or "", 0


def _dex_types(dex: Dex, species: str) -> tuple[str, ...]:
    return tuple(dex.species_entry(species)["types"])


def own_mon_state(dex: Dex, mon: Pokemon) -> MonState:
    """The player's own Pokémon: everything is known from the request."""
    species = to_id(mon.species)
    entry = dex.species_entry(species)
    raw = mon.stats
    max_hp = mon.max_hp or 1
    stats = (
        int(max_hp), int(raw.get("atk") or 1), int(raw.get("def") or 1),
        int(raw.get("spa") or 1), int(raw.get("spd") or 1), int(raw.get("spe") or 1),
    )  # fmt: skip
    status, status_turns = _status(mon)
    tera = mon.tera_type.name.capitalize() if mon.tera_type is not None else ""
    return MonState(
        species=species,
        level=mon.level,
        types=tuple(entry["types"]),
        stats=stats,
        hp=0.0 if mon.fainted else float(mon.current_hp or 0),
        moves=tuple(mon.moves)[:4],
        item=to_id(mon.item or ""),
        ability=to_id(mon.ability or ""),
        status=status,
        status_turns=status_turns,
        boosts=_boosts(mon) if mon.active else (0, 0, 0, 0, 0, 0, 0),
        tera_type="Stellar" if tera == "Stellar" else tera,
        terastallized=mon.is_terastallized,
        weight=float(entry.get("weightkg", 100.0)),
    )


def opponent_mon_state(dex: Dex, mon: Pokemon, pokemon_set: PokemonSet) -> MonState:
    """An opponent's Pokémon: the determinized set, overlaid with what is revealed."""
    species = to_id(mon.species)
    entry = dex.species_entry(species)
    raw = compute_stats(dex, species, mon.level or pokemon_set.level, pokemon_set.evs,
                        pokemon_set.ivs, pokemon_set.nature)  # fmt: skip
    stats = (raw["hp"], raw["atk"], raw["def"], raw["spa"], raw["spd"], raw["spe"])
    revealed = [move_id for move_id in mon.moves]
    moves = list(dict.fromkeys(revealed + list(pokemon_set.moves)))[:4]
    item = mon.item
    if item is None or item == "unknown_item":
        item = pokemon_set.item
    ability = mon.ability or pokemon_set.ability
    status, status_turns = _status(mon)
    tera = pokemon_set.tera_type
    if mon.is_terastallized and mon.tera_type is not None:
        tera = mon.tera_type.name.capitalize()
    hp = hp_fraction(mon)  # full for a Pokémon Zoroark's Illusion showed at 0 (pokegym.hp)
    return MonState(
        species=species,
        level=mon.level or pokemon_set.level,
        types=tuple(entry["types"]),
        stats=stats,
        hp=stats[0] * hp,
        moves=tuple(moves),
        item=to_id(item or ""),
        ability=to_id(ability or ""),
        status=status,
        status_turns=status_turns,
        boosts=_boosts(mon) if mon.active else (0, 0, 0, 0, 0, 0, 0),
        tera_type=tera,
        terastallized=mon.is_terastallized,
        weight=float(entry.get("weightkg", 100.0)),
    )


def _side_conditions(side: SideState, conditions: Mapping[SideCondition, int], turn: int) -> None:
    for condition, value in conditions.items():
        if condition is SideCondition.STEALTH_ROCK:
            side.stealth_rock = True
        elif condition is SideCondition.SPIKES:
            side.spikes = min(3, int(value))
        elif condition is SideCondition.TOXIC_SPIKES:
            side.toxic_spikes = min(2, int(value))
        elif condition is SideCondition.STICKY_WEB:
            side.sticky_web = True
        elif condition is SideCondition.REFLECT:
            side.reflect = _turns_left(value, turn)
        elif condition is SideCondition.LIGHT_SCREEN:
            side.light_screen = _turns_left(value, turn)
        elif condition is SideCondition.AURORA_VEIL:
            side.aurora_veil = _turns_left(value, turn)
        elif condition is SideCondition.TAILWIND:
            side.tailwind = _turns_left(value, turn, 4)


def _previewed(dex: Dex, battle: AbstractBattle, seen: list[Pokemon]) -> list[Pokemon]:
    """The opponent's Pokémon Team Preview showed (poke-env keeps them apart from
    ``opponent_team``) whose base species no Pokémon ``seen`` has: a form hidden at
    preview, such as ``Urshifu-*``, comes out under its own name."""
    bases = {dex.base_species(mon.species) for mon in seen}
    out = []
    for mon in battle.teampreview_opponent_team:
        base = dex.base_species(mon.species or "")
        if mon.species and base not in bases:
            bases.add(base)
            out.append(mon)
    return out


def state_from_battle(
    battle: AbstractBattle,
    determinization: Mapping[str, PokemonSet],
    dex: Dex,
    previewed: bool = False,
) -> BattleState:
    """A :class:`BattleState` for the battle's player (side 0) and its opponent (side 1).

    Args:
        determinization: one set per opponent Pokémon, keyed by species id
            (``to_id(mon.species)``); opponents without an entry get a default set
            (no item, its first ability, 84 EVs everywhere, level from the battle).
        previewed: the opponent's side also holds the Pokémon Team Preview showed that
            have not been out yet (at full HP), after those seen; without it, only the
            Pokémon that have been out.
    """
    own_mons = list(battle.team.values())
    own = SideState(mons=[own_mon_state(dex, mon) for mon in own_mons])
    own.active = next((i for i, mon in enumerate(own_mons) if mon.active), 0)
    own.tera_used = bool(battle.used_tera)

    opp_mons = [mon for mon in battle.opponent_team.values() if mon.revealed or mon.active]
    if previewed:
        opp_mons += _previewed(dex, battle, opp_mons)
    opponent_states = []
    for mon in opp_mons:
        species = to_id(mon.species)
        pokemon_set = determinization.get(species) or default_set(dex, species, mon.level)
        opponent_states.append(opponent_mon_state(dex, mon, pokemon_set))
    opp = SideState(mons=opponent_states)
    opp.active = next((i for i, mon in enumerate(opp_mons) if mon.active), 0)
    opp.tera_used = bool(battle.opponent_used_tera)

    _side_conditions(own, battle.side_conditions, battle.turn)
    _side_conditions(opp, battle.opponent_side_conditions, battle.turn)
    state = BattleState(sides=[own, opp], gen=battle.gen, turn=battle.turn)
    for weather, start in battle.weather.items():
        state.weather = WEATHER_IDS.get(weather, "")
        state.weather_turns = weather_turns_left(battle) or _turns_left(start, battle.turn)
    for field_effect, start in battle.fields.items():
        if field_effect in TERRAIN_IDS:
            state.terrain = TERRAIN_IDS[field_effect]
            state.terrain_turns = _turns_left(start, battle.turn)
        elif field_effect is Field.TRICK_ROOM:
            state.trick_room = _turns_left(start, battle.turn)
        elif field_effect is Field.GRAVITY:
            state.gravity = _turns_left(start, battle.turn)
    return state


def default_set(dex: Dex, species: str, level: int | None) -> PokemonSet:
    """A neutral guess for an opponent with no prior: 84 EVs in every stat, no item."""
    entry = dex.species_entry(species)
    abilities = entry.get("abilities", {})
    ability = to_id(abilities.get("0", "")) if abilities else ""
    return PokemonSet(
        species=species, level=level or 100, ability=ability, evs=(84, 84, 84, 84, 84, 84)
    )
