"""What a battle played by a person (``pokegym play``, ``pokegym play --web``) leaves:
its :class:`PlayResult`, and the replay written from it (:func:`save_replay`: Showdown's
spectator log and a JSON sidecar).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pokegym import __version__
from pokegym.files import atomic_write


@dataclass
class PlayResult:
    """What one battle played by a person produced (the content of the JSON sidecar).

    ``result`` is "won", "lost" or "tie" for a battle played to its end, "forfeit"
    when the person gave up (the ``forfeit`` command, Ctrl-D or Ctrl-C, a browser tab
    left closed), "truncated" at the format's turn limit, "unfinished" when it broke
    off (``ended_by`` says how: "battle", "forfeit", "eof", "interrupt", "abandoned",
    "shutdown", "max_turns", "error").
    """

    format: str
    player_name: str
    opponent_name: str
    seed: int
    result: str = "unfinished"
    ended_by: str = "error"
    winner: str | None = None  # "player", "opponent", or None (tie / unfinished)
    turns: int = 0
    choices: list[dict[str, Any]] = field(default_factory=list)
    rating: int | None = None
    log: str | None = None
    error: str | None = None
    finished: bool = False  # Showdown ended the battle (a win or tie line is in the log)
    decision_seconds: list[float] = field(default_factory=list)  # the person's, per choice
    opponent_seconds: list[float] = field(default_factory=list)  # the agent's, per choice

    @property
    def ended(self) -> bool:
        """The battle came to an end a playtest counts (a result, a forfeit, the turn limit)."""
        return self.result in ("won", "lost", "tie", "forfeit", "truncated")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "agent"


def replay_metadata(
    result: PlayResult, *, opponent_spec: str, team: str | None = None
) -> dict[str, Any]:
    """The JSON sidecar of a replay."""
    return {
        "pokegym_version": __version__,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "format": result.format,
        "player_name": result.player_name,
        "player_side": "p1",
        "opponent": opponent_spec,
        "opponent_name": result.opponent_name,
        "team": team,
        "seed": result.seed,
        "result": result.result,
        "ended_by": result.ended_by,
        "finished": result.finished,
        "winner": result.winner,
        "turns": result.turns,
        "choices": result.choices,
        "rating": result.rating,
        "error": result.error,
        "decision_seconds": result.decision_seconds,
        "opponent_seconds": result.opponent_seconds,
    }


def save_replay(
    result: PlayResult,
    folder: str | Path,
    *,
    opponent_spec: str,
    team: str | None = None,
) -> tuple[Path | None, Path]:
    """Write ``<stamp>-<format>-vs-<opponent>.log`` (Showdown's spectator protocol
    log, readable by Showdown's replay tools) and the ``.json`` sidecar beside it.

    Returns (log path or None when no log was kept, JSON path).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{_slug(result.format)}-vs-{_slug(result.opponent_name)}"
    stem, n = base, 1
    while (folder / f"{stem}.json").exists() or (folder / f"{stem}.log").exists():
        n += 1
        stem = f"{base}-{n}"
    log_path = folder / f"{stem}.log" if result.log is not None else None
    payload = replay_metadata(result, opponent_spec=opponent_spec, team=team)
    payload["log"] = log_path.name if log_path is not None else None
    if log_path is not None and result.log is not None:
        atomic_write(log_path, result.log if result.log.endswith("\n") else result.log + "\n")
    json_path = folder / f"{stem}.json"
    atomic_write(json_path, json.dumps(payload, indent=2) + "\n")
    return log_path, json_path
