"""Battle formats: a registry of the formats pokegym knows, and what Showdown says
about any format id (asked once and cached).

The registry (:data:`FORMATS`) has one :class:`FormatEntry` per format: its Gymnasium
id, generation, built-in team pool, where the priors over the opponent's sets come
from, and hooks run when the format is set up. Adding a format is adding one entry;
:mod:`pokegym` registers a Gymnasium id for every entry that names one. Hooks are
named ``"module:function"`` and imported only when their format is set up, so this
module imports nothing above it (the designed-move formats hook in
:func:`pokegym.moves.library.activate_for_format` this way).

The simulator is the authority on the rules: a format is looked up in the installed
Showdown's own format list, so a typo fails with a clear message instead of a battle
that never starts. Any singles format works, registered or not. Custom rules use
Showdown's ``@@@`` syntax, e.g. ``gen8randombattle@@@dynamaxclause`` (what
:func:`resolve_format` builds for ``dynamax=False``).

Setting a format up (:func:`resolve_format`) also builds what its agents read later,
so that no agent builds anything inside a decision: Showdown's game data and the
priors of the format (:func:`pokegym.world.priors.prepare_priors`, once per process;
``pokegym priors build`` does the same ahead of time).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from pokegym.errors import UnknownFormatError

if TYPE_CHECKING:
    from pokegym.showdown.simulator import Simulator

Gimmick = Literal["terastallize", "dynamax"]
PriorSource = Literal["generator", "pool"]


@dataclass(frozen=True)
class FormatEntry:
    """One format of the registry.

    Attributes:
        id: Showdown's format id (``gen9ou``).
        gen: its generation.
        gym_id: the Gymnasium id registered for it (None: not registered as an id).
        team_pool: the folder of its built-in team pool under ``pokegym/teams/data``
            (None: no pool; a format may share another's, as ``gen9designedmoves`` plays
            the Gen 9 OU teams).
        prior: where the priors over the opponent's sets come from: ``generator``
            (Showdown's random-team generator) or ``pool`` (the team pool, with a Smogon
            usage JSON when given; Showdown's species data for the rest).
        hooks: ``"module:function"`` names of functions called with the resolved
            :class:`BattleFormat` and the simulator each time the format is set up.
        gym_kwargs: keyword arguments of the environment its Gymnasium id makes.
        build_priors: ``pokegym priors build`` (and ``pokegym showdown install``) build
            its priors when no format is named.
        prior_variant: ``"module:function"`` returning a short string that the teams
            Showdown generates for the format depend on besides the Showdown install (the
            designed-move library); it names the cached prior, which is built again when
            it changes.
    """

    id: str
    gen: int
    gym_id: str | None = None
    team_pool: str | None = None
    prior: PriorSource = "pool"
    hooks: tuple[str, ...] = ()
    gym_kwargs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    build_priors: bool = True
    prior_variant: str | None = None


#: Hooks every format runs after its own: the game data and priors its agents read.
SETUP_HOOKS: tuple[str, ...] = ("pokegym.world.priors.sources:prepare_priors",)

_DESIGNED_MOVES_HOOK = "pokegym.moves.library:activate_for_format"

#: The registry, by format id.
FORMATS: dict[str, FormatEntry] = {}


def register_format(entry: FormatEntry) -> FormatEntry:
    """Add ``entry`` to the registry (replacing an entry with its id)."""
    FORMATS[entry.id] = entry
    return entry


def format_entry(format_id: str) -> FormatEntry | None:
    """The registry's entry for ``format_id`` (custom ``@@@`` rules ignored), or None."""
    return FORMATS.get(format_id.split("@@@")[0].strip().lower())


def registered_formats() -> list[FormatEntry]:
    return list(FORMATS.values())


for _entry in (
    FormatEntry("gen9ou", 9, gym_id="Showdown-Gen9OU", team_pool="gen9ou", prior="pool"),
    FormatEntry("gen9randombattle", 9, gym_id="Showdown-Gen9RandomBattle", prior="generator"),
    FormatEntry("gen8randombattle", 8, gym_id="Showdown-Gen8RandomBattle", prior="generator"),
    FormatEntry("gen91v1factory", 9, gym_id="Showdown-Gen91v1", prior="generator"),
    # pokegym's Showdown mod (pokegym/showdown/js/mod): Gen 9 plus the designed moves.
    FormatEntry(
        "gen9designedmoves", 9, team_pool="gen9ou", prior="pool",
        hooks=(_DESIGNED_MOVES_HOOK,), build_priors=False,
    ),
    FormatEntry(
        "gen9designedmovesrandombattle", 9, prior="generator",
        hooks=(_DESIGNED_MOVES_HOOK,), build_priors=False,
        prior_variant="pokegym.moves.library:library_digest",
    ),
):  # fmt: skip
    register_format(_entry)

# Suggestions in error messages: the registry and a few common formats.
COMMON_FORMATS = (*FORMATS, "gen9ubers", "gen9uu", "gen8ou")


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
    format_id: str,
    *,
    dynamax: bool = True,
    simulator: Simulator | None = None,
    setup: bool = True,
) -> BattleFormat:
    """Look a format up in Showdown and set it up for battles.

    Setting up runs the format's hooks (its registry entry's, then :data:`SETUP_HOOKS`:
    the game data and priors its agents will read are built here, before any battle).
    ``setup=False`` only looks the format up.

    Raises:
        UnknownFormatError: Showdown has no such format, or it is not a singles format.
    """
    # `import pokegym` reads this module: the simulator's module loads only to check a format
    from pokegym.showdown.simulator import shared_simulator

    if not isinstance(format_id, str) or not format_id.strip():
        raise UnknownFormatError(f"A battle format id is a non-empty string, got {format_id!r}.")
    full_id = format_id_with_rules(format_id, dynamax=dynamax)
    sim = simulator or shared_simulator()
    fmt = _cache.get(full_id) or _look_up(format_id, full_id, sim)
    if setup:
        entry = format_entry(full_id)
        for name in (*(entry.hooks if entry else ()), *SETUP_HOOKS):
            _hook(name)(fmt, sim)
    return fmt


def _hook(name: str) -> Callable[[BattleFormat, Simulator], None]:
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]


def _look_up(format_id: str, full_id: str, sim: Simulator) -> BattleFormat:
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
