"""Find Node.js and install the pinned Pokémon Showdown package into a cache.

The project ships ``js/package.json`` and ``js/package-lock.json``; on first use
``npm ci --omit=optional`` installs exactly that tree into
``$POKEGYM_HOME/showdown/<lock hash>/`` (``~/.cache/pokegym`` by default).
Later runs find the finished install and reuse it. Installs are atomic (built in a
temporary folder, then renamed) and guarded by a file lock, so parallel processes
never see half an install.

Set ``POKEGYM_SHOWDOWN_DIR`` to the folder of an existing ``pokemon-showdown``
package to skip the install altogether.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pokegym.errors import NodeNotFoundError, ShowdownInstallError

JS_DIR = Path(__file__).with_name("js")
MIN_NODE_MAJOR = 18
_MARKER = ".pokegym-complete"

# Written into the installed server's config/config.js. Binds to loopback only and
# trims the number of helper processes: on a small machine the default process
# pools cost throughput and memory for features a local battle server never uses.
SERVER_CONFIG = """\
'use strict';
// Written by pokegym: a local battle server for bots, reachable from this machine only.
exports.bindaddress = '127.0.0.1';
exports.subprocesses = {
\tnetwork: 0,
\tsimulator: 2,
\tvalidator: 1,
\tverifier: 0,
\tlocalartemis: 0,
\tremoteartemis: 0,
\tfriends: 0,
\tchatdb: 0,
\tpm: 0,
\tmodlog: 0,
\tbattlesearch: 0,
\tdatasearch: 0,
};
exports.repl = false;
exports.reportjoins = false;
exports.reportbattles = false;
exports.reportbattlejoins = false;
exports.logchat = false;
exports.logchallenges = false;
exports.loguserstats = 0;
exports.nothrottle = true;
exports.noipchecks = true;
exports.noguestsecurity = true;
exports.backdoor = false;
exports.disablehotpatchall = true;
exports.disablebasicnamefilter = true;
exports.watchconfig = false;
exports.crashguard = true;
"""


def cache_home() -> Path:
    """Root of pokegym's cache (``POKEGYM_HOME`` or ``~/.cache/pokegym``)."""
    env = os.environ.get("POKEGYM_HOME")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "pokegym"


def lock_hash() -> str:
    """Short hash of the shipped lock file: one install folder per pinned tree."""
    return hashlib.sha256((JS_DIR / "package-lock.json").read_bytes()).hexdigest()[:12]


def pinned_version() -> str:
    """The ``pokemon-showdown`` version the shipped package.json pins."""
    deps = json.loads((JS_DIR / "package.json").read_text())["dependencies"]
    return str(deps["pokemon-showdown"])


@dataclass(frozen=True)
class NodeInfo:
    node: str
    npm: str | None
    version: tuple[int, int, int]


@cache
def find_node() -> NodeInfo:
    """Locate ``node`` (and ``npm``) and check the version.

    Raises:
        NodeNotFoundError: when Node.js is missing or older than 18.
    """
    node = os.environ.get("POKEGYM_NODE") or shutil.which("node")
    if not node:
        raise NodeNotFoundError(
            "Node.js was not found on PATH. Pokémon Showdown runs on Node.js "
            f"{MIN_NODE_MAJOR} or newer: install it (https://nodejs.org, or "
            "`apt-get install nodejs npm`) or point POKEGYM_NODE at the binary."
        )
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NodeNotFoundError(f"Could not run {node} --version: {exc}") from exc
    match = re.match(r"v?(\d+)\.(\d+)\.(\d+)", out.stdout.strip())
    if out.returncode != 0 or not match:
        raise NodeNotFoundError(f"{node} --version printed {out.stdout!r}; is it Node.js?")
    version = (int(match[1]), int(match[2]), int(match[3]))
    if version[0] < MIN_NODE_MAJOR:
        raise NodeNotFoundError(
            f"Node.js {out.stdout.strip()} at {node} is too old; Pokémon Showdown needs "
            f"Node.js {MIN_NODE_MAJOR} or newer."
        )
    npm = shutil.which("npm", path=str(Path(node).parent) + os.pathsep + os.environ.get("PATH", ""))
    return NodeInfo(node=node, npm=npm, version=version)


def install_dir() -> Path:
    return cache_home() / "showdown" / lock_hash()


def showdown_package_dir(install: bool = True, quiet: bool = False) -> Path:
    """Folder of the ``pokemon-showdown`` package, installing it on first use.

    Args:
        install: run the one-time install when it is missing (otherwise raise).
        quiet: do not print the progress message.
    """
    override = os.environ.get("POKEGYM_SHOWDOWN_DIR")
    if override:
        path = Path(override).expanduser()
        if not (path / "dist" / "sim" / "index.js").exists():
            raise ShowdownInstallError(
                f"POKEGYM_SHOWDOWN_DIR={override} does not hold a built pokemon-showdown "
                "package (dist/sim/index.js is missing). Unset it to let pokegym install one."
            )
        return path
    target = install_dir()
    package = target / "node_modules" / "pokemon-showdown"
    if not (target / _MARKER).exists():
        if not install:
            raise ShowdownInstallError(
                f"Pokémon Showdown is not installed yet (expected in {target}). "
                "Run `pokegym showdown install`."
            )
        install_showdown(quiet=quiet)
    install_mod(package)
    return package


def moves_file() -> Path:
    """The designed-move library the ``pokegym`` mod reads (``POKEGYM_MOVES_FILE``).

    Default: ``$POKEGYM_HOME/moves/library.json``. Every Showdown process pokegym starts
    gets this path in its environment (see :func:`subprocess_env`).
    """
    env = os.environ.get("POKEGYM_MOVES_FILE")
    return Path(env).expanduser() if env else cache_home() / "moves" / "library.json"


def subprocess_env() -> dict[str, str]:
    """The environment of the Showdown processes pokegym starts (adds the move library)."""
    return {**os.environ, "POKEGYM_MOVES_FILE": str(moves_file())}


def install_mod(package: Path) -> None:
    """Copy pokegym's Showdown mod and formats into ``package/dist`` when they differ.

    The files (``js/mod``) add the ``pokegym`` mod (Gen 9 plus the designed moves of
    :func:`moves_file`) and two formats: ``gen9designedmoves`` and
    ``gen9designedmovesrandombattle``. Copying is idempotent and atomic per file, so
    an install made by an older pokegym is brought up to date on first use. A
    read-only package folder (``POKEGYM_SHOWDOWN_DIR``) is left as it is: its
    formats then lack the designed-move formats.
    """
    source = JS_DIR / "mod"
    files = [path for path in source.rglob("*.js") if path.is_file()]
    stale = []
    for path in files:
        target = package / "dist" / path.relative_to(source)
        if not target.exists() or target.read_bytes() != path.read_bytes():
            stale.append((path, target))
    if not stale:
        return
    try:
        with file_lock(package.parent / ".pokegym-mod.lock"):
            for path, target in stale:
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                tmp.write_bytes(path.read_bytes())
                os.replace(tmp, target)
    except OSError:
        if not os.environ.get("POKEGYM_SHOWDOWN_DIR"):
            raise


def is_installed() -> bool:
    if os.environ.get("POKEGYM_SHOWDOWN_DIR"):
        return True
    return (install_dir() / _MARKER).exists()


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) across processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install_showdown(*, force: bool = False, quiet: bool = False, timeout: float = 900.0) -> Path:
    """Run ``npm ci --omit=optional`` for the pinned tree (once) and write the server config.

    Returns:
        The install folder (holding ``node_modules/``).

    Raises:
        NodeNotFoundError: Node.js or npm is missing.
        ShowdownInstallError: npm failed; its output is in the message.
    """
    info = find_node()
    if info.npm is None:
        raise NodeNotFoundError(
            "npm was not found next to Node.js; it is needed once to install Pokémon "
            "Showdown. Install npm (`apt-get install npm`) or set POKEGYM_SHOWDOWN_DIR."
        )
    target = install_dir()
    with file_lock(target.parent / f"{target.name}.lock"):
        if (target / _MARKER).exists() and not force:
            return target
        if not quiet:
            print(
                f"pokegym: installing Pokémon Showdown {pinned_version()} with npm into "
                f"{target} (one time, usually under a minute)...",
                file=sys.stderr,
                flush=True,
            )
        staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
        try:
            for name in ("package.json", "package-lock.json"):
                shutil.copy(JS_DIR / name, staging / name)
            cmd = [
                info.npm,
                "ci",
                "--omit=optional",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ]
            try:
                proc = subprocess.run(
                    cmd, cwd=staging, capture_output=True, text=True, timeout=timeout
                )
            except subprocess.TimeoutExpired as exc:
                raise ShowdownInstallError(
                    f"`npm ci` did not finish within {timeout:.0f} s. Check that the npm "
                    "registry is reachable (npm config get registry)."
                ) from exc
            if proc.returncode != 0:
                tail = (proc.stdout + proc.stderr).strip()[-3000:]
                raise ShowdownInstallError(
                    f"`npm ci` failed with exit code {proc.returncode} in {staging}:\n{tail}\n"
                    "Check network access to the npm registry, or install pokemon-showdown "
                    "yourself and set POKEGYM_SHOWDOWN_DIR to its folder."
                )
            _prepare_server_tree(staging / "node_modules" / "pokemon-showdown")
            (staging / _MARKER).write_text(pinned_version())
            if target.exists():
                shutil.rmtree(target)
            staging.chmod(0o755)
            staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    if not quiet:
        print("pokegym: Pokémon Showdown is installed.", file=sys.stderr, flush=True)
    return target


def _prepare_server_tree(package: Path) -> None:
    """Create what ``pokemon-showdown start`` expects to find and write our config."""
    for sub in ("logs/repl", "logs/chat", "logs/modlog", "config/chat-plugins", "databases"):
        (package / sub).mkdir(parents=True, exist_ok=True)
    (package / "config" / "config.js").write_text(SERVER_CONFIG)
