"""The damage calculator: Showdown's damage formula for generations 8 and 9, asked one
(attacker, defender, move, field) question at a time (:func:`calculate`) or over a
distribution of hidden sets (:func:`damage_over_prior`).

The package is split along the calculator's steps: ``combatant`` (what it reads and
answers), ``tables`` (effect tables, 4096-based arithmetic), ``moves`` (move data),
``context`` (one question prepared, the checks before the formula), ``power`` (base
power), ``stats`` (attack, defense, damage modifiers) and ``calculator`` (the formula,
the hit tables and results, form breaks; what it still flags as approximate is listed
in its docstring). Everything a caller needs is importable from here.
"""
# ruff: noqa: E402 (the compiled build's folder goes on __path__ before the submodules load)

from pokegym.world import _accel

# Like pokegym.world itself: the compiled modules of this package, when a build for the
# current sources exists, load instead of the Python files (pokegym.world._accel).
_accel.activate_subpackage(__path__, "damage")

from pokegym.world.damage.calculator import (
    broken_form,
    calculate,
    clear_cache,
    damage_over_attacker_prior,
    damage_over_prior,
)
from pokegym.world.damage.combatant import Combatant, DamageResult, Field, Side
from pokegym.world.damage.moves import known_species, max_move_of

__all__ = [
    "Combatant",
    "DamageResult",
    "Field",
    "Side",
    "broken_form",
    "calculate",
    "clear_cache",
    "damage_over_attacker_prior",
    "damage_over_prior",
    "known_species",
    "max_move_of",
]
