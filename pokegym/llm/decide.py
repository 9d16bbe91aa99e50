"""Turning a model into a decision that is always legal.

:func:`choose` picks one of a list of labelled options (legal actions, score
buckets) and never returns anything else:

1. *reasoning* (optional, ``reasoning=True``): the model first writes a short
   free-text analysis (bounded by ``reasoning_tokens``); it becomes the beginning of
   the answer, so the choice is conditioned on it. Its cost is reported apart.
2. *the answer*: by **scoring** (``method="score"``, default: the log-probability of
   every option in one batched pass; cannot be malformed) or by **generation**
   (``method="generate"``: a JSON answer ``{"choice": <option>}``; backends that can,
   constrain decoding to the legal answers).
3. *repair*: a malformed or illegal generated answer is sent back with the problem
   (at most ``max_repairs`` times).
4. *fallback*: when every attempt failed (or the backend raised), the deterministic
   ``fallback`` option (an index, or a function of the options) is returned, and the
   decision says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pokegym.llm.base import (
    AnswerFormatError,
    Cost,
    LanguageModel,
    LLMError,
    Message,
    Scores,
    check_options,
)
from pokegym.llm.schema import validate

REASONING_INSTRUCTION = (
    "First think step by step in a few short sentences about the options. "
    "Do not give the final answer yet."
)
ANSWER_CUE = "Answer:"

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@dataclass
class Decision:
    """What :func:`choose` decided and what it cost."""

    index: int
    option: str
    method: Literal["score", "generate", "fallback"]
    cost: Cost
    reasoning: str | None = None
    reasoning_cost: Cost = field(default_factory=Cost)
    repairs: int = 0
    errors: list[str] = field(default_factory=list)
    scores: Scores | None = None

    @property
    def used_fallback(self) -> bool:
        return self.method == "fallback"


def choice_schema(options: Sequence[str], key: str = "choice") -> dict[str, Any]:
    """The JSON schema of an answer that picks one option."""
    return {
        "type": "object",
        "properties": {key: {"type": "string", "enum": list(options)}},
        "required": [key],
        "additionalProperties": False,
    }


def parse_json_answer(text: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object in a model's answer, validated against ``schema``.

    Accepts a bare object, one inside a Markdown code fence, or the first ``{...}``
    span of the text.

    Raises:
        AnswerFormatError: no JSON object, or one that breaks the schema (the message
            says what is wrong, ready to be sent back as a repair request).
    """
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    value: Any = None
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            break
    if not isinstance(value, dict):
        raise AnswerFormatError(f"the answer is not a JSON object: {text[:200]!r}")
    problem = validate(value, schema)
    if problem:
        raise AnswerFormatError(f"the JSON answer is invalid: {problem}")
    return value


def _with_reasoning(prompt: Sequence[Message], reasoning: str) -> list[dict[str, str]]:
    messages = [dict(m) for m in prompt]
    messages.append({"role": "assistant", "content": f"{reasoning.strip()}\n{ANSWER_CUE}"})
    return messages


def _fallback_index(fallback: int | Callable[[list[str]], int], options: list[str]) -> int:
    index = fallback(options) if callable(fallback) else fallback
    if not 0 <= int(index) < len(options):
        raise ValueError(f"fallback index {index} is not one of the {len(options)} options")
    return int(index)


def choose(
    model: LanguageModel,
    prompt: Sequence[Message],
    options: Sequence[str],
    *,
    method: Literal["score", "generate"] = "score",
    reasoning: bool = False,
    reasoning_tokens: int = 200,
    normalize: bool = False,
    max_repairs: int = 1,
    max_tokens: int = 64,
    fallback: int | Callable[[list[str]], int] = 0,
    temperature: float = 0.0,
    seed: int | None = None,
) -> Decision:
    """Pick one of ``options`` for the chat ``prompt`` (see the module docstring).

    The prompt should list the options with the exact texts given here. With
    ``method="score"`` the options are scored as the beginning of the answer (after
    the reasoning and ``Answer:`` when reasoning). ``normalize`` divides each option's
    log-probability by its number of tokens.
    """
    options = check_options(options)
    fallback_index = _fallback_index(fallback, options)
    if method not in ("score", "generate"):
        raise ValueError(f"method is 'score' or 'generate', got {method!r}")
    messages = [dict(m) for m in prompt]
    total = Cost()
    errors: list[str] = []
    thought: str | None = None
    thought_cost = Cost()
    try:
        if reasoning:
            asked = [*messages, {"role": "user", "content": REASONING_INSTRUCTION}]
            completion = model.complete(
                asked, max_tokens=reasoning_tokens, temperature=temperature, seed=seed
            )
            thought, thought_cost = completion.text, completion.cost
            total = total + completion.cost
            messages = _with_reasoning(messages, thought)
        if method == "score":
            labels = [f" {o}" for o in options] if reasoning else options
            scores = model.score(messages, labels)
            scores.options = options
            total = total + scores.cost
            index = scores.best(normalize=normalize)
            return Decision(
                index, options[index], "score", total, thought, thought_cost, scores=scores
            )
        schema = choice_schema(options)
        request = messages
        for attempt in range(max_repairs + 1):
            completion = model.complete(
                request,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                json_schema=schema,
            )
            total = total + completion.cost
            try:
                answer = parse_json_answer(completion.text, schema)
            except AnswerFormatError as error:
                errors.append(str(error))
                request = [
                    *request,
                    {"role": "assistant", "content": completion.text},
                    {
                        "role": "user",
                        "content": f"That answer is invalid ({error}). Reply with only a JSON "
                        f'object {{"choice": ...}} whose value is one of: '
                        + ", ".join(json.dumps(o) for o in options),
                    },
                ]
                continue
            index = options.index(answer["choice"])
            return Decision(
                index, options[index], "generate", total, thought, thought_cost, attempt, errors
            )
    except LLMError as error:
        errors.append(f"{type(error).__name__}: {error}")
    return Decision(
        fallback_index,
        options[fallback_index],
        "fallback",
        total,
        thought,
        thought_cost,
        repairs=max(0, len(errors) - 1),
        errors=errors,
    )
