"""The format registry and the explicit build step of the priors.

Fast tests read the registry and the caches; the slow ones let Showdown build priors
into a private ``POKEGYM_HOME`` through ``pokegym priors build``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import pokegym
from pokegym import formats
from pokegym.formats import FormatEntry, format_entry, register_format, resolve_format
from pokegym.showdown.install import showdown_package_dir
from pokegym.teams import builtin_pool
from pokegym.world import priors

ROOT = Path(__file__).resolve().parents[1]


def test_every_registered_gym_id_comes_from_the_registry():
    ids = {e.gym_id: e.id for e in formats.registered_formats() if e.gym_id}
    assert ids == {gym_id: fmt for gym_id, (fmt, _) in pokegym.ENV_IDS.items()}
    for gym_id, format_id in ids.items():
        assert gym.spec(gym_id).kwargs["battle_format"] == format_id


def test_entries_name_generation_pool_prior_and_hooks():
    ou = format_entry("gen9ou@@@!teampreview")  # custom rules: the same entry
    assert ou is not None and (ou.gen, ou.team_pool, ou.prior) == (9, "gen9ou", "pool")
    assert format_entry("gen8randombattle").prior == "generator"
    assert format_entry("gen9uu") is None  # any Showdown format still plays, unregistered
    designed = format_entry("gen9designedmoves")
    assert designed.team_pool == "gen9ou"
    assert builtin_pool("gen9designedmoves").teams == builtin_pool("gen9ou").teams
    assert designed.hooks == ("pokegym.moves.library:activate_for_format",)
    module, _, function = designed.hooks[0].partition(":")
    assert callable(getattr(__import__(module, fromlist=[function]), function))


def test_core_modules_do_not_import_the_designed_moves():
    """The designed moves hook in by name: importing the core leaves them unloaded."""
    code = (
        "import sys, pokegym, pokegym.formats, pokegym.env, pokegym.teams, pokegym.arena\n"
        "print(sorted(m for m in sys.modules if m.startswith('pokegym.moves')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_a_new_entry_is_one_call(monkeypatch):
    monkeypatch.setattr(formats, "FORMATS", dict(formats.FORMATS))
    entry = register_format(FormatEntry("gen9uu", 9, team_pool="gen9ou", prior="pool"))
    assert format_entry("gen9uu") is entry
    assert len(builtin_pool("gen9uu").teams) == len(builtin_pool("gen9ou").teams)


def test_a_prior_that_is_not_built_is_never_built_in_a_decision(tmp_path):
    with pytest.raises(priors.PriorsNotBuiltError, match="pokegym priors build --formats"):
        priors.random_battle_prior("gen9randombattle", n_teams=17, cache_dir=tmp_path,
                                   build=False)  # fmt: skip
    with pytest.raises(priors.PriorsNotBuiltError, match="gen9ou"):
        priors.pool_prior(None, "gen9ou", cache_dir=tmp_path, build=False)


def test_the_pool_prior_is_read_from_its_cache():
    """Built by `make setup` (pokegym showdown install): no Node to read it."""
    prior = priors.prior_for_format("gen9ou", build=False)
    pool = builtin_pool("gen9ou")
    assert prior.meta == {"format": "gen9ou", "teams": len(pool.teams)}
    garchomp = prior.distribution("garchomp")
    assert garchomp.sets and abs(sum(garchomp.weights) - 1) < 1e-9


@pytest.mark.slow
def test_priors_build_command_builds_once_and_force_builds_again(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POKEGYM_HOME": str(tmp_path),
           "POKEGYM_SHOWDOWN_DIR": str(showdown_package_dir())}  # fmt: skip

    def build(*extra: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "pokegym.cli", "priors", "build",
             "--formats", "gen9ou,gen9uu", *extra],
            capture_output=True, text=True, env=env, timeout=240,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout

    first = build()
    assert "priors of gen9uu: nothing to build" in first
    path = Path(first.split("priors of gen9ou: ")[1].split()[0])
    assert path.is_file() and path.is_relative_to(tmp_path)
    stamp = path.stat().st_mtime_ns
    build()
    assert path.stat().st_mtime_ns == stamp
    build("--force")
    assert path.stat().st_mtime_ns != stamp
    assert list((tmp_path / "data").rglob("gen9.json"))  # the game data is exported too


@pytest.mark.slow
def test_the_cached_pool_prior_equals_the_one_showdown_reads(tmp_path):
    built = priors.pool_prior(None, "gen9ou", cache=False)
    cached = priors.pool_prior(None, "gen9ou", build=False)
    assert list(built.known_species()) == list(cached.known_species())
    for species in built.known_species():
        assert list(built.distribution(species)) == list(cached.distribution(species))


@pytest.mark.slow
def test_setting_a_format_up_prepares_its_priors(monkeypatch):
    calls = []
    monkeypatch.setattr(priors.sources, "_prepared", set())
    real = priors.sources.build_format_priors
    monkeypatch.setattr(priors.sources, "build_format_priors",
                        lambda f, **kw: calls.append(f) or real(f, **kw))  # fmt: skip
    resolve_format("gen9ou")
    resolve_format("gen9ou")  # once per process
    assert calls == ["gen9ou"]
    resolve_format("gen9randombattle", setup=False)
    assert calls == ["gen9ou"]


def test_the_designed_random_prior_is_cached_per_library(tmp_path, monkeypatch):
    from pokegym.moves import MoveDesign, MoveLibrary

    monkeypatch.setenv("POKEGYM_MOVES_FILE", str(tmp_path / "library.json"))
    empty = priors.random_prior_cache_path("gen9designedmovesrandombattle")
    design = MoveDesign("Magma Lance", "Fire", "Physical", 85, 95, 10, "burn", 20)
    MoveLibrary().add(design, "Garchomp", evaluation={"score": 80})
    one = priors.random_prior_cache_path("gen9designedmovesrandombattle")
    assert one != empty and one.name.startswith("gen9designedmovesrandombattle-20000-s0-lib")
    # The same moves approved again (another time, another score) name the same prior.
    MoveLibrary().remove("Magma Lance")
    MoveLibrary().add(design, "Garchomp", evaluation={"score": 70})
    assert priors.random_prior_cache_path("gen9designedmovesrandombattle") == one
    assert (
        priors.random_prior_cache_path("gen9randombattle").name == "gen9randombattle-20000-s0.json"
    )
