"""Puzzle scenarios: small, fixed battles an agent solves by winning them.

A :class:`Suite` is a list of :class:`Scenario` objects shipped as a gzipped JSON file
in ``pokegym/puzzles/data`` (``pokegym puzzles build`` writes it; the generator is
:mod:`pokegym.puzzles.build`). Each scenario names both sides' teams in Showdown
export format, the format the battle is played in and the battle seed, so the same
scenario is the same battle start on any machine with the same Showdown install.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pokegym.errors import PokegymError

DATA_DIR = Path(__file__).with_name("data")
SCHEMA = 1

#: The suites pokegym ships, by name: a one-line description each.
SUITES: dict[str, str] = {
    "1v1": "Gen 8 random-battle sets, one Pokémon a side; solved by winning",
    "tera": "Gen 9 random-battle 1v1s that Terastallizing decides; solved by winning",
    "dynamax": "Gen 8 random-battle 1v1s that Dynamaxing decides; solved by winning",
    "stall": "Gen 8 3v3s against an attrition team; scored by wins and repeated resisted hits",
    "switching": "Gen 8 2v2s against a switcher between two resists; scored by wins and repeats",
}


class UnknownSuiteError(PokegymError, ValueError):
    """No puzzle suite has that name."""


class ScenarioIndexError(PokegymError, IndexError):
    """A scenario index outside the suite."""


class SuiteFileError(PokegymError, ValueError):
    """A suite file is missing, unreadable or not a puzzle suite."""


@dataclass(frozen=True)
class Scenario:
    """One puzzle: the agent plays ``teams[0]`` (player 1) against ``teams[1]``.

    Attributes:
        index: its place in the suite.
        teams: both sides' teams as Showdown export text.
        battle_seed: the seed of the battle (Showdown's PRNG and the agents' seeds).
        candidate: the generator's draw it came from (``pokegym puzzles build`` draws
            candidates in order and keeps those the reference agent wins).
        reference_try: the first of the reference agent's tries that it won (0-based).
    """

    index: int
    teams: tuple[str, str]
    battle_seed: int
    candidate: int
    reference_try: int

    @property
    def species(self) -> tuple[str, str]:
        """The first Pokémon of each side (the only one in a 1v1 scenario)."""
        return _first_species(self.teams[0]), _first_species(self.teams[1])

    def to_json(self) -> dict[str, Any]:
        return {
            "teams": list(self.teams),
            "battle_seed": str(self.battle_seed),
            "candidate": self.candidate,
            "reference_try": self.reference_try,
        }

    @classmethod
    def from_json(cls, index: int, data: Mapping[str, Any]) -> Scenario:
        teams = data["teams"]
        return cls(
            index=index,
            teams=(str(teams[0]), str(teams[1])),
            battle_seed=int(data["battle_seed"]),
            candidate=int(data["candidate"]),
            reference_try=int(data["reference_try"]),
        )


@dataclass(frozen=True)
class Suite:
    """A suite of scenarios and how they were made.

    Attributes:
        name: the suite's name (``1v1``).
        format: the Showdown format its battles are played in.
        seed: the generator's seed.
        opponent: the agent spec that plays player 2 in every scenario.
        reference: the agent spec a scenario is kept for winning.
        tries: battles (different seeds) the reference agent gets per candidate.
        max_turns: a battle still going at this turn is unsolved.
        candidates: candidates drawn to keep ``len(scenarios)``.
        showdown: the Showdown install (lock hash) that generated the sets.
        scenarios: the scenarios, in order.
    """

    name: str
    format: str
    seed: int
    opponent: str
    reference: str
    tries: int
    max_turns: int
    candidates: int
    showdown: str
    scenarios: tuple[Scenario, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.scenarios)

    def scenario(self, index: int) -> Scenario:
        """The scenario at ``index``.

        Raises:
            ScenarioIndexError: ``index`` is not in ``0 .. len(self) - 1``.
        """
        if isinstance(index, bool) or not isinstance(index, int):
            raise ScenarioIndexError(
                f"A scenario index is an integer, got {index!r}; the {self.name} suite has "
                f"scenarios 0 to {len(self) - 1}."
            )
        if not 0 <= index < len(self):
            raise ScenarioIndexError(
                f"The {self.name} suite has scenarios 0 to {len(self) - 1}; there is no "
                f"scenario {index}."
            )
        return self.scenarios[index]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "suite": self.name,
            "format": self.format,
            "seed": self.seed,
            "opponent": self.opponent,
            "reference": self.reference,
            "tries": self.tries,
            "max_turns": self.max_turns,
            "candidates": self.candidates,
            "showdown": self.showdown,
            "scenarios": [s.to_json() for s in self.scenarios],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Suite:
        return cls(
            name=str(data["suite"]),
            format=str(data["format"]),
            seed=int(data["seed"]),
            opponent=str(data["opponent"]),
            reference=str(data["reference"]),
            tries=int(data["tries"]),
            max_turns=int(data["max_turns"]),
            candidates=int(data["candidates"]),
            showdown=str(data["showdown"]),
            scenarios=tuple(Scenario.from_json(i, s) for i, s in enumerate(data["scenarios"])),
        )


def check_suite_name(name: str) -> str:
    """``name`` when pokegym has such a suite.

    Raises:
        UnknownSuiteError: it has not (the message lists the suites).
    """
    if name not in SUITES:
        known = ", ".join(f"{k} ({v})" for k, v in SUITES.items())
        raise UnknownSuiteError(f"No puzzle suite named {name!r}. Suites: {known}.")
    return name


def suite_path(name: str) -> Path:
    return DATA_DIR / f"{check_suite_name(name)}.json.gz"


def load_suite(name_or_path: str | Path) -> Suite:
    """A shipped suite by name (``"1v1"``) or a suite file written by ``puzzles build``.

    Raises:
        UnknownSuiteError: no shipped suite has that name and it is no file.
        SuiteFileError: the file cannot be read as a suite.
    """
    path = Path(name_or_path)
    if not (str(name_or_path).endswith((".json", ".json.gz")) and path.is_file()):
        path = suite_path(str(name_or_path))
    if not path.is_file():
        raise SuiteFileError(
            f"The {name_or_path} suite's data ({path}) is missing; make it with "
            f"`pokegym puzzles build --suite {name_or_path}`."
        )
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("schema") != SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r}, expected {SCHEMA}")
        return Suite.from_json(data)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise SuiteFileError(
            f"{path} is not a puzzle suite pokegym can read ({exc}); write it again with "
            "`pokegym puzzles build`."
        ) from None


def save_suite(suite: Suite, path: str | Path) -> Path:
    """Write ``suite`` as gzipped JSON (plain JSON when ``path`` ends in ``.json``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(suite.to_json(), separators=(",", ":"))
    tmp = path.with_name(path.name + ".tmp")
    if path.name.endswith(".gz"):
        # mtime=0: the same suite is the same bytes.
        with (
            open(tmp, "wb") as raw,
            gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as handle,
        ):
            handle.write(text.encode("utf-8"))
    else:
        tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


_STATS = ("hp", "atk", "def", "spa", "spd", "spe")
_STAT_NAMES = {"hp": "HP", "atk": "Atk", "def": "Def", "spa": "SpA", "spd": "SpD", "spe": "Spe"}


def export_set(data: Mapping[str, Any]) -> str:
    """One generated set (Showdown's set object) as export text."""
    species = str(data["species"])
    name = str(data.get("name") or species)
    head = species if name == species else f"{name} ({species})"
    if data.get("gender") in ("M", "F"):
        head += f" ({data['gender']})"
    if data.get("item"):
        head += f" @ {data['item']}"
    lines = [head]
    if data.get("ability"):
        lines.append(f"Ability: {data['ability']}")
    if data.get("level") and int(data["level"]) != 100:
        lines.append(f"Level: {int(data['level'])}")
    if data.get("shiny"):
        lines.append("Shiny: Yes")
    if data.get("happiness") is not None and int(data["happiness"]) != 255:
        lines.append(f"Happiness: {int(data['happiness'])}")
    if data.get("gigantamax"):
        lines.append("Gigantamax: Yes")
    if data.get("teraType"):
        lines.append(f"Tera Type: {data['teraType']}")
    evs = data.get("evs") or {}
    ev_parts = [f"{int(evs[s])} {_STAT_NAMES[s]}" for s in _STATS if int(evs.get(s, 0))]
    if ev_parts:
        lines.append("EVs: " + " / ".join(ev_parts))
    if data.get("nature"):
        lines.append(f"{data['nature']} Nature")
    ivs = data.get("ivs") or {}
    iv_parts = [f"{int(ivs[s])} {_STAT_NAMES[s]}" for s in _STATS if int(ivs.get(s, 31)) != 31]
    if iv_parts:
        lines.append("IVs: " + " / ".join(iv_parts))
    lines.extend(f"- {move}" for move in data.get("moves", ()))
    return "\n".join(lines) + "\n"


def export_team(sets: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(export_set(s) for s in sets)


def _first_species(text: str) -> str:
    head = text.strip().splitlines()[0].split("@")[0].strip()
    for suffix in (" (M)", " (F)"):
        head = head.removesuffix(suffix)
    if head.endswith(")") and "(" in head:
        head = head[head.rindex("(") + 1 : -1]
    return head
