"""One-step lookahead: the PokéChamp paper's admissible heuristic, from the world model.

For the two active Pokémon it gives, for every move of each, the expected damage
(rolls, critical hits and accuracy included), the number of turns to KO the other
at its current HP, and who moves first (priority, then speed with Choice Scarf,
paralysis, boosts, Tailwind, weather abilities and Trick Room) — under the four
Terastallization configurations (neither, only the opponent, only us, both). For
each Pokémon on the bench it gives how it would fare if it came in now (entry
hazards included): the opponent's fastest KO on it and its fastest KO on the
opponent. :meth:`Lookahead.text` renders a compact block for prompts using species
and move names only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pokegym.world.state import BattleState, MonState
from pokegym.world.transition import TransitionModel

CONFIGS = ((False, False), (False, True), (True, False), (True, True))
CONFIG_NAMES = {(False, False): "no tera", (False, True): "they tera",
                (True, False): "you tera", (True, True): "both tera"}  # fmt: skip


@dataclass(frozen=True)
class HitOutlook:
    """One move of an attacker against a defender."""

    move: str
    expected: float  # expected HP taken by one use (accuracy included)
    min_fraction: float  # of the defender's max HP, one use, no crit
    max_fraction: float
    accuracy: float
    priority: int
    turns_to_ko: float  # hits to KO from the defender's current HP (inf when no damage)

    @property
    def ohko_likely(self) -> bool:
        return self.turns_to_ko <= 1

    @property
    def expected_turns(self) -> float:
        """Turns to KO counting misses: hits needed divided by the chance to hit."""
        if math.isinf(self.turns_to_ko) or self.accuracy <= 0:
            return math.inf
        return self.turns_to_ko / self.accuracy


@dataclass
class Matchup:
    """Both actives' moves against each other under one Tera configuration."""

    we_tera: bool
    they_tera: bool
    ours: list[HitOutlook]
    theirs: list[HitOutlook]
    our_speed: float
    their_speed: float
    trick_room: bool

    def we_move_first(self, our_move: HitOutlook, their_move: HitOutlook | None = None) -> bool:
        their_priority = their_move.priority if their_move is not None else 0
        if our_move.priority != their_priority:
            return our_move.priority > their_priority
        if self.trick_room:
            return self.our_speed < self.their_speed
        return self.our_speed > self.their_speed

    def best_ours(self) -> HitOutlook | None:
        return _best(self.ours)

    def best_theirs(self) -> HitOutlook | None:
        return _best(self.theirs)


@dataclass(frozen=True)
class SwitchOutlook:
    index: int
    species: str
    hp_fraction: float  # after entry hazards
    their_turns_to_ko: float  # the opponent's fastest KO on it (after it came in)
    our_turns_to_ko: float  # its fastest KO on the opponent
    faster: bool


@dataclass
class Lookahead:
    our_active: str
    their_active: str
    our_hp: float
    their_hp: float
    matchups: dict[tuple[bool, bool], Matchup]
    switches: list[SwitchOutlook] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)

    def matchup(self, we_tera: bool = False, they_tera: bool = False) -> Matchup:
        return self.matchups[(we_tera, they_tera)]

    def best_move(self, we_tera: bool = False) -> HitOutlook | None:
        """Fewest expected turns to KO (misses counted; then more damage, then priority),
        with the opponent not terastallizing."""
        return self.matchups[(we_tera, False)].best_ours()

    def outmatched(self) -> bool:
        """The opponent KOs us first and faster than we KO it (no Tera either side)."""
        m = self.matchups[(False, False)]
        ours, theirs = m.best_ours(), m.best_theirs()
        if theirs is None or math.isinf(theirs.turns_to_ko):
            return False
        if ours is None or math.isinf(ours.turns_to_ko):
            return True
        if theirs.expected_turns < ours.expected_turns:
            return True
        return theirs.expected_turns == ours.expected_turns and not m.we_move_first(ours, theirs)

    def best_switch(self) -> SwitchOutlook | None:
        """The bench Pokémon that survives longest and threatens most (None if none)."""
        if not self.switches:
            return None
        return max(
            self.switches,
            key=lambda s: (min(s.their_turns_to_ko, 9) - min(s.our_turns_to_ko, 9), s.hp_fraction),
        )

    def text(self) -> str:
        """A compact block for prompts (species and move names only)."""
        name = self.names.get
        m = self.matchups[(False, False)]
        first = "faster" if (m.our_speed > m.their_speed) != m.trick_room else "slower"
        lines = [
            f"Your {name(self.our_active, self.our_active)} ({self.our_hp:.0%} HP) vs "
            f"their {name(self.their_active, self.their_active)} ({self.their_hp:.0%} HP); "
            f"you are {first}" + (" (Trick Room)" if m.trick_room else "") + ".",
            "Your moves: damage to them | turns to KO (no tera / they tera / you tera / both):",
        ]
        for i, hit in enumerate(m.ours):
            ttk = " / ".join(_ttk(self.matchups[c].ours[i]) for c in CONFIGS)
            lines.append(
                f"  {name(hit.move, hit.move)}: {hit.min_fraction:.0%}-{hit.max_fraction:.0%}"
                f" | {ttk}"
            )
        lines.append("Their likely moves: damage to you | turns to KO (same order):")
        for i, hit in enumerate(m.theirs):
            ttk = " / ".join(_ttk(self.matchups[c].theirs[i]) for c in CONFIGS)
            lines.append(
                f"  {name(hit.move, hit.move)}: {hit.min_fraction:.0%}-{hit.max_fraction:.0%}"
                f" | {ttk}"
            )
        if self.switches:
            lines.append("Switches (HP after hazards, their KO on it, its KO on them):")
            for s in self.switches:
                lines.append(
                    f"  {name(s.species, s.species)} {s.hp_fraction:.0%}: "
                    f"{_turns(s.their_turns_to_ko)} / {_turns(s.our_turns_to_ko)}"
                )
        return "\n".join(lines)


def _turns(value: float) -> str:
    return "never" if math.isinf(value) else f"{int(value)} turn" + ("s" if value != 1 else "")


def _ttk(hit: HitOutlook) -> str:
    return "-" if math.isinf(hit.turns_to_ko) else str(int(hit.turns_to_ko))


def _best(hits: list[HitOutlook]) -> HitOutlook | None:
    if not hits:
        return None
    return min(hits, key=lambda h: (h.expected_turns, -h.expected, -h.priority))


def _outlook(model: TransitionModel, state: BattleState, side: int, move: str) -> HitOutlook:
    dex = model.dex
    entry = dex.moves.get(move, {})
    attacker = state.sides[side].active_mon
    defender = state.sides[1 - side].active_mon
    priority = model.priority(state, side, move)
    if entry.get("category", "Status") == "Status":
        return HitOutlook(move, 0.0, 0.0, 0.0, 1.0, priority, math.inf)
    accuracy = model.accuracy(state, attacker, defender, entry)
    result = model.damage(state, side, move)
    if result is None or result.max <= 0:
        return HitOutlook(move, 0.0, 0.0, 0.0, accuracy, priority, math.inf)
    on_hit = result.expected
    max_hp = defender.max_hp or 1
    turns = math.ceil(defender.hp / on_hit) if on_hit > 0 and defender.hp > 0 else math.inf
    return HitOutlook(
        move, on_hit * accuracy, result.min / max_hp, result.max / max_hp, accuracy, priority, turns
    )


def _with_tera(state: BattleState, we_tera: bool, they_tera: bool) -> BattleState:
    s = state.copy()
    for side, wanted in ((0, we_tera), (1, they_tera)):
        team = s.sides[side]
        mon = team.active_mon
        if wanted and not mon.terastallized and mon.tera_type and not team.tera_used and s.gen == 9:
            mon.terastallized = True
    return s


def one_step_lookahead(
    model: TransitionModel, state: BattleState, names: dict[str, str] | None = None
) -> Lookahead:
    """The lookahead for side 0 of ``state`` (see the module docstring)."""
    ours_active = state.sides[0].active_mon
    theirs_active = state.sides[1].active_mon
    our_moves = ours_active.moves or ("struggle",)
    their_moves = theirs_active.moves or ("struggle",)
    matchups: dict[tuple[bool, bool], Matchup] = {}
    for we_tera, they_tera in CONFIGS:
        s = _with_tera(state, we_tera, they_tera)
        matchups[(we_tera, they_tera)] = Matchup(
            we_tera=we_tera,
            they_tera=they_tera,
            ours=[_outlook(model, s, 0, move) for move in our_moves],
            theirs=[_outlook(model, s, 1, move) for move in their_moves],
            our_speed=model.speed(s, 0),
            their_speed=model.speed(s, 1),
            trick_room=s.trick_room > 0,
        )
    switches = []
    team = state.sides[0]
    for i, mon in enumerate(team.mons):
        if i == team.active or mon.hp <= 0:
            continue
        s = state.copy()
        model.switch_in(s, 0, i)
        arrived = s.sides[0].active_mon
        their = _best([_outlook(model, s, 1, move) for move in their_moves])
        ours = _best([_outlook(model, s, 0, move) for move in (arrived.moves or ("struggle",))])
        switches.append(
            SwitchOutlook(
                index=i,
                species=arrived.species,
                hp_fraction=arrived.hp_fraction,
                their_turns_to_ko=their.turns_to_ko if their else math.inf,
                our_turns_to_ko=ours.turns_to_ko if ours else math.inf,
                faster=model.faster(s, 0),
            )
        )
    return Lookahead(
        our_active=ours_active.species,
        their_active=theirs_active.species,
        our_hp=ours_active.hp_fraction,
        their_hp=theirs_active.hp_fraction,
        matchups=matchups,
        switches=switches,
        names=names or display_names(model, state),
    )


def display_names(model: TransitionModel, state: BattleState) -> dict[str, str]:
    """Showdown display names of the species and moves in ``state``."""
    dex = model.dex
    names: dict[str, str] = {}
    for side in state.sides:
        for mon in side.mons:
            entry = dex.species.get(mon.species)
            if entry:
                names[mon.species] = entry["name"]
            for move in mon.moves:
                move_entry = dex.moves.get(move)
                if move_entry:
                    names[move] = move_entry["name"]
    return names


__all__ = ["HitOutlook", "Lookahead", "Matchup", "MonState", "SwitchOutlook", "one_step_lookahead"]


#: How many numbers :func:`lookahead_features` gives.
LOOKAHEAD_FEATURES = 10


def lookahead_features(model: TransitionModel, state: BattleState) -> np.ndarray:
    """The one-step lookahead of ``state`` as :data:`LOOKAHEAD_FEATURES` numbers (a
    collection's ``lookahead`` column): our best move's and theirs' expected turns to KO
    (/ 9, capped), whether we move first, outmatched, the best switch's margin, what
    Tera gains, the switches available (/ 5), both HP fractions, and whether a switch
    exists."""
    look = one_step_lookahead(model, state, names={})
    ours, theirs = look.best_move(False), look.matchup(False, False).best_theirs()
    ours_t = min(ours.expected_turns, 9) / 9 if ours else 1.0
    theirs_t = min(theirs.expected_turns, 9) / 9 if theirs else 1.0
    first = float(look.matchup().we_move_first(ours, theirs)) if ours else 0.5
    tera = look.best_move(True)
    tera_gain = 0.0
    if ours and tera and not math.isinf(tera.expected_turns):
        tera_gain = max(0.0, min(ours.expected_turns, 9) - min(tera.expected_turns, 9)) / 9
    switch = look.best_switch()
    margin = 0.0
    if switch is not None:
        margin = (min(switch.their_turns_to_ko, 9) - min(switch.our_turns_to_ko, 9)) / 9
    return np.asarray([ours_t, theirs_t, first, float(look.outmatched()), margin, tera_gain,
                       len(look.switches) / 5, look.our_hp, look.their_hp,
                       float(switch is not None)], dtype=np.float32)  # fmt: skip
