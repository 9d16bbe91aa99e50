"""``pokegym distill``: train the distilled value heads on a collection.

    pokegym distill --data data/rb --out runs/distilled

Heads (see :func:`policies.value_net.torch_network`):

(a) **win probability** from the world-model state encoding, trained with binary
    cross-entropy on soft targets. ``--targets mc`` (default): the Monte-Carlo target,
    the battle's final result for the deciding side (1 / 0 / ½), the same for every
    decision of that side. ``--targets td``: TD(λ) λ-returns over the side's sequence of
    decisions, bootstrapped from a fixed teacher (the hand-written evaluator's value of
    each state, stored in the collection): ``G_{T-1} = outcome`` and
    ``G_t = (1 − λ) · V(s_{t+1}) + λ · G_{t+1}``; λ = 1 is the Monte-Carlo target.
(b) **LLM leaf score** where the collection has one (the LLM's score of a decision
    state, and of the leaf states it scored); skipped when the collection has none.
(c) optionally (``--policy-head``) a **policy prior** over the environment's action
    layout from the observation encoding: masked cross-entropy on the actions taken,
    by default only by sides that went on to win (``--policy-target taken``), or on the
    search's root visit shares where the collection has them (``--policy-target
    search``: expert iteration, the search's improved move distribution as the target,
    whoever won).

``--init CHECKPOINT`` starts from a checkpoint (its architecture, weights and input
normalisation; a head it lacks starts fresh), so a new collection refines the network
instead of replacing it; ``--no-train-value`` then trains the policy head alone.

Battles are split into training and held-out sets by battle (never a battle on both
sides). Training stops early when the held-out loss has not improved for ``--patience``
epochs, and the best epoch is kept: the value log-loss, plus ``policy_weight`` times the
policy's cross-entropy with ``--policy-target search`` (only the latter with
``--no-train-value``). Held-out metrics for (a): log-loss,
Brier score and ROC AUC against the final result (ties left out), with the same metrics
of the hand-written evaluator on the same rows for comparison; for (b) the mean absolute
error to the LLM's scores; for (c) top-1 agreement (with the search's most visited
action for ``search``) and, for ``search``, the cross-entropy to the visit shares.

The output folder gets ``model.safetensors`` (weights and input normalisation) and
``config.json`` (architecture, this run's configuration, metrics, history); with
``--memory DIR`` also an experience memory of the training rows embedded by the
network. Runs on a GPU when one is present (``--device``).

With ``--ray auto|HOST:PORT`` training runs on a GPU of a Ray cluster when the cluster
has one: the collection's files travel to that node through Ray's object store (no
shared file system needed), and the checkpoint (and memory) come back into ``--out``
(``--memory``). A cluster without a GPU is said so, and training runs here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory.experience import StateMemory
from pokegym.devices import torch_device
from pokegym.errors import PokegymError
from pokegym.files import atomic_write_json
from pokegym.scale.cluster import import_ray, ray_cluster
from pokegym.scale.pool import where
from policies.value_net import (
    CheckpointError,
    NetworkConfig,
    checkpoint_id,
    load_checkpoint,
    save_checkpoint,
    torch_network,
)
from train.collection import CollectionError
from train.config import config_parser, field_docs, seed_everything
from train.dataset import Dataset, data_folders, load_dataset, split_battles
from train.metrics import calibration, value_metrics


@dataclass(frozen=True)
class DistillConfig:
    """One training run (saved in the checkpoint's ``config.json``)."""

    data: str
    """Collection folder (``pokegym collect --out``); several, comma-separated, are pooled."""
    out: str
    """Checkpoint folder to write."""
    seed: int = 0
    """Seeds the split, the initialisation and the batch order."""
    val_fraction: float = 0.15
    """Share of battles held out."""
    targets: str = "mc"
    """Value targets: ``mc`` (final result) or ``td`` (λ-returns over a fixed teacher)."""
    td_lambda: float = 0.8
    """λ of the TD(λ) targets."""
    hidden: tuple[int, ...] = (128, 64)
    """Widths of the value trunk's hidden layers."""
    dropout: float = 0.2
    """Dropout after each hidden layer of the value trunk."""
    residual: bool = True
    """Learn a correction to the hand-written evaluator's logit (training starts from it)."""
    lr: float = 1e-3
    """Adam learning rate."""
    weight_decay: float = 1e-3
    """AdamW weight decay."""
    batch_size: int = 512
    """Rows per gradient step."""
    max_epochs: int = 60
    """Upper bound on epochs."""
    patience: int = 6
    """Epochs without held-out improvement before stopping."""
    llm_weight: float = 1.0
    """Weight of the LLM-score loss (head b), when the data has LLM scores."""
    policy_head: bool = False
    """Train the policy-prior head (c) over the observation encoding."""
    policy_weight: float = 0.5
    """Weight of the policy loss."""
    policy_winners_only: bool = True
    """Imitate only the decisions of sides that won their battle (``taken`` targets)."""
    policy_target: str = "taken"
    """Policy-head targets: ``taken`` (the action played) or ``search`` (the search's root
    visit shares, in rows that have them: collect with a search agent such as ``distilled``)."""
    init: str | None = None
    """Start from this checkpoint folder (architecture, weights, input normalisation)."""
    train_value: bool = True
    """Train the value heads (off: only the policy head learns, e.g. after ``--init``)."""
    device: str = "auto"
    """``auto`` (GPU when present), ``cpu``, ``cuda`` or ``cuda:<index>``
    (:mod:`pokegym.devices`)."""
    memory: str | None = None
    """Also build an experience memory of the training rows into this folder."""
    threads: int = 0
    """torch CPU threads (0: torch's default)."""
    ray: str | None = None
    """Train on a GPU of this Ray cluster (``auto`` or ``host:port``) when it has one,
    else here (pip install 'pokegym[ray]')."""


# ------------------------------------------------------------------- training
POLICY_TARGETS = ("taken", "search")


def soft_cross_entropy(logits: Any, target: Any) -> Any:
    """Mean cross-entropy of (masked) logits to target distributions, one per row."""
    import torch

    return -(target * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


def search_target_baselines(
    shares: np.ndarray, masks: np.ndarray, train_rows: np.ndarray, val_rows: np.ndarray
) -> dict[str, float]:
    """What a policy head has to beat on held-out rows: the visit shares' own entropy (the
    floor), and the cross-entropy of a uniform prior over the legal actions and of the
    action slots' frequencies in the training rows (masked to the legal actions)."""
    if not len(val_rows):
        return {}
    target, legal = shares[val_rows].astype(np.float64), masks[val_rows].astype(bool)

    def cross_entropy(q: np.ndarray) -> float:
        q = np.where(legal, q, 0.0)
        q = q / np.maximum(q.sum(axis=1, keepdims=True), 1e-12)
        return float(-(target * np.log(np.clip(q, 1e-12, 1.0))).sum(axis=1).mean())

    frequency = shares[train_rows].mean(axis=0) + 1e-6 if len(train_rows) else 1.0
    entropy = -(target * np.log(np.clip(target, 1e-12, 1.0))).sum(axis=1).mean()
    return {
        "entropy": float(entropy),
        "uniform_ce": cross_entropy(np.ones_like(target)),
        "frequency_ce": cross_entropy(np.broadcast_to(frequency, target.shape).copy()),
    }


def selection_loss(metrics: dict[str, Any], config: DistillConfig) -> float:
    """The held-out loss that picks the best epoch (see the module docstring)."""
    policy = metrics.get("policy_ce")
    if policy is None or math.isnan(policy):
        return float(metrics["log_loss"])
    if not config.train_value:
        return float(policy)
    return float(metrics["log_loss"]) + config.policy_weight * float(policy)


def _load_matching(net: Any, weights: dict[str, np.ndarray]) -> set[str]:
    """Copy the tensors of ``weights`` whose name and shape the network shares; their names."""
    import torch

    own = net.state_dict()
    loaded = {k for k, v in weights.items() if k in own and tuple(own[k].shape) == v.shape}
    with torch.no_grad():
        for name in loaded:
            own[name].copy_(torch.from_numpy(np.asarray(weights[name])))
    return loaded


def train(config: DistillConfig, log: Any = None) -> dict[str, Any]:
    """Train, write the checkpoint, return the metrics."""
    import torch

    say = log or (lambda text: print(text, file=sys.stderr))
    if config.policy_target not in POLICY_TARGETS:
        raise ValueError(
            f"--policy-target is one of {', '.join(POLICY_TARGETS)}, not {config.policy_target!r}"
        )
    if not config.train_value and not config.policy_head:
        raise ValueError("--no-train-value leaves only the policy head to train: add --policy-head")
    start_from = load_checkpoint(config.init) if config.init else None
    if config.threads:
        torch.set_num_threads(config.threads)
    seed_everything(config.seed)
    data = load_dataset(config)
    held = split_battles(data.battle, config.val_fraction, config.seed)
    train_rows, val_rows = np.flatnonzero(~held), np.flatnonzero(held)
    if data.search is not None and not data.search.any():
        raise ValueError(
            f"{config.data} has no search visit shares (--policy-target search): collect "
            "with a search agent, e.g. `pokegym collect --agents distilled,abyssal --self-play`"
        )
    run = _Trainer(config, data, train_rows, val_rows, start_from, say)
    baseline = value_metrics(data.heuristic[val_rows].astype(np.float64), data.outcome[val_rows])
    say(
        f"{len(np.unique(data.battle))} battles, {len(data.states)} decisions "
        f"({len(train_rows)} train / {len(val_rows)} held out); device {run.device}; "
        f"targets {config.targets}; LLM labels: "
        f"{'yes' if run.has_llm else 'none (head b skipped)'}"
    )
    say(
        f"hand-written evaluator on the held-out rows: log-loss {baseline['log_loss']:.4f} "
        f"brier {baseline['brier']:.4f} auc {baseline['auc']:.4f}"
    )
    policy_baselines: dict[str, float] = {}
    if data.search is not None and data.masks is not None and run.policy_rows is not None:
        usable = run.policy_rows
        policy_baselines = search_target_baselines(
            data.search, data.masks, train_rows[usable[train_rows]], val_rows[usable[val_rows]]
        )
        say(
            f"search visit shares on the held-out rows: entropy {policy_baselines['entropy']:.4f};"
            f" cross-entropy of uniform-over-legal {policy_baselines['uniform_ce']:.4f}, of the "
            f"training rows' action-slot frequencies {policy_baselines['frequency_ce']:.4f}"
        )
    start = time.perf_counter()
    first = run.evaluate()
    history: list[dict[str, Any]] = [{"epoch": 0, **first}]
    best: dict[str, Any] = {"epoch": 0, **first}
    best_state = run.snapshot()
    stale = 0
    for epoch in range(1, config.max_epochs + 1):
        train_loss = run.epoch()
        metrics = {**run.evaluate(), "train_loss": train_loss}
        history.append({"epoch": epoch, **metrics})
        say(_epoch_line(epoch, metrics))
        if selection_loss(metrics, config) < selection_loss(best, config) - 1e-5:
            best, best_state, stale = {"epoch": epoch, **metrics}, run.snapshot(), 0
        else:
            stale += 1
            if stale >= config.patience:
                say(f"early stop: no held-out improvement for {config.patience} epochs")
                break
    p_val = run.restore(best_state)
    decided = data.outcome[val_rows] != 0.5
    summary = {
        "best": best,
        "initial": first,
        "baseline_heuristic": baseline,
        "baseline_policy": policy_baselines,
        "calibration": calibration(p_val[decided], data.outcome[val_rows][decided]),
        "battles": len(np.unique(data.battle)),
        "decisions": len(data.states),
        "train_rows": len(train_rows),
        "held_out_rows": len(val_rows),
        "seconds": time.perf_counter() - start,
        "device": str(run.device),
    }
    weights = {k: v.numpy() for k, v in best_state.items()}
    resolved = {**dataclasses.asdict(config), "hidden": list(config.hidden)}
    save_checkpoint(config.out, run.net_config, weights,
                    {"training": resolved, "metrics": summary, "history": history})  # fmt: skip
    if config.memory:
        build_memory(config.out, data, train_rows).save(config.memory)
        summary["memory"] = config.memory
    return summary


def _epoch_line(epoch: int, metrics: dict[str, Any]) -> str:
    return (
        f"epoch {epoch:3d}: train {metrics['train_loss']:.4f}  held-out log-loss "
        f"{metrics['log_loss']:.4f} brier {metrics['brier']:.4f} auc {metrics['auc']:.4f}"
        + (f" llm_mae {metrics['llm_mae']:.4f}" if "llm_mae" in metrics else "")
        + (f" policy_top1 {metrics['policy_top1']:.3f}" if "policy_top1" in metrics else "")
        + (f" policy_ce {metrics['policy_ce']:.4f}" if "policy_ce" in metrics else "")
    )


class _Trainer:
    """One run's network, optimiser and tensors: :meth:`epoch` trains one pass over the
    training rows, :meth:`evaluate` measures the held-out rows (see :func:`train`)."""

    def __init__(
        self,
        config: DistillConfig,
        data: Dataset,
        train_rows: np.ndarray,
        val_rows: np.ndarray,
        start_from: Any,
        say: Any,
    ):
        import torch

        self.config, self.data = config, data
        self.train_rows, self.val_rows = train_rows, val_rows
        self.has_llm = bool(np.isfinite(data.llm).any() or data.leaf_states is not None)
        shape = start_from.config if start_from is not None else None
        self.net_config = NetworkConfig(
            hidden=shape.hidden if shape else tuple(config.hidden),
            llm_head=self.has_llm or bool(shape and shape.llm_head),
            residual=shape.residual if shape else config.residual,
            dropout=config.dropout,
            observation_features=(data.observations.shape[1]
                                  if data.observations is not None else 0),
        )  # fmt: skip
        self.device = torch_device(config.device)
        net = self.net = torch_network(self.net_config).to(self.device)
        loaded = _load_matching(net, start_from.weights) if start_from is not None else set()
        if start_from is not None:
            say(f"starting from {config.init}: {len(loaded)} tensors loaded")
        self._normalise(loaded)
        if not config.train_value:
            for name, parameter in net.named_parameters():
                parameter.requires_grad_(name.startswith("policy."))
        trainable = [p for p in net.parameters() if p.requires_grad]
        self.optimiser = torch.optim.AdamW(trainable, lr=config.lr,
                                           weight_decay=config.weight_decay)  # fmt: skip
        self.generator = torch.Generator().manual_seed(config.seed)
        tensor = self.tensor
        self.states, self.target = tensor(data.states), tensor(data.target)
        self.llm = tensor(np.nan_to_num(data.llm, nan=-1.0))
        self.llm_mask = tensor(np.isfinite(data.llm))
        self.policy_rows: np.ndarray | None = None
        self.soft = data.search is not None
        if data.observations is not None:
            assert data.actions is not None and data.masks is not None
            if data.search is not None:
                usable = data.search.sum(axis=1) > 0
                self.shares = tensor(data.search)
            else:
                usable = data.actions >= 0
                if config.policy_winners_only:
                    usable &= data.outcome == 1.0
            self.policy_rows = usable
            self.observations = tensor(data.observations)
            self.masks = tensor(data.masks.astype(bool))
            self.actions = tensor(np.maximum(data.actions, 0))
            self.policy_ok = tensor(usable)
        self.leaf_train: np.ndarray | None = None
        self.leaf_val: np.ndarray | None = None
        if data.leaf_states is not None:
            assert data.leaf_battle is not None and data.leaf_scores is not None
            leaf_held = np.isin(data.leaf_battle, np.unique(data.battle[val_rows]))
            self.leaf_train, self.leaf_val = np.flatnonzero(~leaf_held), np.flatnonzero(leaf_held)
            self.leaf_states, self.leaf_scores = tensor(data.leaf_states), tensor(data.leaf_scores)

    def tensor(self, x: np.ndarray) -> Any:
        import torch

        return torch.from_numpy(np.array(x, copy=True)).to(self.device)

    def _normalise(self, loaded: set[str]) -> None:
        """Input normalisation from the training rows, where the start did not bring one."""
        import torch

        data, rows, net = self.data, self.train_rows, self.net
        with torch.no_grad():
            if "value_mean" not in loaded:
                std = data.states[rows].std(axis=0)
                net.value_mean.copy_(torch.from_numpy(data.states[rows].mean(axis=0)))
                net.value_std.copy_(torch.from_numpy(np.where(std < 1e-4, 1.0, std)
                                                     .astype(np.float32)))  # fmt: skip
            if data.observations is not None and "policy_mean" not in loaded:
                o_std = data.observations[rows].std(axis=0)
                net.policy_mean.copy_(torch.from_numpy(data.observations[rows].mean(axis=0)))
                net.policy_std.copy_(torch.from_numpy(np.where(o_std < 1e-4, 1.0, o_std)
                                                      .astype(np.float32)))  # fmt: skip

    def snapshot(self) -> dict[str, Any]:
        return {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()}

    def restore(self, state: dict[str, Any]) -> np.ndarray:
        """Load ``state``; return its win probabilities on the held-out rows."""
        import torch

        self.net.load_state_dict(state)
        self.net.eval()
        with torch.no_grad():
            win = self.net(self.states[self.tensor(self.val_rows)])[0]
            return torch.sigmoid(win).cpu().numpy()  # type: ignore[no-any-return]

    def epoch(self) -> float:
        """One pass over the training rows in a seeded order; the mean training loss."""
        import torch

        config, rows_all = self.config, self.train_rows
        permutation = torch.randperm(len(rows_all), generator=self.generator).numpy()
        total = 0.0
        for begin in range(0, len(permutation), config.batch_size):
            rows = self.tensor(rows_all[permutation[begin : begin + config.batch_size]])
            loss = self.batch_loss(rows)
            if loss.requires_grad:  # (without value training, a batch may hold no policy row)
                self.optimiser.zero_grad()
                loss.backward()
                self.optimiser.step()
            total += float(loss.item()) * len(rows)
        return total / len(rows_all)

    def batch_loss(self, rows: Any) -> Any:
        import torch
        import torch.nn.functional as F

        config, net = self.config, self.net
        win, llm_logit = net(self.states[rows])
        loss = F.binary_cross_entropy_with_logits(win, self.target[rows])
        if not config.train_value:
            loss = loss.detach() * 0.0  # the value heads are fixed
        if llm_logit is not None and config.train_value:
            present = self.llm_mask[rows]
            if bool(present.any()):
                loss = loss + config.llm_weight * F.binary_cross_entropy_with_logits(
                    llm_logit[present], self.llm[rows][present]
                )
        leaf_train = self.leaf_train
        if leaf_train is not None and len(leaf_train) and config.train_value:
            pick = torch.randint(len(leaf_train), (min(len(leaf_train), len(rows)),),
                                 generator=self.generator).numpy()  # fmt: skip
            _, leaf_logit = net(self.leaf_states[self.tensor(leaf_train[pick])])
            loss = loss + config.llm_weight * F.binary_cross_entropy_with_logits(
                leaf_logit, self.leaf_scores[self.tensor(leaf_train[pick])]
            )
        if self.policy_rows is not None:
            ok = self.policy_ok[rows]
            if bool(ok.any()):
                logits = net.policy_logits(self.observations[rows][ok])
                logits = logits.masked_fill(~self.masks[rows][ok], -1e9)
                if self.soft:
                    policy_loss = soft_cross_entropy(logits, self.shares[rows][ok])
                else:
                    policy_loss = F.cross_entropy(logits, self.actions[rows][ok])
                loss = loss + config.policy_weight * policy_loss
        return loss

    def evaluate(self) -> dict[str, Any]:
        """Held-out metrics of every head the run trains."""
        import torch
        import torch.nn.functional as F

        data, val_rows, net, tensor = self.data, self.val_rows, self.net, self.tensor
        net.eval()
        with torch.no_grad():
            win, llm_logit = net(self.states[tensor(val_rows)])
            p = torch.sigmoid(win).cpu().numpy().astype(np.float64)
            metrics: dict[str, Any] = value_metrics(p, data.outcome[val_rows])
            metrics["target_loss"] = float(
                F.binary_cross_entropy_with_logits(win, self.target[tensor(val_rows)]).item()
            )
            if self.has_llm:
                metrics["llm_mae"] = self._llm_error(llm_logit)
            if self.policy_rows is not None:
                metrics.update(self._policy_metrics())
        net.train()
        return metrics

    def _llm_error(self, llm_logit: Any) -> float:
        import torch

        data, val_rows, leaf_val = self.data, self.val_rows, self.leaf_val
        errors: list[float] = []
        if llm_logit is not None:
            present = np.isfinite(data.llm[val_rows])
            if present.any():
                q = torch.sigmoid(llm_logit).cpu().numpy()[present]
                errors += list(np.abs(q - data.llm[val_rows][present]))
        if leaf_val is not None and len(leaf_val):
            _, leaf_logit = self.net(self.leaf_states[self.tensor(leaf_val)])
            q = torch.sigmoid(leaf_logit).cpu().numpy()
            errors += list(np.abs(q - data.leaf_scores[leaf_val]))  # type: ignore[index]
        return float(np.mean(errors)) if errors else math.nan

    def _policy_metrics(self) -> dict[str, float]:
        assert self.policy_rows is not None
        rows = self.val_rows[self.policy_rows[self.val_rows]]
        if not len(rows):
            return {}
        index = self.tensor(rows)
        logits = self.net.policy_logits(self.observations[index])
        logits = logits.masked_fill(~self.masks[index], -1e9)
        out: dict[str, float] = {}
        if self.soft:
            wanted = self.shares[index]
            hit = (logits.argmax(-1) == wanted.argmax(-1)).float().mean()
            out["policy_ce"] = float(soft_cross_entropy(logits, wanted).item())
        else:
            hit = (logits.argmax(-1) == self.actions[index]).float().mean()
        out["policy_top1"] = float(hit.item())
        return out


# ----------------------------------------------------------------- on a cluster
def train_on_ray(config: DistillConfig, log: Any = None) -> dict[str, Any]:
    """Train on a GPU of the Ray cluster ``config.ray`` when it has one, else here (see
    the module docstring). The summary says where (``"ray_node"``, ``"device"``)."""
    say = log or (lambda text: print(text, file=sys.stderr))
    assert config.ray is not None
    folders = data_folders(config.data)
    for folder in folders:
        if not Path(folder).is_dir():
            raise ValueError(f"--data {folder}: no such folder (a `pokegym collect` folder).")
    with ray_cluster(config.ray) as cluster:
        if cluster.gpus >= 1:
            say(f"training on a GPU of the Ray cluster ({cluster.gpus:g} GPUs on "
                f"{cluster.nodes} node(s))")  # fmt: skip
            return train_remote(config, num_gpus=1, device="cuda", log=say)
    say(f"the Ray cluster ({config.ray}) has no GPU: training here")
    return train(config, log)


def train_remote(
    config: DistillConfig, *, num_gpus: float, device: str, log: Any = None
) -> dict[str, Any]:
    """Run :func:`train` as a Ray task asking for ``num_gpus`` (on the connected
    cluster), with the collection shipped there and the outputs written back here."""
    ray = import_ray()
    say = log or (lambda text: print(text, file=sys.stderr))
    shipped = [ray.put(_read_folder(Path(f))) for f in data_folders(config.data)]
    task = ray.remote(num_gpus=num_gpus, num_cpus=1, max_retries=1)(_train_there)
    there = dataclasses.replace(config, device=device, ray=None)
    answer = ray.get(task.remote(there, *shipped))  # top-level refs arrive as values
    for line in answer["log"]:
        say(line)
    _write_folder(Path(config.out), answer["out"])
    if config.memory and answer["memory"] is not None:
        _write_folder(Path(config.memory), answer["memory"])
    # The checkpoint names the run as it was asked for here, not the node's temp folders.
    path = Path(config.out) / "config.json"
    document = json.loads(path.read_text())
    document["training"].update(data=config.data, out=config.out, memory=config.memory,
                                ray=config.ray)  # fmt: skip
    atomic_write_json(path, document, indent=2, sort_keys=True)
    summary = answer["summary"]
    summary["ray_node"] = answer["host"]
    if config.memory:
        summary["memory"] = config.memory
    return summary  # type: ignore[no-any-return]


def _train_there(config: DistillConfig, *shipped: dict[str, bytes]) -> dict[str, Any]:
    """The Ray task: unpack the collections, train, pack the outputs."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pokegym-distill-") as tmp:
        folders = []
        for k, files in enumerate(shipped):
            folder = Path(tmp) / f"data-{k}"
            _write_folder(folder, files)
            folders.append(str(folder))
        out, memory = Path(tmp) / "out", Path(tmp) / "memory"
        local = dataclasses.replace(config, data=",".join(folders), out=str(out),
                                    memory=str(memory) if config.memory else None)  # fmt: skip
        summary = train(local, lines.append)
        return {"summary": summary, "log": lines, "out": _read_folder(out),
                "memory": _read_folder(memory) if config.memory else None,
                "host": where()["host"]}  # fmt: skip


def _read_folder(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def _write_folder(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def build_memory(checkpoint: str | Path, data: Dataset, rows: np.ndarray | None = None) -> Any:
    """A :class:`memory.experience.StateMemory` of ``rows`` (default: every row) of
    ``data``, embedded by the checkpoint's network and tied to that checkpoint."""
    rows = np.arange(len(data.states)) if rows is None else np.asarray(rows)
    network = load_checkpoint(checkpoint)
    embeddings = network.embed(data.states[rows])
    memory = StateMemory(embeddings.shape[1], checkpoint_id(checkpoint))
    memory.add(embeddings, data.outcome[rows], [data.labels[i] for i in rows], data.battle[rows])
    return memory


def parse_args(argv: Sequence[str] | None) -> DistillConfig:
    parser = config_parser(
        DistillConfig, prog="pokegym distill", description=__doc__.split("\n")[0], skip=("ray",)
    )
    parser.add_argument("--ray", nargs="?", const="auto", default=None, metavar="auto|ADDRESS",
                        help=field_docs(DistillConfig)["ray"])  # fmt: skip
    args = parser.parse_args(list(argv) if argv is not None else None)
    return DistillConfig(**vars(args))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = parse_args(argv)
        summary = train_on_ray(config) if config.ray is not None else train(config)
    except (CollectionError, CheckpointError, ValueError, PokegymError) as exc:
        print(f"pokegym distill: {exc}", file=sys.stderr)
        return 2
    best = summary["best"]
    base = summary["baseline_heuristic"]
    print(f"wrote {config.out} (epoch {best['epoch']}): held-out log-loss {best['log_loss']:.4f} "
          f"brier {best['brier']:.4f} auc {best['auc']:.4f} | hand-written evaluator "
          f"{base['log_loss']:.4f} / {base['brier']:.4f} / {base['auc']:.4f}"
          + (f" | llm_mae {best['llm_mae']:.4f}" if "llm_mae" in best else "")
          + (f" | policy top-1 {best['policy_top1']:.3f}" if "policy_top1" in best else "")
          + (f" cross-entropy {best['policy_ce']:.4f}" if "policy_ce" in best else ""))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
