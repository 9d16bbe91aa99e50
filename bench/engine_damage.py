"""poke-engine's damage calculator beside pokegym's on the hits of ``pokegym bench calc``.

For every hit :class:`~bench.log_replay.LogReplay` scored, :func:`engine_state`
builds poke-engine's ``State`` from the same snapshot: the attacker active on side one and
the defender on side two, with their exact stats, HP, level, boosts, item, ability (none
while suppressed), status, types, Tera, weight, fainted team-mates and the volatiles the
engine's damage reads (Flash Fire, Charge, Slow Start, Magnet Rise, Tar Shot, Glaive Rush,
Roost, Protosynthesis / Quark Drive by stat, a type change); the field's weather, terrain,
Reflect, Light Screen and Aurora Veil; the order of the turn (whether the defender has
moved); and, as side two's choice, a switch when the defender came in this turn (the
engine's Stakeout reads it there). The defender's HP is its HP before the hit: the engine
computes one hit, so a later hit of a multi-hit move sees what the earlier ones left
(Multiscale used up). The engine's Pokémon has no count of the hits it took (Rage Fist)
nor of the types a Stellar Tera has boosted, so those are not given.

``poke_engine.calculate_damage`` answers with two numbers, the largest roll and the
largest critical-hit roll (a move of fixed damage such as Seismic Toss or Super Fang gives
one number). The engine applies no random factor to that answer; its smallest roll is the
largest times 0.85 (its own ``DamageRolls::Min``), so its range is
``[max * 85 // 100, max]``, from the critical-hit number for a hit flagged ``-crit``. A
hit is in the engine's range by the calculator's rule (:attr:`Hit.in_range`): the HP lost
lies in the range, or, when the HP lost is only a lower bound (a knock-out, Sturdy, Focus
Sash...), the largest roll reaches it.

Hits the engine cannot be given are counted by reason and left out of its figures: a
generation other than 9 (the engine is built for generation 9), a species or move the
engine does not know (it would read it as its ``NONE``), an item or ability it does not
know that can change damage (one of Showdown's damage callbacks in its data), a weather it
does not model (Delta Stream), a Pokémon with three types (it holds two), an error raised
by the engine. An item or ability it does not know and that has no damage callback (Light
Clay, Heat Rock, Mental Herb...) is given as it is, which the engine reads as an item or
ability without effect; those hits are counted too.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bench.log_state import Hit
from pokegym.world.damage import Combatant, Field
from pokegym.world.damage.tables import _RELEVANT_CALLBACKS as DAMAGE_CALLBACKS
from pokegym.world.data import Dex

ENGINE_GENERATION = 9
STATUS = {"brn": "burn", "par": "paralyze", "psn": "poison", "tox": "toxic", "slp": "sleep",
          "frz": "freeze"}  # fmt: skip
WEATHER = {
    "": "none", "sunnyday": "sun", "raindance": "rain", "sandstorm": "sand",
    "snowscape": "snow", "hail": "hail", "desolateland": "harshsun",
    "primordialsea": "heavyrain",
}  # fmt: skip
TERRAINS = frozenset(("electricterrain", "grassyterrain", "mistyterrain", "psychicterrain"))
# Volatiles the replay tracks that the engine's damage reads, under the same ids.
VOLATILES = frozenset(
    ("flashfire", "charge", "slowstart", "magnetrise", "tarshot", "glaiverush", "roost")
)
PARADOX_STATS = frozenset(("atk", "def", "spa", "spd", "spe"))
TEAM_SIZE = 6
# Side two's choice: the engine computes both sides' damage in one call.
NO_MOVE = "none"
SWITCH = "switch"
# A species the engine knows, for the fainted team-mates it counts (Last Respects,
# Supreme Overlord); a fainted slot named "none" is an empty one to the engine.
FAINTED_FILLER = "pikachu"


@dataclass(frozen=True)
class EngineRolls:
    """The engine's answer for one hit: its largest roll, and its largest critical-hit roll
    (None for a move of fixed damage, which gives one number)."""

    max_damage: int
    crit_max_damage: int | None

    def range(self, crit: bool) -> tuple[int, int]:
        """The engine's (smallest, largest) damage: the largest roll and its 85 %."""
        high = self.max_damage
        if crit and self.crit_max_damage is not None:
            high = self.crit_max_damage
        if self.crit_max_damage is None:
            return high, high
        return high * 85 // 100, high


@dataclass
class EngineHit:
    """One hit with both predictions: ours (on :attr:`hit`) and the engine's."""

    hit: Hit
    rolls: EngineRolls

    @property
    def low(self) -> int:
        return self.rolls.range(self.hit.crit)[0]

    @property
    def high(self) -> int:
        return self.rolls.range(self.hit.crit)[1]

    @property
    def in_range(self) -> bool:
        """The calculator's rule (:attr:`Hit.in_range`) on the engine's range."""
        if self.hit.censored:
            return self.high >= self.hit.lost
        return self.low <= self.hit.lost <= self.high


@dataclass
class EngineTally:
    """The hits given to the engine, and those it could not be given, by reason."""

    scored: list[EngineHit] = field(default_factory=list)
    not_given: Counter[str] = field(default_factory=Counter)
    # Hits given with an item or ability the engine does not know and that has no damage
    # callback in Showdown's data, by name.
    given_unknown: Counter[str] = field(default_factory=Counter)
    not_given_example: dict[str, Hit] = field(default_factory=dict)
    seconds_predicting: float = 0.0

    @property
    def given(self) -> int:
        return len(self.scored)


# ------------------------------------------------------------------ the state
def _types(types: Iterable[str]) -> tuple[str, str]:
    lowered = [t.lower() for t in types] or ["typeless"]
    return (lowered[0], lowered[1] if len(lowered) > 1 else "typeless")


def _own_types(c: Combatant) -> tuple[str, ...]:
    """The types the Pokémon has apart from Tera (the engine reads Tera from its own fields)."""
    if c.terastallized and c.original_types is not None:
        return c.original_types
    return c.types


def engine_pokemon(
    pe: Any, dex: Dex, c: Combatant, move: str = NO_MOVE, hp: int | None = None
) -> Any:
    """A ``poke_engine.Pokemon`` from a calculator :class:`Combatant` (``move`` its one
    move; ``hp`` instead of its own HP)."""
    entry = dex.species_entry(c.species)
    types = _types(_own_types(c))
    base_types = _types(entry.get("types") or ())
    weight = c.weight if c.weight is not None else float(entry.get("weightkg", 0.0) or 0.0)
    stats = c.stats
    return pe.Pokemon(
        id=c.species, level=int(c.level), types=types, base_types=base_types,
        hp=int(c.current_hp if hp is None else hp), maxhp=int(stats["hp"]),
        ability="none" if c.ability_suppressed or not c.ability else c.ability,
        base_ability=c.ability or "none", item=c.item or "none",
        attack=int(stats["atk"]), defense=int(stats["def"]),
        special_attack=int(stats["spa"]), special_defense=int(stats["spd"]),
        speed=int(stats["spe"]), status=STATUS.get(c.status, "none"), weight_kg=weight,
        moves=[pe.Move(id=move)], terastallized=bool(c.terastallized),
        tera_type=c.tera_type.lower() if c.tera_type else "typeless",
    )  # fmt: skip


def _volatiles(dex: Dex, c: Combatant) -> set[str]:
    names = {v for v in c.volatiles if v in VOLATILES}
    if c.paradox_stat in PARADOX_STATS:
        kind = "quarkdrive" if c.ability == "quarkdrive" else "protosynthesis"
        names.add(kind + c.paradox_stat)
    species_types = tuple(dex.species_entry(c.species).get("types") or ())
    if not c.terastallized and tuple(c.types) != species_types and "roost" not in c.volatiles:
        names.add("typechange")  # Protean and Libero change it only once
    return names


def _side(
    pe: Any, dex: Dex, c: Combatant, move: str, conditions: Any, hp: int | None = None
) -> Any:
    mons = [engine_pokemon(pe, dex, c, move, hp)]
    for _ in range(min(c.fainted_allies, TEAM_SIZE - 1)):
        mons.append(pe.Pokemon(id=FAINTED_FILLER, hp=0, maxhp=1))
    boosts = c.boosts
    return pe.Side(
        pokemon=mons, active_index="0", volatile_statuses=_volatiles(dex, c),
        side_conditions=pe.SideConditions(
            reflect=int(conditions.reflect), light_screen=int(conditions.light_screen),
            aurora_veil=int(conditions.aurora_veil), tailwind=int(conditions.tailwind),
        ),
        attack_boost=int(boosts.get("atk", 0)), defense_boost=int(boosts.get("def", 0)),
        special_attack_boost=int(boosts.get("spa", 0)),
        special_defense_boost=int(boosts.get("spd", 0)),
        speed_boost=int(boosts.get("spe", 0)), accuracy_boost=int(boosts.get("accuracy", 0)),
        evasion_boost=int(boosts.get("evasion", 0)),
    )  # fmt: skip


def engine_state(
    pe: Any,
    dex: Dex,
    attacker: Combatant,
    defender: Combatant,
    move: str,
    fld: Field,
    *,
    defender_hp: int | None = None,
) -> Any:
    """The engine's ``State`` for ``attacker`` (side one) using ``move`` on ``defender``
    (side two) on ``fld``; ``defender_hp`` instead of the defender's own HP."""
    return pe.State(
        side_one=_side(pe, dex, attacker, move, fld.attacker_side),
        side_two=_side(pe, dex, defender, NO_MOVE, fld.defender_side, defender_hp),
        weather=WEATHER.get(fld.weather, "none"), weather_turns_remaining=5 if fld.weather else 0,
        terrain=fld.terrain if fld.terrain in TERRAINS else "none",
        terrain_turns_remaining=5 if fld.terrain in TERRAINS else 0,
        trick_room=bool(fld.trick_room), trick_room_turns_remaining=5 if fld.trick_room else 0,
    )  # fmt: skip


def engine_rolls(
    pe: Any, state: Any, move: str, *, attacker_first: bool, defender_switched: bool = False
) -> EngineRolls:
    """``calculate_damage`` for side one's ``move`` in ``state``; ``defender_switched``:
    side two switched in this turn (the engine reads it from side two's choice, for
    Stakeout)."""
    defender_choice = SWITCH if defender_switched else NO_MOVE
    rolls, _ = pe.calculate_damage(state, move, defender_choice, attacker_first)
    values = [int(r) for r in rolls]
    if len(values) == 1:
        return EngineRolls(values[0], None)
    return EngineRolls(values[0], values[1])


# ------------------------------------------------------------------ names
class EngineNames:
    """Which names the engine knows: a name it does not know reads back as its ``NONE``
    (``UNKNOWNITEM`` for an item) after a round trip through its own serialisation."""

    def __init__(self, pe: Any):
        self.pe = pe
        self._known: dict[tuple[str, str], bool] = {}

    def known(self, kind: str, name: str) -> bool:
        """Whether the engine knows the ``kind`` ("species", "move", "item", "ability")
        called ``name`` (a Showdown id)."""
        if not name or name == "none":
            return True
        key = (kind, name)
        if key not in self._known:
            self._known[key] = self._read_back(kind, name) == name.upper()
        return self._known[key]

    def _read_back(self, kind: str, name: str) -> str:
        pe = self.pe
        values: dict[str, Any] = {}
        if kind == "species":
            values["id"] = name
        elif kind == "move":
            values["moves"] = [pe.Move(id=name)]
        elif kind in ("item", "ability"):
            values[kind] = name
        else:
            raise ValueError(f"unknown kind of name {kind!r}")
        state = pe.State(side_one=pe.Side(pokemon=[pe.Pokemon(**values)]))
        mon = pe.State.from_string(state.to_string()).side_one.pokemon[0]
        if kind == "species":
            return str(mon.id)
        if kind == "move":
            return str(mon.moves[0].id)
        return str(getattr(mon, kind))

    def unknown(self, hit: Hit) -> list[tuple[str, str]]:
        """The names of ``hit`` the engine does not know, as ``(kind, name)``."""
        names = [("move", hit.move)]
        for c in (hit.attacker, hit.defender):
            names += [("species", c.species), ("item", c.item), ("ability", c.ability)]
        return [(kind, name) for kind, name in names if not self.known(kind, name)]


def changes_damage(dex: Dex, kind: str, name: str) -> bool:
    """Whether Showdown's ``kind`` ("item", "ability") called ``name`` has a callback
    that can change the damage of a hit (any species or move: True)."""
    if kind not in ("item", "ability"):
        return True
    table = dex.items if kind == "item" else dex.abilities
    entry = table.get(name)
    return entry is None or bool(set(entry.get("callbacks", ())) & DAMAGE_CALLBACKS)


# ------------------------------------------------------------------ scoring
def _refusal(names: EngineNames, dex: Dex, hit: Hit, tally: EngineTally) -> str | None:
    if not hit.format_id.startswith(f"gen{ENGINE_GENERATION}"):
        return f"not generation {ENGINE_GENERATION} (the engine is built for it)"
    unknown = names.unknown(hit)
    refused = [f"{k} {n}" for k, n in unknown if changes_damage(dex, k, n)]
    if refused:
        return "unknown to the engine: " + ", ".join(refused)
    if hit.field.weather and hit.field.weather not in WEATHER:
        return f"weather {hit.field.weather} (the engine has none such)"
    for c in (hit.attacker, hit.defender):
        if len(_own_types(c)) > 2:
            return "a Pokémon with three types (the engine holds two)"
    for kind, name in unknown:
        tally.given_unknown[f"{kind} {name}"] += 1
    return None


def score_hits(pe: Any, dex: Dex, hits: Iterable[Hit]) -> EngineTally:
    """The engine's prediction for each of ``hits`` (``dex``: generation 9's data)."""
    tally = EngineTally()
    names = EngineNames(pe)
    for hit in hits:
        reason = _refusal(names, dex, hit, tally)
        if reason is None:
            start = time.perf_counter()
            try:
                # The engine computes one hit: the defender as it stands before this one
                # (a multi-hit move's first hit may have used up its Multiscale).
                state = engine_state(pe, dex, hit.attacker, hit.defender, hit.move, hit.field,
                                     defender_hp=hit.hp_before)  # fmt: skip
                rolls = engine_rolls(
                    pe, state, hit.move, attacker_first=not hit.target_moved,
                    defender_switched=hit.defender.just_switched_in,
                )  # fmt: skip
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # a Rust panic arrives as pyo3's PanicException
                reason = f"the engine raised {type(exc).__name__}: {exc}"
            else:
                tally.scored.append(EngineHit(hit, rolls))
            finally:
                tally.seconds_predicting += time.perf_counter() - start
        if reason is not None:
            tally.not_given[reason] += 1
            tally.not_given_example.setdefault(reason, hit)
    return tally
