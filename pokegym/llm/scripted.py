"""A backend that replays given answers: for unit tests of agents and of this layer.

Completions are returned in order; scores come from a list (one entry per ``score``
call: a mapping option -> log-probability, or a list in option order) or from a
function of ``(prefix, options)``. Every prompt it receives is kept in ``prompts``
so tests can check what an agent sent. Token counts are whitespace word counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pokegym.llm.base import (
    Completion,
    Cost,
    LLMError,
    Prompt,
    ScoreRequest,
    Scores,
    check_options,
)

ScoreScript = Mapping[str, float] | Sequence[float]


def _words(prompt: Prompt) -> int:
    if isinstance(prompt, str):
        return len(prompt.split())
    return sum(len(m["content"].split()) for m in prompt)


class ScriptedModel:
    """Replays ``completions`` and ``scores``; raises :class:`LLMError` when they run out.

    Args:
        completions: answers for successive ``complete`` calls.
        scores: log-probabilities for successive ``score`` requests, or a function
            ``(prefix, options) -> list of log-probabilities``. An option missing from
            a mapping gets ``missing``.
    """

    backend = "scripted"

    def __init__(
        self,
        completions: Sequence[str] = (),
        scores: Sequence[ScoreScript] | Callable[[Prompt, list[str]], Sequence[float]] = (),
        *,
        name: str = "scripted",
        missing: float = -100.0,
    ):
        self.name = name
        self._completions = list(completions)
        self._scores = scores if callable(scores) else list(scores)
        self.missing = missing
        self.prompts: list[Prompt] = []

    def complete(
        self,
        messages: Prompt,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        start = time.perf_counter()
        self.prompts.append(messages)
        if not self._completions:
            raise LLMError("The scripted model has no completion left to replay.")
        text = self._completions.pop(0)
        words = text.split()
        finish = "length" if len(words) > max_tokens else "stop"
        text = " ".join(words[:max_tokens]) if finish == "length" else text
        cost = Cost(
            tokens_in=_words(messages),
            tokens_out=min(len(words), max_tokens),
            calls=1,
            seconds=time.perf_counter() - start,
        )
        return Completion(text=text, cost=cost, finish_reason=finish)

    def score(self, prefix: Prompt, options: Sequence[str]) -> Scores:
        start = time.perf_counter()
        options = check_options(options)
        self.prompts.append(prefix)
        if callable(self._scores):
            values = [float(v) for v in self._scores(prefix, options)]
        else:
            if not self._scores:
                raise LLMError("The scripted model has no scores left to replay.")
            script = self._scores.pop(0)
            if isinstance(script, Mapping):
                values = [float(script.get(o, self.missing)) for o in options]
            else:
                values = [float(v) for v in script]
        if len(values) != len(options):
            raise LLMError(f"scripted scores give {len(values)} values for {len(options)} options")
        cost = Cost(tokens_in=_words(prefix), calls=1, seconds=time.perf_counter() - start)
        return Scores(options, values, [len(o.split()) for o in options], cost)

    def score_batch(self, requests: Sequence[ScoreRequest]) -> list[Scores]:
        return [self.score(r.prefix, r.options) for r in requests]
