"""The deadline rule of the agents that search under a time budget.

A decision has ``budget`` seconds from the moment the agent was asked; the search gets
what is left of them less :data:`DEADLINE_MARGIN`, kept in hand for building the order
and sending it.
"""

from __future__ import annotations

import time

DEADLINE_MARGIN = 0.05
"""Seconds kept in hand before a decision's deadline."""


def seconds_left(budget: float, started: float, now: float | None = None) -> float:
    """Search seconds left of a ``budget`` that began at ``started`` (``time.perf_counter``
    readings), never below 0."""
    now = time.perf_counter() if now is None else now
    return max(0.0, budget - (now - started) - DEADLINE_MARGIN)
