"""A designed move: the JSON a model writes, the dataclass the project uses, Showdown's form.

A design is a damaging move with at most one secondary effect::

    {"name": "Magma Lance", "type": "Fire", "category": "Physical", "power": 85,
     "accuracy": 95, "pp": 10, "effect": "burn", "effect_chance": 20,
     "description": "A spear of molten rock that may burn the target."}

``effect`` is one word of :data:`EFFECTS` (``"none"`` for a plain attack); each maps
onto Showdown's ``secondary`` field (a status, a volatile status, a stat drop on the
target or a stat rise for the user), so an approved design becomes a real move of
the project's Showdown mod without code. :meth:`MoveDesign.from_showdown` reads
Showdown's own moves into the same shape, which is how the balance evaluator is
tested on real moves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from pokegym.errors import PokegymError
from pokegym.world.data import TYPES, to_id

CATEGORIES = ("Physical", "Special")

# effect word -> Showdown ``secondary`` payload (without ``chance``)
_STATUS = {
    "burn": "brn",
    "paralysis": "par",
    "poison": "psn",
    "badly_poison": "tox",
    "freeze": "frz",
    "sleep": "slp",
}
_VOLATILE = {"confusion": "confusion", "flinch": "flinch"}
_STAT_NAMES = ("atk", "def", "spa", "spd", "spe", "accuracy")
_LOWER = {f"lower_{stat}": stat for stat in _STAT_NAMES}
_RAISE = {f"raise_{stat}": stat for stat in _STAT_NAMES if stat != "accuracy"}
EFFECTS: tuple[str, ...] = ("none", *_STATUS, *_VOLATILE, *_LOWER, *_RAISE)

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z' -]{1,22}[A-Za-z]$")


class MoveFormatError(PokegymError, ValueError):
    """A design that is not a well-formed move (missing field, wrong type, unknown word)."""


# The JSON schema a model's answer must satisfy (types and words; the numeric ranges are
# the balance evaluator's business, so that it can report them as violations).
DESIGN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "type": {"type": "string", "enum": list(TYPES)},
        "category": {"type": "string", "enum": list(CATEGORIES)},
        "power": {"type": "integer"},
        "accuracy": {"type": "integer"},
        "pp": {"type": "integer"},
        "effect": {"type": "string", "enum": list(EFFECTS)},
        "effect_chance": {"type": "integer"},
        "description": {"type": "string"},
    },
    "required": ["name", "type", "category", "power", "accuracy", "pp", "effect", "effect_chance"],
}


@dataclass(frozen=True)
class MoveDesign:
    """A damaging move with at most one secondary effect.

    ``accuracy`` is a percentage (1-100); ``effect_chance`` is the percentage chance of
    ``effect`` (0 when the effect is ``"none"``).
    """

    name: str
    type: str
    category: str
    power: int
    accuracy: int
    pp: int
    effect: str = "none"
    effect_chance: int = 0
    description: str = ""

    @property
    def id(self) -> str:
        return to_id(self.name)

    @property
    def has_effect(self) -> bool:
        return self.effect != "none"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MoveDesign:
        """A design from its JSON form; raises :class:`MoveFormatError` saying what is wrong.

        Only the shape is checked here (keys, types, known words); whether the numbers
        make a sensible move is :func:`pokegym.moves.balance.evaluate`'s question.
        """
        if not isinstance(data, Mapping):
            raise MoveFormatError(f"a move design is a JSON object, got {type(data).__name__}")
        missing = [k for k in DESIGN_SCHEMA["required"] if k not in data]
        if "effect" in missing and "effect_chance" in missing:
            missing = [k for k in missing if k not in ("effect", "effect_chance")]
            data = {**data, "effect": "none", "effect_chance": 0}
        if missing:
            raise MoveFormatError(f"the move design lacks {', '.join(missing)}")
        values: dict[str, Any] = {}
        for key in ("name", "type", "category", "effect", "description"):
            value = data.get(key, "")
            if not isinstance(value, str):
                raise MoveFormatError(f"{key} must be a string, got {value!r}")
            values[key] = value.strip()
        for key in ("power", "accuracy", "pp", "effect_chance"):
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise MoveFormatError(f"{key} must be a whole number, got {value!r}")
            if float(value) != int(value):
                raise MoveFormatError(f"{key} must be a whole number, got {value!r}")
            values[key] = int(value)
        values["type"] = values["type"].capitalize()
        values["category"] = values["category"].capitalize()
        values["effect"] = values["effect"].lower().replace(" ", "_") or "none"
        if values["type"] not in TYPES:
            raise MoveFormatError(f"type must be one of {', '.join(TYPES)}; got {data['type']!r}")
        if values["category"] not in CATEGORIES:
            raise MoveFormatError(
                "category must be Physical or Special (designs are attacks); "
                f"got {data['category']!r}"
            )
        if values["effect"] not in EFFECTS:
            raise MoveFormatError(
                f"effect must be one of {', '.join(EFFECTS)}; got {data['effect']!r}"
            )
        if not values["name"]:
            raise MoveFormatError("name must not be empty")
        return cls(**values)

    # ------------------------------------------------------------------ Showdown
    def to_showdown(self, num: int) -> dict[str, Any]:
        """The entry of Showdown's move table for this design (``num`` must be unique)."""
        entry: dict[str, Any] = {
            "num": num,
            "name": self.name,
            "type": self.type,
            "category": self.category,
            "basePower": self.power,
            "accuracy": self.accuracy if self.accuracy < 100 else 100,
            "pp": self.pp,
            "priority": 0,
            "flags": {"protect": 1, "mirror": 1, "metronome": 1},
            "target": "normal",
            "desc": self.description or f"A {self.type}-type attack designed for pokegym.",
            "shortDesc": self.description or f"A {self.type}-type attack.",
        }
        if self.category == "Physical":
            entry["flags"]["contact"] = 1
        if self.has_effect and self.effect_chance > 0:
            secondary: dict[str, Any] = {"chance": self.effect_chance}
            if self.effect in _STATUS:
                secondary["status"] = _STATUS[self.effect]
            elif self.effect in _VOLATILE:
                secondary["volatileStatus"] = _VOLATILE[self.effect]
            elif self.effect in _LOWER:
                secondary["boosts"] = {_LOWER[self.effect]: -1}
            else:
                secondary["self"] = {"boosts": {_RAISE[self.effect]: 1}}
            entry["secondary"] = secondary
        else:
            entry["secondary"] = None
        return entry

    @classmethod
    def from_showdown(cls, entry: Mapping[str, Any]) -> MoveDesign | None:
        """A real Showdown move in design form, or None when it does not fit the shape.

        Fits: a Physical/Special move with a fixed base power, a numeric accuracy (moves
        that never miss count as 100) and at most one secondary effect expressible as an
        effect word (one stage, as designs have). Moves with other mechanics (recoil,
        drain, priority, multi-hit, charge turns, self stat drops, callbacks that change
        power...) return None: the evaluator has no terms for them.
        """
        if entry.get("category") not in CATEGORIES or not entry.get("basePower"):
            return None
        if entry.get("isNonstandard") or entry.get("isZ") or entry.get("isMax"):
            return None
        for key in ("recoil", "drain", "multihit", "self", "selfdestruct", "heal",
                    "mindBlownRecoil", "ohko", "damage", "overrideOffensiveStat",
                    "overrideDefensiveStat",
                    "overrideOffensivePokemon", "willCrit", "selfSwitch", "forceSwitch",
                    "volatileStatus", "status", "boosts", "sideCondition", "weather", "terrain",
                    "pseudoWeather", "hasCrashDamage", "struggleRecoil", "breaksProtect",
                    "ignoreDefensive", "ignoreEvasion", "ignoreImmunity", "thawsTarget",
                    "stallingMove", "sleepUsable", "tracksTarget"):  # fmt: skip
            if entry.get(key):
                return None
        if (entry.get("critRatio") or 1) > 1:  # 1 is every move's default, not a raised ratio
            return None
        if entry.get("priority", 0) != 0 or len(entry.get("secondaries") or ()) > 1:
            return None
        flags = entry.get("flags") or {}
        if flags.get("charge") or flags.get("recharge") or flags.get("futuremove"):
            return None
        callbacks = entry.get("callbacks") or ()
        if callbacks:
            return None
        accuracy = entry.get("accuracy")
        accuracy = 100 if accuracy is True else accuracy
        if not isinstance(accuracy, int):
            return None
        effect, chance = "none", 0
        secondary = entry.get("secondary")
        if not secondary and entry.get("secondaries"):
            secondary = entry["secondaries"][0]
        if secondary:
            chance = int(secondary.get("chance", 100))
            effect = _effect_word(secondary)
            if effect is None:
                return None
        return cls(
            name=str(entry["name"]),
            type=str(entry["type"]),
            category=str(entry["category"]),
            power=int(entry["basePower"]),
            accuracy=int(accuracy),
            pp=int(entry.get("pp", 0)),
            effect=effect,
            effect_chance=chance,
            description=str(entry.get("shortDesc") or ""),
        )


def _effect_word(secondary: Mapping[str, Any]) -> str | None:
    keys = set(secondary) - {"chance"}
    if keys == {"status"}:
        return next((w for w, s in _STATUS.items() if s == secondary["status"]), None)
    if keys == {"volatileStatus"}:
        return next((w for w, v in _VOLATILE.items() if v == secondary["volatileStatus"]), None)
    if keys == {"boosts"} and len(secondary["boosts"]) == 1:
        ((stat, stages),) = secondary["boosts"].items()
        return f"lower_{stat}" if stages == -1 and stat in _STAT_NAMES else None
    own = secondary.get("self") or {}
    if keys == {"self"} and set(own) == {"boosts"} and len(own["boosts"]) == 1:
        ((stat, stages),) = secondary["self"]["boosts"].items()
        return f"raise_{stat}" if stages == 1 and f"raise_{stat}" in _RAISE else None
    return None
