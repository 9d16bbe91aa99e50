"""``pokegym engine build``: poke-engine compiled once for Gen 9, cached, installed.

The pinned sdist (:mod:`pokegym.engine.source`) is unpacked and built with maturin
(``--release --no-default-features --features poke-engine/terastallization``) on one
of two paths:

- **registry**: the sources with the crate versions of their ``Cargo.lock`` from the
  crate registry. Taken when ``cargo fetch`` can download them.
- **debian**: where no crate registry answers, the crates Debian packages
  (``librust-pyo3-dev``, ``-rand-dev``, ``-dashmap-dev``, ``-clap-dev``, in
  ``/usr/share/cargo/registry``) as a cargo directory source, ``--offline``, with the
  shipped patch that ports the sources to those versions (pyo3 0.17, rand 0.8,
  dashmap 5.4, clap 4.0). pyo3 0.17 predates Python 3.12: for 3.12 and later the module
  is built on the stable ABI of 3.10 (``pyo3/abi3-py310``).

On both paths the sources first get the shipped patch that adds ``mcts_with_options``:
the MCTS with side two's root move drawn from a given distribution and a weight on each
side's stat boosts in the evaluation (the ``engine`` agent's ``opponent=prior``,
``boost_value`` and ``opponent_boost_value``); the search is otherwise the released one.

The wheel goes to ``$POKEGYM_HOME/poke-engine/wheels/<key>/`` with a ``build.json``; the
key covers the version, the sdist's sha256, the features, the patches' sha256, this
recipe, the Python and the machine. It is installed with ``pip install --no-deps
--force-reinstall``; a later build finds the wheel (and does nothing when that very file
is installed already). A lock keeps two builds from racing; the compilers run at
``nice -n 19`` in their own process group, stopped with the build on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pokegym.engine.source import (
    PATCH,
    SDIST_SHA256,
    SEARCH_PATCH,
    VERSION,
    Log,
    _quiet,
    apply_patch,
    engine_home,
    fetch_sdist,
    unpack,
)
from pokegym.errors import EngineBuildError
from pokegym.files import file_sha256
from pokegym.showdown.install import file_lock

DISTRIBUTION = "poke-engine"
FEATURES = ("poke-engine/terastallization",)  # Gen 9 (terastallization implies gen9)
# pyo3 0.17 knows Pythons up to 3.11; newer ones get the module on the 3.10 stable ABI.
NEWEST_PYTHON_FOR_PYO3_017 = (3, 11)
ABI3_FEATURE = "pyo3/abi3-py310"
RECIPE = 2  # bumped when the steps below change, so that older wheels are not used
MATURIN = "maturin>=1.5,<2"
PATHS = ("auto", "registry", "debian")

DEBIAN_REGISTRY = Path("/usr/share/cargo/registry")
# Crate -> version prefix the patch was written for, and the Debian package holding it.
DEBIAN_CRATES = {
    "pyo3": ("0.17.", "librust-pyo3-dev"),
    "rand": ("0.8.", "librust-rand-dev"),
    "dashmap": ("5.", "librust-dashmap-dev"),
    "clap": ("4.0.", "librust-clap-dev"),
}
FETCH_TIMEOUT = 180.0  # seconds for `cargo fetch` to show that a registry answers


def python_tag() -> str:
    return f"{sys.implementation.cache_tag}-{platform.machine()}"


def debian_features() -> tuple[str, ...]:
    newer = sys.version_info[:2] > NEWEST_PYTHON_FOR_PYO3_017
    return (*FEATURES, ABI3_FEATURE) if newer else FEATURES


def patch_sha256() -> str:
    return file_sha256(PATCH)


def search_patch_sha256() -> str:
    return file_sha256(SEARCH_PATCH)


def build_key() -> str:
    """Digest of everything the wheel depends on."""
    recipe = {
        "version": VERSION,
        "sdist": SDIST_SHA256,
        "features": list(FEATURES),
        "debian_features": list(debian_features()),
        "patch": patch_sha256(),
        "search_patch": search_patch_sha256(),
        "recipe": RECIPE,
        "python": python_tag(),
    }
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


def wheel_dir() -> Path:
    return engine_home() / "wheels" / build_key()


def cached_wheel() -> Path | None:
    wheels = sorted(wheel_dir().glob("poke_engine-*.whl"))
    return wheels[0] if wheels else None


def build_record(wheel: Path | None = None) -> dict[str, object]:
    """The ``build.json`` written next to a wheel (empty when there is none)."""
    wheel = wheel or cached_wheel()
    record = wheel.parent / "build.json" if wheel else None
    return json.loads(record.read_text()) if record and record.is_file() else {}


# --------------------------------------------------------------------------- processes
def _run(
    cmd: Sequence[str],
    *,
    what: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    log: Log = _quiet,
) -> tuple[int, str]:
    """Run ``cmd`` at ``nice -n 19`` in its own process group, its output in a log file.

    Returns the exit status (-1 after ``timeout``) and the end of the output. Ctrl-C or
    SIGTERM stops the whole group before the interrupt goes on."""
    logs = engine_home() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{what.replace(' ', '-')}.log"
    nice = ["nice", "-n", "19"] if shutil.which("nice") else []
    log(f"{what}: {' '.join(cmd)} (output in {log_path})")
    # SIGTERM becomes an interrupt while the command runs (only the main thread may set
    # handlers; an ignored SIGTERM stays ignored).
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGTERM)
    handle_term = previous is not None and previous != signal.SIG_IGN

    # A SIGTERM that arrives while Popen is still starting the command is held until
    # Popen returns: raised inside Popen, it would leave the started command running.
    held: list[int] = []
    started = False

    def interrupt(signum: int) -> KeyboardInterrupt:
        error = KeyboardInterrupt(signum)
        error.signum = signum  # type: ignore[attr-defined]  # the CLI's exit status
        return error

    def on_term(signum: int, frame: object) -> None:
        if not started:
            held.append(signum)
            return
        raise interrupt(signum)

    if handle_term:
        signal.signal(signal.SIGTERM, on_term)
    process = None
    try:
        with open(log_path, "w") as out:
            process = subprocess.Popen(
                [*nice, *cmd], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
            started = True
            if held:
                raise interrupt(held[0])
            code = process.wait(timeout)
    except subprocess.TimeoutExpired:
        assert process is not None
        _stop(process)
        code = -1
    except BaseException:
        if process is not None:
            _stop(process)
        raise
    finally:
        if handle_term:
            signal.signal(signal.SIGTERM, previous)
    return code, log_path.read_text(errors="replace")[-3000:]


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group, SIGKILL if it is still there after 10 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _check(result: tuple[int, str], what: str) -> None:
    code, tail = result
    if code != 0:
        status = "timed out" if code == -1 else f"exit {code}"
        raise EngineBuildError(f"{what} failed ({status}); its output ends:\n{tail}")


# ------------------------------------------------------------------------ the two paths
def registry_reachable(tree: Path, *, log: Log = _quiet) -> tuple[bool, str]:
    """Whether ``cargo fetch`` downloads the crates of the sdist's ``Cargo.lock``."""
    env = {**os.environ, "CARGO_NET_RETRY": "1"}
    code, tail = _run(
        ["cargo", "fetch", "--locked", "--manifest-path", "poke-engine-py/Cargo.toml"],
        what="cargo fetch", cwd=tree, env=env, timeout=FETCH_TIMEOUT, log=log,
    )  # fmt: skip
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    reason = "timed out" if code == -1 else (lines[-1].strip() if lines else f"exit {code}")
    return code == 0, reason


def missing_debian_crates(registry: Path = DEBIAN_REGISTRY) -> list[str]:
    """The Debian packages whose crates the debian path needs and ``registry`` lacks."""
    missing = []
    for crate, (prefix, package) in DEBIAN_CRATES.items():
        found = [path for path in registry.glob(f"{crate}-{prefix}*") if path.is_dir()]
        if not any((path / "Cargo.toml").is_file() for path in found):
            missing.append(package)
    return missing


def prepare_debian(tree: Path, registry: Path = DEBIAN_REGISTRY) -> list[str]:
    """Patch ``tree`` for Debian's crates and point cargo at them; returns the patched files.

    Raises:
        EngineBuildError: packages are missing, or the patch does not apply.
    """
    missing = missing_debian_crates(registry)
    if missing:
        raise EngineBuildError(
            f"No crate registry answers and {registry} lacks the crates for the offline "
            f"build: apt-get install -y --no-install-recommends {' '.join(missing)}"
        )
    patched = apply_patch(tree, PATCH.read_text())
    (tree / "Cargo.lock").unlink(missing_ok=True)  # locked to the registry's versions
    (tree / ".cargo").mkdir(exist_ok=True)
    (tree / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "debian"\n\n'
        f'[source.debian]\ndirectory = "{registry}"\n'
    )
    return patched


def _ensure_maturin(log: Log) -> None:
    if importlib.util.find_spec("maturin") is not None:
        return
    log(f"maturin is not installed here: pip install '{MATURIN}'")
    _check(
        _run([sys.executable, "-m", "pip", "install", "--quiet", MATURIN],
             what="install maturin", log=log),
        "pip install maturin",
    )  # fmt: skip
    importlib.invalidate_caches()


def _rust_version() -> str:
    try:
        return subprocess.run(
            ["rustc", "--version"], capture_output=True, text=True, check=False, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def build_wheel(path: str = "auto", *, force: bool = False, log: Log = _quiet) -> Path:
    """The cached wheel, compiled first unless it exists (or ``force``).

    Args:
        path: ``auto`` (the registry when ``cargo fetch`` works, else Debian's crates),
            ``registry`` or ``debian``.

    Raises:
        EngineBuildError: no cargo, a missing package, or a failed step (its output is
            in the message and in ``$POKEGYM_HOME/poke-engine/logs``).
    """
    if path not in PATHS:
        raise EngineBuildError(f"unknown build path {path!r}; one of {', '.join(PATHS)}")
    with file_lock(engine_home() / ".build.lock"):
        wheel = cached_wheel()
        if wheel is not None and not force:
            return wheel
        if shutil.which("cargo") is None:
            raise EngineBuildError(
                "poke-engine is compiled from Rust sources and cargo was not found: install "
                "Rust 1.80 or newer (e.g. apt-get install cargo-web on Debian 12, or rustup)"
            )
        sdist = fetch_sdist(log=log)
        _ensure_maturin(log)
        start = time.perf_counter()
        parent = wheel_dir().parent
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=parent) as tmp:
            tree = unpack(sdist, Path(tmp) / "src")
            apply_patch(tree, SEARCH_PATCH.read_text())
            env = {**os.environ, "CARGO_TARGET_DIR": str(Path(tmp) / "target")}
            chosen, reason = path, ""
            if path == "auto":
                reachable, reason = registry_reachable(tree, log=log)
                chosen = "registry" if reachable else "debian"
                if not reachable:
                    log(f"no crate registry ({reason}): building on Debian's crates")
            features = FEATURES
            cargo_args = ["--locked"]
            if chosen == "debian":
                prepare_debian(tree)
                features = debian_features()
                cargo_args = ["--offline"]
                env["CARGO_NET_OFFLINE"] = "true"
            out = Path(tmp) / "out"
            _check(
                _run(
                    [sys.executable, "-m", "maturin", "build", "--release", *cargo_args,
                     "--no-default-features", "--features", ",".join(features),
                     "--interpreter", sys.executable, "--out", str(out)],
                    what="build poke-engine", cwd=tree, env=env, log=log,
                ),
                f"maturin build ({chosen} crates)",
            )  # fmt: skip
            built = sorted(out.glob("poke_engine-*.whl"))
            if not built:
                raise EngineBuildError("maturin finished without a poke_engine wheel")
            (out / "build.json").write_text(
                json.dumps(
                    {
                        "version": VERSION,
                        "crates": chosen,
                        "why": reason,
                        "features": list(features),
                        "patch": patch_sha256() if chosen == "debian" else None,
                        "search_patch": search_patch_sha256(),
                        "python": python_tag(),
                        "rustc": _rust_version(),
                        "seconds": round(time.perf_counter() - start),
                    },
                    indent=1,
                )
            )
            target = wheel_dir()
            if target.exists():
                shutil.rmtree(target)
            os.replace(out, target)
        log(f"built {target} in {time.perf_counter() - start:.0f} s ({chosen} crates)")
        wheel = cached_wheel()
        assert wheel is not None
        return wheel


# ------------------------------------------------------------------------- installing
def installed_from() -> str | None:
    """Where the installed poke-engine came from: a file URL, ``version X`` when pip
    does not know, or None when it is not installed."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    text = dist.read_text("direct_url.json")
    if not text:
        return f"version {dist.version}"
    return str(json.loads(text).get("url", ""))


def is_installed(wheel: Path) -> bool:
    url = installed_from()
    return bool(url) and str(url).endswith(f"/{wheel.parent.name}/{wheel.name}")


def install_wheel(wheel: Path, *, force: bool = False, log: Log = _quiet) -> bool:
    """Install ``wheel`` unless this very file is installed (or ``force``); returns
    whether pip ran."""
    if is_installed(wheel) and not force:
        return False
    _check(
        _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
              "--force-reinstall", str(wheel)], what="install poke-engine", log=log),
        "pip install poke-engine",
    )  # fmt: skip
    importlib.invalidate_caches()
    return True


@dataclass(frozen=True)
class BuildResult:
    wheel: Path
    built_now: bool
    installed_now: bool


def build(path: str = "auto", *, force: bool = False, log: Log = _quiet) -> BuildResult:
    """The wheel built (once) and installed into this environment."""
    built_now = force or cached_wheel() is None
    wheel = build_wheel(path, force=force, log=log)
    with file_lock(engine_home() / ".build.lock"):
        return BuildResult(wheel, built_now, install_wheel(wheel, force=force, log=log))


# ---------------------------------------------------------------------------- status
@dataclass(frozen=True)
class EngineStatus:
    installed: bool
    version: str | None
    location: str | None  # the module's folder
    origin: str | None  # what pip installed it from
    error: str | None  # why it does not import
    cached_wheel: Path | None
    from_cached_wheel: bool
    record: dict[str, object]


def status() -> EngineStatus:
    version = None
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        version = importlib.metadata.version(DISTRIBUTION)
    location = error = None
    try:
        module = importlib.import_module("poke_engine")
        location = str(Path(module.__file__ or "").parent)
    except ImportError as exc:
        error = str(exc)
    wheel = cached_wheel()
    return EngineStatus(
        installed=error is None,
        version=version,
        location=location,
        origin=installed_from(),
        error=error,
        cached_wheel=wheel,
        from_cached_wheel=wheel is not None and is_installed(wheel),
        record=build_record(wheel),
    )
