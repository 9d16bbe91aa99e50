"""Counters of a battle read from its protocol history, where poke-env's own run wrong.

poke-env keeps every message of a battle (``battle._replay_data``, read through
:func:`battle_events`), but three of the counters
it derives from them do not mean what a battle model needs:

- the weather's start turn moves to the current turn at each ``|-weather|...|[upkeep]``
  message, which Showdown sends at the end of every turn the weather goes on, so
  ``turn - start`` is 0 or 1 however long it has lasted (:func:`weather_turns_left`);
- the sleep counter of a Pokémon that used Rest while badly poisoned goes on from the
  Toxic count, and a turn asleep that calls Sleep Talk counts twice
  (:func:`turns_asleep`);
- it keeps no record of what happened earlier in the current turn
  (:func:`moved_this_turn`), of a Wish waiting to heal (:func:`pending_wish`), or of a
  Pokémon locked into Outrage (:func:`locked_move_uses`: Showdown sends no ``-start``
  for the lock, so poke-env's ``LOCKED_MOVE`` effect never appears).

Each function falls back to poke-env's counter (or says None) for a battle object
without the history.
"""

from __future__ import annotations

from collections.abc import Iterator

from poke_env.battle import AbstractBattle
from poke_env.battle import Pokemon as BattlePokemon

from pokegym.showdown.protocol import Message, parse_message, pokemon_ident
from pokegym.world.data import to_id

LOCKING_MOVES = frozenset({"outrage", "petaldance", "thrash", "ragingfury"})
"""Moves that lock their user in for two or three turns, then confuse it."""
WEATHER_TURNS = 5
"""Turns a weather lasts without its rock (Rain Dance, Drizzle, ...)."""


def battle_events(battle: AbstractBattle) -> list[list[str]]:
    """The protocol messages the battle object kept, split into fields."""
    events = getattr(battle, "_replay_data", None)
    if events is None:
        raise TypeError(
            "This battle object keeps no protocol history (poke-env's `_replay_data`); "
            "feed the protocol lines to a ProtocolTracker instead."
        )
    return events  # type: ignore[no-any-return]


def _latest_first(battle: AbstractBattle) -> Iterator[Message] | None:
    """The battle's protocol messages, newest first; None for a battle object that
    keeps no history."""
    try:
        events = battle_events(battle)
    except TypeError:
        return None
    return (m for m in map(parse_message, reversed(events)) if m is not None)


def weather_turns_left(battle: AbstractBattle, duration: int = WEATHER_TURNS) -> int | None:
    """The turns the current weather has left (at least 1) as the game counts them:
    ``duration`` less the ends of turn it has gone on through since it started, which
    Showdown marks with one ``[upkeep]`` message each. None without weather or history."""
    messages = _latest_first(battle)
    if not battle.weather or messages is None:
        return None
    upkeeps = 0
    for message in messages:
        if message.kind != "-weather" or not message.args:
            continue
        if "[upkeep]" in message.tags:
            upkeeps += 1
        elif message.args[0].lower() == "none":
            return None  # ended since: poke-env's dict would be empty
        else:
            return max(1, duration - upkeeps)
    return max(1, duration - upkeeps)


def _key(battle: AbstractBattle, mon: BattlePokemon) -> str | None:
    for team in (battle.team, battle.opponent_team):
        for key, other in team.items():
            if other is mon:
                return key
    return None


def turns_asleep(battle: AbstractBattle, mon: BattlePokemon) -> int:
    """The turns ``mon`` has spent asleep since it fell asleep: each turn it tried to
    act (a ``cant ... slp`` message, or a move of its own such as Sleep Talk, not one
    that move called). poke-env's counter without history."""
    messages = _latest_first(battle)
    key = _key(battle, mon)
    if messages is None or key is None:
        return int(mon.status_counter)
    turns = 0
    for message in messages:
        if not message.args or pokemon_ident(message.args[0]) != key:
            continue
        if message.kind == "-status" and len(message.args) > 1 and message.args[1] == "slp":
            return turns
        if message.kind == "cant" and len(message.args) > 1 and message.args[1] == "slp":
            turns += 1
        elif message.kind == "move" and not any(t.startswith("[from]") for t in message.tags):
            turns += 1
    return int(mon.status_counter)  # asleep from before the history (a team file's status)


def moved_this_turn(battle: AbstractBattle, role: str) -> bool | None:
    """Whether a Pokémon of ``role`` (``"p1"``/``"p2"``) used a move since the current
    turn began; None without history."""
    messages = _latest_first(battle)
    if messages is None:
        return None
    for message in messages:
        if message.kind == "turn":
            return False
        if message.kind == "move" and message.args and message.args[0].startswith(role):
            return True
    return False


def pending_wish(battle: AbstractBattle, role: str) -> str | None:
    """The identifier (``"p1: Vaporeon"``, poke-env's team key) of the Pokémon of
    ``role`` whose Wish heals at the end of this turn: used last turn, not healed yet.
    None when there is none, or no history."""
    messages = _latest_first(battle)
    if messages is None:
        return None
    turns = 0
    for message in messages:
        if message.kind == "turn":
            turns += 1
            if turns > 1:
                return None
        elif (message.kind == "move" and len(message.args) > 1 and message.args[1] == "Wish"
              and message.args[0].startswith(role) and turns == 1):  # fmt: skip
            return pokemon_ident(message.args[0])
        elif (message.kind == "-heal" and message.args and message.args[0].startswith(role)
              and "wish" in message.sources()):  # fmt: skip
            return None
    return None


def locked_move_uses(battle: AbstractBattle, role: str) -> int:
    """How many turns in a row the active Pokémon of ``role`` has used a move that locks
    it in (Outrage, Petal Dance, Thrash, Raging Fury), the last one this turn or last
    turn, while the lock holds: 0 when it is not locked (it switched, was stopped, or
    the lock ended in fatigue), or without history."""
    messages = _latest_first(battle)
    if messages is None:
        return 0
    uses = turns = 0
    for message in messages:
        if message.kind == "turn":
            turns += 1
            if turns > 1 and uses == 0:
                return 0  # its last move is older than last turn
            continue
        if not message.args or not message.args[0].startswith(role):
            continue
        if message.kind in ("switch", "drag", "cant"):
            return uses
        if message.kind == "-start" and "[fatigue]" in message.tags:
            return 0  # the lock ended in fatigue
        if message.kind == "move" and len(message.args) > 1:
            if to_id(message.args[1]) not in LOCKING_MOVES:
                return uses
            uses += 1
            if not any(to_id(tag.removeprefix("[from]")) == "lockedmove" for tag in message.tags):
                return uses  # the first turn of the lock
    return uses
