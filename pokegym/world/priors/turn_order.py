"""Speed and turn order: what the order in which two Pokémon moved says about the
opponent's Speed, item and ability (:class:`TurnOrder`, :func:`order_consistent`,
:func:`speed_bounds`). The Speed of a set is computed by :mod:`pokegym.world.speed`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pokegym.world.data import Dex, load_dex, to_id
from pokegym.world.sets import PokemonSet, compute_stats
from pokegym.world.speed import action_speed, effective_speed

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class SpeedFacts:
    """One side's speed-relevant state when the turn's order was decided.

    ``item``/``ability`` ``None`` mean "not known": for the opponent they are taken
    from each candidate set; for our side they count as none.

    Attributes:
        boost: the Speed stage (-6..6).
        status: ``"par"``, ``"brn"``, ... or ``""``.
        tailwind: Tailwind on this side.
        swamp: the Grass/Water Pledge swamp on this side (Speed x0.25).
        item: the held item (``""``: none).
        ability: the ability.
        speed_ability_boost: Protosynthesis / Quark Drive is boosting Speed.
        item_lost: the item was lost while on the field (Unburden).
        slow_start: Slow Start is active.
        dynamaxed: Dynamaxed (Choice Scarf does nothing).
        hp_full: at full HP (Gale Wings).
        species: the species at that moment (None: the set's species).
    """

    boost: int = 0
    status: str = ""
    tailwind: bool = False
    swamp: bool = False
    item: str | None = None
    ability: str | None = None
    speed_ability_boost: bool = False
    item_lost: bool = False
    slow_start: bool = False
    dynamaxed: bool = False
    hp_full: bool = True
    species: str | None = None


@dataclass(frozen=True)
class TurnOrder:
    """The facts of one turn in which both active Pokémon used a move.

    Attributes:
        our_speed: our Pokémon's Speed stat (unboosted, as the request shows it:
            ``battle.active_pokemon.stats["spe"]``).
        they_moved_first: the opponent's move came first.
        our_move / their_move: the moves (ids); their priorities come from the dex
            unless given. ``their_move`` also decides the opponent's per-set priority
            bonuses (Prankster, Gale Wings, Triage).
        our_priority / their_priority: override the moves' base priority
            (our ability's bonus is *not* added to an override).
        ours / theirs: each side's modifiers (:class:`SpeedFacts`).
        trick_room, weather, terrain: the field (``weather``/``terrain`` as Showdown
            ids: ``"raindance"``, ``"electricterrain"``; ``""`` for none).
        gen: the generation (paralysis halves Speed from gen 7, quarters it before).
        turn: the turn number (for notes).
    """

    our_speed: int
    they_moved_first: bool
    our_move: str = ""
    their_move: str = ""
    our_priority: int | None = None
    their_priority: int | None = None
    ours: SpeedFacts = field(default_factory=lambda: SpeedFacts(item="", ability=""))
    theirs: SpeedFacts = field(default_factory=SpeedFacts)
    trick_room: bool = False
    weather: str = ""
    terrain: str = ""
    gen: int = 9
    turn: int = 0


_LAST_ITEMS = frozenset({"laggingtail", "fullincense"})


def move_priority(
    move: str,
    dex: Dex,
    *,
    ability: str = "",
    terrain: str = "",
    hp_full: bool = True,
    grounded: bool = True,
) -> int | None:
    """The priority of ``move`` for a user with ``ability`` (None: unknown move)."""
    entry = dex.moves.get(to_id(move))
    if entry is None:
        return None
    priority = int(entry.get("priority") or 0)
    ability = to_id(ability)
    if ability == "prankster" and entry.get("category") == "Status":
        priority += 1
    elif ability == "galewings" and entry.get("type") == "Flying" and hp_full:
        priority += 1
    elif ability == "triage" and (entry.get("flags") or {}).get("heal"):
        priority += 3
    if entry.get("id") == "grassyglide" and terrain == "grassyterrain" and grounded:
        priority += 1
    return priority


def _fractional(item: str, ability: str, move: str, dex: Dex) -> int:
    """-1 when the side moves last within its priority bracket (Lagging Tail etc.)."""
    if to_id(item) in _LAST_ITEMS or to_id(ability) == "stall":
        return -1
    if to_id(ability) == "myceliummight":
        entry = dex.moves.get(to_id(move)) if move else None
        if entry is not None and entry.get("category") == "Status":
            return -1
    return 0


def _grounded(species: str, item: str, ability: str, dex: Dex) -> bool:
    types = dex.species.get(to_id(species), {}).get("types") or []
    return "Flying" not in types and to_id(ability) != "levitate" and to_id(item) != "airballoon"


@dataclass(frozen=True)
class _OurSide:
    speed: int  # action speed (after Trick Room)
    raw: int  # effective speed before Trick Room
    priority: int
    fractional: int


def _our_side(order: TurnOrder, dex: Dex) -> _OurSide:
    facts = order.ours
    item = facts.item or ""
    ability = facts.ability or ""
    raw = effective_speed(
        order.our_speed,
        boost=facts.boost,
        item=item,
        ability=ability,
        status=facts.status,
        tailwind=facts.tailwind,
        swamp=facts.swamp,
        weather=order.weather,
        terrain=order.terrain,
        speed_ability_boost=facts.speed_ability_boost,
        item_lost=facts.item_lost,
        slow_start=facts.slow_start,
        dynamaxed=facts.dynamaxed,
        species=facts.species or "",
        gen=order.gen,
    )
    if order.our_priority is not None:
        priority = order.our_priority
    elif order.our_move:
        grounded = _grounded(facts.species or "", item, ability, dex) if facts.species else True
        found = move_priority(
            order.our_move,
            dex,
            ability=ability,
            terrain=order.terrain,
            hp_full=facts.hp_full,
            grounded=grounded,
        )
        priority = 0 if found is None else found
    else:
        priority = 0
    return _OurSide(
        speed=action_speed(raw, order.trick_room),
        raw=raw,
        priority=priority,
        fractional=_fractional(item, ability, order.our_move, dex),
    )


_CONTRADICTION = 1e6


def _their_speed(pset: PokemonSet, order: TurnOrder, dex: Dex) -> int | None:
    facts = order.theirs
    species = facts.species or pset.species
    try:
        stat = compute_stats(dex, species, pset.level, pset.evs, pset.ivs, pset.nature)["spe"]
    except KeyError:
        try:
            stat = pset.stats(dex)["spe"]
        except KeyError:
            return None
    return effective_speed(
        stat,
        boost=facts.boost,
        item=pset.item if facts.item is None else facts.item,
        ability=pset.ability if facts.ability is None else facts.ability,
        status=facts.status,
        tailwind=facts.tailwind,
        swamp=facts.swamp,
        weather=order.weather,
        terrain=order.terrain,
        speed_ability_boost=facts.speed_ability_boost,
        item_lost=facts.item_lost,
        slow_start=facts.slow_start,
        dynamaxed=facts.dynamaxed,
        species=species,
        gen=order.gen,
    )


def _order_distance(pset: PokemonSet, order: TurnOrder, dex: Dex, ours: _OurSide) -> float:
    facts = order.theirs
    item = pset.item if facts.item is None else facts.item
    ability = pset.ability if facts.ability is None else facts.ability
    first = order.they_moved_first
    if order.their_priority is not None:
        priority = order.their_priority
        if order.their_move:
            base = move_priority(order.their_move, dex) or 0
            bonus = move_priority(
                order.their_move,
                dex,
                ability=ability,
                terrain=order.terrain,
                hp_full=facts.hp_full,
                grounded=_grounded(facts.species or pset.species, item, ability, dex),
            )
            priority += (bonus or 0) - base
    elif order.their_move:
        found = move_priority(
            order.their_move,
            dex,
            ability=ability,
            terrain=order.terrain,
            hp_full=facts.hp_full,
            grounded=_grounded(facts.species or pset.species, item, ability, dex),
        )
        priority = 0 if found is None else found
    else:
        priority = 0
    if priority != ours.priority:
        return 0.0 if (priority > ours.priority) == first else _CONTRADICTION
    fractional = _fractional(item, ability, order.their_move, dex)
    if fractional != ours.fractional:
        return 0.0 if (fractional > ours.fractional) == first else _CONTRADICTION
    speed = _their_speed(pset, order, dex)
    if speed is None:
        return 0.0
    theirs = action_speed(speed, order.trick_room)
    if first:
        return float(max(0, ours.speed - theirs))
    return float(max(0, theirs - ours.speed))


def order_consistent(pset: PokemonSet, order: TurnOrder, dex: Dex | None = None) -> bool:
    """True when a Pokémon with ``pset`` would produce the observed order (ties count)."""
    dex = dex or load_dex(order.gen)
    return _order_distance(pset, order, dex, _our_side(order, dex)) == 0


def speed_bounds(order: TurnOrder, dex: Dex | None = None) -> tuple[float, float] | None:
    """Bounds ``(low, high)`` on the opponent's effective Speed implied by ``order``.

    The effective Speed is the value after boosts, item, ability, Tailwind and
    paralysis (what :func:`effective_speed` returns). Ties are allowed on both sides.
    None when the two moves' priorities differ (the order then says nothing about
    Speed); the opponent's per-set priority bonuses (Prankster, ...) are not applied
    here, only in :func:`order_consistent`.
    """
    dex = dex or load_dex(order.gen)
    ours = _our_side(order, dex)
    if order.their_priority is not None:
        theirs = order.their_priority
    elif order.their_move:
        theirs = move_priority(order.their_move, dex) or 0
    else:
        theirs = 0
    if theirs != ours.priority or ours.fractional:
        return None
    faster = order.they_moved_first != order.trick_room
    if faster:
        return (float(ours.raw), float("inf"))
    return (0.0, float(ours.raw))
