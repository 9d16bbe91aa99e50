"""The rows ``pokegym distill`` trains on: one or several ``pokegym collect`` folders read
into arrays, their value targets (Monte-Carlo or TD(λ), see :mod:`train.distill`) and the
held-out split, whole battles at a time."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pokegym.actions import N_ACTIONS
from pokegym.observation import OBSERVATION_SIZE
from policies.value_net import STATE_ENCODER_VERSION, STATE_FEATURES
from train.collection import CollectionError, read_collection

__all__ = [
    "FOLDER_SHIFT",
    "Dataset",
    "DatasetConfig",
    "data_folders",
    "load_dataset",
    "split_battles",
    "td_lambda_targets",
]


class DatasetConfig(Protocol):
    """What reading a dataset needs of a training run's configuration
    (:class:`train.distill.DistillConfig` has it)."""

    @property
    def data(self) -> str:
        """Collection folders, comma-separated."""
        ...

    @property
    def targets(self) -> str:
        """Value targets: ``mc`` or ``td``."""
        ...

    @property
    def td_lambda(self) -> float: ...

    @property
    def policy_head(self) -> bool:
        """Read the observations, masks and actions too."""
        ...

    @property
    def policy_target(self) -> str:
        """``search``: read the search's root visit shares too."""
        ...


@dataclass
class Dataset:
    states: np.ndarray  # [n, D]
    outcome: np.ndarray  # [n]
    target: np.ndarray  # [n]
    heuristic: np.ndarray  # [n]
    battle: np.ndarray  # [n]
    labels: list[str]
    llm: np.ndarray  # [n] (nan where absent)
    observations: np.ndarray | None = None
    masks: np.ndarray | None = None
    actions: np.ndarray | None = None
    leaf_states: np.ndarray | None = None  # extra (state, llm score) pairs
    leaf_scores: np.ndarray | None = None
    leaf_battle: np.ndarray | None = None
    search: np.ndarray | None = None  # [n, N_ACTIONS] root visit shares (zero rows: none)


def _matrix(column: Any, width: int) -> np.ndarray:
    values = column.combine_chunks().values.to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.float32).reshape(-1, width)


def data_folders(data: str) -> list[str]:
    """The collection folders named by ``--data`` (comma-separated), each once."""
    folders = list(dict.fromkeys(part.strip() for part in str(data).split(",") if part.strip()))
    if not folders:
        raise ValueError(
            "--data names no folder: give a `pokegym collect` folder (or several, comma-separated)"
        )
    return folders


#: Battle ids of the k-th pooled collection are offset by ``k << FOLDER_SHIFT`` so that
#: battles of different collections never share an id (the split is by battle id).
FOLDER_SHIFT = 40


def load_dataset(config: DatasetConfig) -> Dataset:
    """Read the columns that training needs from every collection folder and pool them.

    Each folder is checked on its own (manifest, state encoding); battle ids are made
    unique across folders so the held-out split still keeps whole battles together.
    """
    folders = data_folders(config.data)
    parts = [
        _load_folder(folder, config, offset=k << FOLDER_SHIFT) for k, folder in enumerate(folders)
    ]
    if len(parts) == 1:
        return parts[0]
    return _concatenate(parts)


def _concatenate(parts: list[Dataset]) -> Dataset:
    def cat(name: str) -> np.ndarray | None:
        arrays = [getattr(p, name) for p in parts]
        present = [a for a in arrays if a is not None]
        return np.concatenate(present) if present else None

    data = Dataset(
        cat("states"), cat("outcome"), cat("target"), cat("heuristic"), cat("battle"),
        [label for p in parts for label in p.labels], cat("llm"),
    )  # fmt: skip
    data.observations, data.masks, data.actions = cat("observations"), cat("masks"), cat("actions")
    data.leaf_states, data.leaf_scores = cat("leaf_states"), cat("leaf_scores")
    data.leaf_battle = cat("leaf_battle")
    data.search = cat("search")
    return data


def _load_folder(folder: str, config: DatasetConfig, offset: int = 0) -> Dataset:
    """One collection folder's rows, battle ids shifted by ``offset``."""
    manifest_path = Path(folder) / "collection.json"
    if not manifest_path.exists():
        raise CollectionError(
            f"{folder} has no collection.json: point --data at a `pokegym collect` folder."
        )
    manifest = json.loads(manifest_path.read_text())

    if (manifest.get("state_encoder_version") != STATE_ENCODER_VERSION
            or manifest.get("state_features") != STATE_FEATURES):  # fmt: skip
        raise CollectionError(
            f"{folder} was collected with state encoding v"
            f"{manifest.get('state_encoder_version')}; this code trains v{STATE_ENCODER_VERSION}."
            " Collect again."
        )
    columns = ["battle_id", "side", "step", "state", "outcome", "heuristic_value",
               "action_label", "llm_value", "llm_leaf_states", "llm_leaf_scores"]  # fmt: skip
    if config.policy_head:
        columns += ["observation", "action_mask", "action"]
    if config.policy_head and config.policy_target == "search":
        columns.append("search_policy")
    table = read_collection(folder, columns)
    n = table.num_rows
    if n == 0:
        raise CollectionError(f"{folder} holds no decisions.")
    states = _matrix(table.column("state"), STATE_FEATURES)
    outcome = table.column("outcome").to_numpy().astype(np.float32)
    heuristic = table.column("heuristic_value").to_numpy().astype(np.float32)
    battle = table.column("battle_id").to_numpy().astype(np.int64) + offset
    side = table.column("side").to_numpy().astype(np.int64)
    step = table.column("step").to_numpy().astype(np.int64)
    llm = np.asarray(table.column("llm_value").to_numpy(zero_copy_only=False), dtype=np.float32)
    target = outcome.copy()
    if config.targets == "td":
        target = td_lambda_targets(battle, side, step, heuristic, outcome, config.td_lambda)
    elif config.targets != "mc":
        raise ValueError(f"--targets is 'mc' or 'td', got {config.targets!r}")
    data = Dataset(states, outcome, target, heuristic, battle,
                   table.column("action_label").to_pylist(), llm)  # fmt: skip
    leaf_states: list[np.ndarray] = []
    leaf_scores: list[float] = []
    leaf_battle: list[int] = []
    for i, (leaves, scores) in enumerate(zip(table.column("llm_leaf_states").to_pylist(),
                                             table.column("llm_leaf_scores").to_pylist(),
                                             strict=True)):  # fmt: skip
        if leaves and scores:
            for leaf, score in zip(leaves, scores, strict=False):
                leaf_states.append(np.asarray(leaf, dtype=np.float32))
                leaf_scores.append(float(score))
                leaf_battle.append(int(battle[i]))
    if leaf_states:
        data.leaf_states = np.stack(leaf_states)
        data.leaf_scores = np.asarray(leaf_scores, dtype=np.float32)
        data.leaf_battle = np.asarray(leaf_battle, dtype=np.int64)
    if config.policy_head:
        data.observations = _matrix(table.column("observation"), OBSERVATION_SIZE)
        data.masks = np.asarray(
            table.column("action_mask").combine_chunks().values.to_numpy(), dtype=np.int8
        ).reshape(n, -1)
        data.actions = table.column("action").to_numpy().astype(np.int64)
        if config.policy_target == "search":
            shares = table.column("search_policy").to_pylist()
            data.search = np.zeros((n, N_ACTIONS), dtype=np.float32)
            for i, row in enumerate(shares):
                if row is not None:
                    data.search[i] = row
    return data


def td_lambda_targets(
    battle: np.ndarray,
    side: np.ndarray,
    step: np.ndarray,
    teacher: np.ndarray,
    outcome: np.ndarray,
    lam: float,
) -> np.ndarray:
    """λ-returns per row (see the module docstring), rows grouped by (battle, side)."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError("td_lambda is in [0, 1]")
    target = np.empty_like(outcome)
    order = np.lexsort((step, side, battle))
    start = 0
    n = len(order)
    while start < n:
        end = start
        key = (battle[order[start]], side[order[start]])
        while end < n and (battle[order[end]], side[order[end]]) == key:
            end += 1
        rows = order[start:end]
        g = float(outcome[rows[-1]])
        target[rows[-1]] = g
        for j in range(len(rows) - 2, -1, -1):
            g = (1.0 - lam) * float(teacher[rows[j + 1]]) + lam * g
            target[rows[j]] = g
        start = end
    return target


def split_battles(battles: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """A boolean held-out mask, whole battles at a time."""
    unique = np.unique(battles)
    if len(unique) < 2:
        raise ValueError("need at least two battles to hold some out; collect more")
    rng = np.random.default_rng(seed)
    count = min(len(unique) - 1, max(1, round(fraction * len(unique))))
    held = rng.permutation(unique)[:count]
    return np.isin(battles, held)
