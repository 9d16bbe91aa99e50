"""The compiled world model: speed, state, the damage calculator and transition, built
with mypyc, together with the modules of the layers above that call them on every search
node and register through the ``pokegym.accel`` entry-point group (the agents' leaf
evaluation, state encoding, damage prior and action features in ``policies.core``).

The Python modules stay the source of truth. ``pokegym accel build`` (``make setup``
runs it) compiles a snapshot of them with mypyc into
``$POKEGYM_HOME/accel/<digest>/``, where the digest covers their sources, this
build recipe and the Python ABI. On import, ``pokegym.world`` puts that folder first on
its ``__path__`` when a complete build for the *current* sources exists, so
``import pokegym.world.transition`` loads the extension module; otherwise (no build,
a source edited since, another Python) it loads the Python files, silently.
``POKEGYM_ACCEL=0`` turns the compiled build off; ``pokegym accel status`` says which
one is in use and why.

A registered package (an *extension*) is compiled into the same build, so that its
modules call the world model's classes natively, but pokegym never imports it: the
entry point names the package's tuple of module names, read only when building, and the
package's own ``__init__`` calls :func:`activate_extension`, which loads its compiled
modules only when the world model's build is in use and the package's sources are the ones
the build recorded (an edit there falls back to its Python modules and leaves the world
model compiled).

Both builds produce the same states (``pokegym bench worldmodel`` prints a digest of
them, and a test compares the two). The compiled classes cannot be subclassed or
patched from Python: tests run on the Python modules (tests/conftest.py sets
``POKEGYM_ACCEL=0``) except the test that compares the builds.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pokegym.errors import PokegymError
from pokegym.showdown.install import cache_home

# Module names below pokegym.world (a dot: a module of a subpackage, whose __init__ stays
# Python and puts the build's subfolder first on its __path__: activate_subpackage).
MODULES = (
    "speed", "state", "damage.tables", "damage.moves", "damage.combatant", "damage.context",
    "damage.stats", "damage.power", "damage.calculator", "state_damage", "move_effects",
    "transition",
)  # fmt: skip
# The extension module holding the compiled code of all of them (mypyc's shared library).
GROUP = "pokegym.world._compiled"
# Bumped when the build recipe below changes, so that older builds are not used.
RECIPE = "mypyc-1"
ENV_SWITCH = "POKEGYM_ACCEL"
MANIFEST = "manifest.json"
# Packages of the layers above compiled into the build: ``name = "package:ATTRIBUTE"``,
# the attribute a tuple of module names below the package.
EXTENSION_GROUP = "pokegym.accel"

_PACKAGE_DIR = Path(__file__).resolve().parent


class AccelBuildError(PokegymError):
    """The compiled world model could not be built (the pure-Python one still works)."""


@dataclass(frozen=True)
class AccelStatus:
    """Which world model ``import pokegym.world.transition`` loads, and why."""

    compiled: bool
    reason: str
    folder: Path | None
    digest: str


_STATUS: AccelStatus | None = None
_EXTENSIONS: dict[str, str] = {}  # package -> what activate_extension decided, in words


@dataclass(frozen=True)
class Extension:
    """A package of a layer above compiled into the build."""

    package: str  # e.g. "policies.core"
    modules: tuple[str, ...]  # below the package, e.g. ("evaluation", "encoding")
    directory: Path  # the package's folder

    def sources(self) -> dict[str, str]:
        """Module -> SHA-256 of its source."""
        return {
            name: hashlib.sha256((self.directory / _source_path(name)).read_bytes()).hexdigest()
            for name in self.modules
        }

    def files(self) -> list[str]:
        """The compiled files below the build's folder."""
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        return [f"{self.package}/{name.replace('.', '/')}{suffix}" for name in self.modules]


def accel_root() -> Path:
    """Where compiled builds live: ``$POKEGYM_HOME/accel``."""
    return cache_home() / "accel"


def _source_path(name: str) -> str:
    """A module's file below pokegym/world, e.g. ``damage/context.py``."""
    return name.replace(".", "/") + ".py"


def _abi_tag() -> str:
    return f"{sys.implementation.name} {sysconfig.get_config_var('EXT_SUFFIX')}"


def sources_digest(package_dir: Path = _PACKAGE_DIR) -> str:
    """SHA-256 over the sources, the build recipe and the Python ABI."""
    digest = hashlib.sha256(f"{RECIPE}\n{_abi_tag()}\n".encode())
    for name in MODULES:
        digest.update(name.encode() + b"\n")
        digest.update((package_dir / _source_path(name)).read_bytes())
    return digest.hexdigest()


def _expected_files() -> list[str]:
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    names = (*MODULES, GROUP.rsplit(".", 1)[1] + "__mypyc")
    return [name.replace(".", "/") + suffix for name in names]


def find_build(root: Path | None = None, digest: str | None = None) -> Path | None:
    """The folder of a complete build for the current sources, or None."""
    folder = (root or accel_root()) / (digest or sources_digest())
    if not (folder / MANIFEST).is_file():
        return None
    if not all((folder / name).is_file() for name in _expected_files()):
        return None
    return folder


def activate(package_path: list[str]) -> AccelStatus:
    """Put the compiled build first on ``pokegym.world.__path__`` when one matches the
    sources (called by ``pokegym/world/__init__.py``; never raises)."""
    global _STATUS
    if os.environ.get(ENV_SWITCH, "").strip().lower() in ("0", "false", "no", "off"):
        _STATUS = AccelStatus(False, f"turned off ({ENV_SWITCH}=0)", None, "")
        return _STATUS
    try:
        digest = sources_digest()
        folder = find_build(digest=digest)
    except OSError as exc:  # sources not readable (a sourceless install), no cache folder
        _STATUS = AccelStatus(False, f"Python modules ({exc})", None, "")
        return _STATUS
    if folder is None:
        _STATUS = AccelStatus(
            False,
            "Python modules: no compiled build for these sources (`pokegym accel build`)",
            None,
            digest,
        )
        return _STATUS
    if str(folder) not in package_path:
        package_path.insert(0, str(folder))
    _STATUS = AccelStatus(True, "compiled build", folder, digest)
    return _STATUS


def activate_subpackage(package_path: list[str], name: str) -> None:
    """Put the compiled build's folder of subpackage ``name`` (e.g. ``damage``) first on
    its ``__path__`` when :func:`activate` chose the compiled build (called by the
    subpackage's ``__init__``, which stays Python; never raises)."""
    if _STATUS is not None and _STATUS.compiled and _STATUS.folder is not None:
        folder = str(_STATUS.folder / name)
        if folder not in package_path:
            package_path.insert(0, folder)


def activate_extension(package: str, package_path: list[str], modules: tuple[str, ...]) -> None:
    """Put the build's compiled modules of ``package`` first on its ``__path__`` when the
    world model's build is in use and holds them for the package's current sources (called
    by the package's ``__init__``, which stays Python; never raises)."""
    if _STATUS is None or not _STATUS.compiled or _STATUS.folder is None:
        _EXTENSIONS[package] = "Python modules (the world model is not compiled)"
        return
    folder = _STATUS.folder
    try:
        recorded = json.loads((folder / MANIFEST).read_text()).get("extensions", {}).get(package)
        extension = Extension(package, tuple(modules), Path(package_path[-1]))
        current = extension.sources()
    except (OSError, ValueError, AttributeError) as exc:
        _EXTENSIONS[package] = f"Python modules ({exc})"
        return
    if not recorded or recorded.get("sources") != current:
        _EXTENSIONS[package] = (
            "Python modules: the build holds other sources for them (`pokegym accel build`)"
        )
        return
    if not all((folder / name).is_file() for name in extension.files()):
        _EXTENSIONS[package] = "Python modules: the build is incomplete (`pokegym accel build`)"
        return
    compiled = str(folder / package)
    if compiled not in package_path:
        package_path.insert(0, compiled)
    _EXTENSIONS[package] = "compiled build"


def extension_status() -> dict[str, str]:
    """Package -> which modules it loads, for the extensions imported so far."""
    return dict(_EXTENSIONS)


def registered_extensions() -> list[Extension]:
    """The packages registered in the ``pokegym.accel`` entry-point group (importing them:
    for building and reporting only)."""
    found = []
    for entry in sorted(importlib.metadata.entry_points(group=EXTENSION_GROUP), key=str):
        package = entry.value.split(":")[0].strip()
        try:
            modules = tuple(entry.load())
            directory = Path(importlib.import_module(package).__path__[-1])
        except Exception as exc:  # a broken package must not stop the world model's build
            raise AccelBuildError(
                f"the compiled-build extension {entry.name} ({entry.value}) "
                f"could not be read: {exc}"
            ) from exc
        found.append(Extension(package, modules, directory))
    return found


def _extensions_current(folder: Path, extensions: list[Extension]) -> bool:
    """Whether a build holds every registered extension for its current sources."""
    try:
        recorded = json.loads((folder / MANIFEST).read_text()).get("extensions", {})
    except (OSError, ValueError):
        return False
    for extension in extensions:
        entry = recorded.get(extension.package)
        if not entry or entry.get("sources") != extension.sources():
            return False
        if not all((folder / name).is_file() for name in extension.files()):
            return False
    return True


def status() -> AccelStatus:
    """What :func:`activate` decided for this process, checked against the modules that
    were actually imported."""
    # Importing this module ran pokegym/world/__init__.py, which calls activate().
    assert _STATUS is not None
    transition = sys.modules.get("pokegym.world.transition")
    if transition is not None:
        loaded = not str(transition.__file__).endswith(".py")
        if loaded != _STATUS.compiled:
            return AccelStatus(
                loaded, f"{_STATUS.reason}, but the loaded module is {transition.__file__}",
                _STATUS.folder, _STATUS.digest,
            )  # fmt: skip
    return _STATUS


def describe() -> str:
    """One line for benchmarks and ``pokegym accel status``."""
    current = status()
    if current.compiled:
        return f"world model: compiled build ({current.folder})"
    return f"world model: {current.reason}"


# The compile step, run in a child process (mypyc and setuptools change the process's
# working directory and global state): argv = source folder, output folder, opt level,
# then the modules' files relative to the source folder.
_COMPILE_SCRIPT = """
import os, sys
work, out, opt = sys.argv[1], sys.argv[2], sys.argv[3]
os.chdir(work)
from mypyc.build import mypycify
from setuptools import setup
modules = sys.argv[4:]
extensions = mypycify(["--follow-imports=silent", "--ignore-missing-imports", *modules],
                      opt_level=opt, group_name=os.environ["POKEGYM_ACCEL_GROUP"])
setup(name="pokegym-world-compiled", ext_modules=extensions,
      script_args=["build_ext", "--build-lib", out, "--build-temp", os.path.join(work, "tmp")])
"""


def _mypy_version() -> str:
    try:
        return importlib.metadata.version("mypy")
    except Exception as exc:  # PackageNotFoundError and broken metadata alike
        raise AccelBuildError(
            "building the compiled world model needs mypy (its mypyc compiler) and a C "
            "compiler: pip install 'pokegym[accel]'"
        ) from exc


def build(
    root: Path | None = None,
    *,
    force: bool = False,
    opt_level: str = "3",
    log: bool = False,
    extensions: list[Extension] | None = None,
) -> Path:
    """Compile the modules (about a minute of CPU) and return the build's folder.

    ``extensions``: the packages compiled with the world model (default: the registered
    ones, :func:`registered_extensions`). An existing complete build for the same sources is
    returned as is unless ``force``.
    The sources are snapshotted first, so an edit during the build cannot produce a
    build that claims sources it was not compiled from. Ctrl-C or SIGTERM stops the
    compiler and removes the partial build.

    Raises:
        AccelBuildError: mypy is missing or the compilation failed (the message holds
            the end of the compiler's output).
    """
    root = root or accel_root()
    extensions = registered_extensions() if extensions is None else extensions
    if not force:
        with contextlib.suppress(OSError):
            existing = find_build(root)
            if existing is not None and _extensions_current(existing, extensions):
                return existing
    mypy_version = _mypy_version()
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    try:
        shutil.copytree(_PACKAGE_DIR.parent, work / "pokegym", ignore=_not_python)
        paths = [f"pokegym/world/{_source_path(name)}" for name in MODULES]
        snapshots = []
        for extension in extensions:
            top = extension.package.split(".")[0]
            depth = extension.package.count(".")
            top_dir = extension.directory.parents[depth - 1] if depth else extension.directory
            if not (work / top).exists():
                shutil.copytree(top_dir, work / top, ignore=_not_python)
            folder = work / extension.package.replace(".", "/")
            snapshots.append(Extension(extension.package, extension.modules, folder))
            paths += [f"{extension.package.replace('.', '/')}/{_source_path(name)}"
                      for name in extension.modules]  # fmt: skip
        digest = sources_digest(work / "pokegym" / "world")
        target = root / digest
        existing = find_build(root, digest)
        if existing is not None and not force and _extensions_current(existing, snapshots):
            return existing
        out = work / "out"
        started = time.monotonic()
        cpu_before = os.times()
        output = _run_compiler(work, out, opt_level, log, paths)
        cpu_after = os.times()
        staged = work / "staged"
        staged.mkdir()
        moves = [(out / "pokegym" / "world" / name, name) for name in _expected_files()]
        for extension in snapshots:
            moves += [(out / extension.package.replace(".", "/") / name.split("/", 1)[1], name)
                      for name in extension.files()]  # fmt: skip
        for source, name in moves:
            if not source.is_file():
                raise AccelBuildError(f"mypyc did not produce {name}:\n{output[-3000:]}")
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(source), staged / name)
        manifest = {
            "digest": digest, "recipe": RECIPE, "modules": list(MODULES),
            "extensions": {e.package: {"modules": list(e.modules), "sources": e.sources()}
                           for e in snapshots},
            "python": sys.version.split()[0], "abi": _abi_tag(), "mypy": mypy_version,
            "opt_level": opt_level, "built_at": time.strftime("%Y-%m-%d %H:%M:%S"),
            "wall_seconds": round(time.monotonic() - started, 1),
            "cpu_seconds": round(cpu_after.children_user - cpu_before.children_user
                                 + cpu_after.children_system - cpu_before.children_system, 1),
        }  # fmt: skip
        (staged / MANIFEST).write_text(json.dumps(manifest, indent=1))
        if target.exists():
            shutil.rmtree(target)  # an incomplete or forced-over build
        try:
            os.rename(staged, target)
        except OSError:
            if find_build(root, digest) is None:  # not another process's finished build
                raise
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _not_python(folder: str, names: list[str]) -> list[str]:
    """copytree's ignore rule for the snapshot: only Python files (mypy reads the whole
    package to type the modules)."""
    return [
        name for name in names
        if name == "__pycache__" or (not name.endswith(".py") and not Path(folder, name).is_dir())
    ]  # fmt: skip


def _run_compiler(work: Path, out: Path, opt_level: str, log: bool, paths: list[str]) -> str:
    env = {**os.environ, "POKEGYM_ACCEL_GROUP": GROUP, ENV_SWITCH: "0"}
    command = [sys.executable, "-c", _COMPILE_SCRIPT, str(work), str(out), opt_level, *paths]
    process = subprocess.Popen(
        command, cwd=work, env=env, stdout=None if log else subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    previous = signal.getsignal(signal.SIGTERM)
    in_main_thread = _in_main_thread()

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if in_main_thread:
        signal.signal(signal.SIGTERM, on_term)
    try:
        output, _ = process.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        process.wait()
        raise
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
    output = output or ""
    if process.returncode != 0:
        raise AccelBuildError(
            f"compiling the world model failed (exit {process.returncode}); the Python "
            f"modules are used instead. Compiler output (end):\n{output[-3000:]}"
        )
    return output


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def clean(root: Path | None = None, *, keep_current: bool = True) -> list[Path]:
    """Remove builds (all of them, or all but the one for the current sources)."""
    root = root or accel_root()
    if not root.is_dir():
        return []
    current = sources_digest() if keep_current else ""
    removed = []
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and folder.name != current:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def main(argv: list[str] | None = None) -> int:
    """``pokegym accel build|status|clean``."""
    parser = argparse.ArgumentParser(
        prog="pokegym accel", description="the compiled world model (mypyc)"
    )
    parser.add_argument("action", choices=["build", "status", "clean"])
    parser.add_argument("--force", action="store_true", help="build: rebuild an existing build")
    parser.add_argument("--all", action="store_true", help="clean: also the current build")
    parser.add_argument("--verbose", action="store_true", help="build: show the compiler output")
    args = parser.parse_args(argv)
    if args.action == "build":
        started = time.monotonic()
        extensions = registered_extensions()
        existing = None if args.force else find_build()
        if existing is not None and _extensions_current(existing, extensions):
            print(f"compiled world model: up to date ({existing})")
            return 0
        names = [f"pokegym.world.{{{','.join(MODULES)}}}"]
        names += [f"{e.package}.{{{','.join(e.modules)}}}" for e in extensions]
        print(f"compiling {' and '.join(names)} with mypyc ...", flush=True)
        folder = build(force=args.force, log=args.verbose, extensions=extensions)
        manifest = json.loads((folder / MANIFEST).read_text())
        print(f"built in {time.monotonic() - started:.0f} s "
              f"(compiler CPU {manifest['cpu_seconds']} s): {folder}")  # fmt: skip
        print("new processes load it; POKEGYM_ACCEL=0 turns it off")
        return 0
    if args.action == "clean":
        removed = clean(keep_current=not args.all)
        print(f"removed {len(removed)} build(s) from {accel_root()}")
        return 0
    current = status()
    print(describe())
    print(f"sources digest: {current.digest or sources_digest()}")
    folder = current.folder or find_build()
    if folder is not None:
        manifest = json.loads((folder / MANIFEST).read_text())
        print(f"build: mypy {manifest['mypy']}, Python {manifest['python']}, "
              f"built {manifest['built_at']}")  # fmt: skip
    for extension in registered_extensions():  # importing each package activates it
        print(f"{extension.package}: {_EXTENSIONS.get(extension.package, 'not imported')}")
    return 0
