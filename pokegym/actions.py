"""The action layout of every pokegym environment, owned by :class:`ActionCodec`.

``Discrete(15)``, the same for every format:

======  =====================================================================
index   meaning
======  =====================================================================
0-3     use move slot 1-4 of the active Pokémon
4-7     use move slot 1-4 and activate the format's gimmick: Terastallize in
        gen 9, Dynamax in gen 8 (masked when the format bans it or it is spent)
8-13    switch to team slot 1-6; at Team Preview, lead with that Pokémon
        (the rest follow in team order)
14      wait: legal only when this player has nothing to decide (the
        opponent is switching after a faint). Only the two-player env ever
        offers it; a single-agent env is never asked to wait.
======  =====================================================================

*Move slots* are the moves of the active Pokémon in the order of Showdown's
request (the set's move order). When the request offers a single move that is not
in the moveset (Struggle, a recharge turn), slot 1 selects it. *Team slots* are the
Pokémon of the player's team in team order (the order of the team sheet, or of the
generated team); a slot keeps its Pokémon for the whole battle, so the switch
actions and the observation's team slots always agree.

**What counts as an action.** An integer of any integer type (``int``, NumPy integer
scalars, 0-d integer arrays), or a float that is a whole number (``3.0``: array
libraries often hand discrete actions over as floats) meaning that integer. Everything
else raises :class:`~pokegym.errors.IllegalActionError` before anything is sent:
fractional, infinite and NaN floats, strings, sequences, ``None`` and booleans
(``True`` is an int in Python, but a flag passed as an action is a bug, not move 2).

The codec turns an action into Showdown's choice string (``move 2 terastallize``,
``switch 3``, ``team 312456``), into a poke-env ``BattleOrder``, and back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle, Move, Pokemon
from poke_env.player.battle_order import (
    BattleOrder,
    DefaultBattleOrder,
    SingleBattleOrder,
)

from pokegym.errors import IllegalActionError

N_MOVES = 4
N_TEAM = 6
MOVE = 0
GIMMICK_MOVE = 4
SWITCH = 8
WAIT = 14
N_ACTIONS = 15


def request_moves(battle: AbstractBattle) -> list[dict[str, Any]]:
    """Move entries of the current request for the active Pokémon (empty if none)."""
    request = battle.last_request
    if not request or request.get("wait") or request.get("teamPreview"):
        return []
    if request.get("forceSwitch") and any(request["forceSwitch"]):
        return []
    active = request.get("active")
    if not active:
        return []
    moves: list[dict[str, Any]] = active[0].get("moves", [])
    return moves


def _request_positions(battle: AbstractBattle) -> dict[str, int]:
    side = battle.last_request.get("side") or {}
    return {mon["ident"]: i for i, mon in enumerate(side.get("pokemon", []))}


def action_index(action: Any) -> int:
    """The integer an action stands for (see "What counts as an action" above).

    Raises:
        IllegalActionError: the action is not an integer or a whole-number float.
    """
    value = action[()] if isinstance(action, np.ndarray) and action.ndim == 0 else action
    if isinstance(value, bool | np.bool_):
        raise IllegalActionError(
            f"Actions are integers in 0-{N_ACTIONS - 1}, got the bool {action!r} "
            "(pass int(action) if you meant it)."
        )
    if not isinstance(value, np.ndarray):
        try:
            index = int(value)
            if index == value:
                return index
        except (TypeError, ValueError, OverflowError):
            pass
    raise IllegalActionError(f"Actions are integers in 0-{N_ACTIONS - 1}, got {action!r}.")


class ActionCodec:
    """Encodes and decodes the :data:`N_ACTIONS`-way action layout for one format.

    Args:
        gimmick: ``"terastallize"``, ``"dynamax"`` or None, from the format.
    """

    n_actions = N_ACTIONS

    def __init__(self, gimmick: str | None):
        if gimmick not in (None, "terastallize", "dynamax"):
            raise ValueError(f"unknown gimmick {gimmick!r}")
        self.gimmick = gimmick

    # ----------------------------------------------------------------- masks
    def mask(self, battle: AbstractBattle, *, waiting: bool = False) -> np.ndarray:
        """Legal actions as an int8 vector of length :data:`N_ACTIONS`.

        Args:
            waiting: the player has no decision this step (two-player env): only
                :data:`WAIT` is legal.
        """
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if waiting or battle.finished:
            mask[WAIT] = 1
            return mask
        if battle.teampreview:
            mask[SWITCH : SWITCH + min(len(battle.team), N_TEAM)] = 1
            return mask
        moves = request_moves(battle)
        can_gimmick = self._can_gimmick(battle)
        # `legal` tracks what mask.any() would say, without a NumPy reduction
        # (this runs twice per environment step: the agent's and the opponent's).
        legal = False
        for i, move in enumerate(moves[:N_MOVES]):
            if not move.get("disabled"):
                mask[MOVE + i] = 1
                legal = True
                if can_gimmick:
                    mask[GIMMICK_MOVE + i] = 1
        if not battle.trapped:
            switches = battle.available_switches
            if switches:
                switchable = {id(mon) for mon in switches}
                for i, mon in enumerate(list(battle.team.values())[:N_TEAM]):
                    if id(mon) in switchable:
                        mask[SWITCH + i] = 1
                        legal = True
        if not legal:
            # Showdown always offers something; reaching here means poke-env's view
            # disagrees with the request. Fall back to what the request allows.
            mask[MOVE : MOVE + min(len(moves), N_MOVES)] = 1
        return mask

    def _can_gimmick(self, battle: AbstractBattle) -> bool:
        if self.gimmick == "terastallize":
            return bool(battle.can_tera)
        if self.gimmick == "dynamax":
            return bool(battle.can_dynamax)
        return False

    def legal_actions(self, battle: AbstractBattle, *, waiting: bool = False) -> list[int]:
        return [int(i) for i in np.flatnonzero(self.mask(battle, waiting=waiting))]

    # --------------------------------------------------------------- decoding
    def describe(self, action: int, battle: AbstractBattle | None = None) -> str:
        """Human-readable meaning of an action, with names when a battle is given."""
        action = int(action)
        if not 0 <= action < N_ACTIONS:
            return f"{action} (out of range 0-{N_ACTIONS - 1})"
        if action == WAIT:
            return f"{action}=wait"
        if action >= SWITCH:
            slot = action - SWITCH
            name = ""
            if battle is not None:
                team = list(battle.team.values())
                if slot < len(team):
                    name = f" {team[slot].species}"
            verb = "lead with" if battle is not None and battle.teampreview else "switch to"
            return f"{action}={verb} slot {slot + 1}{name}"
        slot = action % N_MOVES
        name = ""
        if battle is not None:
            moves = request_moves(battle)
            if slot < len(moves):
                name = f" {moves[slot]['move']}"
        suffix = f" + {self.gimmick or 'gimmick'}" if action >= GIMMICK_MOVE else ""
        return f"{action}=move {slot + 1}{name}{suffix}"

    def check(
        self,
        action: Any,
        battle: AbstractBattle,
        *,
        waiting: bool = False,
        mask: np.ndarray | None = None,
    ) -> int:
        """Validate an action against the current state and return it as an int.

        Args:
            mask: this battle's :meth:`mask` for the current state when the caller
                already has it (the vector env computed it with the observation and
                nothing was parsed since); None computes it.

        Raises:
            IllegalActionError: naming the legal actions; nothing is sent.
        """
        index = action_index(action)
        if mask is None:
            mask = self.mask(battle, waiting=waiting)
        if not 0 <= index < N_ACTIONS or not mask[index]:
            legal = ", ".join(self.describe(i, battle) for i in np.flatnonzero(mask))
            raise IllegalActionError(
                f"Illegal action {self.describe(index, battle)} on turn {battle.turn}. "
                f"Legal actions now: {legal}. Use obs['action_mask'] (or env.action_masks()) "
                "to sample legal actions."
            )
        return index

    def to_choice(self, action: int, battle: AbstractBattle) -> str | None:
        """Showdown's choice string for a *legal* action (None for wait)."""
        if action == WAIT:
            return None
        if battle.teampreview:
            n = len(battle.team)
            lead = action - SWITCH
            order = [lead] + [i for i in range(n) if i != lead]
            return "team " + "".join(str(i + 1) for i in order)
        if action >= SWITCH:
            mon = list(battle.team.values())[action - SWITCH]
            position = _request_positions(battle).get(self._ident(battle, mon))
            if position is None:
                raise IllegalActionError(f"{mon.species} is not in the current request.")
            return f"switch {position + 1}"
        choice = f"move {action % N_MOVES + 1}"
        if action >= GIMMICK_MOVE and self.gimmick:
            choice += f" {self.gimmick}"
        return choice

    @staticmethod
    def _ident(battle: AbstractBattle, mon: Pokemon) -> str:
        for ident, candidate in battle.team.items():
            if candidate is mon:
                return ident
        raise IllegalActionError(f"{mon.species} is not on this team.")

    def to_order(self, action: int, battle: AbstractBattle) -> BattleOrder:
        """The poke-env order for a legal action (what ``Player.choose_move`` returns)."""
        if action == WAIT:
            return DefaultBattleOrder()
        if action >= SWITCH:
            return SingleBattleOrder(list(battle.team.values())[action - SWITCH])
        entry = request_moves(battle)[action % N_MOVES]
        move = self._find_move(battle, entry["id"])
        gimmick = action >= GIMMICK_MOVE
        return SingleBattleOrder(
            move,
            terastallize=gimmick and self.gimmick == "terastallize",
            dynamax=gimmick and self.gimmick == "dynamax",
        )

    @staticmethod
    def _find_move(battle: AbstractBattle, move_id: str) -> Move:
        for move in battle.available_moves:
            if move.id == move_id:
                return move
        active = battle.active_pokemon
        if active is not None and move_id in active.moves:
            return active.moves[move_id]  # type: ignore[no-any-return]
        return Move(move_id, gen=battle.gen)

    # --------------------------------------------------------------- encoding
    def from_order(self, order: BattleOrder | str, battle: AbstractBattle) -> int:
        """The action index of a poke-env order (or a ``/team`` string at preview).

        Raises:
            IllegalActionError: the order names nothing the player can do now.
        """
        if isinstance(order, str):
            text = order.removeprefix("/team ").removeprefix("team ").strip()
            if battle.teampreview and text[:1].isdigit():
                return SWITCH + int(text[0]) - 1
            raise IllegalActionError(f"Cannot read the order {order!r}.")
        if not isinstance(order, SingleBattleOrder) or isinstance(order, DefaultBattleOrder):
            raise IllegalActionError(f"{order!r} has no action index (only moves and switches).")
        target = order.order
        if isinstance(target, Pokemon):
            for i, mon in enumerate(battle.team.values()):
                if mon is target or mon.species == target.species:
                    return SWITCH + i
            raise IllegalActionError(f"{target.species} is not on this team.")
        if isinstance(target, Move):
            ids = [entry["id"] for entry in request_moves(battle)]
            if target.id in ids:
                slot = ids.index(target.id)
            elif len(ids) == 1:
                slot = 0  # Struggle, recharge or a locked move stands for slot 1
            else:
                raise IllegalActionError(
                    f"{target.id} is not among the active Pokémon's moves {ids}."
                )
            gimmick = order.terastallize or order.dynamax
            return (GIMMICK_MOVE if gimmick else MOVE) + slot
        raise IllegalActionError(f"Cannot read the order {order!r}.")

    def order_to_choice(self, order: BattleOrder | str, battle: AbstractBattle) -> str:
        """Showdown's choice string for a poke-env order, validated against the mask."""
        if isinstance(order, DefaultBattleOrder):
            return "default"
        if isinstance(order, str):
            stripped = order.strip()
            if stripped.startswith("/team") or stripped.startswith("team"):
                digits = stripped.split(" ", 1)[1] if " " in stripped else ""
                return f"team {digits}".strip()
        action = self.check(self.from_order(order, battle), battle)
        choice = self.to_choice(action, battle)
        assert choice is not None
        return choice
