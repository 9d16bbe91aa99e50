"""Sure knock-outs, as poke-engine plays the turn out.

A move of ours is a *sure knock-out* when, on every guess of the hidden information
searched this decision and against every move the opponent's active Pokémon can choose
(not a switch; with or without Terastallization), every chance branch of the turn ends
with the opponent's Pokémon fainted and ours standing. The turn is the engine's own
(:func:`poke_engine.generate_instructions`): damage rolls, accuracy, critical hits,
speed ties, priority, Focus Sash, Sturdy, recoil and the end of the turn are all in its
branches, so the guarantee needs no rule of its own about who moves first. It is as
sure as the engine's model of the turn: poke-engine counts a move that hits two to five
times as three hits (five with Skill Link), and knows nothing of Illusion. It says
nothing about a switch: the Pokémon that comes in takes the move instead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

TERA = "-tera"
NO_MOVE = "no move"
"""The engine's name for a side that does not act this turn (it reads it as ``none``)."""


@dataclass(frozen=True)
class SearchedGuess:
    """One guess's engine state and the root options its search had for each side, by
    the engine's names."""

    state: Any
    ours: tuple[str, ...]
    theirs: tuple[str, ...]


def is_move(option: str) -> bool:
    """Whether the engine's option name is a move (not a switch, nor a move with Tera)."""
    return not option.startswith("switch ") and not option.endswith(TERA) and option != NO_MOVE


def sure_knockouts(engine: Any, guesses: Sequence[SearchedGuess],
                   candidates: Iterable[str]) -> list[str]:  # fmt: skip
    """The ``candidates`` (our moves, by the engine's names) that are sure knock-outs on
    every guess of ``guesses`` (see the module docstring), in the order given; none
    where a guess gives the opponent only switches (nothing is in front of us to knock
    out); an opponent that does not act this turn (``no move``: it recharges) is one that
    cannot answer."""
    names = [n for n in candidates if is_move(n)]
    if not guesses:
        return []
    for guess in guesses:
        replies = [o for o in guess.theirs if not o.startswith("switch ")]
        if not replies:
            return []
        names = [n for n in names if n in guess.ours
                 and all(_knocks_out(engine, guess.state, n, r) for r in replies)]  # fmt: skip
        if not names:
            return []
    return names


def finish(
    engine: Any,
    guesses: Sequence[SearchedGuess],
    shares: Mapping[str, float],
    chosen: str,
    opponent_shares: Mapping[str, float],
) -> tuple[str, list[str] | None]:
    """The order to play after the search chose ``chosen`` among ``shares`` (our legal
    options' visit shares): the most visited sure knock-out where the search's choice
    is not one, else ``chosen``; and the sure knock-outs found (None where the check
    failed: an extra after the search, whose choice then stands). ``opponent_shares``
    (the opponent's root visit shares) are only logged."""
    try:
        names = sure_knockouts(engine, guesses, shares)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as error:  # the engine panics as a BaseException
        log.warning("engine: sure knock-outs not checked (%s: %s)", type(error).__name__, error)
        return chosen, None
    if not names or chosen in names:
        return chosen, names
    best = max(names, key=lambda n: shares[n])
    switches = sum(v for n, v in opponent_shares.items() if n.startswith("switch "))
    log.info("engine: a sure knock-out, %s, over the search's %s (the opponent's root: "
             "%.0f %% switches)", best, chosen, 100 * switches)  # fmt: skip
    return best, names


def _knocks_out(engine: Any, state: Any, ours: str, theirs: str) -> bool:
    """Whether every branch of the turn (``ours`` against ``theirs``) ends with the
    opponent's active Pokémon fainted and ours standing."""
    mine = int(state.side_one.active_index)
    target = int(state.side_two.active_index)
    reply = "none" if theirs == NO_MOVE else theirs
    for branch in engine.generate_instructions(state, ours, reply):
        if branch.percentage <= 0.0:
            continue
        after = state.apply_instructions(branch)
        if after.side_two.pokemon[target].hp > 0 or after.side_one.pokemon[mine].hp <= 0:
            return False
    return True
