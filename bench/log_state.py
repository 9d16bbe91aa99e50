"""What :mod:`bench.log_replay` tracks while it replays a battle log: each
Pokémon as the log shows it (:class:`Mon`), each side (:class:`SideState`), and the hits
it observes with their predictions (:class:`Hit`, collected in a :class:`Tally`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pokegym.world.damage import Combatant, Field
from pokegym.world.sets import PokemonSet

# Volatiles carried over by Baton Pass (the ones that matter for damage).
_PASSED = frozenset(("substitute", "focusenergy", "magnetrise", "gastroacid", "dragoncheer"))


@dataclass
class Mon:
    """One Pokémon as the log shows it."""

    name: str
    pokemon_set: PokemonSet
    species: str
    level: int
    gender: str
    stats: dict[str, int]
    types: tuple[str, ...]
    hp: int
    max_hp: int
    item: str
    ability: str
    tera_type: str
    boosts: dict[str, int] = field(default_factory=dict)
    status: str = ""
    terastallized: bool = False
    type_override: tuple[str, ...] | None = None
    volatiles: set[str] = field(default_factory=set)
    paradox: str = "none"
    ability_suppressed: bool = False
    transformed: bool = False
    switched_this_turn: bool = False
    acted_this_turn: bool = False
    lowered_this_turn: bool = False
    hurt_by: set[str] = field(default_factory=set)
    taken_this_turn: list[tuple[int, str]] = field(default_factory=list)
    move_result: bool | None = None  # this turn's move: worked / failed / none
    last_move_failed: bool = False  # Stomping Tantrum, Temper Flare
    times_attacked: int = 0
    fainted: bool = False
    # What switching out restores (Showdown's baseSpecies / baseAbility).
    base: tuple[str, dict[str, int], tuple[str, ...], str] | None = None

    def remember_base(self) -> None:
        self.base = (self.species, dict(self.stats), self.types, self.ability)

    def restore_base(self) -> None:
        if self.base is not None:
            species, stats, types, ability = self.base
            self.species, self.stats, self.types, self.ability = (
                species,
                dict(stats),
                types,
                ability,
            )
            self.stats["hp"] = self.max_hp

    def reset_volatile_state(self, passed: Mon | None = None) -> None:
        self.boosts = dict(passed.boosts) if passed else {}
        kept = passed.volatiles & _PASSED if passed else set()
        self.volatiles = set(kept)
        self.type_override = None
        self.ability_suppressed = "gastroacid" in kept
        self.transformed = False
        self.paradox = "none"
        self.move_result = None
        self.last_move_failed = False


@dataclass
class SideState:
    mons: dict[str, Mon]
    active: Mon | None = None
    conditions: set[str] = field(default_factory=set)
    fainted: int = 0
    baton_pass: bool = False


@dataclass
class Hit:
    """One observed hit and its prediction."""

    format_id: str
    turn: int
    move: str
    attacker: Combatant
    defender: Combatant
    field: Field
    target_moved: bool
    hit_number: int
    crit: bool
    hp_before: int
    hp_after: int
    censored: bool  # the HP lost is only a lower bound of the damage
    low: int = 0
    high: int = 0
    rolls: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def lost(self) -> int:
        return self.hp_before - self.hp_after

    @property
    def in_range(self) -> bool:
        if self.censored:
            return self.high >= self.lost
        return self.low <= self.lost <= self.high


@dataclass
class Tally:
    hits: list[Hit] = field(default_factory=list)
    excluded: Counter[str] = field(default_factory=Counter)
    not_observable: Counter[str] = field(default_factory=Counter)
    battles: int = 0
    formats: Counter[str] = field(default_factory=Counter)
    seconds_playing: float = 0.0
    seconds_predicting: float = 0.0
