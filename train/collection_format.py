"""A collection of decisions on disk, as far as writing it goes: the columns of its rows,
the schema version, the manifest's file name, and one shard written whole or not at all.
Shared by what writes collections (``pokegym collect`` in the training layer,
``pokegym replays export``); the training layer reads them back (``train.collection``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pokegym.actions import N_ACTIONS
from pokegym.errors import PokegymError
from pokegym.observation import OBSERVATION_SIZE, OBSERVATION_VERSION
from policies.core.encoding import STATE_ENCODER_VERSION, STATE_FEATURES
from policies.core.lookahead import LOOKAHEAD_FEATURES

__all__ = [
    "LOOKAHEAD_FEATURES",
    "MANIFEST",
    "READABLE_VERSIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "arrow_schema",
    "encodings",
    "write_shard",
]

SCHEMA_VERSION = 2
#: Schema versions read_collection still reads (older ones lack some columns: null there).
READABLE_VERSIONS = (1, 2)
MANIFEST = "collection.json"

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


def encodings() -> dict[str, Any]:
    """The manifest's description of what a collection's rows hold: the schema version,
    the encoders' versions and sizes, and the columns with their types and meanings
    (a collection is read only by code that agrees with all of them)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "state_encoder_version": STATE_ENCODER_VERSION,
        "state_features": STATE_FEATURES,
        "observation_version": OBSERVATION_VERSION,
        "observation_features": OBSERVATION_SIZE,
        "n_actions": N_ACTIONS,
        "lookahead_features": LOOKAHEAD_FEATURES,
        "columns": [{"name": n, "type": t, "description": d} for n, t, d in SCHEMA],
    }


def _pyarrow() -> Any:
    """pyarrow, or an error that says how to install it."""
    try:
        import pyarrow as pa  # pyarrow: optional, heavy
        import pyarrow.parquet  # pyarrow: optional, heavy
    except ImportError:
        raise PokegymError(
            "Writing a collection needs pyarrow: pip install 'pokegym[distill]' (or pyarrow)."
        ) from None
    return pa


def arrow_schema() -> Any:
    """The shards' Arrow schema, with the schema version in its metadata."""
    pa = _pyarrow()

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
    pa = _pyarrow()
    pq = pa.parquet

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
