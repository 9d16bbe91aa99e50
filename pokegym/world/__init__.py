"""The world model: the rules of a battle and nothing about decisions. The battle state,
the damage calculator, the transition model (one turn, expected or sampled), speed order,
move effects, and the priors over the opponent's hidden sets.

``state``, ``speed``, ``damage``, ``state_damage``, ``move_effects`` and ``transition``
also exist as a compiled build (mypyc, built by ``pokegym accel build``); when one matches
the current sources it is loaded instead of the Python files (see
:mod:`pokegym.world._accel`; ``POKEGYM_ACCEL=0`` turns it off). What a search reads from a
state besides the next one (the leaf value, the network's encoding, the damage prior) is
the agents' and lives in :mod:`policies.core`.
"""

from pokegym.world import _accel

_accel.activate(__path__)
