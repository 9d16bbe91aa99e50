"""The root of poke-engine's searches: its options' names, and the visit shares the
``engine`` agent adds up over guesses and searches."""

from __future__ import annotations

from typing import Any


def root_is_clear(shares: dict[str, float], clear: float) -> bool:
    """Whether the runner-up option has at most ``clear`` of the best one's share (one
    option or none: clear)."""
    top = sorted(shares.values(), reverse=True)[:2]
    return len(top) < 2 or top[1] <= clear * top[0]


def pooled(first: dict[str, float], first_weight: float, second: dict[str, float],
           second_weight: float) -> dict[str, float]:  # fmt: skip
    """Two searches' shares averaged, each weighed by its iterations (alike if neither
    ran any)."""
    total = first_weight + second_weight
    a, b = (first_weight / total, second_weight / total) if total > 0 else (0.5, 0.5)
    return {n: a * first.get(n, 0.0) + b * second.get(n, 0.0) for n in first.keys() | second}


def option_name(choice: Any) -> str:
    """The engine's name of a root option (a string, or a pair in some builds)."""
    if isinstance(choice, tuple | list):
        choice = choice[0]
    return str(choice).lower()
