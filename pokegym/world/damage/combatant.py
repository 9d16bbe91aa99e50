"""What the damage calculator reads and answers: :class:`Combatant` (one Pokémon as it
stands), :class:`Side` and :class:`Field` (the conditions), :class:`DamageResult`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pokegym.world.damage.moves import known_species
from pokegym.world.damage.tables import _COMPILED, _ICE_FACE_FORMS, BOOSTS
from pokegym.world.data import STATS, Dex
from pokegym.world.sets import PokemonSet


# ------------------------------------------------------------------ data types
# Combatant, Side and Field write their own ``__init__`` (``init=False``): the compiled
# build (pokegym.world._accel) then constructs them natively instead of through the
# interpreted one that ``dataclass`` generates.
@dataclass(init=False)
class Combatant:
    """One Pokémon as the calculator sees it.

    ``types`` are the current types; with ``terastallized`` and a ``tera_type`` (not
    Stellar) the defensive type is the Tera type whatever ``types`` says, and the
    pre-Tera types (for STAB) are ``original_types`` or the species' types.
    ``weight`` is in kg (None: the species' weight). ``paradox_stat`` is the stat that an
    active Protosynthesis/Quark Drive boosts ("atk"..."spe"); "" works it out from the
    field (sun / Electric Terrain / Booster Energy) and current stats; "none" means the
    ability is not active. ``volatiles`` holds Showdown volatile ids that change damage:
    flashfire, charge, focusenergy, dragoncheer, slowstart, smackdown, magnetrise,
    substitute, gastroacid, glaiverush, roost (the caller removes Flying from ``types``),
    dynamax (gen 8: its damaging moves become Max Moves; pass the move it chose), protect
    (on the defender: protected this turn; a Max Move or Unseen Fist hits it for a quarter),
    meteorbeam / electroshot (on the attacker: the charging turn is over and its +1 Special
    Attack is already in ``boosts``; without it the calculator adds that boost itself).

    ``protean_used``: Protean / Libero has already changed this Pokémon's type since it
    switched in (from generation 9 it does so once per switch-in). ``broken_form_stats``:
    an Eiscue's stats in its Noice form, used when Ice Face breaks (:meth:`from_set` fills
    them; without them they are estimated and the result is flagged approximate).
    """

    species: str
    level: int
    types: tuple[str, ...]
    stats: dict[str, int]
    hp: int | None = None
    boosts: dict[str, int] = field(default_factory=dict)
    ability: str = ""
    item: str = ""
    status: str = ""
    tera_type: str = ""
    terastallized: bool = False
    weight: float | None = None
    gender: str = ""
    original_types: tuple[str, ...] | None = None
    paradox_stat: str = ""
    volatiles: frozenset[str] = frozenset()
    ability_suppressed: bool = False
    just_switched_in: bool = False  # Stakeout doubles against it; Payback/Bolt Beak
    times_attacked: int = 0  # Rage Fist
    fainted_allies: int = 0  # Last Respects, Supreme Overlord
    stellar_boosted: tuple[str, ...] = ()  # types a Stellar Tera has already boosted
    last_move_failed: bool = False  # Stomping Tantrum, Temper Flare
    hurt_by_target: bool = False  # Avalanche, Revenge: hit by the target this turn
    stats_lowered_this_turn: bool = False  # Lash Out
    # HP lost to the foe's moves this turn, in order, with the move's category
    # ("Physical"/"Special"): Counter, Mirror Coat, Metal Burst, Comeuppance.
    damage_taken_this_turn: tuple[tuple[int, str], ...] = ()
    protean_used: bool = False
    broken_form_stats: dict[str, int] | None = None

    def __init__(
        self,
        species: str,
        level: int,
        types: tuple[str, ...],
        stats: dict[str, int],
        hp: int | None = None,
        boosts: dict[str, int] | None = None,
        ability: str = "",
        item: str = "",
        status: str = "",
        tera_type: str = "",
        terastallized: bool = False,
        weight: float | None = None,
        gender: str = "",
        original_types: tuple[str, ...] | None = None,
        paradox_stat: str = "",
        volatiles: frozenset[str] = frozenset(),
        ability_suppressed: bool = False,
        just_switched_in: bool = False,
        times_attacked: int = 0,
        fainted_allies: int = 0,
        stellar_boosted: tuple[str, ...] = (),
        last_move_failed: bool = False,
        hurt_by_target: bool = False,
        stats_lowered_this_turn: bool = False,
        damage_taken_this_turn: tuple[tuple[int, str], ...] = (),
        protean_used: bool = False,
        broken_form_stats: dict[str, int] | None = None,
    ) -> None:
        self.species = species
        self.level = level
        self.types = types
        self.stats = stats
        self.hp = hp
        self.boosts = {} if boosts is None else boosts
        self.ability = ability
        self.item = item
        self.status = status
        self.tera_type = tera_type
        self.terastallized = terastallized
        self.weight = weight
        self.gender = gender
        self.original_types = original_types
        self.paradox_stat = paradox_stat
        self.volatiles = volatiles
        self.ability_suppressed = ability_suppressed
        self.just_switched_in = just_switched_in
        self.times_attacked = times_attacked
        self.fainted_allies = fainted_allies
        self.stellar_boosted = stellar_boosted
        self.last_move_failed = last_move_failed
        self.hurt_by_target = hurt_by_target
        self.stats_lowered_this_turn = stats_lowered_this_turn
        self.damage_taken_this_turn = damage_taken_this_turn
        self.protean_used = protean_used
        self.broken_form_stats = broken_form_stats

    @classmethod
    def from_set(cls, dex: Dex, pokemon_set: PokemonSet, **state: Any) -> Combatant:
        """A Combatant for ``pokemon_set`` (stats computed); ``state`` overrides fields.

        Cosmetic formes Showdown's data does not list (Florges-Orange, Vivillon-...) are
        read as their base species."""
        species = known_species(dex, pokemon_set.species)
        if species != pokemon_set.species:
            pokemon_set = dataclasses.replace(pokemon_set, species=species)
        entry = dex.species_entry(species)
        values: dict[str, Any] = {
            "species": species,
            "level": pokemon_set.level,
            "types": tuple(entry["types"]),
            "stats": pokemon_set.stats(dex),
            "ability": pokemon_set.ability,
            "item": pokemon_set.item,
            "tera_type": pokemon_set.tera_type,
            "weight": float(entry.get("weightkg", 0.0)) or None,
            "gender": pokemon_set.gender,
        }
        if species in _ICE_FACE_FORMS:
            noice = dataclasses.replace(pokemon_set, species=_ICE_FACE_FORMS[species])
            values["broken_form_stats"] = noice.stats(dex)
        values.update(state)
        return cls(**values)

    @property
    def max_hp(self) -> int:
        return int(self.stats["hp"])

    @property
    def current_hp(self) -> int:
        return self.max_hp if self.hp is None else int(self.hp)

    def _key(self) -> tuple[Any, ...]:
        stats, boosts, broken = self.stats, self.boosts, self.broken_form_stats
        # map(dict.get): a missing entry reads None (only a cache miss, never a wrong hit)
        return (
            self.species, self.level, self.types, tuple(map(stats.get, STATS)), self.hp,
            tuple(map(boosts.get, BOOSTS)) if boosts else None,
            self.ability, self.item, self.status, self.tera_type, self.terastallized,
            self.weight, self.gender, self.original_types, self.paradox_stat, self.volatiles,
            self.ability_suppressed, self.just_switched_in, self.times_attacked,
            self.fainted_allies, self.stellar_boosted, self.last_move_failed,
            self.hurt_by_target, self.stats_lowered_this_turn, self.damage_taken_this_turn,
            self.protean_used, tuple(map(broken.get, STATS)) if broken else None,
        )  # fmt: skip


@dataclass(init=False)
class Side:
    """Side conditions that change damage (on the side of the Pokémon they protect)."""

    reflect: bool = False
    light_screen: bool = False
    aurora_veil: bool = False
    tailwind: bool = False  # speed only (the order of effects)

    def __init__(
        self,
        reflect: bool = False,
        light_screen: bool = False,
        aurora_veil: bool = False,
        tailwind: bool = False,
    ) -> None:
        self.reflect = reflect
        self.light_screen = light_screen
        self.aurora_veil = aurora_veil
        self.tailwind = tailwind

    def _key(self) -> tuple[bool, ...]:
        return (self.reflect, self.light_screen, self.aurora_veil, self.tailwind)


@dataclass(init=False)
class Field:
    """Field state: weather and terrain ids as Showdown spells them ("sunnyday",
    "raindance", "sandstorm", "snowscape", "hail", "desolateland", "primordialsea",
    "deltastream"; "electricterrain", "grassyterrain", "mistyterrain", "psychicterrain")."""

    weather: str = ""
    terrain: str = ""
    gravity: bool = False
    attacker_side: Side = field(default_factory=Side)
    defender_side: Side = field(default_factory=Side)
    trick_room: bool = False
    magic_room: bool = False
    wonder_room: bool = False

    def __init__(
        self,
        weather: str = "",
        terrain: str = "",
        gravity: bool = False,
        attacker_side: Side | None = None,
        defender_side: Side | None = None,
        trick_room: bool = False,
        magic_room: bool = False,
        wonder_room: bool = False,
    ) -> None:
        self.weather = weather
        self.terrain = terrain
        self.gravity = gravity
        self.attacker_side = Side() if attacker_side is None else attacker_side
        self.defender_side = Side() if defender_side is None else defender_side
        self.trick_room = trick_room
        self.magic_room = magic_room
        self.wonder_room = wonder_room

    def _key(self) -> tuple[Any, ...]:
        return (
            self.weather, self.terrain, self.gravity, self.attacker_side._key(),
            self.defender_side._key(), self.trick_room, self.magic_room, self.wonder_room,
        )  # fmt: skip


@dataclass(frozen=True, init=False)
class DamageResult:
    """Damage of one use of a move.

    ``rolls``/``crit_rolls``: the 16 damages (rolls 85..100 %) of the first hit, without
    and with a critical hit (equal when the hit cannot crit; all 0 when the move does no
    damage). ``hit_rolls``/``hit_crit_rolls`` hold them for every hit of a multi-hit move
    (they differ when a hit's power or the target's state changes: Triple Axel, a resist
    berry or Multiscale used up by the first hit).

    ``hits``: (typical number of hits, expected number of hits), e.g. (3, 3.1) for a 2-5
    hit move; ``hit_distribution`` the probabilities of each count (for moves that roll
    accuracy per hit, such as Triple Axel, given that the first hit lands).

    ``min``/``max``: the smallest and largest total over rolls and hit counts, without
    crits (with ``crit=True``: with crits). ``expected``: mean total over rolls, crits and
    hit counts (not accuracy). ``effectiveness``: the type multiplier (0 when the move
    fails on the target). ``approximate``: an effect that is not modelled was involved
    (``notes`` says which).

    A move that always lands a critical hit (Frost Breath, Wicked Blow, Surging
    Strikes...) has ``rolls == crit_rolls`` and ``crit_chance`` 1 whatever ``crit`` asks,
    unless the target's ability prevents critical hits.

    ``broken_form``: set when the defender's Disguise or Ice Face is intact and takes this
    hit. The first hit then deals 0 (its ``rolls`` are 0), the form breaks, and a Mimikyu
    loses 1/8 of its max HP (``form_break_hp``, counted in ``min``/``max``/``expected``
    and :meth:`ko_chance`); later hits of a multi-hit move strike the broken form.
    ``broken_form`` is the same move against the broken form (Mimikyu-Busted at its HP
    after the break, Eiscue-Noice): what the next use deals.
    """

    rolls: tuple[int, ...]
    crit_rolls: tuple[int, ...]
    hits: tuple[int, float]
    min: int
    max: int
    expected: float
    effectiveness: float
    approximate: bool
    crit_chance: float = 0.0
    hit_distribution: tuple[tuple[int, float], ...] = ((1, 1.0),)
    hit_rolls: tuple[tuple[int, ...], ...] = ()
    hit_crit_rolls: tuple[tuple[int, ...], ...] = ()
    move_type: str = ""
    category: str = ""
    notes: tuple[str, ...] = ()
    blocks_ohko_at: int = 0  # the defender's max HP when Sturdy / Focus Sash would hold
    form_break_hp: int = 0
    broken_form: DamageResult | None = None

    def __init__(
        self,
        rolls: tuple[int, ...],
        crit_rolls: tuple[int, ...],
        hits: tuple[int, float],
        min: int,
        max: int,
        expected: float,
        effectiveness: float,
        approximate: bool,
        crit_chance: float = 0.0,
        hit_distribution: tuple[tuple[int, float], ...] = ((1, 1.0),),
        hit_rolls: tuple[tuple[int, ...], ...] = (),
        hit_crit_rolls: tuple[tuple[int, ...], ...] = (),
        move_type: str = "",
        category: str = "",
        notes: tuple[str, ...] = (),
        blocks_ohko_at: int = 0,
        form_break_hp: int = 0,
        broken_form: DamageResult | None = None,
    ) -> None:
        if _COMPILED:
            # The compiled build stores the fields natively (the frozen __setattr__ that
            # dataclass adds guards them from everything outside this __init__).
            self.rolls = rolls  # type: ignore[misc]
            self.crit_rolls = crit_rolls  # type: ignore[misc]
            self.hits = hits  # type: ignore[misc]
            self.min = min  # type: ignore[misc]
            self.max = max  # type: ignore[misc]
            self.expected = expected  # type: ignore[misc]
            self.effectiveness = effectiveness  # type: ignore[misc]
            self.approximate = approximate  # type: ignore[misc]
            self.crit_chance = crit_chance  # type: ignore[misc]
            self.hit_distribution = hit_distribution  # type: ignore[misc]
            self.hit_rolls = hit_rolls  # type: ignore[misc]
            self.hit_crit_rolls = hit_crit_rolls  # type: ignore[misc]
            self.move_type = move_type  # type: ignore[misc]
            self.category = category  # type: ignore[misc]
            self.notes = notes  # type: ignore[misc]
            self.blocks_ohko_at = blocks_ohko_at  # type: ignore[misc]
            self.form_break_hp = form_break_hp  # type: ignore[misc]
            self.broken_form = broken_form  # type: ignore[misc]
            return
        # Interpreted: through object.__setattr__, as dataclass's own frozen __init__ does.
        set_field = object.__setattr__
        set_field(self, "rolls", rolls)
        set_field(self, "crit_rolls", crit_rolls)
        set_field(self, "hits", hits)
        set_field(self, "min", min)
        set_field(self, "max", max)
        set_field(self, "expected", expected)
        set_field(self, "effectiveness", effectiveness)
        set_field(self, "approximate", approximate)
        set_field(self, "crit_chance", crit_chance)
        set_field(self, "hit_distribution", hit_distribution)
        set_field(self, "hit_rolls", hit_rolls)
        set_field(self, "hit_crit_rolls", hit_crit_rolls)
        set_field(self, "move_type", move_type)
        set_field(self, "category", category)
        set_field(self, "notes", notes)
        set_field(self, "blocks_ohko_at", blocks_ohko_at)
        set_field(self, "form_break_hp", form_break_hp)
        set_field(self, "broken_form", broken_form)

    @property
    def immune(self) -> bool:
        return self.effectiveness == 0.0 and self.max == 0

    def ko_chance(self, hp: int) -> float:
        """Probability that one use knocks out a target with ``hp`` HP (crits included)."""
        if hp <= 0:
            return 1.0
        if self.max <= 0 and not any(self.crit_rolls):
            return 0.0
        dist = self.hit_distribution
        single = len(dist) == 1 and dist[0][0] == 1
        if single and self.blocks_ohko_at and hp >= self.blocks_ohko_at:
            return 0.0
        per_hit = self.hit_rolls or (self.rolls,)
        per_crit = self.hit_crit_rolls or (self.crit_rolls,)
        crit = self.crit_chance
        total = 0.0
        start = min(hp, self.form_break_hp)
        for count, weight in dist:
            # Distribution of the running total, with everything >= hp merged into hp.
            sums: dict[int, float] = {start: 1.0}
            for index in range(count):
                rolls = per_hit[min(index, len(per_hit) - 1)]
                crits = per_crit[min(index, len(per_crit) - 1)]
                outcomes: dict[int, float] = {}
                for value in rolls:
                    outcomes[value] = outcomes.get(value, 0.0) + (1.0 - crit) / 16
                if crit > 0:
                    for value in crits:
                        outcomes[value] = outcomes.get(value, 0.0) + crit / 16
                nxt: dict[int, float] = {}
                for s, p in sums.items():
                    if s >= hp:
                        nxt[hp] = nxt.get(hp, 0.0) + p
                        continue
                    for value, q in outcomes.items():
                        t = min(hp, s + value)
                        nxt[t] = nxt.get(t, 0.0) + p * q
                sums = nxt
            total += weight * sums.get(hp, 0.0)
        return min(1.0, total)
