"""The teams of the ``stall`` and ``switching`` suites, drawn from Showdown's Gen 8
random-battle sets.

Both draw a pool of sets the same way: ``POOL_TEAMS`` random-battle teams, each from
its own seed (Showdown's ``Teams.generate``). The agent's team is ``SIDE_SIZE`` sets of
the first team, in random slots.

- ``stall``: the opponent's team is the first ``SIDE_SIZE`` sets of the rest of the pool
  (different species) that hold a recovery move and a hazard, status or protecting move
  (:func:`is_attrition_set`).
- ``switching``: the agent leads with its first set; its best move is the damaging move
  with the highest base power (STAB counted 1.5 times). The opponent's two Pokémon are
  the first two sets of the rest of the pool (different species) whose types resist that
  move or are immune to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from poke_env.battle import PokemonType
from poke_env.data import GenData
from poke_env.data.normalize import to_id_str

RECOVERY = frozenset(
    "recover roost softboiled slackoff moonlight morningsun synthesis milkdrink shoreup "
    "wish rest strengthsap healorder painsplit".split()
)
HAZARDS = frozenset("stealthrock spikes toxicspikes stickyweb".split())
STATUS = frozenset(
    "toxic willowisp thunderwave glare spore sleeppowder stunspore yawn hypnosis leechseed".split()
)
PROTECT = frozenset("protect kingsshield banefulbunker spikyshield".split())

#: Pokémon a side in the stall suite (the switching suite is two a side).
SIDE_SIZE = {"stall": 3, "switching": 2}
#: Random-battle teams drawn per candidate for the pool.
POOL_TEAMS = 12


def moves_of(data: Mapping[str, Any]) -> set[str]:
    return {to_id_str(str(m)) for m in data.get("moves", ())}


def is_attrition_set(data: Mapping[str, Any]) -> bool:
    """A recovery move and a hazard, status or protecting move."""
    moves = moves_of(data)
    return bool(moves & RECOVERY) and bool(moves & (HAZARDS | STATUS | PROTECT))


def _types(species: str) -> tuple[PokemonType, PokemonType | None]:
    entry = GenData.from_gen(8).pokedex[to_id_str(species)]
    types = [PokemonType.from_name(t) for t in entry["types"]]
    return types[0], (types[1] if len(types) > 1 else None)


def type_multiplier(move_type: str, species: str) -> float:
    """How effective a move of ``move_type`` is on ``species`` (Gen 8 type chart)."""
    chart = GenData.from_gen(8).type_chart
    return PokemonType.from_name(move_type).damage_multiplier(*_types(species), type_chart=chart)


def best_move(data: Mapping[str, Any]) -> str | None:
    """The set's damaging move with the highest base power, STAB counted 1.5 times."""
    moves = GenData.from_gen(8).moves
    own = {t.name.lower() for t in _types(str(data["species"])) if t is not None}
    best, best_power = None, 0.0
    for move in sorted(moves_of(data)):
        entry = moves.get(move)
        if entry is None or entry.get("category") == "Status":
            continue
        power = float(entry.get("basePower") or 0)
        if str(entry["type"]).lower() in own:
            power *= 1.5
        if power > best_power:
            best, best_power = move, power
    return best


def _distinct(sets: Sequence[Mapping[str, Any]], keep: Any, n: int, taken: set[str]) -> list:
    chosen = []
    for data in sets:
        species = to_id_str(str(data["species"]))
        if species in taken or not keep(data):
            continue
        chosen.append(data)
        taken.add(species)
        if len(chosen) == n:
            break
    return chosen


def pick_sides(
    suite: str, pool: Sequence[Sequence[Mapping[str, Any]]], rng: np.random.Generator
) -> tuple[list, list] | None:
    """(agent sets, opponent sets) for ``suite`` from the pool of teams, or None when
    the pool holds too few fitting sets."""
    size = SIDE_SIZE[suite]
    first = list(pool[0])
    slots = rng.permutation(len(first))[:size]
    agent = [first[int(i)] for i in slots]
    taken = {to_id_str(str(d["species"])) for d in agent}
    rest = [data for team in pool[1:] for data in team]
    if suite == "stall":
        opponent = _distinct(rest, is_attrition_set, size, taken)
    else:
        move = best_move(agent[0])
        if move is None:
            return None
        move_type = str(GenData.from_gen(8).moves[move]["type"])

        def resists(data: Mapping[str, Any]) -> bool:
            return type_multiplier(move_type, str(data["species"])) < 1

        opponent = _distinct(rest, resists, size, taken)
    if len(opponent) < size:
        return None
    return agent, opponent
