"""Battle -> text: the ingredients of LLM prompts, made from game vocabulary only.

Every name that reaches a prompt is looked up in Showdown's own data (species, move,
item, ability names, types) and written in its canonical spelling; a name that is not
in the data is dropped. Player names, nicknames and chat never reach a prompt: the
opponent controls them, and text such as "Ignore previous instructions" in a nickname
would otherwise be read by the model as an instruction.

Ingredients (PokéChamp and PokéLLMon style):

- :func:`team_text`: our team sheet (species, item, ability, tera type, moves);
- :func:`state_text`: the observable state (field, both actives, benches, what is
  known of the opponent);
- :func:`history_text`: the last turns, from protocol lines (see :class:`ProtocolRecorder`);
- :func:`legal_actions`: the legal actions with unique text labels and details;
- :func:`opponent_options`: what the opponent could do, as labels;
- :func:`knowledge_text`: type effectiveness and move/ability/item descriptions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from poke_env.battle import AbstractBattle, Pokemon

from pokegym.actions import GIMMICK_MOVE, MOVE, SWITCH, ActionCodec, request_moves
from pokegym.hp import hp_fraction
from pokegym.showdown.protocol import Message
from pokegym.showdown.protocol import messages as protocol_messages
from pokegym.world.data import load_dex, to_id

STATUS_WORDS = {
    "brn": "burned",
    "par": "paralyzed",
    "slp": "asleep",
    "frz": "frozen",
    "psn": "poisoned",
    "tox": "badly poisoned",
}
STATS = ("atk", "def", "spa", "spd", "spe", "accuracy", "evasion")
WEATHERS = {
    "raindance": "Rain",
    "sunnyday": "Sun",
    "sandstorm": "Sandstorm",
    "snow": "Snow",
    "snowscape": "Snow",
    "hail": "Hail",
    "desolateland": "Harsh Sun",
    "primordialsea": "Heavy Rain",
    "deltastream": "Strong Winds",
}
TYPES = frozenset(
    "Bug Dark Dragon Electric Fairy Fighting Fire Flying Ghost Grass Ground Ice Normal "
    "Poison Psychic Rock Steel Water Stellar".split()
)


class GameNames:
    """Canonical names from Showdown's data; anything unknown maps to None."""

    def __init__(self, gen: int, dex: Any = None):
        if dex is None:
            dex = load_dex(gen)
        self.dex = dex

    def _name(self, table: dict[str, dict[str, Any]], raw: Any) -> str | None:
        if raw is None:
            return None
        entry = table.get(to_id(raw))
        return entry.get("name") if entry else None

    def species(self, raw: Any) -> str | None:
        return self._name(self.dex.species, raw)

    def move(self, raw: Any) -> str | None:
        return self._name(self.dex.moves, raw)

    def item(self, raw: Any) -> str | None:
        return self._name(self.dex.items, raw)

    def ability(self, raw: Any) -> str | None:
        return self._name(self.dex.abilities, raw)

    def effect(self, raw: str) -> str | None:
        """``move: Stealth Rock`` / ``item: Leftovers`` / ``ability: Intimidate`` / a weather."""
        kind, _, name = raw.partition(":")
        if not name:
            kind, name = "", raw
        kind, name = kind.strip().lower(), name.strip()
        if kind == "item":
            return self.item(name)
        if kind == "ability":
            return self.ability(name)
        if kind == "move" or not kind:
            return self.move(name) or WEATHERS.get(to_id(name))
        return None

    def types_of(self, mon: Pokemon) -> list[str]:
        entry = self.dex.species.get(to_id(mon.species))
        if mon.is_terastallized and mon.tera_type is not None:
            tera = str(mon.tera_type.name).title()
            return [tera] if tera in TYPES else []
        if entry is None:
            return []
        return [t for t in entry.get("types", []) if t in TYPES]


# ------------------------------------------------------------------ pokemon lines
def _hp(mon: Pokemon) -> str:
    return "fainted" if mon.fainted else f"{round(100 * hp_fraction(mon))}% HP"


def _status(mon: Pokemon) -> str:
    if mon.status is None or mon.fainted:
        return ""
    word = STATUS_WORDS.get(mon.status.name.lower())
    return f", {word}" if word else ""


def _boosts(mon: Pokemon) -> str:
    parts = [f"{stat} {value:+d}" for stat, value in mon.boosts.items() if value and stat in STATS]
    return f", boosts {' '.join(parts)}" if parts else ""


def _move_line(names: GameNames, move_id: str, mon: Pokemon | None = None) -> str | None:
    entry = names.dex.moves.get(to_id(move_id))
    if entry is None:
        return None
    power = entry.get("basePower") or 0
    category = entry.get("category", "")
    parts = [entry.get("type", ""), category.lower()]
    if power:
        parts.append(f"{power} power")
    accuracy = entry.get("accuracy")
    if accuracy is not True and accuracy:
        parts.append(f"{accuracy}% accuracy")
    if entry.get("priority"):
        parts.append(f"priority {entry['priority']:+d}")
    return f"{entry['name']} ({', '.join(p for p in parts if p)})"


def _held_item(names: GameNames, mon: Pokemon) -> str | None:
    """The item's name, or None when it holds none or it is not known."""
    return names.item(mon.item) if mon.item not in (None, "", "unknown_item") else None


def pokemon_text(names: GameNames, mon: Pokemon, *, own: bool) -> str:
    """One Pokémon: species, types, HP, status, boosts, and what is known of its set."""
    species = names.species(mon.species) or "Unknown Pokémon"
    text = f"{species} ({'/'.join(names.types_of(mon))}), {_hp(mon)}{_status(mon)}{_boosts(mon)}"
    if mon.is_terastallized:
        text += ", terastallized"
    ability = names.ability(mon.ability)
    if ability:
        text += f", ability {ability}"
    elif not own and mon.possible_abilities:
        possible = [a for a in (names.ability(x) for x in mon.possible_abilities) if a]
        if possible:
            text += f", possible abilities {' or '.join(possible)}"
    item = _held_item(names, mon)
    if item:
        text += f", item {item}"
    if own and mon.tera_type is not None and not mon.is_terastallized:
        tera = str(mon.tera_type.name).title()
        if tera in TYPES:
            text += f", tera type {tera}"
    moves = [m for m in (names.move(x) for x in mon.moves) if m]
    if moves:
        text += f"; {'moves' if own else 'revealed moves'}: {', '.join(moves)}"
    return text


def set_text(names: GameNames, mon: Pokemon) -> str:
    """One of our Pokémon as the battle began: species, types, ability, item, tera type
    and its moves with their type, category, power and accuracy (no HP or status: the
    fixed part of a team sheet that :func:`brief_text` completes turn by turn)."""
    species = names.species(mon.species) or "Unknown Pokémon"
    entry = names.dex.species.get(to_id(mon.species)) or {}
    types = "/".join(t for t in entry.get("types", []) if t in TYPES)
    text = f"{species} ({types})" if types else species
    ability = names.ability(mon.ability)
    if ability:
        text += f", ability {ability}"
    item = _held_item(names, mon)
    if item:
        text += f", item {item}"
    tera = str(mon.tera_type.name).title() if mon.tera_type is not None else None
    if tera in TYPES:
        text += f", tera type {tera}"
    moves = [m for m in (_move_line(names, x) for x in mon.moves) if m]
    if moves:
        text += f"; moves: {'; '.join(moves)}"
    return text


def brief_text(names: GameNames, mon: Pokemon) -> str:
    """One of our Pokémon now, for a prompt whose team sheet (:func:`set_text`) gives the
    rest: species, HP, status, boosts, tera state and the item it holds now."""
    species = names.species(mon.species) or "Unknown Pokémon"
    text = f"{species}, {_hp(mon)}{_status(mon)}{_boosts(mon)}"
    if mon.is_terastallized:
        text += f", terastallized ({'/'.join(names.types_of(mon))})"
    item = _held_item(names, mon)
    text += f", item {item}" if item else ", no item"
    return text


def team_text(battle: AbstractBattle, names: GameNames | None = None) -> str:
    """Our team sheet, one Pokémon a line (the 'team strategy' ingredient)."""
    names = names or GameNames(battle.gen)
    lines = [f"- {pokemon_text(names, mon, own=True)}" for mon in battle.team.values()]
    return "Your team:\n" + "\n".join(lines)


def _side_conditions(names: GameNames, conditions: dict[Any, int]) -> str:
    parts = []
    for condition, count in conditions.items():
        name = names.move(condition.name) or str(condition.name).replace("_", " ").title()
        layered = to_id(condition.name) in ("spikes", "toxicspikes")
        # poke-env keeps layers for Spikes and Toxic Spikes, a start turn for the others.
        parts.append(f"{name} x{count}" if layered and count > 1 else name)
    return ", ".join(parts) or "none"


def state_text(
    battle: AbstractBattle, names: GameNames | None = None, *, own_sets: bool = True
) -> str:
    """The observable state of the battle from our side.

    ``own_sets=False``: our Pokémon by :func:`brief_text` (for a prompt that gives their
    sets elsewhere, once per battle)."""
    names = names or GameNames(battle.gen)

    def own(mon: Pokemon) -> str:
        return pokemon_text(names, mon, own=True) if own_sets else brief_text(names, mon)

    weather = [WEATHERS.get(to_id(w.name), "") for w in battle.weather]
    fields = [names.move(f.name) or str(f.name).replace("_", " ").title() for f in battle.fields]
    lines = [
        f"Turn {battle.turn}.",
        f"Weather: {', '.join(w for w in weather if w) or 'none'}. "
        f"Field: {', '.join(fields) or 'none'}.",
        f"Your side: {_side_conditions(names, battle.side_conditions)}. "
        f"Opponent's side: {_side_conditions(names, battle.opponent_side_conditions)}.",
    ]
    active = battle.active_pokemon
    if active is not None:
        lines.append(f"Your active Pokémon: {own(active)}.")
    bench = [m for m in battle.team.values() if m is not active]
    if bench:
        lines.append("Your other Pokémon:")
        lines += [f"- {own(m)}" for m in bench]
    opponent = battle.opponent_active_pokemon
    if opponent is not None:
        lines.append(f"Opponent's active Pokémon: {pokemon_text(names, opponent, own=False)}.")
    seen = [m for m in battle.opponent_team.values() if m is not opponent]
    if seen:
        lines.append("Opponent's other revealed Pokémon:")
        lines += [f"- {pokemon_text(names, m, own=False)}" for m in seen]
    unseen = max(0, (battle.max_team_size or 6) - len(battle.opponent_team))
    if unseen:
        lines.append(f"Opponent's Pokémon not yet seen: {unseen}.")
    if battle.opponent_used_tera:
        lines.append("The opponent has already terastallized.")
    return "\n".join(lines)


# ----------------------------------------------------------------- legal actions
@dataclass(frozen=True)
class LegalAction:
    """A legal action: its index in pokegym's action layout, a unique label, details."""

    action: int
    label: str
    detail: str
    matchup: str = ""

    def line(self) -> str:
        return f"- {self.label}: {self.detail}" if self.detail else f"- {self.label}"

    def short_line(self) -> str:
        """The label and the move's effectiveness only (for a prompt whose team sheet
        gives the moves' details and whose state gives the HP)."""
        return f"- {self.label}: {self.matchup}" if self.matchup else f"- {self.label}"


def legal_actions(
    battle: AbstractBattle,
    codec: ActionCodec | None = None,
    names: GameNames | None = None,
) -> list[LegalAction]:
    """The legal actions of ``battle`` now, labelled ``move X``/``tera move X``/``switch Y``."""
    names = names or GameNames(battle.gen)
    codec = codec or ActionCodec("terastallize" if battle.gen >= 9 else None)
    moves = request_moves(battle)
    team = list(battle.team.values())
    opponent = battle.opponent_active_pokemon
    result = []
    for action in codec.legal_actions(battle):
        if action >= SWITCH:
            mon = team[action - SWITCH]
            species = names.species(mon.species) or f"team slot {action - SWITCH + 1}"
            verb = "lead" if battle.teampreview else "switch"
            detail = f"{_hp(mon)}{_status(mon)}, {'/'.join(names.types_of(mon))}"
            result.append(LegalAction(action, f"{verb} {species}", detail))
            continue
        slot = action - (GIMMICK_MOVE if action >= GIMMICK_MOVE else MOVE)
        entry = moves[slot] if slot < len(moves) else {}
        move_name = names.move(entry.get("id") or entry.get("move")) or f"move slot {slot + 1}"
        detail, matchup = _move_line(names, entry.get("id") or move_name) or "", ""
        if detail and opponent is not None:
            move_type = names.dex.moves[to_id(move_name)].get("type")
            if names.dex.moves[to_id(move_name)].get("category") != "Status" and move_type:
                factor = names.dex.effectiveness(move_type, tuple(names.types_of(opponent)))
                matchup = f"x{factor:g} against {names.species(opponent.species)}"
                detail += f", {matchup}"
        label = f"move {move_name}"
        if action >= GIMMICK_MOVE:
            label = f"{codec.gimmick or 'gimmick'} and move {move_name}"
        result.append(LegalAction(action, label, detail.removeprefix(f"{move_name} "), matchup))
    return result


def opponent_options(battle: AbstractBattle, names: GameNames | None = None) -> list[str]:
    """Labels of what the opponent can be seen to do: its revealed moves and switches."""
    names = names or GameNames(battle.gen)
    opponent = battle.opponent_active_pokemon
    options: list[str] = []
    if opponent is not None and not opponent.fainted:
        options += [f"move {m}" for m in (names.move(x) for x in opponent.moves) if m]
    for mon in battle.opponent_team.values():
        if mon is not opponent and not mon.fainted:
            species = names.species(mon.species)
            if species:
                options.append(f"switch {species}")
    if len(options) < 2:
        options.append("an unrevealed move")
    return list(dict.fromkeys(options))


# ------------------------------------------------------------------- knowledge
def _described(dex: Any, table: str, key: Any) -> str | None:
    entry = getattr(dex, table).get(to_id(key)) if key else None
    if not entry or not entry.get("shortDesc"):
        return None
    kind = {"moves": "", "abilities": " (ability)", "items": " (item)"}[table]
    return f"- {entry['name']}{kind}: {entry['shortDesc']}"


def knowledge_text(
    battle: AbstractBattle, names: GameNames | None = None, *, own_descriptions: bool = True
) -> str:
    """Type effectiveness both ways and the descriptions of the moves, abilities, items
    in play (PokéLLMon's knowledge-augmented prompt).

    ``own_descriptions=False`` leaves out our active Pokémon's descriptions (for a prompt
    that gives the whole team's once per battle, :func:`team_knowledge_text`)."""
    names = names or GameNames(battle.gen)
    dex = names.dex
    lines = []
    own, opponent = battle.active_pokemon, battle.opponent_active_pokemon
    if own is not None and opponent is not None:
        own_name, opp_name = names.species(own.species), names.species(opponent.species)
        own_types, opp_types = tuple(names.types_of(own)), tuple(names.types_of(opponent))
        lines.append(f"Type effectiveness of your moves against {opp_name}:")
        for move_id in own.moves:
            entry = dex.moves.get(to_id(move_id))
            if entry and entry.get("category") != "Status":
                factor = dex.effectiveness(entry["type"], opp_types)
                lines.append(f"- {entry['name']} ({entry['type']}): x{factor:g}")
        lines.append(f"Type effectiveness of {opp_name}'s types against {own_name}:")
        for attack in opp_types:
            lines.append(f"- {attack}: x{dex.effectiveness(attack, own_types):g}")
        described = [
            *([_described(dex, "moves", m) for m in own.moves] if own_descriptions else []),
            *(
                _described(dex, table, getattr(mon, field))
                for mon in ((own, opponent) if own_descriptions else (opponent,))
                for table, field in (("abilities", "ability"), ("items", "item"))
            ),
        ]
        described = [line for line in described if line]
        if described or own_descriptions:
            lines.append("Descriptions:")
            lines += described
    return "\n".join(lines)


def team_knowledge_text(battle: AbstractBattle, names: GameNames | None = None) -> str:
    """The descriptions of every move, ability and item of our team (once per battle)."""
    names = names or GameNames(battle.gen)
    lines = []
    for mon in battle.team.values():
        lines += [_described(names.dex, "moves", m) for m in mon.moves]
        lines += [_described(names.dex, "abilities", mon.ability)]
        lines += [_described(names.dex, "items", mon.item)]
    lines = list(dict.fromkeys(line for line in lines if line))
    return "Descriptions of your team's moves, abilities and items:\n" + "\n".join(lines)


# --------------------------------------------------------------------- history
_IDENT = re.compile(r"^(p[1-4])[a-d]?: ")


class ProtocolRecorder:
    """Keeps the protocol messages a poke-env battle receives, for :func:`history_text`.

    ``ProtocolRecorder.attach(battle)`` wraps that battle object's ``parse_message`` so
    every later message is also kept (works on every backend); call it when an agent
    first sees a battle. Messages already parsed before that are not recovered.
    """

    def __init__(self) -> None:
        self.messages: list[list[str]] = []

    @classmethod
    def attach(cls, battle: AbstractBattle) -> ProtocolRecorder:
        existing = getattr(battle, "_pokegym_recorder", None)
        if existing is not None:
            return existing
        recorder = cls()
        parse = battle.parse_message

        def parse_and_keep(split_message: list[str]) -> None:
            recorder.messages.append(list(split_message))
            parse(split_message)

        battle.parse_message = parse_and_keep  # type: ignore[method-assign]
        battle._pokegym_recorder = recorder  # type: ignore[attr-defined]
        return recorder


def turn_events(
    messages: Iterable[str | Sequence[str]],
    our_role: str,
    names: GameNames,
    battle: AbstractBattle | None = None,
) -> list[tuple[int, list[str]]]:
    """Every turn's events as sentences, in order: ``(turn number, sentences)``, turn 0
    being what happened before the first turn.

    Only whitelisted events are rendered (:class:`_Narrator`), with Pokémon named by
    species (from the switch details, or from ``battle``'s teams), never by nickname;
    player names, chat and free-text messages are not rendered.
    """
    narrator = _Narrator(our_role, names, battle)
    turns: list[tuple[int, list[str]]] = [(0, [])]
    for message in protocol_messages(messages):
        args = message.args
        if message.kind == "turn" and args and args[0].isdigit():
            turns.append((int(args[0]), []))
            continue
        handler = _NARRATED.get(message.kind)
        if handler is not None:
            sentence = handler(narrator, message)
            if sentence:
                turns[-1][1].append(sentence)
    return turns


_EFFECT_PHRASES = {
    "-supereffective": "It was super effective on",
    "-resisted": "It was not very effective on",
    "-crit": "A critical hit on",
    "-immune": "It had no effect on",
    "-miss": "The move missed",
}


class _Narrator:
    """One sentence per whitelisted protocol message (None: not rendered); remembers
    which species each Pokémon ident is."""

    def __init__(self, our_role: str, names: GameNames, battle: AbstractBattle | None):
        self.our_role = our_role
        self.names = names
        self.species: dict[str, str] = {}
        if battle is not None:  # Pokémon already seen before recording started
            for team in (battle.team, battle.opponent_team):
                for ident, mon in team.items():
                    name = names.species(mon.species)
                    if name:
                        self.species[ident] = name

    def who(self, ident: str) -> str | None:
        match = _IDENT.match(ident)
        if not match:
            return None
        side = "your" if match.group(1) == self.our_role else "the opposing"
        name = self.species.get(f"{match.group(1)}: {ident[match.end() :]}")
        return f"{side} {name}" if name else None

    def source(self, tags: Sequence[str]) -> str:
        for part in tags:
            if part.startswith("[from]"):
                name = self.names.effect(part[6:].strip())
                if name:
                    return f" ({name})"
        return ""

    def switch(self, m: Message) -> str | None:
        args = m.args
        if len(args) < 2:
            return None
        match = _IDENT.match(args[0])
        name = self.names.species(args[1].split(",")[0])
        if not (match and name):
            return None
        self.species[f"{match.group(1)}: {args[0][match.end() :]}"] = name
        side = "You" if match.group(1) == self.our_role else "The opponent"
        return f"{side} sent out {name}."

    def move(self, m: Message) -> str | None:
        args = m.args
        if len(args) < 2:
            return None
        user, move = self.who(args[0]), self.names.move(args[1])
        return f"{user} used {move}." if user and move else None

    def faint(self, m: Message) -> str | None:
        args = m.args
        mon = self.who(args[0]) if args else None
        return f"{mon} fainted." if mon else None

    def hp_change(self, m: Message) -> str | None:
        kind, args = m.kind, m.args
        if len(args) < 2:
            return None
        mon = self.who(args[0])
        hp = args[1].split()[0]
        if mon and "/" in hp:
            now, total = hp.split("/")
            if now.isdigit() and total.isdigit() and int(total):
                percent = round(100 * int(now) / int(total))
                verb = "was hurt" if kind == "-damage" else "recovered"
                return f"{mon} {verb}{self.source(m.tags)}: {percent}% HP left."
        elif mon and hp == "0":
            return f"{mon} was hurt{self.source(m.tags)}: 0% HP left."
        return None

    def status(self, m: Message) -> str | None:
        args = m.args
        if len(args) < 2:
            return None
        mon, word = self.who(args[0]), STATUS_WORDS.get(args[1])
        return f"{mon} is {word}{self.source(m.tags)}." if mon and word else None

    def boost(self, m: Message) -> str | None:
        kind, args = m.kind, m.args
        if len(args) < 3:
            return None
        mon, stat = self.who(args[0]), args[1]
        if mon and stat in STATS and args[2].isdigit():
            sign = "+" if kind == "-boost" else "-"
            return f"{mon}: {stat} {sign}{args[2]}."
        return None

    def weather(self, m: Message) -> str | None:
        args = m.args
        weather = WEATHERS.get(to_id(args[0])) if args else None
        if weather and "[upkeep]" not in m.tags:
            return f"The weather became {weather}."
        return None

    def condition(self, m: Message) -> str | None:
        kind, args = m.kind, m.args
        effect = self.names.effect(args[-1]) if args else None
        if not effect:
            return None
        where = ""
        if kind == "-sidestart":
            mine = args[0].startswith(self.our_role)
            where = " on your side" if mine else " on the opponent's side"
        return f"{effect} started{where}."

    def terastallize(self, m: Message) -> str | None:
        args = m.args
        if len(args) < 2:
            return None
        mon, tera = self.who(args[0]), args[1]
        return f"{mon} terastallized into the {tera} type." if mon and tera in TYPES else None

    def hit_effect(self, m: Message) -> str | None:
        kind, args = m.kind, m.args
        if not args:
            return None
        mon = self.who(args[-1] if kind == "-miss" else args[0])
        if mon:
            return f"{_EFFECT_PHRASES[kind]} {mon}."
        return "The move missed." if kind == "-miss" else None

    def item(self, m: Message) -> str | None:
        kind, args = m.kind, m.args
        if len(args) < 2:
            return None
        mon, item = self.who(args[0]), self.names.item(args[1])
        if not (mon and item):
            return None
        verb = "lost its" if kind == "-enditem" else "has"
        return f"{mon} {verb} {item}."

    def ability(self, m: Message) -> str | None:
        args = m.args
        if len(args) < 2:
            return None
        mon, ability = self.who(args[0]), self.names.ability(args[1])
        return f"{mon}'s ability is {ability}." if mon and ability else None


# The protocol messages that are rendered, and how.
_NARRATED: dict[str, Callable[[_Narrator, Message], str | None]] = {
    "switch": _Narrator.switch, "drag": _Narrator.switch, "replace": _Narrator.switch,
    "move": _Narrator.move, "faint": _Narrator.faint,
    "-damage": _Narrator.hp_change, "-heal": _Narrator.hp_change,
    "-status": _Narrator.status, "-boost": _Narrator.boost, "-unboost": _Narrator.boost,
    "-weather": _Narrator.weather,
    "-fieldstart": _Narrator.condition, "-sidestart": _Narrator.condition,
    "-terastallize": _Narrator.terastallize,
    **{kind: _Narrator.hit_effect for kind in _EFFECT_PHRASES},
    "-enditem": _Narrator.item, "-item": _Narrator.item,
    "-ability": _Narrator.ability,
}  # fmt: skip


def turn_line(turn: int, sentences: Sequence[str]) -> str:
    """One turn of the history: ``Turn N: Sentence. Sentence.``"""
    return f"Turn {turn}: " + " ".join(s[0].upper() + s[1:] for s in sentences)


def history_text(
    messages: Iterable[str | Sequence[str]],
    our_role: str,
    names: GameNames,
    last_turns: int = 3,
    battle: AbstractBattle | None = None,
) -> str:
    """The last ``last_turns`` turns as sentences (see :func:`turn_events`)."""
    turns = turn_events(messages, our_role, names, battle)
    kept = [(t, lines) for t, lines in turns if lines and t > 0][-last_turns:]
    if not kept:
        return "No turns played yet."
    return "\n".join(turn_line(t, lines) for t, lines in kept)


# ----------------------------------------------------------------- untrusted text
def untrusted_strings(battle: AbstractBattle, extra: Iterable[str] = ()) -> list[str]:
    """Player names and nicknames of a battle (text its players chose), longest first."""
    found = {battle.player_username or "", battle.opponent_username or "", *extra}
    for team in (battle.team, battle.opponent_team):
        for ident, mon in team.items():
            nickname = ident.split(": ", 1)[-1]
            if to_id(nickname) != to_id(mon.species) and to_id(nickname) != to_id(
                getattr(mon, "base_species", "")
            ):
                found.add(nickname)
    return sorted((s for s in found if len(s.strip()) >= 3), key=len, reverse=True)


def scrub(text: str, untrusted: Iterable[str]) -> str:
    """``text`` with every whole-word occurrence of an untrusted string replaced."""
    for item in untrusted:
        text = re.sub(rf"(?<!\w){re.escape(item)}(?!\w)", "[name]", text, flags=re.IGNORECASE)
    return text


LookaheadSource = str | Callable[[AbstractBattle], str] | None
