"""The library of approved designed moves: a JSON file shared with Showdown's ``pokegym`` mod.

The library is what makes a designed move playable. Showdown processes started by
pokegym receive its path (``POKEGYM_MOVES_FILE``, default
``$POKEGYM_HOME/moves/library.json``) and the ``pokegym`` mod adds every move in it to
Gen 9, learnable by the Pokémon it was approved for. Two formats use the mod:

* ``gen9designedmoves``: Gen 9 OU rules with your own teams; a designed move passes
  the validator only on the Pokémon it was approved for.
* ``gen9designedmovesrandombattle``: Gen 9 random battles in which those Pokémon
  know their designed move (each team has at least one of them).

A Showdown process reads the library once, when it first loads the mod, so moves
added later reach processes started afterwards (the arena and the environments
start their own).

File format (version 1)::

    {"version": 1, "moves": [{"id": "magmalance", "num": 20001,
      "pokemon": ["Garchomp"], "design": {...}, "entry": {...Showdown move...},
      "evaluation": {...} | null, "judge": {...} | null, "added": "2026-12-03T..."}]}

Writes are atomic (a temporary file renamed over the old one) and hold a file lock,
so a crash or two writers at once never leave a half-written library. A file that
is not a library of this version raises :class:`MoveLibraryError` and is left as it is.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from poke_env.battle.move import Move
from poke_env.data import GenData

from pokegym.errors import PokegymError
from pokegym.files import atomic_write_json
from pokegym.moves.schema import MoveDesign, MoveFormatError
from pokegym.showdown.install import file_lock, moves_file
from pokegym.world.data import load_dex, to_id

if TYPE_CHECKING:
    from pokegym.formats import BattleFormat
    from pokegym.showdown.simulator import Simulator

VERSION = 1
FIRST_NUM = 20001  # Showdown's own moves stay far below; nonstandard ones use negatives

DESIGNED_FORMATS = ("gen9designedmoves", "gen9designedmovesrandombattle")


class MoveLibraryError(PokegymError):
    """The library file is unreadable, or a move cannot be added or removed."""


@dataclass(frozen=True)
class LibraryMove:
    """One approved move and the Pokémon that may learn it."""

    design: MoveDesign
    pokemon: tuple[str, ...]
    num: int
    evaluation: Mapping[str, Any] | None = None
    judge: Mapping[str, Any] | None = None
    added: str = ""

    @property
    def id(self) -> str:
        return self.design.id

    @property
    def entry(self) -> dict[str, Any]:
        return self.design.to_showdown(self.num)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "num": self.num,
            "pokemon": list(self.pokemon),
            "design": self.design.to_dict(),
            "entry": self.entry,
            "evaluation": dict(self.evaluation) if self.evaluation is not None else None,
            "judge": dict(self.judge) if self.judge is not None else None,
            "added": self.added,
        }


class MoveLibrary:
    """The approved moves stored at ``path`` (default: ``POKEGYM_MOVES_FILE``).

    Reading is lazy and every mutation re-reads the file under the lock, so several
    processes may add moves to one library.
    """

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path).expanduser() if path is not None else moves_file()

    # ----------------------------------------------------------------- reading
    def moves(self) -> list[LibraryMove]:
        """Every move in the library (an absent file is an empty library)."""
        return _parse(self.path, self._read())

    def __iter__(self) -> Iterator[LibraryMove]:
        return iter(self.moves())

    def __len__(self) -> int:
        return len(self.moves())

    def get(self, name: str) -> LibraryMove | None:
        key = to_id(name)
        return next((m for m in self.moves() if m.id == key), None)

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"version": VERSION, "moves": []}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MoveLibraryError(
                f"The move library {self.path} cannot be read ({exc}). Fix or move the file "
                "away; pokegym does not overwrite it."
            ) from exc
        if not isinstance(data, dict) or data.get("version") != VERSION:
            found = data.get("version") if isinstance(data, dict) else type(data).__name__
            raise MoveLibraryError(
                f"{self.path} is not a pokegym move library of version {VERSION} (found "
                f"{found!r}). Point POKEGYM_MOVES_FILE elsewhere or move the file away."
            )
        return data

    # ----------------------------------------------------------------- writing
    def add(
        self,
        design: MoveDesign,
        pokemon: str | list[str] | tuple[str, ...],
        *,
        evaluation: Mapping[str, Any] | None = None,
        judge: Mapping[str, Any] | None = None,
        replace: bool = False,
    ) -> LibraryMove:
        """Add ``design`` for ``pokemon`` (a species name or several).

        Raises:
            MoveLibraryError: the name is a Showdown move, or already in the library
                (pass ``replace=True`` to overwrite it), or a species is unknown.
        """
        names = [pokemon] if isinstance(pokemon, str) else list(pokemon)
        if not names:
            raise MoveLibraryError("name at least one Pokémon that may learn the move")
        dex = load_dex(9)
        species = []
        for name in names:
            entry = dex.species.get(to_id(name))
            if entry is None:
                raise MoveLibraryError(f"Unknown Pokémon {name!r} (use Showdown's species names).")
            species.append(str(entry["name"]))
        if design.id in dex.moves and not _is_designed(dex.moves[design.id]):
            raise MoveLibraryError(
                f"{design.name} is the name of a Showdown move; a designed move needs its own name."
            )
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            data = self._read()
            current = _parse(self.path, data)
            old = next((m for m in current if m.id == design.id), None)
            if old is not None and not replace:
                raise MoveLibraryError(
                    f"{design.name} is already in the library {self.path} "
                    "(replace=True to overwrite it)."
                )
            used = {m.num for m in current if m is not old}
            num = old.num if old is not None else max(used | {FIRST_NUM - 1}) + 1
            item = LibraryMove(
                design=design,
                pokemon=tuple(species),
                num=num,
                evaluation=evaluation,
                judge=judge,
                added=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            )
            kept = [m for m in current if m is not old]
            self._write([*kept, item])
        return item

    def remove(self, name: str) -> LibraryMove:
        """Remove a move by name; raises :class:`MoveLibraryError` when it is not there."""
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            current = _parse(self.path, self._read())
            key = to_id(name)
            found = next((m for m in current if m.id == key), None)
            if found is None:
                raise MoveLibraryError(f"No move named {name!r} in the library {self.path}.")
            self._write([m for m in current if m is not found])
        return found

    def _write(self, moves: list[LibraryMove]) -> None:
        payload = {"version": VERSION, "moves": [m.to_dict() for m in moves]}
        atomic_write_json(self.path, payload, indent=1, ensure_ascii=False)

    # ----------------------------------------------------------------- playing
    def activate(self) -> list[str]:
        """Teach the Python side the library's moves; returns their ids.

        Showdown learns them through its mod; poke-env's battle objects and pokegym's
        world model need the same entries to read requests and compute damage. Called
        when a designed-move format is set up (:func:`activate_for_format`).
        """
        moves = self.moves()
        table = GenData.from_gen(9).moves
        dex_moves = load_dex(9).moves
        for move in moves:
            entry = {**move.entry, "designed": True}
            table[move.id] = entry
            dex_moves[move.id] = {**entry, "id": move.id, "callbacks": []}
        Move.should_be_stored.cache_clear()
        return [m.id for m in moves]


def _is_designed(entry: Mapping[str, Any]) -> bool:
    return bool(entry.get("designed"))


def _parse(path: Path, data: Mapping[str, Any]) -> list[LibraryMove]:
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise MoveLibraryError(f"{path}: 'moves' must be a list")
    out = []
    for index, raw in enumerate(moves):
        try:
            design = MoveDesign.from_dict(raw["design"])
            pokemon = tuple(str(p) for p in raw["pokemon"])
            num = int(raw["num"])
        except (KeyError, TypeError, ValueError, MoveFormatError) as exc:
            raise MoveLibraryError(f"{path}: move #{index + 1} is malformed ({exc}).") from exc
        out.append(
            LibraryMove(
                design=design,
                pokemon=pokemon,
                num=num,
                evaluation=raw.get("evaluation"),
                judge=raw.get("judge"),
                added=str(raw.get("added", "")),
            )
        )
    return out


def is_designed_format(format_id: str) -> bool:
    """Whether ``format_id`` plays with the designed-move mod."""
    return format_id.split("@@@")[0] in DESIGNED_FORMATS


def activate_for_format(fmt: BattleFormat, simulator: Simulator) -> None:
    """Setup hook of the designed-move formats (their entries in :mod:`pokegym.formats`).

    poke-env and the world model learn the library's moves (read again each time: the
    library may have grown), and a simulator started before the library changed
    restarts so that Showdown knows them too.
    """
    del fmt
    MoveLibrary().activate()
    simulator.refresh_moves()


def library_digest() -> str:
    """``lib`` and 10 hex digits naming the library's moves (ids, learners, Showdown
    entries; not when or why they were approved): the prior of the designed random
    format is cached under it, since Showdown's generated teams use these moves."""
    moves = sorted((m.id, m.pokemon, m.entry) for m in MoveLibrary().moves())
    text = json.dumps(moves, sort_keys=True, default=list)
    return "lib" + hashlib.sha256(text.encode()).hexdigest()[:10]
