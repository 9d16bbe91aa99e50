"""The distilled value network: a small MLP over the encoding of world-model states.

The network reads :class:`~policies.core.encoding.StateEncoder`'s fixed-length encoding of a
world-model state (its layout: :func:`~policies.core.encoding.state_layout_table`) and
answers side 0's chance to win, as a correction to the hand-written evaluator's logit
(and, optionally, a language-model score head and a policy head over the observation).

Checkpoints are a ``model.safetensors`` file plus ``config.json`` (no pickles anywhere).
Inference runs in NumPy, so playing the ``distilled`` agent does not import torch; the
torch module (:func:`torch_network`) is only built for training.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file, save_file

from pokegym.errors import PokegymError
from pokegym.files import atomic_write_json
from pokegym.world.state import BattleState
from pokegym.world.transition import Action
from policies.core.encoding import (
    HEURISTIC_INDEX,
    STATE_ENCODER_VERSION,
    STATE_FEATURES,
    StateEncoder,
    state_layout_table,
)

CHECKPOINT_FORMAT = "pokegym-distilled"
CHECKPOINT_VERSION = 1


def action_label(state: BattleState, side: int, action: Action) -> str:
    """A name for a world-model action that means the same thing in every state:
    ``move:<id>``, ``move:<id>:tera`` or ``switch:<species>``."""
    kind, arg, tera = action
    if kind == "switch":
        return f"switch:{state.sides[side].mons[int(arg)].species}"  # type: ignore[arg-type]
    if kind == "move":
        return f"move:{arg}:tera" if tera else f"move:{arg}"
    return "pass"


# -------------------------------------------------------------------- network
@dataclass
class NetworkConfig:
    """The architecture (saved in ``config.json`` next to the weights)."""

    state_features: int = STATE_FEATURES
    hidden: tuple[int, ...] = (128, 64)
    llm_head: bool = False
    observation_features: int = 0  # 0: no policy-prior head
    policy_hidden: int = 128
    n_actions: int = 15
    state_encoder_version: int = STATE_ENCODER_VERSION
    observation_version: int = 0
    residual: bool = True  # the win logit corrects the hand-written evaluator's logit
    dropout: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "hidden": list(self.hidden)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NetworkConfig:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["hidden"] = tuple(known.get("hidden", (128, 64)))
        return cls(**known)


def torch_network(config: NetworkConfig) -> Any:
    """The torch module with the parameter names the checkpoint uses (imports torch)."""
    import torch
    from torch import nn

    class DistilledNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("value_mean", torch.zeros(config.state_features))
            self.register_buffer("value_std", torch.ones(config.state_features))
            layers: list[nn.Module] = []
            width = config.state_features
            for hidden in config.hidden:
                layers += [nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(config.dropout)]
                width = hidden
            self.value_trunk = nn.Sequential(*layers)
            self.value_head = nn.Linear(width, 1)
            # Residual mode: logit = scale * logit(hand-written value) + head(trunk); the head
            # starts at zero, so training starts from the hand-written evaluator.
            self.value_scale = nn.Parameter(torch.ones(1))
            if config.residual:
                nn.init.zeros_(self.value_head.weight)
                nn.init.zeros_(self.value_head.bias)
            self.llm_head = nn.Linear(width, 1) if config.llm_head else None
            self.policy: nn.Module | None = None
            if config.observation_features:
                self.register_buffer("policy_mean", torch.zeros(config.observation_features))
                self.register_buffer("policy_std", torch.ones(config.observation_features))
                self.policy = nn.Sequential(
                    nn.Linear(config.observation_features, config.policy_hidden), nn.ReLU(),
                    nn.Linear(config.policy_hidden, config.n_actions),
                )  # fmt: skip

        def forward(self, states: Any) -> tuple[Any, Any]:
            """(win logit, LLM-score logit or None) per state row."""
            hidden = self.value_trunk((states - self.value_mean) / self.value_std)
            win = self.value_head(hidden).squeeze(-1)
            if config.residual:
                h = states[:, HEURISTIC_INDEX].clamp(1e-4, 1 - 1e-4)
                win = win + self.value_scale * torch.log(h / (1 - h))
            llm = self.llm_head(hidden).squeeze(-1) if self.llm_head is not None else None
            return win, llm

        def policy_logits(self, observations: Any) -> Any:
            assert self.policy is not None
            return self.policy((observations - self.policy_mean) / self.policy_std)

    return DistilledNetwork()


class CheckpointError(PokegymError):
    """A checkpoint is missing, corrupt or was made for another encoding."""


@dataclass
class DistilledNetwork:
    """NumPy inference over a checkpoint's weights (see :func:`load_checkpoint`)."""

    config: NetworkConfig
    weights: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        w = self.weights
        self._mean = w["value_mean"].astype(np.float32)
        self._inv_std = (1.0 / w["value_std"]).astype(np.float32)
        self._layers = []
        for i in range(len(self.config.hidden)):
            self._layers.append((w[f"value_trunk.{3 * i}.weight"].T.copy(),
                                 w[f"value_trunk.{3 * i}.bias"]))  # fmt: skip
        self._scale = float(w["value_scale"][0]) if self.config.residual else 0.0
        self._head = (w["value_head.weight"].T.copy(), w["value_head.bias"])
        self._llm = (
            (w["llm_head.weight"].T.copy(), w["llm_head.bias"]) if self.config.llm_head else None
        )
        self._policy = None
        if self.config.observation_features:
            self._policy = (
                w["policy_mean"], 1.0 / w["policy_std"],
                w["policy.0.weight"].T.copy(), w["policy.0.bias"],
                w["policy.2.weight"].T.copy(), w["policy.2.bias"],
            )  # fmt: skip

    def _hidden(self, features: np.ndarray) -> np.ndarray:
        x = (features - self._mean) * self._inv_std
        for weight, bias in self._layers:
            x = np.maximum(x @ weight + bias, 0.0)
        return x

    def embed(self, features: np.ndarray) -> np.ndarray:
        """The trunk's last hidden layer per row: the state embedding of the memory."""
        return np.ascontiguousarray(self._hidden(np.atleast_2d(features)), dtype=np.float32)

    def win_probability(self, features: np.ndarray) -> np.ndarray:
        """Side 0's chance to win per row of state features."""
        features = np.atleast_2d(features)
        hidden = self._hidden(features)
        logits = (hidden @ self._head[0] + self._head[1])[:, 0]
        if self._scale:
            h = np.clip(features[:, HEURISTIC_INDEX], 1e-4, 1 - 1e-4)
            logits = logits + self._scale * np.log(h / (1 - h))
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))

    def win_probability_one(self, features: np.ndarray) -> float:
        """:meth:`win_probability` of one state's features (a 1-D vector), for a search
        that scores one leaf at a time: vector products instead of a batch's matrix
        products, and the scalar tail in Python floats, faster per state (docs/search.md,
        "Speed").
        Equal to the batch's value up to float32 rounding (the products sum in another
        order)."""
        x = (features - self._mean) * self._inv_std
        for weight, bias in self._layers:
            x = x @ weight
            x += bias
            np.maximum(x, 0.0, out=x)
        logit = float(x @ self._head[0][:, 0]) + float(self._head[1][0])
        if self._scale:
            h = min(max(float(features[HEURISTIC_INDEX]), 1e-4), 1 - 1e-4)
            logit += self._scale * math.log(h / (1 - h))
        return 1.0 / (1.0 + math.exp(-min(max(logit, -30.0), 30.0)))

    def llm_score(self, features: np.ndarray) -> np.ndarray | None:
        """The predicted LLM leaf score per row, or None without that head."""
        if self._llm is None:
            return None
        hidden = self._hidden(np.atleast_2d(features))
        logits = (hidden @ self._llm[0] + self._llm[1])[:, 0]
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))

    def policy_logits(self, observation: np.ndarray) -> np.ndarray | None:
        """Logits over the action layout, or None without the policy-prior head."""
        if self._policy is None:
            return None
        mean, inv_std, w1, b1, w2, b2 = self._policy
        x = (np.atleast_2d(observation) - mean) * inv_std
        return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2  # type: ignore[no-any-return]


def save_checkpoint(
    folder: str | Path, config: NetworkConfig, weights: dict[str, np.ndarray], meta: dict[str, Any]
) -> Path:
    """Write ``model.safetensors`` and ``config.json`` into ``folder`` (each atomically)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(fd)
    try:
        save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}, tmp)
        os.replace(tmp, folder / "model.safetensors")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    document = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION,
                "network": config.to_json(), **meta}  # fmt: skip
    atomic_write_json(folder / "config.json", document, indent=2, sort_keys=True)
    return folder


def load_checkpoint(folder: str | Path) -> DistilledNetwork:
    """Load a checkpoint folder (``model.safetensors`` + ``config.json``), never unpickling.

    Raises:
        CheckpointError: a file is missing or unreadable, or the checkpoint was made for
            another version of the state encoding (retrain with ``pokegym distill``).
    """
    folder = Path(folder)
    config_path, weights_path = folder / "config.json", folder / "model.safetensors"
    for path in (config_path, weights_path):
        if not path.is_file():
            raise CheckpointError(
                f"No {path.name} in {folder}: a distilled checkpoint is a folder with "
                "model.safetensors and config.json, as written by `pokegym distill --out`."
            )
    try:
        document = json.loads(config_path.read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{config_path} is not readable JSON ({exc}).") from exc
    if not isinstance(document, dict):
        raise CheckpointError(
            f"{config_path} holds a JSON {type(document).__name__}, not a checkpoint's "
            "configuration (an object); the folder is not a distilled checkpoint."
        )
    if document.get("format") != CHECKPOINT_FORMAT or document.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{config_path} is not a version-{CHECKPOINT_VERSION} distilled checkpoint "
            f"(format {document.get('format')!r}, version {document.get('version')!r})."
        )
    config = _network_config(document.get("network", {}), config_path)
    if config.state_encoder_version != STATE_ENCODER_VERSION:
        raise CheckpointError(
            f"{folder} was trained on state encoding v{config.state_encoder_version}; this "
            f"code encodes v{STATE_ENCODER_VERSION}. Collect again and retrain with "
            "`pokegym distill`."
        )
    if config.state_features != STATE_FEATURES:
        raise CheckpointError(
            f"{folder} expects {config.state_features} state features; the encoder gives "
            f"{STATE_FEATURES}. Retrain with `pokegym distill`."
        )
    try:
        weights = load_file(str(weights_path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(f"{weights_path} is corrupt or unreadable ({exc}).") from exc
    _check_shapes(config, weights, weights_path, config_path)
    try:
        return DistilledNetwork(config, weights, {k: v for k, v in document.items()
                                                  if k not in ("network",)})  # fmt: skip
    except KeyError as exc:
        raise CheckpointError(f"{weights_path} lacks the tensor {exc}; retrain.") from exc


def _network_config(data: Any, config_path: Path) -> NetworkConfig:
    """The ``network`` entry of a checkpoint's config.json, with every field's type checked."""
    if not isinstance(data, dict):
        raise CheckpointError(
            f'"network" in {config_path} is a JSON {type(data).__name__}, not an object of '
            "layer sizes; the file is damaged or was not written by `pokegym distill`."
        )
    defaults = NetworkConfig()
    for name, value in data.items():
        if name not in NetworkConfig.__dataclass_fields__:
            continue
        default = getattr(defaults, name)
        if isinstance(default, tuple):
            good = isinstance(value, list) and all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
            )
        elif isinstance(default, bool):
            good = isinstance(value, bool)
        elif isinstance(default, int):
            good = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:
            good = isinstance(value, int | float) and not isinstance(value, bool)
        if not good:
            kind = "a list of positive integers" if isinstance(default, tuple) else (
                type(default).__name__)  # fmt: skip
            raise CheckpointError(
                f'"network.{name}" in {config_path} is {value!r}, expected {kind}; the file is '
                "damaged or was not written by `pokegym distill`."
            )
    return NetworkConfig.from_json(data)


def _check_shapes(
    config: NetworkConfig, weights: dict[str, np.ndarray], weights_path: Path, config_path: Path
) -> None:
    """The value trunk's tensors must have the sizes config.json states."""
    widths = [config.state_features, *config.hidden]
    for i in range(len(config.hidden)):
        name = f"value_trunk.{3 * i}.weight"
        tensor = weights.get(name)
        if tensor is None:
            raise CheckpointError(
                f"{weights_path} lacks the tensor {name!r} that {config_path} describes "
                "(hidden layers do not match); retrain or restore the pair of files."
            )
        if tensor.shape != (widths[i + 1], widths[i]):
            raise CheckpointError(
                f"{weights_path}: {name} has shape {tuple(tensor.shape)}, but {config_path} "
                f"describes ({widths[i + 1]}, {widths[i]}); the two files do not belong "
                "together. Retrain or restore the pair."
            )
    if f"value_trunk.{3 * len(config.hidden)}.weight" in weights:
        raise CheckpointError(
            f"{weights_path} has more hidden layers than {config_path} describes; the two "
            "files do not belong together. Retrain or restore the pair."
        )


class EnsembleNetwork:
    """A checkpoint and the members trained beside it, averaged.

    The win probability is the mean over the members' (one network trained with another
    seed each: another held-out split, initialisation and batch order); the embedding,
    the LLM score and the policy prior are the primary checkpoint's, so an experience
    memory built for it still matches. A single network is right on average but noisy on
    single positions and the search picks the maximum over noisy values; averaging
    members lowers that noise for a few more matrix products per batch (whether it plays
    better: docs/experiments/distilled-agent.md, "Further variants").
    """

    def __init__(self, primary: DistilledNetwork, members: Sequence[DistilledNetwork]):
        self.primary = primary
        self.members = [primary, *members]
        self.config = primary.config
        self.meta = primary.meta

    def win_probability(self, features: np.ndarray) -> np.ndarray:
        values = [member.win_probability(features) for member in self.members]
        return np.mean(values, axis=0)  # type: ignore[no-any-return]

    def win_probability_one(self, features: np.ndarray) -> float:
        return sum(m.win_probability_one(features) for m in self.members) / len(self.members)

    def embed(self, features: np.ndarray) -> np.ndarray:
        return self.primary.embed(features)

    def llm_score(self, features: np.ndarray) -> np.ndarray | None:
        return self.primary.llm_score(features)

    def policy_logits(self, observation: np.ndarray) -> np.ndarray | None:
        return self.primary.policy_logits(observation)


MEMBERS_FOLDER = "members"
"""Sub-folder of a checkpoint holding further checkpoints averaged with it."""


def load_ensemble(folder: str | Path) -> DistilledNetwork | EnsembleNetwork:
    """The checkpoint in ``folder``, averaged with those under ``folder/members/`` if any.

    Raises:
        CheckpointError: as :func:`load_checkpoint`, for the checkpoint or any member
            (the message names the member's folder).
    """
    folder = Path(folder)
    primary = load_checkpoint(folder)
    member_root = folder / MEMBERS_FOLDER
    if not member_root.is_dir():
        return primary
    paths = sorted(path for path in member_root.iterdir() if path.is_dir())
    members = [load_checkpoint(path) for path in paths]  # each names its folder on error
    return EnsembleNetwork(primary, members) if members else primary


def default_checkpoint(battle_format: str = "gen9randombattle") -> Path:
    """The checkpoint shipped with the package for ``battle_format``."""
    return Path(__file__).parent / "checkpoints" / f"distilled-{battle_format}"


def checkpoint_id(folder: str | Path) -> str:
    """A short hash of a checkpoint's weights (names the embedding a memory was built with)."""
    digest = hashlib.sha256((Path(folder) / "model.safetensors").read_bytes()).hexdigest()
    return digest[:16]


def agent_network(checkpoint: str | Path | None) -> DistilledNetwork:
    """The value network an agent's ``checkpoint=`` option names (default: the shipped one).

    Raises:
        CheckpointError: no folder there (the message says how to train one), or
            :func:`load_checkpoint`'s errors.
    """
    folder = Path(checkpoint) if checkpoint else default_checkpoint("gen9randombattle")
    if not folder.exists():
        raise CheckpointError(
            f"No value-network checkpoint at {folder}. Train one with "
            "`pokegym distill --out DIR`, then pass checkpoint=DIR."
        )
    return load_checkpoint(folder)


__all__ = [
    "STATE_FEATURES",
    "CheckpointError",
    "DistilledNetwork",
    "EnsembleNetwork",
    "NetworkConfig",
    "StateEncoder",
    "action_label",
    "agent_network",
    "checkpoint_id",
    "default_checkpoint",
    "load_checkpoint",
    "load_ensemble",
    "save_checkpoint",
    "state_layout_table",
    "torch_network",
]
