"""Showdown's own damage and Speed numbers, for checking :mod:`pokegym.world.damage`
and :mod:`pokegym.world.speed` against.

The simulator bridge's ``damage`` command builds a fresh battle with one Pokémon a
side, applies the state given here (HP, boosts, status, Tera, weather, terrain,
screens), prepares the move as Showdown's ``useMove`` does, runs the checks of
Showdown's ``trySpreadMoveHit`` (the move's Try and PrepareHit, TryHit, immunities, the
move's TryImmunity, the OHKO rules) and calls Showdown's ``getDamage`` once per damage
roll with the roll (and the critical hit) forced. What comes back is therefore
Showdown's arithmetic, not a re-implementation of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pokegym.showdown.simulator import Simulator, shared_simulator
from pokegym.world.damage import Combatant, Field, Side, known_species
from pokegym.world.data import STATS, Dex, load_dex
from pokegym.world.sets import PokemonSet

_PARADOX = ("protosynthesis", "quarkdrive")


def showdown_set(pokemon_set: PokemonSet) -> dict[str, Any]:
    """A :class:`PokemonSet` as Showdown's ``PokemonSet`` JSON."""
    data: dict[str, Any] = {
        "species": pokemon_set.species,
        "name": pokemon_set.species,
        "level": pokemon_set.level,
        "item": pokemon_set.item,
        "ability": pokemon_set.ability,
        "moves": list(pokemon_set.moves) or ["tackle"],
        "nature": pokemon_set.nature or "serious",
        "evs": dict(zip(STATS, pokemon_set.evs, strict=True)),
        "ivs": dict(zip(STATS, pokemon_set.ivs, strict=True)),
    }
    if pokemon_set.tera_type:
        data["teraType"] = pokemon_set.tera_type
    if pokemon_set.gender:
        data["gender"] = pokemon_set.gender
    return data


def showdown_damage(
    attacker: PokemonSet,
    defender: PokemonSet,
    move: str,
    *,
    gen: int = 9,
    options: dict[str, Any] | None = None,
    simulator: Simulator | None = None,
) -> dict[str, Any]:
    """Showdown's damage for each of the 16 rolls, without and with a critical hit.

    ``options`` follows the bridge's ``damage`` command (see ``js/sim_bridge.js``):
    ``{"attacker": {...}, "defender": {...}, "weather": "sunnyday", "terrain": ...,
    "gravity": bool, "reflect": bool, "lightScreen": bool, "auroraVeil": bool,
    "hit": n, "priorHits": bool, "chargeTurn": bool, "damageEvent": bool}``, a side's
    state being ``{"hp", "boosts", "status", "tera", "itemRemoved", "volatiles",
    "activeTurns", "newlySwitched", "timesAttacked", "fainted"}``. ``priorHits`` plays
    hits 1..n-1 of a multi-hit move for real first (Weak Armor, a Disguise breaking),
    ``chargeTurn`` runs a charging move's first turn first (Meteor Beam's +1 Special
    Attack), ``damageEvent`` passes each roll through the target's Damage event
    (Disguise, Sturdy, Focus Sash).

    Returns ``{"rolls": [16 ints or None], "critRolls": [...], "type", "category",
    "immune", "fail", "basePower", "priorDamage", "defender"}``: ``critRolls`` are the
    numbers of a hit that crits when it can; ``fail`` names the check that stopped the
    move; ``defender`` (species, hp, maxhp, boosts) is the target just before the hit.
    """
    request = DamageRequest(attacker, defender, move, gen=gen, options=options or {})
    return showdown_damage_many([request], simulator=simulator)[0]


@dataclass(frozen=True)
class DamageRequest:
    """One question for :func:`showdown_damage_many` (the arguments of
    :func:`showdown_damage`)."""

    attacker: PokemonSet
    defender: PokemonSet
    move: str
    gen: int = 9
    options: dict[str, Any] = field(default_factory=dict)

    def command(self) -> list[Any]:
        return [
            "damage",
            f"gen{self.gen}customgame",
            showdown_set(self.attacker),
            showdown_set(self.defender),
            self.move,
            self.options,
        ]


def showdown_damage_many(
    requests: Sequence[DamageRequest], *, simulator: Simulator | None = None
) -> list[dict[str, Any]]:
    """:func:`showdown_damage` for many requests in one round trip to the simulator.

    Raises:
        KeyError: a move or species Showdown's data for that generation does not have.
        RuntimeError: Showdown could not compute one of them (an option it cannot
            apply); the message names the request.
    """
    if not requests:
        return []
    for request in requests:
        # Showdown quietly makes up an empty move for an unknown name: refuse it here.
        dex = load_dex(request.gen)
        dex.move_entry(request.move)
        for pokemon_set in (request.attacker, request.defender):
            known_species(dex, pokemon_set.species)
    sim = simulator or shared_simulator()
    sim.ensure_running()
    results = sim.call([request.command() for request in requests])
    for request, result in zip(requests, results, strict=True):
        if isinstance(result, dict) and "error" in result:
            first = str(result["error"]).split("\n")[0]
            raise RuntimeError(
                f"Showdown's damage reference failed for {request.attacker.species} "
                f"{request.move} -> {request.defender.species} (gen {request.gen}): {first}"
            )
    return results  # type: ignore[no-any-return]


def calculator_inputs(
    dex: Dex,
    attacker: PokemonSet,
    defender: PokemonSet,
    options: dict[str, Any] | None = None,
) -> tuple[Combatant, Combatant, Field]:
    """The calculator's view of the situation that ``options`` describes for Showdown
    (same keys as :func:`showdown_damage`), so that both can be asked the same question."""
    options = options or {}
    combatants = [
        _combatant(dex, pokemon_set, options.get(role) or {})
        for pokemon_set, role in ((attacker, "attacker"), (defender, "defender"))
    ]
    fld = Field(
        weather=options.get("weather", ""),
        terrain=options.get("terrain", ""),
        gravity=bool(options.get("gravity")),
        trick_room=bool(options.get("trickRoom")),
        defender_side=Side(
            reflect=bool(options.get("reflect")),
            light_screen=bool(options.get("lightScreen")),
            aurora_veil=bool(options.get("auroraVeil")),
        ),
    )
    return combatants[0], combatants[1], fld


def _combatant(dex: Dex, pokemon_set: PokemonSet, state: dict[str, Any]) -> Combatant:
    known = {
        "hp", "boosts", "status", "tera", "itemRemoved", "volatiles", "activeTurns",
        "newlySwitched", "timesAttacked", "fainted",
    }  # fmt: skip
    unknown = set(state) - known
    if unknown:
        raise ValueError(f"Unknown state keys {sorted(unknown)}; known: {sorted(known)}")
    values: dict[str, Any] = {}
    if state.get("hp") is not None:
        values["hp"] = int(state["hp"])
    if state.get("boosts"):
        values["boosts"] = dict(state["boosts"])
    if state.get("status"):
        values["status"] = state["status"]
    if state.get("tera"):
        values["terastallized"] = True
    if state.get("itemRemoved"):
        values["item"] = ""
    volatiles = set()
    for volatile, best_stat in (state.get("volatiles") or {}).items():
        if volatile in _PARADOX:
            values["paradox_stat"] = best_stat or ""
        else:
            volatiles.add(volatile)
    values["volatiles"] = frozenset(volatiles)
    if state.get("activeTurns", 1) == 0 or state.get("newlySwitched"):
        values["just_switched_in"] = True
    if state.get("timesAttacked"):
        values["times_attacked"] = int(state["timesAttacked"])
    if state.get("fainted"):
        values["fainted_allies"] = int(state["fainted"])
    return Combatant.from_set(dex, pokemon_set, **values)


def showdown_speeds(
    p1: PokemonSet,
    p2: PokemonSet,
    *,
    gen: int = 9,
    options: dict[str, Any] | None = None,
    simulator: Simulator | None = None,
) -> dict[str, dict[str, int]]:
    """Showdown's ``getStat('spe')`` and ``getActionSpeed()`` of two Pokémon, one a side.

    Asked in the generation's OU format: custom-game formats skip the 10,000 cap and the
    13-bit truncation that every ladder format applies.

    ``options`` follows the bridge's ``speed`` command: ``{"p1": state, "p2": state,
    "weather", "terrain", "trickRoom": bool, "tailwind": [p1, p2], "swamp": [p1, p2]}``,
    a state as in :func:`showdown_damage`. Returns ``{"p1": {"stat", "action"}, "p2":
    {...}}``.
    """
    return showdown_speeds_many([(p1, p2, gen, options or {})], simulator=simulator)[0]


def showdown_speeds_many(
    questions: Sequence[tuple[PokemonSet, PokemonSet, int, dict[str, Any]]],
    *,
    simulator: Simulator | None = None,
) -> list[dict[str, dict[str, int]]]:
    """:func:`showdown_speeds` for many ``(p1, p2, gen, options)`` in one round trip."""
    for p1, p2, gen, _ in questions:
        dex = load_dex(gen)
        for pokemon_set in (p1, p2):
            known_species(dex, pokemon_set.species)
    sim = simulator or shared_simulator()
    sim.ensure_running()
    commands = [
        ["speed", f"gen{gen}ou", showdown_set(p1), showdown_set(p2), options]
        for p1, p2, gen, options in questions
    ]
    results = sim.call(commands)
    for (p1, p2, gen, _), result in zip(questions, results, strict=True):
        if isinstance(result, dict) and "error" in result:
            first = str(result["error"]).split("\n")[0]
            raise RuntimeError(
                f"Showdown's speed reference failed for {p1.species} / {p2.species} "
                f"(gen {gen}): {first}"
            )
    return results  # type: ignore[no-any-return]
