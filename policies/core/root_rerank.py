"""Choosing among a search's near-best root options by a one-turn lookahead of our own.

A search (poke-engine's MCTS) ranks our options by visits. Where several are close, the
visits say little about which is better; :func:`rerank` plays each of them for one turn
in the project's world model (the expected turn) against the opponent's options, weighed
by how often the search explored each, and values the states reached with one of our
evaluators: the distilled value network or the hand-written evaluation. The option with
the best expected value is played.

The lookahead runs on one state, the belief's modal guess without the Pokémon not seen
yet; the engine searched several guesses with them. Its replies to switches into unseen
Pokémon and to moves of other guessed sets do not map onto that state and are left out
(the rest renormalised), so the lookahead underweights the opponent's switches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pokegym.world.data import to_id
from pokegym.world.state import BattleState
from pokegym.world.transition import Action, TransitionModel
from policies.core.battle import PASS, legal_actions

#: The engine's names of a side that does not act this turn (we switch after a faint).
NO_MOVE = frozenset({"no move", "nomove", "none"})


def opponent_action(name: str, state: BattleState) -> Action | None:
    """The opponent's world-model action for the engine's name of it (``"move"``,
    ``"move-tera"``, ``"switch species"``, ``"no move"``: :data:`PASS`), or None where the
    state has no such action."""
    if name in NO_MOVE:
        return PASS
    if name.startswith("switch "):
        species = to_id(name[len("switch ") :])
        for i, mon in enumerate(state.sides[1].mons):
            if to_id(mon.species) == species:
                return ("switch", i, False)
        return None
    tera = name.endswith("-tera")
    return ("move", to_id(name[: -len("-tera")] if tera else name), tera)


def opponent_policy(
    model: TransitionModel, state: BattleState, shares: Mapping[str, float]
) -> dict[Action, float]:
    """The opponent's legal actions with the search's visit shares (normalised); uniform
    over its legal actions where none of the search's options maps onto one; a pass where
    the search has it mostly not acting (a turn where only we switch)."""
    if sum(share for name, share in shares.items() if name in NO_MOVE) >= 0.5:
        return {PASS: 1.0}
    legal = set(legal_actions(model, state, 1))
    weights: dict[Action, float] = {}
    for name, share in shares.items():
        action = opponent_action(name, state)
        if action in legal and share > 0:
            weights[action] = weights.get(action, 0.0) + share
    if not weights:
        return {action: 1.0 / len(legal) for action in legal}
    total = sum(weights.values())
    return {action: w / total for action, w in weights.items()}


def rerank(
    model: TransitionModel,
    state: BattleState,
    candidates: Sequence[Action],
    opponent: Mapping[Action, float],
    evaluator: Any,
    time_left: Callable[[], float] | None = None,
) -> tuple[Action, dict[Action, float]]:
    """The candidate with the best expected value one turn ahead, and each candidate
    valued: ``Σ_b p(b) · V(step(state, a, b))`` with ``V`` the evaluator's win chance.

    Candidates are valued in their order while ``time_left()`` is positive (the first
    always); a tie goes to the earlier one."""
    expected: dict[Action, float] = {}
    for a in candidates:
        if expected and time_left is not None and time_left() <= 0:
            break
        replies = list(opponent)
        values = evaluator.evaluate([model.step(state, a, b) for b in replies])
        expected[a] = sum(opponent[b] * float(v) for b, v in zip(replies, values, strict=True))
    best = max(expected, key=lambda a: expected[a])
    return best, expected
