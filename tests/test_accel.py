"""The compiled world model (pokegym.world._accel): when it is used, and that it produces
the same states, the same leaf evaluations and the same benchmark figures as the Python
modules."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pokegym.world import _accel

REPO = Path(__file__).resolve().parents[1]


def _env(**changes: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _python(code: str, **env: str | None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=_env(**env), cwd=REPO,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_digest_follows_the_sources(tmp_path: Path) -> None:
    folder = tmp_path / "world"
    folder.mkdir()
    for name in _accel.MODULES:
        (folder / _accel._source_path(name)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(
            REPO / "pokegym" / "world" / _accel._source_path(name),
            folder / _accel._source_path(name),
        )
    assert _accel.sources_digest(folder) == _accel.sources_digest()
    with open(folder / "damage" / "calculator.py", "a") as handle:
        handle.write("\n# edited\n")
    assert _accel.sources_digest(folder) != _accel.sources_digest()


def test_the_switch_turns_the_compiled_build_off() -> None:
    out = _python(
        """
        import pokegym.world.transition as t
        from pokegym.world import _accel
        print(t.__file__)
        print(_accel.describe())
        """,
        POKEGYM_ACCEL="0",
    )
    module, line = out.strip().splitlines()
    assert module.endswith("transition.py")
    assert "turned off (POKEGYM_ACCEL=0)" in line


def test_without_a_build_the_python_modules_load(tmp_path: Path) -> None:
    out = _python(
        """
        import pokegym.world.transition as t
        from pokegym.world import _accel
        print(t.__file__)
        print(_accel.describe())
        """,
        POKEGYM_HOME=str(tmp_path),
        POKEGYM_ACCEL=None,
    )
    module, line = out.strip().splitlines()
    assert module.endswith("transition.py")
    assert "no compiled build for these sources" in line
    assert _accel.find_build(tmp_path / "accel") is None


def test_an_incomplete_build_is_not_used(tmp_path: Path) -> None:
    folder = tmp_path / _accel.sources_digest()
    folder.mkdir()
    (folder / _accel.MANIFEST).write_text("{}")  # no extension modules
    assert _accel.find_build(tmp_path) is None


def test_building_without_mypy_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(_accel.AccelBuildError, match=r"pip install 'pokegym\[accel\]'"):
        _accel.build(tmp_path, force=True)
    assert not any(tmp_path.iterdir())  # nothing half-built left behind


@pytest.fixture(scope="module")
def compiled_build() -> Path:
    """The compiled build for these sources: the one `make setup` built, else built now
    (about a minute of CPU)."""
    return _accel.find_build() or _accel.build()


@pytest.mark.slow
def test_the_compiled_model_gives_the_same_states_and_figures(
    compiled_build: Path, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "pokegym.cli", "bench", "worldmodel", "--battles", "2",
               "--rate-seconds", "0.1"]  # fmt: skip
    runs = {}
    for mode in ("1", "0"):
        done = subprocess.run(
            command, env=_env(POKEGYM_ACCEL=mode), cwd=REPO, capture_output=True, text=True,
            timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        runs[mode] = done.stdout.splitlines()
    compiled, python = runs["1"], runs["0"]
    assert "compiled build" in compiled[1] and str(compiled_build) in compiled[1]
    assert "turned off" in python[1]

    def figures(lines: list[str]) -> list[str]:
        # everything but the rates (CPU-time measurements) and the model's origin
        kept = []
        for line in lines[2:]:
            if line.startswith("transitions per CPU second"):
                line = line.split(";", 1)[1]
            kept.append(line.split(" transitions_per_s=")[0])
        return kept

    assert figures(compiled) == figures(python)
    assert any(line.startswith("digest of the model's states") for line in compiled)
    assert any(line.startswith("digest of the leaf evaluation") for line in compiled)
    assert any(line.startswith("true sets:") and " 0 turns" not in line for line in compiled)


@pytest.mark.slow
def test_states_pickled_by_one_build_load_in_the_other(
    compiled_build: Path, tmp_path: Path
) -> None:
    path = tmp_path / "states.pkl"
    _python(
        f"""
        import pickle
        import pokegym.world.transition as transition
        from pokegym.world.data import load_dex
        from pokegym.world.state import BattleState, MonState, SideState
        assert not transition.__file__.endswith(".py"), transition.__file__
        mon = lambda species, moves: MonState(species, 80, ("Normal",), (300, 200, 150, 120,
                                              150, 180), 300.0, moves)
        state = BattleState([SideState([mon("snorlax", ("bodyslam",)), mon("eevee", ())]),
                             SideState([mon("tauros", ("doubleedge",))])])
        after = transition.TransitionModel(load_dex(9)).step(
            state, ("move", "bodyslam", False), ("move", "doubleedge", False))
        pickle.dump((state, after), open({str(path)!r}, "wb"))
        """,
        POKEGYM_ACCEL="1",
    )
    from pokegym.world.data import load_dex
    from pokegym.world.transition import TransitionModel

    state, after = pickle.loads(path.read_bytes())
    assert type(state).__module__ == "pokegym.world.state"
    again = TransitionModel(load_dex(9)).step(
        state, ("move", "bodyslam", False), ("move", "doubleedge", False)
    )
    assert again == after
    assert after.sides[1].active_mon.hp < 300  # the turn did something


def test_policies_core_is_registered_as_an_extension_of_the_build() -> None:
    from policies import core

    found = {e.package: e for e in _accel.registered_extensions()}
    assert set(found) == {"policies.core"}
    extension = found["policies.core"]
    assert extension.modules == core.COMPILED
    assert extension.directory == Path(core.__file__).parent
    assert set(extension.sources()) == set(core.COMPILED)


def _fake_build(tmp_path: Path, extension: _accel.Extension, sources: dict[str, str]) -> Path:
    """A build folder whose manifest records ``sources`` for ``extension``, with its files."""
    folder = tmp_path / "build"
    for name in extension.files():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"")
    manifest = {"extensions": {extension.package: {"modules": list(extension.modules),
                                                   "sources": sources}}}  # fmt: skip
    (folder / _accel.MANIFEST).write_text(__import__("json").dumps(manifest))
    return folder


def test_an_extension_loads_compiled_only_for_the_sources_the_build_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "pkg"
    source.mkdir()
    (source / "leaf.py").write_text("VALUE = 1\n")
    extension = _accel.Extension("pkg", ("leaf",), source)
    folder = _fake_build(tmp_path, extension, extension.sources())
    monkeypatch.setattr(_accel, "_EXTENSIONS", {})
    compiled = _accel.AccelStatus(True, "compiled build", folder, "digest")
    monkeypatch.setattr(_accel, "_STATUS", compiled)

    path = [str(source)]
    _accel.activate_extension("pkg", path, ("leaf",))
    assert path == [str(folder / "pkg"), str(source)]
    assert _accel.extension_status()["pkg"] == "compiled build"

    (source / "leaf.py").write_text("VALUE = 2\n")  # edited since the build
    path = [str(source)]
    _accel.activate_extension("pkg", path, ("leaf",))
    assert path == [str(source)]
    assert "other sources" in _accel.extension_status()["pkg"]

    monkeypatch.setattr(_accel, "_STATUS", _accel.AccelStatus(False, "off", None, ""))
    _accel.activate_extension("pkg", path, ("leaf",))  # never without the world model's build
    assert path == [str(source)]
    assert "not compiled" in _accel.extension_status()["pkg"]


def test_a_build_missing_an_extension_is_rebuilt(tmp_path: Path) -> None:
    source = tmp_path / "pkg"
    source.mkdir()
    (source / "leaf.py").write_text("VALUE = 1\n")
    extension = _accel.Extension("pkg", ("leaf",), source)
    folder = _fake_build(tmp_path, extension, extension.sources())
    assert _accel._extensions_current(folder, [extension])
    (source / "leaf.py").write_text("VALUE = 2\n")
    assert not _accel._extensions_current(folder, [extension])
    (source / "leaf.py").write_text("VALUE = 1\n")
    next(iter(folder.glob("pkg/*"))).unlink()
    assert not _accel._extensions_current(folder, [extension])


@pytest.mark.slow
def test_the_agents_leaf_helpers_load_compiled_with_the_world_model(compiled_build: Path) -> None:
    out = _python(
        """
        import policies.core.evaluation as evaluation, policies.core.encoding as encoding
        from pokegym.world import _accel
        print(evaluation.__file__, encoding.__file__, _accel.extension_status())
        """,
        POKEGYM_ACCEL="1",
    )
    assert out.count(str(compiled_build / "policies.core")) == 2, out
    assert "'policies.core': 'compiled build'" in out
    off = _python(
        """
        import policies.core.evaluation as evaluation
        print(evaluation.__file__)
        """,
        POKEGYM_ACCEL="0",
    )
    assert off.strip().endswith("policies/core/evaluation.py")
