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
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
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

SCHEMA_VERSION = 2
#: Schema versions read_collection still reads (older ones lack some columns: null there).
READABLE_VERSIONS = (1, 2)
MANIFEST = "collection.json"
LOOKAHEAD_FEATURES = 10

# (column, arrow type name, description): the shard schema, in order.
SCHEMA: list[tuple[str, str, str]] = [
    ("battle_id", "int64", "battle index k in the collection (its seeds derive from it)"),
    ("battle_seed", "int64", "Showdown battle seed"),
    ("format", "string", "Showdown format id"),
    ("side", "int8", "0 for p1, 1 for p2: whose decision"),
    ("agent", "string", "the deciding agent's spec"),
    ("opponent", "string", "the other agent's spec"),
    ("turn", "int32", "battle turn of the decision"),
    ("step", "int32", "index of the decision among this side's decisions"),
    ("state", "list<float32>", "world-model state encoding (policies.value_net)"),
    ("observation", "list<float32>", "the environment's observation encoding"),
    ("action_mask", "list<int8>", "legal actions in the environment's action layout"),
    ("action", "int16", "the action taken in that layout (-1 if it has no index)"),
    ("legal_labels", "list<string>", "legal world-model actions as labels"),
    ("action_label", "string", "the action taken as a label"),
    ("lookahead", "list<float32>", f"{LOOKAHEAD_FEATURES} one-step lookahead features"),
    ("heuristic_value", "float32", "the hand-written evaluator's win chance of the state"),
    ("llm_value", "float32", "the LLM's score of the state (null: none reported)"),
    ("llm_proposals", "list<string>", "actions the LLM proposed (null: none reported)"),
    ("llm_leaf_states", "list<list<float32>>", "encodings of leaf states the LLM scored"),
    ("llm_leaf_scores", "list<float32>", "the LLM's scores of those leaves"),
    (
        "search_policy",
        "list<float32>",
        "the search's root visit shares over the action layout (null: none reported)",
    ),
    ("search_value", "float32", "the search's win chance of the state (null: none reported)"),
    ("outcome", "float32", "final result for this side: 1 win, 0 loss, 0.5 tie/truncated"),
    ("battle_turns", "int32", "turns the battle lasted"),
    ("truncated", "bool", "the battle hit the turn limit"),
]


class CollectionError(Exception):
    """The output folder holds a different collection or unreadable files."""


def arrow_schema() -> Any:
    import pyarrow as pa

    def parse(name: str) -> Any:
        if name.startswith("list<") and name.endswith(">"):
            return pa.list_(parse(name[5:-1]))
        return {"int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(),
                "int64": pa.int64(), "float32": pa.float32(), "string": pa.string(),
                "bool": pa.bool_()}[name]  # fmt: skip

    return pa.schema(
        [pa.field(name, parse(kind)) for name, kind, _ in SCHEMA],
        metadata={b"pokegym.schema_version": str(SCHEMA_VERSION).encode()},
    )


def write_shard(out: Path, battle_ids: Sequence[int], rows: list[dict[str, Any]]) -> Path:
    """Write the rows of finished battles as one shard (atomically)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema()
    columns: dict[str, list[Any]] = {name: [] for name, _, _ in SCHEMA}
    for row in rows:
        for name in columns:
            value = row.get(name)
            if isinstance(value, np.ndarray):
                value = value.tolist()
            elif isinstance(value, list) and value and isinstance(value[0], np.ndarray):
                value = [v.tolist() for v in value]
            columns[name].append(value)
    table = pa.Table.from_pydict(columns, schema=schema)
    name = f"shard-{min(battle_ids):07d}-{max(battle_ids):07d}-{len(battle_ids):04d}.parquet"
    ids_meta = json.dumps(sorted(int(i) for i in battle_ids)).encode()
    table = table.replace_schema_metadata({**schema.metadata, b"pokegym.battle_ids": ids_meta})
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".shard-", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, out / name)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out / name


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
