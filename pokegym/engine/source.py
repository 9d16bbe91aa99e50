"""poke-engine's pinned source archive: found on pip's package index, checked against its
sha256, unpacked, and (for the build on Debian's crates) patched.

PyPI ships poke-engine as an sdist only, and ``pip download`` cannot fetch it on a
machine without a crate registry (pip prepares the metadata through maturin, which asks
cargo). So the archive is taken straight from the index's PEP 503 page: the index pip
is configured with (``pip config list``; PyPI's by default) and its extra indexes,
the file whose name and sha256 are pinned here.
"""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pokegym.errors import EngineBuildError
from pokegym.files import file_sha256
from pokegym.showdown.install import cache_home

PROJECT = "poke-engine"
VERSION = "0.0.48"
SDIST_NAME = f"poke_engine-{VERSION}.tar.gz"
SDIST_SHA256 = "070010686f2aedff11e25137e696e301ccd80fd57c805d255464067fc905ca12"
DEFAULT_INDEX = "https://pypi.org/simple"
# A copy of the archive to use instead of the index (checked against the same sha256).
SDIST_ENV = "POKEGYM_POKE_ENGINE_SDIST"
PATCHES = Path(__file__).resolve().parent / "patches"
# The port to Debian's crates (the build without a crate registry only).
PATCH = PATCHES / f"poke-engine-{VERSION}-debian-crates.patch"
# ``mcts_with_options``: the MCTS with a distribution for side two's root move and weights
# on each side's stat boosts in the evaluation (every build; the engine agent's
# ``opponent=prior``, ``boost_value`` and ``opponent_boost_value``).
SEARCH_PATCH = PATCHES / f"poke-engine-{VERSION}-search-options.patch"

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    """Log nothing (the default ``log``)."""


def engine_home() -> Path:
    """``$POKEGYM_HOME/poke-engine``: the archive, the wheels, the build logs."""
    return cache_home() / "poke-engine"


# ------------------------------------------------------------------------ the index
def index_urls() -> list[str]:
    """pip's index and extra indexes, as ``pip config list`` reports them (the
    environment variables included), the index first; PyPI's when none is set."""
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True, text=True, timeout=60, check=False,
        ).stdout  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        listed = ""
    return parse_pip_config(listed)


def parse_pip_config(listed: str) -> list[str]:
    """The indexes in ``pip config list`` output; later lines override earlier ones, as
    pip loads its files (global, user, site) and then the environment."""
    values: dict[str, str] = {}
    for line in listed.splitlines():
        match = re.fullmatch(r"[^.]*\.(index-url|extra-index-url)='(.*)'", line.strip())
        if match:
            values[match.group(1)] = match.group(2)
    main = values.get("index-url", "").strip() or DEFAULT_INDEX
    return [main, *values.get("extra-index-url", "").split()]


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [value for name, value in attrs if name == "href" and value]


def _read_url(url: str, timeout: float = 60.0) -> bytes:
    """The body at ``url``; a ``file:`` folder is read as its ``index.html``."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        path = Path(urllib.request.url2pathname(parsed.path))
        return (path / "index.html" if path.is_dir() else path).read_bytes()
    request = urllib.request.Request(url, headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return bytes(response.read())


def sdist_link(page_url: str, page: str) -> str | None:
    """The pinned archive's URL on a PEP 503 project page, or None. A link whose
    ``#sha256=`` differs from the pin is not it."""
    links = _Links()
    links.feed(page)
    for href in links.hrefs:
        target, _, fragment = href.partition("#")
        if urllib.parse.unquote(target.rsplit("/", 1)[-1]) != SDIST_NAME:
            continue
        digest = urllib.parse.parse_qs(fragment).get("sha256")
        if digest and digest[0].lower() != SDIST_SHA256:
            continue
        return urllib.parse.urljoin(page_url, target)
    return None


def fetch_sdist(*, log: Log = _quiet) -> Path:
    """The pinned archive in the cache: on first use copied from ``$POKEGYM_POKE_ENGINE_SDIST``
    or downloaded from the first of pip's indexes that lists it; always checked against
    the pinned sha256.

    Raises:
        EngineBuildError: no index lists it, or a file with another sha256 was found.
    """
    folder = engine_home() / "sdist"
    path = folder / SDIST_NAME
    if path.is_file() and file_sha256(path) == SDIST_SHA256:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        got = Path(tmp) / SDIST_NAME
        local = os.environ.get(SDIST_ENV)
        if local:
            shutil.copyfile(local, got)
            origin = local
        else:
            origin = _download(got, log=log)
        digest = file_sha256(got)
        if digest != SDIST_SHA256:
            raise EngineBuildError(
                f"{SDIST_NAME} from {origin} has sha256 {digest}, expected {SDIST_SHA256}; "
                "not used."
            )
        os.replace(got, path)
    return path


def _download(dest: Path, *, log: Log) -> str:
    tried = []
    for index in index_urls():
        page_url = f"{index.rstrip('/')}/{PROJECT}/"
        try:
            url = sdist_link(page_url, _read_url(page_url).decode("utf-8", "replace"))
        except (OSError, urllib.error.URLError, ValueError) as exc:
            tried.append(f"{page_url}: {exc}")
            continue
        if url is None:
            tried.append(f"{page_url}: no {SDIST_NAME} with the pinned sha256")
            continue
        log(f"downloading {url}")
        try:
            dest.write_bytes(_read_url(url, timeout=300.0))
        except (OSError, urllib.error.URLError, ValueError) as exc:
            tried.append(f"{url}: {exc}")
            continue
        return url
    raise EngineBuildError(
        f"Could not download {SDIST_NAME} (sha256 {SDIST_SHA256[:16]}...) from pip's "
        f"indexes ({'; '.join(tried)}). Download it yourself and set {SDIST_ENV} to the file."
    )


def unpack(sdist: Path, dest: Path) -> Path:
    """Extract the archive into ``dest``; returns its top folder."""
    with tarfile.open(sdist) as archive:
        archive.extractall(dest, filter="data")
    root = dest / f"poke_engine-{VERSION}"
    if not (root / "pyproject.toml").is_file():
        raise EngineBuildError(f"{sdist} does not hold poke_engine-{VERSION}/pyproject.toml")
    return root


# ------------------------------------------------------------------------ the patch
@dataclass(frozen=True)
class Hunk:
    old_start: int  # 1-based line of the first old line
    old: tuple[str, ...]
    new: tuple[str, ...]


@dataclass(frozen=True)
class FilePatch:
    path: str  # relative to the tree, the ``b/`` prefix stripped
    hunks: tuple[Hunk, ...]


_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_patch(text: str) -> list[FilePatch]:
    """The files and hunks of a unified diff (text before the first ``---`` is a comment)."""
    lines = text.splitlines()
    files: list[FilePatch] = []
    hunks: list[Hunk] = []
    path = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if path:
                files.append(FilePatch(path, tuple(hunks)))
            path = lines[i + 1][4:].split("\t")[0].strip().removeprefix("b/")
            hunks = []
            i += 2
            continue
        match = _HUNK.match(line)
        if match and path:
            old_len = int(match.group(2) or 1)
            new_len = int(match.group(4) or 1)
            old: list[str] = []
            new: list[str] = []
            i += 1
            while len(old) < old_len or len(new) < new_len:
                if i >= len(lines):
                    raise EngineBuildError(f"the patch ends inside a hunk of {path}")
                body, tag = lines[i][1:], lines[i][:1]
                if tag in (" ", ""):
                    old.append(body)
                    new.append(body)
                elif tag == "-":
                    old.append(body)
                elif tag == "+":
                    new.append(body)
                elif tag != "\\":  # "\ No newline at end of file"
                    raise EngineBuildError(f"unexpected line in a hunk of {path}: {lines[i]!r}")
                i += 1
            hunks.append(Hunk(int(match.group(1)), tuple(old), tuple(new)))
            continue
        i += 1
    if path:
        files.append(FilePatch(path, tuple(hunks)))
    return files


def apply_patch(tree: Path, text: str) -> list[str]:
    """Apply a unified diff to ``tree`` (paths ``a/...``/``b/...``); every hunk must
    match its context exactly (near its line number). Returns the patched files.

    Raises:
        EngineBuildError: a file is missing or a hunk does not match; nothing is written.
    """
    patched: dict[Path, str] = {}
    for file in parse_patch(text):
        target = tree / file.path
        if not target.is_file():
            raise EngineBuildError(f"the patch names {file.path}, which {tree} lacks")
        content = target.read_text()
        lines = content.splitlines()
        shift = 0
        for hunk in file.hunks:
            at = _find(lines, hunk, hunk.old_start - 1 + shift)
            if at is None:
                raise EngineBuildError(
                    f"the patch does not apply to {file.path}: the hunk at line "
                    f"{hunk.old_start} does not match (is this poke-engine {VERSION}?)"
                )
            lines[at : at + len(hunk.old)] = hunk.new
            shift = at - (hunk.old_start - 1) + len(hunk.new) - len(hunk.old)
        patched[target] = "\n".join(lines) + ("\n" if content.endswith("\n") else "")
    for target, new_content in patched.items():
        target.write_text(new_content)
    return [str(path.relative_to(tree)) for path in patched]


def _find(lines: list[str], hunk: Hunk, near: int) -> int | None:
    """The index where the hunk's old lines start, searching outwards from ``near``."""
    size = len(hunk.old)
    for distance in range(len(lines) + 1):
        for at in (near - distance, near + distance) if distance else (near,):
            if 0 <= at <= len(lines) - size and tuple(lines[at : at + size]) == hunk.old:
                return at
    return None
