"""The damage calculator's effect tables and Showdown's 4096-based arithmetic
(``modify``, ``chainModify``, stat stages, ordered event handlers).
"""

from __future__ import annotations

import types
from typing import Final

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
