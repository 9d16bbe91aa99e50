"""The named mistakes of the ``stall`` and ``switching`` suites, counted from a battle's
protocol log (Showdown's spectator log; the agent is ``p1``).

An agent's move *met a resist* when, between its ``|move|p1a: ...`` line and the next
move, switch or turn line, the log has ``|-resisted|p2a: ...`` or ``|-immune|p2a: ...``
(the target took less than neutral damage, or none).

- ``stall``: **repeated hits into a resist**: a move that met a resist right after the
  agent's previous move also met one (any two moves in a row; each such move counts once).
- ``switching``: **repeated a resisted attack**: the agent used the same move as its
  previous one, which met a resist, and it met a resist again.

A battle *has the mistake* when its count is at least 1; ``pokegym puzzles run`` reports
the share of battles with it (a Wilson interval) and the mean count per battle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

AGENT_ROLE = "p1"
_ENDS = ("move", "switch", "drag", "turn", "cant", "win", "tie")


@dataclass(frozen=True)
class MoveUse:
    """One move of the agent's in the log."""

    turn: int
    move: str
    resisted: bool


def agent_moves(log: str, role: str = AGENT_ROLE) -> list[MoveUse]:
    """The moves ``role`` used, in order, each marked whether it met a resist."""
    target = "p2" if role == "p1" else "p1"
    uses: list[MoveUse] = []
    turn, current = 0, None
    for line in log.split("\n"):
        parts = line.split("|")
        if len(parts) < 2:
            continue
        kind = parts[1]
        if kind in _ENDS and current is not None:
            uses.append(current)
            current = None
        if kind == "turn" and len(parts) > 2 and parts[2].isdigit():
            turn = int(parts[2])
        elif kind == "move" and len(parts) > 3 and parts[2].startswith(role):
            current = MoveUse(turn, parts[3], False)
        elif kind in ("-resisted", "-immune") and current is not None and len(parts) > 2:
            if parts[2].startswith(target):
                current = MoveUse(current.turn, current.move, True)
    if current is not None:
        uses.append(current)
    return uses


def repeated_resisted_hits(log: str) -> int:
    """The stall suite's mistake: moves that met a resist right after one that did."""
    uses = agent_moves(log)
    return sum(1 for prev, now in pairwise(uses) if prev.resisted and now.resisted)


def repeated_resisted_move(log: str) -> int:
    """The switching suite's mistake: the same move again after it met a resist, meeting
    one again."""
    uses = agent_moves(log)
    return sum(
        1
        for prev, now in pairwise(uses)
        if prev.resisted and now.resisted and prev.move == now.move
    )


#: Per suite: the mistake's name and its counter.
MISTAKES: dict[str, tuple[str, Callable[[str], int]]] = {
    "stall": ("repeated hits into a resist", repeated_resisted_hits),
    "switching": ("repeated a resisted attack", repeated_resisted_move),
}
