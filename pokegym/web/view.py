"""A battle as the web page shows it: plain JSON built from the poke-env battle object.

Names of species, moves, items and abilities come from Showdown's data (canonical
spellings, as in the terminal). Nicknames and player names are passed as they are:
text the other side chose, which the page only ever writes with ``textContent``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from poke_env.battle import AbstractBattle, Pokemon

from pokegym.actions import request_moves
from pokegym.choices import ChoiceOption
from pokegym.hp import hp_fraction
from pokegym.play import decision_title
from pokegym.text.render import STATS, TYPES, WEATHERS, GameNames, to_id
from pokegym.web.sprites import SpriteIndex

STATUS_NAMES = {"brn": "BRN", "par": "PAR", "slp": "SLP", "frz": "FRZ", "psn": "PSN", "tox": "TOX"}


def _type_name(value: Any) -> str | None:
    if value is None:
        return None
    name = str(getattr(value, "name", value)).title()
    return name if name in TYPES else None


def _dex_types(names: GameNames, mon: Pokemon) -> list[str]:
    entry = names.dex.species.get(to_id(mon.species)) or {}
    return [t for t in entry.get("types", []) if t in TYPES]


def _known(value: Any) -> bool:
    return value not in (None, "", "unknown_item")


def pokemon_view(
    names: GameNames,
    mon: Pokemon,
    *,
    own: bool,
    exact_hp: bool,
    sprites: SpriteIndex | None,
) -> dict[str, Any]:
    """One Pokémon: what its side's player can see of it."""
    species_id = to_id(mon.species)
    species = names.species(mon.species) or mon.species
    fainted = bool(mon.fainted)
    fraction = hp_fraction(mon)
    if exact_hp and mon.max_hp:
        hp_text = f"{mon.current_hp or 0}/{mon.max_hp}"
    else:
        hp_text = f"{round(100 * fraction)}%"
    status = None
    if mon.status is not None and not fainted:
        status = STATUS_NAMES.get(mon.status.name.lower())
    terastallized = bool(mon.is_terastallized)
    tera = _type_name(mon.tera_type)
    moves = []
    for move_id in mon.moves:
        entry = names.dex.moves.get(to_id(move_id))
        if entry is None:
            continue
        moves.append({"name": entry["name"], "type": entry.get("type")})
    item = None
    if _known(mon.item):
        item = names.item(mon.item)
    elif mon.item == "" and not own:
        item = "(none)"  # known to hold nothing (used up, knocked off)
    entry = names.dex.species.get(species_id) or {}
    # A name the player chose; Showdown names an unnamed Pokémon by its (base) species.
    nickname = mon.name
    if to_id(nickname) in (species_id, to_id(entry.get("baseSpecies", ""))):
        nickname = species
    view: dict[str, Any] = {
        "name": nickname,
        "species": species,
        "types": names.types_of(mon),
        "base_types": _dex_types(names, mon),
        "level": mon.level,
        "hp": round(fraction, 4),
        "hp_text": "fainted" if fainted else hp_text,
        "fainted": fainted,
        "active": bool(mon.active),
        "status": status,
        "boosts": {s: v for s, v in mon.boosts.items() if v and s in STATS},
        "terastallized": terastallized,
        "tera_type": tera if (own or terastallized) else None,
        "item": item,
        "ability": names.ability(mon.ability) if mon.ability else None,
        "possible_abilities": []
        if own or mon.ability
        else [a for a in (names.ability(x) for x in mon.possible_abilities or ()) if a],
        "moves": moves,
        "sprite": sprites.url(species_id) if sprites is not None else None,
    }
    return view


def _side_conditions(names: GameNames, conditions: dict[Any, int]) -> list[dict[str, Any]]:
    found = []
    for condition, count in conditions.items():
        name = names.move(condition.name) or str(condition.name).replace("_", " ").title()
        layered = to_id(condition.name) in ("spikes", "toxicspikes")
        found.append({"name": name, "layers": count if layered else 1})
    return found


def field_view(battle: AbstractBattle, names: GameNames) -> dict[str, Any]:
    weather = [WEATHERS.get(to_id(w.name)) for w in battle.weather]
    fields = [names.move(f.name) or str(f.name).replace("_", " ").title() for f in battle.fields]
    return {
        "weather": [w for w in weather if w],
        "terrain": [f for f in fields if f.endswith("Terrain")],
        "fields": [f for f in fields if not f.endswith("Terrain")],
        "player_side": _side_conditions(names, battle.side_conditions),
        "opponent_side": _side_conditions(names, battle.opponent_side_conditions),
    }


def _move_details(
    names: GameNames, entry: dict[str, Any], opponent: Pokemon | None
) -> dict[str, Any]:
    move = names.dex.moves.get(to_id(entry.get("id") or entry.get("move"))) or {}
    accuracy = move.get("accuracy")
    details: dict[str, Any] = {
        "type": move.get("type"),
        "category": move.get("category"),
        "power": move.get("basePower") or None,
        "accuracy": None if accuracy is True else accuracy,
        "priority": move.get("priority") or 0,
        "pp": entry.get("pp"),
        "maxpp": entry.get("maxpp"),
        "effectiveness": None,
        "description": move.get("shortDesc"),
    }
    if opponent is not None and move.get("category") != "Status" and move.get("type"):
        defender = tuple(names.types_of(opponent))
        if defender:
            details["effectiveness"] = names.dex.effectiveness(move["type"], defender)
    return details


def choices_view(
    battle: AbstractBattle,
    names: GameNames,
    options: Sequence[ChoiceOption],
    sprites: SpriteIndex | None,
) -> list[dict[str, Any]]:
    """The legal choices with what the buttons show."""
    moves = request_moves(battle)
    opponent = battle.opponent_active_pokemon
    by_species = {names.species(m.species) or m.species: m for m in battle.team.values()}
    tera = None
    active = battle.active_pokemon
    if active is not None:
        tera = _type_name(active.tera_type)
    found = []
    for option in options:
        item: dict[str, Any] = {
            "number": option.number,
            "kind": option.kind,
            "name": option.name,
            "label": option.label,
            "detail": option.detail,
        }
        words = option.choice.split()
        if words[0] == "move" and len(words) > 1 and words[1].isdigit():
            slot = int(words[1]) - 1
            entry = moves[slot] if slot < len(moves) else {}
            item.update(_move_details(names, entry, opponent))
            if option.kind == "gimmick":
                item["gimmick"] = option.gimmick_word
                item["tera_type"] = tera if option.gimmick_word == "tera" else None
        else:
            mon = by_species.get(option.name)
            if mon is not None:
                item["pokemon"] = pokemon_view(names, mon, own=True, exact_hp=True, sprites=sprites)
        found.append(item)
    return found


def battle_view(
    battle: AbstractBattle,
    names: GameNames,
    options: Sequence[ChoiceOption] = (),
    *,
    sprites: SpriteIndex | None = None,
    exact_hp: bool = True,
) -> dict[str, Any]:
    """Everything the page draws for one side of ``battle``."""
    own_active = battle.active_pokemon
    opp_active = battle.opponent_active_pokemon

    def own(mon: Pokemon) -> dict[str, Any]:
        return pokemon_view(names, mon, own=True, exact_hp=exact_hp, sprites=sprites)

    def theirs(mon: Pokemon) -> dict[str, Any]:
        return pokemon_view(names, mon, own=False, exact_hp=False, sprites=sprites)

    preview = []
    if battle.teampreview:
        # Team Preview shows species only; no Pokémon is out yet.
        own_active = None
        for mon in battle.teampreview_opponent_team:
            view = theirs(mon)
            view.update(hp=1.0, hp_text="", active=False)
            preview.append(view)
    team = [own(m) for m in battle.team.values()]
    if battle.teampreview:
        for view in team:
            view["active"] = False
    size = battle.max_team_size or 6
    return {
        "turn": battle.turn,
        "title": decision_title(battle, options) if options else f"Turn {battle.turn}",
        "team_preview": bool(battle.teampreview),
        "player": {
            "name": battle.player_username,
            "active": own(own_active) if own_active is not None else None,
            "team": team,
            "used_tera": bool(battle.used_tera),
        },
        "opponent": {
            "name": battle.opponent_username,
            "active": theirs(opp_active) if opp_active is not None else None,
            "team": [theirs(m) for m in battle.opponent_team.values()],
            "unseen": max(0, size - len(battle.opponent_team)),
            "preview": preview,
            "used_tera": bool(battle.opponent_used_tera),
        },
        "field": field_view(battle, names),
        "choices": choices_view(battle, names, options, sprites),
    }
