"""The rule-based agents whose choice can anchor a search (``anchor=``, ``predict=``).

An anchor is asked for its order before the search; the search then gives that choice a
share of its root prior (MCTS) or keeps it unless its own choice is worth clearly more
(both searches). :func:`anchor_policy` builds one by name.
"""

from __future__ import annotations

from typing import Any

from policies.abyssal import AbyssalPolicy
from policies.base import Policy

ANCHORS: dict[str, type[Policy] | None] = {"none": None, "abyssal": AbyssalPolicy}
"""The anchors by name (``none``: no anchor)."""

ANCHOR_RULES = ("finish", "switch_out", "forced_switch", "forced_move", "hazard",
                "hazard_removal", "recovery", "setup", "status", "attack")  # fmt: skip
"""The rules of ``abyssal`` (its ``last_rule``) that ``trust=`` can name."""


def trusted_rules(trust: Any) -> frozenset[str]:
    """The rule names of a ``trust=`` option (``"finish+hazard"``), checked against
    :data:`ANCHOR_RULES`; ValueError naming the valid ones otherwise."""
    if trust not in (None, "") and not isinstance(trust, str):
        raise ValueError(f"trust names the anchor's rules joined by '+', not {trust!r}")
    rules = frozenset(r for r in str(trust or "").replace("+", " ").split() if r)
    unknown = rules - set(ANCHOR_RULES)
    if unknown:
        raise ValueError(f"trust names the anchor's rules (abyssal's: {', '.join(ANCHOR_RULES)}), "
                         f"not {', '.join(sorted(unknown))}")  # fmt: skip
    return rules


def anchor_policy(name: str, seed: int | None) -> Any:
    """The anchor called ``name`` (a key of :data:`ANCHORS`) with ``seed``, or None."""
    kind = ANCHORS[name]
    return kind(seed) if kind is not None else None


__all__ = ["ANCHORS", "ANCHOR_RULES", "anchor_policy", "trusted_rules"]
