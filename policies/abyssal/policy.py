"""``abyssal``'s rules, in the order they run (see the package docstring), over its model."""

from __future__ import annotations

import math

from poke_env.battle import (
    AbstractBattle,
    Effect,
    Field,
    Move,
    MoveCategory,
    Pokemon,
    PokemonType,
    SideCondition,
    Status,
    Weather,
)
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder, SingleBattleOrder

from policies.abyssal.constants import (
    BOOSTED_STAY_MARGIN,
    HAZARD_CONDITIONS,
    HAZARD_MIN_TARGETS,
    HAZARD_ORDER,
    HAZARD_REMOVAL_MIN_MONS,
    HAZARD_WEIGHT,
    KO_BONUS,
    PING_PONG_MARGIN,
    PIVOT_BONUS,
    RECOIL_WEIGHT,
    RECOVER_BELOW,
    REFLECTING_ABILITIES,
    REMOVAL_MOVES,
    REST_BELOW,
    SELF_DROP_PENALTY,
    SETUP_MAX_STAGE,
    SETUP_MAX_THREAT,
    SETUP_MIN_HP,
    SETUP_STATS,
    STATUS_IF_DAMAGE_BELOW,
    STATUS_IMMUNE_ABILITIES,
    STATUS_IMMUNE_TYPES,
    STATUS_MIN_TARGET_HP,
    SWITCH_MARGIN,
    SWITCH_THRESHOLD,
    TERA_DEFENSE_GAIN,
    TERA_DEFENSE_MIN_HP,
    TERA_OFFENSE_GAIN,
    TOXIC_SPIKES_MIN_TARGETS,
)
from policies.abyssal.model import Combatant, Model, _attack_from_move, _stat
from policies.base import Policy

# --------------------------------------------------------------------------- policy


class AbyssalPolicy(Policy):
    """Rule-based heuristic bot (see the module docstring for the rules, in order).

    Args:
        seed: seed of ``self.rng`` (only used to break exact ties).
        switch_threshold: matchup below which switching out is considered.
        switch_margin: how much better a switch-in must be.
        hazards, setup, status, tera, switching: turn single rules off (for ablations).
    """

    name = "abyssal"

    def __init__(
        self,
        seed: int | None = None,
        *,
        switch_threshold: float = SWITCH_THRESHOLD,
        switch_margin: float = SWITCH_MARGIN,
        hazards: bool = True,
        setup: bool = True,
        status: bool = True,
        tera: bool = True,
        switching: bool = True,
    ):
        super().__init__(seed)
        self.switch_threshold = switch_threshold
        self.switch_margin = switch_margin
        self.use_hazards = hazards
        self.use_setup = setup
        self.use_status = status
        self.use_tera = tera
        self.use_switching = switching
        self._last_switch_turn: dict[str, int] = {}
        #: The rule that made the last decision (for tests and analysis).
        self.last_rule = ""

    # ----------------------------------------------------------------- entry points
    def choose(self, battle: AbstractBattle) -> BattleOrder:
        order, rule = self._decide(battle)
        self.last_rule = rule
        return order

    def team_preview(self, battle: AbstractBattle) -> str:
        team = list(battle.team.values())
        opponents = list(battle.teampreview_opponent_team or [])
        if not team:
            return "/team 1"
        if not opponents:
            return super().team_preview(battle)
        model = Model(battle)
        scores = []
        for index, mon in enumerate(team):
            mine = model.combatant(mon, ours=True)
            total = sum(model.matchup(mine, model.combatant(o, ours=False)) for o in opponents)
            scores.append((total / len(opponents), -index))
        ranked = sorted(range(len(team)), key=lambda i: scores[i], reverse=True)
        lead = ranked[0]
        order = [lead] + [i for i in range(len(team)) if i != lead]
        return "/team " + "".join(str(i + 1) for i in order)

    # ----------------------------------------------------------------- decision
    def _decide(self, battle: AbstractBattle) -> tuple[BattleOrder, str]:
        active = battle.active_pokemon
        opponent = battle.opponent_active_pokemon
        moves = list(battle.available_moves)
        switches = list(battle.available_switches)
        if active is None or opponent is None or (not moves and switches):
            if switches:
                return self._best_switch_order(battle, switches, free=True), "forced_switch"
            return DefaultBattleOrder(), "default"
        if not moves:
            return DefaultBattleOrder(), "default"
        if len(moves) == 1 and moves[0].id in ("struggle", "recharge"):
            return SingleBattleOrder(moves[0]), "forced_move"

        model = Model(battle)
        me = model.combatant(active, ours=True)
        them = model.combatant(opponent, ours=False)
        ctx = _Context(battle, model, me, them, moves, switches)

        # 2. Finish the opponent when a move knocks it out before it can act.
        finisher = ctx.finishing_move()
        if finisher is not None:
            return self._attack_order(ctx, finisher), "finish"

        # 3. Switch out of a bad matchup.
        if self.use_switching and switches and not battle.trapped:
            choice = self._switch_out(ctx)
            if choice is not None:
                self._last_switch_turn[battle.battle_tag] = battle.turn
                return SingleBattleOrder(choice), "switch_out"

        acts_before_ko = not ctx.dies_before_acting()
        if self.use_hazards and acts_before_ko:
            move = ctx.hazard_move()
            if move is not None:
                return SingleBattleOrder(move), "hazard"
            move = ctx.removal_move()
            if move is not None:
                return SingleBattleOrder(move), "hazard_removal"
        if acts_before_ko:
            move = ctx.recovery_move()
            if move is not None:
                return SingleBattleOrder(move), "recovery"
        if self.use_setup and acts_before_ko:
            move = ctx.setup_move()
            if move is not None:
                return SingleBattleOrder(move, terastallize=self._tera_defensive(ctx)), "setup"
        if self.use_status and acts_before_ko:
            move = ctx.status_move()
            if move is not None:
                return SingleBattleOrder(move), "status"
        return self._attack_order(ctx, None), "attack"

    # ----------------------------------------------------------------- attacking
    def _attack_order(self, ctx: _Context, chosen: Move | None) -> BattleOrder:
        battle = ctx.battle
        if chosen is not None:  # a finishing move needs no Tera
            return SingleBattleOrder(chosen)
        move, value = ctx.best_move(ctx.me)
        if move is None:
            return self._fallback(ctx)
        if self.use_tera and battle.can_tera and ctx.me.tera_type is not None:
            tera_me = ctx.me.as_tera()
            tera_move, tera_value = ctx.best_move(tera_me)
            if tera_move is not None and self._tera_pays(ctx, tera_me, value, tera_value):
                return SingleBattleOrder(tera_move, terastallize=True)
        return SingleBattleOrder(move)

    def _tera_pays(
        self, ctx: _Context, tera_me: Combatant, value: float, tera_value: float
    ) -> bool:
        model, me, them = ctx.model, ctx.me, ctx.them
        if tera_me.tera_type == PokemonType.STELLAR:
            return ctx.remaining_mons() == 1
        _, taken = model.best_damage(them, me)
        _, tera_taken = model.best_damage(them, tera_me)
        kills_now = ctx.kills(me)
        kills_tera = ctx.kills(tera_me)
        if kills_tera and not kills_now and tera_taken <= taken * 1.25:
            return True
        if value > 0 and tera_value >= value * TERA_OFFENSE_GAIN and tera_taken <= taken:
            return True
        if (
            me.hp >= TERA_DEFENSE_MIN_HP
            and taken > 0
            and tera_taken <= taken * TERA_DEFENSE_GAIN
            and tera_value >= value * 0.8
        ):
            return True
        return ctx.remaining_mons() == 1 and tera_value >= value and tera_taken <= taken

    def _tera_defensive(self, ctx: _Context) -> bool:
        if not (self.use_tera and ctx.battle.can_tera and ctx.me.tera_type is not None):
            return False
        tera_me = ctx.me.as_tera()
        if tera_me.tera_type == PokemonType.STELLAR:
            return False
        _, taken = ctx.model.best_damage(ctx.them, ctx.me)
        _, tera_taken = ctx.model.best_damage(ctx.them, tera_me)
        return taken > 0.2 and tera_taken <= taken * TERA_DEFENSE_GAIN

    def _fallback(self, ctx: _Context) -> BattleOrder:
        """No move with a positive value: any usable status move, else a switch, else move 1."""
        for move in ctx.moves:
            if move.category == MoveCategory.STATUS and ctx.status_usable(move):
                return SingleBattleOrder(move)
        if ctx.switches and not ctx.battle.trapped:
            return self._best_switch_order(ctx.battle, ctx.switches, free=False)
        return SingleBattleOrder(ctx.moves[0])

    # ----------------------------------------------------------------- switching
    def _switch_out(self, ctx: _Context) -> Pokemon | None:
        stay = ctx.model.matchup(ctx.me, ctx.them)
        if stay >= self.switch_threshold:
            return None
        best, best_score = self._rank_switches(ctx, free=False)
        if best is None:
            return None
        margin = self.switch_margin
        last = self._last_switch_turn.get(ctx.battle.battle_tag)
        if last is not None and ctx.battle.turn - last <= 1:
            margin += PING_PONG_MARGIN
        margin += BOOSTED_STAY_MARGIN * sum(
            v for k, v in ctx.me.boosts.items() if v > 0 and k in SETUP_STATS
        )
        if best_score - stay >= margin:
            return best
        return None

    def _rank_switches(self, ctx: _Context, *, free: bool) -> tuple[Pokemon | None, float]:
        model, them = ctx.model, ctx.them
        incoming, _ = (None, 0.0) if free else model.best_damage(them, ctx.me)
        best: Pokemon | None = None
        best_score = -math.inf
        for mon in ctx.switches:
            candidate = model.combatant(mon, ours=True)
            hp = candidate.hp - model.hazard_damage(candidate, ctx.battle.side_conditions)
            if incoming is not None:
                hp -= model.damage(incoming, them, candidate) * incoming.accuracy
            score = model.matchup(candidate, them, my_hp=hp)
            if score > best_score:
                best, best_score = mon, score
        return best, best_score

    def _best_switch_order(
        self, battle: AbstractBattle, switches: list[Pokemon], *, free: bool
    ) -> BattleOrder:
        opponent = battle.opponent_active_pokemon
        if opponent is None:
            return SingleBattleOrder(max(switches, key=lambda m: m.current_hp_fraction))
        model = Model(battle)
        them = model.combatant(opponent, ours=False)
        best, best_score = switches[0], -math.inf
        for mon in switches:
            candidate = model.combatant(mon, ours=True)
            hp = candidate.hp - model.hazard_damage(candidate, battle.side_conditions)
            score = model.matchup(candidate, them, my_hp=hp)
            if score > best_score:
                best, best_score = mon, score
        return SingleBattleOrder(best)


class _Context:
    """Per-decision facts shared by the rules."""

    def __init__(
        self,
        battle: AbstractBattle,
        model: Model,
        me: Combatant,
        them: Combatant,
        moves: list[Move],
        switches: list[Pokemon],
    ):
        self.battle = battle
        self.model = model
        self.me = me
        self.them = them
        self.moves = moves
        self.switches = switches
        self._incoming: float | None = None

    # ----------------------------------------------------------------- threat
    def incoming(self) -> float:
        """The opponent's best expected hit on our active Pokémon (fraction of max HP)."""
        if self._incoming is None:
            self._incoming = self.model.best_damage(self.them, self.me)[1]
        return self._incoming

    def dies_before_acting(self) -> bool:
        """The opponent outspeeds and its best hit knocks our active Pokémon out."""
        return self.model.moves_first(self.me, self.them) <= 0.0 and self.incoming() >= self.me.hp

    def remaining_mons(self) -> int:
        return sum(1 for m in self.battle.team.values() if not m.fainted)

    def opponent_remaining(self) -> int:
        size = len(self.battle.teampreview_opponent_team or []) or 6
        fainted = sum(1 for m in self.battle.opponent_team.values() if m.fainted)
        return max(size - fainted, 0)

    # ----------------------------------------------------------------- attacks
    def move_value(self, move: Move, me: Combatant) -> float:
        """Expected value of using ``move``: damage dealt (capped at the target's HP),
        accuracy, a knockout bonus, recoil, drain, self drops and pivoting."""
        attack = _attack_from_move(move)
        if attack.category == MoveCategory.STATUS:
            return 0.0
        them = self.them
        damage = self.model.damage(attack, me, them)
        if damage <= 0:
            return 0.0
        dealt = min(damage, them.hp)
        value = dealt * attack.accuracy
        if damage >= them.hp:
            first = self.model.moves_first(me, them, attack.priority)
            survives = self.incoming() < me.hp
            value += KO_BONUS * attack.accuracy * (1.0 if first or survives else 0.3)
        value -= RECOIL_WEIGHT * attack.recoil * dealt
        value += 0.5 * attack.drain * dealt * (1 - me.hp)
        if damage < them.hp:
            value -= SELF_DROP_PENALTY * attack.self_drop
        if attack.self_destruct:
            value *= 0.3 if me.hp > 0.3 and not self.dies_before_acting() else 1.0
        if attack.recharge and damage < them.hp:
            value *= 0.6
        if attack.self_switch and self.switches and not self.battle.trapped:
            value += PIVOT_BONUS
        if attack.id in ("suckerpunch", "thunderclap"):
            value *= 0.75
        if attack.id == "focuspunch":
            value *= 0.4
        return value

    def best_move(self, me: Combatant) -> tuple[Move | None, float]:
        best: Move | None = None
        best_value = 0.0
        for move in self.moves:
            value = self.move_value(move, me)
            if value > best_value:
                best, best_value = move, value
        return best, best_value

    def kills(self, me: Combatant) -> bool:
        """Some move likely knocks the opponent out (before or after its reply)."""
        for move in self.moves:
            attack = _attack_from_move(move)
            if attack.accuracy >= 0.8 and self.model.damage(attack, me, self.them) >= self.them.hp:
                return True
        return False

    def finishing_move(self) -> Move | None:
        """The most reliable move that knocks the opponent out before it acts."""
        best: Move | None = None
        best_key = (0.0, 0.0)
        for move in self.moves:
            attack = _attack_from_move(move)
            if attack.category == MoveCategory.STATUS or attack.self_destruct:
                continue
            first = self.model.moves_first(self.me, self.them, attack.priority)
            if first < 1.0:
                continue
            damage = self.model.damage(attack, self.me, self.them)
            if damage < self.them.hp * 1.05:
                continue
            key = (attack.accuracy, -attack.recoil - 0.1 * attack.self_drop)
            if attack.id in ("suckerpunch", "thunderclap"):
                key = (attack.accuracy * 0.8, key[1])
            if attack.accuracy >= 0.7 and key > best_key:
                best, best_key = move, key
        return best

    # ----------------------------------------------------------------- hazards
    def hazard_move(self) -> Move | None:
        """A hazard to set: the opponent has Pokémon left to hit and the layer is not full."""
        if self.opponent_remaining() < HAZARD_MIN_TARGETS:
            return None
        if self.them.has_ability("magicbounce") > 0:
            return None
        side = self.battle.opponent_side_conditions
        available = {m.id: m for m in self.moves}
        for move_id in HAZARD_ORDER:
            move = available.get(move_id)
            if move is None:
                continue
            condition, max_layers = HAZARD_CONDITIONS[move_id]
            if side.get(condition, 0) >= max_layers:
                continue
            if move_id == "toxicspikes" and self.opponent_remaining() < TOXIC_SPIKES_MIN_TARGETS:
                continue
            return move
        return None

    def hazard_burden(self, side: dict[SideCondition, int]) -> float:
        return sum(HAZARD_WEIGHT.get(c, 0.0) * max(n, 1) for c, n in side.items())

    def removal_move(self) -> Move | None:
        """A move that clears our hazards, when it can work and is worth it."""
        ours = self.hazard_burden(self.battle.side_conditions)
        if ours <= 0 or self.remaining_mons() < HAZARD_REMOVAL_MIN_MONS:
            return None
        theirs = self.hazard_burden(self.battle.opponent_side_conditions)
        available = {m.id: m for m in self.moves}
        for move_id in REMOVAL_MOVES:
            move = available.get(move_id)
            if move is None:
                continue
            if move_id in ("rapidspin", "mortalspin"):
                # A damaging spin does nothing against a type immune to it.
                if self.model.effectiveness(move.type, self.them) == 0:
                    continue
            elif move_id == "defog":
                if self.them.has_ability("goodasgold") >= 1 or theirs >= ours:
                    continue
            elif move_id == "courtchange" and theirs >= ours:
                continue
            return move
        return None

    # ----------------------------------------------------------------- recovery
    def heal_amount(self, move: Move) -> float:
        if move.id == "rest":
            if self.me.hp > REST_BELOW or self.me.has_ability("insomnia") >= 1:
                return 0.0
            if Field.ELECTRIC_TERRAIN in self.battle.fields:
                return 0.0
            return 1.0 - self.me.hp
        heal = float(move.heal)
        if move.id in ("moonlight", "morningsun", "synthesis"):
            if self.model.weather in (Weather.SUNNYDAY, Weather.DESOLATELAND):
                heal = 2 / 3
            elif self.model.weather is not None:
                heal = 0.25
        if move.id == "shoreup" and self.model.weather == Weather.SANDSTORM:
            heal = 2 / 3
        if move.id == "strengthsap":
            heal = min(0.5, _stat(self.them, "atk") / self.me.max_hp)
        return min(heal, 1.0 - self.me.hp)

    def recovery_move(self) -> Move | None:
        if self.me.hp > RECOVER_BELOW:
            return None
        if Effect.HEAL_BLOCK in self.me.mon.effects:
            return None
        best, best_heal = None, 0.0
        for move in self.moves:
            heal = self.heal_amount(move)
            if heal > best_heal:
                best, best_heal = move, heal
        if best is None:
            return None
        incoming = self.incoming()
        # Healing must outpace the damage, and we must survive the hit after it.
        if incoming < best_heal and incoming < self.me.hp + best_heal:
            return best
        return None

    # ----------------------------------------------------------------- setup
    def setup_move(self) -> Move | None:
        me, them = self.me, self.them
        if me.hp < SETUP_MIN_HP or self.incoming() >= me.hp * SETUP_MAX_THREAT:
            return None
        if them.has_ability("unaware") >= 1:
            return None
        if self.kills(me):
            return None
        has_physical = any(m.category == MoveCategory.PHYSICAL for m in self.moves)
        has_special = any(m.category == MoveCategory.SPECIAL for m in self.moves)
        for move in self.moves:
            boosts = dict(move.boosts or {}) if _targets_self(move) else {}
            if move.id == "curse" and PokemonType.GHOST not in me.types:
                boosts = {"atk": 1, "def": 1, "spe": -1}
            if move.id == "bellydrum":
                if me.hp < 0.75:
                    continue
                boosts = {"atk": 6}
            useful = []
            for stat, amount in boosts.items():
                if amount <= 0 or stat not in SETUP_STATS:
                    continue
                if stat == "atk" and not has_physical:
                    continue
                if stat == "spa" and not has_special:
                    continue
                useful.append(stat)
            if not useful:
                continue
            attack_stats = [s for s in useful if s in ("atk", "spa")] or useful
            if min(me.boosts.get(s, 0) for s in attack_stats) >= SETUP_MAX_STAGE:
                continue
            return move
        return None

    # ----------------------------------------------------------------- status
    def status_usable(self, move: Move) -> bool:
        """``move`` inflicts a major status the current target can actually get."""
        status = move.status
        if status is None or move.category != MoveCategory.STATUS:
            return False
        them = self.them
        if them.status is not None or them.hp < STATUS_MIN_TARGET_HP:
            return False
        if Effect.SUBSTITUTE in them.mon.effects:
            return False
        if sum(them.has_ability(a) for a in REFLECTING_ABILITIES) > 0:
            return False
        if SideCondition.SAFEGUARD in self.battle.opponent_side_conditions:
            return False
        immune_types = STATUS_IMMUNE_TYPES.get(status, set())
        if set(them.types) & immune_types and not (
            status in (Status.TOX, Status.PSN) and self.me.has_ability("corrosion") >= 1
        ):
            return False
        if sum(them.has_ability(a) for a in STATUS_IMMUNE_ABILITIES.get(status, ())) > 0:
            return False
        if move.id == "thunderwave" and self.model.effectiveness(move.type, them) == 0:
            return False
        if "powder" in move.flags and (
            PokemonType.GRASS in them.types
            or them.item == "safetygoggles"
            or them.has_ability("overcoat") > 0
        ):
            return False
        if status == Status.SLP:
            if any(m.status == Status.SLP for m in self.battle.opponent_team.values()):
                return False  # Sleep Clause
            if Field.ELECTRIC_TERRAIN in self.battle.fields and them.grounded():
                return False
        if Field.MISTY_TERRAIN in self.battle.fields and them.grounded():
            return False
        if status == Status.BRN and them.stats["atk"] < them.stats["spa"]:
            return False  # burn is for physical attackers
        return True

    def status_move(self) -> Move | None:
        _, best_value = self.best_move(self.me)
        if self.them.hp > 0 and best_value / max(self.them.hp, 0.01) >= STATUS_IF_DAMAGE_BELOW:
            return None
        order = {Status.SLP: 0, Status.BRN: 1, Status.PAR: 2, Status.TOX: 3, Status.PSN: 4}
        candidates = [m for m in self.moves if self.status_usable(m)]
        if not candidates:
            return None
        return min(candidates, key=lambda m: order.get(m.status, 9))


def _targets_self(move: Move) -> bool:
    target = move.target
    return target is not None and target.name in ("SELF", "ADJACENT_ALLY_OR_SELF", "ALLIES")
