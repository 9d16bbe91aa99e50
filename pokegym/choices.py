"""The choices of a person's decision: what the list shows and what a typed answer means.

:func:`choice_options` numbers the legal choices (from the action codec, so the list is
exactly what the environments allow) with the details a person needs (power, type,
effectiveness, PP); :func:`resolve_input` reads what was typed (a number, a name, a unique
prefix, ``tera`` + a move) into one of them, or raises :class:`InputError` saying what to
type. The terminal (:mod:`pokegym.play`) and the web page (:mod:`pokegym.web`) share them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from poke_env.battle import AbstractBattle

from pokegym.actions import GIMMICK_MOVE, SWITCH, ActionCodec, request_moves
from pokegym.text.render import GameNames, legal_actions, to_id

__all__ = ["ChoiceOption", "InputError", "choice_options", "resolve_input", "unavailable_names"]


@dataclass(frozen=True)
class ChoiceOption:
    """One legal choice as the person sees it, and the Showdown choice it sends."""

    number: int
    kind: str  # "move", "gimmick" (tera/dynamax + move), "switch" or "lead"
    name: str  # the move's or the Pokémon's name
    choice: str  # Showdown's choice string, e.g. "move 2 terastallize"
    detail: str = ""
    gimmick_word: str = "tera"

    @property
    def label(self) -> str:
        if self.kind == "gimmick":
            return f"{self.gimmick_word} {self.name}"
        if self.kind in ("switch", "lead"):
            return f"{self.kind} {self.name}"
        return self.name

    def line(self) -> str:
        return f"{self.number:>3}. {self.label:<24} {self.detail}".rstrip()


def _gimmick_word(codec: ActionCodec) -> str:
    return "dynamax" if codec.gimmick == "dynamax" else "tera"


def choice_options(
    battle: AbstractBattle, codec: ActionCodec, names: GameNames
) -> list[ChoiceOption]:
    """The legal choices now, numbered from 1: moves, gimmick moves, then switches.

    Built from the codec's legal actions, so the list is exactly what the
    environments would allow; details come from :func:`pokegym.text.render.legal_actions`
    plus the PP left from Showdown's request.
    """
    described = {a.action: a for a in legal_actions(battle, codec, names)}
    moves = request_moves(battle)
    team = list(battle.team.values())
    word = _gimmick_word(codec)
    options: list[ChoiceOption] = []
    for action in codec.legal_actions(battle):
        choice = codec.to_choice(action, battle)
        if choice is None:
            continue
        info = described.get(action)
        detail = info.detail if info is not None else ""
        number = len(options) + 1
        if action >= SWITCH:
            mon = team[action - SWITCH]
            name = names.species(mon.species) or mon.species
            kind = "lead" if battle.teampreview else "switch"
            options.append(ChoiceOption(number, kind, name, choice, detail, word))
            continue
        gimmick = action >= GIMMICK_MOVE
        slot = action % 4
        entry = moves[slot] if slot < len(moves) else {}
        name = names.move(entry.get("id")) or str(entry.get("move") or f"move {slot + 1}")
        if gimmick:
            # The same move as above; say what the gimmick does instead of repeating it.
            tera = _active_tera_type(battle) if codec.gimmick == "terastallize" else None
            detail = f"(Terastallize into {tera} first)" if tera else f"({codec.gimmick} first)"
        else:
            detail = detail.removeprefix(f"{name} ")
            if entry.get("maxpp"):
                detail = f"{detail}, PP {entry.get('pp', '?')}/{entry['maxpp']}".lstrip(", ")
        kind = "gimmick" if gimmick else "move"
        options.append(ChoiceOption(number, kind, name, choice, detail, word))
    return options


def _active_tera_type(battle: AbstractBattle) -> str | None:
    """The active Pokémon's Tera Type, from Showdown's request (poke-env leaves it unset)."""
    side = (battle.last_request or {}).get("side") or {}
    for entry in side.get("pokemon", []):
        if entry.get("active") and entry.get("teraType"):
            return str(entry["teraType"])
    return None


class InputError(ValueError):
    """The person's input names no legal choice; the message says what to type."""


_KIND_WORDS = {
    "move": "move",
    "use": "move",
    "switch": "switch",
    "go": "switch",
    "lead": "lead",
    "tera": "gimmick",
    "terastallize": "gimmick",
    "dynamax": "gimmick",
    "max": "gimmick",
}


def resolve_input(
    text: str, options: Sequence[ChoiceOption], unavailable: Sequence[str] = ()
) -> ChoiceOption:
    """The option ``text`` names: its number, or a name (case-insensitive, unique prefix).

    Args:
        unavailable: names the person might type that are not legal now (disabled
            moves, fainted Pokémon), for a clearer message.

    Raises:
        InputError: nothing or more than one option matches; the message says why.
    """
    raw = text.strip()
    if not raw:
        raise InputError("Type the number of a choice, a move or Pokémon name, or 'help'.")
    if raw.isdigit():
        number = int(raw)
        for option in options:
            if option.number == number:
                return option
        raise InputError(f"There is no choice {number}; pick a number from 1 to {len(options)}.")
    first, _, rest = raw.partition(" ")
    kinds: tuple[str, ...]
    wanted = _KIND_WORDS.get(first.lower())
    if wanted is not None and rest.strip():
        kinds, query = (wanted,), to_id(rest)
    else:
        if wanted == "gimmick":
            raise InputError(f"{first} what? Add the move, e.g. '{first} {_example(options)}'.")
        kinds, query = ("move", "switch", "lead"), to_id(raw)
    if not query:
        raise InputError(f"{raw!r} names no choice; type a number, a name, or 'help'.")
    if "switch" in kinds:
        kinds = (*kinds, "lead")  # "switch X" at Team Preview means "lead X"
    candidates = [o for o in options if o.kind in kinds]
    exact = [o for o in candidates if to_id(o.name) == query]
    if len(exact) == 1:
        return exact[0]
    matches = exact or [o for o in candidates if to_id(o.name).startswith(query)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        labels = ", ".join(f"{o.number}. {o.label}" for o in matches)
        raise InputError(f"{raw!r} matches several choices ({labels}); type more or a number.")
    if kinds == ("gimmick",):
        if not any(o.kind == "gimmick" for o in options):
            raise InputError("That gimmick is not available now (already used, or not allowed).")
    for name in unavailable:
        if to_id(name).startswith(query):
            raise InputError(f"{name} is not a legal choice now.")
    raise InputError(f"No legal choice matches {raw!r}; type a number from 1 to {len(options)}.")


def _example(options: Sequence[ChoiceOption]) -> str:
    for option in options:
        if option.kind in ("move", "gimmick"):
            return option.name.lower()
    return "thunderbolt"


def unavailable_names(battle: AbstractBattle, names: GameNames) -> list[str]:
    """Moves and Pokémon the person might name that are not legal now (for
    :func:`resolve_input`'s message)."""
    found: list[str] = []
    active = battle.active_pokemon
    if active is not None:
        found += [names.move(m) or m for m in active.moves]
    found += [names.species(m.species) or m.species for m in battle.team.values()]
    return found
