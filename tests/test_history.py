"""The counters read from a battle's protocol history (pokegym.world.history), on a real
poke-env battle object fed the messages Showdown sends (offline, no Node)."""

from __future__ import annotations

import logging

from poke_env.battle import Battle

from pokegym.world.history import (
    locked_move_uses,
    moved_this_turn,
    pending_wish,
    turns_asleep,
    weather_turns_left,
)

LEADS = """|player|p1|alice|1|
|player|p2|bob|2|
|switch|p1a: Pelipper|Pelipper, L85, M|100/100
|switch|p2a: Snorlax|Snorlax, L80, M|100/100
|-weather|RainDance|[from] ability: Drizzle|[of] p1a: Pelipper
|turn|1"""
REST = """|move|p2a: Snorlax|Rest|p2a: Snorlax
|-status|p2a: Snorlax|slp|[from] move: Rest
|-weather|RainDance|[upkeep]
|turn|2"""
SLEEP_TALK = """|move|p1a: Pelipper|Hurricane|p2a: Snorlax
|move|p2a: Snorlax|Sleep Talk|p2a: Snorlax
|move|p2a: Snorlax|Body Slam|p1a: Pelipper|[from] move: Sleep Talk
|-weather|RainDance|[upkeep]
|turn|3"""


def _battle(*blocks: str) -> Battle:
    battle = Battle("battle-gen9randombattle-1", "alice", logging.getLogger("test"), gen=9)
    for block in blocks:
        for line in block.splitlines():
            battle.parse_message(line.split("|"))
    return battle


def test_the_weather_counts_its_ends_of_turn_where_poke_env_restarts_it():
    battle = _battle(LEADS)
    assert weather_turns_left(battle) == 5  # set before turn 1: no end of turn yet
    battle = _battle(LEADS, REST)
    assert weather_turns_left(battle) == 4
    battle = _battle(LEADS, REST, SLEEP_TALK)
    # poke-env moved the start to the last upkeep: its count would say 4 left again
    assert battle.turn - next(iter(battle.weather.values())) <= 1
    assert weather_turns_left(battle) == 3
    for line in ("|-weather|none", "|turn|4"):
        battle.parse_message(line.split("|"))
    assert not battle.weather and weather_turns_left(battle) is None


def test_a_new_weather_starts_its_count_again():
    battle = _battle(LEADS, REST, "|move|p2a: Snorlax|Sunny Day|p2a: Snorlax\n"
                     "|-weather|SunnyDay\n|-weather|SunnyDay|[upkeep]\n|turn|3")  # fmt: skip
    assert weather_turns_left(battle) == 4


def test_turns_asleep_start_at_rest_and_count_a_sleep_talk_turn_once():
    toxic = ("|move|p1a: Pelipper|Toxic|p2a: Snorlax\n|-status|p2a: Snorlax|tox\n"
             "|-damage|p2a: Snorlax|94/100 tox|[from] psn\n|turn|2\n"
             "|-damage|p2a: Snorlax|81/100 tox|[from] psn\n|turn|3")  # fmt: skip
    battle = _battle(LEADS, toxic, REST.replace("turn|2", "turn|4"))
    snorlax = battle.opponent_active_pokemon
    assert snorlax.status_counter > 0  # poke-env carries the Toxic count into Rest's sleep
    assert turns_asleep(battle, snorlax) == 0
    for line in SLEEP_TALK.splitlines():
        battle.parse_message(line.split("|"))
    # poke-env: the two Toxic ticks carried over, then Sleep Talk and the move it called
    assert snorlax.status_counter == 4
    assert turns_asleep(battle, snorlax) == 1
    battle.parse_message("|cant|p2a: Snorlax|slp".split("|"))
    assert turns_asleep(battle, snorlax) == 2
    # Pelipper never slept: its counter is poke-env's
    assert turns_asleep(battle, battle.active_pokemon) == battle.active_pokemon.status_counter


def test_moved_this_turn_reads_only_the_current_turn():
    battle = _battle(LEADS, REST)
    assert moved_this_turn(battle, "p2") is False  # Rest was last turn
    battle.parse_message("|move|p2a: Snorlax|Body Slam|p1a: Pelipper".split("|"))
    assert moved_this_turn(battle, "p2") is True
    assert moved_this_turn(battle, "p1") is False


def test_a_wish_is_pending_from_the_turn_after_it_until_it_heals():
    wish = "|move|p2a: Snorlax|Wish|p2a: Snorlax"
    battle = _battle(LEADS, wish)
    assert pending_wish(battle, "p2") is None  # this turn's Wish heals next turn's end
    battle = _battle(LEADS, wish + "\n|turn|2")
    assert pending_wish(battle, "p2") == "p2: Snorlax"
    assert pending_wish(battle, "p1") is None
    battle.parse_message("|move|p1a: Pelipper|U-turn|p2a: Snorlax".split("|"))
    assert pending_wish(battle, "p2") == "p2: Snorlax"  # mid-turn: still to come
    for line in ("|-heal|p2a: Snorlax|100/100|[from] move: Wish|[wisher] Snorlax", "|turn|3"):
        battle.parse_message(line.split("|"))
    assert pending_wish(battle, "p2") is None
    battle = _battle(LEADS, wish + "\n|turn|2\n|turn|3")
    assert pending_wish(battle, "p2") is None  # healed or failed: it is two turns old


def test_an_outrage_lock_counts_its_turns_until_fatigue_or_a_switch():
    dragon = LEADS.replace("Snorlax|Snorlax, L80, M", "Dragonite|Dragonite, L74, M")
    first = "|move|p2a: Dragonite|Outrage|p1a: Pelipper\n|turn|2"
    again = "|move|p2a: Dragonite|Outrage|p1a: Pelipper|[from] lockedmove\n|turn|3"
    assert locked_move_uses(_battle(dragon), "p2") == 0
    assert locked_move_uses(_battle(dragon, first), "p2") == 1
    assert locked_move_uses(_battle(dragon, first, again), "p2") == 2
    assert locked_move_uses(_battle(dragon, first, again), "p1") == 0
    tired = "|move|p2a: Dragonite|Outrage|p1a: Pelipper|[from] lockedmove\n" \
            "|-start|p2a: Dragonite|confusion|[fatigue]\n|turn|3"  # fmt: skip
    assert locked_move_uses(_battle(dragon, first, tired), "p2") == 0
    stopped = "|cant|p2a: Dragonite|par\n|turn|3"
    assert locked_move_uses(_battle(dragon, first, stopped), "p2") == 0
    other = "|move|p2a: Dragonite|Extreme Speed|p1a: Pelipper\n|turn|2"
    assert locked_move_uses(_battle(dragon, other), "p2") == 0
    old = "|move|p2a: Dragonite|Outrage|p1a: Pelipper\n|turn|2\n|turn|3"
    assert locked_move_uses(_battle(dragon, old), "p2") == 0  # nothing since: not a lock


def test_a_battle_object_without_history_falls_back():
    class Bare:
        weather = {"rain": 1}

    assert weather_turns_left(Bare()) is None
    assert moved_this_turn(Bare(), "p1") is None
    assert pending_wish(Bare(), "p1") is None
    assert locked_move_uses(Bare(), "p1") == 0
