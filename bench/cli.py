"""``pokegym bench NAME [options]``: run one of the project's benchmarks (list: their names)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from pokegym.errors import PokegymError

# Each benchmark: its module below ``bench`` and what it measures (one line).
BENCHMARKS = {
    "env": "env steps/s against poke-env's own Gymnasium wrapper",
    "arena": "arena battles/s against poke-env's battle_against",
    "calc": "the damage calculator against every real hit of recorded battles",
    "worldmodel": "the transition model against real turns; Python against the compiled build",
    "llm": "scoring an LLM's options against generating text",
    "memory_latency": "experience-memory query latency at 10^4..10^6 entries",
    "ppo_throughput": "PPO training throughput next to the bare vector env",
    "web_play": "`pokegym play --web` in real browsers: paint, click latency, sessions",
    "budget_curve": "win rate against the search's time budget, from paired runs",
    "decision_digest": "one sha256 over the search agents' orders on a recorded battle",
    "llm_clock": "LLM agents on Showdown's turn clock, beside CPU hogs",
    "llm_scoring": "seconds to score a decision's options on a cached prompt",
    "llm_threads": "one prompt scored with one torch thread and with all of them",
    "llm_value_probe": "how much each leaf evaluator knows about who wins",
    "memory_value": "whether the experience memory knows who wins better than its network",
    "opponent_oracle": "what knowing the opponent would be worth to the distilled agent",
    "evaluation_fit": "poke-engine's evaluation terms fitted to how recorded battles ended",
    "engine_oracle": "what knowing the opponent's whole team would be worth to the engine agent",
    "belief_accuracy": "how often the belief's guesses of the seen Pokémon's sets are right",
    "opponent_prediction": "how well the engine's search and the fitted prior predict the opponent",
    "paired": "variants of one agent on the same battles: rates and paired differences",
    "prompt_layouts": "prompt tokens a decision computes with each layout under a prefix cache",
    "search_budget": "how much search fits in a decision at the agent's time budget",
    "search_speed": "MCTS iterations per CPU second on recorded states, per speed-up",
    "value_by_action": "the search's value of each decision against how the battle ended",
}


class UnknownBenchmarkError(PokegymError):
    """``pokegym bench`` was given a name that is not a benchmark."""


def listing() -> str:
    width = max(map(len, BENCHMARKS))
    return "\n".join(f"  {name:<{width}}  {what}" for name, what in BENCHMARKS.items())


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("list", "-h", "--help"):
        print("pokegym bench NAME [options]   (NAME --help for a benchmark's options)\n")
        print(listing())
        return 0
    name, rest = args[0], args[1:]
    if name not in BENCHMARKS:
        raise UnknownBenchmarkError(
            f"no benchmark named {name!r}; `pokegym bench list` names them: {', '.join(BENCHMARKS)}"
        )
    module = importlib.import_module(f"bench.{name}")
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
