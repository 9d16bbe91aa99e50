"""Direct hits as evidence about the opponent's sets.

:class:`HitTracker` reads the protocol like :class:`~pokegym.world.priors.protocol.ProtocolTracker`
and also keeps what the damage of a hit depends on (every stat stage, screens,
Terastallization, Protosynthesis / Quark Drive, Flash Fire and Charge), recording a
:class:`HitContext` for every direct hit. :func:`hit_observation` turns a usable hit
into a damage observation of the opponent's Pokémon: for each candidate set, the range
of damage the calculator gives for that hit, against the HP the hit took. A hit
*by* the opponent bounds its attacking stat, item and ability (Choice Band, Choice
Specs, Life Orb, Huge Power); a hit *on* it bounds its bulk (Assault Vest, Eviolite,
Multiscale, its spread in team formats).

A hit is left out whenever something that changes its damage is not known for
certain: a critical hit, a multi-hit move, a move whose power or type depends on the
battle's history (Eruption, Knock Off, Tera Blast, Weather Ball, ...), fixed damage,
a stat stage changed in a way not tracked, a transformed or Dynamaxed Pokémon, a type
changed (Protean, Soak, Roost this turn), a Glaive Rush user before it moves again,
Gravity, an item used or lost before the hit,
a forme change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pokegym.showdown.protocol import Message, pokemon_ident
from pokegym.world.damage import Combatant, Field, Side, calculate
from pokegym.world.data import Dex, load_dex, to_id
from pokegym.world.priors.distribution import _tera_name
from pokegym.world.priors.protocol import DamageEvent, ProtocolTracker
from pokegym.world.sets import PokemonSet

if TYPE_CHECKING:
    from poke_env.battle import AbstractBattle

_STATS = ("atk", "def", "spa", "spd", "spe", "accuracy", "evasion")
_SCREENS = ("reflect", "lightscreen", "auroraveil")
_VOLATILES = frozenset({"flashfire", "charge", "smackdown", "magnetrise", "slowstart"})
# Abilities whose effect on damage depends on what the protocol does not say for sure
# (Analytic: whether the attacker moved last).
_UNSURE_ABILITIES = frozenset({"analytic"})
# Two-turn moves whose charging turn's +1 Special Attack is already in the stages seen.
_CHARGED = frozenset({"meteorbeam", "electroshot"})
# Move callbacks that make a hit's power, type or damage depend on more than the sets.
_UNSURE_CALLBACKS = frozenset(
    {"basePowerCallback", "onBasePower", "onModifyMove", "onModifyType", "damageCallback"}
)
# Fields of a template set the prior did not know: a hit says nothing about them.
_RELEVANT_UNKNOWN = frozenset({"item", "ability", "evs"})
_TEMPLATE = "unknown"  # where a template set names its unknown fields (its ``extra``)
DamageRange = Callable[[PokemonSet], tuple[float, float]]


@dataclass(frozen=True)
class Fighter:
    """One side of a hit as the protocol showed it."""

    ident: str
    hp: float  # the fraction of its maximum HP it had before the hit
    boosts: tuple[tuple[str, int], ...]
    status: str
    terastallized: bool
    paradox_stat: str  # "none", or the stat Protosynthesis / Quark Drive raised
    volatiles: frozenset[str]
    screens: tuple[str, ...]  # on this Pokémon's side
    just_switched_in: bool  # sent in this turn (Stakeout)
    fallen: int  # its side's fainted Pokémon when it came in (Supreme Overlord)
    stint: int  # its side's switch-ins so far (an Illusion broken later voids the stint)


@dataclass(frozen=True)
class HitContext:
    """A direct hit with what its damage depended on.

    ``usable`` is False when something that changes the damage was not known (see the
    module docstring); ``event_index`` counts protocol lines up to the damage line.
    """

    event: DamageEvent
    event_index: int
    attacker: Fighter
    defender: Fighter
    weather: str
    terrain: str
    usable: bool
    hp_after: float


@dataclass(frozen=True)
class HitObservation:
    """A hit turned into evidence about the opponent's Pokémon ``ident``."""

    ident: str
    damage_range: DamageRange
    observed: float
    tolerance: float
    lower_bound: bool
    turn: int
    stints: tuple[tuple[str, int], ...]  # (side, stint) of both Pokémon in the hit


class HitTracker(ProtocolTracker):
    """A :class:`ProtocolTracker` that also records a :class:`HitContext` per direct hit
    (``hits``, in order)."""

    HANDLERS = {**ProtocolTracker.HANDLERS, "-terastallize": "_on_terastallize",
                "-singleturn": "_on_singleturn"}  # fmt: skip

    def __init__(self, our_role: str, gen: int = 9):
        super().__init__(our_role, gen)
        self.hits: list[HitContext] = []
        self._boosts: dict[str, dict[str, int]] = {"p1": {}, "p2": {}}
        self._known = {"p1": True, "p2": True}
        self._screens: dict[str, set[str]] = {"p1": set(), "p2": set()}
        self._paradox = {"p1": "none", "p2": "none"}
        self._volatiles: dict[str, set[str]] = {"p1": set(), "p2": set()}
        self._tera: set[str] = set()
        self._fresh = {"p1": False, "p2": False}
        self._fallen = {"p1": 0, "p2": 0}
        self._typechanged = {"p1": False, "p2": False}
        self._roosted = {"p1": False, "p2": False}
        self._glaive = {"p1": False, "p2": False}  # takes double damage until it moves again
        self._gravity = False
        self._move_at = 0
        self._item_at = 0

    # ------------------------------------------------------------ state kept
    def _on_switch(self, m: Message) -> None:
        role = pokemon_ident(m.args[0])[:2]
        if not self.sides[role].baton_pass:
            self._boosts[role] = {}
            self._known[role] = True
        self._paradox[role] = "none"
        self._volatiles[role] = set()
        self._fresh[role] = True
        self._typechanged[role] = False
        self._glaive[role] = False
        self._fallen[role] = sum(1 for i, s in self.status.items() if i[:2] == role and s == "fnt")
        super()._on_switch(m)

    def _on_turn(self, m: Message) -> None:
        super()._on_turn(m)
        self._roosted = {"p1": False, "p2": False}
        # A Pokémon is new to the field until the next turn begins (Showdown's
        # activeTurns: one sent in after a faint is not new in the next turn).
        self._fresh = {"p1": False, "p2": False}

    def _active_role(self, m: Message) -> str | None:
        ident = pokemon_ident(m.args[0]) if m.args else ""
        return ident[:2] if ident and self._is_active(ident) else None

    def _on_boost(self, m: Message) -> None:
        super()._on_boost(m)
        role = self._active_role(m)
        if role is None or len(m.args) < 3 or m.args[1] not in _STATS:
            return
        try:
            amount = int(m.args[2]) * (-1 if m.kind == "-unboost" else 1)
        except ValueError:
            self._known[role] = False
            return
        boosts = self._boosts[role]
        boosts[m.args[1]] = max(-6, min(6, boosts.get(m.args[1], 0) + amount))

    def _on_setboost(self, m: Message) -> None:
        super()._on_setboost(m)
        role = self._active_role(m)
        if role is None or len(m.args) < 3 or m.args[1] not in _STATS:
            return
        try:
            self._boosts[role][m.args[1]] = max(-6, min(6, int(m.args[2])))
        except ValueError:
            self._known[role] = False

    def _on_clearboost(self, m: Message) -> None:
        super()._on_clearboost(m)
        role = self._active_role(m)
        if role is not None:
            self._boosts[role] = {}

    def _on_clearallboost(self, m: Message) -> None:
        super()._on_clearallboost(m)
        self._boosts = {"p1": {}, "p2": {}}

    def _on_clearnegativeboost(self, m: Message) -> None:
        super()._on_clearnegativeboost(m)
        role = self._active_role(m)
        if role is not None:
            self._boosts[role] = {k: v for k, v in self._boosts[role].items() if v > 0}

    def _on_clearpositiveboost(self, m: Message) -> None:
        super()._on_clearpositiveboost(m)
        role = self._active_role(m)
        if role is not None:
            self._boosts[role] = {k: v for k, v in self._boosts[role].items() if v < 0}
        if len(m.args) > 1 and m.args[1][:2] in self._known:
            self._known[m.args[1][:2]] = False  # Spectral Thief took an unknown amount

    def _on_invertboost(self, m: Message) -> None:
        super()._on_invertboost(m)
        role = self._active_role(m)
        if role is not None:
            self._boosts[role] = {k: -v for k, v in self._boosts[role].items()}

    def _uncertain(self, m: Message) -> None:
        super()._uncertain(m)
        for part in m.parts[2:]:
            part = part[5:] if part.startswith("[of] ") else part
            if part[:2] in self._known and len(part) > 3 and ":" in part[2:4]:
                self._known[part[:2]] = False

    def _on_sidestart(self, m: Message) -> None:
        super()._on_sidestart(m)
        name = to_id(m.args[1].split(":")[-1]) if len(m.args) > 1 else ""
        if m.args and m.args[0][:2] in self._screens and name in _SCREENS:
            self._screens[m.args[0][:2]].add(name)

    def _on_sideend(self, m: Message) -> None:
        super()._on_sideend(m)
        name = to_id(m.args[1].split(":")[-1]) if len(m.args) > 1 else ""
        if m.args and m.args[0][:2] in self._screens:
            self._screens[m.args[0][:2]].discard(name)

    def _effect(self, m: Message) -> tuple[str, str] | None:
        """The side and the effect of a ``-start`` / ``-end`` line on an active Pokémon."""
        role = self._active_role(m)
        if role is None or len(m.args) < 2:
            return None
        return role, to_id(m.args[1].split(":")[-1])

    def _on_start(self, m: Message) -> None:
        super()._on_start(m)
        if (started := self._effect(m)) is None:
            return
        role, effect = started
        for ability in ("protosynthesis", "quarkdrive"):
            if effect.startswith(ability) and effect != ability:
                self._paradox[role] = effect[len(ability) :]
        if effect in _VOLATILES:
            self._volatiles[role].add(effect)
        elif effect == "typechange":  # Protean, Libero, Soak, Reflect Type, ...
            self._typechanged[role] = True

    def _on_end(self, m: Message) -> None:
        super()._on_end(m)
        if (ended := self._effect(m)) is None:
            return
        role, effect = ended
        if effect in ("protosynthesis", "quarkdrive"):
            self._paradox[role] = "none"
        self._volatiles[role].discard(effect)

    def _on_singleturn(self, m: Message) -> None:
        role = self._active_role(m)
        if role is not None and len(m.args) > 1 and to_id(m.args[1].split(":")[-1]) == "roost":
            self._roosted[role] = True  # no longer Flying this turn

    def _on_fieldstart(self, m: Message) -> None:
        super()._on_fieldstart(m)
        if m.args and to_id(m.args[0].split(":")[-1]) == "gravity":
            self._gravity = True

    def _on_fieldend(self, m: Message) -> None:
        super()._on_fieldend(m)
        if m.args and to_id(m.args[0].split(":")[-1]) == "gravity":
            self._gravity = False

    def _on_terastallize(self, m: Message) -> None:
        if m.args:
            self._tera.add(pokemon_ident(m.args[0]))

    def _on_enditem(self, m: Message) -> None:
        super()._on_enditem(m)
        self._item_at = self.events

    def _on_item(self, m: Message) -> None:
        super()._on_item(m)
        self._item_at = self.events

    def _on_move(self, m: Message) -> None:
        self._move_at = self.events
        role = pokemon_ident(m.args[0])[:2] if m.args else ""
        if role in self._glaive:
            self._glaive[role] = len(m.args) > 1 and to_id(m.args[1]) == "glaiverush"
        super()._on_move(m)

    # ------------------------------------------------------------ hits
    def _on_damage(self, m: Message) -> None:
        seen = len(self.damage)
        super()._on_damage(m)
        if len(self.damage) > seen:
            event = self.damage[-1]
            after = self.hp.get(event.defender)
            self.hits.append(
                HitContext(
                    event=event,
                    event_index=self.events,
                    attacker=self._fighter(event.attacker, self._hp_fraction(event.attacker)),
                    defender=self._fighter(event.defender, event.hp_before),
                    weather=self._weather(),
                    terrain=self.terrain,
                    usable=self._usable(event),
                    hp_after=after[0] / after[1] if after and after[1] else 0.0,
                )
            )

    def _hp_fraction(self, ident: str) -> float:
        hp = self.hp.get(ident)
        return hp[0] / hp[1] if hp and hp[1] else 1.0

    def _fighter(self, ident: str, hp: float) -> Fighter:
        role = ident[:2]
        return Fighter(
            ident=ident,
            hp=hp,
            boosts=tuple(sorted((k, v) for k, v in self._boosts[role].items() if v)),
            status=self.status.get(ident, ""),
            terastallized=ident in self._tera,
            paradox_stat=self._paradox[role],
            volatiles=frozenset(self._volatiles[role]),
            screens=tuple(sorted(self._screens[role])),
            just_switched_in=self._fresh[role],
            fallen=self._fallen[role],
            stint=self.sides[role].stint,
        )

    def _weather(self) -> str:
        if any(side.air_lock for side in self.sides.values()):
            return ""
        return self.weather

    def _usable(self, event: DamageEvent) -> bool:
        if event.critical or event.multi_hit or self._item_at > self._move_at:
            return False
        for ident in (event.attacker, event.defender):
            side = self._side(ident)
            if side.active != ident or side.unsure or side.dynamaxed or side.transformed:
                return False
            role = ident[:2]
            if not self._known[role] or self._typechanged[role] or self._roosted[role]:
                return False
        if self._glaive[event.defender[:2]]:
            return False
        if self._gravity:
            return False
        entry = load_dex(self.gen).moves.get(event.move)
        if entry is None or entry.get("category") == "Status" or entry.get("damage"):
            return False
        if entry.get("multihit") or entry.get("ohko"):
            return False
        return not _UNSURE_CALLBACKS.intersection(entry.get("callbacks") or ())


# --------------------------------------------------------------------------- evidence
def hit_observation(
    hit: HitContext, tracker: HitTracker, battle: AbstractBattle, dex: Dex
) -> HitObservation | None:
    """The evidence ``hit`` gives about the opponent's Pokémon in it, or None when it
    gives none that can be trusted (see the module docstring)."""
    if not hit.usable:
        return None
    event = hit.event
    theirs_attack = event.attacker[:2] == tracker.their_role
    ours, theirs = (hit.defender, hit.attacker) if theirs_attack else (hit.attacker, hit.defender)
    if ours.ident[:2] != tracker.our_role or theirs.ident[:2] != tracker.their_role:
        return None
    for ident in (ours.ident, theirs.ident):
        if not tracker.forme_stable_after(ident, 0):
            return None
    if any(kind != "reveal" and index < hit.event_index
           for index, kind, _ in tracker.item_events.get(theirs.ident, [])):  # fmt: skip
        return None  # its item now is not its set's
    if any(to_id(m.ability or "") == "illusion" for m in battle.team.values()):
        return None  # our hit Pokémon may have been another in disguise
    mon = battle.team.get(ours.ident)
    if mon is not None and not theirs_attack and to_id(mon.ability or "") in _UNSURE_ABILITIES:
        return None
    if mon is None or not mon.max_hp or not mon.stats or not all(mon.stats.values()):
        return None
    item = tracker.our_item_at(ours.ident, hit.event_index, mon.item)
    if item is None or item == "unknownitem":
        return None
    species = to_id(mon.species)
    entry = dex.species.get(species)
    if entry is None:
        return None
    hp_max = int(mon.max_hp)
    charged = frozenset({event.move}) & _CHARGED  # the attacker's: its boost is in the stages
    our = Combatant(
        species=species,
        level=int(mon.level or 100),
        types=tuple(entry["types"]),
        stats={**{k: int(v) for k, v in mon.stats.items()}, "hp": hp_max},
        hp=round(ours.hp * hp_max),
        boosts=dict(ours.boosts),
        ability=to_id(mon.ability or ""),
        item=item,
        status=ours.status,
        tera_type=_tera_name(mon.tera_type) if mon.tera_type is not None else "",
        terastallized=ours.terastallized,
        paradox_stat=ours.paradox_stat,
        volatiles=ours.volatiles | (frozenset() if theirs_attack else charged),
        just_switched_in=ours.just_switched_in,
        fainted_allies=ours.fallen,
    )
    field = Field(
        weather=hit.weather,
        terrain=hit.terrain,
        attacker_side=_side(hit.attacker),
        defender_side=_side(hit.defender),
    )
    state = {
        "boosts": dict(theirs.boosts),
        "hp_fraction": theirs.hp,
        "status": theirs.status,
        "terastallized": theirs.terastallized,
        "paradox_stat": theirs.paradox_stat,
        "volatiles": theirs.volatiles | (charged if theirs_attack else frozenset()),
        "just_switched_in": theirs.just_switched_in,
        "fainted_allies": theirs.fallen,
    }
    lower_bound = hit.hp_after <= 0.0
    if theirs_attack:
        damage_range = _hit_range(dex, our, event.move, field, state, by_them=True)
        tolerance = 1.5 / hp_max
        lower_bound = lower_bound or round(hit.hp_after * hp_max) <= 1
    else:
        damage_range = _hit_range(dex, our, event.move, field, state, by_them=False)
        tolerance = 0.015  # the opponent's HP is shown in whole percent
        lower_bound = lower_bound or hit.hp_after <= 0.011
    return HitObservation(
        ident=theirs.ident,
        damage_range=damage_range,
        observed=event.fraction_lost,
        tolerance=tolerance,
        lower_bound=lower_bound,
        turn=event.turn,
        stints=((ours.ident[:2], ours.stint), (theirs.ident[:2], theirs.stint)),
    )


def _side(fighter: Fighter) -> Side:
    return Side(
        reflect="reflect" in fighter.screens,
        light_screen="lightscreen" in fighter.screens,
        aurora_veil="auroraveil" in fighter.screens,
    )


def _unknown(pset: PokemonSet) -> bool:
    unknown = pset.extra.get(_TEMPLATE, frozenset())
    return bool(_RELEVANT_UNKNOWN.intersection(unknown))


def _candidates(dex: Dex, pset: PokemonSet, state: dict[str, Any]) -> list[Combatant]:
    """The opponent's Pokémon with the set ``pset``, in the state of the hit: at the two
    ends of the HP its whole percent allows (a pinch ability such as Torrent, or
    Multiscale, may hold at one end only)."""
    fields = dict(state)
    fraction = fields.pop("hp_fraction")
    out = []
    for shown in (fraction, fraction - 0.01):
        mon = Combatant.from_set(dex, pset, **fields)
        mon.hp = max(1, min(mon.max_hp, round(shown * mon.max_hp)))
        out.append(mon)
    return out


def _hit_range(
    dex: Dex, ours: Combatant, move: str, field: Field, state: dict[str, Any], *, by_them: bool
) -> DamageRange:
    """The hit's damage for a candidate set of the opponent's Pokémon, as fractions of
    the defender's maximum HP: their ``move`` on our Pokémon (``by_them``), or ours on
    theirs."""
    cache: dict[PokemonSet, tuple[float, float]] = {}

    def damage_range(pset: PokemonSet) -> tuple[float, float]:
        if _unknown(pset) or (by_them and pset.ability in _UNSURE_ABILITIES):
            return 0.0, float("inf")
        if pset not in cache:
            low, high = float("inf"), 0.0
            for them in _candidates(dex, pset, state):
                attacker, defender = (them, ours) if by_them else (ours, them)
                result = calculate(dex, attacker, defender, move, field, crit=False)
                hp = defender.max_hp or 1
                low, high = min(low, result.min / hp), max(high, result.max / hp)
            cache[pset] = (low, high)
        return cache[pset]

    return damage_range


__all__ = ["Fighter", "HitContext", "HitObservation", "HitTracker", "hit_observation"]
