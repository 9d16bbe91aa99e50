"""Replay files: the forms Showdown's replay site serves, and the logs pokegym writes.

* ``.json``: the replay site's JSON (``https://replay.pokemonshowdown.com/<id>.json``)
  with the keys ``id``, ``format`` or ``formatid``, ``players``, ``rating``,
  ``uploadtime`` and ``log`` (the protocol log as text); also the sidecar that
  ``pokegym play`` writes, whose ``log`` names a ``.log`` file next to it.
* ``.log``: the raw protocol log (``<id>.log`` on the replay site; what
  ``pokegym battle --replays DIR`` and ``pokegym play`` write).
* ``.html``: a replay page (the replay site's, or ``pokegym compare --replays``'s),
  the log inside its ``<script type="text/plain" class="battle-log-data">`` block.

:func:`read_replay` reads any of them into a :class:`Replay`;
:func:`replay_json` and :func:`replay_html` write a :class:`Replay` back in the
replay site's forms.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pokegym.errors import PokegymError
from pokegym.world.data import to_id

__all__ = [
    "REPLAY_SUFFIXES",
    "Replay",
    "ReplayFileError",
    "read_replay",
    "replay_files",
    "replay_from_log",
    "replay_html",
    "replay_json",
]

REPLAY_SUFFIXES = (".json", ".log", ".html", ".htm")
_LOG_BLOCK = re.compile(
    r'<script type="text/plain" class="battle-log-data">(.*?)</script>', re.DOTALL
)
# Lines that show a battle took place (a log without any is not a replay).
_BATTLE_KINDS = frozenset(("switch", "drag", "turn", "poke", "teampreview", "player"))


class ReplayFileError(PokegymError, ValueError):
    """A file is not a replay that can be read; the message names the file and what is
    wrong with it."""


@dataclass(frozen=True)
class Replay:
    """One battle's replay.

    Attributes:
        id: the replay's id (``gen9ou-2012345678``; the file name's stem for a bare log).
        format_id: Showdown's format id (``gen9ou``).
        players: the names of p1 and p2.
        rating: the battle's rating on the ladder (None: unrated or not given).
        upload_time: when the replay was uploaded, in Unix seconds (None: not given).
        lines: the protocol lines, in order (``|move|p1a: ...``).
        source: the file it was read from ("" when made in memory).
    """

    id: str
    format_id: str
    players: tuple[str, str]
    rating: int | None
    upload_time: int | None
    lines: tuple[str, ...]
    source: str = ""

    @property
    def gen(self) -> int:
        """The generation, from the log's ``|gen|`` line (or the format id)."""
        for line in self.lines:
            if line.startswith("|gen|") and line[5:].strip().isdigit():
                return int(line[5:].strip())
        match = re.match(r"gen(\d+)", self.format_id)
        return int(match.group(1)) if match else 9

    @property
    def log(self) -> str:
        return "\n".join(self.lines)


def replay_from_log(
    text: str,
    *,
    replay_id: str = "",
    format_id: str = "",
    players: Iterable[str] | None = None,
    rating: int | None = None,
    upload_time: int | None = None,
    source: str = "",
) -> Replay:
    """A :class:`Replay` from protocol text; what is not given is read from the log
    (``|player|``, ``|tier|`` lines).

    Raises:
        ReplayFileError: the text holds no battle.
    """
    where = source or "the replay"
    lines = tuple(line.strip() for line in text.splitlines() if line.strip().startswith("|"))
    if not any(line.split("|", 2)[1] in _BATTLE_KINDS for line in lines):
        raise ReplayFileError(
            f"{where} holds no battle log (no |player|, |poke|, |switch| or |turn| line); "
            "give a replay's .json, .log or .html file."
        )
    names = ["", ""]
    tier = ""
    for line in lines:
        parts = line.split("|")
        if len(parts) >= 4 and parts[1] == "player" and parts[2] in ("p1", "p2") and parts[3]:
            names[0 if parts[2] == "p1" else 1] = parts[3]
        elif len(parts) >= 3 and parts[1] == "tier" and not tier:
            tier = parts[2]
    given = [str(p) for p in players or ()]
    for i in (0, 1):
        if not names[i]:
            names[i] = given[i] if i < len(given) and given[i] else f"p{i + 1}"
    return Replay(
        id=replay_id or "replay",
        format_id=to_id(format_id or tier) or "unknown",
        players=(names[0], names[1]),
        rating=rating,
        upload_time=upload_time,
        lines=lines,
        source=source,
    )


def read_replay(path: str | Path) -> Replay:
    """The battle in ``path`` (``.json``, ``.log`` or ``.html``; see the module docstring).

    Raises:
        ReplayFileError: the file is missing, of an unknown kind, corrupt, or holds no
            battle; the message names the file and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise ReplayFileError(f"No replay file at {path}.")
    suffix = path.suffix.lower()
    if suffix not in REPLAY_SUFFIXES:
        raise ReplayFileError(
            f"{path} is not a replay file: replays are read from .json (the replay site's "
            "<id>.json), .log (a protocol log) or .html (a replay page) files."
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ReplayFileError(f"{path} is not UTF-8 text ({exc}); is it a replay?") from exc
    if suffix == ".json":
        return _from_json(path, text)
    if suffix in (".html", ".htm"):
        match = _LOG_BLOCK.search(text)
        if match is None:
            raise ReplayFileError(
                f"{path} holds no battle log: a replay page keeps it in a "
                '<script type="text/plain" class="battle-log-data"> block.'
            )
        # The page escapes "</" inside the block as "<\/" and HTML entities as &...;.
        text = html.unescape(match.group(1).replace("<\\/", "</"))
    return replay_from_log(text, replay_id=path.stem, source=str(path))


def _from_json(path: Path, text: str) -> Replay:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplayFileError(f"{path} is not valid JSON ({exc}).") from exc
    if not isinstance(data, dict) or not isinstance(data.get("log"), str) or not data["log"]:
        raise ReplayFileError(
            f"{path} is JSON without a replay's 'log' text: the replay site's "
            "<id>.json has the keys id, format, players, rating, uploadtime and log."
        )
    log = data["log"]
    if "\n" not in log and not log.startswith("|"):
        # pokegym play's sidecar: "log" names the protocol log written next to it.
        log_path = path.with_name(Path(log).name)
        if not log_path.is_file():
            raise ReplayFileError(f"{path} names the log {log_path.name}, which is missing.")
        return replay_from_log(
            log_path.read_text(encoding="utf-8"), replay_id=path.stem, source=str(path)
        )
    players = data.get("players")
    if players is not None and not (
        isinstance(players, list) and all(isinstance(p, str) for p in players)
    ):
        raise ReplayFileError(f"{path}: 'players' is {players!r}, not a list of names.")
    return replay_from_log(
        log,
        replay_id=str(data.get("id") or path.stem),
        format_id=str(data.get("formatid") or data.get("format") or ""),
        players=players,
        rating=_optional_int(path, data, "rating"),
        upload_time=_optional_int(path, data, "uploadtime"),
        source=str(path),
    )


def _optional_int(path: Path, data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value in (None, "", 0):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ReplayFileError(f"{path}: {key!r} is {value!r}, not a number.")
    try:
        return int(float(value))
    except ValueError as exc:
        raise ReplayFileError(f"{path}: {key!r} is {value!r}, not a number.") from exc


def replay_files(folder: str | Path) -> list[Path]:
    """The replay files in ``folder`` (and its subfolders), sorted; one battle saved in
    several forms under one name (``x.json``, ``x.log``, ``x.html``) counts once, read
    from the first of ``.json``, ``.log``, ``.html``.

    Raises:
        ReplayFileError: ``folder`` is not a folder, or holds no replay file.
    """
    folder = Path(folder)
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise ReplayFileError(f"No replay folder at {folder}.")
    by_battle: dict[Path, Path] = {}
    for path in sorted(folder.rglob("*")):
        suffix = path.suffix.lower()
        if suffix in REPLAY_SUFFIXES and path.is_file():
            kept = by_battle.get(path.with_suffix(""))
            if kept is None or REPLAY_SUFFIXES.index(suffix) < REPLAY_SUFFIXES.index(
                kept.suffix.lower()
            ):
                by_battle[path.with_suffix("")] = path
    paths = sorted(by_battle.values())
    if not paths:
        raise ReplayFileError(
            f"{folder} holds no replay files (.json, .log or .html); see docs/replays.md "
            "for how to download replays."
        )
    return paths


def replay_json(replay: Replay) -> str:
    """The replay in the replay site's ``.json`` form."""
    return json.dumps(
        {
            "id": replay.id,
            "format": replay.format_id,
            "formatid": replay.format_id,
            "players": list(replay.players),
            "rating": replay.rating or 0,
            "uploadtime": replay.upload_time or 0,
            "log": replay.log + "\n",
        }
    )


def replay_html(replay: Replay) -> str:
    """The replay as a page in the replay site's ``.html`` form (the log escaped inside
    a ``battle-log-data`` block)."""
    body = html.escape(replay.log + "\n", quote=False).replace("</", "<\\/")
    title = html.escape(f"{replay.format_id}: {replay.players[0]} vs. {replay.players[1]}")
    return (
        '<!DOCTYPE html>\n<meta charset="utf-8" />\n'
        f"<title>{title}</title>\n"
        '<div class="wrapper replay-wrapper">\n'
        f'<input type="hidden" name="replayid" value="{html.escape(replay.id)}" />\n'
        '<div class="battle"></div><div class="battle-log"></div>\n'
        f'<script type="text/plain" class="battle-log-data">{body}</script>\n'
        "</div>\n"
    )
