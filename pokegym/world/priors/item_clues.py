"""What the opponent's item did *not* do, as evidence about it.

Many items announce themselves when they act; a turn in which one would have acted and
nothing was announced rules it out. :class:`ClueTracker` (a
:class:`~pokegym.world.priors.hits.HitTracker`) records an :class:`ItemClue` for each:

* **Life Orb**: the opponent's move hit us and it took no recoil (unless Magic Guard, or
  Sheer Force with a move that has secondary effects; not when it fainted first);
* **Leftovers / Black Sludge**: an end of turn with the opponent's active Pokémon below
  full HP and no heal (unless Klutz; not when residual damage came after its last move,
  nor under Heal Block);
* **Flame Orb / Toxic Orb**: an end of turn with it free of status and no burn or poison
  from its item (unless its type or ability is immune, or Misty Terrain is up);
* **Heavy-Duty Boots**: it came in over Stealth Rock and took damage from a hazard (no
  Boots), or took none and is still standing (Boots, unless Magic Guard);
* **Choice items**: it used two different moves in a row without leaving the field.

A clue is only recorded while the Pokémon still holds the item it started with (no item
lost, used or swapped before), and not for a transformed Pokémon.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pokegym.showdown.protocol import Message, pokemon_ident
from pokegym.world.data import load_dex, to_id
from pokegym.world.priors.hits import HitTracker
from pokegym.world.sets import PokemonSet

CHOICE_ITEMS = frozenset({"choiceband", "choicespecs", "choicescarf"})
_BURN_IMMUNE = frozenset({"waterveil", "waterbubble", "thermalexchange", "comatose",
                          "purifyingsalt", "leafguard"})  # fmt: skip
_POISON_IMMUNE = frozenset({"immunity", "pastelveil", "comatose", "purifyingsalt", "leafguard"})
_TEMPLATE = "unknown"  # where a template set names its unknown fields (its ``extra``)


@dataclass(frozen=True)
class ItemClue:
    """``ident`` holds one of ``items`` (``has``) or none of them (not ``has``), unless
    its ability is one of ``unless``."""

    ident: str
    stint: tuple[str, int]
    has: bool
    items: frozenset[str]
    unless: frozenset[str]
    turn: int
    why: str

    def distance(self, pset: PokemonSet) -> float:
        """0 for a set consistent with the clue, 1 for one that is not."""
        if "item" in pset.extra.get(_TEMPLATE, frozenset()) or pset.ability in self.unless:
            return 0.0
        return 0.0 if (pset.item in self.items) == self.has else 1.0


class ClueTracker(HitTracker):
    """A :class:`HitTracker` that also records :class:`ItemClue` s (``clues``)."""

    HANDLERS = {**HitTracker.HANDLERS, "upkeep": "_on_upkeep"}

    def __init__(self, our_role: str, gen: int = 9):
        super().__init__(our_role, gen)
        self.clues: list[ItemClue] = []
        self._rocks = {"p1": False, "p2": False}
        self._tera_types: dict[str, str] = {}
        self._life_orb_window: dict[str, Any] | None = None
        self._entry: dict[str, Any] | None = None
        self._last_move: dict[str, tuple[int, str]] = {}
        self._after_move: set[str] = set()  # Pokémon hurt by a residual since the last move
        self._healed: set[str] = set()  # Pokémon healed by Leftovers / Black Sludge this turn
        self._no_heal: set[str] = set()  # under Heal Block at some time this turn
        self._heal_block: set[str] = set()

    def on_message(self, message: Message) -> bool:
        return message.kind == "upkeep" or super().on_message(message)

    # ------------------------------------------------------------ helpers
    def _theirs(self, ident: str) -> bool:
        return ident[:2] == self.their_role

    def _original_item(self, ident: str) -> bool:
        """No item of ``ident`` lost, used or swapped so far."""
        return all(kind == "reveal" for _, kind, _ in self.item_events.get(ident, []))

    def _clue(self, ident: str, has: bool, items: frozenset[str] | set[str], why: str,
              unless: frozenset[str] | set[str] = frozenset()) -> None:  # fmt: skip
        side = self._side(ident)
        if side.transformed or not self._original_item(ident):
            return
        self.clues.append(ItemClue(ident, (ident[:2], side.stint), has, frozenset(items),
                                   frozenset(unless), self.turn, why))  # fmt: skip

    def _types(self, ident: str) -> set[str]:
        if ident in self._tera_types:
            return {self._tera_types[ident]}
        entry = load_dex(self.gen).species.get(self._side(ident).species) or {}
        return {to_id(t) for t in entry.get("types", [])}

    def _close_windows(self, entry: bool = True) -> None:
        """An action or the end of the turn: decide the open Life Orb window, and the
        entry window unless told not to (Showdown sends in both sides' Pokémon before
        either meets the hazards)."""
        recoil, self._life_orb_window = self._life_orb_window, None
        if recoil is not None and not recoil["seen"]:
            hp = self.hp.get(recoil["ident"])
            if hp is not None and hp[0] > 0:
                unless = {"magicguard"} | ({"sheerforce"} if recoil["secondary"] else set())
                self._clue(recoil["ident"], False, {"lifeorb"}, "no Life Orb recoil", unless)
        if not entry:
            return
        entry, self._entry = self._entry, None
        if entry is not None:
            hp = self.hp.get(entry["ident"])
            if entry["hurt"]:
                self._clue(entry["ident"], False, {"heavydutyboots"}, "hurt by Stealth Rock")
            elif hp is not None and hp[0] > 0:
                self._clue(entry["ident"], True, {"heavydutyboots"}, "no Stealth Rock damage",
                           {"magicguard"})  # fmt: skip

    # ------------------------------------------------------------ handlers
    def _on_turn(self, m: Message) -> None:
        self._close_windows()
        self._healed = set()
        self._after_move = set()
        self._no_heal = set(self._heal_block)
        super()._on_turn(m)

    def _on_move(self, m: Message) -> None:
        self._close_windows()
        self._after_move = set()
        super()._on_move(m)
        ident = pokemon_ident(m.args[0]) if m.args else ""
        if not self._theirs(ident) or len(m.args) < 2:
            return
        move = to_id(m.args[1])
        called = any(t.startswith("[from]") and "lockedmove" not in t for t in m.tags)
        side = self._side(ident)
        if called or move in ("struggle", "recharge") or side.dynamaxed or side.active != ident:
            return
        last = self._last_move.get(ident)
        if last is not None and last[0] == side.stint and last[1] != move:
            self._clue(ident, False, CHOICE_ITEMS, "two different moves in a row", {"klutz"})
        self._last_move[ident] = (side.stint, move)

    def _on_cant(self, m: Message) -> None:
        self._close_windows()
        super()._on_cant(m)

    def _on_switch(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        self._close_windows(entry=self._theirs(ident))
        self._heal_block.discard(self.sides[ident[:2]].active)
        super()._on_switch(m)
        if self._theirs(ident) and self._rocks[ident[:2]]:
            self._entry = {"ident": ident, "hurt": False}

    def _on_damage(self, m: Message) -> None:
        seen = len(self.hits)
        super()._on_damage(m)
        ident = pokemon_ident(m.args[0])
        source = " ".join(t for t in m.tags if t.startswith("[from]")).lower()
        if m.kind == "-damage" and source:
            self._after_move.add(ident)
            recoil = self._life_orb_window
            if recoil is not None and recoil["ident"] == ident and "life orb" in source:
                recoil["seen"] = True
            entry = self._entry
            if (
                entry is not None
                and entry["ident"] == ident
                and ("stealth rock" in source or "spikes" in source)
            ):
                entry["hurt"] = True
        elif m.kind == "-heal" and source and ("leftovers" in source or "black sludge" in source):
            self._healed.add(ident)
        if len(self.hits) > seen:
            event = self.hits[-1].event
            if self._theirs(event.attacker) and self._life_orb_window is None:
                entry = load_dex(self.gen).moves.get(event.move) or {}
                self._life_orb_window = {"ident": event.attacker, "seen": False,
                                    "secondary": bool(entry.get("secondaries"))}  # fmt: skip

    def _on_sidestart(self, m: Message) -> None:
        super()._on_sidestart(m)
        if len(m.args) > 1 and m.args[0][:2] in self._rocks and "stealthrock" in to_id(m.args[1]):
            self._rocks[m.args[0][:2]] = True

    def _on_sideend(self, m: Message) -> None:
        super()._on_sideend(m)
        if len(m.args) > 1 and m.args[0][:2] in self._rocks and "stealthrock" in to_id(m.args[1]):
            self._rocks[m.args[0][:2]] = False

    def _on_start(self, m: Message) -> None:
        super()._on_start(m)
        if len(m.args) > 1 and to_id(m.args[1].split(":")[-1]) == "healblock":
            ident = pokemon_ident(m.args[0])
            self._heal_block.add(ident)
            self._no_heal.add(ident)

    def _on_end(self, m: Message) -> None:
        super()._on_end(m)
        if len(m.args) > 1 and to_id(m.args[1].split(":")[-1]) == "healblock":
            self._heal_block.discard(pokemon_ident(m.args[0]))

    def _on_terastallize(self, m: Message) -> None:
        super()._on_terastallize(m)
        if len(m.args) > 1:
            self._tera_types[pokemon_ident(m.args[0])] = to_id(m.args[1])

    def _on_upkeep(self, m: Message) -> None:
        self._close_windows()
        ident = self.sides[self.their_role].active
        hp = self.hp.get(ident)
        if not ident or hp is None or hp[0] <= 0:
            return
        unknown = self._healed | self._after_move | self._no_heal
        if hp[0] < hp[1] and ident not in unknown:
            self._clue(ident, False, {"leftovers", "blacksludge"}, "no heal at the end of a turn",
                       {"klutz"})  # fmt: skip
        if self.status.get(ident, "") == "" and self.terrain != "mistyterrain":
            types = self._types(ident)
            if "fire" not in types:
                self._clue(ident, False, {"flameorb"}, "no burn from an orb", _BURN_IMMUNE)
            if not types & {"poison", "steel"}:
                self._clue(ident, False, {"toxicorb"}, "no poison from an orb", _POISON_IMMUNE)


__all__ = ["CHOICE_ITEMS", "ClueTracker", "ItemClue"]
