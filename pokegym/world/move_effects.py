"""What moves do besides their damage, and what happens at the end of a turn: the effects
half of :class:`~pokegym.world.transition.TransitionModel`'s turn.

- :func:`after_damage`: drain, recoil, crash damage, Life Orb, contact punishment
  (Rough Skin, Iron Barbs, Rocky Helmet), the user's own stat changes and the move's
  secondary effects (status, stat changes, flinch);
- :func:`status_move`: stat changes, status, recovery, Rest, Pain Split, hazards and their
  removal, screens, Tailwind, weather, terrain, Trick Room, Gravity, pivots and phazing;
- :func:`inflict`: a major status, unless a type, an ability or the terrain prevents it;
- :func:`end_of_turn`: weather damage, Grassy Terrain, Leftovers and Black Sludge, poison,
  toxic and burn, Speed Boost, and the field counters.

Also here: :class:`MoveInfo` (what a turn reads of a move's entry), :func:`boost`,
:func:`grounded` and :func:`chance`, which the rest of the turn uses too. ``rng`` is None
in the world model's expected mode: an event then happens when its chance is at least
one half.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from pokegym.world.data import Dex
from pokegym.world.state import BattleState, MonState, SideState

PIVOTS: Final = {
    "uturn",
    "voltswitch",
    "flipturn",
    "partingshot",
    "teleport",
    "shedtail",
    "chillyreception",
}
PHAZING: Final = {"roar", "whirlwind", "dragontail", "circlethrow"}
WEATHER_MOVES: Final = {"sunnyday": "sunnyday", "raindance": "raindance", "sandstorm": "sandstorm",
                        "snowscape": "snowscape", "hail": "hail",
                        "chillyreception": "snowscape"}  # fmt: skip
WEATHER_ROCKS: Final = {"sunnyday": "heatrock", "raindance": "damprock", "sandstorm": "smoothrock",
                        "snowscape": "icyrock", "hail": "icyrock"}  # fmt: skip
RECOVERY_HALF: Final = {"recover", "roost", "softboiled", "slackoff", "milkdrink", "healorder",
                        "shoreup", "lunarblessing"}  # fmt: skip
RECOVERY_WEATHER: Final = {"synthesis", "morningsun", "moonlight"}
HAZARD_LAYERS: Final = {"stealthrock": 1, "spikes": 3, "toxicspikes": 2, "stickyweb": 1}
"""Hazards by move id (and side condition), with the most layers a side can hold."""
BOOST_INDEX: Final = {"atk": 0, "def": 1, "spa": 2, "spd": 3, "spe": 4, "accuracy": 5, "evasion": 6}
FOE_TARGETS: Final = frozenset(("normal", "any", "allAdjacentFoes", "allAdjacent", "randomNormal",
                         "adjacentFoe", "scripted"))  # fmt: skip
SELF_TARGETS: Final = frozenset(("self", "allySide", "allyTeam", "adjacentAllyOrSelf"))


class MoveInfo:
    """What a turn reads of one move's Showdown entry, read once per move and model."""

    __slots__ = ("accuracy", "boosts", "category", "contact", "crash", "drain", "entry", "heal",
                 "heal_flag", "id", "mind_blown", "ohko", "powder", "priority", "protect_flag",
                 "pseudo_weather", "recoil", "secondaries", "self_boosts", "self_destruct",
                 "sheer_force", "side_condition", "status", "target_self", "targets_foe",
                 "terrain", "type")  # fmt: skip

    def __init__(self, move_id: str, entry: dict[str, Any]):
        flags = entry.get("flags", {})
        self.entry = entry
        self.id = entry.get("id", move_id)
        self.category = entry.get("category", "Status")
        self.type = entry.get("type", "Normal")
        self.priority = int(entry.get("priority", 0))
        self.accuracy = entry.get("accuracy", 100)
        self.ohko = bool(entry.get("ohko"))
        self.targets_foe = entry.get("target") in FOE_TARGETS
        self.target_self = entry.get("target") in SELF_TARGETS
        self.protect_flag = bool(flags.get("protect"))
        self.contact = bool(flags.get("contact"))
        self.heal_flag = bool(flags.get("heal"))
        self.powder = bool(flags.get("powder"))
        self.crash = bool(entry.get("hasCrashDamage"))
        self.drain = entry.get("drain")
        self.recoil = entry.get("recoil")
        self.mind_blown = bool(entry.get("mindBlownRecoil"))
        self.self_destruct = entry.get("selfdestruct") == "always"
        self.self_boosts = (entry.get("self") or {}).get("boosts")
        self.sheer_force = bool(entry.get("secondary") or entry.get("secondaries"))
        self.secondaries = tuple(
            entry.get("secondaries") or ([entry["secondary"]] if entry.get("secondary") else [])
        )
        self.boosts = entry.get("boosts")
        self.status = entry.get("status")
        self.heal = entry.get("heal")
        self.side_condition = entry.get("sideCondition")
        self.terrain = entry.get("terrain")
        self.pseudo_weather = entry.get("pseudoWeather")


def chance(p: float, rng: np.random.Generator | None) -> bool:
    """Whether an event of probability ``p`` happens: drawn with ``rng``, or (``rng`` None,
    the expected mode) when ``p`` is at least one half."""
    if p >= 1.0:
        return True
    if p <= 0.0:
        return False
    if rng is None:
        return p >= 0.5
    return bool(rng.random() < p)


def boost(mon: MonState, boosts: dict[str, int]) -> None:
    """Apply stat stage changes (Contrary, Simple, Clear Body and its kind), within ±6."""
    values = list(mon.boosts)
    for stat, amount in boosts.items():
        index = BOOST_INDEX.get(stat)
        if index is None:
            continue
        if mon.ability == "contrary":
            amount = -amount
        elif mon.ability == "simple":
            amount *= 2
        if amount < 0 and mon.ability in ("clearbody", "whitesmoke", "fullmetalbody"):
            continue
        values[index] = max(-6, min(6, values[index] + amount))
    mon.boosts = tuple(values)  # type: ignore[assignment]


def grounded(s: BattleState, mon: MonState) -> bool:
    """Whether ``mon`` touches the ground (terrain, Spikes, Ground moves)."""
    if s.gravity or mon.item == "ironball":
        return True
    return not (
        "Flying" in mon.current_types() or mon.ability == "levitate" or mon.item == "airballoon"
    )


def after_damage(
    s: BattleState,
    side: int,
    user: MonState,
    target: MonState,
    info: MoveInfo,
    dealt: float,
    hit: bool,
    rng: np.random.Generator | None,
    outcome: dict[str, bool],
) -> None:
    if not hit:
        if info.crash:
            user.hp -= user.max_hp / 2
        return
    drain = info.drain
    if drain:
        heal = dealt * drain[0] / drain[1]
        if user.item == "bigroot":
            heal *= 1.3
        user.hp = min(user.max_hp, user.hp + heal)
    recoil = info.recoil
    if recoil and user.ability not in ("rockhead", "magicguard"):
        user.hp -= dealt * recoil[0] / recoil[1]
    if info.mind_blown and user.ability != "magicguard":
        user.hp -= user.max_hp / 2
    if info.self_destruct:
        user.hp = 0.0
    if user.item == "lifeorb" and user.ability not in ("magicguard", "sheerforce") and dealt > 0:
        user.hp -= user.max_hp / 10
    if target.ability in ("roughskin", "ironbarbs") and info.contact:
        if user.ability != "magicguard":
            user.hp -= user.max_hp / 8
    if target.item == "rockyhelmet" and info.contact:
        if user.ability != "magicguard":
            user.hp -= user.max_hp / 6
    if info.self_boosts and user.hp > 0:
        boost(user, info.self_boosts)
    if user.ability == "sheerforce" and info.sheer_force:
        return
    for secondary in info.secondaries:
        odds = secondary.get("chance", 100) / 100.0
        if user.ability == "serenegrace":
            odds = min(1.0, odds * 2)
        if target.ability == "shielddust" and "self" not in secondary:
            continue
        if not chance(odds, rng):
            continue
        if secondary.get("status") and target.hp > 0:
            inflict(s, target, secondary["status"])
        if secondary.get("boosts") and target.hp > 0:
            boost(target, secondary["boosts"])
        if secondary.get("volatileStatus") == "flinch":
            outcome["flinch"] = True
        if secondary.get("self", {}).get("boosts") and user.hp > 0:
            boost(user, secondary["self"]["boosts"])


def inflict(s: BattleState, mon: MonState, status: str) -> bool:
    if mon.status or mon.hp <= 0:
        return False
    types = mon.current_types()
    if status == "brn" and "Fire" in types:
        return False
    if status == "par" and "Electric" in types:
        return False
    if status in ("psn", "tox") and ("Poison" in types or "Steel" in types):
        return False
    if status == "frz" and "Ice" in types:
        return False
    if s.terrain == "mistyterrain" and grounded(s, mon):
        return False
    if status == "slp" and s.terrain == "electricterrain" and grounded(s, mon):
        return False
    if mon.ability in ("purifyingsalt", "comatose") or (
        status == "par" and mon.ability == "limber") or (
        status == "brn" and mon.ability in ("waterveil", "waterbubble", "thermalexchange")) or (
        status == "slp" and mon.ability in ("insomnia", "vitalspirit", "sweetveil")) or (
        status in ("psn", "tox") and mon.ability == "immunity"):  # fmt: skip
        return False
    if status == "slp" and _sleep_clause(s, mon):
        return False
    mon.status = status
    mon.status_turns = 1 if status == "tox" else (2 if status == "slp" else 0)
    return True


def _sleep_clause(s: BattleState, mon: MonState) -> bool:
    """Sleep Clause Mod (every format pokegym plays has it): a sleep move fails while
    another Pokémon of the target's side is asleep and not fainted. Showdown exempts a
    sleep the Pokémon caused itself (Rest); the state does not keep what caused a
    sleep, so a Rest sleep blocks too."""
    for team in s.sides:
        for other in team.mons:
            if other is mon:
                return any(m.hp > 0 and m.status == "slp" for m in team.mons if m is not mon)
    return False


def clear_hazards(team: SideState) -> None:
    team.stealth_rock = False
    team.spikes = 0
    team.toxic_spikes = 0
    team.sticky_web = False


def status_move(
    dex: Dex,
    s: BattleState,
    side: int,
    move_id: str,
    info: MoveInfo,
    outcome: dict[str, bool],
) -> None:
    user_team, target_team = s.sides[side], s.sides[1 - side]
    user, target = user_team.active_mon, target_team.active_mon
    target_self = info.target_self
    if info.boosts:
        boost(user if target_self else target, info.boosts)
    status = info.status
    if status and not target_self:
        if move_id == "thunderwave" and (dex.effectiveness(info.type, target.current_types()) == 0):
            return
        if info.powder and "Grass" in target.current_types():
            return
        inflict(s, target, status)
    heal = info.heal
    if heal and move_id not in RECOVERY_WEATHER:
        user.hp = min(user.max_hp, user.hp + user.max_hp * heal[0] / heal[1])
    elif move_id in RECOVERY_HALF:
        user.hp = min(user.max_hp, user.hp + user.max_hp / 2)
    elif move_id in RECOVERY_WEATHER:
        share = {"sunnyday": 2 / 3, "desolateland": 2 / 3, "": 1 / 2}.get(s.weather, 1 / 4)
        user.hp = min(user.max_hp, user.hp + user.max_hp * share)
    elif move_id == "rest" and user.hp < user.max_hp:
        user.hp = float(user.max_hp)
        user.status = "slp"
        user.status_turns = 2
    elif move_id == "painsplit":
        average = (user.hp + target.hp) / 2
        user.hp, target.hp = min(user.max_hp, average), min(target.max_hp, average)
    condition = info.side_condition
    if condition:
        side_state = user_team if target_self else target_team
        if condition == "stealthrock":
            side_state.stealth_rock = True
        elif condition == "spikes":
            side_state.spikes = min(HAZARD_LAYERS["spikes"], side_state.spikes + 1)
        elif condition == "toxicspikes":
            side_state.toxic_spikes = min(HAZARD_LAYERS["toxicspikes"], side_state.toxic_spikes + 1)
        elif condition == "stickyweb":
            side_state.sticky_web = True
        elif condition in ("reflect", "lightscreen", "auroraveil"):
            turns = 8 if user.item == "lightclay" else 5
            if condition == "auroraveil" and s.weather not in ("snowscape", "hail"):
                return
            setattr(side_state, {"lightscreen": "light_screen", "auroraveil": "aurora_veil"}
                    .get(condition, condition), turns)  # fmt: skip
        elif condition == "tailwind":
            side_state.tailwind = 4
    if move_id in ("defog", "tidyup"):
        clear_hazards(user_team)
        clear_hazards(target_team)
        if move_id == "defog":
            target_team.reflect = target_team.light_screen = target_team.aurora_veil = 0
    elif move_id == "courtchange":
        for attr in ("stealth_rock", "spikes", "toxic_spikes", "sticky_web", "reflect",
                     "light_screen", "aurora_veil", "tailwind"):  # fmt: skip
            mine, theirs = getattr(user_team, attr), getattr(target_team, attr)
            setattr(user_team, attr, theirs)
            setattr(target_team, attr, mine)
    weather = WEATHER_MOVES.get(move_id)
    if weather and s.weather != weather:
        s.weather = weather
        rock = WEATHER_ROCKS.get(weather)
        s.weather_turns = 8 if rock and user.item == rock else 5
    terrain = info.terrain
    if terrain:
        s.terrain = terrain
        s.terrain_turns = 8 if user.item == "terrainextender" else 5
    pseudo = info.pseudo_weather
    if pseudo == "trickroom":
        s.trick_room = 0 if s.trick_room else 5
    elif pseudo == "gravity":
        s.gravity = 5
    if move_id in PIVOTS:
        if move_id == "partingshot":
            boost(target, {"atk": -1, "spa": -1})
        outcome["pivot"] = True
    if move_id in PHAZING:
        outcome["phaze"] = True


# --------------------------------------------------------------------- end of turn
def end_of_turn(s: BattleState, order: list[int]) -> None:
    """The residuals of the end of a turn, the faster side's first (``order``)."""
    for side in order:
        mon = s.sides[side].active_mon
        if mon.hp <= 0:
            continue
        types = mon.current_types()
        magic_guard = mon.ability == "magicguard"
        if (
            s.weather == "sandstorm"
            and not magic_guard
            and mon.item != "safetygoggles"
            and not (set(types) & {"Rock", "Ground", "Steel"})
            and mon.ability not in ("sandveil", "sandrush", "sandforce", "overcoat")
        ):
            mon.hp -= mon.max_hp / 16
        elif (
            s.weather == "hail"
            and not magic_guard
            and "Ice" not in types
            and mon.ability not in ("icebody", "snowcloak", "overcoat")
        ):
            mon.hp -= mon.max_hp / 16
        if s.terrain == "grassyterrain" and grounded(s, mon):
            mon.hp = min(mon.max_hp, mon.hp + mon.max_hp / 16)
        if mon.item == "leftovers" or (mon.item == "blacksludge" and "Poison" in types):
            mon.hp = min(mon.max_hp, mon.hp + mon.max_hp / 16)
        elif mon.item == "blacksludge" and not magic_guard:
            mon.hp -= mon.max_hp / 8
        if mon.ability == "poisonheal" and mon.status in ("psn", "tox"):
            mon.hp = min(mon.max_hp, mon.hp + mon.max_hp / 8)
        elif mon.status == "psn" and not magic_guard:
            mon.hp -= mon.max_hp / 8
        elif mon.status == "tox" and not magic_guard:
            mon.hp -= mon.max_hp * min(15, mon.status_turns) / 16
            mon.status_turns += 1
        elif mon.status == "brn" and not magic_guard:
            mon.hp -= (
                mon.max_hp / (16 if s.gen >= 7 else 8) / (2 if mon.ability == "heatproof" else 1)
            )
        if mon.ability == "speedboost" and mon.hp > 0:
            boost(mon, {"spe": 1})
    for side_state in s.sides:
        side_state.reflect = max(0, side_state.reflect - 1)
        side_state.light_screen = max(0, side_state.light_screen - 1)
        side_state.aurora_veil = max(0, side_state.aurora_veil - 1)
        side_state.tailwind = max(0, side_state.tailwind - 1)
    if s.weather and s.weather not in ("desolateland", "primordialsea", "deltastream"):
        s.weather_turns -= 1
        if s.weather_turns <= 0:
            s.weather, s.weather_turns = "", 0
    if s.terrain:
        s.terrain_turns -= 1
        if s.terrain_turns <= 0:
            s.terrain, s.terrain_turns = "", 0
    s.trick_room = max(0, s.trick_room - 1)
    s.gravity = max(0, s.gravity - 1)
