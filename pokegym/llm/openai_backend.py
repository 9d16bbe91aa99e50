"""Any OpenAI-compatible HTTP endpoint: vLLM, llama.cpp server, Ollama, hosted APIs.

The API key is read from an environment variable at each request (``OPENAI_API_KEY``
unless told otherwise); it is never stored on the object, printed, logged or written
to results. Transport failures (connection refused, timeouts, HTTP 429/5xx) are
retried a bounded number of times; then :class:`~pokegym.llm.base.EndpointError`
says which URL failed and what to check.

Scoring:

- a text prefix uses ``/completions`` with ``echo`` and ``logprobs`` (vLLM and the
  OpenAI completions API support it): exact log-probabilities of every option, all
  options sent as one batched request;
- chat messages use ``/chat/completions`` with ``logprobs``/``top_logprobs`` and one
  generated token: an option gets the log-probability of its first token (options
  should then be short labels whose first tokens differ). Options whose first token is
  not among the top alternatives get ``UNLISTED_LOGPROB``.

llama-cpp-python's server (0.3.36, tested in tests/test_llm_server.py): chat scoring and
``schema_format="json_object"`` work; its echoed prompt log-probabilities are one token
off for models without a BOS token (Qwen), so do not score text prefixes there.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from pokegym.llm.base import (
    Completion,
    Cost,
    DeadlineExceededError,
    EndpointError,
    LLMError,
    Prompt,
    ScoreRequest,
    Scores,
    check_options,
    seconds_left,
)

UNLISTED_LOGPROB = -100.0
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class OpenAIModel:
    """A model behind an OpenAI-compatible endpoint.

    Args:
        model: the model name the server expects.
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (vLLM) or ``http://127.0.0.1:11434/v1``
            (Ollama).
        api_key_env: the environment variable holding the key (unset: no key is sent,
            as local servers expect).
        timeout: seconds per request.
        retries: extra attempts after a transport failure.
        top_logprobs: alternatives asked for when scoring chat prompts.
        schema_format: how a ``json_schema`` is sent: ``"json_schema"`` (OpenAI, vLLM:
            ``{"type": "json_schema", "json_schema": {...}}``) or ``"json_object"``
            (llama-cpp-python's server: ``{"type": "json_object", "schema": {...}}``;
            it refuses the other form).
    """

    backend = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "http://127.0.0.1:8000/v1",
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        retries: int = 2,
        top_logprobs: int = 20,
        name: str | None = None,
        schema_format: str = "json_schema",
    ):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.retries = retries
        self.top_logprobs = top_logprobs
        self.name = name or model
        if schema_format not in ("json_schema", "json_object"):
            raise ValueError(
                f"schema_format is 'json_schema' or 'json_object', got {schema_format!r}"
            )
        self.schema_format = schema_format

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r})"

    # --------------------------------------------------------------- transport
    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/{path}"
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode()
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                pause = min(0.5 * 2 ** (attempt - 1), 4.0)
                left = seconds_left()
                if left is not None and left <= pause:
                    break  # no time for another try: report what failed
                time.sleep(pause)
            timeout = self.timeout
            left = seconds_left()
            if left is not None:
                if left <= 0:
                    raise DeadlineExceededError(
                        f"{self.model}: the call's deadline passed before the request to {url}"
                    )
                timeout = min(timeout, left)
            request = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    return dict(json.loads(response.read()))
            except urllib.error.HTTPError as error:
                detail = error.read()[:300].decode("utf-8", "replace")
                problem = f"HTTP {error.code}: {detail}"
                if error.code not in _RETRY_STATUS:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                reason = getattr(error, "reason", error)
                problem = f"{type(error).__name__}: {reason}"
                left = seconds_left()
                if left is not None and left <= 0:
                    raise DeadlineExceededError(
                        f"{self.model}: {url} did not answer before the call's deadline ({problem})"
                    ) from None
            except json.JSONDecodeError:
                problem = "the answer was not JSON"
                break
        raise EndpointError(
            f"The model endpoint {url} failed ({problem}). Check that the server is running "
            f"and serves model {self.model!r}, and the base URL (it usually ends in /v1)"
            + (f"; the key is read from ${self.api_key_env}." if "401" in problem else ".")
        )

    # ---------------------------------------------------------------- complete
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
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if seed is not None:
            body["seed"] = seed
        if isinstance(messages, str):
            body["prompt"] = messages
            answer = self._post("completions", body)
            choice = answer["choices"][0]
            text = choice.get("text", "")
        else:
            body["messages"] = [dict(m) for m in messages]
            if json_schema is not None and self.schema_format == "json_object":
                body["response_format"] = {"type": "json_object", "schema": dict(json_schema)}
            elif json_schema is not None:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": dict(json_schema)},
                }
            answer = self._post("chat/completions", body)
            try:
                choice = answer["choices"][0]
                text = choice["message"].get("content") or ""
            except (KeyError, IndexError, TypeError):
                raise LLMError(f"The endpoint answered without a choice: {answer!r:.300}") from None
        usage = answer.get("usage") or {}
        cost = Cost(
            tokens_in=int(usage.get("prompt_tokens", 0)),
            tokens_out=int(usage.get("completion_tokens", 0)),
            calls=1,
            seconds=time.perf_counter() - start,
        )
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        return Completion(text=text, cost=cost, finish_reason=finish)

    # ------------------------------------------------------------------- score
    def score(self, prefix: Prompt, options: Sequence[str]) -> Scores:
        options = check_options(options)
        start = time.perf_counter()
        if isinstance(prefix, str):
            scores = self._score_text(prefix, options)
        else:
            scores = self._score_chat(prefix, options)
        scores.cost.seconds = time.perf_counter() - start
        return scores

    def score_batch(self, requests: Sequence[ScoreRequest]) -> list[Scores]:
        return [self.score(r.prefix, r.options) for r in requests]

    def _score_text(self, prefix: str, options: list[str]) -> Scores:
        body = {
            "model": self.model,
            "prompt": [prefix + option for option in options],
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 0,
        }
        answer = self._post("completions", body)
        logprobs, counts = [0.0] * len(options), [0] * len(options)
        for choice in answer.get("choices", []):
            i = int(choice.get("index", 0))
            data = choice.get("logprobs") or {}
            offsets = data.get("text_offset") or []
            values = data.get("token_logprobs") or []
            end = len(prefix) + len(options[i])
            for offset, value in zip(offsets, values, strict=False):
                if len(prefix) <= offset < end and value is not None:
                    logprobs[i] += float(value)
                    counts[i] += 1
        if not any(counts):
            raise LLMError(
                f"{self.base_url}/completions returned no prompt log-probabilities "
                "(echo + logprobs); this server cannot score text prefixes: pass chat "
                "messages instead (first-token scoring)."
            )
        usage = answer.get("usage") or {}
        cost = Cost(tokens_in=int(usage.get("prompt_tokens", 0)), calls=1)
        return Scores(options, logprobs, counts, cost)

    def _score_chat(self, messages: Sequence[Mapping[str, str]], options: list[str]) -> Scores:
        body = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        answer = self._post("chat/completions", body)
        try:
            content = answer["choices"][0]["logprobs"]["content"][0]
        except (KeyError, IndexError, TypeError):
            raise LLMError(
                f"{self.base_url}/chat/completions returned no logprobs; this server cannot "
                "score options. Use generation (choose(..., method='generate'))."
            ) from None
        alternatives = [(a["token"], float(a["logprob"])) for a in content.get("top_logprobs", [])]
        alternatives.append((content["token"], float(content["logprob"])))
        logprobs = []
        for option in options:
            best = None
            for token, value in alternatives:
                if token.strip() and option.startswith(token.lstrip()):
                    if best is None or len(token.strip()) > best[0]:
                        best = (len(token.strip()), value)
            logprobs.append(best[1] if best else UNLISTED_LOGPROB)
        usage = answer.get("usage") or {}
        cost = Cost(
            tokens_in=int(usage.get("prompt_tokens", 0)),
            tokens_out=int(usage.get("completion_tokens", 0)),
            calls=1,
        )
        return Scores(options, logprobs, [1] * len(options), cost)
