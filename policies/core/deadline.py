"""The deadline rule of the agents that search under a time budget.

A decision has ``budget`` seconds from the moment the agent was asked; the search gets
what is left of them less a margin kept in hand for building the order and sending it:
:data:`DEADLINE_MARGIN` for searches that look at the clock every few microseconds (the
MCTS, poke-engine's batches), :data:`COARSE_DEADLINE_MARGIN` for the maximin, which looks
only between node expansions (and for the LLM agent on it, whose model calls stop at the
deadline but may take a moment to return).
"""

from __future__ import annotations

import time

DEADLINE_MARGIN = 0.05
"""Seconds kept in hand before a decision's deadline."""

COARSE_DEADLINE_MARGIN = 0.25
"""Seconds kept in hand by the searches that look at the clock only between larger steps."""


def seconds_left(
    budget: float, started: float, now: float | None = None, margin: float = DEADLINE_MARGIN
) -> float:
    """Search seconds left of a ``budget`` that began at ``started`` (readings of one clock,
    ``time.perf_counter`` unless ``now`` is given), never below 0."""
    now = time.perf_counter() if now is None else now
    return max(0.0, budget - (now - started) - margin)
