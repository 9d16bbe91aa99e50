"""Agents that play Showdown battles: observation/battle -> order.

Every agent follows one contract, :class:`policies.base.Policy`: ``choose(battle)``
returns a poke-env ``BattleOrder`` for the battle object it is given. Agents are
registered by name through the ``pokegym.agents`` entry points (see
``pyproject.toml``) so that environments and the CLI can build them from a string.
"""

from policies.base import Policy
from policies.baselines import MaxPowerPolicy, RandomPolicy

__all__ = ["MaxPowerPolicy", "Policy", "RandomPolicy"]
