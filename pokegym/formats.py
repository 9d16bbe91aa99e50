"""Battle formats: what Showdown says about a format id, asked once and cached.

The simulator is the authority: a format is looked up in the installed Showdown's
own format list, so a typo fails with a clear message instead of a battle that
never starts. Custom rules use Showdown's ``@@@`` syntax, e.g.
``gen8randombattle@@@dynamaxclause`` (what :func:`resolve_format` builds for
``dynamax=False``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from pokegym.errors import UnknownFormatError
from pokegym.showdown.simulator import Simulator, shared_simulator

Gimmick = Literal["terastallize", "dynamax"]

# Formats the registered environments use; also the suggestions in error messages.
COMMON_FORMATS = (
    "gen9ou",
    "gen9randombattle",
    "gen8randombattle",
    "gen91v1factory",
    "gen9ubers",
    "gen9uu",
    "gen8ou",
)


@dataclass(frozen=True)
class BattleFormat:
    """Facts about a singles format, as reported by Showdown.

    Attributes:
        id: the format id sent to Showdown (custom rules included).
        name: Showdown's display name, e.g. ``[Gen 9] OU``.
        gen: the generation (8 or 9 for the registered environments).
        random_teams: Showdown generates the teams (random battles).
        team_preview: players pick their lead (and, in 1v1, their one Pokémon).
        gimmick: the once-per-battle mechanic the action layout exposes:
            Terastallization in gen 9, Dynamax in gen 8, or None when the format bans it.
        picked_team_size: Pokémon brought to battle when fewer than the team (1v1).
        max_team_size: largest team the format allows.
    """

    id: str
    name: str
    gen: int
    random_teams: bool
    team_preview: bool
    gimmick: Gimmick | None
    picked_team_size: int | None
    max_team_size: int

    @property
    def needs_teams(self) -> bool:
        return not self.random_teams


_cache: dict[str, BattleFormat] = {}


def format_id_with_rules(format_id: str, *, dynamax: bool = True) -> str:
    """Append Showdown's ``Dynamax Clause`` when ``dynamax`` is False (gen 8)."""
    format_id = format_id.strip().lower()
    if dynamax or "dynamaxclause" in format_id:
        return format_id
    sep = "," if "@@@" in format_id else "@@@"
    return f"{format_id}{sep}dynamaxclause"


def resolve_format(
    format_id: str, *, dynamax: bool = True, simulator: Simulator | None = None
) -> BattleFormat:
    """Look a format up in Showdown.

    Raises:
        UnknownFormatError: Showdown has no such format, or it is not a singles format.
    """
    if not isinstance(format_id, str) or not format_id.strip():
        raise UnknownFormatError(f"A battle format id is a non-empty string, got {format_id!r}.")
    full_id = format_id_with_rules(format_id, dynamax=dynamax)
    if full_id.split("@@@")[0].startswith("gen9designedmoves"):
        # Formats of the designed-move mod: poke-env and the world model must know the
        # library's moves too (read again each time: the library may have grown).
        from pokegym.moves.library import MoveLibrary

        MoveLibrary().activate()
        (simulator or shared_simulator()).refresh_moves()
    if full_id in _cache:
        return _cache[full_id]
    sim = simulator or shared_simulator()
    info = sim.format_info(full_id)
    if "error" in info:
        base = full_id.split("@@@")[0]
        close = difflib.get_close_matches(base, COMMON_FORMATS, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UnknownFormatError(
            f"Unknown battle format {format_id!r}: the installed Showdown has no such format."
            f"{hint} Format ids look like gen9ou or gen9randombattle."
        )
    if info["gameType"] != "singles":
        raise UnknownFormatError(
            f"{info['name']} is a {info['gameType']} format; pokegym plays singles formats only."
        )
    gimmick: Gimmick | None = None
    if info["terastal"]:
        gimmick = "terastallize"
    elif info["dynamax"]:
        gimmick = "dynamax"
    fmt = BattleFormat(
        id=full_id,
        name=info["name"],
        gen=int(info["gen"]),
        random_teams=bool(info["randomTeams"]),
        team_preview=bool(info["teamPreview"]),
        gimmick=gimmick,
        picked_team_size=info["pickedTeamSize"],
        max_team_size=int(info["maxTeamSize"]),
    )
    _cache[full_id] = fmt
    return fmt
