"""Speed as Showdown computes it: the one place this rule lives.

Two numbers decide who moves first among actions of the same priority:

* :func:`effective_speed` is Showdown's ``Pokemon.getStat('spe')``: the Speed stat
  with its boost stage, then every ``ModifySpe`` modifier chained in 4096ths (Choice
  Scarf, Iron Ball and the other halving items, Quick Powder, Swift Swim / Chlorophyll /
  Sand Rush / Slush Rush in their weather, Surge Surfer, Quick Feet, Unburden, Slow
  Start, Protosynthesis / Quark Drive, Tailwind, the Grass/Water Pledge swamp), then
  paralysis (runs last: ``onModifySpePriority`` -101), capped at 10,000. Electro Ball and
  Gyro Ball read this number.
* :func:`action_speed` is ``Pokemon.getActionSpeed()``: under Trick Room ``10000 -
  speed``, then truncated to 13 bits, as Showdown does. The truncation is not a detail:
  under Trick Room the number of a Pokémon with 1,809 Speed or more does not wrap
  around while a slower one's does, so a very fast Pokémon can move before slow ones.

The world model's transitions (turn order, switch order, end-of-turn order), its priors
(turn-order inference), its damage calculator (handler order, Electro Ball, Gyro Ball)
and the ``abyssal`` agent call these; Showdown's own numbers for the same situations are
the test (tests/test_speed.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from pokegym.world.data import to_id

__all__ = [
    "BOOST_TABLE",
    "HALF_SPEED_ITEMS",
    "SPEED_CAP",
    "WEATHER_SPEED_ABILITIES",
    "action_speed",
    "chain_modifiers",
    "effective_speed",
]

#: Multipliers of boost stages 0..+6 (a negative stage divides).
BOOST_TABLE = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)
#: Items that halve Speed (Iron Ball, Macho Brace and the Power items).
HALF_SPEED_ITEMS = frozenset(
    {"ironball", "machobrace", "poweranklet", "powerband", "powerbelt", "powerbracer",
     "powerlens", "powerweight"}
)  # fmt: skip
#: Abilities that double Speed in a weather, and the weathers (Showdown ids).
WEATHER_SPEED_ABILITIES = {
    "swiftswim": ("raindance", "primordialsea"),
    "chlorophyll": ("sunnyday", "desolateland"),
    "sandrush": ("sandstorm",),
    "slushrush": ("hail", "snowscape", "snow"),
}
# Utility Umbrella hides sun and rain from its holder (Pokemon.effectiveWeather).
_UMBRELLA_WEATHER = frozenset({"raindance", "primordialsea", "sunnyday", "desolateland"})
#: getStat('spe') never exceeds this.
SPEED_CAP = 10_000


def chain_modifiers(mods: Iterable[float]) -> int:
    """Showdown's chained modifier (``chainModify``) in 4096ths."""
    total = 4096
    for mod in mods:
        total = (total * int(mod * 4096) + 2048) >> 12
    return total


def _as_id(text: str) -> str:
    """``text`` as a Showdown id (the world model's ids pass through without a copy)."""
    if not text or (text.islower() and text.isalnum()):
        return text
    return to_id(text)


def effective_speed(
    stat: int,
    *,
    boost: int = 0,
    item: str = "",
    ability: str = "",
    status: str = "",
    tailwind: bool = False,
    swamp: bool = False,
    weather: str = "",
    terrain: str = "",
    speed_ability_boost: bool = False,
    item_lost: bool = False,
    slow_start: bool = False,
    dynamaxed: bool = False,
    species: str = "",
    gen: int = 9,
) -> int:
    """Showdown's ``getStat('spe')`` (before Trick Room; see :func:`action_speed`).

    Args:
        stat: the Speed stat (as the request shows it for one's own Pokémon).
        boost: the Speed stage, -6..6.
        item, ability: Showdown ids (or names); ``""`` for none or suppressed.
        status: ``"par"``, ``"brn"``, ... or ``""``.
        tailwind, swamp: Tailwind / the Pledge swamp on this Pokémon's side.
        weather: the field's weather as Showdown ids (``"raindance"``), ``""`` when none
            or suppressed by Cloud Nine / Air Lock; a holder's Utility Umbrella is
            applied here.
        terrain: the field's terrain (``"electricterrain"``).
        speed_ability_boost: Protosynthesis / Quark Drive is boosting Speed.
        item_lost: Unburden is active (the item was used or lost on the field).
        slow_start: Slow Start is still active.
        dynamaxed: Dynamaxed (Choice Scarf does nothing).
        species: for Quick Powder (Ditto, not transformed).
        gen: paralysis halves Speed from generation 7 and quarters it before.
    """
    boost = max(-6, min(6, boost))
    value = int(stat * BOOST_TABLE[boost]) if boost >= 0 else int(stat / BOOST_TABLE[-boost])
    item, ability = _as_id(item), _as_id(ability)
    mods: list[float] = []
    if item == "choicescarf" and not dynamaxed:
        mods.append(1.5)
    elif item in HALF_SPEED_ITEMS:
        mods.append(0.5)
    elif item == "quickpowder" and to_id(species) == "ditto":
        mods.append(2.0)
    own_weather = weather
    if item == "utilityumbrella" and weather in _UMBRELLA_WEATHER:
        own_weather = ""
    if ability in WEATHER_SPEED_ABILITIES:
        # Swift Swim and Chlorophyll read the holder's weather; Sand Rush and Slush Rush
        # the field's (an umbrella only hides sun and rain).
        active = own_weather if ability in ("swiftswim", "chlorophyll") else weather
        if active in WEATHER_SPEED_ABILITIES[ability]:
            mods.append(2.0)
    elif ability == "surgesurfer" and terrain == "electricterrain":
        mods.append(2.0)
    elif ability == "quickfeet" and status:
        mods.append(1.5)
    elif ability == "unburden" and item_lost:
        mods.append(2.0)
    elif ability == "slowstart" and slow_start:
        mods.append(0.5)
    elif ability in ("protosynthesis", "quarkdrive") and speed_ability_boost:
        mods.append(1.5)
    if tailwind:
        mods.append(2.0)
    if swamp:
        mods.append(0.25)
    if mods:
        mod = chain_modifiers(mods)
        if mod != 4096:
            value = (value * mod + 2047) // 4096
    if status == "par" and ability != "quickfeet":
        value = value * 50 // 100 if gen >= 7 else value * 25 // 100
    return min(value, SPEED_CAP)


def action_speed(speed: int, trick_room: bool) -> int:
    """Showdown's ``getActionSpeed()``: the number actions of one priority are ordered
    by, higher first (``10000 - speed`` under Trick Room, truncated to 13 bits)."""
    if trick_room:
        speed = SPEED_CAP - speed
    return speed % 8192
