"""``distilled``: a search with the distilled value network at its leaves, as a named preset.

``search=mcts`` (the default) is the ``mcts`` agent (:class:`~policies.mcts_agent.MCTSPolicy`)
with the options of :data:`DISTILLED_MCTS`; ``search=maximin`` is the depth-2 maximin with
the network's roles (:class:`~policies.minimax.DistilledPolicy`). Either is built by
:func:`make_distilled`, the name the ``distilled`` agent is registered under.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from policies.mcts_agent import MCTSOptions, MCTSPolicy
from policies.minimax import DistilledOptions, DistilledPolicy, PriorProposer

SEARCHES = ("mcts", "maximin")
"""The searches the ``distilled`` agent can run (``search=``)."""

DISTILLED_MCTS: dict[str, Any] = {
    "evaluator": "auto",
    "prior": "heuristic",
    "anchor": "abyssal",
    "model_reply_turns": 1,
}
"""The ``mcts`` options the ``distilled`` agent uses by default (``search=mcts``).

``model_reply_turns=1``: at the root the opponent draws its action from the damage prior
instead of maximising, so the search answers the opponent it predicts rather than the
opponent's best reply (what that gains, paired against the search without it: docs/results.md,
"Search").
``distilled:model_reply_turns=0`` is the search without it."""


def make_distilled(search: str = "mcts", **options: Any) -> Any:
    """The ``distilled`` agent: a search with the distilled value network at its leaves.

    ``search=mcts`` (the default): :class:`~policies.mcts_agent.MCTSPolicy` with
    :data:`DISTILLED_MCTS` (any of its options can be given, e.g. ``budget=1``);
    ``search=maximin``: the depth-2 maximin of :class:`DistilledPolicy` (its options).
    """
    if search == "maximin":
        return DistilledPolicy(**options)
    if search != "mcts":
        raise ValueError(f"search is one of {', '.join(SEARCHES)}, not {search!r}")
    mcts_options = {f.name for f in dataclasses.fields(MCTSOptions)} | {"seed"}
    maximin_options = {f.name for f in dataclasses.fields(DistilledOptions)} | {"seed"}
    maximin_only = sorted((set(options) - mcts_options) & maximin_options)
    if maximin_only:
        named = ", ".join(maximin_only)
        verb = "is an option" if len(maximin_only) == 1 else "are options"
        raise ValueError(
            f"{named} {verb} of the maximin search: "
            f"write distilled:search=maximin,{maximin_only[0]}=<value>"
        )
    merged = {**DISTILLED_MCTS, **options}
    no_prior = merged.get("prior") in ("none", None)
    if "model_reply_turns" not in options and no_prior and not merged.get("opponent_model"):
        merged["model_reply_turns"] = 0  # prior=none: no prediction to answer
    return MCTSPolicy(**merged)


__all__ = [
    "DISTILLED_MCTS",
    "SEARCHES",
    "DistilledOptions",
    "DistilledPolicy",
    "PriorProposer",
    "make_distilled",
]
