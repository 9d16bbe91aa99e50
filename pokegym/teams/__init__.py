"""Teams in Showdown export format: the built-in Gen 9 OU pool and user teams.

A :class:`Team` is the text a player pastes into Showdown's teambuilder. A
:class:`TeamPool` samples teams with the environment's seeded generator. Every team
can be checked with Showdown's own validator (:func:`validate_team`), whose
messages are passed through unchanged in :class:`~pokegym.errors.InvalidTeamError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pokegym.errors import InvalidTeamError
from pokegym.formats import format_entry
from pokegym.showdown.simulator import Simulator, shared_simulator

DATA_DIR = Path(__file__).with_name("data")

__all__ = ["Team", "TeamPool", "builtin_pool", "load_team", "validate_team"]


@dataclass(frozen=True)
class Team:
    """One team as Showdown export text.

    Attributes:
        text: the export text (or Showdown's packed format).
        name: a short name (the file name for the built-in pool).
        archetype: what kind of team it is, e.g. "Rain offense" (may be empty).
    """

    text: str
    name: str = "team"
    archetype: str = ""

    @property
    def species(self) -> list[str]:
        """Species in team order (from the export text)."""
        out = []
        for block in re.split(r"\n\s*\n", self.text.strip()):
            first = block.strip().splitlines()[0] if block.strip() else ""
            head = first.split("@")[0].strip()
            match = re.search(r"\(([^()]+)\)\s*(\([MF]\))?\s*$", head)
            if match and match.group(1) not in ("M", "F"):
                head = match.group(1)
            head = re.sub(r"\s*\([MF]\)\s*$", "", head)
            if head:
                out.append(head)
        return out

    @classmethod
    def from_file(cls, path: str | Path, archetype: str = "") -> Team:
        """Read a team file (UTF-8 text, as Showdown's teambuilder exports it).

        Raises:
            InvalidTeamError: the file cannot be read or is not UTF-8 text.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidTeamError(
                f"The team file {path} is not UTF-8 text (byte {exc.start}: {exc.reason}). "
                "Save it as UTF-8 (Showdown's export is), or paste the export text."
            ) from None
        except OSError as exc:
            raise InvalidTeamError(
                f"The team file {path} cannot be read ({exc.strerror or exc})."
            ) from None
        return cls(text=text, name=path.stem, archetype=archetype)


def load_team(source: str | Path | Team) -> Team:
    """A team from a :class:`Team`, a file path, or export/packed text."""
    if isinstance(source, Team):
        return source
    if isinstance(source, str) and not source.strip():
        raise InvalidTeamError("The team text is empty: pass a team file, folder or export text.")
    if isinstance(source, Path) or (
        isinstance(source, str)
        and "\n" not in source
        and "|" not in source
        and len(source) < 4096
        and Path(source).expanduser().is_file()
    ):
        return Team.from_file(Path(source).expanduser())
    if isinstance(source, str):
        if not source.strip():
            raise InvalidTeamError("The team text is empty.")
        if "\n" not in source and "|" not in source:
            raise InvalidTeamError(
                f"{source!r} is neither a team file that exists nor team text. Pass the path "
                "of a file in Showdown export format, or the export text itself."
            )
        return Team(text=source, name="custom")
    raise InvalidTeamError(f"Cannot read a team from {type(source).__name__}.")


@dataclass
class TeamPool:
    """A list of teams to sample from.

    Attributes:
        teams: the teams.
        format_id: the format they are meant for (used by :meth:`validate`).
    """

    teams: list[Team]
    format_id: str = "gen9ou"
    _validated: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if not self.teams:
            raise InvalidTeamError("A team pool needs at least one team.")

    def __len__(self) -> int:
        return len(self.teams)

    def __iter__(self) -> Iterator[Team]:
        return iter(self.teams)

    def sample(self, rng: np.random.Generator) -> Team:
        """One team, drawn uniformly with the caller's generator (reproducible)."""
        return self.teams[int(rng.integers(len(self.teams)))]

    def validate(self, simulator: Simulator | None = None) -> None:
        """Validate every team once with Showdown's validator.

        Raises:
            InvalidTeamError: listing each failing team with Showdown's messages.
        """
        if self._validated:
            return
        failures = []
        for team in self.teams:
            try:
                validate_team(team, self.format_id, simulator)
            except InvalidTeamError as exc:
                failures.append(f"{team.name}: {exc}")
        if failures:
            raise InvalidTeamError("\n".join(failures))
        self._validated = True

    @classmethod
    def from_sources(cls, sources: Iterable[str | Path | Team], format_id: str) -> TeamPool:
        teams: list[Team] = []
        for source in sources:
            if isinstance(source, str) and not source.strip():
                raise InvalidTeamError(
                    "The team text is empty: pass a team file, folder or export text."
                )
            path = Path(source) if isinstance(source, str | Path) else None
            if path is not None and "\n" not in str(source) and path.expanduser().is_dir():
                teams.extend(Team.from_file(p) for p in sorted(path.expanduser().glob("*.txt")))
            else:
                teams.append(load_team(source))
        return cls(teams=teams, format_id=format_id)


def _archetypes(folder: Path) -> dict[str, str]:
    readme = folder / "README.md"
    out: dict[str, str] = {}
    if readme.exists():
        for line in readme.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and cells[0].endswith(".txt"):
                out[cells[0][:-4]] = cells[1]
    return out


def builtin_formats() -> list[str]:
    """Formats that ship with a team pool."""
    return sorted(p.name for p in DATA_DIR.iterdir() if p.is_dir())


def builtin_pool(format_id: str = "gen9ou") -> TeamPool:
    """The teams shipped with pokegym for a format (Gen 9 OU: 15 archetypes)."""
    base = format_id.split("@@@")[0]
    entry = format_entry(base)  # a registered format may play another's pool
    folder = DATA_DIR / (entry.team_pool if entry is not None and entry.team_pool else base)
    if not folder.is_dir():
        raise InvalidTeamError(
            f"pokegym ships no teams for {base!r} (it has: {', '.join(builtin_formats())}). "
            "Pass team=... with a file or export text."
        )
    archetypes = _archetypes(folder)
    teams = [
        Team.from_file(path, archetypes.get(path.stem, "")) for path in sorted(folder.glob("*.txt"))
    ]
    return TeamPool(teams=teams, format_id=format_id)


_valid_cache: dict[tuple[str, str], str] = {}


def validate_team(
    team: str | Path | Team, format_id: str, simulator: Simulator | None = None
) -> str:
    """Check a team with Showdown's validator for ``format_id``.

    Returns:
        The team in Showdown's packed format (what a server expects).

    Raises:
        InvalidTeamError: with Showdown's own messages, one per line.
    """
    team = load_team(team)
    key = (format_id, team.text)
    if key in _valid_cache:
        return _valid_cache[key]
    sim = simulator or shared_simulator()
    result = sim.validate_team(format_id, team.text)
    problems: Sequence[str] | None = result.get("problems")
    if problems:
        reasons = "\n  ".join(problems)
        raise InvalidTeamError(
            f"Team {team.name!r} is not valid for {format_id}. Showdown says:\n  {reasons}"
        )
    packed = str(result.get("packed", ""))
    _valid_cache[key] = packed
    return packed
