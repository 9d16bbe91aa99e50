"""Prompt tokens a decision computes with each prompt layout, under a prefix cache.

Plays ``--battles`` battles on the embedded simulator with random legal choices and, at
each of side 0's decisions, builds the action prompt of both layouts of
:class:`pokegym.text.BattlePrompter` (``turn``: the description made anew each turn;
``battle``: append-only across the battle). Each layout's prompts are tokenized with the
model's chat template and run through a prefix cache like the ``transformers``
backend's (the ``--prefixes`` most recent prompts, longest shared token prefix reused);
it prints the prompt length and the tokens left to compute per decision, and their
ratio. No model is run unless ``--time`` is given: then each layout has its own model
instance (its own prefix cache), the two score every decision's prompt one after the
other (the same load for both), and the seconds per decision are printed as well.

    pokegym bench prompt_layouts --battles 3
    pokegym bench prompt_layouts --battles 1 --time --format gen9ou
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from pokegym.actions import ActionCodec
from pokegym.backends.sim import SimBattleSession
from pokegym.formats import resolve_format
from pokegym.llm import make_model
from pokegym.llm.transformers_backend import _common_length
from pokegym.match import random_play_views
from pokegym.showdown.simulator import shared_simulator
from pokegym.teams import builtin_pool
from pokegym.text import BattlePrompter
from pokegym.text.prompts import LAYOUTS


class PrefixCache:
    """The token bookkeeping of a prefix cache: which part of a prompt is new."""

    def __init__(self, size: int):
        self.size, self.entries = size, []  # type: ignore[var-annotated]

    def computed(self, ids: Sequence[int]) -> int:
        # The backend's rule: the longest shared prefix, the last token always computed.
        reuse = max((min(_common_length(e, ids), len(ids) - 1) for e in self.entries), default=0)
        self.entries = [*self.entries, list(ids)][-self.size :]
        return len(ids) - reuse


def decisions(fmt_name: str, seed: int) -> Iterator[Any]:
    """Side 0's views before each of its decisions in one battle of random legal play."""
    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format(fmt_name, simulator=sim)
    teams: list[str | None] = [None, None]
    if not fmt.random_teams:
        pool = builtin_pool(fmt_name)
        rng = np.random.default_rng(seed)
        picks = rng.choice(len(pool.teams), size=2, replace=False)
        teams = [pool.teams[int(i)].text for i in picks]
    session = SimBattleSession(sim, fmt, teams=teams, seeds=(seed, seed + 1, seed + 2))
    codec = ActionCodec(fmt.gimmick)
    try:
        for view in random_play_views(session, codec, np.random.default_rng(seed)):
            yield view, codec
    finally:
        session.close()


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    mean, median = statistics.fmean(values), statistics.median(values)
    return f"mean {mean:7.1f}  median {median:7.1f}  p95 {p95:7.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--battles", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument("--prefixes", type=int, default=4, help="prompts the cache keeps")
    parser.add_argument("--knowledge", action="store_true", help="add game knowledge")
    parser.add_argument("--time", action="store_true", help="run the model on every prompt")
    parser.add_argument("--decisions", type=int, default=0, help="stop after N (0: no cap)")
    args = parser.parse_args(argv)
    if args.battles < 1 or args.prefixes < 1:
        parser.error("--battles and --prefixes must be at least 1")

    models = {layout: make_model(args.model) for layout in (LAYOUTS if args.time else LAYOUTS[:1])}
    tokenizer = models[LAYOUTS[0]]
    if args.time:
        for model in models.values():
            model.max_prefixes = args.prefixes  # type: ignore[attr-defined]
    caches = {layout: PrefixCache(args.prefixes) for layout in LAYOUTS}
    prompt_tokens: dict[str, list[float]] = {layout: [] for layout in LAYOUTS}
    computed: dict[str, list[float]] = {layout: [] for layout in LAYOUTS}
    seconds: dict[str, list[float]] = {layout: [] for layout in LAYOUTS}
    for battle in range(args.battles):
        prompters: dict[str, BattlePrompter] = {}
        for view, codec in decisions(args.format, args.seed + 10 * battle):
            if args.decisions and len(computed["turn"]) >= args.decisions:
                break
            for layout in LAYOUTS:
                prompter = prompters.get(layout)
                if prompter is None:
                    prompter = prompters[layout] = BattlePrompter(
                        knowledge=args.knowledge, codec=codec, layout=layout
                    )
                    prompter.attach(view)
                messages, actions = prompter.action_prompt(view)
                ids = tokenizer.tokenize(tokenizer.render(messages))  # type: ignore[attr-defined]
                prompt_tokens[layout].append(len(ids))
                computed[layout].append(caches[layout].computed(ids))
                if args.time:
                    began = time.perf_counter()
                    models[layout].score(messages, [a.label for a in actions])
                    seconds[layout].append(time.perf_counter() - began)
    n = len(computed[LAYOUTS[0]])
    print(f"{args.format}, {args.battles} battle(s), {n} decisions, knowledge={args.knowledge}, "
          f"a prefix cache of {args.prefixes} prompts, tokens of {args.model}")  # fmt: skip
    for layout in LAYOUTS:
        print(f"{layout:>6}: prompt tokens   {summary(prompt_tokens[layout])}")
        print(f"{'':>6}  computed tokens {summary(computed[layout])}")
        if args.time:
            print(f"{'':>6}  seconds         {summary(seconds[layout])}")
    ratio = statistics.fmean(computed["turn"]) / statistics.fmean(computed["battle"])
    print(f"computed tokens per decision, turn / battle: {ratio:.2f}x")
    if args.time:
        ratio = statistics.fmean(seconds["turn"]) / statistics.fmean(seconds["battle"])
        print(f"seconds per decision, turn / battle: {ratio:.2f}x (measured in this run)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
