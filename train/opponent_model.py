"""``pokegym train opponent``: fit the opponent model of the search from real battles.

Two steps (:mod:`policies.opponent_model` says what the model is):

``collect``
    plays a round robin of the ``--agents`` on the simulator (``pokegym compare``'s arena)
    and keeps, for every turn both players choose, each player's decision *as the other
    chair sees it*: the world-model position the watcher's belief guesses (its modal
    determinization), the legal actions of the player there with their features, the
    action the player chose (when the guess has it: a Pokémon not yet seen or a move not
    yet guessed is left out, and counted), and the damage prior's probabilities for the
    same actions (to compare with). One JSON line per decision in ``--out``.

``fit``
    fits the weights by maximum likelihood (L-BFGS, a small L2 penalty) on the decisions
    of some players and reports the log-loss and top-1 accuracy of the fitted model, the
    damage prior and a uniform guess, on held-out battles (every ``--hold-every``-th battle
    of each pair) and on each player left out with ``--exclude`` (players the model never
    saw). The model is written as JSON (``--out``).

    pokegym train opponent collect --agents abyssal,simple_heuristics,one_step,max_power \\
        --battles 40 --seed 7 --out runs/opponent/decisions.jsonl
    pokegym train opponent fit runs/opponent/decisions.jsonl --exclude abyssal \\
        --out runs/opponent/without-abyssal.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pokegym.arena import Arena, ArenaConfig
from pokegym.world.data import load_dex
from pokegym.world.transition import TransitionModel
from policies.core.action_prior import HeuristicPrior
from policies.core.battle import decision_state, legal_actions
from policies.opponent_model import FEATURES, ActionFeatures, OpponentModel, softmax
from policies.opponent_view import reply_action


class DecisionRecorder(Arena):
    """An arena that writes each player's decisions as the other chair sees them."""

    def __init__(self, config: ArenaConfig, out: Any):
        super().__init__(config)
        self.out = out
        self.counts: Counter[str] = Counter()
        self._chosen: list[tuple[int, Any]] = []  # this turn's (watcher, order)
        self._roles: dict[int, tuple[TransitionModel, ActionFeatures, HeuristicPrior]] = {}

    def _roles_for(self, gen: int) -> tuple[TransitionModel, ActionFeatures, HeuristicPrior]:
        roles = self._roles.get(gen)
        if roles is None:
            model = TransitionModel(load_dex(gen))
            roles = self._roles[gen] = (model, ActionFeatures(model), HeuristicPrior(model))
        return roles

    def _choose(self, slot: Any, side: int, battle: Any) -> Any:
        order = super()._choose(slot, side, battle)
        session = slot.session
        other = 1 - side
        # A turn both players choose (not a forced switch, not team preview): kept, as the
        # other chair sees it, once both have chosen (outside the time of either decision).
        if session.needs_choice(other) and not session.battles[other].teampreview:
            self._chosen.append((other, order))
        return order

    def _decide(self, slot: Any) -> dict[int, str]:
        self._chosen = []
        choices = super()._decide(slot)
        for watcher, order in self._chosen:
            self._record(slot, watcher, order)
        return choices

    def _record(self, slot: Any, watcher: int, order: Any) -> None:
        battle = slot.session.battles[watcher]
        model, features, damage = self._roles_for(battle.gen)
        state = decision_state(battle, model.dex)
        actions = legal_actions(model, state, 1)
        action = reply_action(order, battle)
        self.counts["decisions"] += 1
        if action is None or action not in actions:
            self.counts["not in the guessed position"] += 1
            return
        if len(actions) == 1:
            self.counts["one legal action"] += 1
            return
        pair, index = slot.task
        row = {
            "player": slot.names[1 - watcher],
            "watcher": slot.names[watcher],
            "pair": list(pair),
            "battle": index,
            "turn": battle.turn,
            "actions": [list(a) for a in actions],
            "chosen": actions.index(action),
            "features": [[round(x, 5) for x in r] for r in features.features(state, 1, actions)],
            "damage_prior": [round(p, 6) for p in damage.prior(state, 1, actions)],
        }
        self.out.write(json.dumps(row) + "\n")
        self.counts["kept"] += 1


def collect(agents: list[str], battles: int, seed: int, fmt: str, out: Path) -> Counter[str]:
    """Play the round robin and write the decisions to ``out`` (appended)."""
    config = ArenaConfig(agents=agents, battle_format=fmt, battles_per_pair=battles, seed=seed,
                         concurrency=1, clock_bank=None)  # fmt: skip
    arena = DecisionRecorder(config, None)  # checks the agents before a file is made
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        handle = out.open("a")
    except BaseException:
        arena.close()  # its simulators
        raise
    with handle:
        arena.out = handle
        arena.run()
    return arena.counts


def read_decisions(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        with open(path) as handle:
            rows.extend(json.loads(line) for line in handle if line.strip())
    return rows


def fit_weights(rows: Sequence[dict[str, Any]], l2: float = 1e-3) -> list[float]:
    """Maximum-likelihood weights of the conditional logit (L-BFGS, ``l2`` per decision)."""
    import torch

    width = max(len(r["features"]) for r in rows)
    x = torch.zeros(len(rows), width, len(FEATURES), dtype=torch.float64)
    mask = torch.full((len(rows), width), -math.inf, dtype=torch.float64)
    for i, row in enumerate(rows):
        n = len(row["features"])
        x[i, :n] = torch.tensor(row["features"], dtype=torch.float64)
        mask[i, :n] = 0.0
    chosen = torch.tensor([r["chosen"] for r in rows])
    w = torch.zeros(len(FEATURES), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([w], max_iter=500, tolerance_grad=1e-9,
                                  line_search_fn="strong_wolfe")  # fmt: skip

    def loss() -> torch.Tensor:
        optimizer.zero_grad()
        logits = x @ w + mask
        value = torch.nn.functional.cross_entropy(logits, chosen) + l2 * (w * w).sum()
        value.backward()
        return value

    optimizer.step(loss)
    return [float(v) for v in w.detach()]


def scores(rows: Sequence[dict[str, Any]], weights: Sequence[float] | None) -> dict[str, float]:
    """Mean log-loss and top-1 accuracy of the model (``weights``), the damage prior and a
    uniform guess on ``rows``."""
    out: dict[str, float] = {"decisions": float(len(rows))}
    if not rows:
        return out
    kinds: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in rows:
        n, k = len(row["features"]), row["chosen"]
        guesses = {"uniform": [1.0 / n] * n, "damage_prior": row["damage_prior"]}
        if weights is not None:
            guesses["model"] = softmax([sum(w * v for w, v in zip(weights, r, strict=True))
                                        for r in row["features"]])  # fmt: skip
        for name, p in guesses.items():
            best = max(p)
            ties = [i for i in range(n) if p[i] >= best - 1e-12]
            # top-1 accuracy with ties broken at random: its expected value
            kinds[name].append((-math.log(max(p[k], 1e-12)), (k in ties) / len(ties)))
    for name, results in kinds.items():
        out[f"{name}_logloss"] = sum(r[0] for r in results) / len(results)
        out[f"{name}_top1"] = sum(r[1] for r in results) / len(results)
    return out


def fit(paths: list[Path], exclude: list[str], hold_every: int, l2: float,
        out: Path) -> dict[str, Any]:  # fmt: skip
    """Fit on the decisions of the players not excluded (held-out battles aside), write the
    model to ``out`` and return the report."""
    rows = read_decisions(paths)
    if not rows:
        raise SystemExit(f"no decisions in {', '.join(map(str, paths))}: run `collect` first")
    seen = [r for r in rows if r["player"] not in exclude]
    train = [r for r in seen if r["battle"] % hold_every != 0]
    held = [r for r in seen if r["battle"] % hold_every == 0]
    if not train:
        raise SystemExit("no decisions left to fit on: fewer --exclude, or collect more")
    weights = fit_weights(train, l2)
    report: dict[str, Any] = {"train": scores(train, weights), "held_out_battles": {}}
    for player in sorted({r["player"] for r in rows}):
        mine = [r for r in (held if player not in exclude else rows) if r["player"] == player]
        key = "never_seen" if player in exclude else "held_out_battles"
        report.setdefault(key, {})[player] = scores(mine, weights)
    provenance = {
        "players": sorted({r["player"] for r in seen}),
        "excluded": sorted(exclude),
        "decisions": len(train),
        "data": [p.name for p in paths],
        "l2": l2,
        "held_out": f"every {hold_every}th battle of each pair",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(OpponentModel(tuple(weights), provenance).to_json() + "\n")
    report["weights"] = dict(zip(FEATURES, (round(w, 3) for w in weights), strict=True))
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pokegym train opponent",
        description="Fit the search's opponent model from real battles: collect, then fit.",
    )
    steps = parser.add_subparsers(dest="step", required=True)
    c = steps.add_parser("collect", help="play battles and keep each player's decisions")
    c.add_argument("--agents", default="abyssal,simple_heuristics,one_step,max_power")
    c.add_argument("--battles", type=int, default=40, help="battles per pair")
    c.add_argument("--seed", type=int, default=7)
    c.add_argument("--format", default="gen9randombattle")
    c.add_argument("--out", type=Path, required=True, help="decisions (JSON lines, appended)")
    f = steps.add_parser("fit", help="fit the model on collected decisions")
    f.add_argument("decisions", type=Path, nargs="+")
    f.add_argument("--exclude", default="", help="players left out of the fit (comma-separated)")
    f.add_argument("--hold-every", type=int, default=5,
                   help="every N-th battle of each pair is held out of the fit")  # fmt: skip
    f.add_argument("--l2", type=float, default=1e-3)
    f.add_argument("--out", type=Path, required=True, help="the model (JSON)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.step == "collect":
        agents = [a for a in args.agents.split(",") if a]
        if len(agents) < 2 or args.battles < 1:
            print("error: give at least two --agents and --battles >= 1", file=sys.stderr)
            return 2
        counts = collect(agents, args.battles, args.seed, args.format, args.out)
        print(json.dumps(dict(counts)))
        print(f"decisions: {args.out}")
        return 0
    missing = [str(p) for p in args.decisions if not p.is_file()]
    if missing:
        print(f"error: no decisions file {', '.join(missing)}: run `pokegym train opponent "
              "collect --out FILE` first", file=sys.stderr)  # fmt: skip
        return 2
    if args.hold_every < 2:
        print("error: --hold-every is at least 2 (every N-th battle held out)", file=sys.stderr)
        return 2
    exclude = [p for p in args.exclude.split(",") if p]
    report = fit(args.decisions, exclude, args.hold_every, args.l2, args.out)
    print(json.dumps(report, indent=1))
    print(f"model: {args.out}  (use it as distilled:opponent_model={args.out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
