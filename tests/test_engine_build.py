"""poke-engine as a dependency: the build's key, the sdist's download and sha256 check,
the patch for Debian's crates, the one error when the engine is missing, and the engine
that ``pokegym engine build`` installed (``make setup`` builds it; the tests of the real
module fail, never skip, when it is missing)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pokegym.cli import main as cli_main
from pokegym.engine import build as engine_build
from pokegym.engine import require_engine, source
from pokegym.errors import EngineBuildError, EngineMissingError
from pokegym.files import file_sha256

# The pinned sdist, as `pokegym engine build` cached it (looked up before any test
# moves POKEGYM_HOME).
CACHED_SDIST = source.engine_home() / "sdist" / source.SDIST_NAME
PATCHED_FILES = {
    "Cargo.toml",
    "poke-engine-py/Cargo.toml",
    "poke-engine-py/src/lib.rs",
    "src/mcts.rs",
    "src/mcts_threaded.rs",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty POKEGYM_HOME."""
    monkeypatch.setenv("POKEGYM_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(source.SDIST_ENV, raising=False)
    return tmp_path / "home"


@pytest.fixture(scope="module")
def pinned_sdist() -> Path:
    if not CACHED_SDIST.is_file():
        pytest.fail(f"{CACHED_SDIST} is missing: `pokegym engine build` (make setup) caches it")
    return CACHED_SDIST


@pytest.fixture
def hidden_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import poke_engine`` fails, as where it was never built."""
    for name in [n for n in sys.modules if n == "poke_engine" or n.startswith("poke_engine.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "poke_engine", None)


# ------------------------------------------------------------------------ the key
def test_the_key_covers_the_patches_the_recipe_and_the_python(monkeypatch):
    key = engine_build.build_key()
    assert len(key) == 12 and key == engine_build.build_key()
    assert engine_build.wheel_dir().name == key
    changed = []
    with monkeypatch.context() as m:
        m.setattr(engine_build, "patch_sha256", lambda: "0" * 64)
        changed.append(engine_build.build_key())
    with monkeypatch.context() as m:
        m.setattr(engine_build, "search_patch_sha256", lambda: "0" * 64)
        changed.append(engine_build.build_key())
    with monkeypatch.context() as m:
        m.setattr(engine_build, "RECIPE", engine_build.RECIPE + 1)
        changed.append(engine_build.build_key())
    with monkeypatch.context() as m:
        m.setattr(engine_build, "python_tag", lambda: "cpython-399-x86_64")
        changed.append(engine_build.build_key())
    with monkeypatch.context() as m:
        m.setattr(engine_build, "FEATURES", ("poke-engine/gen8",))
        changed.append(engine_build.build_key())
    assert len({key, *changed}) == 6


def test_pythons_newer_than_pyo3_017_get_the_stable_abi(monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 11, 7))
    assert engine_build.debian_features() == engine_build.FEATURES
    monkeypatch.setattr(sys, "version_info", (3, 13, 1))
    assert engine_build.debian_features()[-1] == "pyo3/abi3-py310"


# -------------------------------------------------------------------- the sdist
def test_pip_config_gives_the_indexes_in_pips_order():
    listed = textwrap.dedent("""\
        global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'
        global.index-url='https://mirror.example/simple'
        :env:.index-url='https://pypi.org/simple'
        :env:.default-timeout='180'
    """)
    assert source.parse_pip_config(listed) == [
        "https://pypi.org/simple", "file:///opt/a/simple", "file:///opt/b/simple",
    ]  # fmt: skip
    assert source.parse_pip_config("") == [source.DEFAULT_INDEX]


def test_the_sdist_link_is_found_by_name_and_sha256():
    page_url = "https://pypi.org/simple/poke-engine/"
    name, digest = source.SDIST_NAME, source.SDIST_SHA256
    page = (
        '<a href="../../files/poke_engine-0.0.47.tar.gz#sha256=00">0.0.47</a>'
        f'<a href="https://files.example/ab/{name}#sha256={"1" * 64}">a lookalike</a>'
        f'<a href="../../files/{name}#sha256={digest}" data-requires-python="">{name}</a>'
    )
    assert source.sdist_link(page_url, page) == f"https://pypi.org/files/{name}"
    assert source.sdist_link(page_url, page.replace(digest, "2" * 64)) is None


def test_a_sdist_with_another_sha256_is_refused(home, tmp_path, monkeypatch):
    fake = tmp_path / source.SDIST_NAME
    fake.write_bytes(b"not poke-engine")
    monkeypatch.setenv(source.SDIST_ENV, str(fake))
    with pytest.raises(EngineBuildError, match=f"expected {source.SDIST_SHA256}; not used"):
        source.fetch_sdist()
    assert not (home / "poke-engine" / "sdist" / source.SDIST_NAME).exists()


def test_the_sdist_is_downloaded_from_a_pep503_index(home, tmp_path, monkeypatch, pinned_sdist):
    index = tmp_path / "index"
    (index / "files").mkdir(parents=True)
    (index / "simple" / "poke-engine").mkdir(parents=True)
    shutil.copy(pinned_sdist, index / "files" / source.SDIST_NAME)
    (index / "simple" / "poke-engine" / "index.html").write_text(
        f'<a href="../../files/{source.SDIST_NAME}#sha256={source.SDIST_SHA256}">sdist</a>'
    )
    monkeypatch.setattr(source, "index_urls", lambda: [(index / "simple").as_uri()])
    got = source.fetch_sdist()
    assert got == home / "poke-engine" / "sdist" / source.SDIST_NAME
    assert file_sha256(got) == source.SDIST_SHA256


def test_no_index_listing_the_sdist_is_an_error_naming_the_way_out(home, tmp_path, monkeypatch):
    (tmp_path / "simple" / "poke-engine").mkdir(parents=True)
    (tmp_path / "simple" / "poke-engine" / "index.html").write_text("<html></html>")
    monkeypatch.setattr(source, "index_urls", lambda: [(tmp_path / "simple").as_uri()])
    with pytest.raises(EngineBuildError, match=source.SDIST_ENV):
        source.fetch_sdist()


# -------------------------------------------------------------------- the patch
def test_the_patch_applies_cleanly_to_the_pinned_sdist(tmp_path, pinned_sdist):
    tree = source.unpack(pinned_sdist, tmp_path / "ours")
    patched = source.apply_patch(tree, source.PATCH.read_text())
    assert set(patched) == PATCHED_FILES
    assert 'pyo3 = { version = "0.17.3"' in (tree / "poke-engine-py/Cargo.toml").read_text()
    assert 'rand = "0.8.5"' in (tree / "Cargo.toml").read_text()
    binding = (tree / "poke-engine-py/src/lib.rs").read_text()
    assert "Bound<" not in binding and "from_py_object" not in binding
    assert "#[args(" in binding and "#[pyo3(get)]" in binding
    for path in ("src/mcts.rs", "src/mcts_threaded.rs"):
        text = (tree / path).read_text()
        assert "random_range" not in text and "rand::rng" not in text
    if shutil.which("patch"):  # the same files as GNU patch makes
        theirs = source.unpack(pinned_sdist, tmp_path / "theirs")
        subprocess.run(
            ["patch", "-p1", "--quiet", "--batch", "-i", str(source.PATCH)], cwd=theirs, check=True
        )
        for path in PATCHED_FILES:
            assert (tree / path).read_bytes() == (theirs / path).read_bytes(), path


def test_a_patch_that_does_not_match_changes_nothing(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "b.txt").write_text("alpha\nbeta\n")
    patch = textwrap.dedent("""\
        A comment before the first file.
        --- a/a.txt
        +++ b/a.txt
        @@ -1,3 +1,3 @@
         one
        -two
        +TWO
         three
        --- a/b.txt
        +++ b/b.txt
        @@ -1,2 +1,2 @@
         alpha
        -gamma
        +GAMMA
    """)
    with pytest.raises(EngineBuildError, match=r"does not apply to b\.txt"):
        source.apply_patch(tmp_path, patch)
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert source.apply_patch(tmp_path, patch.split("--- a/b.txt")[0]) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_the_offline_build_names_the_missing_debian_packages(tmp_path):
    (tmp_path / "registry" / "rand-0.8.5").mkdir(parents=True)
    (tmp_path / "registry" / "rand-0.8.5" / "Cargo.toml").write_text("")
    with pytest.raises(EngineBuildError, match="librust-pyo3-dev") as error:
        engine_build.prepare_debian(tmp_path / "tree", registry=tmp_path / "registry")
    assert "apt-get install" in str(error.value) and "librust-rand-dev" not in str(error.value)


# ------------------------------------------------------------ the build's processes
def test_a_command_that_runs_too_long_is_stopped(home):
    code, _ = engine_build._run(["sleep", "30"], what="sleep", timeout=0.5)
    assert code == -1


def test_sigterm_stops_the_compiler_with_the_build(home, tmp_path):
    pid_file = tmp_path / "pid"
    script = (
        "from pokegym.engine.build import _run\n"
        f"_run(['sh', '-c', 'echo $$ > {pid_file}; exec sleep 60'], what='compile')\n"
    )
    build = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (pid_file.is_file() and pid_file.read_text().strip()):
        if time.monotonic() > deadline or build.poll() is not None:
            pytest.fail("the build never started its command")
        time.sleep(0.05)
    child = int(pid_file.read_text())
    try:
        build.send_signal(signal.SIGTERM)
        assert build.wait(30) != 0
        assert not Path(f"/proc/{child}").exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


# ------------------------------------------------------------ a missing engine
def test_a_missing_engine_is_one_error_naming_the_command(hidden_engine):
    with pytest.raises(EngineMissingError) as error:
        require_engine()
    message = str(error.value)
    assert "pokegym engine build" in message and "\n" not in message
    assert isinstance(error.value, ImportError)


def test_the_cli_exits_2_when_the_engine_is_missing(hidden_engine, capsys):
    assert cli_main(["engine", "check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pokegym: error: ") and "pokegym engine build" in err


def test_status_exits_1_when_the_engine_does_not_import(hidden_engine, capsys):
    assert cli_main(["engine", "status"]) == 1
    assert "pokegym engine build" in capsys.readouterr().out


# ------------------------------------------------------------ the real engine
@pytest.fixture(scope="module")
def pe():
    return require_engine()


def _state(pe):
    garchomp = pe.Pokemon(
        id="garchomp", level=100, types=("dragon", "ground"), hp=357, maxhp=357,
        ability="roughskin", item="leftovers", attack=296, defense=226, special_attack=176,
        special_defense=206, speed=333, tera_type="steel",
        moves=[pe.Move(id="earthquake"), pe.Move(id="dragonclaw")],
    )  # fmt: skip
    rotom = pe.Pokemon(
        id="rotomwash", level=100, types=("electric", "water"), hp=304, maxhp=304,
        ability="levitate", item="leftovers", attack=166, defense=250, special_attack=246,
        special_defense=250, speed=249, tera_type="water",
        moves=[pe.Move(id="hydropump"), pe.Move(id="voltswitch")],
    )  # fmt: skip
    pikachu = pe.Pokemon(
        id="pikachu", level=100, types=("electric", "typeless"), hp=211, maxhp=211,
        ability="static", item="lightball", attack=146, defense=116, special_attack=136,
        special_defense=136, speed=306, tera_type="electric",
        moves=[pe.Move(id="thunderbolt"), pe.Move(id="quickattack")],
    )  # fmt: skip
    return pe.State(
        side_one=pe.Side(pokemon=[garchomp, rotom]), side_two=pe.Side(pokemon=[pikachu, rotom])
    )


def test_the_engine_searches_a_small_battle(pe):
    state = _state(pe)
    result = pe.monte_carlo_tree_search(state, iterations=200)
    assert result.total_visits >= 200
    for side in (result.side_one, result.side_two):
        assert sum(option.visits for option in side) == result.total_visits
    ours = {option.move_choice for option in result.side_one}
    assert {"earthquake", "dragonclaw", "switch rotomwash"} <= ours
    assert {"thunderbolt", "quickattack"} <= {o.move_choice for o in result.side_two}


def test_the_engine_generates_a_turn_and_round_trips_states(pe):
    state = _state(pe)
    text = state.to_string()
    assert pe.State.from_string(text).to_string() == text
    branches = pe.generate_instructions(state, "earthquake", "thunderbolt")
    assert branches and sum(b.percentage for b in branches) == pytest.approx(100.0)
    after = state.apply_instructions(branches[0])
    assert after.side_two.pokemon[0].hp < state.side_two.pokemon[0].hp  # Earthquake hits
    assert after.reverse_instructions(branches[0]).to_string() == text
    ours, theirs = pe.calculate_damage(state, "earthquake", "thunderbolt", True)
    assert min(ours) > 0 and len(ours) == len(theirs)
    assert pe.iterative_deepening_expectiminimax(state, 20).side_one


def test_status_and_a_repeated_build_find_the_installed_wheel(pe, capsys):
    current = engine_build.status()
    assert current.installed and current.version == source.VERSION
    if current.from_cached_wheel:  # installed by `pokegym engine build`
        assert cli_main(["engine", "build"]) == 0
        assert "up to date" in capsys.readouterr().out
    assert cli_main(["engine", "status"]) == 0
    assert f"poke-engine {source.VERSION} installed" in capsys.readouterr().out
