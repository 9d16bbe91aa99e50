"""How much does a leaf value know about who wins? The three evaluators of the search on
the same real battle states: ``pokechamp``'s language-model value (score buckets 0-9 on
the value prompt), the hand-written value and the distilled value network.

A diagnostic, not an agent. ``abyssal`` plays ``abyssal`` in the arena; at every
``--stride``-th decision of the recording side the script keeps the world-model state
(the same decision state the searches start from), the value prompt ``pokechamp`` would
send for it (leaf text, battle description and one-step lookahead), and the other two
evaluators' values. When the battles are over, the language model scores the kept
prompts, and every evaluator is judged by how well it separates the states of battles
that side went on to win from those it lost (ROC AUC; 0.5 is no better than a coin).
The interval is a bootstrap over battles (states of one battle are not independent).

    pokegym bench llm_value_probe --battles 40 --stride 3 --model qwen-0.5b \\
        --out runs/probe.json

``--model qwen-0.5b,qwen-1.5b`` scores the same states with each model (one after the
other, each loaded in turn) and compares their AUCs on them, paired.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.llm import ScoreRequest, make_model
from policies.abyssal import AbyssalPolicy
from policies.core.battle import decision_state
from policies.core.evaluation import HeuristicEvaluator
from policies.distilled import DistilledPolicy
from policies.pokechamp import BUCKET_VALUES, PokeChampPolicy, leaf_text
from train.metrics import bootstrap_auc, roc_auc

RECORDS: list[dict[str, Any]] = []
BATTLES: dict[str, AbstractBattle] = {}  # the recording side's battle objects, by tag


class RecordingAbyssal(AbyssalPolicy):
    """``abyssal`` that keeps every ``stride``-th decision state and its three inputs."""

    def __init__(self, stride: int = 3, network: str | None = None, **options: Any):
        super().__init__(**options)
        self.stride = stride
        # Decisions per battle: agents are pooled across battles in an order that depends on
        # timing, so a count per agent would keep different states from run to run.
        self.seen: dict[str, int] = {}
        self.champ = PokeChampPolicy()  # its prompter and world model only; no model loaded
        self.distilled = DistilledPolicy(**({"checkpoint": network} if network else {}))

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        seen = self.seen[battle.battle_tag] = self.seen.get(battle.battle_tag, 0) + 1
        if seen % self.stride == 0 and not battle.finished:
            model = self.champ.model(battle.gen)
            state = decision_state(battle, model.dex)
            self.champ._root = state  # the lookahead block of the prompt describes this state
            text = leaf_text(model, state)
            messages, buckets = self.champ.prompter.value_prompt(battle, text)
            _, _, net = self.distilled.roles(battle, self.distilled.model(battle.gen))
            BATTLES[battle.battle_tag] = battle
            RECORDS.append(
                {
                    "battle": battle.battle_tag,
                    "turn": battle.turn,
                    "messages": messages,
                    "buckets": list(buckets),
                    "heuristic": HeuristicEvaluator(model).value(state),
                    "network": net.evaluate([state])[0],
                }
            )
        return super().choose(battle)


def interval(values: np.ndarray) -> list[float]:
    if not len(values):
        return [float("nan"), float("nan")]
    low, high = np.percentile(values, [2.5, 97.5])
    return [float(low), float(high)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--battles", type=int, default=40)
    parser.add_argument("--stride", type=int, default=3, help="keep every k-th decision")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--model", default="qwen-0.5b",
                        help="model(s) of the value prompt, comma-separated, or 'none' to "
                             "compare only the hand-written value and the network")  # fmt: skip
    parser.add_argument("--network", help="value-network checkpoint folder (default: shipped)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--out", help="JSON file for every state's values and the summary")
    args = parser.parse_args(argv)

    register_agent(
        "recorder", lambda **kw: RecordingAbyssal(stride=args.stride, network=args.network, **kw)
    )
    config = ArenaConfig(agents=["recorder", "abyssal"], battle_format=args.format,
                         battles_per_pair=args.battles, seed=args.seed, concurrency=2)  # fmt: skip
    start = time.perf_counter()
    result = run_arena(config)
    # A battle's outcome as its own battle object saw it (ties and unfinished battles out).
    outcome = {tag: int(b.won) for tag, b in BATTLES.items() if b.finished and b.won is not None}
    played = time.perf_counter() - start
    wins = sum(1 for r in result.battles if r.winner == "recorder")
    print(
        f"{len(result.battles)} battles (recorder won {wins}), {len(RECORDS)} states kept "
        f"in {played:.0f} s",
        flush=True,
    )

    evaluators = ["heuristic", "network"]
    names = [] if args.model == "none" else [m.strip() for m in args.model.split(",") if m.strip()]
    llm_keys = {name: "llm" if len(names) == 1 else f"llm:{name}" for name in names}
    for name in names:
        key = llm_keys[name]
        evaluators.insert(len(evaluators) - 2, key)
        model = make_model(name, **({"threads": args.threads} if args.threads else {}))
        start = time.perf_counter()
        for record in RECORDS:
            scores = model.score_batch([ScoreRequest(record["messages"], record["buckets"])])[0]
            record[key] = scores.expectation(BUCKET_VALUES) / (len(BUCKET_VALUES) - 1)
            record[f"{key}_mode"] = int(np.argmax(scores.logprobs))
        scored = time.perf_counter() - start
        print(f"{name}: scored {len(RECORDS)} value prompts in {scored:.0f} s", flush=True)
        del model

    kept = [r for r in RECORDS if r["battle"] in outcome]
    labels = np.array([outcome[r["battle"]] for r in kept])
    groups = np.array([r["battle"] for r in kept])
    summary: dict[str, Any] = {
        "battles": len({r["battle"] for r in kept}),
        "states": len(kept),
        "won_states": int(labels.sum()),
        "model": args.model,
        "seed": args.seed,
    }
    values = {name: np.array([r[name] for r in kept], dtype=float) for name in evaluators}
    draws = bootstrap_auc(values, labels, groups, args.bootstrap, args.seed)
    for name in evaluators:
        low, high = interval(draws[name])
        summary[name] = {
            "auc": roc_auc(values[name], labels),
            "auc_95": [low, high],
            "mean": float(values[name].mean()),
            "std": float(values[name].std()),
        }
        print(f"{name:9s}  AUC {summary[name]['auc']:.3f} [{low:.3f}, {high:.3f}]  "
              f"mean {values[name].mean():.3f}  std {values[name].std():.3f}")  # fmt: skip
    difference = summary["network"]["auc"] - summary["heuristic"]["auc"]
    low, high = interval(draws["network"] - draws["heuristic"])
    summary["auc_network_minus_heuristic"] = {"value": difference, "95": [low, high]}
    print(f"AUC network - heuristic = {difference:+.3f} [{low:+.3f}, {high:+.3f}] (paired)")
    keys = list(llm_keys.values())
    for key in keys[1:]:
        difference = summary[key]["auc"] - summary[keys[0]]["auc"]
        low, high = interval(draws[key] - draws[keys[0]])
        summary[f"auc_{key}_minus_{keys[0]}"] = {"value": difference, "95": [low, high]}
        print(f"AUC {key} - {keys[0]} = {difference:+.3f} [{low:+.3f}, {high:+.3f}] (paired)")
    pairs = [(k, other) for k in keys for other in ("heuristic", "network")]
    for first, second in [*pairs, ("heuristic", "network")]:
        rho = float(np.corrcoef(_ranks(values[first]), _ranks(values[second]))[0, 1])
        summary[f"spearman_{first}_{second}"] = rho
        print(f"Spearman({first}, {second}) = {rho:.3f}")
    for key in keys:
        modes = np.bincount([r[f"{key}_mode"] for r in kept], minlength=len(BUCKET_VALUES))
        summary[f"{key}_modal_bucket_counts"] = modes.tolist()
        print(f"{key}: most likely bucket per state (0-9): {modes.tolist()}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        states = [{k: v for k, v in r.items() if k != "messages"} for r in kept]
        Path(args.out).write_text(json.dumps({"summary": summary, "states": states}, indent=1))


def _ranks(values: np.ndarray) -> np.ndarray:
    order = values.argsort(kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(len(values))
    return ranks


if __name__ == "__main__":
    main()
