"""Reading a battle's protocol lines: what the opponent revealed, turn orders and
direct hits (:class:`ProtocolTracker`; :mod:`pokegym.world.priors.battle_history` runs it
over the lines a poke-env battle object keeps)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pokegym.showdown.protocol import Message, ProtocolReader, parse_condition, pokemon_ident
from pokegym.world.data import load_dex, to_id
from pokegym.world.priors.turn_order import SpeedFacts, TurnOrder


# --------------------------------------------------------------------------- protocol
def _parse_hp(text: str) -> tuple[tuple[int, int] | None, str]:
    """``"50/100 par"`` -> ((50, 100), "par"); a fainted Pokémon -> ((0, 1), "fnt");
    HP without a maximum is out of 100; unreadable HP -> (None, status)."""
    parts = text.split()
    if not parts:
        return None, ""
    status = parts[1] if len(parts) > 1 else ""
    if parts[0] == "0" or status == "fnt":
        return (0, 1), "fnt"
    try:
        hp, max_hp, _ = parse_condition(text)
    except ValueError:
        return None, status
    return (hp, 100 if max_hp is None else max_hp), status


@dataclass(frozen=True)
class DamageEvent:
    """One direct hit seen in the protocol (no crit filtering: see ``critical``).

    Attributes:
        turn: the turn.
        attacker / defender: identifiers (``"p1: Name"``).
        move: the move id.
        fraction_lost: fraction of the defender's maximum HP the hit took, as shown
            (the opponent's in percent steps, ours exactly).
        critical: the hit was critical.
        multi_hit: the move hits several times (this is the first hit).
        hp_before: the defender's HP fraction before the hit.
    """

    turn: int
    attacker: str
    defender: str
    move: str
    fraction_lost: float
    critical: bool
    multi_hit: bool
    hp_before: float


@dataclass(frozen=True)
class ObservedTurnOrder:
    """A turn in which both active Pokémon moved, as read from the protocol.

    Our side's Speed stat, item and ability are not in the protocol; :func:`turn_orders`
    fills them from the battle (:meth:`resolve`).
    """

    turn: int
    ours: str
    theirs: str
    our_move: str
    their_move: str
    they_moved_first: bool
    our_facts: SpeedFacts
    their_facts: SpeedFacts
    trick_room: bool
    weather: str
    terrain: str
    gen: int
    event_index: int
    their_stint: int

    def resolve(self, our_speed: int, our_item: str, our_ability: str) -> TurnOrder:
        return TurnOrder(
            our_speed=int(our_speed),
            they_moved_first=self.they_moved_first,
            our_move=self.our_move,
            their_move=self.their_move,
            ours=replace(self.our_facts, item=to_id(our_item), ability=to_id(our_ability)),
            theirs=self.their_facts,
            trick_room=self.trick_room,
            weather=self.weather,
            terrain=self.terrain,
            gen=self.gen,
            turn=self.turn,
        )


@dataclass
class _Side:
    active: str = ""
    species: str = ""
    boost: int = 0
    boost_known: bool = True
    tailwind: bool = False
    swamp: bool = False
    stint: int = 0
    speed_ability: bool = False
    slow_start: bool = False
    dynamaxed: bool = False
    item_lost: bool = False
    unsure: bool = False  # ability swapped/suppressed, transformed: skip its turns
    baton_pass: bool = False
    air_lock: bool = False
    transformed: bool = False


_SWAP_SOURCES = frozenset(
    {"trick", "switcheroo", "thief", "covet", "bestow", "pickpocket", "magician", "symbiosis",
     "pickup"}
)  # fmt: skip
_ABILITY_CHANGERS = frozenset(
    {"skillswap", "roleplay", "entrainment", "doodle", "simplebeam", "worryseed", "mummy",
     "lingeringaroma", "wanderingspirit", "trace", "powerofalchemy", "receiver", "gastroacid",
     "coreenforcer"}
)  # fmt: skip
_PRIORITY_ACTIVATIONS = frozenset({"quickclaw", "quickdraw", "custapberry"})
_HANDLERS: dict[str, str] = {
    "turn": "_on_turn",
    "switch": "_on_switch",
    "drag": "_on_switch",
    "replace": "_on_replace",
    "detailschange": "_on_formechange",
    "-formechange": "_on_formechange",
    "-damage": "_on_damage",
    "-heal": "_on_damage",
    "-sethp": "_on_damage",
    "-crit": "_on_crit",
    "faint": "_on_faint",
    "-status": "_on_status",
    "-curestatus": "_on_curestatus",
    "-cureteam": "_on_cureteam",
    "-boost": "_on_boost",
    "-unboost": "_on_boost",
    "-setboost": "_on_setboost",
    "-clearboost": "_on_clearboost",
    "-clearallboost": "_on_clearallboost",
    "-clearnegativeboost": "_on_clearnegativeboost",
    "-clearpositiveboost": "_on_clearpositiveboost",
    "-invertboost": "_on_invertboost",
    "-swapboost": "_uncertain",
    "-copyboost": "_uncertain",
    "-transform": "_on_transform",
    "-weather": "_on_weather",
    "-fieldstart": "_on_fieldstart",
    "-fieldend": "_on_fieldend",
    "-sidestart": "_on_sidestart",
    "-sideend": "_on_sideend",
    "-start": "_on_start",
    "-end": "_on_end",
    "-ability": "_on_ability",
    "-endability": "_on_endability",
    "-activate": "_on_activate",
    "-enditem": "_on_enditem",
    "-item": "_on_item",
    "move": "_on_move",
    "cant": "_on_cant",
}


class ProtocolTracker(ProtocolReader):
    """Walks one player's protocol lines and keeps what the priors need.

    Feed it the split lines (``["", "move", "p2a: X", "Tackle", ...]``, as poke-env's
    ``battle._replay_data`` holds them) with :meth:`feed`. It collects

    * ``orders``: an :class:`ObservedTurnOrder` per turn in which both sides used a
      move (read at the first move of the turn: boosts, status, Tailwind, Trick Room,
      weather, terrain, Protosynthesis/Quark Drive Speed, Unburden, Dynamax);
    * the opponent's *original* items (``original_items``) from ``-enditem``/``-item``
      lines, and which Pokémon swapped items (``swapped``);
    * ``damage``: :class:`DamageEvent` per direct hit.

    Args:
        our_role: ``"p1"`` or ``"p2"``.
        gen: the generation.
    """

    HANDLERS = _HANDLERS

    def __init__(self, our_role: str, gen: int = 9):
        if our_role not in ("p1", "p2"):
            raise ValueError(f"our_role is 'p1' or 'p2', got {our_role!r}")
        self.our_role = our_role
        self.their_role = "p2" if our_role == "p1" else "p1"
        self.gen = gen
        self.sides = {"p1": _Side(), "p2": _Side()}
        self.hp: dict[str, tuple[int, int]] = {}
        self.status: dict[str, str] = {}
        self.weather = ""
        self.terrain = ""
        self.trick_room = False
        self.turn = 0
        self.events = 0
        self.orders: list[ObservedTurnOrder] = []
        self.damage: list[DamageEvent] = []
        self.original_items: dict[str, str] = {}
        self.current_items: dict[str, str] = {}
        self.swapped: set[str] = set()
        self.item_events: dict[str, list[tuple[int, str, str]]] = {}
        self.forme_changes: dict[str, list[int]] = {}
        self.invalid_stints: set[tuple[str, int]] = set()
        #: Pokémon that transformed (Transform, Imposter), the ability the log gave for
        #: it, and the moves each used while transformed / not transformed.
        self.transformed: set[str] = set()
        self.transform_abilities: dict[str, str] = {}
        self.moves_transformed: dict[str, set[str]] = {}
        self.moves_own: dict[str, set[str]] = {}
        self._first: dict[str, tuple[str, str | None]] = {}
        self._first_role = ""
        self.swapped_at: dict[str, int] = {}
        self._snapshot: tuple[Any, ...] | None = None
        self._skip_turn = False
        self._hit: dict[str, Any] | None = None

    # ------------------------------------------------------------ helpers
    def _side(self, ident: str) -> _Side:
        return self.sides[ident[:2]]

    def _is_active(self, ident: str) -> bool:
        return self._side(ident).active == ident

    def _item_event(self, ident: str, kind: str, item: str) -> None:
        self.item_events.setdefault(ident, []).append((self.events, kind, item))

    def _facts(self, role: str) -> SpeedFacts:
        side = self.sides[role]
        hp = self.hp.get(side.active)
        return SpeedFacts(
            boost=side.boost,
            status=self.status.get(side.active, ""),
            tailwind=side.tailwind,
            swamp=side.swamp,
            item=None,
            ability=None,
            speed_ability_boost=side.speed_ability,
            item_lost=side.item_lost,
            slow_start=side.slow_start,
            dynamaxed=side.dynamaxed,
            hp_full=hp is None or hp[0] >= hp[1],
            species=side.species or None,
        )

    def _take_snapshot(self) -> None:
        ours, theirs = self.sides[self.our_role], self.sides[self.their_role]
        usable = ours.boost_known and theirs.boost_known and not ours.unsure and not theirs.unsure
        their_facts = self._facts(self.their_role)
        ident = theirs.active
        if ident in self.swapped or self.current_items.get(ident) == "":
            their_facts = replace(their_facts, item=self.current_items.get(ident))
        weather = "" if (ours.air_lock or theirs.air_lock) else self.weather
        self._snapshot = (
            usable,
            ours.active,
            theirs.active,
            self._facts(self.our_role),
            their_facts,
            self.trick_room,
            weather,
            self.terrain,
            self.events,
            theirs.stint,
        )

    def _record_order(self) -> None:
        if self._snapshot is None or self._skip_turn:
            return
        usable, ours, theirs, our_facts, their_facts, tr, weather, terrain, index, stint = (
            self._snapshot
        )
        our_ident, our_move = self._first[self.our_role]
        their_ident, their_move = self._first[self.their_role]
        if not usable or our_move is None or their_move is None:
            return
        if our_ident != ours or their_ident != theirs:
            return
        first_role = self._first_role
        self.orders.append(
            ObservedTurnOrder(
                turn=self.turn,
                ours=ours,
                theirs=theirs,
                our_move=our_move,
                their_move=their_move,
                they_moved_first=first_role == self.their_role,
                our_facts=our_facts,
                their_facts=their_facts,
                trick_room=tr,
                weather=weather,
                terrain=terrain,
                gen=self.gen,
                event_index=index,
                their_stint=stint,
            )
        )

    def _action(self, ident: str, move: str | None) -> None:
        role = ident[:2]
        if role in self._first:
            return
        if not self._first:
            self._first_role = role
            self._take_snapshot()
        self._first[role] = (ident, move)
        if len(self._first) == 2:
            self._record_order()

    # ------------------------------------------------------------ feeding
    def feed(self, line: str | Sequence[str]) -> None:
        """Take one protocol line, split (``["", "move", ...]``) or raw (``"|move|..."``)."""
        if isinstance(line, str) and not line.startswith("|"):
            return
        self.events += 1  # every line counts: item events are ordered by it
        super().feed(line)

    def on_message(self, message: Message) -> bool:
        return bool(message.args) or message.kind == "-clearallboost"

    def _on_turn(self, m: Message) -> None:
        try:
            self.turn = int(m.args[0])
        except ValueError:
            return
        self._first = {}
        self._snapshot = None
        self._skip_turn = False
        self._hit = None

    def _on_switch(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        side = self._side(ident)
        keep = side.baton_pass
        side.active = ident
        side.species = to_id(m.args[1].split(",")[0]) if len(m.args) > 1 else ""
        side.stint += 1
        if not keep:
            side.boost, side.boost_known = 0, True
        side.speed_ability = side.slow_start = side.dynamaxed = side.item_lost = False
        side.unsure = side.baton_pass = side.air_lock = side.transformed = False
        if len(m.args) > 2:
            self._set_hp(ident, m.args[2])
        self._hit = None

    def _on_replace(self, m: Message) -> None:
        # Illusion broke: what we attributed to the disguise during this stint is wrong.
        ident = pokemon_ident(m.args[0])
        side = self._side(ident)
        self.invalid_stints.add((ident[:2], side.stint))
        side.active = ident
        side.species = to_id(m.args[1].split(",")[0]) if len(m.args) > 1 else side.species

    def _on_formechange(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        self.forme_changes.setdefault(ident, []).append(self.events)
        if self._is_active(ident) and len(m.args) > 1:
            self._side(ident).species = to_id(m.args[1].split(",")[0])

    def _set_hp(self, ident: str, text: str) -> None:
        hp, status = _parse_hp(text)
        if hp is not None:
            self.hp[ident] = hp
        self.status[ident] = status

    def _on_damage(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        before = self.hp.get(ident)
        if len(m.args) > 1:
            self._set_hp(ident, m.args[1])
        hit = self._hit
        if (
            hit is not None
            and not hit["done"]
            and m.kind == "-damage"
            and not any(t.startswith("[from]") for t in m.tags)
            and ident[:2] != hit["attacker"][:2]
            and (hit["target"] in (None, ident))
        ):
            hit["done"] = True
            after = self.hp.get(ident)
            if before is not None and after is not None and before[1] > 0:
                self.damage.append(
                    DamageEvent(
                        turn=self.turn,
                        attacker=hit["attacker"],
                        defender=ident,
                        move=hit["move"],
                        fraction_lost=(before[0] - after[0]) / before[1],
                        critical=hit["crit"],
                        multi_hit=hit["multi"],
                        hp_before=before[0] / before[1],
                    )
                )

    def _on_crit(self, m: Message) -> None:
        if self._hit is not None:
            self._hit["crit"] = True

    def _on_faint(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        self.status[ident] = "fnt"
        hp = self.hp.get(ident)
        self.hp[ident] = (0, hp[1] if hp else 100)

    def _on_status(self, m: Message) -> None:
        if len(m.args) > 1:
            self.status[pokemon_ident(m.args[0])] = m.args[1]

    def _on_curestatus(self, m: Message) -> None:
        self.status[pokemon_ident(m.args[0])] = ""

    def _on_cureteam(self, m: Message) -> None:
        role = pokemon_ident(m.args[0])[:2]
        for ident in list(self.status):
            if ident.startswith(role) and self.status[ident] != "fnt":
                self.status[ident] = ""

    def _boost_of(self, ident: str) -> _Side | None:
        side = self._side(ident)
        return side if side.active == ident else None

    def _on_boost(self, m: Message) -> None:
        side = self._boost_of(pokemon_ident(m.args[0]))
        if side is None or len(m.args) < 3 or m.args[1] != "spe":
            return
        try:
            amount = int(m.args[2])
        except ValueError:
            side.boost_known = False
            return
        sign = -1 if m.kind == "-unboost" else 1
        side.boost = max(-6, min(6, side.boost + sign * amount))

    def _on_setboost(self, m: Message) -> None:
        side = self._boost_of(pokemon_ident(m.args[0]))
        if side is not None and len(m.args) > 2 and m.args[1] == "spe":
            try:
                side.boost = max(-6, min(6, int(m.args[2])))
            except ValueError:
                side.boost_known = False

    def _on_clearboost(self, m: Message) -> None:
        side = self._boost_of(pokemon_ident(m.args[0]))
        if side is not None:
            side.boost = 0

    def _on_clearallboost(self, m: Message) -> None:
        for side in self.sides.values():
            side.boost = 0

    def _on_clearnegativeboost(self, m: Message) -> None:
        side = self._boost_of(pokemon_ident(m.args[0]))
        if side is not None:
            side.boost = max(0, side.boost)

    def _on_clearpositiveboost(self, m: Message) -> None:
        side = self._boost_of(pokemon_ident(m.args[0]))
        if side is not None:
            side.boost = min(0, side.boost)
        if len(m.args) > 1 and m.args[1][:2] in ("p1", "p2"):
            thief = self._boost_of(pokemon_ident(m.args[1]))
            if thief is not None:
                thief.boost_known = False  # Spectral Thief took an unknown amount

    def _on_invertboost(self, m: Message) -> None:
        side = self._boost_of(pokemon_ident(m.args[0]))
        if side is not None:
            side.boost = -side.boost

    def _uncertain(self, m: Message) -> None:
        """Boosts or abilities changed in a way not tracked: skip these Pokémon's turns."""
        for part in m.parts[2:]:
            part = part[5:] if part.startswith("[of] ") else part
            if part[:2] in ("p1", "p2") and len(part) > 3 and ":" in part[2:4]:
                side = self._side(pokemon_ident(part))
                side.boost_known = False
                side.unsure = True

    def _on_transform(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        side = self._side(ident)
        side.boost_known = False
        side.unsure = side.transformed = True
        self.transformed.add(ident)
        for tag in m.tags:
            if tag.startswith("[from]") and "ability:" in tag:
                self.transform_abilities[ident] = to_id(tag.split(":")[-1])

    def own_moves(self, ident: str, moves: Iterable[str]) -> tuple[str, ...]:
        """Those of ``moves`` that ``ident`` used while not transformed (poke-env copies
        the target's moves into a transformed Pokémon's own)."""
        own = self.moves_own.get(ident, set())
        return tuple(m for m in moves if m in own)

    def _on_weather(self, m: Message) -> None:
        name = to_id(m.args[0])
        self.weather = "" if name == "none" else name

    def _on_fieldstart(self, m: Message) -> None:
        name = to_id(m.args[0].split(":")[-1])
        if name == "trickroom":
            self.trick_room = True
        elif name.endswith("terrain"):
            self.terrain = name

    def _on_fieldend(self, m: Message) -> None:
        name = to_id(m.args[0].split(":")[-1])
        if name == "trickroom":
            self.trick_room = False
        elif name == self.terrain:
            self.terrain = ""

    def _on_sidestart(self, m: Message) -> None:
        if len(m.args) > 1 and m.args[0][:2] in self.sides:
            self._side_condition(m.args[0][:2], to_id(m.args[1].split(":")[-1]), True)

    def _on_sideend(self, m: Message) -> None:
        if len(m.args) > 1 and m.args[0][:2] in self.sides:
            self._side_condition(m.args[0][:2], to_id(m.args[1].split(":")[-1]), False)

    def _side_condition(self, role: str, name: str, on: bool) -> None:
        if name == "tailwind":
            self.sides[role].tailwind = on
        elif name == "grasspledge":
            self.sides[role].swamp = on

    def _on_start(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        if not self._is_active(ident) or len(m.args) < 2:
            return
        effect = to_id(m.args[1].split(":")[-1])
        side = self._side(ident)
        if effect in ("protosynthesisspe", "quarkdrivespe"):
            side.speed_ability = True
        elif effect == "dynamax":
            side.dynamaxed = True
        elif effect == "slowstart":
            side.slow_start = True

    def _on_end(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        if not self._is_active(ident) or len(m.args) < 2:
            return
        effect = to_id(m.args[1].split(":")[-1])
        side = self._side(ident)
        if effect in ("protosynthesis", "quarkdrive"):
            side.speed_ability = False
        elif effect == "dynamax":
            side.dynamaxed = False
        elif effect == "slowstart":
            side.slow_start = False

    def _on_ability(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        if len(m.args) < 2 or not self._is_active(ident):
            return
        ability = to_id(m.args[1])
        side = self._side(ident)
        if ability in ("airlock", "cloudnine"):
            side.air_lock = True
        if ability == "neutralizinggas":
            for other in self.sides.values():
                other.unsure = True
        if m.sources() & _ABILITY_CHANGERS:
            side.unsure = True

    def _on_endability(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        if self._is_active(ident):
            self._side(ident).unsure = True

    def _on_activate(self, m: Message) -> None:
        if len(m.args) < 2:
            return
        effect = to_id(m.args[1].split(":")[-1])
        if effect in _PRIORITY_ACTIVATIONS and len(self._first) < 2:
            self._skip_turn = True
        elif effect in _ABILITY_CHANGERS:
            self._uncertain(m)

    def _on_enditem(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        item = to_id(m.args[1]) if len(m.args) > 1 else ""
        self._item_event(ident, "end", item)
        if item == "custapberry" and len(self._first) < 2:
            self._skip_turn = True
        if ident[:2] == self.their_role and ident not in self.swapped:
            self.original_items.setdefault(ident, item)
        self.current_items[ident] = ""
        if self._is_active(ident):
            self._side(ident).item_lost = True

    def _on_item(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        if len(m.args) < 2:
            return
        item = to_id(m.args[1])
        sources = m.sources()
        swap = bool(sources & _SWAP_SOURCES)
        if swap and sources & {"trick", "switcheroo"}:
            # The item came from the other active Pokémon: it was what that one held
            # (unless that one had already swapped before this Trick: two lines back).
            other_role = "p2" if ident[:2] == "p1" else "p1"
            other = self.sides[other_role].active
            earlier = self.swapped_at.get(other, self.events)
            if other_role == self.their_role and other and earlier >= self.events - 1:
                self.original_items.setdefault(other, item)
        self._item_event(ident, "gain" if swap else "reveal", item)
        if ident[:2] == self.their_role:
            if swap:
                self.swapped.add(ident)
                self.swapped_at.setdefault(ident, self.events)
            elif ident not in self.swapped and not (sources & {"recycle", "harvest"}):
                self.original_items.setdefault(ident, item)
        self.current_items[ident] = item
        if self._is_active(ident):
            self._side(ident).item_lost = False

    def _on_move(self, m: Message) -> None:
        ident = pokemon_ident(m.args[0])
        if len(m.args) < 2:
            return
        move = to_id(m.args[1])
        tags = m.tags
        called = any(t.startswith("[from]") and "lockedmove" not in t for t in tags)
        side = self._side(ident)
        if move == "batonpass":
            side.baton_pass = True
        if side.transformed and side.active == ident:
            self.moves_transformed.setdefault(ident, set()).add(move)
        elif not called or any("sleeptalk" in to_id(t) for t in tags):
            self.moves_own.setdefault(ident, set()).add(move)
        target = m.args[2] if len(m.args) > 2 and m.args[2][:2] in ("p1", "p2") else None
        missed = "[miss]" in tags or "[still]" in tags
        self._hit = {
            "attacker": ident,
            "move": move,
            "target": pokemon_ident(target) if target else None,
            "crit": False,
            "multi": False,
            "done": missed,
        }
        dex = load_dex(self.gen)
        entry = dex.moves.get(move)
        if entry is not None and entry.get("multihit"):
            self._hit["multi"] = True
        if called:
            return
        if entry is None:
            self._action(ident, None)
        else:
            self._action(ident, move)

    def _on_cant(self, m: Message) -> None:
        self._action(pokemon_ident(m.args[0]), None)

    # ------------------------------------------------------------ queries
    def our_item_at(self, ident: str, index: int, current: str | None) -> str | None:
        """Our Pokémon's item at event ``index`` (None: unknowable from the log).

        ``current`` is the item the battle shows now (``None`` = no item).
        """
        events = self.item_events.get(ident, [])
        before = [e for e in events if e[0] < index]
        if before:
            _, kind, item = before[-1]
            return "" if kind == "end" else item
        after = [e for e in events if e[0] >= index]
        if not after:
            return "" if current is None else to_id(current)
        _, kind, item = after[0]
        return item if kind in ("end", "reveal") else None

    def forme_stable_after(self, ident: str, index: int) -> bool:
        return all(i < index for i in self.forme_changes.get(ident, []))
