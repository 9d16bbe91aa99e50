"""``ppo``: a policy trained with sb3-contrib's MaskablePPO, played as an agent.

A trained policy is an agent like any other: ``PPOPolicy(path=...)`` (or the
spec ``"ppo:path=runs/ppo/policy.pt"``) encodes the battle it is given with the
environment's own observation encoder and action mask, runs the network, and
turns the chosen action into a poke-env order with the environment's action
codec. Illegal actions are masked out before the choice, so the order is always
legal. It works on either side of a battle: in the arena, as an env opponent,
or on a Showdown server through ``as_player()``.

**Checkpoint format.** Training writes ``policy.pt``: the network's weights (a
``state_dict`` of tensors) and a small header of plain numbers and strings
(architecture, observation layout version, format). It is read with
``torch.load(..., weights_only=True)``, which refuses arbitrary pickled objects,
so loading a ``policy.pt`` runs no code from the file. Training also writes
stable-baselines3's ``model.zip`` to resume training; that archive contains
pickled Python objects (spaces, schedules) and is not read here: load it with
``MaskablePPO.load`` only if you trust where it came from.

torch and stable-baselines3 are imported when a policy is loaded, not when this
module is imported.
"""

from __future__ import annotations

import os
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from pokegym.actions import N_ACTIONS, ActionCodec
from pokegym.errors import PokegymError
from pokegym.observation import (
    OBSERVATION_SIZE,
    OBSERVATION_VERSION,
    ObservationEncoder,
    observation_space,
)
from policies.base import Policy

CHECKPOINT_FORMAT = "pokegym-ppo-policy"
CHECKPOINT_VERSION = 1
WEIGHTS_NAME = "policy.pt"

DEFAULT_NET_ARCH: dict[str, list[int]] = {"pi": [], "vf": [128, 64]}
DEFAULT_HEAD = "scored"
HEADS = ("scored", "mlp")
DEFAULT_FEATURES: dict[str, int] = {
    "pokemon_dim": 64,
    "move_dim": 32,
    "field_dim": 32,
    "features_dim": 256,
}


class CheckpointError(PokegymError, ValueError):
    """A PPO checkpoint is missing, unreadable or of another kind."""


def gimmick_of_gen(gen: int) -> str | None:
    """The gimmick the action layout exposes in a generation (Tera in 9, Dynamax in 8)."""
    return {9: "terastallize", 8: "dynamax"}.get(gen)


def policy_class(head: str = DEFAULT_HEAD) -> type:
    """The actor-critic class of a head: ``"scored"`` (one score per action from its own
    part of the features, :class:`~policies.features.ActionScorer`) or ``"mlp"`` (SB3's
    linear head over mixed features)."""
    if head not in HEADS:
        raise ValueError(f"head is one of {HEADS}, got {head!r}")
    if head == "scored":
        from policies.features import ScoredActorCriticPolicy  # imports torch: optional, heavy

        return ScoredActorCriticPolicy
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy

    return MaskableMultiInputActorCriticPolicy


def policy_kwargs(
    net_arch: dict[str, list[int]] | None = None,
    features: dict[str, int] | None = None,
    head: str = DEFAULT_HEAD,
) -> dict[str, Any]:
    """``policy_kwargs`` for ``MaskablePPO(policy_class(head), ..., policy_kwargs=...)``."""
    from policies.features import ShowdownFeaturesExtractor  # imports torch: optional, heavy

    arch = dict(net_arch or DEFAULT_NET_ARCH)
    kwargs = dict(features or DEFAULT_FEATURES)
    if head == "scored":
        arch["pi"] = []  # the scorer reads the extractor's parts directly
        kwargs["mix"] = False
    return {
        "net_arch": arch,
        "features_extractor_class": ShowdownFeaturesExtractor,
        "features_extractor_kwargs": kwargs,
    }


def build_policy(
    net_arch: dict[str, list[int]], features: dict[str, Any], head: str = "mlp"
) -> Any:
    """A fresh (untrained) MaskablePPO actor-critic with the given architecture."""
    return policy_class(head)(
        observation_space(),
        gym.spaces.Discrete(N_ACTIONS),
        lambda _: 0.0,
        **policy_kwargs(net_arch, features, head),
    )


def save_policy(policy: Any, path: str | Path, **header: Any) -> Path:
    """Write ``policy``'s weights and architecture to ``path`` (a ``policy.pt``).

    ``policy`` is a MaskablePPO actor-critic built with :func:`policy_kwargs`;
    ``header`` adds plain values (format, steps, ...). The file is written to a
    temporary name first, so a crash never leaves a half-written checkpoint.
    """
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    extractor = policy.features_extractor
    from policies.features import ActionScorer  # imports torch: optional, heavy

    features = {
        "pokemon_dim": extractor.pokemon_dim,
        "move_dim": extractor.move_dim,
        "field_dim": extractor.field_dim,
        "features_dim": extractor.features_dim,
    }
    head = "scored" if isinstance(policy.action_net, ActionScorer) else "mlp"
    net_arch = policy.net_arch
    if isinstance(net_arch, list):
        net_arch = {"pi": list(net_arch), "vf": list(net_arch)}
    payload = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "observation_version": OBSERVATION_VERSION,
        "observation_size": OBSERVATION_SIZE,
        "n_actions": N_ACTIONS,
        "net_arch": {key: list(value) for key, value in net_arch.items()},
        "features": features,
        "head": head,
        "header": {key: value for key, value in header.items() if value is not None},
        "state_dict": {k: v.detach().cpu() for k, v in policy.state_dict().items()},
    }
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)
    return path


def _resolve(path: str | Path) -> Path:
    path = Path(path).expanduser()
    if path.is_dir():
        path = path / WEIGHTS_NAME
    if not path.exists():
        raise CheckpointError(
            f"No PPO checkpoint at {path}. Train one with `pokegym train ppo --out DIR` "
            f"(or `python -m train.ppo --out DIR`) and pass DIR or DIR/{WEIGHTS_NAME}."
        )
    return path


def _read(path: Path) -> dict[str, Any]:
    import torch

    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
        if "data" in names and "policy.pth" in names:
            raise CheckpointError(
                f"{path} is a stable-baselines3 model archive, which holds pickled objects "
                f"and is not loaded here. Pass the weights file {WEIGHTS_NAME} that training "
                "writes next to it (or export one with train.ppo.export_policy after loading "
                "the archive with MaskablePPO.load, if you trust the file)."
            )
    try:
        with warnings.catch_warnings():  # torch warns about the pickle protocols it meets
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise CheckpointError(
            f"{path} is not a pokegym PPO checkpoint ({_why_unreadable(path, exc)}); nothing "
            f"in it was run. Train one with `pokegym train ppo --out DIR` and pass DIR or "
            f"DIR/{WEIGHTS_NAME}."
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"{path} is a torch file but not a pokegym PPO policy (no {CHECKPOINT_FORMAT!r} "
            "header). Pass the policy.pt written by `pokegym train ppo`."
        )
    if payload.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{path} has checkpoint version {payload.get('version')}; this pokegym reads "
            f"version {CHECKPOINT_VERSION}. Retrain or use the matching pokegym version."
        )
    if (
        payload.get("observation_version") != OBSERVATION_VERSION
        or payload.get("observation_size") != OBSERVATION_SIZE
        or payload.get("n_actions") != N_ACTIONS
    ):
        raise CheckpointError(
            f"{path} was trained on observation layout v{payload.get('observation_version')} "
            f"({payload.get('observation_size')} values, {payload.get('n_actions')} actions); "
            f"this pokegym encodes v{OBSERVATION_VERSION} ({OBSERVATION_SIZE} values, "
            f"{N_ACTIONS} actions). Retrain the policy."
        )
    return payload


def _why_unreadable(path: Path, exc: Exception) -> str:
    """Why ``torch.load(weights_only=True)`` refused ``path``, in a few words (torch's own
    message suggests loading the file with ``weights_only=False``, which runs its code)."""
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    named = re.search(r"GLOBAL ([\w.]+)", str(exc))
    if named:
        return f"it asks to build the Python object {named.group(1)}, which a checkpoint never does"
    if path.stat().st_size == 0:
        return "the file is empty"
    return "not tensors and plain values: truncated, corrupt or another kind of file"


@dataclass
class PolicyNetwork:
    """A loaded actor network: observation + mask -> action logits, on the CPU."""

    policy: Any
    header: dict[str, Any] = field(default_factory=dict)
    threads: int = 1
    """torch threads for a forward pass (restored afterwards)."""

    @classmethod
    def load(cls, path: str | Path) -> PolicyNetwork:
        resolved = _resolve(path)
        payload = _read(resolved)
        head = payload.get("head", "mlp")
        if head not in HEADS:
            raise CheckpointError(f"{resolved}: unknown action head {head!r} (known: {HEADS}).")
        policy = build_policy(payload["net_arch"], payload["features"], head)
        try:
            policy.load_state_dict(payload["state_dict"])
        except (RuntimeError, KeyError, TypeError) as exc:
            raise CheckpointError(
                f"{resolved}: the weights do not fit the architecture in its header ({exc}). "
                "The file is corrupt; train or export it again."
            ) from None
        return cls.from_policy(policy, payload.get("header", {}))

    @classmethod
    def from_policy(cls, policy: Any, header: dict[str, Any] | None = None) -> PolicyNetwork:
        """Wrap a live MaskablePPO policy (used as is: copy it first to freeze it)."""
        policy.set_training_mode(False)
        return cls(policy, dict(header or {}))

    def logits(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action logits (batch, 15) with illegal actions at -inf."""
        import torch

        obs = np.asarray(observation, dtype=np.float32)
        masks = np.asarray(mask)
        single = obs.ndim == 1
        if single:
            obs, masks = obs[None], masks[None]
        # One decision is a batch of one: torch's thread pool costs more than it saves
        # on busy cores (docs/ppo.md measures a forward pass on one thread and on two).
        threads = torch.get_num_threads()
        if threads != self.threads:
            torch.set_num_threads(self.threads)
        try:
            return self._logits(obs, masks, single)
        finally:
            if threads != self.threads:
                torch.set_num_threads(threads)

    def _logits(self, obs: np.ndarray, masks: np.ndarray, single: bool) -> np.ndarray:
        import torch

        with torch.no_grad():
            tensors = {
                "observation": torch.from_numpy(np.ascontiguousarray(obs)),
                "action_mask": torch.from_numpy(masks.astype(np.float32)),
            }
            features = self.policy.extract_features(tensors)
            if isinstance(features, tuple):  # separate actor/critic extractors
                features = features[0]
            latent = self.policy.mlp_extractor.forward_actor(features)
            logits = self.policy.action_net(latent).numpy().astype(np.float64)
        logits[masks == 0] = -np.inf
        return logits[0] if single else logits


_cache: dict[tuple[str, int, int], PolicyNetwork] = {}


def load_network(path: str | Path) -> PolicyNetwork:
    """Load (once per file version) the network of a ``policy.pt``."""
    resolved = _resolve(path).resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_mtime_ns, stat.st_size)
    network = _cache.get(key)
    if network is None:
        network = PolicyNetwork.load(resolved)
        _cache[key] = network
    return network


class PPOPolicy(Policy):
    """A trained MaskablePPO policy as an agent (``choose(battle) -> order``).

    Args:
        path: a ``policy.pt`` written by training, or the run folder holding one.
        deterministic: play the most likely legal action (default); False samples
            from the policy's distribution with this agent's seeded generator.
        seed: seed of ``self.rng`` (sampling, Team Preview).
        network: an already loaded :class:`PolicyNetwork` instead of ``path``
            (self-play snapshots in memory).

    Raises:
        CheckpointError: the file is missing, corrupt, or not a pokegym policy;
            the message says what to do.
    """

    name = "ppo"

    def __init__(
        self,
        path: str | Path | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        *,
        network: PolicyNetwork | None = None,
    ):
        super().__init__(seed)
        if network is None:
            if path is None:
                raise CheckpointError(
                    "The ppo agent needs a checkpoint: ppo:path=runs/ppo/policy.pt "
                    "(train one with `pokegym train ppo --out runs/ppo`)."
                )
            network = load_network(path)
        self.network = network
        self.deterministic = bool(deterministic)
        self._encoders: dict[int, tuple[ObservationEncoder, ActionCodec]] = {}

    def _tools(self, gen: int) -> tuple[ObservationEncoder, ActionCodec]:
        tools = self._encoders.get(gen)
        if tools is None:
            team_size = int(self.network.header.get("team_size", 6))
            tools = (ObservationEncoder(gen, team_size=team_size), ActionCodec(gimmick_of_gen(gen)))
            self._encoders[gen] = tools
        return tools

    def action(self, battle: AbstractBattle) -> int:
        """The action index (0-13) this policy plays in ``battle`` now; always legal."""
        encoder, codec = self._tools(battle.gen)
        mask = codec.mask(battle)
        logits = self.network.logits(encoder.encode(battle), mask)
        legal = np.flatnonzero(mask)
        if self.deterministic:
            return int(legal[np.argmax(logits[legal])])
        weights = np.exp(logits[legal] - logits[legal].max())
        return int(self.rng.choice(legal, p=weights / weights.sum()))

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        _, codec = self._tools(battle.gen)
        return codec.to_order(self.action(battle), battle)

    def team_preview(self, battle: AbstractBattle) -> str:
        """Keeps the team-sheet order, as the training env does for its agent."""
        return "/team " + "".join(str(i + 1) for i in range(len(battle.team)))
