"""The battle <-> world-model adapter of the search agents.

- :func:`decision_state`: the world-model state a search starts from, built from the
  poke-env battle and a guess of the opponent's hidden sets;
- :func:`root_actions`: our legal world-model actions now, each with its order;
- :func:`legal_actions`: the world model's legal actions of a side, or a pass;
- :func:`order_action` and :func:`world_action`: a poke-env order as a world-model action.
"""

from __future__ import annotations

from typing import Any

from poke_env.battle import AbstractBattle, Move, Pokemon
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder

from pokegym.world.data import Dex, to_id
from pokegym.world.priors import belief_for
from pokegym.world.state import BattleState, state_from_battle
from pokegym.world.transition import Action, TransitionModel

PASS: Action = ("pass", None, False)
"""The action of a side that cannot act this turn."""


def decision_state(
    battle: AbstractBattle,
    dex: Dex,
    determinization: dict[str, Any] | None = None,
    previewed: bool = False,
) -> BattleState:
    """The world-model state a search starts from: the opponent's hidden sets from the
    modal set of the priors (or ``determinization``), and ``notes["unseen"]`` = opponent
    Pokémon not in the state (``previewed``: those Team Preview showed are, as in
    :func:`~pokegym.world.state.state_from_battle`)."""
    if determinization is None:
        determinization = belief_for(battle).modal_determinization()
    state = state_from_battle(battle, determinization, dex, previewed)
    seen = len(state.sides[1].mons)
    size = max(len(battle.opponent_team), _team_size(battle))
    state.notes = {"unseen": max(0, size - seen)}
    return state


def _team_size(battle: AbstractBattle) -> int:
    size = getattr(battle, "_team_size", None) or {}
    role = getattr(battle, "opponent_role", None)
    if isinstance(size, dict) and role in size:
        return int(size[role])
    return 6


def root_actions(battle: AbstractBattle, tera: bool) -> dict[Action, BattleOrder]:
    """Our legal world-model actions now, from the battle's request, with their orders."""
    orders: dict[Action, BattleOrder] = {}
    for move in battle.available_moves:
        orders[("move", to_id(move.id), False)] = SingleBattleOrder(move)
        if tera and battle.can_tera:
            orders[("move", to_id(move.id), True)] = SingleBattleOrder(move, terastallize=True)
    index = {id(mon): i for i, mon in enumerate(battle.team.values())}
    for mon in battle.available_switches:
        if id(mon) in index:
            orders[("switch", index[id(mon)], False)] = SingleBattleOrder(mon)
    return orders


def legal_actions(model: TransitionModel, state: BattleState, side: int) -> list[Action]:
    """The model's legal actions, or a single pass when the side cannot act."""
    actions = model.legal_actions(state, side)
    return actions or [PASS]


def order_action(order: Any, team: list[Pokemon]) -> Action | None:
    """The world-model action of a poke-env order whose switch targets are numbered by
    their place in ``team`` (None for default/struggle orders and unknown Pokémon)."""
    if not isinstance(order, SingleBattleOrder):
        return None
    target = order.order
    if isinstance(target, Move):
        return ("move", to_id(target.id), bool(order.terastallize))
    if isinstance(target, Pokemon):
        for i, mon in enumerate(team):
            if mon is target or to_id(mon.species) == to_id(target.species):
                return ("switch", i, False)
    return None


def world_action(order: Any, battle: AbstractBattle) -> Action | None:
    """Our world-model action of a poke-env order (None for default/struggle orders)."""
    return order_action(order, list(battle.team.values()))


__all__ = [
    "PASS",
    "decision_state",
    "legal_actions",
    "order_action",
    "root_actions",
    "world_action",
]
