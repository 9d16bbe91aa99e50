"""Where the sets come from: one :class:`SetPrior` per format (Showdown's random-team
generator, a team pool, Smogon usage statistics, Showdown's species data).

Priors that need Showdown (generated teams, a team pool read by Showdown's importer)
are built by an explicit step and cached on disk: :func:`build_priors` (the command
``pokegym priors build``, also run by ``pokegym showdown install``) and
:func:`prepare_priors`, which every format runs when it is set up
(:func:`pokegym.formats.resolve_format`: environments, the arena, collection and the
benchmarks set their format up before the first battle). Agents then only read: a
belief built during a decision (:meth:`~pokegym.world.priors.BeliefState.from_battle`)
raises :class:`PriorsNotBuiltError` instead of starting Node and generating teams.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pokegym.errors import InvalidTeamError, PokegymError
from pokegym.files import atomic_write_json
from pokegym.formats import format_entry, registered_formats, resolve_format
from pokegym.showdown.install import cache_home, lock_hash
from pokegym.showdown.simulator import Simulator, shared_simulator, wait_for_answers
from pokegym.teams import Team, builtin_pool
from pokegym.world.data import STATS, load_dex, to_id
from pokegym.world.priors.set_priors import (
    GenericPrior,
    MixturePrior,
    SetPrior,
    SetsJsonPrior,
    TablePrior,
    UsagePrior,
    _table_prior,
    set_from_json,
)
from pokegym.world.sets import PokemonSet
from pokegym.world.usage import UsageStats

if TYPE_CHECKING:
    from pokegym.formats import BattleFormat
    from pokegym.teams import TeamPool


class PriorsNotBuiltError(PokegymError):
    """A format's priors are read before they were built (never built inside a decision)."""

    def __init__(self, format_id: str, path: Path):
        super().__init__(
            f"The priors of {format_id} are not built yet ({path} is missing): run "
            f"`pokegym priors build --formats {format_id}` once. Environments, the arena and "
            "`pokegym showdown install` build them before any battle; agents only read them."
        )
        self.format_id = format_id
        self.path = path


#: Environment variable naming a Smogon chaos JSON used for team formats.
USAGE_STATS_ENV = "POKEGYM_USAGE_STATS"
#: Teams generated for a random-battle prior: enough that few of the sets Showdown
#: generates fall outside the prior's support, for a build paid once per format and
#: Showdown install and a cached file that loads quickly (docs/priors.md, "Random
#: battles", has the coverage at 2,000, 5,000 and 20,000 teams and the times).
DEFAULT_RANDOM_TEAMS = 20_000
# 2: rows of equal count in a canonical order (the same arguments write the same file).
_SCHEMA = 2
_BATCH = 250


# --------------------------------------------------------------------------- random battles
def random_prior_cache_path(
    format_id: str,
    n_teams: int = DEFAULT_RANDOM_TEAMS,
    seed: int = 0,
    cache_dir: Path | None = None,
) -> Path:
    """Where :func:`random_battle_prior` caches the counts for these arguments.

    A format whose generated teams depend on more than the Showdown install (its registry
    entry names a ``prior_variant``: the designed-move library) gets that in the name.
    """
    base = Path(cache_dir) if cache_dir is not None else cache_home() / "priors" / lock_hash()
    variant = _prior_variant(format_id)
    suffix = f"-{variant}" if variant else ""
    return base / f"{to_id(format_id.split('@@@')[0])}-{n_teams}-s{seed}{suffix}.json"


def _prior_variant(format_id: str) -> str:
    entry = format_entry(format_id)
    if entry is None or entry.prior_variant is None:
        return ""
    module, _, function = entry.prior_variant.partition(":")
    return str(getattr(importlib.import_module(module), function)())


def _team_seeds(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng([seed, 0x5E75])
    words = rng.integers(1, 1 << 16, size=(n, 4))
    return [",".join(str(int(w)) for w in row) for row in words]


def _set_from_generator(data: Mapping[str, Any]) -> tuple[str, str, PokemonSet, str]:
    key = to_id(data.get("speciesId") or data.get("species") or data.get("name", ""))
    forme = to_id(data.get("species") or key)
    evs = data.get("evs") or {}
    ivs = data.get("ivs") or {}
    pset = PokemonSet(
        species=key,
        level=int(data.get("level") or 100),
        item=to_id(data.get("item") or ""),
        ability=to_id(data.get("ability") or ""),
        moves=tuple(sorted(to_id(m) for m in data.get("moves", []))),
        nature=to_id(data.get("nature") or ""),
        evs=tuple(int(evs.get(s, 0)) for s in STATS),
        ivs=tuple(int(ivs.get(s, 31)) for s in STATS),
        tera_type=str(data.get("teraType") or ""),
    )
    return key, forme, pset, str(data.get("role") or "")


def _set_to_json(pset: PokemonSet) -> dict[str, Any]:
    return {
        "level": pset.level,
        "item": pset.item,
        "ability": pset.ability,
        "moves": list(pset.moves),
        "nature": pset.nature,
        "evs": list(pset.evs),
        "ivs": list(pset.ivs),
        "tera": pset.tera_type,
    }


def build_random_set_counts(
    format_id: str,
    n_teams: int = DEFAULT_RANDOM_TEAMS,
    *,
    seed: int = 0,
    simulator: Simulator | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Generate ``n_teams`` teams with Showdown's generator and count the sets.

    Returns the JSON-able table that :func:`random_battle_prior` caches:
    ``{"species": {id: [[count, set, {role: count}], ...]}, "formes": {forme: [id]}, ...}``.

    Args:
        simulator: use this simulator process only; otherwise ``workers`` private
            processes (default: up to 4, one per core) generate in parallel.
    """
    if n_teams < 1:
        raise ValueError(f"n_teams must be at least 1, got {n_teams}")
    format_id = to_id(format_id.split("@@@")[0])
    seeds = _team_seeds(n_teams, seed)
    batches = [seeds[i : i + _BATCH] for i in range(0, n_teams, _BATCH)]
    own: list[Simulator] = []
    if simulator is not None:
        simulator.ensure_running()
        sims = [simulator]
    else:
        count = workers or max(1, min(4, os.cpu_count() or 1))
        own = [Simulator(timeout=300) for _ in range(min(count, len(batches)))]
        for sim in own:
            sim.ensure_running()
        sims = own
    counts: dict[str, dict[PokemonSet, list[Any]]] = {}
    formes: dict[str, set[str]] = {}
    start = time.perf_counter()
    done = 0

    def absorb(result: list[Any]) -> None:
        nonlocal done
        for team in result:
            if isinstance(team, dict):
                raise ValueError(
                    f"Showdown could not generate a {format_id} team: "
                    f"{str(team.get('error', team)).splitlines()[0]}. Is it a random-team format?"
                )
            for data in team:
                key, forme, pset, role = _set_from_generator(data)
                rows = counts.setdefault(key, {})
                row = rows.setdefault(pset, [0, {}])
                row[0] += 1
                row[1][role] = row[1].get(role, 0) + 1
                formes.setdefault(forme, set()).add(key)
            done += 1
        if progress is not None:
            progress(done, n_teams)

    try:
        pending = list(reversed(batches))
        busy: list[Simulator] = []
        for sim in sims:
            if pending:
                sim.submit([["generate", format_id, s] for s in pending.pop()])
                busy.append(sim)
        while busy:
            ready = [busy[0]] if len(busy) == 1 else wait_for_answers(busy, 300)
            for sim in ready:
                absorb(sim.collect(300))
                busy.remove(sim)
                if pending:
                    sim.submit([["generate", format_id, s] for s in pending.pop()])
                    busy.append(sim)
    finally:
        for sim in own:
            sim.close()
    species = {
        key: [
            [row[0], _set_to_json(pset), dict(sorted(row[1].items()))]
            for pset, row in sorted(rows.items(), key=_row_order)
        ]
        for key, rows in sorted(counts.items())
    }
    return {
        "schema": _SCHEMA,
        "format": format_id,
        "showdown": lock_hash(),
        "n_teams": n_teams,
        "seed": seed,
        "build_seconds": round(time.perf_counter() - start, 2),
        "species": species,
        "formes": {k: sorted(v) for k, v in sorted(formes.items()) if v != {k}},
    }


def _row_order(item: tuple[PokemonSet, list[Any]]) -> tuple[int, str]:
    """Most generated sets first; ties by the set itself, not by which simulator process
    answered first, so that the same arguments write the same file."""
    pset, row = item
    return -row[0], json.dumps(_set_to_json(pset), sort_keys=True)


_priors: dict[tuple[Any, ...], SetPrior] = {}


def random_battle_prior(
    format_id: str = "gen9randombattle",
    *,
    n_teams: int | None = None,
    seed: int = 0,
    cache: bool = True,
    cache_dir: Path | None = None,
    simulator: Simulator | None = None,
    workers: int | None = None,
    quiet: bool = False,
    build: bool = True,
) -> TablePrior:
    """The empirical set prior of a random-team format (built once, then cached).

    Args:
        format_id: a random-team format, e.g. ``gen9randombattle``.
        n_teams: teams to generate (default :data:`DEFAULT_RANDOM_TEAMS`).
        seed: seeds the team seeds (the same arguments give the same prior).
        cache: read/write the JSON cache (see :func:`random_prior_cache_path`).
        cache_dir: cache folder instead of ``$POKEGYM_HOME/priors/<lock hash>``.
        simulator: generate with this simulator process (otherwise private ones).
        quiet: no progress message on stderr.
        build: generate the teams when the cache does not hold them; False raises
            :class:`PriorsNotBuiltError` instead.
    """
    n_teams = DEFAULT_RANDOM_TEAMS if n_teams is None else int(n_teams)
    fmt_id = to_id(format_id.split("@@@")[0])
    path = random_prior_cache_path(fmt_id, n_teams, seed, cache_dir)
    key = ("random", fmt_id, n_teams, seed, str(cache_dir) if cache_dir else None, cache, path)
    if key in _priors:
        return _priors[key]  # type: ignore[return-value]
    raw: dict[str, Any] | None = None
    if cache and path.exists():
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError):
            raw = None
        if raw is not None and (
            raw.get("schema") != _SCHEMA or raw.get("n_teams") != n_teams or "gen" not in raw
        ):
            raw = None
    if raw is None:
        if not build:
            raise PriorsNotBuiltError(fmt_id, path)
        fmt = resolve_format(fmt_id, simulator=simulator, setup=False)
        if not fmt.random_teams:
            raise ValueError(
                f"{fmt_id} does not generate random teams; use prior_for_format({fmt_id!r}) "
                "for formats with team pools or usage statistics."
            )
        say = (
            (lambda *_: None)
            if quiet
            else _progress_printer(fmt_id, n_teams, path if cache else None)
        )
        raw = build_random_set_counts(
            fmt_id, n_teams, seed=seed, simulator=simulator, workers=workers, progress=say
        )
        raw["gen"] = fmt.gen
        if cache:
            _write_json(path, raw)
    gen = int(raw["gen"])
    fallback: SetPrior = GenericPrior(gen, style="random")
    if fmt_id == f"gen{gen}randombattle":
        sets_json = SetsJsonPrior.load(gen)
        if sets_json is not None:
            fallback = GenericPrior(gen, style="random", levels=sets_json.levels())
            sets_json.fallback = fallback
            fallback = sets_json
    prior = _table_prior(raw, gen, fallback)
    _priors[key] = prior
    return prior


def _progress_printer(
    format_id: str, n_teams: int, path: Path | None
) -> Callable[[int, int], None]:
    start = time.perf_counter()
    where = f"; cached in {path}" if path is not None else ""
    print(
        f"pokegym: building the {format_id} set prior from {n_teams:,} teams generated by "
        f"Showdown (once{where})...",
        file=sys.stderr,
        flush=True,
    )
    marks = {max(1, n_teams * k // 4) for k in (1, 2, 3, 4)}
    state = {"next": min(marks)}

    def report(done: int, total: int) -> None:
        if done >= state["next"]:
            remaining = [m for m in sorted(marks) if m > done]
            state["next"] = remaining[0] if remaining else total + 1
            print(
                f"pokegym:   {done:,}/{total:,} teams ({time.perf_counter() - start:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    return report


def _write_json(path: Path, data: Any) -> None:
    atomic_write_json(path, data, separators=(",", ":"))


# --------------------------------------------------------------------------- team formats
def pool_prior_cache_path(
    format_id: str, texts: Sequence[str], cache_dir: Path | None = None
) -> Path:
    """Where :func:`pool_prior` caches the sets of a pool (keyed by the teams' text)."""
    digest = hashlib.sha256("\n\x00".join(texts).encode()).hexdigest()[:12]
    base = Path(cache_dir) if cache_dir is not None else cache_home() / "priors" / lock_hash()
    return base / f"{to_id(format_id.split('@@@')[0])}-pool-{digest}.json"


def pool_prior(
    pool: TeamPool | Sequence[Team | str] | None = None,
    format_id: str = "gen9ou",
    *,
    simulator: Simulator | None = None,
    fallback: SetPrior | None = None,
    cache: bool = True,
    cache_dir: Path | None = None,
    build: bool = True,
) -> TablePrior:
    """The sets of a team pool (default: the built-in pool of ``format_id``).

    Each team is read with Showdown's own importer; identical sets in several
    teams count several times. The sets are cached on disk
    (:func:`pool_prior_cache_path`); ``build=False`` raises :class:`PriorsNotBuiltError`
    when they are not.
    """
    base = to_id(format_id.split("@@@")[0])
    if pool is None:
        pool = builtin_pool(base)
    texts = [team.text if isinstance(team, Team) else str(team) for team in pool]
    path = pool_prior_cache_path(base, texts, cache_dir)
    raw = _read_cache(path) if cache else None
    if raw is None:
        if not build:
            raise PriorsNotBuiltError(base, path)
        raw = build_pool_set_counts(texts, base, simulator=simulator)
        if cache:
            _write_json(path, raw)
    table = {
        key: [(set_from_json(key, data), float(count)) for count, data in rows]
        for key, rows in raw["species"]
    }
    return TablePrior(
        "pool", int(raw["gen"]), table, fallback=fallback,
        meta={"format": base, "teams": int(raw["teams"])},
    )  # fmt: skip


def build_pool_set_counts(
    texts: Sequence[str], format_id: str, *, simulator: Simulator | None = None
) -> dict[str, Any]:
    """Read each team with Showdown's importer and count identical sets (JSON-able)."""
    sim = simulator or shared_simulator()
    sim.ensure_running()
    gen = _format_gen(format_id, sim)
    table: dict[str, dict[PokemonSet, float]] = {}
    for result in sim.call([["import", text] for text in texts]):
        if isinstance(result, dict) or not result:
            detail = result.get("error", "") if isinstance(result, dict) else "no sets"
            raise ValueError(f"Showdown could not read a team of the pool: {detail}")
        for data in result:
            pset = PokemonSet.from_showdown(data)
            pset = replace(pset, moves=tuple(sorted(pset.moves)), gender="")
            rows = table.setdefault(pset.species, {})
            rows[pset] = rows.get(pset, 0.0) + 1.0
    return {
        "schema": _SCHEMA,
        "format": format_id,
        "gen": gen,
        "showdown": lock_hash(),
        "teams": len(texts),
        # A list keeps the species in the order the pool shows them.
        "species": [
            [key, [[count, _set_to_json(pset)] for pset, count in rows.items()]]
            for key, rows in table.items()
        ],
    }


def _read_cache(path: Path) -> dict[str, Any] | None:
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) and raw.get("schema") == _SCHEMA else None


def _format_gen(format_id: str, simulator: Simulator | None = None) -> int:
    """A format's generation: from the registry, else from Showdown."""
    entry = format_entry(format_id)
    if entry is not None:
        return entry.gen
    return resolve_format(format_id, simulator=simulator, setup=False).gen


def _prior_source(format_id: str, simulator: Simulator | None = None) -> tuple[str, int]:
    """``(source, gen)`` of a format: ``generator`` or ``pool``, from the registry when it
    has the format, else from Showdown's format list (random teams or not)."""
    entry = format_entry(format_id)
    if entry is not None:
        return entry.prior, entry.gen
    fmt = resolve_format(format_id, simulator=simulator, setup=False)
    return ("generator" if fmt.random_teams else "pool"), fmt.gen


def usage_prior(
    source: str | Path | Mapping[str, Any] | UsageStats,
    *,
    gen: int | None = None,
    fallback: SetPrior | None = None,
    **candidate_options: Any,
) -> UsagePrior:
    """Candidate sets from a Smogon chaos JSON (a path, its decoded dict or
    :class:`~pokegym.world.usage.UsageStats`); ``candidate_options`` go to
    :meth:`~pokegym.world.usage.UsageStats.candidate_sets` (``max_sets``, ...)."""
    if isinstance(source, UsageStats):
        stats = source
    elif isinstance(source, Mapping):
        stats = UsageStats(source)
    else:
        stats = UsageStats.from_file(source)
    gen = gen or stats.gen or 9
    return UsagePrior(stats, gen, fallback=fallback, **candidate_options)


def prior_for_format(
    format_id: str,
    *,
    usage_stats: str | Path | Mapping[str, Any] | UsageStats | None = None,
    pool: TeamPool | Sequence[Team | str] | None = None,
    pool_weight: float = 0.5,
    n_teams: int | None = None,
    simulator: Simulator | None = None,
    quiet: bool = False,
    build: bool = True,
) -> SetPrior:
    """The set prior for a format (see the module docstring for the sources).

    Args:
        usage_stats: a Smogon chaos JSON for team formats (default: the file named by
            ``POKEGYM_USAGE_STATS``, if set).
        pool: teams whose sets form the pool prior (default: the built-in pool, if
            the format has one).
        pool_weight: the pool's share where both the pool and usage know a species.
        n_teams: teams generated for a random format's prior.
        build: build a prior that is not cached yet (Showdown generates or reads
            teams); False raises :class:`PriorsNotBuiltError` instead.
    """
    base = to_id(format_id.split("@@@")[0])
    source, gen = _prior_source(base, simulator)
    if source == "generator":
        return random_battle_prior(
            base, n_teams=n_teams, simulator=simulator, quiet=quiet, build=build
        )
    if usage_stats is None:
        env = os.environ.get(USAGE_STATS_ENV)
        usage_stats = env if env else None
    cacheable = pool is None and (usage_stats is None or isinstance(usage_stats, str | Path))
    key = ("team", base, str(usage_stats) if usage_stats else None, pool_weight)
    if cacheable and key in _priors:
        return _priors[key]
    fallback = GenericPrior(gen, style="competitive")
    components: list[tuple[SetPrior, float]] = []
    # A pool given here is the caller's own: reading it is what was asked for.
    read_pool = build or pool is not None
    try:
        components.append(
            (pool_prior(pool, base, simulator=simulator, build=read_pool), pool_weight)
        )
    except InvalidTeamError:
        if pool is not None:
            raise
    if usage_stats is not None:
        components.append((usage_prior(usage_stats, gen=gen), 1.0 - pool_weight))
    if not components:
        prior: SetPrior = fallback
    elif len(components) == 1:
        prior = components[0][0]
        prior.fallback = fallback
    else:
        prior = MixturePrior(components, fallback=fallback)
    if cacheable:
        _priors[key] = prior
    return prior


# --------------------------------------------------------------------------- build step
_prepared: set[str] = set()


def prepare_priors(fmt: BattleFormat, simulator: Simulator | None = None) -> None:
    """Setup hook of every format (:data:`pokegym.formats.SETUP_HOOKS`): export the
    generation's game data and build the format's prior unless it is cached (once per
    process and format)."""
    base = to_id(fmt.id.split("@@@")[0])
    if base in _prepared:
        return
    _prepared.add(base)
    load_dex(fmt.gen)
    build_format_priors(base, simulator=simulator)


def build_format_priors(
    format_id: str,
    *,
    n_teams: int | None = None,
    simulator: Simulator | None = None,
    force: bool = False,
    quiet: bool = False,
) -> Path | None:
    """Build and cache the prior of one format unless it is cached (``force``: again).

    Returns the cache file, or None for a format whose prior needs nothing built (no
    generator and no built-in pool: Showdown's species data, and a usage JSON if given).
    """
    base = to_id(format_id.split("@@@")[0])
    source, gen = _prior_source(base, simulator)
    if source == "generator":
        teams = DEFAULT_RANDOM_TEAMS if n_teams is None else int(n_teams)
        path = random_prior_cache_path(base, teams)
        if force or _read_cache(path) is None:
            _priors.clear()
            say = (lambda *_: None) if quiet else _progress_printer(base, teams, path)
            raw = build_random_set_counts(base, teams, progress=say)
            raw["gen"] = gen
            _write_json(path, raw)
        return path
    try:
        texts = [team.text for team in builtin_pool(base)]
    except InvalidTeamError:
        return None
    path = pool_prior_cache_path(base, texts)
    if force or _read_cache(path) is None:
        _priors.clear()
        _write_json(path, build_pool_set_counts(texts, base, simulator=simulator))
    return path


def build_priors(
    format_ids: Sequence[str] | None = None,
    *,
    n_teams: int | None = None,
    force: bool = False,
    quiet: bool = False,
) -> dict[str, Path | None]:
    """The explicit build step (``pokegym priors build``): the game data and priors of
    ``format_ids`` (default: every registered format marked ``build_priors``)."""
    if format_ids is None:
        format_ids = [entry.id for entry in registered_formats() if entry.build_priors]
    built: dict[str, Path | None] = {}
    for format_id in format_ids:
        base = to_id(format_id.split("@@@")[0])
        load_dex(_format_gen(base))
        built[base] = build_format_priors(base, n_teams=n_teams, force=force, quiet=quiet)
    return built
