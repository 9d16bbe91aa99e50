"""The damage calculator: Showdown's damage formula for generations 8 and 9.

Every step follows Showdown 0.11.11's ``battle-actions.js`` (``getDamage`` and
``modifyDamage``) and the effect code in ``data/{items,abilities,moves,conditions}.js``,
with the same integer arithmetic:

* base damage ``floor(floor(floor(2 * level / 5 + 2) * power * attack / defense) / 50)``;
* ``+ 2``, weather (``WeatherModifyDamage``), critical hit ``floor(x * 1.5)``, the random
  roll ``floor(x * (85..100) / 100)``, STAB (Tera rules, Adaptability), type effectiveness
  (``x * 2`` per weakness, ``floor(x / 2)`` per resistance), burn, then the
  ``ModifyDamage`` event (Life Orb, Expert Belt, screens, Multiscale, resist berries...);
* every event (``BasePower``, ``ModifyAtk``/``SpA``/``Def``/``SpD``, ``ModifyDamage``)
  collects its handlers, orders them as Showdown does (priority, then the holder's speed,
  then effect kind), chains them with ``chainModify``'s 4096-based rounding
  (``(a * b + 2048) >> 12``) and applies the result with ``modify``
  (``(value * m + 2047) >> 12``).

Anything this module does not model (an ability, item or move effect that changes damage
in Showdown but has no implementation here) never raises: the plain formula is used and
the result is flagged :attr:`DamageResult.approximate`, with the reasons in
:attr:`DamageResult.notes`. Which effects matter is read from Showdown's data (each entry
lists its callbacks), so a new damage-relevant effect is flagged rather than ignored.

Before the formula come the move's own rules, in the order of Showdown's
``trySpreadMoveHit``: moves that fail (Steel Roller without a terrain, Dream Eater on a
target that is awake, Fling without an item it can throw, OHKO moves on a higher level,
a Dynamaxed target, Sturdy or — Sheer Cold — an Ice type), power set before the hit
(Fling), the user's type change (Protean, Libero), the +1 Special Attack of a charging
turn (Meteor Beam, Electro Shot), critical hits that always happen (Frost Breath...), a
Disguise or Ice Face that takes the first hit and breaks (the result reports the broken
form too), and Defense that changes between the hits of a multi-hit move (Weak Armor,
Stamina, Water Compaction).

Still flagged approximate, because the state they need is not in a :class:`Combatant`
or Showdown decides them at random:

* moves whose power or damage depends on the battle's history or on chance: Assurance,
  Beat Up, Echoed Voice, Fury Cutter, Ice Ball, Magnitude, Natural Gift, Present,
  Psywave, Punishment, Pursuit, Retaliate, Fickle Beam, Shell Trap, Spit Up, Trump Card,
  Techno Blast, Synchronoise, Thousand Arrows / Waves, Sky Drop, Razor Wind, Skull Bash,
  Smelling Salts, Wake-Up Slap, Secret Power, Core Enforcer, Flame Burst, Return /
  Frustration (most are not in generation 9); Shell Side Arm when both categories tie;
* the move order when ``target_moved`` is None (Analytic, Payback, Bolt Beak);
* Stance Change (Aegislash's forme before the hit), Tera Shell, Stellar Tera Blast and
  Tera Starstorm, Max Moves whose type or power a callback sets, anti-Dynamax moves on a
  Dynamaxed target, statuses other than brn/par/psn/tox/slp/frz;
* abilities and items whose damage callbacks have no implementation here (read from
  Showdown's data), and effects that change a multi-hit move between its hits other than
  the three above (Seed Sower and Sand Spit change the field, Mummy, Lingering Aroma and
  Wandering Spirit the attacker's ability);
* an Eiscue's Noice-form stats when ``broken_form_stats`` is not given (estimated with a
  neutral nature).

Results are cached per (attacker, defender, move, field) state; the world model calls
:func:`calculate` thousands of times per decision.
"""

from __future__ import annotations

import dataclasses
import math
import types
from dataclasses import dataclass, field
from typing import Any, Final

from pokegym.world.data import STATS, Dex, to_id
from pokegym.world.sets import PokemonSet
from pokegym.world.speed import action_speed, effective_speed

BOOSTS: Final = ("atk", "def", "spa", "spd", "spe", "accuracy", "evasion")
_BOOST_NUM: Final = (2, 3, 4, 5, 6, 7, 8)  # stage multipliers as n / 2

# Hit counts of the 2-5 multi-hit moves (gen 5+): 35 % 2, 35 % 3, 15 % 4, 15 % 5.
_TWO_TO_FIVE: Final = ((2, 0.35), (3, 0.35), (4, 0.15), (5, 0.15))
_TWO_TO_FIVE_LOADED: Final = ((4, 0.5), (5, 0.5))
_CRIT_CHANCE: Final = (0.0, 1 / 24, 1 / 8, 1 / 2, 1.0)

# ---------------------------------------------------------------- effect tables
# Showdown's subOrder of handler kinds (resolvePriority): conditions, side conditions,
# field (weather), abilities, items; the move's own handlers and terrains come first.
_SUB_MOVE: Final = 0
_SUB_VOLATILE: Final = 2
_SUB_SIDE: Final = 4
_SUB_WEATHER: Final = 5
_SUB_ABILITY: Final = 7
_SUB_ITEM: Final = 8
_SUB_TERRAIN: Final = 0

# Type-boosting held items (x4915/4096 on moves of that type).
_TYPE_ITEMS: Final = {
    "blackbelt": "Fighting", "blackglasses": "Dark", "charcoal": "Fire", "dragonfang": "Dragon",
    "fairyfeather": "Fairy", "hardstone": "Rock", "magnet": "Electric", "metalcoat": "Steel",
    "miracleseed": "Grass", "mysticwater": "Water", "nevermeltice": "Ice", "poisonbarb": "Poison",
    "sharpbeak": "Flying", "silkscarf": "Normal", "silverpowder": "Bug", "softsand": "Ground",
    "spelltag": "Ghost", "twistedspoon": "Psychic", "dracoplate": "Dragon", "dreadplate": "Dark",
    "earthplate": "Ground", "fistplate": "Fighting", "flameplate": "Fire", "icicleplate": "Ice",
    "insectplate": "Bug", "ironplate": "Steel", "meadowplate": "Grass", "mindplate": "Psychic",
    "pixieplate": "Fairy", "skyplate": "Flying", "splashplate": "Water", "spookyplate": "Ghost",
    "stoneplate": "Rock", "toxicplate": "Poison", "zapplate": "Electric", "oddincense": "Psychic",
    "rockincense": "Rock", "roseincense": "Grass", "seaincense": "Water", "waveincense": "Water",
}  # fmt: skip
# Legendary orbs: (species num, boosted types).
_ORB_ITEMS: Final = {
    "adamantorb": (483, ("Steel", "Dragon")), "adamantcrystal": (483, ("Steel", "Dragon")),
    "lustrousorb": (484, ("Water", "Dragon")), "lustrousglobe": (484, ("Water", "Dragon")),
    "griseousorb": (487, ("Ghost", "Dragon")), "griseouscore": (487, ("Ghost", "Dragon")),
    "souldew": (380, ("Psychic", "Dragon")),
}  # fmt: skip
_MASKS: Final = {
    "wellspringmask": "Ogerpon-Wellspring", "hearthflamemask": "Ogerpon-Hearthflame",
    "cornerstonemask": "Ogerpon-Cornerstone",
}  # fmt: skip
_RESIST_BERRIES: Final = {
    "babiriberry": "Steel", "chartiberry": "Rock", "chilanberry": "Normal",
    "chopleberry": "Fighting", "cobaberry": "Flying", "colburberry": "Dark",
    "habanberry": "Dragon", "kasibberry": "Ghost",
    "kebiaberry": "Poison", "occaberry": "Fire", "passhoberry": "Water", "payapaberry": "Psychic",
    "rindoberry": "Grass", "roseliberry": "Fairy", "shucaberry": "Ground", "tangaberry": "Bug",
    "wacanberry": "Electric", "yacheberry": "Ice",
}  # fmt: skip
# Items whose holder's species keeps them (Knock Off gets no boost): item -> species nums.
_STUCK_ITEMS: Final = {"rustedsword": (888,), "rustedshield": (889,), "griseouscore": (487,),
                "adamantcrystal": (483,), "lustrousglobe": (484,)}  # fmt: skip

# Abilities that make a move of a type fail on the holder (TryHit), by type.
_ABSORB: Final = {
    "waterabsorb": "Water", "stormdrain": "Water", "dryskin": "Water", "voltabsorb": "Electric",
    "lightningrod": "Electric", "motordrive": "Electric", "flashfire": "Fire",
    "wellbakedbody": "Fire", "sapsipper": "Grass", "eartheater": "Ground",
}  # fmt: skip
_ATE: Final = {"aerilate": "Flying", "pixilate": "Fairy", "refrigerate": "Ice",
               "galvanize": "Electric"}  # fmt: skip
_NO_ATE: Final = frozenset(("judgment", "multiattack", "naturalgift", "revelationdance",
                            "technoblast", "terrainpulse", "weatherball"))  # fmt: skip
_NO_NORMALIZE: Final = _NO_ATE | {"hiddenpower", "struggle"}
_PINCH: Final = {"blaze": "Fire", "overgrow": "Grass", "torrent": "Water", "swarm": "Bug"}
_TYPE_ATK_ABILITIES: Final = {  # (type, 4096-based multiplier) on Atk and SpA
    "steelworker": ("Steel", 6144), "dragonsmaw": ("Dragon", 6144), "rockypayload": ("Rock", 6144),
}  # fmt: skip
_MOLD_BREAKERS: Final = frozenset(("moldbreaker", "teravolt", "turboblaze"))
_ANTI_DYNAMAX: Final = frozenset(("behemothblade", "behemothbash", "dynamaxcannon"))
_WEIGHT_MOVES: Final = frozenset(("lowkick", "grassknot", "heatcrash", "heavyslam"))
_TERRAIN_TYPES: Final = {"electricterrain": "Electric", "grassyterrain": "Grass",
                  "mistyterrain": "Fairy", "psychicterrain": "Psychic"}  # fmt: skip
_SCREEN_BREAKERS: Final = frozenset(("brickbreak", "psychicfangs", "ragingbull"))
# Forms that take the first hit and break: intact species -> broken species.
_DISGUISE_FORMS: Final = {"mimikyu": "mimikyubusted", "mimikyutotem": "mimikyubustedtotem"}
_ICE_FACE_FORMS: Final = {"eiscue": "eiscuenoice"}
# Charging moves that raise the user's Special Attack by 1 on their first turn.
_CHARGE_SPA: Final = frozenset(("meteorbeam", "electroshot"))
# Moves that deal half the target's current HP.
_HALVING_MOVES: Final = frozenset(("superfang", "ruination", "naturesmadness"))
# Defender effects that change a multi-hit move between its hits and are not modelled.
# (Anger Shell, Kee Berry and Maranga Berry act only after the whole move.)
_BETWEEN_HITS: Final = frozenset(
    ("seedsower", "sandspit", "mummy", "lingeringaroma", "wanderingspirit")
)

# Effects (abilities and items) whose damage-relevant callbacks this module implements,
# and ones whose callbacks do not change the damage of a hit.
_HANDLED_ABILITIES: Final = frozenset((
    "adaptability", "aerilate", "pixilate", "refrigerate", "galvanize", "normalize",
    "liquidvoice", "analytic", "blaze", "overgrow", "torrent", "swarm", "bulletproof",
    "darkaura", "fairyaura", "aurabreak", "defeatist", "dragonsmaw", "dryskin", "eartheater",
    "filter", "solidrock", "prismarmor", "flareboost", "toxicboost", "flashfire", "fluffy",
    "furcoat", "gorillatactics", "grasspelt", "guts", "hadronengine", "orichalcumpulse",
    "heatproof", "heavymetal", "lightmetal", "hugepower", "purepower", "hustle", "icescales",
    "infiltrator", "ironfist", "lightningrod", "longreach", "marvelscale", "megalauncher",
    "merciless", "mindseye", "scrappy", "moldbreaker", "teravolt", "turboblaze", "motordrive",
    "multiscale", "shadowshield", "neuroforce", "punkrock", "purifyingsalt", "reckless",
    "ripen", "rivalry", "rockypayload", "sandforce", "sapsipper", "sharpness", "sheerforce",
    "skilllink", "slowstart", "sniper", "solarpower", "soundproof", "stakeout", "steelworker",
    "stormdrain", "strongjaw", "superluck", "supremeoverlord", "swordofruin", "tabletsofruin",
    "vesselofruin", "beadsofruin", "technician", "thickfat", "tintedlens", "toughclaws",
    "transistor", "unaware", "voltabsorb", "waterabsorb", "waterbubble", "wellbakedbody",
    "windrider", "wonderguard", "battlearmor", "shellarmor", "disguise", "iceface",
    "protosynthesis", "quarkdrive", "levitate", "overcoat", "sturdy", "dazzling",
    "queenlymajesty", "armortail", "goodasgold", "flowergift", "unseenfist", "protean",
    "libero", "terashell", "stancechange",
))  # fmt: skip
_INERT_ABILITIES: Final = frozenset((
    "battlebond", "berserk", "angershell", "gluttony", "illuminate", "keeneye", "magicbounce",
    "magicguard", "myceliummight", "noguard", "oblivious", "poisonheal", "propellertail",
    "rockhead", "serenegrace", "stalwart", "stench", "stickyhold", "telepathy", "unburden",
    "battery", "powerspot", "friendguard", "plus", "minus",
))  # fmt: skip
_HANDLED_ITEMS: Final = frozenset((
    *_TYPE_ITEMS, *_ORB_ITEMS, *_MASKS, *_RESIST_BERRIES, "choiceband", "choicespecs",
    "choicescarf", "lifeorb", "expertbelt", "assaultvest", "eviolite", "muscleband",
    "wiseglasses", "lightball", "thickclub", "punchingglove", "loadeddice", "scopelens",
    "razorclaw", "leek", "stick", "luckypunch", "floatstone", "ironball", "focussash",
    "focusband", "deepseatooth", "deepseascale", "metalpowder", "safetygoggles",
    "heavydutyboots", "pinkbow", "polkadotbow",
))  # fmt: skip
_INERT_ITEMS: Final = frozenset(("kingsrock", "razorfang"))
_RELEVANT_CALLBACKS: Final = frozenset((
    "onBasePower", "onAnyBasePower", "onAllyBasePower", "onFoeBasePower", "onSourceBasePower",
    "onModifyAtk", "onModifySpA", "onModifyDef", "onModifySpD", "onSourceModifyAtk",
    "onSourceModifySpA", "onAnyModifyAtk", "onAnyModifySpA", "onAnyModifyDef", "onAnyModifySpD",
    "onAllyModifyAtk", "onAllyModifySpD", "onFoeModifyDef", "onFoeModifySpD", "onModifyDamage",
    "onSourceModifyDamage", "onAnyModifyDamage", "onModifyType", "onModifyMove", "onModifySTAB",
    "onEffectiveness", "onModifyCritRatio", "onCriticalHit", "onAnyModifyBoost", "onTryHit",
    "onModifyWeight", "onPrepareHit", "onAnyTryPrimaryHit", "onFoeTryMove",
    "onSourceModifySecondaries",
))  # fmt: skip

# Moves whose callbacks are implemented here (or do not change damage).
_HANDLED_MOVES: Final = frozenset((
    "acrobatics", "electroball", "eruption", "waterspout", "dragonenergy", "gyroball",
    "heatcrash", "heavyslam", "lowkick", "grassknot", "hex", "infernalparade", "storedpower",
    "powertrip", "terablast", "tripleaxel", "triplekick", "ragefist", "lastrespects", "flail",
    "reversal", "boltbeak", "fishiousrend", "payback", "crushgrip", "wringout", "hardpress",
    "risingvoltage", "watershuriken", "facade", "knockoff", "brine", "venoshock", "barbbarrage",
    "collisioncourse", "electrodrift", "expandingforce", "psyblade", "solarbeam", "solarblade",
    "gravapple", "mistyexplosion", "weatherball", "terrainpulse", "ivycudgel", "ragingbull",
    "aurawheel", "revelationdance", "photongeyser", "shellsidearm", "freezedry", "flyingpress",
    "superfang", "ruination", "finalgambit", "endeavor", "brickbreak", "psychicfangs",
    "blizzard", "hurricane", "thunder", "bleakwindstorm", "sandsearstorm", "wildboltstorm",
    "firepledge", "grasspledge", "waterpledge", "struggle", "expandingforce", "rollout",
    "poltergeist", "suckerpunch", "thunderclap", "fakeout", "firstimpression", "upperhand",
    "solarbeam", "electroshot", "meteorbeam", "bounce", "dig", "dive", "fly", "phantomforce",
    "shadowforce", "skyattack", "freezeshock", "iceburn", "doubleshock", "steelroller",
    "belch", "lastresort", "snore", "bugbite", "pluck", "clearsmog", "incinerate", "jawlock",
    "ceaselessedge", "covet", "thief", "icespinner", "mortalspin", "rapidspin", "stoneaxe",
    "uproar", "pollenpuff", "terastarstorm", "futuresight", "doomdesire", "fling",
    "grassyglide", "hyperspacefury", "stompingtantrum", "temperflare", "lashout", "avalanche",
    "revenge", "multiattack", "judgment", "fusionflare", "fusionbolt", "hydrosteam",
    "counter", "mirrorcoat", "metalburst", "comeuppance", "dreameater", "naturesmadness",
    "round",
))  # fmt: skip
_MOVE_CALLBACKS: Final = frozenset((
    "basePowerCallback", "damageCallback", "onBasePower", "onModifyType", "onModifyMove",
    "onEffectiveness", "onTryHit", "onTry", "onTryMove", "onPrepareHit", "onHit", "onAfterHit",
    "onModifyPriority", "onTryImmunity", "onModifyTarget",
))  # fmt: skip


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


# ------------------------------------------------------------------ arithmetic
def _is_compiled() -> bool:
    """Whether this module runs as the compiled build (pokegym.world._accel)."""
    return not isinstance(_is_compiled, types.FunctionType)


_COMPILED: Final = _is_compiled()


def _modify(value: int, mod: int) -> int:
    """Showdown's ``modify(value, mod / 4096)``: round half down."""
    return (value * mod + 2047) >> 12


def _chain(mod: int, nxt: int) -> int:
    """Showdown's ``chainModify``: both modifiers in 4096ths."""
    return (mod * nxt + 2048) >> 12


def _boosted(stat: int, stage: int) -> int:
    if stage > 6:
        stage = 6
    elif stage < -6:
        stage = -6
    if stage >= 0:
        return stat * _BOOST_NUM[stage] // 2
    return stat * 2 // _BOOST_NUM[-stage]


def _run_event(value: int, handlers: list[_Handler]) -> int:
    """Apply an event's handlers in Showdown's order and return the modified value.

    A handler is ``(-priority, -speed, sub_order, seq, kind, arg)``: kind "c" chains
    ``arg`` (4096ths), "m" replaces the value by ``modify(value, arg)`` on the spot,
    "t" is Technician (x1.5 when the power so far is at most 60).
    """
    if not handlers:
        return value
    if len(handlers) > 1:
        handlers.sort()
    mod = 4096
    for handler in handlers:
        kind, arg = handler[4], handler[5]
        if kind == "c":
            mod = (mod * arg + 2048) >> 12
        elif kind == "m":
            value = (value * arg + 2047) >> 12
        elif (value * mod + 2047) >> 12 <= 60:  # Technician
            mod = (mod * 6144 + 2048) >> 12
    return (value * mod + 2047) >> 12


# An event handler: (-priority, -holder speed, sub-order, sequence, kind, argument).
_Handler = tuple[int, int, int, int, str, int]


def _add(
    handlers: list[_Handler], priority: int, speed: int, sub: int, kind: str, arg: int
) -> None:
    """Add a handler to an event (``speed``: already negated); the sequence number keeps
    handlers that tie in Showdown's order in the order they were added."""
    handlers.append((-priority, speed, sub, len(handlers) + 1, kind, arg))


# ------------------------------------------------------------------ move data
@dataclass(frozen=True, slots=True)
class _MoveData:
    id: str
    type: str
    category: str
    base_power: int
    priority: int
    flags: frozenset[str]
    crit_ratio: int
    multihit: Any
    multiaccuracy: bool
    will_crit: bool
    ignore_defensive: bool
    ignore_offensive: bool
    ignore_immunity: Any
    ignore_ability: bool
    offensive_stat: str
    offensive_target: bool
    defensive_stat: str
    has_secondaries: bool
    sheer_force_boost: bool
    recoil: bool
    force_stab: bool
    ohko: Any  # False, True, or the type it cannot knock out (Sheer Cold: "Ice")
    fixed: Any
    callbacks: frozenset[str]
    unsupported: bool


_MOVE_CACHE: Final[dict[tuple[int, str], _MoveData]] = {}


def _move_data(dex: Dex, move_id: str) -> _MoveData:
    key = (dex.gen, move_id)
    data = _MOVE_CACHE.get(key)
    if data is not None:
        return data
    entry = dex.moves.get(move_id)
    if entry is None:
        entry = dex.move_entry(move_id)  # raises KeyError with a clear message
    callbacks = frozenset(entry.get("callbacks", ()))
    unsupported = bool(callbacks & _MOVE_CALLBACKS) and entry["id"] not in _HANDLED_MOVES
    unsupported = unsupported or bool(entry.get("isZ") or entry.get("isMax"))
    ignore_immunity = entry.get("ignoreImmunity", False)
    if isinstance(ignore_immunity, dict):
        ignore_immunity = frozenset(k for k, v in ignore_immunity.items() if v)
    data = _MoveData(
        id=entry["id"],
        type=entry.get("type", "???"),
        category=entry.get("category", "Physical"),
        base_power=int(entry.get("basePower", 0) or 0),
        priority=int(entry.get("priority", 0) or 0),
        flags=frozenset(k for k, v in (entry.get("flags") or {}).items() if v),
        crit_ratio=int(entry.get("critRatio", 1) or 0),
        multihit=tuple(entry["multihit"]) if isinstance(entry.get("multihit"), list)
        else entry.get("multihit"),
        multiaccuracy=bool(entry.get("multiaccuracy")),
        will_crit=bool(entry.get("willCrit")),
        ignore_defensive=bool(entry.get("ignoreDefensive")),
        ignore_offensive=bool(entry.get("ignoreOffensive")),
        ignore_immunity=ignore_immunity,
        ignore_ability=bool(entry.get("ignoreAbility")),
        offensive_stat=entry.get("overrideOffensiveStat") or "",
        offensive_target=entry.get("overrideOffensivePokemon") == "target",
        defensive_stat=entry.get("overrideDefensiveStat") or "",
        has_secondaries=bool(entry.get("secondaries")),
        sheer_force_boost=bool(entry.get("hasSheerForceBoost")),
        recoil=bool(entry.get("recoil") or entry.get("hasCrashDamage")),
        force_stab=bool(entry.get("forceSTAB")),
        ohko=entry.get("ohko") or False,
        fixed=entry.get("damage"),
        callbacks=callbacks,
        unsupported=unsupported,
    )  # fmt: skip
    _MOVE_CACHE[key] = data
    return data


_MAX_CACHE: Final[dict[tuple[int, str], _MoveData]] = {}


def max_move_of(dex: Dex, move_type: str) -> str:
    """The id of the Max Move a damaging move of ``move_type`` becomes ("" if none)."""
    for move_id, entry in dex.moves.items():
        if (
            entry.get("isMax") is True
            and entry.get("type") == move_type
            and entry.get("category") != "Status"
        ):
            return move_id
    return ""


def _max_move_data(dex: Dex, base: _MoveData) -> _MoveData:
    """The Max Move a Dynamaxed Pokémon uses for the damaging move ``base`` (Showdown's
    ``getMaxMove``): the base move's type and category, its ``maxMove.basePower``."""
    key = (dex.gen, base.id)
    data = _MAX_CACHE.get(key)
    if data is not None:
        return data
    max_id = max_move_of(dex, base.type)
    if not max_id:
        raise KeyError(f"Showdown's gen {dex.gen} data has no Max Move of type {base.type!r}")
    power = int(((dex.moves[base.id].get("maxMove") or {}).get("basePower")) or 0)
    data = dataclasses.replace(
        _move_data(dex, max_id), category=base.category, base_power=power, unsupported=False
    )
    _MAX_CACHE[key] = data
    return data


_EFFECT_CACHE: Final[dict[tuple[int, str, str, str], bool]] = {}
# Callbacks that only act when the holder attacks / only when it is hit.
_ATTACKER_ONLY: Final = frozenset((
    "onBasePower", "onModifyAtk", "onModifySpA", "onModifyDamage", "onModifyType",
    "onModifyMove", "onModifySTAB", "onModifyCritRatio", "onPrepareHit", "onAllyBasePower",
    "onAllyModifyAtk",
))  # fmt: skip
_DEFENDER_ONLY: Final = frozenset((
    "onSourceBasePower", "onSourceModifyAtk", "onSourceModifySpA", "onModifyDef", "onModifySpD",
    "onSourceModifyDamage", "onTryHit", "onCriticalHit", "onEffectiveness", "onFoeTryMove",
    "onAllyModifySpD", "onFoeBasePower", "onSourceModifySecondaries",
))  # fmt: skip


def _unmodelled(dex: Dex, kind: str, effect_id: str, role: str) -> bool:
    """True when an ability/item of the attacker (``role`` "attacker") or defender
    changes damage in Showdown and is not modelled here."""
    if not effect_id:
        return False
    key = (dex.gen, kind, effect_id, role)
    cached = _EFFECT_CACHE.get(key)
    if cached is not None:
        return cached
    table = dex.abilities if kind == "ability" else dex.items
    handled = (
        _HANDLED_ABILITIES | _INERT_ABILITIES
        if kind == "ability"
        else _HANDLED_ITEMS | _INERT_ITEMS
    )
    entry = table.get(effect_id)
    result = False
    if entry is not None and effect_id not in handled:
        callbacks = set(entry.get("callbacks", ())) & _RELEVANT_CALLBACKS
        callbacks -= _DEFENDER_ONLY if role == "attacker" else _ATTACKER_ONLY
        result = bool(callbacks)
    _EFFECT_CACHE[key] = result
    return result


def known_species(dex: Dex, species: str) -> str:
    """``species`` as an id of Showdown's species table: a cosmetic forme missing from
    the table (e.g. ``florgesorange``) becomes the longest listed prefix (``florges``)."""
    sid = to_id(species)
    if sid in dex.species:
        return sid
    for end in range(len(sid) - 1, 2, -1):
        if sid[:end] in dex.species:
            return sid[:end]
    raise KeyError(f"Showdown's gen {dex.gen} data has no species {species!r}")


def _species_entry(dex: Dex, species: str) -> dict[str, Any]:
    entry = dex.species.get(species)
    if entry is None:
        entry = dex.species.get(to_id(species))
    return entry or {}


# --------------------------------------------------------------- the calculation
class _Ctx:
    """Everything about one (attacker, defender, move, field) that does not depend on
    the hit number or the crit."""

    __slots__ = (
        "ate_boost",
        "atk",
        "atk_ability",
        "atk_grounded",
        "atk_hp",
        "atk_item",
        "atk_max_hp",
        "atk_paradox",
        "atk_pre_types",
        "atk_species",
        "atk_speed",
        "atk_types",
        "atk_weather",
        "aura_break",
        "bp_base",
        "category",
        "def_ability",
        "def_boost",
        "def_grounded",
        "def_hp",
        "def_item",
        "def_max_hp",
        "def_paradox",
        "def_species",
        "def_speed",
        "def_types",
        "def_weather",
        "dex",
        "dfn",
        "flags",
        "fld",
        "gen",
        "ignore_immunity",
        "infiltrates",
        "move",
        "mtype",
        "notes",
        "sheer_force",
        "spa_charge",
        "target_moved",
        "terrain",
        "weather",
    )  # fmt: skip
    # The types of the slots (read by type checkers and by the compiled build).
    ate_boost: bool
    atk: Combatant
    atk_ability: str
    atk_grounded: bool
    atk_hp: int
    atk_item: str
    atk_max_hp: int
    atk_paradox: str
    atk_pre_types: tuple[str, ...]
    atk_species: dict[str, Any]
    atk_speed: int
    atk_types: tuple[str, ...]
    atk_weather: str
    aura_break: bool
    bp_base: int
    category: str
    def_ability: str
    def_boost: int | None
    def_grounded: bool
    def_hp: int
    def_item: str
    def_max_hp: int
    def_paradox: str
    def_species: dict[str, Any]
    def_speed: int
    def_types: tuple[str, ...]
    def_weather: str
    dex: Dex
    dfn: Combatant
    flags: frozenset[str]
    fld: Field
    gen: int
    ignore_immunity: Any  # False, True or a frozenset of types
    infiltrates: bool
    move: _MoveData
    mtype: str
    notes: list[str]
    sheer_force: bool
    spa_charge: int
    target_moved: bool | None
    terrain: str
    weather: str

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _types_of(c: Combatant, dex: Dex) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(current types, pre-Tera types)."""
    tera = c.tera_type if c.terastallized and dex.gen >= 9 else ""
    if not tera:
        types = c.original_types or c.types or ("Normal",)
        return c.types or ("Normal",), types
    if c.original_types:
        pre = c.original_types
    elif c.types and c.types != (tera,):
        pre = c.types
    else:
        pre = tuple(_species_entry(dex, c.species).get("types", ())) or c.types
    if tera == "Stellar":
        return pre, pre
    return (tera,), pre


def _effective_ability(c: Combatant, other: Combatant) -> str:
    if c.ability_suppressed or "gastroacid" in c.volatiles:
        return ""
    if (
        other.ability == "neutralizinggas"
        and not other.ability_suppressed
        and c.item != "abilityshield"
    ):
        return ""
    return c.ability


def _grounded(c: Combatant, types: tuple[str, ...], ability: str, item: str, fld: Field) -> bool:
    if fld.gravity or "smackdown" in c.volatiles or "ingrain" in c.volatiles:
        return True
    if item == "ironball":
        return True
    if "Flying" in types:
        return False
    if ability == "levitate":
        return False
    if "magnetrise" in c.volatiles or "telekinesis" in c.volatiles:
        return False
    return item != "airballoon"


def _speed(ctx: _Ctx, c: Combatant, ability: str, item: str, paradox: str, side: Side) -> int:
    """``getStat('spe')`` by the one Speed rule (:mod:`pokegym.world.speed`)."""
    return effective_speed(
        int(c.stats.get("spe", 0)),
        boost=c.boosts.get("spe", 0) if c.boosts else 0,
        item=item,
        ability=ability,
        status=c.status,
        tailwind=side.tailwind,
        weather=ctx.weather,
        terrain=ctx.terrain,
        speed_ability_boost=paradox == "spe",
        item_lost="unburden" in c.volatiles and not item,
        slow_start="slowstart" in c.volatiles,
        dynamaxed="dynamax" in c.volatiles,
        species=c.species,
        gen=ctx.gen,
    )


def _paradox(c: Combatant, ability: str, item: str, fld: Field, weather: str, dex: Dex) -> str:
    """The stat an active Protosynthesis / Quark Drive boosts, or ""."""
    if ability not in ("protosynthesis", "quarkdrive") or c.paradox_stat == "none":
        return ""
    if c.paradox_stat:
        return c.paradox_stat
    active = item == "boosterenergy"
    if ability == "protosynthesis" and weather == "sunnyday":
        active = True
    if ability == "quarkdrive" and fld.terrain == "electricterrain":
        active = True
    if not active:
        return ""
    best, best_value = "atk", 0
    for stat in ("atk", "def", "spa", "spd", "spe"):
        value = _boosted(int(c.stats.get(stat, 0)), c.boosts.get(stat, 0) if c.boosts else 0)
        if value > best_value:
            best, best_value = stat, value
    return best


def _type_mod(dex: Dex, move_type: str, types: tuple[str, ...]) -> int:
    total = 0
    chart = dex.type_chart
    for t in types:
        taken = chart.get(t)
        if taken is None:
            continue
        code = taken.get(move_type, 0)
        if code == 1:
            total += 1
        elif code == 2:
            total -= 1
    return total


def _immune_by_type(dex: Dex, move_type: str, types: tuple[str, ...]) -> bool:
    chart = dex.type_chart
    for t in types:
        taken = chart.get(t)
        if taken is not None and taken.get(move_type, 0) == 3:
            return True
    return False


def _item_removable(item: str, c: Combatant, dex: Dex) -> bool:
    if not item:
        return False
    entry = dex.items.get(item) or {}
    species = _species_entry(dex, c.species)
    num = species.get("num", 0)
    base = species.get("baseSpecies", "")
    if entry.get("zMove") or item == "mail":
        return False
    if entry.get("onPlate") and num == 493:
        return False
    if item.endswith("memory") and num == 773:
        return False
    if item.endswith("drive") and num == 649:
        return False
    if item in _MASKS and base == "Ogerpon":
        return False
    if item == "boosterenergy" and "Paradox" in (species.get("tags") or ()):
        return False
    if (item == "blueorb" and base == "Kyogre") or (item == "redorb" and base == "Groudon"):
        return False
    if item in _STUCK_ITEMS and num in _STUCK_ITEMS[item]:
        return False
    required = species.get("requiredItems") or [species.get("requiredItem")]
    if any(item == to_id(r) for r in required if r):
        return False
    mega = entry.get("megaStone")
    return not ((isinstance(mega, dict) and base in mega) or (isinstance(mega, str) and mega))


def _weight_hg(c: Combatant, ability: str, item: str, dex: Dex) -> int:
    kg = c.weight
    if kg is None:
        kg = float(_species_entry(dex, c.species).get("weightkg", 0.0))
    hg = round(kg * 10)
    if ability == "heavymetal":
        hg *= 2
    elif ability == "lightmetal":
        hg = hg // 2
    if item == "floatstone":
        hg = hg // 2
    return max(1, hg)


def _weight_power(ratio_hg: int) -> int:
    if ratio_hg >= 2000:
        return 120
    if ratio_hg >= 1000:
        return 100
    if ratio_hg >= 500:
        return 80
    if ratio_hg >= 250:
        return 60
    if ratio_hg >= 100:
        return 40
    return 20


def _prepare(
    dex: Dex, atk: Combatant, dfn: Combatant, move_id: str, fld: Field, target_moved: bool | None
) -> tuple[_Ctx, _MoveData]:
    m = _move_data(dex, move_id)
    dynamax_note = ""
    if "dynamax" in atk.volatiles and m.category != "Status":
        if not dex.moves[m.id].get("isMax"):
            if {"onModifyType", "basePowerCallback"} & m.callbacks or atk.ability in _ATE:
                dynamax_note = f"max move from {m.id}"
            m = _max_move_data(dex, m)
    ctx = _Ctx()
    ctx.dex, ctx.gen, ctx.atk, ctx.dfn, ctx.fld, ctx.move = dex, dex.gen, atk, dfn, fld, m
    ctx.notes = []
    ctx.target_moved = target_moved
    if m.unsupported:
        ctx.note(f"move {m.id}")
    if dynamax_note:
        ctx.note(dynamax_note)
    atk_ability = _effective_ability(atk, dfn)
    def_ability = _effective_ability(dfn, atk)
    ignore_ability = m.ignore_ability or atk_ability in _MOLD_BREAKERS
    if ignore_ability and def_ability and dfn.item != "abilityshield":
        ability_entry = dex.abilities.get(def_ability) or {}
        if (ability_entry.get("flags") or {}).get("breakable"):
            def_ability = ""
    ctx.atk_ability, ctx.def_ability = atk_ability, def_ability
    for who, ability in (("attacker", atk_ability), ("defender", def_ability)):
        if _unmodelled(dex, "ability", ability, who):
            ctx.note(f"{who} ability {ability}")
    magic_room = fld.magic_room
    atk_item = (
        "" if magic_room or atk_ability == "klutz" or "embargo" in atk.volatiles else atk.item
    )
    def_item = (
        "" if magic_room or def_ability == "klutz" or "embargo" in dfn.volatiles else dfn.item
    )
    ctx.atk_item, ctx.def_item = atk_item, def_item
    for who, item in (("attacker", atk_item), ("defender", def_item)):
        if _unmodelled(dex, "item", item, who):
            ctx.note(f"{who} item {item}")

    weather = fld.weather
    if weather and (
        atk_ability in ("airlock", "cloudnine") or def_ability in ("airlock", "cloudnine")
    ):
        weather = ""
    ctx.weather = weather
    sun_rain = ("sunnyday", "raindance", "desolateland", "primordialsea")
    ctx.atk_weather = "" if weather in sun_rain and atk_item == "utilityumbrella" else weather
    ctx.def_weather = "" if weather in sun_rain and def_item == "utilityumbrella" else weather
    ctx.terrain = fld.terrain

    atk_types, atk_pre = _types_of(atk, dex)
    def_types, _ = _types_of(dfn, dex)
    ctx.atk_types, ctx.atk_pre_types, ctx.def_types = atk_types, atk_pre, def_types
    ctx.atk_grounded = _grounded(atk, atk_types, atk_ability, atk_item, fld)
    ctx.def_grounded = _grounded(dfn, def_types, def_ability, def_item, fld)
    ctx.atk_max_hp, ctx.def_max_hp = atk.max_hp, dfn.max_hp
    ctx.atk_hp, ctx.def_hp = atk.current_hp, dfn.current_hp
    ctx.atk_species = _species_entry(dex, atk.species)
    ctx.def_species = _species_entry(dex, dfn.species)
    ctx.atk_paradox = _paradox(atk, atk_ability, atk_item, fld, weather, dex)
    ctx.def_paradox = _paradox(dfn, def_ability, def_item, fld, weather, dex)
    # ``pokemon.speed``: the order in which effects of the two Pokémon run.
    ctx.atk_speed = action_speed(
        _speed(ctx, atk, atk_ability, atk_item, ctx.atk_paradox, fld.attacker_side),
        fld.trick_room,
    )
    ctx.def_speed = action_speed(
        _speed(ctx, dfn, def_ability, def_item, ctx.def_paradox, fld.defender_side),
        fld.trick_room,
    )
    if atk.status and atk.status not in ("brn", "par", "psn", "tox", "slp", "frz"):
        ctx.note(f"status {atk.status}")
    if "dynamax" in dfn.volatiles and m.id in _ANTI_DYNAMAX:
        ctx.note(f"move {m.id} on a Dynamaxed target")

    # ---- the active move: ModifyType / ModifyMove (move first, then the user's effects)
    mtype, category, bp = m.type, m.category, m.base_power
    flags = m.flags
    mid = m.id
    tera = atk.tera_type if atk.terastallized and ctx.gen >= 9 else ""
    species_name = ctx.atk_species.get("name", "")
    if mid == "weatherball":
        w = ctx.atk_weather
        if w in ("sunnyday", "desolateland"):
            mtype = "Fire"
        elif w in ("raindance", "primordialsea"):
            mtype = "Water"
        elif w == "sandstorm":
            mtype = "Rock"
        elif w in ("hail", "snowscape"):
            mtype = "Ice"
        if w in (
            "sunnyday",
            "desolateland",
            "raindance",
            "primordialsea",
            "sandstorm",
            "hail",
            "snowscape",
        ):
            bp *= 2
    elif mid == "terrainpulse":
        if ctx.atk_grounded and ctx.terrain:
            mtype = _TERRAIN_TYPES.get(ctx.terrain, mtype)
            bp *= 2
    elif mid == "terablast":
        if tera:
            mtype = tera
            if _stat_unmodified(atk, "atk") > _stat_unmodified(atk, "spa"):
                category = "Physical"
            if tera == "Stellar":
                ctx.note("stellar tera blast")
    elif mid == "ivycudgel":
        for suffix, kind in (
            ("Wellspring", "Water"),
            ("Hearthflame", "Fire"),
            ("Cornerstone", "Rock"),
        ):
            if species_name.startswith(f"Ogerpon-{suffix}"):
                mtype = kind
    elif mid == "ragingbull":
        mtype = {"Tauros-Paldea-Combat": "Fighting", "Tauros-Paldea-Blaze": "Fire",
                 "Tauros-Paldea-Aqua": "Water"}.get(species_name, mtype)  # fmt: skip
    elif mid == "aurawheel":
        mtype = "Dark" if species_name == "Morpeko-Hangry" else "Electric"
    elif mid == "revelationdance":
        mtype = atk_types[0] if atk_types else mtype
    elif mid == "photongeyser":
        if _stat_unmodified(atk, "atk") > _stat_unmodified(atk, "spa"):
            category = "Physical"
    elif mid == "terastarstorm":
        if species_name == "Terapagos-Stellar":
            mtype = "Stellar"
            ctx.note("stellar")
    elif mid == "shellsidearm":
        level_term = 2 * atk.level // 5 + 2
        a, s = _stat_unmodified(atk, "atk"), _stat_unmodified(atk, "spa")
        d, sd = _stat_unmodified(dfn, "def"), _stat_unmodified(dfn, "spd")
        physical = level_term * 90 * a // max(1, d) // 50
        special = level_term * 90 * s // max(1, sd) // 50
        if physical > special:
            category = "Physical"
            flags = flags | {"contact"}
        elif physical == special:
            ctx.note("shell side arm tie")
    elif mid in ("judgment", "multiattack"):
        item_entry = dex.items.get(atk_item) or {}
        held_type = item_entry.get("onPlate" if mid == "judgment" else "onMemory")
        if isinstance(held_type, str) and held_type:
            mtype = held_type
    elif mid == "technoblast":
        ctx.note(f"move {mid}")
    elif mid == "fling":
        # PrepareHit: the held item's Fling power; no item it can throw, no move.
        fling = (dex.items.get(atk_item) or {}).get("fling") if atk_item else None
        if fling and _item_removable(atk_item, atk, dex):
            bp = int(fling.get("basePower") or 0)
    elif mid == "struggle":
        mtype = "???"  # typeless: no STAB, no effectiveness, no immunity

    ate_boost = False
    if atk_ability == "normalize":
        if mid not in _NO_NORMALIZE and not (mid == "terablast" and tera):
            mtype = "Normal"
            ate_boost = True
    elif atk_ability in _ATE:
        if mtype == "Normal" and mid not in _NO_ATE and not (mid == "terablast" and tera):
            mtype = _ATE[atk_ability]
            ate_boost = True
    elif atk_ability == "liquidvoice" and "sound" in flags:
        mtype = "Water"
    ctx.ate_boost = ate_boost

    ignore_immunity = m.ignore_immunity
    infiltrates = False
    sheer_force = False
    multihit = m.multihit
    if atk_ability == "sheerforce" and m.has_secondaries:
        sheer_force = True
    if atk_ability in ("scrappy", "mindseye") and ignore_immunity is not True:
        ignore_immunity = frozenset(ignore_immunity or ()) | {"Fighting", "Normal"}
    if atk_ability == "infiltrator":
        infiltrates = True
    if atk_ability == "longreach" or (atk_item == "punchingglove" and "punch" in flags):
        flags = flags - {"contact"}
    ctx.mtype, ctx.category, ctx.bp_base, ctx.flags = mtype, category, bp, flags
    ctx.ignore_immunity, ctx.infiltrates, ctx.sheer_force = (
        ignore_immunity,
        infiltrates,
        sheer_force,
    )
    ctx.aura_break = atk_ability == "aurabreak" or def_ability == "aurabreak"
    if atk_ability == "stancechange" and ctx.atk_species.get("name") == "Aegislash":
        ctx.note("stance change")
    if def_ability == "terashell":
        ctx.note("ability terashell")
    if (
        atk_ability in ("protean", "libero")
        and mtype not in ("???", "Stellar")
        and atk_types != (mtype,)
        and not (atk.terastallized and ctx.gen >= 9)
        and not (atk.protean_used and ctx.gen >= 9)
        and "futuremove" not in flags
        and ctx.atk_species.get("num") not in (493, 773)  # Arceus, Silvally keep their type
    ):
        # PrepareHit: the user becomes the move's type before the hit.
        ctx.atk_types = ctx.atk_pre_types = (mtype,)
        ctx.atk_grounded = _grounded(atk, ctx.atk_types, atk_ability, atk_item, fld)
    # A charging move's first turn raised Special Attack (Simple doubles, Contrary inverts).
    ctx.spa_charge = 0
    if mid in _CHARGE_SPA and mid not in atk.volatiles:
        ctx.spa_charge = 2 if atk_ability == "simple" else -1 if atk_ability == "contrary" else 1
    ctx.def_boost = None
    del multihit
    return ctx, m


def _stat_unmodified(c: Combatant, stat: str) -> int:
    """``getStat(stat, false, true)``: boosted, before Modify* effects."""
    return _boosted(int(c.stats.get(stat, 0)), c.boosts.get(stat, 0) if c.boosts else 0)


def _fails(ctx: _Ctx) -> str:
    """Why the move does nothing to the defender ("" when it hits)."""
    m, mtype, dfn, atk = ctx.move, ctx.mtype, ctx.dfn, ctx.atk
    ability = ctx.def_ability
    if ctx.weather == "desolateland" and mtype == "Water" and ctx.category != "Status":
        return "evaporated"
    if ctx.weather == "primordialsea" and mtype == "Fire" and ctx.category != "Status":
        return "fizzled"
    # TryHit: absorbing abilities and other blocks
    if ability:
        if _ABSORB.get(ability) == mtype:
            return ability
        if ability == "levitate" and mtype == "Ground" and not ctx.def_grounded:
            return ability
        if ability == "bulletproof" and "bullet" in ctx.flags:
            return ability
        if ability == "soundproof" and "sound" in ctx.flags:
            return ability
        if ability == "windrider" and "wind" in ctx.flags:
            return ability
        if ability == "overcoat" and "powder" in ctx.flags:
            return ability
        if ability in ("dazzling", "queenlymajesty", "armortail") and m.priority > 0:
            return ability
        if ability == "wonderguard" and m.id != "struggle":
            if _type_mod_full(ctx) <= 0 or not _type_immunity_ok(ctx):
                return ability
    if ctx.terrain == "psychicterrain" and m.priority > 0 and ctx.def_grounded:
        return "psychic terrain"
    if "powder" in ctx.flags and ("Grass" in ctx.def_types or ctx.def_item == "safetygoggles"):
        return "powder"
    if m.id in _WEIGHT_MOVES and "dynamax" in dfn.volatiles:
        return "dynamax"
    mid = m.id
    if mid == "poltergeist" and not dfn.item:
        return "no item"
    if mid == "fling" and not ctx.bp_base:
        return "nothing to fling"
    if mid == "steelroller" and not ctx.terrain:
        return "no terrain"
    if not _type_immunity_ok(ctx):
        return "type"
    # TryImmunity, then the OHKO rules of the accuracy check
    if mid == "dreameater" and dfn.status != "slp" and _effective_ability(dfn, atk) != "comatose":
        return "target awake"
    if mid == "endeavor" and atk.current_hp >= dfn.current_hp:
        return "endeavor"
    if m.ohko and (
        ability == "sturdy"
        or dfn.level > atk.level
        or "dynamax" in dfn.volatiles
        or (m.ohko is not True and m.ohko in ctx.def_types)
    ):
        return "ohko"
    return ""


def _type_immunity_ok(ctx: _Ctx) -> bool:
    mtype = ctx.mtype
    ignore = ctx.ignore_immunity
    if ignore is True or (ignore and mtype in ignore):
        return True
    if mtype in ("???", "Stellar"):
        return True
    if mtype == "Ground":
        return ctx.def_grounded
    return not _immune_by_type(ctx.dex, mtype, ctx.def_types)


def _type_mod_full(ctx: _Ctx) -> int:
    """``runEffectiveness`` with the move's and effects' Effectiveness handlers."""
    dfn = ctx.dfn
    mtype = ctx.mtype
    if mtype == "Stellar":
        return 1 if dfn.terastallized else 0
    dex = ctx.dex
    total = 0
    mid = ctx.move.id
    for t in ctx.def_types:
        mod = _type_mod(dex, mtype, (t,))
        if mid == "freezedry" and t == "Water":
            mod = 1
        elif mid == "flyingpress":
            mod += _type_mod(dex, "Flying", (t,))
        if ctx.weather == "deltastream" and t == "Flying" and mod > 0:
            mod = 0
        total += mod
    return max(-6, min(6, total))


def _hits_substitute(ctx: _Ctx) -> bool:
    return (
        "substitute" in ctx.dfn.volatiles and "bypasssub" not in ctx.flags and not ctx.infiltrates
    )


def _intact_form(ctx: _Ctx) -> str:
    """Which intact form ("disguise", "iceface") takes this hit; "" when none."""
    ability = ctx.def_ability
    if ability not in ("disguise", "iceface"):
        return ""
    species = ctx.def_species.get("id") or ctx.dfn.species
    if ability == "disguise" and species in _DISGUISE_FORMS:
        return "" if _hits_substitute(ctx) else "disguise"
    if ability == "iceface" and species in _ICE_FACE_FORMS and ctx.category == "Physical":
        return "" if _hits_substitute(ctx) else "iceface"
    return ""


def _crit_chance(ctx: _Ctx) -> float:
    m = ctx.move
    if ctx.def_ability in ("battlearmor", "shellarmor") or _intact_form(ctx):
        return 0.0
    if m.will_crit:
        return 1.0
    ratio = m.crit_ratio
    ability, item = ctx.atk_ability, ctx.atk_item
    if ability == "superluck":
        ratio += 1
    if item in ("scopelens", "razorclaw"):
        ratio += 1
    elif item in ("leek", "stick") and ctx.atk_species.get("baseSpecies") in (
        "Farfetch\u2019d",
        "Sirfetch\u2019d",
    ):
        ratio += 2
    elif item == "luckypunch" and ctx.atk_species.get("baseSpecies") == "Chansey":
        ratio += 2
    vol = ctx.atk.volatiles
    if "focusenergy" in vol:
        ratio += 2
    if "dragoncheer" in vol:
        ratio += 2 if "Dragon" in ctx.atk_types else 1
    if ability == "merciless" and ctx.dfn.status in ("psn", "tox"):
        ratio = 5
    ratio = max(0, min(4, ratio))
    return _CRIT_CHANCE[ratio]


def _base_power(ctx: _Ctx, hit: int, first_hit: bool) -> int:
    """Base power after the move's callback, the BasePower event and the Tera floor."""
    m, atk, dfn = ctx.move, ctx.atk, ctx.dfn
    mid = m.id
    bp = ctx.bp_base
    dex = ctx.dex
    # basePowerCallback
    if mid == "acrobatics":
        bp = bp * 2 if not atk.item else bp
    elif mid == "electroball":
        target_speed = _speed_stat(ctx, dfn, ctx.def_ability, ctx.def_item, ctx.def_paradox, False)
        own_speed = _speed_stat(ctx, atk, ctx.atk_ability, ctx.atk_item, ctx.atk_paradox, True)
        ratio = own_speed // target_speed if target_speed else 0
        bp = (40, 60, 80, 120, 150)[min(ratio, 4)]
    elif mid == "gyroball":
        target_speed = _speed_stat(ctx, dfn, ctx.def_ability, ctx.def_item, ctx.def_paradox, False)
        own_speed = _speed_stat(ctx, atk, ctx.atk_ability, ctx.atk_item, ctx.atk_paradox, True)
        bp = min(150, 25 * target_speed // own_speed + 1) if own_speed else 1
    elif mid in ("eruption", "waterspout", "dragonenergy"):
        scaled = bp * ctx.atk_hp / ctx.atk_max_hp
        bp = max(1, math.floor(scaled)) if scaled else 0
    elif mid in ("heavyslam", "heatcrash"):
        own = _weight_hg(atk, ctx.atk_ability, ctx.atk_item, dex)
        target = _weight_hg(dfn, ctx.def_ability, ctx.def_item, dex)
        bp = 40
        for factor, power in ((5, 120), (4, 100), (3, 80), (2, 60)):
            if own >= target * factor:
                bp = power
                break
    elif mid in ("lowkick", "grassknot"):
        bp = _weight_power(_weight_hg(dfn, ctx.def_ability, ctx.def_item, dex))
    elif mid in ("hex", "infernalparade"):
        if dfn.status or ctx.def_ability == "comatose":
            bp *= 2
    elif mid in ("storedpower", "powertrip"):
        bp += 20 * sum(v for v in (atk.boosts or {}).values() if v > 0)
    elif mid == "terablast":
        if atk.terastallized and atk.tera_type == "Stellar":
            bp = 100
    elif mid == "tripleaxel":
        bp = 20 * hit
    elif mid == "triplekick":
        bp = 10 * hit
    elif mid == "ragefist":
        bp = min(350, 50 + 50 * atk.times_attacked)
    elif mid == "lastrespects":
        bp = 50 + 50 * atk.fainted_allies
    elif mid in ("flail", "reversal"):
        ratio = max(ctx.atk_hp * 48 // ctx.atk_max_hp, 1)
        bp = (
            200
            if ratio < 2
            else 150
            if ratio < 5
            else 100
            if ratio < 10
            else 80
            if ratio < 17
            else 40
            if ratio < 33
            else 20
        )
    elif mid in ("boltbeak", "fishiousrend"):
        if ctx.target_moved is None:
            ctx.note("move order")
        if dfn.just_switched_in or ctx.target_moved is False or ctx.target_moved is None:
            bp *= 2
    elif mid == "payback":
        if ctx.target_moved is None:
            ctx.note("move order")
        if not (dfn.just_switched_in or ctx.target_moved is False):
            bp *= 2
    elif mid in ("crushgrip", "wringout", "hardpress"):
        top = 100 if mid == "hardpress" else 120
        bp = ((top * (100 * (ctx.def_hp * 4096 // ctx.def_max_hp)) + 2047) // 4096) // 100 or 1
    elif mid == "risingvoltage":
        if ctx.terrain == "electricterrain" and ctx.def_grounded:
            bp *= 2
    elif mid in ("stompingtantrum", "temperflare"):
        if atk.last_move_failed:
            bp *= 2
    elif mid in ("avalanche", "revenge"):
        if atk.hurt_by_target:
            bp *= 2
    elif mid == "watershuriken":
        if ctx.atk_species.get("name") == "Greninja-Ash" and ctx.atk_ability == "battlebond":
            bp += 5
    if not bp:
        return 0
    bp = max(1, math.floor(bp))

    # BasePower event
    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed
    mtype, category, flags = ctx.mtype, ctx.category, ctx.flags

    # the move's own onBasePower
    if mid == "facade":
        if atk.status and atk.status != "slp":
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid == "knockoff":
        if _item_removable(dfn.item, dfn, ctx.dex):
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid == "brine":
        if ctx.def_hp * 2 <= ctx.def_max_hp:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid in ("venoshock", "barbbarrage"):
        if dfn.status in ("psn", "tox"):
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid in ("collisioncourse", "electrodrift"):
        if _type_mod_full(ctx) > 0:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 5461)
    elif mid in ("expandingforce", "mistyexplosion"):
        terrain = "psychicterrain" if mid == "expandingforce" else "mistyterrain"
        if ctx.terrain == terrain and ctx.atk_grounded:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid == "psyblade":
        if ctx.terrain == "electricterrain":
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid in ("solarbeam", "solarblade"):
        if ctx.atk_weather in ("raindance", "primordialsea", "sandstorm", "hail", "snowscape"):
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 2048)
    elif mid == "gravapple":
        if ctx.fld.gravity:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 6144)
    elif mid == "lashout":
        if atk.stats_lowered_this_turn:
            _add(handlers, 0, aspe, _SUB_MOVE, "c", 8192)
    elif mid in ("retaliate", "ficklebeam"):
        ctx.note(f"move {mid}")

    # attacker's ability
    ability = ctx.atk_ability
    if ability:
        if ability == "technician":
            _add(handlers, 30, aspe, _SUB_ABILITY, "t", 0)
        elif ability == "rivalry":
            if atk.gender and dfn.gender:
                same = atk.gender == dfn.gender
                _add(handlers, 24, aspe, _SUB_ABILITY, "c", 5120 if same else 3072)
        elif ability == "ironfist":
            if "punch" in flags:
                _add(handlers, 23, aspe, _SUB_ABILITY, "c", 4915)
        elif ability == "reckless":
            if ctx.move.recoil:
                _add(handlers, 23, aspe, _SUB_ABILITY, "c", 4915)
        elif ability in _ATE or ability == "normalize":
            if ctx.ate_boost:
                _add(handlers, 23, aspe, _SUB_ABILITY, "c", 4915)
        elif ability == "sheerforce":
            if ctx.sheer_force or ctx.move.sheer_force_boost:
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "toughclaws":
            if "contact" in flags:
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "sandforce":
            if ctx.weather == "sandstorm" and mtype in ("Rock", "Ground", "Steel"):
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "analytic":
            if ctx.target_moved is None:
                ctx.note("move order")
            elif ctx.target_moved:
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "supremeoverlord":
            fallen = min(5, atk.fainted_allies)
            if fallen:
                mod = (4096, 4506, 4915, 5325, 5734, 6144)[fallen]
                _add(handlers, 21, aspe, _SUB_ABILITY, "c", mod)
        elif ability == "strongjaw":
            if "bite" in flags:
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "megalauncher":
            if "pulse" in flags:
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "sharpness":
            if "slicing" in flags:
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "flareboost":
            if atk.status == "brn" and category == "Special":
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "toxicboost":
            if atk.status in ("psn", "tox") and category == "Physical":
                _add(handlers, 19, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "punkrock":
            if "sound" in flags:
                _add(handlers, 7, aspe, _SUB_ABILITY, "c", 5325)
        elif ability == "steelyspirit":  # an ally effect that includes the holder itself
            if mtype == "Steel":
                _add(handlers, 22, aspe, _SUB_ABILITY, "c", 6144)
    # auras (any Pokémon's)
    for aura, kind, speed in (
        (ctx.atk_ability, "darkaura", aspe), (ctx.atk_ability, "fairyaura", aspe),
        (ctx.def_ability, "darkaura", dspe), (ctx.def_ability, "fairyaura", dspe),
    ):  # fmt: skip
        if aura == kind and mtype == ("Dark" if kind == "darkaura" else "Fairy"):
            _add(handlers, 20, speed, _SUB_ABILITY, "c", 3072 if ctx.aura_break else 5448)
            break
    # attacker's volatiles
    if "charge" in atk.volatiles and mtype == "Electric":
        _add(handlers, 9, aspe, _SUB_VOLATILE, "c", 8192)
    # attacker's item
    item = ctx.atk_item
    if item:
        boosted = _TYPE_ITEMS.get(item)
        if boosted is not None:
            if boosted == mtype:
                _add(handlers, 15, aspe, _SUB_ITEM, "c", 4915)
        elif item in ("muscleband", "wiseglasses"):
            if category == ("Physical" if item == "muscleband" else "Special"):
                _add(handlers, 16, aspe, _SUB_ITEM, "c", 4505)
        elif item == "punchingglove":
            if "punch" in ctx.move.flags:
                _add(handlers, 23, aspe, _SUB_ITEM, "c", 4506)
        elif item in _ORB_ITEMS:
            num, types = _ORB_ITEMS[item]
            species_num = ctx.atk_species.get("num")
            if (species_num == num or (num == 380 and species_num == 381)) and mtype in types:
                _add(handlers, 15, aspe, _SUB_ITEM, "c", 4915)
        elif item in _MASKS:
            if ctx.atk_species.get("name", "").startswith(_MASKS[item]):
                _add(handlers, 15, aspe, _SUB_ITEM, "c", 4915)
        # Pink Bow and Polka Dot Bow have no effect in these generations.
    # defender's ability (onSourceBasePower)
    if ctx.def_ability == "dryskin" and mtype == "Fire":
        _add(handlers, 17, dspe, _SUB_ABILITY, "c", 5120)
    elif ctx.def_ability == "heatproof" and mtype == "Fire" and ctx.gen <= 8:
        _add(handlers, 18, dspe, _SUB_ABILITY, "c", 2048)
    # terrain
    terrain = ctx.terrain
    if terrain:
        if terrain == "electricterrain":
            if mtype == "Electric" and ctx.atk_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 5325)
        elif terrain == "grassyterrain":
            if mid in ("earthquake", "bulldoze", "magnitude") and ctx.def_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 2048)
            elif mtype == "Grass" and ctx.atk_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 5325)
        elif terrain == "psychicterrain":
            if mtype == "Psychic" and ctx.atk_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 5325)
        elif terrain == "mistyterrain":
            if mtype == "Dragon" and ctx.def_grounded:
                _add(handlers, 6, 0, _SUB_TERRAIN, "c", 2048)
    bp = _run_event(bp, handlers)
    if not bp:
        return 0
    bp = max(1, bp)
    # Tera: moves of the Tera type below 60 power hit with 60.
    if (
        atk.terastallized
        and ctx.gen >= 9
        and bp < 60
        and m.priority <= 0
        and not m.multihit
        and not ((ctx.bp_base in (0, 150)) and mid in _BP_CALLBACK_MOVES)
    ):
        tera = atk.tera_type
        if (tera == "Stellar" and mtype not in atk.stellar_boosted) or (
            tera != "Stellar" and mtype in ctx.atk_types
        ):
            bp = 60
    return bp


# Moves that return the damage taken this turn: the category they answer ("" any), x2 or x1.5.
_RETURN_MOVES: Final = {"counter": "Physical", "mirrorcoat": "Special", "metalburst": "",
                 "comeuppance": ""}  # fmt: skip

_BP_CALLBACK_MOVES: Final = frozenset((
    "acrobatics", "electroball", "eruption", "waterspout", "dragonenergy", "gyroball",
    "heatcrash", "heavyslam", "lowkick", "grassknot", "hex", "infernalparade", "storedpower",
    "powertrip", "terablast", "tripleaxel", "triplekick", "ragefist", "lastrespects", "flail",
    "reversal", "boltbeak", "fishiousrend", "payback", "crushgrip", "wringout", "hardpress",
    "risingvoltage", "watershuriken",
))  # fmt: skip


def _speed_stat(ctx: _Ctx, c: Combatant, ability: str, item: str, paradox: str, own: bool) -> int:
    """``getStat('spe')`` for Electro Ball / Gyro Ball (no Trick Room inversion)."""
    side = ctx.fld.attacker_side if own else ctx.fld.defender_side
    return _speed(ctx, c, ability, item, paradox, side)


def _attack_stat(ctx: _Ctx, crit: bool) -> int:
    m, atk, dfn = ctx.move, ctx.atk, ctx.dfn
    physical = ctx.category == "Physical"
    stat_name = m.offensive_stat or ("atk" if physical else "spa")
    holder = dfn if m.offensive_target else atk
    boost = holder.boosts.get(stat_name, 0) if holder.boosts else 0
    if ctx.spa_charge and stat_name == "spa" and holder is atk:
        boost = max(-6, min(6, boost + ctx.spa_charge))
    if m.ignore_offensive or (crit and boost < 0):
        boost = 0
    # Unaware (ModifyBoost): the defender's Unaware ignores the attacker's offensive boosts.
    if ctx.def_ability == "unaware":
        boost = 0
    stat_value = int(holder.stats.get(stat_name, 0))
    attack = _boosted(stat_value, boost)

    # ModifyAtk / ModifySpA on the attacker (Atk if the move is physical)
    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed
    mtype = ctx.mtype

    ability = ctx.atk_ability
    stat = "atk" if physical else "spa"
    if ability:
        if physical and ability in ("hugepower", "purepower"):
            _add(handlers, 5, aspe, _SUB_ABILITY, "c", 8192)
        elif physical and ability == "guts":
            if atk.status:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 6144)
        elif physical and ability == "hustle":
            _add(handlers, 5, aspe, _SUB_ABILITY, "m", 6144)
        elif physical and ability == "orichalcumpulse":
            if ctx.atk_weather in ("sunnyday", "desolateland"):
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 5461)
        elif not physical and ability == "hadronengine":
            if ctx.terrain == "electricterrain":
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 5461)
        elif physical and ability == "gorillatactics":
            if "dynamax" not in atk.volatiles:
                _add(handlers, 1, aspe, _SUB_ABILITY, "c", 6144)
        elif not physical and ability == "solarpower":
            if ctx.atk_weather in ("sunnyday", "desolateland"):
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "defeatist":
            if ctx.atk_hp <= ctx.atk_max_hp / 2:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 2048)
        elif ability in _PINCH:
            if mtype == _PINCH[ability] and ctx.atk_hp <= ctx.atk_max_hp / 3:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 6144)
        elif ability == "stakeout":
            if dfn.just_switched_in:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 8192)
        elif ability in _TYPE_ATK_ABILITIES:
            kind, mult = _TYPE_ATK_ABILITIES[ability]
            if mtype == kind:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", mult)
        elif ability == "transistor":
            if mtype == "Electric":
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 5325 if ctx.gen >= 9 else 6144)
        elif ability == "waterbubble":
            if mtype == "Water":
                _add(handlers, 0, aspe, _SUB_ABILITY, "c", 8192)
        elif physical and ability == "slowstart":
            if "slowstart" in atk.volatiles:
                _add(handlers, 5, aspe, _SUB_ABILITY, "c", 2048)
        elif ability == "flowergift":
            if physical and ctx.atk_weather in ("sunnyday", "desolateland"):
                if ctx.atk_species.get("baseSpecies") == "Cherrim":
                    _add(handlers, 3, aspe, _SUB_ABILITY, "c", 6144)
    if ctx.atk_paradox == stat:
        _add(handlers, 5, aspe, _SUB_VOLATILE, "c", 5325)
    if "flashfire" in atk.volatiles and mtype == "Fire" and ability == "flashfire":
        _add(handlers, 5, aspe, _SUB_VOLATILE, "c", 6144)
    item = ctx.atk_item
    if item:
        if (physical and item == "choiceband") or (not physical and item == "choicespecs"):
            if "dynamax" not in atk.volatiles:
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 6144)
        elif item == "lightball":
            if ctx.atk_species.get("baseSpecies") == "Pikachu":
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 8192)
        elif item == "thickclub" and physical:
            if ctx.atk_species.get("baseSpecies") in ("Cubone", "Marowak"):
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 8192)
        elif item == "deepseatooth" and not physical:
            if ctx.atk_species.get("baseSpecies") == "Clamperl":
                _add(handlers, 1, aspe, _SUB_ITEM, "c", 8192)
    dability = ctx.def_ability
    if dability:
        if dability == "thickfat":
            if mtype in ("Ice", "Fire"):
                _add(handlers, 6 if physical else 5, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "heatproof":
            if mtype == "Fire" and ctx.gen >= 9:
                _add(handlers, 6 if physical else 5, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "purifyingsalt":
            if mtype == "Ghost":
                _add(handlers, 6 if physical else 5, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "waterbubble":
            if mtype == "Fire":
                _add(handlers, 5, dspe, _SUB_ABILITY, "c", 2048)
    # Ruin abilities: the other Pokémon's Tablets (Atk) / Vessel (SpA).
    ruin = "tabletsofruin" if physical else "vesselofruin"
    if dability == ruin and ability != ruin:
        _add(handlers, 0, dspe, _SUB_ABILITY, "c", 3072)
    return _run_event(attack, handlers)


def _defense_stat(ctx: _Ctx, crit: bool) -> int:
    m, atk, dfn = ctx.move, ctx.atk, ctx.dfn
    physical = ctx.category == "Physical"
    stat_name = m.defensive_stat or ("def" if physical else "spd")
    if ctx.def_boost is not None and stat_name == "def":
        boost = ctx.def_boost  # changed by the earlier hits of this move
    else:
        boost = dfn.boosts.get(stat_name, 0) if dfn.boosts else 0
    if m.ignore_defensive or (crit and boost > 0):
        boost = 0
    if ctx.atk_ability == "unaware":
        boost = 0
    base_name = stat_name
    if ctx.fld.wonder_room:
        base_name = {"def": "spd", "spd": "def"}.get(stat_name, stat_name)
    defense = _boosted(int(dfn.stats.get(base_name, 0)), boost)

    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed

    is_def = stat_name == "def"
    weather = ctx.def_weather
    if not is_def and weather == "sandstorm" and "Rock" in ctx.def_types:
        _add(handlers, 10, 0, _SUB_WEATHER, "m", 6144)
    if is_def and weather == "snowscape" and "Ice" in ctx.def_types and ctx.gen >= 9:
        _add(handlers, 10, 0, _SUB_WEATHER, "m", 6144)
    ability = ctx.def_ability
    if ability:
        if is_def and ability == "furcoat":
            _add(handlers, 6, dspe, _SUB_ABILITY, "c", 8192)
        elif is_def and ability == "marvelscale":
            if dfn.status:
                _add(handlers, 6, dspe, _SUB_ABILITY, "c", 6144)
        elif is_def and ability == "grasspelt":
            if ctx.terrain == "grassyterrain":
                _add(handlers, 6, dspe, _SUB_ABILITY, "c", 6144)
        elif not is_def and ability == "flowergift":
            if (
                weather in ("sunnyday", "desolateland")
                and ctx.def_species.get("baseSpecies") == "Cherrim"
            ):
                _add(handlers, 4, dspe, _SUB_ABILITY, "c", 6144)
    if ctx.def_paradox == stat_name:
        _add(handlers, 6, dspe, _SUB_VOLATILE, "c", 5325)
    item = ctx.def_item
    if item:
        if item == "eviolite":
            if ctx.def_species.get("nfe"):
                _add(handlers, 2, dspe, _SUB_ITEM, "c", 6144)
        elif item == "assaultvest":
            if not is_def:
                _add(handlers, 1, dspe, _SUB_ITEM, "c", 6144)
        elif item == "metalpowder" and is_def:
            if ctx.def_species.get("name") == "Ditto":
                _add(handlers, 2, dspe, _SUB_ITEM, "c", 8192)
        elif item == "deepseascale" and not is_def:
            if ctx.def_species.get("baseSpecies") == "Clamperl":
                _add(handlers, 2, dspe, _SUB_ITEM, "c", 8192)
    ruin = "swordofruin" if is_def else "beadsofruin"
    if ctx.atk_ability == ruin and ability != ruin:
        _add(handlers, 0, aspe, _SUB_ABILITY, "c", 3072)
    del atk
    return _run_event(defense, handlers)


def _damage_mod(ctx: _Ctx, crit: bool, first_hit: bool, type_mod: int) -> tuple[int, bool]:
    """The ModifyDamage event's modifier (4096ths) and whether a resist berry was eaten."""
    handlers: list[_Handler] = []
    aspe, dspe = -ctx.atk_speed, -ctx.def_speed
    dfn = ctx.dfn
    mtype, category, flags = ctx.mtype, ctx.category, ctx.flags
    berry = False

    item = ctx.atk_item
    if item == "lifeorb":
        _add(handlers, 0, aspe, _SUB_ITEM, "c", 5324)
    elif item == "expertbelt":
        if type_mod > 0:
            _add(handlers, 0, aspe, _SUB_ITEM, "c", 4915)
    ability = ctx.atk_ability
    if ability == "tintedlens":
        if type_mod < 0:
            _add(handlers, 0, aspe, _SUB_ABILITY, "c", 8192)
    elif ability == "sniper":
        if crit:
            _add(handlers, 0, aspe, _SUB_ABILITY, "c", 6144)
    elif ability == "neuroforce":
        if type_mod > 0:
            _add(handlers, 0, aspe, _SUB_ABILITY, "c", 5120)
    # defender's item and ability (onSourceModifyDamage)
    ditem = ctx.def_item
    if first_hit and ditem in _RESIST_BERRIES:
        kind = _RESIST_BERRIES[ditem]
        substitute = (
            "substitute" in dfn.volatiles and "bypasssub" not in flags and not ctx.infiltrates
        )
        if mtype == kind and (type_mod > 0 or kind == "Normal") and not substitute:
            _add(handlers, 0, dspe, _SUB_ITEM, "c", 2048)
            berry = True
    dability = ctx.def_ability
    if dability:
        if dability in ("multiscale", "shadowshield"):
            if ctx.def_hp >= ctx.def_max_hp and first_hit:
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 2048)
        elif dability in ("filter", "solidrock", "prismarmor"):
            if type_mod > 0:
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 3072)
        elif dability == "fluffy":
            fluffy = 1.0
            if mtype == "Fire":
                fluffy *= 2
            if "contact" in flags:
                fluffy /= 2
            _add(handlers, 0, dspe, _SUB_ABILITY, "c", int(fluffy * 4096))
        elif dability == "icescales":
            if category == "Special":
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "punkrock":
            if "sound" in flags:
                _add(handlers, 0, dspe, _SUB_ABILITY, "c", 2048)
        elif dability == "ripen":
            if berry:
                _add(handlers, -1, dspe, _SUB_ABILITY, "c", 2048)
    # Glaive Rush: the user takes double damage until it moves again
    if "glaiverush" in dfn.volatiles:
        _add(handlers, 0, dspe, _SUB_VOLATILE, "c", 8192)
    # screens on the defender's side (side conditions: speed 0)
    side = ctx.fld.defender_side
    if not crit and not ctx.infiltrates and ctx.move.id not in _SCREEN_BREAKERS:
        if (side.reflect and category == "Physical") or (
            side.light_screen and category == "Special"
        ):
            _add(handlers, 0, 0, _SUB_SIDE, "c", 2048)
        elif side.aurora_veil:
            _add(handlers, 0, 0, _SUB_SIDE, "c", 2048)
    if not handlers:
        return 4096, berry
    if len(handlers) > 1:
        handlers.sort()
    mod = 4096
    for handler in handlers:
        mod = (mod * handler[5] + 2048) >> 12
    return mod, berry


def _stab(ctx: _Ctx) -> int:
    """The STAB modifier in 4096ths (1 = 4096)."""
    mtype = ctx.mtype
    if mtype == "???":
        return 4096
    atk = ctx.atk
    in_current = mtype in ctx.atk_types
    is_stab = ctx.move.force_stab or in_current or mtype in ctx.atk_pre_types
    stab = 6144 if is_stab else 4096
    tera = atk.tera_type if atk.terastallized and ctx.gen >= 9 else ""
    if tera == "Stellar":
        if mtype not in atk.stellar_boosted or ctx.atk_species.get("name") == "Terapagos-Stellar":
            stab = 8192 if is_stab else 4915
        return stab
    if tera and tera == mtype and mtype in ctx.atk_pre_types:
        stab = 8192
    if ctx.atk_ability == "adaptability" and (ctx.move.force_stab or in_current):
        stab = 9216 if stab == 8192 else 8192
    return stab


def _hit_rolls(
    ctx: _Ctx, hit: int, crit: bool, first_hit: bool, type_mod: int, stab: int, bp: int = -1
) -> tuple[tuple[int, ...], bool]:
    """The 16 damages of one hit and whether a resist berry was used up (``bp``: the
    hit's base power when the caller has it, which does not depend on the crit)."""
    if bp < 0:
        bp = _base_power(ctx, hit, first_hit)
    if not bp:
        return (0,) * 16, False
    attack = _attack_stat(ctx, crit)
    defense = _defense_stat(ctx, crit)
    level = ctx.atk.level
    base = ((2 * level // 5 + 2) * bp * attack // max(1, defense)) // 50
    base = base & 0xFFFFFFFF
    base += 2
    # WeatherModifyDamage
    mtype = ctx.mtype
    weather = ctx.weather
    if weather:
        dw = ctx.def_weather
        wmod = 4096
        if ctx.move.id == "hydrosteam" and ctx.atk_weather == "sunnyday" and weather == "sunnyday":
            wmod = 6144
        elif dw == "sunnyday":
            wmod = 6144 if mtype == "Fire" else 2048 if mtype == "Water" else 4096
        elif dw == "raindance":
            wmod = 6144 if mtype == "Water" else 2048 if mtype == "Fire" else 4096
        elif (dw == "desolateland" and mtype == "Fire") or (
            dw == "primordialsea" and mtype == "Water"
        ):
            wmod = 6144
        if wmod != 4096:
            base = (base * wmod + 2047) >> 12
    if crit:
        base = base * 3 // 2
    burn = (
        ctx.atk.status == "brn"
        and ctx.category == "Physical"
        and ctx.atk_ability != "guts"
        and ctx.move.id != "facade"
    )
    final_mod, berry = _damage_mod(ctx, crit, first_hit, type_mod)
    # A Max Move (or Unseen Fist) through Protect: x0.25 after the ModifyDamage event.
    through_protect = "protect" in ctx.dfn.volatiles and (
        bool(ctx.dex.moves.get(ctx.move.id, {}).get("isMax"))
        or (ctx.atk_ability == "unseenfist" and "contact" in ctx.flags)
    )
    rolls = []
    for r in range(85, 101):
        d = base * r // 100
        d = (d * stab + 2047) >> 12
        if type_mod > 0:
            d <<= type_mod
        elif type_mod < 0:
            d >>= -type_mod
        if burn:
            d = (d * 2048 + 2047) >> 12
        d = (d * final_mod + 2047) >> 12
        if through_protect:
            d = (d * 1024 + 2047) >> 12
        if not d:
            d = 1
        rolls.append(d & 0xFFFF)
    return tuple(rolls), berry


def _hit_distribution(ctx: _Ctx, m: _MoveData) -> tuple[tuple[int, float], ...]:
    multihit = m.multihit
    if not multihit:
        return ((1, 1.0),)
    skill_link = ctx.atk_ability == "skilllink"
    loaded = ctx.atk_item == "loadeddice"
    if isinstance(multihit, tuple):
        low, high = multihit
        if skill_link:
            return ((high, 1.0),)
        if (low, high) == (2, 5):
            return _TWO_TO_FIVE_LOADED if loaded else _TWO_TO_FIVE
        n = high - low + 1
        return tuple((k, 1.0 / n) for k in range(low, high + 1))
    count = int(multihit)
    if count == 10 and loaded:
        return tuple((k, 1.0 / 7) for k in range(4, 11))
    if m.multiaccuracy and not skill_link and not loaded:
        # Each hit after the first rolls accuracy again (given that the first landed).
        accuracy = _move_accuracy(ctx)
        if accuracy < 1.0:
            dist = []
            for k in range(1, count + 1):
                p = accuracy ** (k - 1) * ((1 - accuracy) if k < count else 1.0)
                dist.append((k, p))
            return tuple(dist)
    return ((count, 1.0),)


def _move_accuracy(ctx: _Ctx) -> float:
    entry = ctx.dex.moves.get(ctx.move.id) or {}
    accuracy = entry.get("accuracy", 100)
    if accuracy is True or ctx.atk_ability == "noguard" or ctx.def_ability == "noguard":
        return 1.0
    value = accuracy / 100.0
    if ctx.atk_item == "widelens":
        value *= 1.1
    return min(1.0, value)


def _zero_result(
    ctx: _Ctx | None, note: str = "", approximate: bool = False, effectiveness: float = 0.0
) -> DamageResult:
    zeros = (0,) * 16
    notes = tuple(ctx.notes) if ctx is not None else ()
    if note and note not in notes:
        notes = (*notes, note)
    return DamageResult(
        rolls=zeros, crit_rolls=zeros, hits=(1, 1.0), min=0, max=0, expected=0.0,
        effectiveness=effectiveness, approximate=approximate or bool(ctx and ctx.notes),
        move_type=ctx.mtype if ctx is not None else "",
        category=ctx.category if ctx is not None else "", notes=notes,
    )  # fmt: skip


def _holds_at_full_hp(ctx: _Ctx) -> int:
    """The defender's max HP when Sturdy / Focus Sash would leave it at 1 HP, else 0."""
    if ctx.def_hp >= ctx.def_max_hp and (
        ctx.def_item == "focussash" or ctx.def_ability == "sturdy"
    ):
        return ctx.def_max_hp
    return 0


def _fixed_result(ctx: _Ctx, damage: int, effectiveness: float) -> DamageResult:
    rolls = (damage,) * 16
    return DamageResult(
        rolls=rolls, crit_rolls=rolls, hits=(1, 1.0), min=damage, max=damage,
        expected=float(damage), effectiveness=effectiveness, approximate=bool(ctx.notes),
        move_type=ctx.mtype, category=ctx.category, notes=tuple(ctx.notes),
        blocks_ohko_at=_holds_at_full_hp(ctx),
    )  # fmt: skip


def _fixed_damage(ctx: _Ctx, m: _MoveData) -> int | None:
    """The damage of a move that ignores the formula (None: the formula applies; 0: the
    move does nothing here)."""
    mid = m.id
    if m.ohko:
        return ctx.def_max_hp
    if mid in _HALVING_MOVES:
        return max(1, ctx.def_hp // 2)
    if mid == "finalgambit":
        return ctx.atk_hp
    if mid == "endeavor":
        return ctx.def_hp - ctx.atk_hp
    if m.fixed == "level":
        return ctx.atk.level
    if isinstance(m.fixed, int) and m.fixed:
        return m.fixed
    if mid in _RETURN_MOVES:
        wanted = _RETURN_MOVES[mid]
        taken = [hp for hp, kind in ctx.atk.damage_taken_this_turn if not wanted or kind == wanted]
        if not taken:
            return 0
        returned = 2 * taken[-1] if wanted else math.floor(taken[-1] * 1.5)
        return max(1, returned)
    return None


def _defence_stages(ctx: _Ctx, hits: int) -> list[int] | None:
    """The defender's Defense stage at each of ``hits`` hits when its ability changes it
    after every hit (Weak Armor, Stamina, Water Compaction), else None."""
    ability = ctx.def_ability
    if ability == "weakarmor" and ctx.category == "Physical":
        step = -1
    elif ability == "stamina":
        step = 1
    elif ability == "watercompaction" and ctx.mtype == "Water":
        step = 2
    else:
        return None
    if hits < 2 or _hits_substitute(ctx):
        return None
    stage = ctx.dfn.boosts.get("def", 0) if ctx.dfn.boosts else 0
    stages = [stage]
    for _ in range(hits - 1):
        stage = max(-6, min(6, stage + step))
        stages.append(stage)
    return stages


def _hit_table(
    ctx: _Ctx, first: int, last: int, type_mod: int, stab: int, can_crit: bool
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """The rolls without and with a crit of hits ``first``..``last`` (hit ``first`` is the
    first that reaches the target). Later hits are computed again only where something
    changes: the power (Triple Axel), a resist berry or Multiscale used up, the
    defender's Defense (Weak Armor)."""
    bp = _base_power(ctx, first, True)
    rolls, berry = _hit_rolls(ctx, first, False, True, type_mod, stab, bp)
    crits = _hit_rolls(ctx, first, True, True, type_mod, stab, bp)[0] if can_crit else rolls
    normal, critical = [rolls], [crits]
    if last <= first:
        return normal, critical
    varying = ctx.move.id in ("tripleaxel", "triplekick")
    stages = _defence_stages(ctx, last - first + 1)
    for effect in (ctx.def_ability, ctx.def_item):
        if effect in _BETWEEN_HITS:
            ctx.note(f"between hits: {effect}")
    first_only = berry or (
        ctx.def_ability in ("multiscale", "shadowshield") and ctx.def_hp >= ctx.def_max_hp
    )
    if not (varying or stages or first_only):
        count = last - first + 1
        return normal * count, critical * count
    for index, hit in enumerate(range(first + 1, last + 1), start=1):
        if index > 1 and not varying and not stages:
            normal.append(normal[-1])
            critical.append(critical[-1])
            continue
        ctx.def_boost = stages[index] if stages else None
        bp = _base_power(ctx, hit, False)
        rolls = _hit_rolls(ctx, hit, False, False, type_mod, stab, bp)[0]
        crits = _hit_rolls(ctx, hit, True, False, type_mod, stab, bp)[0] if can_crit else rolls
        normal.append(rolls)
        critical.append(crits)
    ctx.def_boost = None
    return normal, critical


def _result(
    ctx: _Ctx,
    dist: tuple[tuple[int, float], ...],
    normal: list[tuple[int, ...]],
    critical: list[tuple[int, ...]],
    crit_chance: float,
    use_crit: bool,
    effectiveness: float,
    *,
    form_break_hp: int = 0,
    broken_form: DamageResult | None = None,
) -> DamageResult:
    """Totals over hit counts, rolls and crits from the rolls of every hit."""
    if len(normal) == 1:  # one hit: most moves
        rolls, crits = normal[0], critical[0]
        mean = sum(rolls) / 16
        if crit_chance:
            mean = (1 - crit_chance) * mean + crit_chance * sum(crits) / 16
        use = crits if use_crit else rolls
        return DamageResult(
            rolls=rolls, crit_rolls=crits, hits=(1, 1.0), min=form_break_hp + min(use),
            max=form_break_hp + max(use), expected=form_break_hp + mean,
            effectiveness=effectiveness, approximate=bool(ctx.notes), crit_chance=crit_chance,
            move_type=ctx.mtype, category=ctx.category, notes=tuple(ctx.notes),
            blocks_ohko_at=0 if broken_form is not None else _holds_at_full_hp(ctx),
            form_break_hp=form_break_hp, broken_form=broken_form,
        )  # fmt: skip
    max_hits = max(k for k, _ in dist)
    min_hits = min(k for k, _ in dist)
    p_reach = [0.0] * (max_hits + 1)
    for k, p in dist:
        for h in range(1, k + 1):
            p_reach[h] += p
    expected = float(form_break_hp)
    for h in range(1, max_hits + 1):
        mean = sum(normal[h - 1]) / 16
        if crit_chance:
            mean = (1 - crit_chance) * mean + crit_chance * sum(critical[h - 1]) / 16
        expected += p_reach[h] * mean
    per_hit = critical if use_crit else normal
    low = form_break_hp + sum(min(per_hit[h]) for h in range(min_hits))
    high = form_break_hp + sum(max(per_hit[h]) for h in range(max_hits))
    expected_hits = sum(k * p for k, p in dist)
    typical = max(1, int(expected_hits + 0.5)) if len(dist) > 1 else dist[0][0]
    return DamageResult(
        rolls=normal[0],
        crit_rolls=critical[0],
        hits=(typical, expected_hits),
        min=low,
        max=high,
        expected=expected,
        effectiveness=effectiveness,
        approximate=bool(ctx.notes),
        crit_chance=crit_chance,
        hit_distribution=dist,
        hit_rolls=tuple(normal) if max_hits > 1 else (),
        hit_crit_rolls=tuple(critical) if max_hits > 1 else (),
        move_type=ctx.mtype,
        category=ctx.category,
        notes=tuple(ctx.notes),
        blocks_ohko_at=0 if broken_form is not None else _holds_at_full_hp(ctx),
        form_break_hp=form_break_hp,
        broken_form=broken_form,
    )


def _can_crit(ctx: _Ctx) -> bool:
    return ctx.def_ability not in ("battlearmor", "shellarmor")


def _crit_terms(
    ctx: _Ctx, m: _MoveData, crit: bool | None, can_crit: bool
) -> tuple[float, bool, bool]:
    """(crit chance, whether min/max use the crit rolls, whether every hit crits)."""
    if not can_crit:
        return 0.0, False, False
    if m.will_crit:  # Frost Breath, Wicked Blow...: a hit without a crit cannot happen
        return 1.0, True, True
    chance = _crit_chance(ctx) if crit is None else (1.0 if crit else 0.0)
    return chance, bool(crit), False


def _broken_defender(ctx: _Ctx, form: str, chip: int) -> Combatant:
    """The defender once its Disguise / Ice Face has broken."""
    dfn, dex = ctx.dfn, ctx.dex
    species = ctx.def_species.get("id") or dfn.species
    table = _DISGUISE_FORMS if form == "disguise" else _ICE_FACE_FORMS
    broken = table.get(species, "")
    if broken not in dex.species:  # the data lacks the form: keep the species, drop the ability
        return dataclasses.replace(dfn, ability="", hp=max(1, dfn.current_hp - chip))
    stats = dfn.stats
    if form == "iceface":
        if dfn.broken_form_stats:
            stats = dict(dfn.broken_form_stats)
        else:
            stats = _estimated_form_stats(dfn, _species_entry(dex, species), dex.species[broken])
    return dataclasses.replace(
        dfn, species=broken, stats=stats, hp=max(1, dfn.current_hp - chip), broken_form_stats=None
    )


def broken_form(
    dex: Dex, species: str, stats: dict[str, int], level: int = 100
) -> tuple[str, dict[str, int]]:
    """The species id and stats of a Pokémon once its Disguise or Ice Face has broken
    (Mimikyu-Busted keeps its stats; Eiscue-Noice's are estimated from Eiscue's with the
    same investment). ``("", stats)`` when ``species`` has no such form in the data."""
    broken = _DISGUISE_FORMS.get(species) or _ICE_FACE_FORMS.get(species, "")
    if broken not in dex.species:
        return "", stats
    if species in _ICE_FACE_FORMS:
        probe = Combatant(species=species, level=level, types=(), stats=dict(stats))
        stats = _estimated_form_stats(probe, _species_entry(dex, species), dex.species[broken])
    return broken, stats


def _estimated_form_stats(c: Combatant, old: dict[str, Any], new: dict[str, Any]) -> dict[str, int]:
    """Stats of another form from the current ones, assuming the same investment and a
    neutral nature (the caller did not give them)."""
    old_base, new_base = old.get("baseStats") or {}, new.get("baseStats") or {}
    stats = dict(c.stats)
    for stat, value in c.stats.items():
        delta = int(new_base.get(stat, 0)) - int(old_base.get(stat, 0))
        if stat != "hp" and delta:
            stats[stat] = max(1, value + 2 * delta * c.level // 100)
    return stats


def _form_blocked(
    ctx: _Ctx, m: _MoveData, move_id: str, form: str, crit: bool | None, effectiveness: float
) -> DamageResult:
    """The use of a move whose first hit an intact Disguise / Ice Face takes."""
    chip = max(1, ctx.def_max_hp // 8) if form == "disguise" else 0
    broken_dfn = _broken_defender(ctx, form, chip)
    broken = _compute(ctx.dex, ctx.atk, broken_dfn, move_id, ctx.fld, crit, ctx.target_moved)
    estimated = form == "iceface" and not ctx.dfn.broken_form_stats
    if estimated:
        broken = dataclasses.replace(
            broken, approximate=True, notes=(*broken.notes, "eiscue-noice stats estimated")
        )
    zeros: tuple[int, ...] = (0,) * 16
    dist = _hit_distribution(ctx, m)
    max_hits = max(k for k, _ in dist)
    normal: list[tuple[int, ...]] = [zeros]
    critical: list[tuple[int, ...]] = [zeros]
    crit_chance, use_crit = 0.0, False
    if max_hits > 1 and broken.max > 0:
        # Later hits strike the broken form (the first of them uses up berries).
        if estimated:
            ctx.note("eiscue-noice stats estimated")
        bctx, _ = _prepare(ctx.dex, ctx.atk, broken_dfn, move_id, ctx.fld, ctx.target_moved)
        can_crit = _can_crit(bctx)
        crit_chance, use_crit, always = _crit_terms(bctx, m, crit, can_crit)
        later, later_crit = _hit_table(
            bctx, 2, max_hits, _type_mod_full(bctx), _stab(bctx), can_crit
        )
        normal += later_crit if always else later
        critical += later_crit
    elif max_hits > 1:
        normal, critical = [zeros] * max_hits, [zeros] * max_hits
    return _result(
        ctx, dist, normal, critical, crit_chance, use_crit, effectiveness,
        form_break_hp=chip, broken_form=broken,
    )  # fmt: skip


def _compute(
    dex: Dex, atk: Combatant, dfn: Combatant, move_id: str, fld: Field, crit: bool | None,
    target_moved: bool | None,
) -> DamageResult:  # fmt: skip
    ctx, m = _prepare(dex, atk, dfn, move_id, fld, target_moved)
    if ctx.category == "Status":
        return _zero_result(ctx, effectiveness=1.0)
    why = _fails(ctx)
    if why:
        return _zero_result(ctx, f"no effect: {why}")
    type_mod = _type_mod_full(ctx)
    effectiveness = 2.0**type_mod
    form = _intact_form(ctx)
    if form:
        return _form_blocked(ctx, m, move_id, form, crit, effectiveness)

    fixed = _fixed_damage(ctx, m)
    if fixed is not None:
        if not fixed:
            return _zero_result(ctx, "no effect: no damage to return")
        return _fixed_result(ctx, fixed, effectiveness)
    if "damageCallback" in m.callbacks:
        return _zero_result(ctx, f"move {m.id}", approximate=True, effectiveness=effectiveness)

    if ctx.def_ability == "terashell" and ctx.def_hp >= ctx.def_max_hp and type_mod >= 0:
        if ctx.def_species.get("name") == "Terapagos-Terastal":
            type_mod = -1
    stab = _stab(ctx)
    can_crit = _can_crit(ctx)
    crit_chance, use_crit, always = _crit_terms(ctx, m, crit, can_crit)
    dist = _hit_distribution(ctx, m)
    max_hits = max(k for k, _ in dist)
    normal, critical = _hit_table(ctx, 1, max_hits, type_mod, stab, can_crit)
    if always:
        normal = critical
    return _result(ctx, dist, normal, critical, crit_chance, use_crit, effectiveness)


# ------------------------------------------------------------------ public API
_CACHE: Final[dict[tuple[Any, ...], DamageResult]] = {}
_CACHE_LIMIT: Final = 200_000
_DEFAULT_FIELD: Final = Field()


def calculate(
    dex: Dex,
    attacker: Combatant,
    defender: Combatant,
    move: str,
    field: Field | None = None,
    *,
    crit: bool | None = None,
    target_moved: bool | None = None,
    use_cache: bool = True,
) -> DamageResult:
    """Damage of ``move`` from ``attacker`` to ``defender`` (Showdown's formula).

    Args:
        crit: None weighs critical hits by their chance; True/False forces them.
        target_moved: whether the defender has already moved this turn (Analytic,
            Payback, Bolt Beak, Fishious Rend); None when unknown (flagged approximate
            for those effects).
        use_cache: reuse results for identical states (the objects may be reused
            afterwards; the key is built from their values).

    Raises:
        KeyError: the move is not in Showdown's data for this generation.
    """
    fld = field or _DEFAULT_FIELD
    move_id = move if move in dex.moves else to_id(move)
    if not use_cache:
        return _compute(dex, attacker, defender, move_id, fld, crit, target_moved)
    key = (dex.gen, attacker._key(), defender._key(), move_id, fld._key(), crit, target_moved)
    result = _CACHE.get(key)
    if result is None:
        result = _compute(dex, attacker, defender, move_id, fld, crit, target_moved)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = result
    return result


def clear_cache() -> None:
    """Forget cached results (e.g. after patching game data in tests)."""
    _CACHE.clear()


def damage_over_prior(
    dex: Dex,
    attacker: Combatant,
    defender_candidates: list[tuple[Combatant, float]],
    move: str,
    field: Field | None = None,
) -> tuple[int, int, float, float]:
    """Damage over a distribution of hidden defender sets: ``(min, max, expected,
    KO probability)``, min/max over candidates with positive weight, expected and KO
    probability weighted (each candidate at its own current HP)."""
    return _over_prior(
        [(calculate(dex, attacker, d, move, field), d, w) for d, w in defender_candidates]
    )


def damage_over_attacker_prior(
    dex: Dex,
    attacker_candidates: list[tuple[Combatant, float]],
    defender: Combatant,
    move: str,
    field: Field | None = None,
) -> tuple[int, int, float, float]:
    """Like :func:`damage_over_prior`, with the attacker's set unknown."""
    return _over_prior(
        [(calculate(dex, a, defender, move, field), defender, w) for a, w in attacker_candidates]
    )


def _over_prior(
    results: list[tuple[DamageResult, Combatant, float]],
) -> tuple[int, int, float, float]:
    results = [(r, d, w) for r, d, w in results if w > 0]
    if not results:
        raise ValueError("damage over a prior needs at least one candidate with positive weight")
    total = sum(w for _, _, w in results)
    low = min(r.min for r, _, _ in results)
    high = max(r.max for r, _, _ in results)
    expected = sum(r.expected * w for r, _, w in results) / total
    ko = sum(r.ko_chance(d.current_hp) * w for r, d, w in results) / total
    return low, high, expected, ko
