"""A fixed-length encoding of world-model states: what the distilled value network reads.

The search scores *world-model states* at its leaves (:class:`~pokegym.world.state.BattleState`,
built once per decision from the live battle and then advanced by the transition model),
so a learned value reads a fixed-length encoding of that state, computed the same way for
a state built from a live battle (:func:`~pokegym.world.state.state_from_battle`) and for
a state thousands of transitions deep in a search. Side 0 is the player the state was
built for; every feature is from that player's point of view.

The encoding (:data:`STATE_FEATURES`, :func:`state_layout_table`) has a field block, one
block per side (team totals, hazards and screens, the active Pokémon in detail, the
bench pooled) and a matchup block (speed, best type-weighted attack each way, the
hand-written evaluator's value and duel term). Everything is plain arithmetic over the
state and Showdown's tables: no damage rolls except through the hand-written evaluator,
whose damage calculations the transition model caches.

This module is compiled with the rest of the world model (:mod:`pokegym.world._accel`):
a search encodes every leaf it scores with the network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pokegym.world.data import TYPES, Dex
from pokegym.world.state import BattleState, MonState, SideState
from pokegym.world.transition import TransitionModel
from policies.core.evaluation import HeuristicEvaluator, unseen_count

STATE_ENCODER_VERSION = 1

WEATHER_GROUPS = {
    "sunnyday": 0, "desolateland": 0, "raindance": 1, "primordialsea": 1, "sandstorm": 2,
    "snowscape": 3, "hail": 3, "deltastream": 4,
}  # fmt: skip
TERRAINS = ("electricterrain", "grassyterrain", "mistyterrain", "psychicterrain")
STATUSES = ("brn", "par", "psn", "tox", "slp", "frz")
TYPE_INDEX = {t: i for i, t in enumerate(TYPES)}
# Scale of the type-weighted attack figure (base power x STAB x effectiveness x A/D).
POWER_SCALE = 200.0

# (name, width, description): the layout, in order.
FIELD_FEATURES: list[tuple[str, int, str]] = [
    ("weather", 5, "sun, rain, sand, snow/hail, strong winds (one-hot)"),
    ("weather_turns", 1, "turns left / 8"),
    ("terrain", 4, "electric, grassy, misty, psychic (one-hot)"),
    ("terrain_turns", 1, "turns left / 8"),
    ("trick_room", 1, "turns left / 5"),
    ("gravity", 1, "turns left / 5"),
    ("turn", 1, "turn / 50, capped at 1"),
]
SIDE_FEATURES: list[tuple[str, int, str]] = [
    ("alive", 1, "Pokémon not fainted / 6 (unseen opponents count as alive)"),
    ("hp_total", 1, "sum of HP fractions / 6 (unseen opponents count as full)"),
    ("unseen", 1, "opponent Pokémon never seen / 6 (0 for side 0)"),
    ("statused", 1, "Pokémon with a major status / 6"),
    ("hazards", 4, "stealth rock, spikes / 3, toxic spikes / 2, sticky web"),
    ("screens", 4, "reflect, light screen, aurora veil / 5 and tailwind / 4 (turns left)"),
    ("tera_used", 1, "1 if this side has terastallized"),
    ("active_hp", 1, "active Pokémon's HP fraction"),
    ("active_level", 1, "level / 100"),
    ("active_stats", 5, "atk, def, spa, spd, spe / 400 (level-scaled stats)"),
    ("active_boosts", 7, "stat stages / 6 (atk, def, spa, spd, spe, accuracy, evasion)"),
    ("active_status", 6, "brn, par, psn, tox, slp, frz (one-hot)"),
    ("active_status_turns", 1, "sleep turns left or toxic counter / 4"),
    ("active_types", 18, "current types (Tera type once terastallized), one-hot"),
    ("active_tera", 2, "terastallized; can still terastallize"),
    ("active_flags", 3, "choice-locked; protected last turn; holds a Choice item"),
    (
        "active_attack",
        2,
        "best type-weighted attack on the other active, and its mean over attacking moves (/ 200)",
    ),
    ("bench_count", 1, "bench Pokémon alive / 5"),
    ("bench_hp", 1, "sum of bench HP fractions / 5"),
    ("bench_types", 18, "bench types weighted by HP fraction / 5"),
    ("bench_attack", 1, "best type-weighted attack of a bench Pokémon on the other active"),
    ("bench_defence", 1, "lowest weakness of a bench Pokémon to the other active's moves / 4"),
]
MATCHUP_FEATURES: list[tuple[str, int, str]] = [
    ("speed", 3, "side 0 faster; log speed ratio / 2 (clipped to ±1); Trick Room inverts"),
    ("heuristic", 2, "the hand-written evaluator's win chance and duel term (side 0)"),
]


def _width(table: list[tuple[str, int, str]]) -> int:
    return sum(width for _, width, _ in table)


FIELD_SIZE = _width(FIELD_FEATURES)
SIDE_SIZE = _width(SIDE_FEATURES)
MATCHUP_SIZE = _width(MATCHUP_FEATURES)
STATE_FEATURES = FIELD_SIZE + 2 * SIDE_SIZE + MATCHUP_SIZE
HEURISTIC_INDEX = STATE_FEATURES - 2  # the hand-written evaluator's win chance


def state_layout_table() -> str:
    """Every slot of the state encoding, with its offset (for the docs)."""
    rows = []
    offset = 0
    for block, table in (("field", FIELD_FEATURES), ("side 0", SIDE_FEATURES),
                         ("side 1", SIDE_FEATURES), ("matchup", MATCHUP_FEATURES)):  # fmt: skip
        for name, width, description in table:
            rows.append(f"{offset:4d}  {block:8s} {name:22s} {width:3d}  {description}")
            offset += width
    return "\n".join(rows)


# -------------------------------------------------------------------- encoder
class StateEncoder:
    """World-model state -> float32 vector of :data:`STATE_FEATURES` values.

    Args:
        model: the transition model of the decision (its Dex gives types and moves;
            its damage cache is shared with the search and the hand-written evaluator).
    """

    def __init__(self, model: TransitionModel):
        self.model = model
        self.dex: Dex = model.dex
        self.heuristic = HeuristicEvaluator(model)
        self._move_cache: dict[tuple[str, tuple[str, ...], tuple[str, ...]], tuple[float, int]] = {}

    @property
    def size(self) -> int:
        return STATE_FEATURES

    def encode_many(self, states: Sequence[BattleState]) -> np.ndarray:
        out = np.zeros((len(states), STATE_FEATURES), dtype=np.float32)
        for i, state in enumerate(states):
            out[i] = self.encode(state)
        return out

    def encode(self, state: BattleState) -> np.ndarray:
        values: list[float] = []
        weather = [0.0] * 5
        if state.weather in WEATHER_GROUPS:
            weather[WEATHER_GROUPS[state.weather]] = 1.0
        terrain = [float(state.terrain == t) for t in TERRAINS]
        values += weather
        values.append(min(state.weather_turns, 8) / 8.0)
        values += terrain
        values.append(min(state.terrain_turns, 8) / 8.0)
        values.append(min(state.trick_room, 5) / 5.0)
        values.append(min(state.gravity, 5) / 5.0)
        values.append(min(state.turn, 50) / 50.0)
        unseen = unseen_count(state)
        ours, theirs = state.sides
        values += self._side(ours, theirs, 0)
        values += self._side(theirs, ours, unseen)
        values += self._matchup(state)
        return np.asarray(values, dtype=np.float32)

    # -------------------------------------------------------------- blocks
    def _side(self, side: SideState, other: SideState, unseen: int) -> list[float]:
        mons = side.mons
        alive = [m for m in mons if m.hp > 0]
        values = [
            (len(alive) + unseen) / 6.0,
            (sum(m.hp_fraction for m in alive) + unseen) / 6.0,
            unseen / 6.0,
            sum(1 for m in alive if m.status) / 6.0,
            float(side.stealth_rock), side.spikes / 3.0, side.toxic_spikes / 2.0,
            float(side.sticky_web),
            min(side.reflect, 5) / 5.0, min(side.light_screen, 5) / 5.0,
            min(side.aurora_veil, 5) / 5.0, min(side.tailwind, 4) / 4.0,
            float(side.tera_used),
        ]  # fmt: skip
        active = side.active_mon
        foe = other.active_mon
        values.append(active.hp_fraction)
        values.append(active.level / 100.0)
        values += [s / 400.0 for s in active.stats[1:]]
        values += [b / 6.0 for b in active.boosts]
        values += [float(active.status == s) for s in STATUSES]
        values.append(min(active.status_turns, 4) / 4.0 if active.status else 0.0)
        types = [0.0] * 18
        for t in active.current_types():
            if t in TYPE_INDEX:
                types[TYPE_INDEX[t]] = 1.0
        values += types
        can_tera = not side.tera_used and bool(active.tera_type) and not active.terastallized
        values += [float(active.terastallized), float(can_tera)]
        values += [
            float(bool(active.choice_lock)),
            float(active.protect_streak > 0),
            float(active.item in ("choiceband", "choicespecs", "choicescarf")),
        ]
        best, mean = self._attack(active, foe) if active.hp > 0 and foe.hp > 0 else (0.0, 0.0)
        values += [min(best, 2.0), min(mean, 2.0)]
        bench = [m for i, m in enumerate(mons) if i != side.active and m.hp > 0]
        values.append(len(bench) / 5.0)
        values.append(sum(m.hp_fraction for m in bench) / 5.0)
        bench_types = [0.0] * 18
        for m in bench:
            for t in m.types:
                if t in TYPE_INDEX:
                    bench_types[TYPE_INDEX[t]] += m.hp_fraction / 5.0
        values += bench_types
        bench_attack = 0.0
        bench_defence = 1.0 if not bench else 4.0
        if foe.hp > 0:
            foe_types = self._attack_types(foe)
            for m in bench:
                bench_attack = max(bench_attack, self._attack(m, foe)[0])
                if foe_types:
                    worst = max(self.dex.effectiveness(t, m.types) for t in foe_types)
                    bench_defence = min(bench_defence, worst)
        values.append(min(bench_attack, 2.0))
        values.append(min(bench_defence, 4.0) / 4.0)
        return values

    def _matchup(self, state: BattleState) -> list[float]:
        ours, theirs = state.sides[0].active_mon, state.sides[1].active_mon
        if ours.hp <= 0 or theirs.hp <= 0:
            speed = [0.5, 0.0, float(state.trick_room > 0)]
        else:
            s0 = max(1.0, self.model.speed(state, 0))
            s1 = max(1.0, self.model.speed(state, 1))
            faster = (s0 > s1) != (state.trick_room > 0)
            ratio = max(-1.0, min(1.0, math.log(s0 / s1) / 2.0))
            speed = [float(faster), ratio, float(state.trick_room > 0)]
        heuristic, duel = self.heuristic.value_and_duel(state)
        return [*speed, heuristic, duel]

    def _attack_types(self, mon: MonState) -> list[str]:
        types = []
        for move in mon.moves:
            entry = self.dex.moves.get(move)
            if entry and entry.get("category") != "Status" and entry.get("basePower", 0):
                types.append(entry["type"])
        return types

    def _attack(self, attacker: MonState, defender: MonState) -> tuple[float, float]:
        """(best, mean) type-weighted attack of ``attacker``'s moves on ``defender``."""
        attacker_types = attacker.current_types()
        defender_types = defender.current_types()
        powers = []
        for move in attacker.moves:
            key = (move, attacker_types, defender_types)
            cached = self._move_cache.get(key)
            if cached is None:
                cached = self._move_cache[key] = self._move_power(move, attacker, defender)
            power, category = cached
            if category == 0:
                continue
            if category == 1:
                ratio = _stat(attacker, 1) / max(1.0, _stat(defender, 2))
            else:
                ratio = _stat(attacker, 3) / max(1.0, _stat(defender, 4))
            powers.append(power * ratio / POWER_SCALE)
        if not powers:
            return 0.0, 0.0
        return max(powers), sum(powers) / len(powers)

    def _move_power(self, move: str, attacker: MonState, defender: MonState) -> tuple[float, int]:
        entry = self.dex.moves.get(move)
        if not entry or entry.get("category") == "Status":
            return 0.0, 0
        base = float(entry.get("basePower", 0) or 0)
        if base <= 1:
            base = 60.0  # variable-power moves (Low Kick, Gyro Ball, ...): a typical value
        move_type = entry.get("type", "???")
        effectiveness = self.dex.effectiveness(move_type, defender.current_types())
        stab = 1.5 if move_type in attacker.current_types() or move_type in attacker.types else 1.0
        accuracy = entry.get("accuracy", 100)
        accuracy = 1.0 if accuracy is True else float(accuracy) / 100.0
        category = 1 if entry.get("category") == "Physical" else 2
        return base * stab * effectiveness * accuracy, category


def _stat(mon: MonState, index: int) -> float:
    stage = mon.boosts[index - 1]
    factor = (2 + stage) / 2 if stage >= 0 else 2 / (2 - stage)
    return mon.stats[index] * factor
