"""What every language-model backend offers: ``complete`` and ``score``, each with its cost.

A backend is anything that satisfies :class:`LanguageModel`. Agents never import a
backend module; they receive a model object (built with :func:`pokegym.llm.make_model`)
and call:

- ``complete(messages, max_tokens=..., temperature=..., seed=..., json_schema=None)``:
  free generation (optionally constrained to a JSON schema) -> :class:`Completion`;
- ``score(prefix, options)``: log-probabilities of labelled continuations of one
  shared prefix (legal actions, score buckets) -> :class:`Scores`;
- ``score_batch(requests)``: many ``(prefix, options)`` requests in one batched
  pass, sharing whatever prefix they have in common (e.g. the leaves of a search).

Every answer carries a :class:`Cost`: tokens in and out, calls and seconds.

**Deadlines.** Inside ``with call_deadline(at):`` (``at`` a ``time.monotonic()``
instant; the agents set it to their decision's deadline) a backend that supports it
stops a call that runs past ``at`` and raises :class:`DeadlineExceededError`: the
``transformers`` backend between chunks of the prompt, between generated tokens and
between scoring batches; ``openai`` by shortening the request's timeout. Backends that
do not know about deadlines ignore it.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pokegym.errors import PokegymError

#: A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``.
Message = Mapping[str, str]
#: A prompt: raw text (used as is) or chat messages (rendered with the model's chat
#: template, ending with the header of the assistant's answer).
Prompt = str | Sequence[Message]


class LLMError(PokegymError):
    """Base class of the errors of the language-model layer."""


class ModelBundleError(LLMError):
    """An offline model bundle is missing, incomplete or not the file it should be."""


class BundleChecksumError(ModelBundleError):
    """The assembled weight file does not have the sha256 the bundle promises."""


class ConvertedModelError(ModelBundleError):
    """A bundle's converted checkpoint folder differs from what its conversion wrote."""


class EndpointError(LLMError):
    """An HTTP model endpoint could not be reached or answered with an error."""


class AnswerFormatError(LLMError, ValueError):
    """A model's answer does not have the required format (bad JSON, illegal choice)."""


class BackendNotAvailableError(LLMError):
    """A backend's Python packages are not installed."""


class DeadlineExceededError(LLMError):
    """A model call ran past the deadline set by :func:`call_deadline` and was stopped."""


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "pokegym_llm_deadline", default=None
)


@contextlib.contextmanager
def call_deadline(at: float | None) -> Iterator[None]:
    """Model calls inside this block stop at ``at`` (a ``time.monotonic()`` instant;
    None: no deadline). Nested blocks keep the earlier of the two deadlines."""
    outer = _DEADLINE.get()
    if at is not None and outer is not None:
        at = min(at, outer)
    token = _DEADLINE.set(at if at is not None else outer)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current_deadline() -> float | None:
    """The ``time.monotonic()`` instant model calls must end by (None: no deadline)."""
    return _DEADLINE.get()


def seconds_left(clock: Any = time.monotonic) -> float | None:
    """Seconds until the current deadline by ``clock`` (None: no deadline)."""
    at = _DEADLINE.get()
    return None if at is None else at - clock()


@dataclass
class Cost:
    """What one or more model calls cost.

    ``cached_tokens`` are prompt tokens whose keys and values were reused from an
    earlier call instead of being computed again (they are not in ``tokens_in``).
    """

    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens: int = 0
    calls: int = 0
    seconds: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
            self.cached_tokens + other.cached_tokens,
            self.calls + other.calls,
            self.seconds + other.seconds,
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cached_tokens": self.cached_tokens,
            "calls": self.calls,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class Completion:
    """A generated answer."""

    text: str
    cost: Cost
    finish_reason: str = "stop"  # "stop" (end of answer) or "length" (max_tokens reached)


@dataclass
class Scores:
    """Log-probabilities of each option as the continuation of one prefix.

    ``logprobs[i]`` is the sum over the tokens of ``options[i]``; ``n_tokens[i]`` their
    number (divide for a length-normalised score).
    """

    options: list[str]
    logprobs: list[float]
    n_tokens: list[int]
    cost: Cost = field(default_factory=Cost)

    def best(self, *, normalize: bool = False) -> int:
        """Index of the most likely option (the first on ties: deterministic)."""
        values = self.mean_logprobs() if normalize else self.logprobs
        return max(range(len(values)), key=lambda i: (values[i], -i))

    def mean_logprobs(self) -> list[float]:
        return [lp / max(n, 1) for lp, n in zip(self.logprobs, self.n_tokens, strict=True)]

    def probabilities(self, *, normalize: bool = False) -> list[float]:
        """The options' probabilities renormalised over the options (a softmax)."""
        values = self.mean_logprobs() if normalize else self.logprobs
        top = max(values)
        weights = [math.exp(v - top) for v in values]
        total = sum(weights)
        return [w / total for w in weights]

    def expectation(self, values: Sequence[float], *, normalize: bool = False) -> float:
        """Expected value of ``values[i]`` under :meth:`probabilities` (score buckets)."""
        probs = self.probabilities(normalize=normalize)
        return sum(p * v for p, v in zip(probs, values, strict=True))


@dataclass(frozen=True)
class ScoreRequest:
    """One ``(prefix, options)`` scoring request for :meth:`LanguageModel.score_batch`."""

    prefix: Prompt
    options: tuple[str, ...]

    def __init__(self, prefix: Prompt, options: Sequence[str]):
        object.__setattr__(self, "prefix", prefix)
        object.__setattr__(self, "options", tuple(options))


@runtime_checkable
class LanguageModel(Protocol):
    """The model interface every agent uses (see the module docstring)."""

    name: str

    def complete(
        self,
        messages: Prompt,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion: ...

    def score(self, prefix: Prompt, options: Sequence[str]) -> Scores: ...

    def score_batch(self, requests: Sequence[ScoreRequest]) -> list[Scores]: ...


def check_options(options: Sequence[str]) -> list[str]:
    """Options as a list; refuses an empty list, empty strings and duplicates."""
    options = list(options)
    if not options:
        raise ValueError("score() needs at least one option")
    if any(not isinstance(o, str) or not o for o in options):
        raise ValueError("options are non-empty strings")
    if len(set(options)) != len(options):
        raise ValueError("options must be distinct")
    return options
