"""The numbers ``abyssal``'s model and rules use (weights, thresholds, effect tables)."""

from __future__ import annotations

from poke_env.battle import (
    PokemonType,
    SideCondition,
    Status,
)

# --------------------------------------------------------------------------- constants

RANDOM_BATTLE_EVS = 85
"""EVs Showdown's random-battle generator gives every stat (neutral nature, 31 IVs)."""
TEAM_FORMAT_EVS = 128
"""Assumed EVs per stat for opponents in team formats: the middle of 0-252 (sets unknown)."""
ASSUMED_STAB_POWER = 85
"""Base power of the STAB attack assumed for an opponent whose moves are unknown."""
RANDOM_FACTOR = 0.925
"""Mean of the damage roll (uniform 0.85-1.00)."""
UNREVEALED_MOVE_WEIGHT = 0.85
"""A possible but unrevealed opponent move counts for this share of its damage: the
opponent may not carry it (random sets carry 4 of a pool of 5-10)."""

SPEED_WEIGHT = 0.25
"""Matchup points for moving first (subtracted when moving second)."""
KO_FIRST_WEIGHT = 0.75
"""Matchup points for knocking the other side out before it can act."""
SWITCH_THRESHOLD = -0.35
"""Matchups below this are bad enough to consider switching out."""
SWITCH_MARGIN = 0.55
"""A switch-in must beat staying in by this much (it gives the opponent a free turn)."""
PING_PONG_MARGIN = 0.6
"""Extra margin when we switched voluntarily the turn before: stops endless swapping."""
BOOSTED_STAY_MARGIN = 0.3
"""Extra margin per positive boost stage on the active Pokémon (boosts are lost on switching)."""

HAZARD_MIN_TARGETS = 2
"""Set hazards only while the opponent has at least this many Pokémon that could still
switch in (the active one included): each switch-in pays them."""
HAZARD_REMOVAL_MIN_MONS = 2
"""Remove our hazards only while we have at least this many Pokémon left."""
TOXIC_SPIKES_MIN_TARGETS = 3
"""Toxic Spikes pay less (Poison and Steel types are immune; one Poison type absorbs them)."""

RECOVER_BELOW = 0.55
"""Use a healing move only at or below this HP fraction."""
REST_BELOW = 0.4
"""Rest (two turns asleep) only at or below this HP fraction."""

SETUP_MIN_HP = 0.6
"""Set up only with at least this HP fraction."""
SETUP_MAX_THREAT = 0.45
"""Set up only when the opponent's best hit takes less than this share of our HP (no
2HKO): the boost must live long enough to be used."""
SETUP_MAX_STAGE = 2
"""Stop boosting an attacking stat at this stage (+2 already doubles damage)."""

STATUS_MIN_TARGET_HP = 0.5
"""Spread status only onto targets with at least this HP fraction (it needs time to pay)."""
STATUS_IF_DAMAGE_BELOW = 0.5
"""Use status only when our best attack takes less than this share of the target's HP."""

TERA_OFFENSE_GAIN = 1.35
"""Terastallize when it multiplies our best damage by at least this much..."""
TERA_DEFENSE_GAIN = 0.6
"""...or cuts the opponent's best damage to at most this share (without losing offense)."""
TERA_DEFENSE_MIN_HP = 0.5
"""A defensive Tera is only worth it on a Pokémon with at least this HP fraction."""

KO_BONUS = 0.5
"""Move value added for a likely knockout (one fewer opponent is worth more than damage)."""
RECOIL_WEIGHT = 0.5
"""Share of recoil damage counted against a move (our HP matters less than theirs)."""
SELF_DROP_PENALTY = 0.04
"""Move value lost per stage of self-inflicted stat drop (Draco Meteor, Close Combat)."""
PIVOT_BONUS = 0.08
"""Move value added to U-turn and Volt Switch when a good switch-in is available."""

HAZARD_CONDITIONS = {
    "stealthrock": (SideCondition.STEALTH_ROCK, 1),
    "spikes": (SideCondition.SPIKES, 3),
    "toxicspikes": (SideCondition.TOXIC_SPIKES, 2),
    "stickyweb": (SideCondition.STICKY_WEB, 1),
}
"""Hazard-setting moves: the side condition they set and its maximum layers."""
HAZARD_ORDER = ("stealthrock", "spikes", "stickyweb", "toxicspikes")
"""Which hazard to set first when several are possible (most damage first)."""
HAZARD_WEIGHT = {
    SideCondition.STEALTH_ROCK: 1.0,
    SideCondition.SPIKES: 0.6,
    SideCondition.TOXIC_SPIKES: 0.5,
    SideCondition.STICKY_WEB: 0.6,
}
"""How much a hazard (per layer for Spikes) hurts the side it is on, for removal choices."""
REMOVAL_MOVES = ("rapidspin", "mortalspin", "tidyup", "defog", "courtchange")
"""Moves that clear hazards from our side (Defog and Court Change also touch theirs)."""

SETUP_STATS = {"atk", "spa", "spe"}
"""Stats whose boosts make a move count as setup (defensive-only boosts do not)."""

# Ability and item effects Showdown implements as code (not data): only the cheap,
# common ones that change which move is best.
ABSORBING_ABILITIES = {
    "levitate": PokemonType.GROUND,
    "eartheater": PokemonType.GROUND,
    "flashfire": PokemonType.FIRE,
    "wellbakedbody": PokemonType.FIRE,
    "voltabsorb": PokemonType.ELECTRIC,
    "lightningrod": PokemonType.ELECTRIC,
    "motordrive": PokemonType.ELECTRIC,
    "waterabsorb": PokemonType.WATER,
    "stormdrain": PokemonType.WATER,
    "dryskin": PokemonType.WATER,
    "sapsipper": PokemonType.GRASS,
}
STATUS_IMMUNE_ABILITIES = {
    Status.TOX: {"immunity", "pastelveil", "poisonheal", "purifyingsalt", "comatose", "guts"},
    Status.PSN: {"immunity", "pastelveil", "poisonheal", "purifyingsalt", "comatose", "guts"},
    Status.BRN: {
        "waterveil",
        "waterbubble",
        "thermalexchange",
        "purifyingsalt",
        "comatose",
        "flashfire",
        "wellbakedbody",
        "guts",
    },
    Status.PAR: {
        "limber",
        "purifyingsalt",
        "comatose",
        "voltabsorb",
        "lightningrod",
        "motordrive",
        "guts",
        "quickfeet",
    },
    Status.SLP: {"insomnia", "vitalspirit", "sweetveil", "purifyingsalt", "comatose"},
}
"""Abilities that make a status fail, get absorbed, or backfire (Guts, Quick Feet)."""
STATUS_IMMUNE_TYPES = {
    Status.TOX: {PokemonType.POISON, PokemonType.STEEL},
    Status.PSN: {PokemonType.POISON, PokemonType.STEEL},
    Status.BRN: {PokemonType.FIRE},
    Status.PAR: {PokemonType.ELECTRIC},
    Status.SLP: set(),
}
REFLECTING_ABILITIES = {"magicbounce", "goodasgold"}
"""Abilities that bounce or block status moves aimed at their holder."""
