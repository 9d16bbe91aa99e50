"""The battle as poke-engine sees it, built from one player's view and a guess of what
that player cannot see.

:func:`engine_state` turns a poke-env battle (the player deciding is side one) and a
*determinization* (one :class:`~pokegym.world.sets.PokemonSet` per opponent species,
drawn from :func:`~pokegym.world.priors.belief_for`) into a ``poke_engine.State``:

- our side exactly as the request gives it (stats, HP, moves and their PP, item,
  ability, status, boosts, volatile statuses, Tera);
- the opponent's Pokémon seen so far, each the determinized set with everything the
  battle revealed laid over it (HP fraction, status, boosts, moves used, item lost,
  Tera), through the world model's own :func:`~pokegym.world.state.opponent_mon_state`,
  so the search of ``mcts`` and the engine see the same guess;
- the opponent's Pokémon not seen yet: those shown at Team Preview with their sets, or,
  in formats without Team Preview, species drawn from the format's prior
  (:func:`unseen_opponents`) — without them the engine would score knocking out the
  last Pokémon seen as a win;
- hazards, screens, Tailwind, weather, terrain, Trick Room and their turns left.

The active Pokémon is put first on each side (the engine's slot 0). The engine names
species, moves, items and abilities by their Showdown ids; a name it does not know
becomes its ``NONE``, which :func:`unknown_names` reports.

:func:`engine_orders` maps the engine's root options (``"thunderbolt"``,
``"thunderbolt-tera"``, ``"switch pikachu"``) to the legal orders of the request.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle, Effect, Field, SideCondition, Status, Weather
from poke_env.battle import Pokemon as BattlePokemon
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder

from pokegym.world.data import Dex, to_id
from pokegym.world.history import (
    locked_move_uses,
    moved_this_turn,
    pending_wish,
    turns_asleep,
    weather_turns_left,
)
from pokegym.world.move_effects import WEATHER_ROCKS
from pokegym.world.sets import PokemonSet, compute_stats
from pokegym.world.state import MonState, default_set, opponent_mon_state, own_mon_state
from pokegym.world.transition import TERRAIN_ABILITIES, WEATHER_ABILITIES

log = logging.getLogger(__name__)

# The engine's names of the world model's status ids (pokegym.world.state.STATUS_IDS).
ENGINE_STATUS = {"brn": "burn", "par": "paralyze", "psn": "poison", "tox": "toxic",
                 "slp": "sleep", "frz": "freeze"}  # fmt: skip
WEATHER_NAMES = {
    Weather.SUNNYDAY: "sun", Weather.RAINDANCE: "rain", Weather.SANDSTORM: "sand",
    Weather.HAIL: "hail", Weather.SNOWSCAPE: "snow", Weather.SNOW: "snow",
    Weather.DESOLATELAND: "harshsun", Weather.PRIMORDIALSEA: "heavyrain",
}  # fmt: skip
TERRAIN_NAMES = {
    Field.ELECTRIC_TERRAIN: "electricterrain", Field.GRASSY_TERRAIN: "grassyterrain",
    Field.MISTY_TERRAIN: "mistyterrain", Field.PSYCHIC_TERRAIN: "psychicterrain",
}  # fmt: skip
# poke-env's effects that the engine keeps as volatile statuses, by the engine's name.
VOLATILES = {
    Effect.AQUA_RING: "aquaring", Effect.ATTRACT: "attract", Effect.CHARGE: "charge",
    Effect.CONFUSION: "confusion", Effect.CURSE: "curse", Effect.DESTINY_BOND: "destinybond",
    Effect.DISABLE: "disable", Effect.EMBARGO: "embargo", Effect.ENCORE: "encore",
    Effect.FLASH_FIRE: "flashfire", Effect.FOCUS_ENERGY: "focusenergy",
    Effect.GASTRO_ACID: "gastroacid", Effect.GLAIVE_RUSH: "glaiverush",
    Effect.HEAL_BLOCK: "healblock", Effect.INGRAIN: "ingrain", Effect.LASER_FOCUS: "laserfocus",
    Effect.LEECH_SEED: "leechseed", Effect.LOCKED_MOVE: "lockedmove",
    Effect.MAGNET_RISE: "magnetrise", Effect.MINIMIZE: "minimize",
    Effect.NO_RETREAT: "noretreat",
    Effect.OCTOLOCK: "octolock", Effect.PARTIALLY_TRAPPED: "partiallytrapped",
    Effect.PERISH1: "perish1", Effect.PERISH2: "perish2", Effect.PERISH3: "perish3",
    Effect.POWER_TRICK: "powertrick", Effect.PROTOSYNTHESISATK: "protosynthesisatk",
    Effect.PROTOSYNTHESISDEF: "protosynthesisdef", Effect.PROTOSYNTHESISSPA: "protosynthesisspa",
    Effect.PROTOSYNTHESISSPD: "protosynthesisspd", Effect.PROTOSYNTHESISSPE: "protosynthesisspe",
    Effect.QUARKDRIVEATK: "quarkdriveatk", Effect.QUARKDRIVEDEF: "quarkdrivedef",
    Effect.QUARKDRIVESPA: "quarkdrivespa", Effect.QUARKDRIVESPD: "quarkdrivespd",
    Effect.QUARKDRIVESPE: "quarkdrivespe", Effect.SALT_CURE: "saltcure",
    Effect.SLOW_START: "slowstart", Effect.SMACK_DOWN: "smackdown",
    Effect.STOCKPILE: "stockpile", Effect.SUBSTITUTE: "substitute",
    Effect.SYRUP_BOMB: "syrupbomb", Effect.TAR_SHOT: "tarshot", Effect.TAUNT: "taunt",
    Effect.THROAT_CHOP: "throatchop", Effect.TORMENT: "torment", Effect.TYPECHANGE: "typechange",
    Effect.YAWN: "yawn",
}  # fmt: skip
# Volatile statuses whose turns the engine counts up from 0.
COUNTED = {"confusion": Effect.CONFUSION, "encore": Effect.ENCORE, "taunt": Effect.TAUNT,
           "yawn": Effect.YAWN, "slowstart": Effect.SLOW_START,
           "lockedmove": Effect.LOCKED_MOVE}  # fmt: skip
# The largest count the engine takes for each while the status lasts (it refuses more).
COUNTED_MAX = {"confusion": 3, "encore": 1, "taunt": 2, "yawn": 1, "slowstart": 5,
               "lockedmove": 2}  # fmt: skip
SCREEN_TURNS = 5
CHOICE_ITEMS = frozenset({"choiceband", "choicespecs", "choicescarf"})
ONCE_IN_A_ROW = frozenset({"gigatonhammer", "bloodmoon"})
MAX_SLEEP_TURNS = 3
TEAM_SIZE = 6


def import_engine() -> Any:
    """The ``poke_engine`` module, or :class:`~pokegym.errors.EngineMissingError`."""
    from pokegym.engine import require_engine  # the build lives in the battle layer

    return require_engine()


@dataclass(frozen=True)
class Sample:
    """One guess of the whole battle: the engine state and how likely it is (weights are
    relative)."""

    state: Any
    weight: float = 1.0


# ------------------------------------------------------------------ Pokémon
def _types(dex: Dex, species: str) -> tuple[str, str]:
    types = [t.lower() for t in dex.species_entry(species)["types"]][:2]
    return (types[0], types[1] if len(types) > 1 else "typeless")


def _max_pp(dex: Dex, move: str) -> int:
    entry = dex.moves.get(move) or {}
    base = int(entry.get("pp", 16) or 1)
    return base if entry.get("noPPBoosts") else base * 8 // 5


def engine_pokemon(
    pe: Any,
    dex: Dex,
    mon: MonState,
    *,
    pp: Mapping[str, int] | None = None,
    disabled: Sequence[str] = (),
    sleep_turns: int = 0,
    rest_turns: int = 0,
) -> Any:
    """A ``poke_engine.Pokemon`` from a world-model Pokémon (its set made concrete)."""
    pp = pp or {}
    moves = [pe.Move(id=m, pp=max(0, int(pp.get(m, _max_pp(dex, m)))), disabled=m in disabled)
             for m in mon.moves[:4]]  # fmt: skip
    while len(moves) < 4:
        moves.append(pe.Move(id="none", pp=0, disabled=True))
    types = _types(dex, mon.species)
    tera = mon.tera_type.lower() if mon.tera_type else "typeless"
    status = ENGINE_STATUS.get(mon.status, "none")
    return pe.Pokemon(
        id=mon.species,
        level=int(mon.level),
        types=types,
        base_types=types,
        hp=max(0, round(mon.hp)),
        maxhp=int(mon.stats[0]),
        ability=mon.ability or "none",
        base_ability=mon.ability or "none",
        item=mon.item or "none",
        attack=int(mon.stats[1]),
        defense=int(mon.stats[2]),
        special_attack=int(mon.stats[3]),
        special_defense=int(mon.stats[4]),
        speed=int(mon.stats[5]),
        status=status,
        sleep_turns=sleep_turns if status == "sleep" else 0,
        rest_turns=rest_turns if status == "sleep" else 0,
        weight_kg=float(mon.weight),
        moves=moves,
        terastallized=bool(mon.terastallized),
        tera_type=tera,
    )


def _pp_of(mon: BattlePokemon) -> dict[str, int]:
    return {to_id(move_id): int(move.current_pp) for move_id, move in mon.moves.items()}


# ------------------------------------------------------------------ sides
TIMED_CONDITIONS: dict[SideCondition, tuple[str, int]] = {
    SideCondition.REFLECT: ("reflect", SCREEN_TURNS),
    SideCondition.LIGHT_SCREEN: ("light_screen", SCREEN_TURNS),
    SideCondition.AURORA_VEIL: ("aurora_veil", SCREEN_TURNS),
    SideCondition.TAILWIND: ("tailwind", 4),
    SideCondition.SAFEGUARD: ("safeguard", SCREEN_TURNS),
    SideCondition.MIST: ("mist", SCREEN_TURNS),
}
"""The side conditions the engine counts down: its name for each and its duration."""


def turns_left(start: int, turn: int, duration: int = SCREEN_TURNS) -> int:
    """The turns a side condition that began on turn ``start`` (poke-env's value for a
    screen, Tailwind, Safeguard, Mist) has left on turn ``turn``, as the engine counts
    them (1 at least while it is up)."""
    return max(1, duration - max(0, turn - int(start)))


def _side_conditions(pe: Any, conditions: Mapping[SideCondition, int], turn: int,
                     toxic_count: int, protect: int = 0) -> Any:  # fmt: skip
    # ``protect``: the active Pokémon's successful protections in a row (the engine's
    # chance that one more works is 1/3 to that power)
    values: dict[str, int] = {"toxic_count": toxic_count, "protect": protect}
    for condition, value in conditions.items():
        if condition is SideCondition.STEALTH_ROCK:
            values["stealth_rock"] = 1
        elif condition is SideCondition.SPIKES:
            values["spikes"] = min(3, int(value))
        elif condition is SideCondition.TOXIC_SPIKES:
            values["toxic_spikes"] = min(2, int(value))
        elif condition is SideCondition.STICKY_WEB:
            values["sticky_web"] = 1
        elif condition in TIMED_CONDITIONS:
            name, duration = TIMED_CONDITIONS[condition]
            values[name] = turns_left(value, turn, duration)
    return pe.SideConditions(**values)


def _volatiles(active: BattlePokemon | None) -> tuple[set[str], dict[str, int]]:
    if active is None:
        return set(), {}
    effects = active.effects
    names = {VOLATILES[e] for e in effects if e in VOLATILES}
    durations = {name: min(int(effects[e]), COUNTED_MAX[name])
                 for name, e in COUNTED.items() if e in effects}  # fmt: skip
    if "slowstart" in durations:  # the engine counts Slow Start's turns down
        durations["slowstart"] = max(1, 5 - durations["slowstart"])
    if "yawn" in durations:  # poke-env does not count it; one end of turn has passed since
        durations["yawn"] = 1
    return names, durations


def _side(
    pe: Any,
    pokemon: list[Any],
    active: BattlePokemon | None,
    conditions: Mapping[SideCondition, int],
    turn: int,
    active_moves: Sequence[str],
    *,
    force_switch: bool = False,
    force_trapped: bool = False,
    slow_uturn_move: bool = False,
    active_index: int = 0,
    wish: int = 0,
    locked: int = 0,
) -> Any:
    names, durations = _volatiles(active)
    if locked:  # turns in a row of Outrage and the like (the engine ends it after three)
        names.add("lockedmove")
        durations["lockedmove"] = min(locked, COUNTED_MAX["lockedmove"])
    last_used = _last_used_move(active, active_moves)
    if not last_used.startswith("move:"):
        names.discard("encore")  # the engine's Encore repeats the last move used
        durations.pop("encore", None)
    boosts = active.boosts if active is not None else {}
    toxic = int(active.status_counter) if active is not None and active.status is Status.TOX else 0
    protect = int(active.protect_counter) if active is not None else 0
    pokemon = list(pokemon[:TEAM_SIZE])
    # a whole Substitute (its damage is not shown): a quarter of the engine's max HP,
    # which for the opponent is in stat points where poke-env's is a percentage
    substitute = int(pokemon[active_index].maxhp) // 4 if "substitute" in names else 0
    while len(pokemon) < TEAM_SIZE:
        pokemon.append(pe.Pokemon(id="none", level=1, hp=0, maxhp=1))
    return pe.Side(
        pokemon=pokemon,
        active_index=str(active_index),
        side_conditions=_side_conditions(pe, conditions, turn, toxic, protect),
        volatile_statuses=names,
        volatile_status_durations=pe.VolatileStatusDurations(**durations),
        substitute_health=substitute,
        attack_boost=int(boosts.get("atk", 0)),
        defense_boost=int(boosts.get("def", 0)),
        special_attack_boost=int(boosts.get("spa", 0)),
        special_defense_boost=int(boosts.get("spd", 0)),
        speed_boost=int(boosts.get("spe", 0)),
        accuracy_boost=int(boosts.get("accuracy", 0)),
        evasion_boost=int(boosts.get("evasion", 0)),
        force_switch=force_switch,
        force_trapped=force_trapped,
        slow_uturn_move=slow_uturn_move,
        last_used_move=last_used,
        wish=(1, wish) if wish else (0, 0),  # heals ``wish`` HP at this turn's end
    )


def _last_used_move(active: BattlePokemon | None, moves: Sequence[str]) -> str:
    """The engine's ``last_used_move``: ``move:i`` for the active Pokémon's move in slot
    ``i`` that it used last, ``switch:0`` when it has used none since it came in."""
    if active is None:
        return "move:none"
    for move_id, move in active.moves.items():
        if move.is_last_used and to_id(move_id) in moves:
            return f"move:{list(moves).index(to_id(move_id))}"
    return "switch:0"


def _active_first(mons: list[BattlePokemon]) -> list[BattlePokemon]:
    return sorted(mons, key=lambda mon: not mon.active)


def unseen_opponents(
    battle: AbstractBattle,
    determinization: Mapping[str, PokemonSet],
    prior: Any,
    rng: np.random.Generator,
) -> list[PokemonSet]:
    """Sets for the opponent's Pokémon not seen yet: first those of ``determinization``
    that no seen Pokémon has (Team Preview's), then species drawn from ``prior``'s table
    in proportion to how often the format's teams hold them (no species twice)."""
    shown = _seen_opponents(battle)
    seen = {to_id(mon.species) for mon in shown}
    bases = {prior.dex.base_species(s) for s in seen}
    missing = max(0, _team_size(battle) - len(shown))
    out: list[PokemonSet] = []
    for species, pset in determinization.items():
        if len(out) >= missing:
            return out
        if species not in seen and prior.dex.base_species(species) not in bases:
            out.append(pset)
            bases.add(prior.dex.base_species(species))
    table = getattr(prior, "table", None)
    if not table or len(out) >= missing:
        return out
    species, weights = _species_weights(prior)
    while len(out) < missing:
        pick = species[int(rng.choice(len(species), p=weights))]
        if prior.dex.base_species(pick) in bases:
            continue
        bases.add(prior.dex.base_species(pick))
        out.append(prior.distribution(pick).sample(rng, 1)[0])
    return out


def _seen_opponents(battle: AbstractBattle) -> list[BattlePokemon]:
    """The opponent's Pokémon that have been out (at Team Preview poke-env's
    ``opponent_team`` holds the previewed ones, none of them out yet)."""
    return [m for m in battle.opponent_team.values() if m.revealed or m.active]


_WEIGHTS: dict[int, tuple[list[str], np.ndarray]] = {}


def _species_weights(prior: Any) -> tuple[list[str], np.ndarray]:
    cached = _WEIGHTS.get(id(prior))
    if cached is None:
        species = sorted(prior.table)
        totals = np.array([sum(w for _, w in prior.table[s]) for s in species], dtype=float)
        cached = _WEIGHTS[id(prior)] = (species, totals / totals.sum())
    return cached


def _team_size(battle: AbstractBattle) -> int:
    size = getattr(battle, "_team_size", None) or {}
    role = getattr(battle, "opponent_role", None)
    if isinstance(size, dict) and role in size:
        return int(size[role])
    return TEAM_SIZE


# ------------------------------------------------------------------ state
def engine_state(
    battle: AbstractBattle,
    dex: Dex,
    determinization: Mapping[str, PokemonSet],
    unseen: Sequence[PokemonSet] = (),
    leads: tuple[int, int] | None = None,
    reply: str | None = None,
) -> Any:
    """The ``poke_engine.State`` of ``battle`` for its player (side one), the opponent's
    hidden sets from ``determinization`` (keyed by species id) and ``unseen`` sets for
    the opponent's Pokémon not seen yet.

    ``leads`` (at Team Preview, before any Pokémon is out): the slots of our team (in
    the request's order) and of the opponent's (the order of the state's side two) sent
    out first, with the weather or terrain their abilities set on entry (see
    :func:`lead_field`).

    ``reply``: the opponent's choice this turn, by the engine's name of it, as the only
    one its root offers: a move (``"thunderbolt"``; its Tera form stays open) leaves the
    active Pokémon that move alone, disabled as a Choice lock is, until it switches out,
    and no switch this turn; a switch (``"switch pikachu"``) disables its moves (any
    switch stays open). A move the guess's active Pokémon lacks leaves the opponent
    free."""
    pe = import_engine()
    ours = _active_first(list(battle.team.values()))
    our_pokemon = []
    available = {to_id(m.id) for m in battle.available_moves}
    for mon in ours:
        state = own_mon_state(dex, mon)
        disabled: Sequence[str] = ()
        if mon.active and available and not battle.force_switch:
            disabled = [m for m in state.moves
                        if m not in available and not _once_in_a_row(mon, m)]  # fmt: skip
        our_pokemon.append(engine_pokemon(pe, dex, state, pp=_pp_of(mon), disabled=disabled,
                                          **_sleep(battle, mon)))  # fmt: skip
    our_active = next((m for m in ours if m.active), None)
    force_switch = bool(battle.force_switch) and our_active is not None and not our_active.fainted
    our_lead, their_lead = leads or (0, 0)
    side_one = _side(pe, our_pokemon, our_active, battle.side_conditions, battle.turn,
                     [m.id for m in our_pokemon[our_lead].moves],
                     force_switch=force_switch,
                     force_trapped=bool(battle.trapped) and not battle.force_switch,
                     active_index=our_lead,
                     wish=_wish(battle, battle.player_role or "p1", ours, our_pokemon))  # fmt: skip

    theirs = _active_first(_seen_opponents(battle))
    their_pokemon = []
    trapped = False
    their_role = battle.opponent_role or "p2"
    locked = 0 if reply else locked_move_uses(battle, their_role)
    for mon in theirs:
        species = to_id(mon.species)
        pset = determinization.get(species) or default_set(dex, species, mon.level)
        state = opponent_mon_state(dex, mon, pset)
        disabled: Sequence[str] = ()
        if reply and mon.active:
            disabled, trapped = _reply_restriction(reply, state.moves[:4])
        elif mon.active:
            disabled = _move_lock(mon, state.item, state.moves[:4], locked=bool(locked))
        their_pokemon.append(engine_pokemon(pe, dex, state, pp=_pp_of(mon), disabled=disabled,
                                            **_sleep(battle, mon)))  # fmt: skip
    for pset in unseen:
        their_pokemon.append(engine_pokemon(pe, dex, _unseen_mon(dex, pset)))
    their_active = next((m for m in theirs if m.active), None)
    their_moves = [m.id for m in their_pokemon[their_lead].moves] if their_pokemon else []
    waiting = force_switch and not moved_this_turn(battle, their_role)
    side_two = _side(pe, their_pokemon, their_active, battle.opponent_side_conditions,
                     battle.turn, their_moves, slow_uturn_move=waiting,
                     force_trapped=trapped, active_index=their_lead,
                     wish=_wish(battle, their_role, theirs, their_pokemon),
                     locked=locked)  # fmt: skip

    weather, weather_turns = "none", 0
    for w, start in battle.weather.items():
        weather = WEATHER_NAMES.get(w, "none")
        weather_turns = weather_turns_left(battle) or max(1, 5 - max(0, battle.turn - int(start)))
    terrain, terrain_turns, trick_room, trick_room_turns = "none", 0, False, 0
    for f, start in battle.fields.items():
        left = max(1, 5 - max(0, battle.turn - int(start)))
        if f in TERRAIN_NAMES:
            terrain, terrain_turns = TERRAIN_NAMES[f], left
        elif f is Field.TRICK_ROOM:
            trick_room, trick_room_turns = True, left
    if leads is not None:
        entry = lead_field(our_pokemon[our_lead], their_pokemon[their_lead])
        weather, weather_turns, terrain, terrain_turns = entry
    return pe.State(
        side_one=side_one,
        side_two=side_two,
        weather=weather,
        weather_turns_remaining=weather_turns,
        terrain=terrain,
        terrain_turns_remaining=terrain_turns,
        trick_room=trick_room,
        trick_room_turns_remaining=trick_room_turns,
        team_preview=False,
    )


def _wish(battle: AbstractBattle, role: str, mons: Sequence[BattlePokemon],
          pokemon: Sequence[Any]) -> int:  # fmt: skip
    """The HP a Wish of ``role``'s side heals at this turn's end (half its user's max
    HP, in the engine's points); 0 for none."""
    wisher = pending_wish(battle, role)
    team = battle.team if role == (battle.player_role or "p1") else battle.opponent_team
    user = team.get(wisher) if wisher else None
    index = next((i for i, mon in enumerate(mons) if mon is user), None)
    return int(pokemon[index].maxhp) // 2 if index is not None else 0


def _last_used(mon: BattlePokemon) -> str | None:
    return next((to_id(m) for m, move in mon.moves.items() if move.is_last_used), None)


def _once_in_a_row(mon: BattlePokemon, move: str) -> bool:
    """Whether ``move`` is out of this request only because ``mon`` used it last and it
    cannot be used twice in a row (Gigaton Hammer, Blood Moon): the engine applies that
    rule itself each turn, where a disabled flag would last the whole search."""
    return move in ONCE_IN_A_ROW and _last_used(mon) == move


def _move_lock(mon: BattlePokemon, item: str | None, moves: Sequence[str],
                 locked: bool = False) -> list[str]:  # fmt: skip
    """The moves an opponent's Choice item bars, or its lock into Outrage and the like
    (``locked``): all but the one it used last since it came in (none before it has
    moved, or for another item), as the engine's own lock disables them."""
    last = _last_used(mon)
    choice = to_id(item or "") in CHOICE_ITEMS
    if not (choice or locked) or last is None or last not in moves:
        return []
    return [m for m in moves if m != last]


def _reply_restriction(reply: str, moves: Sequence[str]) -> tuple[list[str], bool]:
    """The moves to disable and whether to bar switching, for ``engine_state``'s ``reply``."""
    if reply.startswith("switch "):
        return list(moves), False
    move = reply.removesuffix("-tera")
    if move not in moves:
        return [], False
    return [m for m in moves if m != move], True


def lead_field(ours: Any, theirs: Any) -> tuple[str, int, str, int]:
    """The weather and terrain (engine names, and turns) once two leads are out: each
    lead's entry ability (Drizzle, Electric Surge, ...: the world model's tables) in
    speed order, so the slower one's stands, as in the game; a weather rock or Terrain
    Extender makes 8 turns of 5. Other entry effects (Intimidate, Booster Energy) are
    not applied."""
    weather, weather_turns, terrain, terrain_turns = "none", 0, "none", 0
    for mon in sorted((ours, theirs), key=lambda m: -int(m.speed)):
        ability, item = to_id(str(mon.ability)), to_id(str(mon.item))
        if ability in WEATHER_ABILITIES:
            world = WEATHER_ABILITIES[ability]
            weather = WEATHER_NAMES.get(Weather.from_showdown_message(world), "none")
            weather_turns = 8 if item == WEATHER_ROCKS.get(world) else 5
        elif ability in TERRAIN_ABILITIES:
            terrain = TERRAIN_ABILITIES[ability]
            terrain_turns = 8 if item == "terrainextender" else 5
    return weather, weather_turns, terrain, terrain_turns


def _sleep(battle: AbstractBattle, mon: BattlePokemon) -> dict[str, int]:
    """The engine's sleep counters: a Pokémon that knows Rest slept by it (it wakes after
    two turns asleep), any other counts its turns asleep (at most the three a sleep
    lasts in these generations)."""
    if mon.status is not Status.SLP:
        return {}
    asleep = turns_asleep(battle, mon)
    if "rest" in {to_id(m) for m in mon.moves}:
        return {"rest_turns": min(3, max(1, 3 - asleep))}
    return {"sleep_turns": min(MAX_SLEEP_TURNS, asleep)}


def _unseen_mon(dex: Dex, pset: PokemonSet) -> MonState:
    raw = compute_stats(dex, pset.species, pset.level, pset.evs, pset.ivs, pset.nature)
    stats = (raw["hp"], raw["atk"], raw["def"], raw["spa"], raw["spd"], raw["spe"])
    entry = dex.species_entry(pset.species)
    return MonState(species=pset.species, level=pset.level, types=tuple(entry["types"]),
                    stats=stats, hp=float(stats[0]), moves=tuple(pset.moves)[:4],
                    item=pset.item, ability=pset.ability, tera_type=pset.tera_type,
                    weight=float(entry.get("weightkg", 100.0)))  # fmt: skip


# ------------------------------------------------------------------ orders
def engine_orders(battle: AbstractBattle) -> dict[str, BattleOrder]:
    """The request's legal orders by the engine's name for them."""
    orders: dict[str, BattleOrder] = {}
    for move in battle.available_moves:
        orders[to_id(move.id)] = SingleBattleOrder(move)
        if battle.can_tera:
            orders[to_id(move.id) + "-tera"] = SingleBattleOrder(move, terastallize=True)
    for mon in battle.available_switches:
        orders["switch " + to_id(mon.species)] = SingleBattleOrder(mon)
    return orders


def unknown_names(state: Any) -> list[str]:
    """The species, moves, items and abilities of ``state`` that the engine does not know
    (read back after a round trip through its own serialisation)."""
    pe = import_engine()
    back = pe.State.from_string(state.to_string())
    unknown = []
    for side, side_back in ((state.side_one, back.side_one), (state.side_two, back.side_two)):
        for mon, mon_back in zip(side.pokemon, side_back.pokemon, strict=True):
            if mon.hp <= 0 and mon.id == "none":
                continue
            checks = [("species", mon.id, mon_back.id), ("item", mon.item, mon_back.item),
                      ("ability", mon.ability, mon_back.ability)]  # fmt: skip
            checks += [("move", m.id, mb.id) for m, mb in zip(mon.moves, mon_back.moves,
                                                                strict=True)]  # fmt: skip
            for kind, given, read in checks:
                if to_id(str(given)) not in ("", "none") and to_id(str(read)) != to_id(str(given)):
                    unknown.append(f"{kind} {given}")
    return unknown
