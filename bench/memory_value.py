"""Does the experience memory know who wins better than the network it is built on?

A diagnostic for the ``distilled`` agent's leaf blend ``(1 − m) · network + m · memory``
(``memory_weight``). The collection's battles are split in two, by battle: a FAISS memory
(:mod:`memory.experience`) is built from the first part, embedded by the checkpoint's
network, and on decisions of the held-out battles every leaf evaluator is judged by how
well its value separates decisions of sides that went on to win from those of sides that
lost (ROC AUC; ties left out): the hand-written value, the network, the memory's k-NN
value for each ``--k``, and the blends for each ``--weights``. Intervals are bootstrap
resamples of whole held-out battles, and every difference to the network is paired on
the same resamples.

    pokegym bench memory_value --data data/ao --rows 8000 --out runs/mem/value.json

The held-out battles are never in the memory, as in play, where the memory holds past
battles only.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from policies.value_net import default_checkpoint, load_checkpoint
from train.dataset import load_dataset, split_battles
from train.distill import DistillConfig, build_memory
from train.metrics import bootstrap_auc, roc_auc


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def evaluate(
    checkpoint: str,
    data_folders: str,
    *,
    held_out: float = 0.15,
    rows: int = 8000,
    ks: list[int] | None = None,
    weights: list[float] | None = None,
    blend_k: int = 16,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """AUC of each evaluator on held-out decisions (see the module docstring)."""
    ks = ks or [16, 32, 128]
    weights = weights or [0.1, 0.25, 0.5]
    if blend_k not in ks:
        ks = [*ks, blend_k]
    start = time.perf_counter()
    network = load_checkpoint(checkpoint)
    data = load_dataset(DistillConfig(data=data_folders, out=checkpoint))
    test_mask = split_battles(data.battle, held_out, seed)
    memory = build_memory(checkpoint, data, np.flatnonzero(~test_mask))
    test = np.flatnonzero(test_mask & (data.outcome != 0.5))
    if rows and len(test) > rows:
        test = np.sort(np.random.default_rng(seed).choice(test, rows, replace=False))
    labels = data.outcome[test]
    groups = data.battle[test]
    features = data.states[test]
    scores: dict[str, np.ndarray] = {
        "hand-written": data.heuristic[test].astype(float),
        "network": network.win_probability(features).astype(float),
    }
    embeddings = network.embed(features)
    for k in ks:
        scores[f"memory k={k}"] = memory.value(embeddings, k).astype(float)
    for w in weights:
        scores[f"blend m={w:g} (k={blend_k})"] = (1 - w) * scores["network"] + w * scores[
            f"memory k={blend_k}"
        ]
    draws = bootstrap_auc(scores, labels, groups, bootstrap, seed)
    result: dict[str, Any] = {
        "checkpoint": str(checkpoint),
        "data": data_folders,
        "memory_entries": len(memory),
        "memory_kind": memory.kind,
        "held_out_battles": len(np.unique(groups)),
        "held_out_decisions": len(test),
        "seconds": 0.0,
        "evaluators": {},
    }
    for name, values in scores.items():
        low, high = np.percentile(draws[name], [2.5, 97.5])
        difference = draws[name] - draws["network"]
        d_low, d_high = np.percentile(difference, [2.5, 97.5])
        result["evaluators"][name] = {
            "auc": roc_auc(values, labels),
            "auc_95": [float(low), float(high)],
            "minus_network": roc_auc(values, labels) - roc_auc(scores["network"], labels),
            "minus_network_95": [float(d_low), float(d_high)],
        }
    result["seconds"] = time.perf_counter() - start
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="collection folder(s), comma-separated")
    parser.add_argument("--checkpoint", default=None, help="default: the shipped checkpoint")
    parser.add_argument("--held-out", type=float, default=0.15, help="share of battles held out")
    parser.add_argument("--rows", type=int, default=8000,
                        help="held-out decisions scored (a random sample; 0: all)")  # fmt: skip
    parser.add_argument("--k", default="16,32,128", help="neighbours per memory query")
    parser.add_argument("--weights", default="0.1,0.25,0.5", help="memory weights of the blends")
    parser.add_argument("--blend-k", type=int, default=16,
                        help="k of the blends (the agent queries 16)")  # fmt: skip
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="JSON file for the results")
    args = parser.parse_args(argv)
    result = evaluate(
        args.checkpoint or str(default_checkpoint()),
        args.data,
        held_out=args.held_out,
        rows=args.rows,
        ks=[int(k) for k in args.k.split(",") if k.strip()],
        weights=_floats(args.weights),
        blend_k=args.blend_k,
        bootstrap=args.bootstrap,
        seed=args.seed,
    )
    print(f"memory of {result['memory_entries']:,} decisions ({result['memory_kind']}); "
          f"{result['held_out_decisions']:,} held-out decisions of "
          f"{result['held_out_battles']:,} battles; {result['seconds']:.0f} s")  # fmt: skip
    print(f"{'evaluator':24s} {'AUC [95 %]':>22s}   {'minus network [95 %]':>26s}")
    for name, row in result["evaluators"].items():
        low, high = row["auc_95"]
        d_low, d_high = row["minus_network_95"]
        print(f"{name:24s} {row['auc']:.3f} [{low:.3f}, {high:.3f}]   "
              f"{row['minus_network']:+.4f} [{d_low:+.4f}, {d_high:+.4f}]")  # fmt: skip
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
