"""Observation encoding: a poke-env battle -> one flat float32 vector.

The layout is built from the tables below, so the documentation, the offsets
and the encoder cannot drift apart: :func:`layout_table` prints every slot.

Partial observability follows the game: the player's own team is known in full;
the opponent's Pokémon appear once seen (in battle or at Team Preview) and their
moves, item, ability and Tera Type only once revealed. Unknown values are 0 and
come with a flag saying whether they are known.

Vector = own team (6 Pokémon blocks, team order = the switch actions' order)
       + opponent team (6 Pokémon blocks, in the order they were first seen)
       + field block.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from gymnasium import spaces
from poke_env.battle import (
    AbstractBattle,
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

from pokegym.actions import N_ACTIONS

OBSERVATION_VERSION = 0
N_SLOTS = 6
N_MOVE_SLOTS = 4

TYPES = [
    PokemonType.BUG, PokemonType.DARK, PokemonType.DRAGON, PokemonType.ELECTRIC,
    PokemonType.FAIRY, PokemonType.FIGHTING, PokemonType.FIRE, PokemonType.FLYING,
    PokemonType.GHOST, PokemonType.GRASS, PokemonType.GROUND, PokemonType.ICE,
    PokemonType.NORMAL, PokemonType.POISON, PokemonType.PSYCHIC, PokemonType.ROCK,
    PokemonType.STEEL, PokemonType.WATER,
]  # fmt: skip
TYPE_INDEX = {t: i for i, t in enumerate(TYPES)}
# Enum members hash through a Python-level __hash__; the hot path keys on id().
_TYPE_BY_ID = {id(t): i for i, t in enumerate(TYPES)}
STATUSES = [Status.BRN, Status.PAR, Status.SLP, Status.FRZ, Status.PSN, Status.TOX]
STATUS_INDEX = {s: i for i, s in enumerate(STATUSES)}
_STATUS_BY_ID = {id(s): i for i, s in enumerate(STATUSES)}
BOOSTS = ["atk", "def", "spa", "spd", "spe", "accuracy", "evasion"]
STATS = ["hp", "atk", "def", "spa", "spd", "spe"]
CATEGORIES = [MoveCategory.PHYSICAL, MoveCategory.SPECIAL, MoveCategory.STATUS]
WEATHERS = [
    Weather.RAINDANCE, Weather.SUNNYDAY, Weather.SANDSTORM, Weather.SNOWSCAPE,
    Weather.DESOLATELAND, Weather.PRIMORDIALSEA, Weather.DELTASTREAM,
]  # fmt: skip
# Hail (gen 8) shares the snow slot: both are "ice weather".
WEATHER_INDEX = {w: i for i, w in enumerate(WEATHERS)} | {Weather.HAIL: 3}
TERRAINS = [
    Field.ELECTRIC_TERRAIN,
    Field.GRASSY_TERRAIN,
    Field.MISTY_TERRAIN,
    Field.PSYCHIC_TERRAIN,
]
SIDE_CONDITIONS = [
    (SideCondition.STEALTH_ROCK, 1), (SideCondition.SPIKES, 3), (SideCondition.TOXIC_SPIKES, 2),
    (SideCondition.STICKY_WEB, 1), (SideCondition.REFLECT, 1), (SideCondition.LIGHT_SCREEN, 1),
    (SideCondition.AURORA_VEIL, 1), (SideCondition.TAILWIND, 1),
]  # fmt: skip

# (name, width, description) -- one row per feature group.
MOVE_FEATURES: list[tuple[str, int, str]] = [
    ("present", 1, "1 if the slot holds a move (opponent: a revealed move)"),
    ("base_power", 1, "base power / 150 (0 for status moves)"),
    ("accuracy", 1, "accuracy in [0, 1]; moves that never miss are 1"),
    ("priority", 1, "priority / 7 (Trick Room is -7, Helping Hand +5)"),
    ("pp_fraction", 1, "remaining PP / max PP (opponent: from PP used so far)"),
    ("type", 18, "one-hot move type (" + ", ".join(t.name.lower() for t in TYPES) + ")"),
    ("category", 3, "one-hot physical, special, status"),
    ("effectiveness", 1, "type multiplier against the other side's active Pokémon / 4"),
    ("stab", 1, "1 if the move's type is one of the user's current types"),
]
POKEMON_FEATURES: list[tuple[str, int, str]] = [
    ("present", 1, "1 if the slot holds a Pokémon (opponent: seen in battle or at Team Preview)"),
    ("revealed", 1, "own: 1; opponent: 1 once it has been on the field (0: only at Team Preview)"),
    ("active", 1, "1 if it is on the field"),
    ("fainted", 1, "1 if fainted"),
    ("hp_fraction", 1, "current HP / max HP"),
    ("status", 6, "one-hot non-volatile status: brn, par, slp, frz, psn, tox"),
    ("types", 18, "multi-hot current types (after Terastallization or a type change)"),
    ("tera_type", 18, "one-hot Tera Type (opponent: known once it has terastallized)"),
    ("terastallized", 1, "1 if terastallized"),
    ("base_stats", 6, "species base stats hp, atk, def, spa, spd, spe / 255"),
    ("boosts", 7, "stat stages atk, def, spa, spd, spe, accuracy, evasion / 6"),
    ("level", 1, "level / 100"),
    ("item_known", 1, "own: 1 if it holds an item; opponent: 1 once its item is revealed"),
    ("ability_known", 1, "own: 1; opponent: 1 once its ability is revealed"),
    (
        "moves",
        N_MOVE_SLOTS * sum(w for _, w, _ in MOVE_FEATURES),
        "4 move blocks, see MOVE_FEATURES",
    ),
]
FIELD_FEATURES: list[tuple[str, int, str]] = [
    (
        "weather",
        7,
        "one-hot rain, sun, sand, snow/hail, desolate land, primordial sea, delta stream",
    ),
    ("terrain", 4, "one-hot electric, grassy, misty, psychic terrain"),
    ("trick_room", 1, "1 under Trick Room"),
    ("gravity", 1, "1 under Gravity"),
    (
        "own_side",
        8,
        "own side: stealth rock, spikes/3, toxic spikes/2, sticky web, reflect, "
        "light screen, aurora veil, tailwind",
    ),
    ("opponent_side", 8, "opponent side: same eight conditions"),
    ("own_gimmick_used", 1, "1 once the player has terastallized (gen 9) or dynamaxed (gen 8)"),
    ("opponent_gimmick_used", 1, "1 once the opponent has terastallized or dynamaxed"),
    ("turn", 1, "turn / 100 (capped at 10)"),
    ("team_preview", 1, "1 when the decision is the Team Preview lead choice"),
    ("force_switch", 1, "1 when the decision is a forced switch (after a faint or a pivot)"),
    ("own_remaining", 1, "fraction of own Pokémon not fainted"),
    (
        "opponent_remaining",
        1,
        "fraction of the opponent's Pokémon not fainted (unseen ones count as alive)",
    ),
]


def _width(table: list[tuple[str, int, str]]) -> int:
    return sum(width for _, width, _ in table)


MOVE_SIZE = _width(MOVE_FEATURES)
POKEMON_SIZE = _width(POKEMON_FEATURES)
FIELD_SIZE = _width(FIELD_FEATURES)
OWN_TEAM_OFFSET = 0
OPPONENT_TEAM_OFFSET = N_SLOTS * POKEMON_SIZE
FIELD_OFFSET = 2 * N_SLOTS * POKEMON_SIZE
OBSERVATION_SIZE = FIELD_OFFSET + FIELD_SIZE
LOW, HIGH = -1.0, 10.0


def _offsets(table: list[tuple[str, int, str]]) -> dict[str, int]:
    out, position = {}, 0
    for name, width, _ in table:
        out[name] = position
        position += width
    return out


_M = _offsets(MOVE_FEATURES)
_P = _offsets(POKEMON_FEATURES)
_F = _offsets(FIELD_FEATURES)


def layout_table() -> str:
    """Every slot of the observation vector, as a text table (offset, width, meaning)."""
    rows = [f"observation v{OBSERVATION_VERSION}: {OBSERVATION_SIZE} float32 values"]
    for block, base in (("own team", OWN_TEAM_OFFSET), ("opponent team", OPPONENT_TEAM_OFFSET)):
        rows.append(
            f"[{base}:{base + N_SLOTS * POKEMON_SIZE}] {block}: 6 x {POKEMON_SIZE} per Pokémon"
        )
        for name, width, text in POKEMON_FEATURES:
            rows.append(f"    +{_P[name]:<4} {width:>3}  {name}: {text}")
    rows.append(f"  each move block ({MOVE_SIZE} values):")
    for name, width, text in MOVE_FEATURES:
        rows.append(f"    +{_M[name]:<4} {width:>3}  {name}: {text}")
    rows.append(f"[{FIELD_OFFSET}:{OBSERVATION_SIZE}] field")
    for name, width, text in FIELD_FEATURES:
        rows.append(f"    +{_F[name]:<4} {width:>3}  {name}: {text}")
    return "\n".join(rows)


def observation_space() -> spaces.Dict:
    """``Dict{"observation": Box, "action_mask": Box(int8)}`` shared by every env."""
    return spaces.Dict(
        {
            "observation": spaces.Box(LOW, HIGH, shape=(OBSERVATION_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(N_ACTIONS,), dtype=np.int8),
        }
    )


@cache
def _move_static(move_id: str, gen: int) -> tuple[np.ndarray, PokemonType, bool, int] | None:
    """The features of a move that never change, cached per move id.

    Returns ``(vector, type, is_status, max_pp)`` or None for an unknown move.
    """
    try:
        move = Move(move_id, gen=gen)
        entry = move.entry
    except (KeyError, ValueError, AttributeError):
        return None
    if not entry:
        return None
    vec = np.zeros(MOVE_SIZE, dtype=np.float32)
    vec[_M["present"]] = 1.0
    vec[_M["base_power"]] = min(move.base_power / 150.0, HIGH)
    accuracy = move.accuracy
    vec[_M["accuracy"]] = 1.0 if accuracy is True else float(accuracy)
    vec[_M["priority"]] = move.priority / 7.0
    move_type = move.type
    type_index = TYPE_INDEX.get(move_type)
    if type_index is not None:
        vec[_M["type"] + type_index] = 1.0
    category = move.category
    vec[_M["category"] + CATEGORIES.index(category)] = 1.0
    return vec, move_type, category is MoveCategory.STATUS, move.max_pp


@cache
def _type_chart(gen: int) -> dict[str, dict[str, float]]:
    return GenData.from_gen(gen).type_chart  # type: ignore[no-any-return]


_multipliers: dict[tuple[int, ...], float] = {}


def _multiplier(move_type: PokemonType, defender: tuple[PokemonType, ...], gen: int) -> float:
    key = (gen, id(move_type), *map(id, defender))
    value = _multipliers.get(key)
    if value is None:
        value = 1.0
        if defender:
            value = float(
                move_type.damage_multiplier(
                    defender[0],
                    defender[1] if len(defender) > 1 else None,
                    type_chart=_type_chart(gen),
                )
            )
        _multipliers[key] = value
    return value


@cache
def _base_stats(species: str, gen: int) -> np.ndarray:
    entry = GenData.from_gen(gen).pokedex.get(species)
    vec = np.zeros(len(STATS), dtype=np.float32)
    if entry:
        for i, stat in enumerate(STATS):
            vec[i] = entry["baseStats"][stat] / 255.0
    return vec


# Lookups keyed on id(): Enum members hash through a Python-level __hash__, and
# these maps are read for every Pokémon of every observation.
_WEATHER_BY_ID = {id(w): i for w, i in WEATHER_INDEX.items()}
_TERRAIN_BY_ID = {id(t): i for i, t in enumerate(TERRAINS)}
_TRICK_ROOM_ID = id(Field.TRICK_ROOM)
_GRAVITY_ID = id(Field.GRAVITY)
_SIDE_CONDITION_BY_ID = {id(c): (i, layers) for i, (c, layers) in enumerate(SIDE_CONDITIONS)}
_FAINTED = Status.FNT
# Offsets inside a Pokémon block and a move block, as plain integers for the hot path.
_P_PRESENT, _P_REVEALED, _P_ACTIVE, _P_FAINTED = (
    _P["present"], _P["revealed"], _P["active"], _P["fainted"]
)  # fmt: skip
_P_HP, _P_STATUS, _P_TYPES, _P_TERA = _P["hp_fraction"], _P["status"], _P["types"], _P["tera_type"]
_P_TERASTALLIZED, _P_BASE_STATS, _P_BOOSTS = _P["terastallized"], _P["base_stats"], _P["boosts"]
_P_LEVEL, _P_ITEM, _P_ABILITY, _P_MOVES = (
    _P["level"], _P["item_known"], _P["ability_known"], _P["moves"]
)  # fmt: skip
_M_PP, _M_EFFECTIVENESS, _M_STAB = _M["pp_fraction"], _M["effectiveness"], _M["stab"]


@dataclass
class ObservationEncoder:
    """Encodes a poke-env battle from the point of view of its player.

    ``encode`` is on the environment's hot path (once per step): static per-move
    and per-species features are cached, each call fills one zeroed vector and
    writes only the values that are not zero, each attribute of a Pokémon is read
    once, and enum members are looked up by identity (their ``__hash__`` is
    Python code).
    """

    gen: int
    team_size: int = 6  # Pokémon each side brings to the battle (1 in 1v1 formats)

    def __post_init__(self) -> None:
        # Effectiveness / 4 per (id(move type), ids of the defender's types).
        self._effectiveness: dict[tuple[int, tuple[int, ...]], float] = {}

    @property
    def size(self) -> int:
        return OBSERVATION_SIZE

    def encode(self, battle: AbstractBattle) -> np.ndarray:
        out = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        own_active = battle.active_pokemon
        opp_active = battle.opponent_active_pokemon
        own_types = tuple(own_active.types) if own_active is not None else ()
        opp_types = tuple(opp_active.types) if opp_active is not None else ()
        own_ids = tuple([id(t) for t in own_types])
        opp_ids = tuple([id(t) for t in opp_types])
        pokemon = self._pokemon

        base = OWN_TEAM_OFFSET
        for mon in list(battle.team.values())[:N_SLOTS]:
            pokemon(out, base, mon, True, True, opp_types, opp_ids)
            base += POKEMON_SIZE

        # During Team Preview poke-env lists the preview team as the opponent's team;
        # `revealed` (has been on the field) tells the two apart.
        seen = list(battle.opponent_team.values())[:N_SLOTS]
        base = OPPONENT_TEAM_OFFSET
        for mon in seen:
            pokemon(out, base, mon, False, mon.revealed, own_types, own_ids)
            base += POKEMON_SIZE
        if len(seen) < N_SLOTS and battle.teampreview_opponent_team:
            seen_species = {mon.base_species for mon in seen}
            slot = len(seen)
            for mon in battle.teampreview_opponent_team:
                if slot >= N_SLOTS:
                    break
                if mon.base_species in seen_species:
                    continue
                base = OPPONENT_TEAM_OFFSET + slot * POKEMON_SIZE
                pokemon(out, base, mon, False, False, own_types, own_ids)
                slot += 1

        self._field(out, battle)
        return out

    def _pokemon(
        self,
        out: np.ndarray,
        base: int,
        mon: Pokemon,
        own: bool,
        revealed: bool,
        other_types: tuple[PokemonType, ...],
        other_ids: tuple[int, ...],
    ) -> None:
        """Fill one Pokémon block. ``out`` is zero there: only non-zero values are
        written (the values are the ones of the straightforward encoding that
        ``tests/test_throughput_equivalence.py`` keeps as its reference)."""
        gen = self.gen
        out[base + _P_PRESENT] = 1.0
        if revealed:
            out[base + _P_REVEALED] = 1.0
        active = mon.active
        if active:
            out[base + _P_ACTIVE] = 1.0
        status = mon.status
        if status is _FAINTED:
            out[base + _P_FAINTED] = 1.0
        else:
            # poke-env's own fraction (0 for a Pokémon not yet in battle: team preview, or
            # the one Zoroark's Illusion wore), unlike pokegym.hp: the layout is versioned
            # and trained on; the presence and revealed slots tell those cases apart.
            hp = mon.current_hp_fraction
            if hp:
                out[base + _P_HP] = hp
            index = _STATUS_BY_ID.get(id(status))
            if index is not None:
                out[base + _P_STATUS + index] = 1.0
        types = mon.types
        for t in types:
            index = _TYPE_BY_ID.get(id(t))
            if index is not None:
                out[base + _P_TYPES + index] = 1.0
        is_tera = mon.is_terastallized
        if own or is_tera:
            tera = mon.tera_type
            if tera is not None:
                index = _TYPE_BY_ID.get(id(tera))
                if index is not None:
                    out[base + _P_TERA + index] = 1.0
        if is_tera:
            out[base + _P_TERASTALLIZED] = 1.0
        out[base + _P_BASE_STATS : base + _P_BASE_STATS + 6] = _base_stats(mon.species, gen)
        if active:
            boosts = mon.boosts
            b = base + _P_BOOSTS
            for i, stat in enumerate(BOOSTS):
                value = boosts.get(stat, 0)
                if value:
                    out[b + i] = value / 6.0
        out[base + _P_LEVEL] = mon.level / 100.0
        item = mon.item
        if own:
            if item:
                out[base + _P_ITEM] = 1.0
            out[base + _P_ABILITY] = 1.0
        else:
            if item and item != "unknown_item":
                out[base + _P_ITEM] = 1.0
            if mon.ability:
                out[base + _P_ABILITY] = 1.0

        effectiveness = self._effectiveness
        m = base + _P_MOVES
        for move in list(mon.moves.values())[:N_MOVE_SLOTS]:
            static = _move_static(move.id, gen)
            if static is not None:
                vec, move_type, is_status, max_pp = static
                out[m : m + MOVE_SIZE] = vec
                if max_pp:
                    pp = move.current_pp / max_pp
                    if pp > 0.0:
                        out[m + _M_PP] = min(1.0, pp)
                if other_types and not is_status:
                    key = (id(move_type), other_ids)
                    value = effectiveness.get(key)
                    if value is None:
                        value = _multiplier(move_type, other_types, gen) / 4.0
                        effectiveness[key] = value
                    out[m + _M_EFFECTIVENESS] = value
                if move_type in types:
                    out[m + _M_STAB] = 1.0
            m += MOVE_SIZE

    def _field(self, out: np.ndarray, battle: AbstractBattle) -> None:
        """The field block. Weather, fields and side conditions are usually empty
        dicts, so their entries are looked up by identity instead of testing every
        known member against them."""
        f = FIELD_OFFSET
        for weather in battle.weather:
            index = _WEATHER_BY_ID.get(id(weather))
            if index is not None:
                out[f + _F["weather"] + index] = 1.0
        for field in battle.fields:
            key = id(field)
            index = _TERRAIN_BY_ID.get(key)
            if index is not None:
                out[f + _F["terrain"] + index] = 1.0
            elif key == _TRICK_ROOM_ID:
                out[f + _F["trick_room"]] = 1.0
            elif key == _GRAVITY_ID:
                out[f + _F["gravity"]] = 1.0
        for offset, conditions in (
            (f + _F["own_side"], battle.side_conditions),
            (f + _F["opponent_side"], battle.opponent_side_conditions),
        ):
            for condition, count in conditions.items():
                entry = _SIDE_CONDITION_BY_ID.get(id(condition))
                if entry is not None:
                    i, layers = entry
                    value = count / layers if layers > 1 else 1.0
                    out[offset + i] = min(value, 1.0)
        if battle.used_tera or battle.used_dynamax:
            out[f + _F["own_gimmick_used"]] = 1.0
        if battle.opponent_used_tera or battle.opponent_used_dynamax:
            out[f + _F["opponent_gimmick_used"]] = 1.0
        out[f + _F["turn"]] = min(battle.turn / 100.0, HIGH)
        if battle.teampreview:
            out[f + _F["team_preview"]] = 1.0
        if battle.force_switch:
            out[f + _F["force_switch"]] = 1.0
        team = battle.team
        if team:
            out[f + _F["own_remaining"]] = sum(not m.fainted for m in team.values()) / len(team)
        size = max(self.team_size, len(battle.opponent_team), 1)
        opp_fainted = sum(m.fainted for m in battle.opponent_team.values())
        out[f + _F["opponent_remaining"]] = (size - opp_fainted) / size
