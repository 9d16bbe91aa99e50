"""Offline replays: a saved battle, turn by turn, in the same view as a live battle.

Reads what pokegym saves: the spectator log of ``pokegym play`` (``.log``, or its
``.json`` sidecar) and the HTML replays of ``compare --replays`` (the protocol log
inside their ``battle-log-data`` block). The protocol lines are fed into a poke-env
battle seen from side p1, and the page's view (:func:`pokegym.web.view.battle_view`)
is taken at the start of every turn. Nothing is fetched from the internet.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pokegym.backends.base import ShowdownBattle
from pokegym.errors import PokegymError
from pokegym.play import BattleEvents
from pokegym.text.render import GameNames
from pokegym.web.sprites import SpriteIndex
from pokegym.web.view import battle_view

logger = logging.getLogger("pokegym.replay")
_LOG_BLOCK = re.compile(
    r'<script type="text/plain" class="battle-log-data">(.*?)</script>', re.DOTALL
)
# Lines a player's client handles itself (chat, timers, requests): not battle events.
_SKIP = frozenset(
    {"t:", "j", "J", "l", "L", "n", "c", "c:", "chat", "raw", "html", "uhtml", "uhtmlchange",
     "inactive", "inactiveoff", "expire", "request", "error", "bigerror", "tempnotify",
     "tempnotifyoff", "split", "timestamp", "debug", "seed", "noinit", "deinit"}
)  # fmt: skip
REPLAY_SUFFIXES = (".log", ".json", ".html")


class ReplayError(PokegymError, ValueError):
    """A file is not a replay pokegym can read; the message says what it expected."""


@dataclass(frozen=True)
class ReplayLog:
    """The protocol lines of one battle and what they say about it."""

    source: str
    lines: list[str]
    players: tuple[str, str]
    gen: int
    format_name: str


def read_replay(path: str | Path) -> ReplayLog:
    """The battle saved in ``path`` (``.log``, ``.json`` sidecar or ``.html``).

    Raises:
        ReplayError: the file is missing, of another kind, or holds no battle.
    """
    path = Path(path)
    if not path.is_file():
        raise ReplayError(f"No replay file at {path}.")
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path} is not a JSON replay sidecar: {exc}.") from exc
        log_name = meta.get("log") if isinstance(meta, dict) else None
        if not log_name:
            raise ReplayError(f"{path} names no protocol log (its battle kept none).")
        return read_replay(path.with_name(Path(str(log_name)).name))
    text = path.read_text(encoding="utf-8", errors="replace")
    if suffix == ".html":
        match = _LOG_BLOCK.search(text)
        if match is None:
            raise ReplayError(f"{path} holds no battle log (no battle-log-data block).")
        text = html.unescape(match.group(1))
    elif suffix != ".log":
        raise ReplayError(
            f"{path}: pokegym reads replays as .log (pokegym play), .json (its sidecar) "
            "or .html (compare --replays)."
        )
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    players = ["p1", "p2"]
    gen, format_name = 9, ""
    for line in lines:
        parts = line.split("|")
        if len(parts) >= 4 and parts[1] == "player" and parts[2] in ("p1", "p2") and parts[3]:
            players[0 if parts[2] == "p1" else 1] = parts[3]
        elif len(parts) >= 3 and parts[1] == "gen" and parts[2].isdigit():
            gen = int(parts[2])
        elif len(parts) >= 3 and parts[1] == "tier":
            format_name = parts[2]
    if not any(line.startswith("|turn|") or line.startswith("|switch|") for line in lines):
        raise ReplayError(f"{path} holds no battle (no switch or turn lines).")
    return ReplayLog(str(path), lines, (players[0], players[1]), gen, format_name)


def replay_battle(replay: ReplayLog) -> ShowdownBattle:
    """An empty poke-env battle seen from side p1, ready for :func:`turn_starts`."""
    battle = ShowdownBattle("battle-replay", replay.players[0], logger, replay.gen)
    # As for a live battle on the simulator: without a title the opponent stays unnamed.
    battle.parse_message(["", "init", "battle"])
    battle.parse_message(["", "title", f"{replay.players[0]} vs. {replay.players[1]}"])
    return battle


def turn_starts(replay: ReplayLog, battle: ShowdownBattle) -> Iterator[str | None]:
    """Feeds the replay's lines into ``battle`` and pauses at the start of every turn (the
    state at the end of the previous one; the leads for turn 1) and at the end, yielding
    the result so far (``"p1 won."``, a tie, or None)."""
    result: str | None = None
    started = False
    for line in replay.lines:
        parts = line.split("|")
        if len(parts) < 2 or parts[1] in _SKIP:
            continue
        kind = parts[1]
        if kind == "win" and len(parts) > 2:
            result = f"{parts[2]} won."
            continue
        if kind == "tie":
            result = "The battle ended in a tie."
            continue
        if kind == "turn" and started:
            yield result
        try:
            battle.parse_message(parts)
        except Exception as exc:  # one odd line must not cost the whole replay
            logger.debug("replay line %r skipped: %s", line, exc)
        if kind in ("switch", "drag", "teampreview", "turn"):
            started = True
    yield result


def replay_frames(
    replay: ReplayLog, names: GameNames, sprites: SpriteIndex | None = None
) -> list[dict[str, Any]]:
    """One frame per turn start plus the end: ``{"turn", "view", "events", "result"}``.

    ``events`` are the sentences of what happened since the previous frame.
    """
    battle = replay_battle(replay)
    events = BattleEvents(battle, names)
    return [
        {
            "turn": battle.turn,
            "view": battle_view(battle, names, sprites=sprites, exact_hp=False),
            "events": events.new(),
            "result": result,
        }
        for result in turn_starts(replay, battle)
    ]
