"""A collection on disk: the columns of its rows, its shards, and reading it back.

``DIR/collection.json`` (schema version, format, agents, seed, encoder sizes) and
``DIR/shard-<first>-<last>-<count>.parquet`` files, each written to a temporary name and
renamed, so a shard is either whole or absent; each shard's metadata holds the schema
version and its battle ids. :mod:`train.collect` writes them, :mod:`train.dataset` and
the benchmarks read them. Shards of schema version 1 (before the search columns) are
still read, with those columns null.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from train.collection_format import (
    LOOKAHEAD_FEATURES,
    MANIFEST,
    READABLE_VERSIONS,
    SCHEMA,
    SCHEMA_VERSION,
    arrow_schema,
    write_shard,
)

__all__ = [
    "LOOKAHEAD_FEATURES",
    "MANIFEST",
    "READABLE_VERSIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "CollectionError",
    "arrow_schema",
    "collected_battles",
    "read_collection",
    "shard_paths",
    "write_shard",
]


class CollectionError(Exception):
    """The output folder holds a different collection or unreadable files."""


def shard_paths(folder: str | Path) -> list[Path]:
    return sorted(Path(folder).glob("shard-*.parquet"))


def collected_battles(folder: str | Path, readable: Sequence[int] = (SCHEMA_VERSION,)) -> set[int]:
    """Battle ids in the folder's shards (read from each shard's metadata); a shard of a
    schema version not in ``readable`` is an error."""
    ids: set[int] = set()
    for path, version, battle_ids in _shard_metadata(folder):
        if version not in readable:
            raise CollectionError(
                f"{path} has schema version {version}; this code writes {SCHEMA_VERSION}. "
                "Collect into a new folder."
            )
        ids.update(battle_ids)
    return ids


def _shard_metadata(folder: str | Path) -> list[tuple[Path, int | str, list[int]]]:
    """(path, schema version, battle ids) of every shard in the folder."""
    import pyarrow.parquet as pq

    out: list[tuple[Path, int | str, list[int]]] = []
    for path in shard_paths(folder):
        try:
            metadata = pq.read_schema(path).metadata or {}
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise CollectionError(
                f"The shard {path} is unreadable ({exc}). Move it out of the folder and run "
                "the same command again: its battles will be played again."
            ) from exc
        text = metadata.get(b"pokegym.schema_version", b"?").decode()
        version: int | str = int(text) if text.isdigit() else text
        out.append((path, version, json.loads(metadata.get(b"pokegym.battle_ids", b"[]"))))
    return out


def read_collection(folder: str | Path, columns: Iterable[str] | None = None) -> Any:
    """All shards of a collection as one pyarrow Table (optionally only ``columns``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = shard_paths(folder)
    if not paths:
        raise CollectionError(
            f"No shard-*.parquet files in {folder}: collect battles first with "
            f"`pokegym collect --agents abyssal,one_step --battles 200 --out {folder}`."
        )
    collected_battles(folder, READABLE_VERSIONS)  # checks versions
    schema = arrow_schema()
    wanted = list(columns) if columns is not None else schema.names
    tables = []
    for path in paths:
        present = set(pq.read_schema(path).names)
        table = pq.read_table(path, columns=[c for c in wanted if c in present])
        for name in wanted:  # a column an older schema version lacks: null
            if name not in present:
                kind = schema.field(name).type
                table = table.append_column(name, pa.nulls(table.num_rows, type=kind))
        tables.append(table.select(wanted))
    return pa.concat_tables(tables)
