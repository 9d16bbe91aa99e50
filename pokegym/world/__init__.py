"""The world model: battle state, damage calculator, transition model, priors, and what a
search reads from a state besides the next one (the hand-written value in ``evaluation``,
the value network's encoding in ``encoding``, the damage prior over actions in
``action_prior``).

Those modules, ``state``, ``damage`` and ``transition`` also exist as a compiled build
(mypyc, built by ``pokegym accel build``); when one matches the current sources it is
loaded instead of the Python files (see :mod:`pokegym.world._accel`; ``POKEGYM_ACCEL=0``
turns it off).
"""

from pokegym.world import _accel

_accel.activate(__path__)
