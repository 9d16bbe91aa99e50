"""Replaying an omniscient battle log for ``pokegym bench calc``: the state that matters
for damage, tracked line by line, and every direct hit predicted and tallied.

:class:`LogReplay` follows the active Pokémon, HP, boosts, status, item and ability
changes, Tera, formes, volatiles, weather, terrain and screens of both sides (both teams'
full sets are known); at each direct damaging hit (a ``-damage`` line on the target with
no ``[from]``) it asks :func:`pokegym.world.damage.calculate` for the damage from the
state just before the move and records the prediction and the exact HP lost in a
:class:`Tally`.
"""

from __future__ import annotations

import time
from typing import Any

from bench.log_state import Hit, Mon, SideState, Tally
from pokegym.showdown.protocol import (
    Message,
    ProtocolReader,
    effect_id,
    parse_condition,
    parse_details,
)
from pokegym.world.damage import Combatant, Field, Side, calculate, known_species
from pokegym.world.data import Dex, to_id
from pokegym.world.sets import PokemonSet, compute_stats

_BOOST_NAMES = ("atk", "def", "spa", "spd", "spe", "accuracy", "evasion")
_WEATHER = {
    "sunnyday": "sunnyday", "raindance": "raindance", "sandstorm": "sandstorm",
    "snowscape": "snowscape", "snow": "snowscape", "hail": "hail",
    "desolateland": "desolateland", "primordialsea": "primordialsea",
    "deltastream": "deltastream",
}  # fmt: skip
_TERRAINS = frozenset(("electricterrain", "grassyterrain", "mistyterrain", "psychicterrain"))
_SCREENS = {"reflect": "reflect", "lightscreen": "light_screen", "auroraveil": "aurora_veil",
            "tailwind": "tailwind"}  # fmt: skip
# Moves whose damage leaves the target at 1 HP at least.
_NO_KO_MOVES = frozenset(("falseswipe", "holdback"))
_PROTECTIONS = frozenset((
    "protect", "detect", "kingsshield", "spikyshield", "banefulbunker", "obstruct",
    "silktrap", "burningbulwark", "maxguard",
))  # fmt: skip
# Protocol messages without a leading "-" that change the tracked state.
_PLAIN_MESSAGES = frozenset(("switch", "drag", "replace", "detailschange", "move", "cant", "faint"))


class LogReplay(ProtocolReader):
    """Replays one omniscient battle log and collects the hits it shows."""

    def __init__(self, dex: Dex, format_id: str, teams: list[list[dict[str, Any]]], tally: Tally):
        self.dex = dex
        self.format_id = format_id
        self.tally = tally
        self.sides: dict[str, SideState] = {}
        for role, team in zip(("p1", "p2"), teams, strict=True):
            mons: dict[str, Mon] = {}
            for data in team:
                pokemon_set = PokemonSet.from_showdown(data)
                name = str(data.get("name") or data.get("species"))
                mons[name] = self._new_mon(name, pokemon_set)
            self.sides[role] = SideState(mons)
        self.weather = ""
        self.terrain = ""
        self.pseudo: set[str] = set()
        self.turn = 0
        # The move being executed: (attacker, defender, move id, snapshots, hits so far).
        self.current: dict[str, Any] | None = None
        self.pending_crit: set[str] = set()
        self.pending_censor: set[str] = set()
        self.delayed = False  # a Future Sight / Doom Desire hit is due

    # -- building
    def _new_mon(self, name: str, pokemon_set: PokemonSet) -> Mon:
        species = known_species(self.dex, pokemon_set.species)
        stats = compute_stats(
            self.dex, species, pokemon_set.level, pokemon_set.evs, pokemon_set.ivs,
            pokemon_set.nature,
        )  # fmt: skip
        mon = Mon(
            name=name, pokemon_set=pokemon_set, species=species, level=pokemon_set.level,
            gender=pokemon_set.gender if pokemon_set.gender in ("M", "F") else "",
            stats=stats, types=tuple(self.dex.species_entry(species)["types"]),
            hp=stats["hp"], max_hp=stats["hp"], item=pokemon_set.item,
            ability=pokemon_set.ability, tera_type=pokemon_set.tera_type,
        )  # fmt: skip
        mon.remember_base()
        return mon

    def _set_species(self, mon: Mon, species_name: str) -> None:
        try:
            species = known_species(self.dex, species_name)
        except KeyError:
            return
        if species == mon.species:
            return
        s = mon.pokemon_set
        stats = compute_stats(self.dex, species, mon.level, s.evs, s.ivs, s.nature)
        stats["hp"] = mon.max_hp  # a forme change keeps the HP stat
        mon.species, mon.stats = species, stats
        mon.types = tuple(self.dex.species_entry(species)["types"])

    def _mon(self, ident: str) -> Mon | None:
        role = ident[:2]
        side = self.sides.get(role)
        if side is None:
            return None
        if ident[2:3] == "a" and side.active is not None:
            return side.active  # "p1a: ...": the active Pokémon (even under an Illusion)
        name = ident.split(": ", 1)[1] if ": " in ident else ident[4:]
        return side.mons.get(name)

    # -- the combatants the calculator sees
    def _combatant(
        self, mon: Mon, other: Mon, item: str | None = None, hp: int | None = None
    ) -> Combatant:
        types = mon.type_override or mon.types
        if "roost" in mon.volatiles and not mon.terastallized and "Flying" in types:
            types = tuple(t for t in types if t != "Flying") or ("Normal",)
        volatiles = set(mon.volatiles)
        return Combatant(
            species=mon.species, level=mon.level, types=types, stats=dict(mon.stats),
            hp=mon.hp if hp is None else hp, boosts=dict(mon.boosts), ability=mon.ability,
            item=mon.item if item is None else item, status=mon.status,
            tera_type=mon.tera_type, terastallized=mon.terastallized, gender=mon.gender,
            original_types=mon.types if mon.terastallized and mon.type_override is None else None,
            paradox_stat=mon.paradox, volatiles=frozenset(volatiles),
            ability_suppressed=mon.ability_suppressed, just_switched_in=mon.switched_this_turn,
            times_attacked=mon.times_attacked,
            fainted_allies=self.sides[self._role_of(mon)].fainted,
            hurt_by_target=other.name in mon.hurt_by, stats_lowered_this_turn=mon.lowered_this_turn,
            damage_taken_this_turn=tuple(mon.taken_this_turn),
            last_move_failed=mon.last_move_failed,
        )  # fmt: skip

    def _role_of(self, mon: Mon) -> str:
        for role, side in self.sides.items():
            if side.mons.get(mon.name) is mon:
                return role
        raise KeyError(mon.name)

    def _field(self, attacker_role: str) -> Field:
        def side(role: str) -> Side:
            conditions = self.sides[role].conditions
            return Side(
                reflect="reflect" in conditions, light_screen="light_screen" in conditions,
                aurora_veil="aurora_veil" in conditions, tailwind="tailwind" in conditions,
            )  # fmt: skip

        defender_role = "p2" if attacker_role == "p1" else "p1"
        return Field(
            weather=self.weather, terrain=self.terrain, gravity="gravity" in self.pseudo,
            attacker_side=side(attacker_role), defender_side=side(defender_role),
            trick_room="trickroom" in self.pseudo, magic_room="magicroom" in self.pseudo,
            wonder_room="wonderroom" in self.pseudo,
        )  # fmt: skip

    # -- the replay
    def run(self, log: str) -> None:
        for line in log.split("\n"):
            try:
                self.feed(line)
            except (KeyError, ValueError, IndexError) as exc:
                self.tally.excluded[f"log line not understood ({type(exc).__name__})"] += 1

    def on_message(self, message: Message) -> bool:
        kind = message.kind
        if kind in ("", "upkeep"):
            self.current = None
            return False
        if kind == "turn":
            self.current = None
            self.turn = int(message.args[0])
            for side in self.sides.values():
                for mon in side.mons.values():
                    mon.switched_this_turn = mon.acted_this_turn = mon.lowered_this_turn = False
                    mon.hurt_by.clear()
                    mon.taken_this_turn.clear()
                    mon.last_move_failed = mon.move_result is False
                    mon.move_result = None
                    mon.volatiles.discard("roost")
                    mon.volatiles.discard("protect")
            return False
        return True

    # switching
    def _on_switch(self, m: Message) -> None:
        self.current = None
        role = m.args[0][:2]
        side = self.sides[role]
        name = m.args[0].split(": ", 1)[1]
        species = parse_details(m.args[1])[0]
        hp, max_hp, status = parse_condition(m.args[2])
        mon = side.mons.get(name)
        if mon is None or (max_hp is not None and mon.max_hp != max_hp):
            # Illusion: the log shows the disguise's name with the true Pokémon's HP.
            candidates = [
                c for c in side.mons.values() if c.ability == "illusion" and not c.fainted
            ]
            if max_hp is not None:
                candidates = [c for c in candidates if c.max_hp == max_hp] or candidates
            if not candidates:
                raise KeyError(name)
            mon = candidates[0]
        disguised = mon.name != name
        previous = side.active
        passed = previous if side.baton_pass and previous is not None else None
        mon.reset_volatile_state(passed)
        if disguised:
            mon.volatiles.add("illusion")
        side.baton_pass = False
        if previous is not None and previous is not mon:
            previous.reset_volatile_state()
            previous.restore_base()
        side.active = mon
        if "illusion" not in mon.volatiles and to_id(species) != mon.species:
            self._set_species(mon, species)
            mon.remember_base()
        mon.hp = hp
        self._set_max_hp(mon, max_hp)
        mon.status = "" if status in ("", "fnt") else status
        mon.switched_this_turn = True

    _on_drag = _on_switch

    def _on_replace(self, m: Message) -> None:
        side = self.sides[m.args[0][:2]]
        name = m.args[0].split(": ", 1)[1]
        mon = side.mons.get(name)
        if mon is not None and side.active is not None and mon is not side.active:
            mon.boosts, mon.volatiles = side.active.boosts, side.active.volatiles
            side.active = mon
        if mon is not None:
            mon.volatiles.discard("illusion")

    def _on_detailschange(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is None:
            return
        self._set_species(mon, parse_details(m.args[1])[0])
        # A permanent forme change gives the forme's ability (Showdown's formeChange),
        # except the busted/thawed formes of Disguise and Ice Face.
        if mon.ability not in ("disguise", "iceface"):
            abilities = self.dex.species_entry(mon.species).get("abilities") or {}
            if abilities.get("0"):
                mon.ability = to_id(abilities["0"])
        mon.remember_base()

    def _on_formechange(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            self._set_species(mon, parse_details(m.args[1])[0])

    def _on_transform(self, m: Message) -> None:
        # Transform copies the target's species, types, ability, stats but HP, and boosts.
        mon, target = self._mon(m.args[0]), self._mon(m.args[1])
        if mon is None or target is None:
            return
        mon.transformed = True
        mon.species = target.species
        mon.type_override = target.type_override or target.types
        mon.ability = target.ability
        mon.stats = {**target.stats, "hp": mon.max_hp}
        mon.boosts = dict(target.boosts)

    def _on_faint(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None and not mon.fainted:
            mon.fainted = True
            mon.hp = 0
            mon.status = ""
            mon.terastallized = False  # Showdown forgets Tera on fainting (Revival Blessing)
            self.sides[m.args[0][:2]].fainted += 1

    # moves and damage
    def _on_move(self, m: Message) -> None:
        attacker = self._mon(m.args[0])
        if attacker is None:
            self.current = None
            return
        move = to_id(m.args[1])
        role = m.args[0][:2]
        other = self.sides["p2" if role == "p1" else "p1"].active
        attacker.acted_this_turn = True
        attacker.move_result = True
        attacker.volatiles.discard("glaiverush")
        if move == "batonpass":
            self.sides[role].baton_pass = True
        self.pending_crit.clear()
        self.pending_censor.clear()
        if other is None:
            self.current = None
            return
        if "dynamax" in attacker.volatiles and self.dex.moves.get(move, {}).get("isMax"):
            # The log names the Max Move; the calculator wants the move that was chosen.
            base = self._base_of_max_move(attacker, move)
            if base is None:
                # Its hits are counted as excluded, one by one.
                self.current = {
                    "defender": other,
                    "excluded": "Max Move whose base move the "
                    "log does not tell (two moves of its type in the set)",
                }
                return
            move = base
        self.current = {
            "role": role, "attacker": attacker, "defender": other, "move": move,
            "defender_item": other.item, "attacker_item": attacker.item,
            "defender_hp": other.hp, "hits": 0, "target_moved": other.acted_this_turn
            or other.switched_this_turn, "result": None, "state": None,
        }  # fmt: skip

    def _base_of_max_move(self, mon: Mon, max_move: str) -> str | None:
        """The move of ``mon``'s set that became ``max_move``, when the set leaves no doubt
        (all candidates give the same Max Move power and category)."""
        max_type = self.dex.moves[max_move].get("type")
        candidates = []
        for move in mon.pokemon_set.moves:
            entry = self.dex.moves.get(move) or {}
            if entry.get("category", "Status") != "Status" and entry.get("type") == max_type:
                power = (entry.get("maxMove") or {}).get("basePower")
                candidates.append((move, power, entry.get("category")))
        if not candidates or len({(p, c) for _, p, c in candidates}) > 1:
            return None
        return candidates[0][0]

    def _on_cant(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.acted_this_turn = True
            mon.volatiles.discard("glaiverush")
        self.current = None

    def _move_failed(self) -> None:
        if self.current is not None:
            if "attacker" in self.current:
                self.current["attacker"].move_result = False

    def _on_fail(self, m: Message) -> None:
        if self.current is not None and self._mon(m.args[0]) is self.current.get("attacker"):
            self._move_failed()

    def _on_miss(self, m: Message) -> None:
        self._move_failed()

    def _on_immune(self, m: Message) -> None:
        self._move_failed()

    def _on_crit(self, m: Message) -> None:
        self.pending_crit.add(m.args[0])

    def _on_activate(self, m: Message) -> None:
        effect = effect_id(m.args[1]) if len(m.args) > 1 else ""
        if effect in ("endure", "focusband"):
            self.pending_censor.add(m.args[0])
        elif effect in _PROTECTIONS:
            self._move_failed()
        elif effect in ("wanderingspirit", "skillswap") and len(m.args) > 3:
            # "-activate|X|ability: Wandering Spirit|A|B|[of] Y": X gets A, Y gets B.
            mon = self._mon(m.args[0])
            other = next((self._mon(t[5:]) for t in m.tags if t.startswith("[of] ")), None)
            if mon is not None:
                mon.ability = to_id(m.args[2])
            if other is not None:
                other.ability = to_id(m.args[3])
        elif effect == "substitute" and "[damage]" in m.tags:
            self.tally.not_observable["hit a substitute (no HP change)"] += 1

    def _on_damage(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is None:
            return
        hp, max_hp, status = parse_condition(m.args[1])
        self._set_max_hp(mon, max_hp)
        before = mon.hp
        mon.hp = hp
        if status and status != "fnt":
            mon.status = status
        current = self.current
        from_effect = any(t.startswith("[from]") for t in m.tags)
        if from_effect or current is None or current["defender"] is not mon:
            if not from_effect and current is None:
                reason = (
                    "delayed hit (Future Sight, Doom Desire)"
                    if self.delayed
                    else ("damage without a move")
                )
                self.tally.excluded[reason] += 1
            self.delayed = False
            return
        if "excluded" in current:
            self.tally.excluded[current["excluded"]] += 1
            return
        current["hits"] += 1
        attacker: Mon = current["attacker"]
        crit = m.args[0] in self.pending_crit
        self.pending_crit.discard(m.args[0])
        censored = hp == 0 or (
            hp == 1 and (m.args[0] in self.pending_censor or current["move"] in _NO_KO_MOVES)
        )
        self.pending_censor.discard(m.args[0])
        mon.times_attacked += 1
        mon.hurt_by.add(attacker.name)
        hit = Hit(
            format_id=self.format_id, turn=self.turn, move=current["move"],
            attacker=self._combatant(attacker, mon, item=current["attacker_item"]),
            defender=self._combatant(mon, attacker, item=current["defender_item"],
                                     hp=current["defender_hp"]),
            field=self._field(current["role"]), target_moved=current["target_moved"],
            hit_number=current["hits"], crit=crit, hp_before=before, hp_after=hp,
            censored=censored,
        )  # fmt: skip
        category = self._predict(hit)
        if category is None:
            category = str((self.dex.moves.get(hit.move) or {}).get("category", ""))
        mon.taken_this_turn.append((before - hp, category))

    def _predict(self, hit: Hit) -> str | None:
        """Score ``hit``; returns the category the move had (None if not predicted)."""
        start = time.perf_counter()
        try:
            result = calculate(
                self.dex, hit.attacker, hit.defender, hit.move, hit.field,
                target_moved=hit.target_moved,
            )  # fmt: skip
        except KeyError as exc:
            self.tally.excluded[f"calculator refused: {exc}"] += 1
            return None
        finally:
            self.tally.seconds_predicting += time.perf_counter() - start
        index = hit.hit_number - 1
        if hit.crit:
            table = result.hit_crit_rolls or (result.crit_rolls,)
        else:
            table = result.hit_rolls or (result.rolls,)
        rolls = table[min(index, len(table) - 1)]
        hit.rolls, hit.low, hit.high, hit.notes = rolls, min(rolls), max(rolls), result.notes
        self.tally.hits.append(hit)
        return result.category

    def _on_sethp(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            hp, max_hp, _ = parse_condition(m.args[1])
            mon.hp = hp
            if hp > 0:
                mon.fainted = False
            self._set_max_hp(mon, max_hp)

    @staticmethod
    def _set_max_hp(mon: Mon, max_hp: int | None) -> None:
        if max_hp is not None and max_hp != mon.max_hp:
            mon.max_hp = max_hp
            mon.stats["hp"] = max_hp

    _on_heal = _on_sethp

    def _on_status(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.status = m.args[1]

    def _on_curestatus(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.status = ""

    def _on_cureteam(self, m: Message) -> None:
        for mon in self.sides[m.args[0][:2]].mons.values():
            mon.status = ""

    # boosts
    def _change_boost(self, ident: str, stat: str, delta: int) -> None:
        mon = self._mon(ident)
        if mon is None:
            return
        mon.boosts[stat] = max(-6, min(6, mon.boosts.get(stat, 0) + delta))
        if delta < 0:
            mon.lowered_this_turn = True

    def _on_boost(self, m: Message) -> None:
        self._change_boost(m.args[0], m.args[1], int(m.args[2]))

    def _on_unboost(self, m: Message) -> None:
        self._change_boost(m.args[0], m.args[1], -int(m.args[2]))

    def _on_setboost(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.boosts[m.args[1]] = int(m.args[2])

    def _on_clearboost(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.boosts = {}

    def _on_clearallboost(self, m: Message) -> None:
        for side in self.sides.values():
            if side.active is not None:
                side.active.boosts = {}

    def _on_clearnegativeboost(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.boosts = {k: v for k, v in mon.boosts.items() if v > 0}

    def _on_clearpositiveboost(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.boosts = {k: v for k, v in mon.boosts.items() if v < 0}

    def _on_invertboost(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.boosts = {k: -v for k, v in mon.boosts.items()}

    def _on_copyboost(self, m: Message) -> None:
        mon, source = self._mon(m.args[0]), self._mon(m.args[1])
        if mon is not None and source is not None:
            mon.boosts = dict(source.boosts)

    def _on_swapboost(self, m: Message) -> None:
        a, b = self._mon(m.args[0]), self._mon(m.args[1])
        if a is None or b is None:
            return
        stats = [s.strip() for s in m.args[2].split(",")] if len(m.args) > 2 else list(_BOOST_NAMES)
        for stat in stats:
            a.boosts[stat], b.boosts[stat] = b.boosts.get(stat, 0), a.boosts.get(stat, 0)

    # items, abilities, Tera
    def _on_enditem(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is None:
            return
        if to_id(m.args[1]) == "focussash":
            self.pending_censor.add(m.args[0])
        mon.item = ""

    def _on_item(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.item = to_id(m.args[1])

    def _on_ability(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is None or len(m.args) < 2:
            return
        ability = to_id(m.args[1])
        if ability == "sturdy":
            self.pending_censor.add(m.args[0])
        if ability in self.dex.abilities:
            mon.ability = ability

    def _on_endability(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.ability_suppressed = True

    def _on_terastallize(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None:
            mon.terastallized = True
            mon.tera_type = m.args[1]

    # volatiles
    def _on_start(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is None or len(m.args) < 2:
            return
        effect = effect_id(m.args[1])
        if "illusion" in mon.volatiles and "[silent]" in m.tags:
            return  # the disguise's looks (a Tera type it shows), not the true Pokémon's
        if effect == "typechange" and len(m.args) > 2:
            mon.type_override = tuple(t.strip() for t in m.args[2].split("/") if t.strip())
        elif effect == "typeadd" and len(m.args) > 2:
            mon.type_override = (*(mon.type_override or mon.types), m.args[2])
        elif effect.startswith(("protosynthesis", "quarkdrive")) and effect[-3:] in _BOOST_NAMES:
            mon.paradox = effect[-3:]
        else:
            mon.volatiles.add(effect)

    def _on_end(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is None or len(m.args) < 2:
            return
        effect = effect_id(m.args[1])
        if effect in ("protosynthesis", "quarkdrive"):
            mon.paradox = "none"
        elif effect in ("futuresight", "doomdesire"):
            self.current = None
            self.delayed = True
        mon.volatiles.discard(effect)

    def _on_prepare(self, m: Message) -> None:
        # A charging turn: Meteor Beam's +1 Special Attack is in the tracked boosts from
        # now on, which the calculator learns from the move's volatile.
        mon = self._mon(m.args[0])
        if mon is not None and len(m.args) > 1:
            mon.volatiles.add(to_id(m.args[1]))

    def _on_singlemove(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is not None and len(m.args) > 1:
            mon.volatiles.add(effect_id(m.args[1]))

    def _on_singleturn(self, m: Message) -> None:
        mon = self._mon(m.args[0])
        if mon is None or len(m.args) < 2:
            return
        effect = effect_id(m.args[1])
        if effect == "roost":
            mon.volatiles.add("roost")
        elif effect in _PROTECTIONS:
            mon.volatiles.add("protect")

    # field
    def _on_weather(self, m: Message) -> None:
        self.weather = _WEATHER.get(to_id(m.args[0]), "")

    def _on_fieldstart(self, m: Message) -> None:
        effect = effect_id(m.args[0])
        if effect in _TERRAINS:
            self.terrain = effect
        else:
            self.pseudo.add(effect)

    def _on_fieldend(self, m: Message) -> None:
        effect = effect_id(m.args[0])
        if effect == self.terrain:
            self.terrain = ""
        self.pseudo.discard(effect)

    def _on_sidestart(self, m: Message) -> None:
        condition = _SCREENS.get(effect_id(m.args[1]))
        if condition:
            self.sides[m.args[0][:2]].conditions.add(condition)

    def _on_sideend(self, m: Message) -> None:
        condition = _SCREENS.get(effect_id(m.args[1]))
        if condition:
            self.sides[m.args[0][:2]].conditions.discard(condition)


# Each ``_on_<name>`` handler takes the message ``-<name>``, or ``<name>`` for the plain
# messages that change the tracked state.
LogReplay.HANDLERS = {
    (name[4:] if name[4:] in _PLAIN_MESSAGES else "-" + name[4:]): name
    for name in vars(LogReplay)
    if name.startswith("_on_")
}
