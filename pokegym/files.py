"""Files written so that a reader sees the old content or the new one, never half of each.

Libraries, caches, replays and checkpoints are written to a temporary file in the same
folder, flushed to disk and renamed over the target (a rename within one file system
is atomic). A crash or an interrupt leaves the old file and no temporary behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write(path: str | Path, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Replace ``path`` with ``data`` atomically (creating its folder); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode(encoding) if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def atomic_write_json(path: str | Path, value: Any, **dump_options: Any) -> Path:
    """:func:`atomic_write` of ``json.dumps(value, **dump_options)``."""
    return atomic_write(path, json.dumps(value, **dump_options))


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes (hex), read in pieces of 4 MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()
