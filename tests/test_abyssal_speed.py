"""``abyssal``'s speed model is the one Speed rule (pokegym/world/speed.py).

Battle objects are poke-env's own, built offline from protocol lines as a player would
receive them. Each case is one where ``abyssal`` used to decide who moves first with
its own arithmetic (Speed × boost × ½ paralysis × 1.5 Scarf × 2 Tailwind, nothing
else) and got it wrong: weather abilities, Iron Ball, Quick Feet, Surge Surfer, and
Trick Room's 13-bit truncation.
"""

from __future__ import annotations

import logging

import pytest
from poke_env.battle import Battle

from pokegym.world.speed import action_speed, effective_speed
from policies.abyssal import Model


def battle(*lines: str, ours: str = "Kingdra, L84", theirs: str = "Jolteon, L85") -> Battle:
    """A gen 9 random battle seen by p1, after ``lines`` (protocol lines)."""
    b = Battle("battle-gen9randombattle-1", "me", logging.getLogger("test"), gen=9)
    header = [
        "|init|battle", "|title|me vs. them", "|player|p1|me|", "|player|p2|them|",
        f"|switch|p1a: {ours.split(',')[0]}|{ours}|100/100",
        f"|switch|p2a: {theirs.split(',')[0]}|{theirs}|100/100",
        "|turn|1",
    ]  # fmt: skip
    for line in (*header, *lines):
        b.parse_message(line.split("|"))
    return b


def first(b: Battle) -> float:
    model = Model(b)
    me = model.combatant(b.active_pokemon, True)
    them = model.combatant(b.opponent_active_pokemon, False)
    return model.moves_first(me, them)


# Random-battle stats (85 EVs, 31 IVs, no nature): Kingdra L84 191 Speed, Jolteon L85 270.
KINGDRA_L84, JOLTEON_L85 = 191, 270


def test_the_stats_behind_the_cases():
    model = Model(battle())
    assert model.speed(model.combatant(model.battle.active_pokemon, True)) == KINGDRA_L84
    assert model.speed(model.combatant(model.battle.opponent_active_pokemon, False)) == (
        JOLTEON_L85
    )
    assert first(battle()) == 0.0


@pytest.mark.parametrize(
    ("name", "lines", "expected"),
    [
        # Swift Swim doubles Kingdra in rain: 382 against 270 (abyssal said 191 < 270).
        ("swift swim in rain", ["|-weather|RainDance", "|-ability|p1a: Kingdra|Swift Swim"], 1.0),
        # Under Utility Umbrella the rain does not reach it.
        ("swift swim under an umbrella",
         ["|-weather|RainDance", "|-ability|p1a: Kingdra|Swift Swim",
          "|-item|p1a: Kingdra|Utility Umbrella"], 0.0),
        # Iron Ball halves Jolteon: 135 against 191.
        ("iron ball", ["|-item|p2a: Jolteon|Iron Ball"], 1.0),
        # Paralysis halves Kingdra: 95; Quick Feet would have kept it.
        ("paralysis", ["|-status|p1a: Kingdra|par", "|-item|p2a: Jolteon|Iron Ball"], 0.0),
        # Tailwind doubles: 382.
        ("tailwind", ["|-sidestart|p1: me|move: Tailwind"], 1.0),
        # Trick Room: the slower one moves first.
        ("trick room", ["|-fieldstart|move: Trick Room"], 1.0),
    ],
)  # fmt: skip
def test_who_moves_first(name, lines, expected):
    assert first(battle(*lines)) == expected, name


def test_quick_feet_and_surge_surfer():
    # Jolteon with Quick Feet, burned: 270 × 1.5 = 405 against Raichu-Alola (L88,
    # 110 base: 244) in Electric Terrain with Surge Surfer: 488.
    b = battle("|-fieldstart|move: Electric Terrain", "|-ability|p1a: Raichu|Surge Surfer",
               "|-ability|p2a: Jolteon|Quick Feet", "|-status|p2a: Jolteon|brn",
               ours="Raichu-Alola, L88")  # fmt: skip
    model = Model(b)
    me = model.combatant(b.active_pokemon, True)
    them = model.combatant(b.opponent_active_pokemon, False)
    assert model.speed(them) == effective_speed(JOLTEON_L85, ability="quickfeet", status="brn")
    assert model.speed(them) == 405
    assert model.speed(me) == 488 and model.moves_first(me, them) == 1.0


def test_trick_room_wraps_as_showdown_does():
    """+6 Kingdra with Tailwind and Swift Swim in rain (191 × 4 × 2 × 2 = 3056) under
    Trick Room: 10000 − 3056 fits in 13 bits while Jolteon's 10000 − 270 wraps around, so
    Showdown lets the faster Kingdra act first; abyssal now orders them the same way."""
    b = battle("|-fieldstart|move: Trick Room", "|-boost|p1a: Kingdra|spe|6",
               "|-sidestart|p1: me|move: Tailwind", "|-weather|RainDance",
               "|-ability|p1a: Kingdra|Swift Swim")  # fmt: skip
    model = Model(b)
    me = model.combatant(b.active_pokemon, True)
    assert model.speed(me) == 3056
    assert model.action_speed(me) == action_speed(3056, True) == 6944
    assert first(b) == 1.0


def test_unknown_abilities_count_by_their_share():
    """The opponent's Kingdra may have Sniper or Swift Swim (its random-battle sets): in
    rain one doubles its Speed and the other does not; the estimate is their mean."""
    b = battle("|-weather|RainDance", ours="Jolteon, L85", theirs="Kingdra, L84")
    model = Model(b)
    them = model.combatant(b.opponent_active_pokemon, False)
    assert set(them.abilities) == {"sniper", "swiftswim"}
    expected = [effective_speed(KINGDRA_L84, ability=a, weather="raindance")
                for a in them.abilities]  # fmt: skip
    assert model.speed(them) == sum(expected) / 2 == (191 + 382) / 2
