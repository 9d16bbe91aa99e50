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

Each function takes the :class:`~pokegym.world.transition.TransitionModel` whose turn it
is part of (for its chance rule, stat changes, grounding and speed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

from pokegym.world.state import BattleState, MonState, SideState

if TYPE_CHECKING:
    from pokegym.world.transition import MoveInfo, TransitionModel

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


def after_damage(
    model: TransitionModel,
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
        model._boost(user, info.self_boosts)
    if user.ability == "sheerforce" and info.sheer_force:
        return
    for secondary in info.secondaries:
        chance = secondary.get("chance", 100) / 100.0
        if user.ability == "serenegrace":
            chance = min(1.0, chance * 2)
        if target.ability == "shielddust" and "self" not in secondary:
            continue
        if not model._chance(chance, rng):
            continue
        if secondary.get("status") and target.hp > 0:
            inflict(model, s, target, secondary["status"])
        if secondary.get("boosts") and target.hp > 0:
            model._boost(target, secondary["boosts"])
        if secondary.get("volatileStatus") == "flinch":
            outcome["flinch"] = True
        if secondary.get("self", {}).get("boosts") and user.hp > 0:
            model._boost(user, secondary["self"]["boosts"])


def inflict(model: TransitionModel, s: BattleState, mon: MonState, status: str) -> bool:
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
    if s.terrain == "mistyterrain" and model._grounded(s, mon):
        return False
    if status == "slp" and s.terrain == "electricterrain" and model._grounded(s, mon):
        return False
    if mon.ability in ("purifyingsalt", "comatose") or (
        status == "par" and mon.ability == "limber") or (
        status == "brn" and mon.ability in ("waterveil", "waterbubble", "thermalexchange")) or (
        status == "slp" and mon.ability in ("insomnia", "vitalspirit", "sweetveil")) or (
        status in ("psn", "tox") and mon.ability == "immunity"):  # fmt: skip
        return False
    mon.status = status
    mon.status_turns = 1 if status == "tox" else (2 if status == "slp" else 0)
    return True


def clear_hazards(team: SideState) -> None:
    team.stealth_rock = False
    team.spikes = 0
    team.toxic_spikes = 0
    team.sticky_web = False


def status_move(
    model: TransitionModel,
    s: BattleState,
    side: int,
    move_id: str,
    info: MoveInfo,
    rng: np.random.Generator | None,
    outcome: dict[str, bool],
) -> None:
    user_team, target_team = s.sides[side], s.sides[1 - side]
    user, target = user_team.active_mon, target_team.active_mon
    target_self = info.target_self
    if info.boosts:
        model._boost(user if target_self else target, info.boosts)
    status = info.status
    if status and not target_self:
        if move_id == "thunderwave" and (
            model.dex.effectiveness(info.type, target.current_types()) == 0
        ):
            return
        if info.powder and "Grass" in target.current_types():
            return
        inflict(model, s, target, status)
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
            side_state.spikes = min(3, side_state.spikes + 1)
        elif condition == "toxicspikes":
            side_state.toxic_spikes = min(2, side_state.toxic_spikes + 1)
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
            model._boost(target, {"atk": -1, "spa": -1})
        outcome["pivot"] = True
    if move_id in PHAZING:
        outcome["phaze"] = True


# --------------------------------------------------------------------- end of turn
def end_of_turn(model: TransitionModel, s: BattleState, rng: np.random.Generator | None) -> None:
    order = [0, 1]
    if model.speed(s, 1) > model.speed(s, 0):
        order = [1, 0]
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
        if s.terrain == "grassyterrain" and model._grounded(s, mon):
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
            model._boost(mon, {"spe": 1})
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
