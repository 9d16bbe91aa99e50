"""Seconds to score a decision's options on a prompt the model already has in its cache.

Loads a local model (``qwen-0.5b`` by default, in the dtype chosen for this CPU), scores
nine action labels once on a prompt of about ``--tokens`` tokens (which fills the prefix
cache), then ``--tries`` more times: those calls compute only the options' own tokens, so
their time is the cost of scoring the options over a long cached prompt. Run it on two
commits to compare how the backend scores options (what docs/llm.md reports).

    pokegym bench llm_scoring --tokens 3500
"""

from __future__ import annotations

import argparse
import statistics
import time

from pokegym.llm import make_model

LABELS = [
    "move Thunderbolt", "move Volt Switch", "move Grass Knot", "move Nasty Plot",
    "terastallize and move Thunderbolt", "terastallize and move Volt Switch",
    "switch Garchomp", "switch Toxapex", "switch Iron Valiant",
]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument("--tokens", type=int, default=3500, help="about this many in the prompt")
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.tokens < 10 or args.tries < 1:
        parser.error("--tokens is at least 10 and --tries at least 1")

    model = make_model(args.model, **({"threads": args.threads} if args.threads else {}))
    prompt = [{"role": "user", "content": " ".join(f"word{i}" for i in range(args.tokens // 4))}]
    first = model.score(prompt, LABELS)
    length = first.cost.tokens_in + first.cost.cached_tokens
    times = []
    for _ in range(args.tries):
        began = time.perf_counter()
        scores = model.score(prompt, LABELS)
        times.append(time.perf_counter() - began)
    print(f"{args.model}: a {length}-token cached prompt, {len(LABELS)} options "
          f"({scores.cost.tokens_in} option tokens computed): "
          f"median {statistics.median(times):.3f} s over {args.tries} calls")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
