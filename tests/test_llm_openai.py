"""The OpenAI-compatible backend against a small local HTTP server on 127.0.0.1.

The server speaks the parts of the protocol the backend uses, with fixed answers: it
stands in for vLLM / llama.cpp / Ollama in unit tests.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pokegym.llm import DeadlineExceededError, EndpointError, call_deadline, choose, make_model

SECRET = "sk-test-secret-value"


class Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, dict[str, Any], str | None]] = []

    def log_message(self, *args: Any) -> None:
        """Keep the test output quiet (the default writes every request to stderr)."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.seen.append((self.path, body, self.headers.get("Authorization")))
        if not self.path.startswith("/v1/"):
            self.send_response(404)
            self.end_headers()
            return
        if self.path.endswith("/chat/completions") and body.get("logprobs"):
            answer = {
                "choices": [
                    {
                        "logprobs": {
                            "content": [
                                {
                                    "token": "move",
                                    "logprob": -0.2,
                                    "top_logprobs": [
                                        {"token": "move", "logprob": -0.2},
                                        {"token": "switch", "logprob": -1.9},
                                    ],
                                }
                            ]
                        }
                    }
                ],
                "usage": {"prompt_tokens": 30, "completion_tokens": 1},
            }
        elif self.path.endswith("/chat/completions"):
            answer = {
                "choices": [
                    {
                        "message": {"content": '{"choice": "switch Garchomp"}'},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 31, "completion_tokens": 9},
            }
        elif self.path.endswith("/completions"):
            choices = []
            for i, prompt in enumerate(body["prompt"]):
                # "Best: " then the option split in words, each word one token.
                offsets, values, pos = [0], [None], len("Best: ")
                for k, word in enumerate(prompt[pos:].split(" ")):
                    offsets.append(pos)
                    values.append(-1.0 * (i + 1) / (k + 1))
                    pos += len(word) + 1
                choices.append(
                    {"index": i, "logprobs": {"text_offset": offsets, "token_logprobs": values}}
                )
            answer = {"choices": choices, "usage": {"prompt_tokens": 12}}
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Handler.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


PROMPT = [{"role": "user", "content": "Pick."}]


def test_complete_and_json_schema(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POKEGYM_TEST_KEY", SECRET)
    model = make_model("openai", model="qwen", base_url=endpoint, api_key_env="POKEGYM_TEST_KEY")
    decision = choose(model, PROMPT, ["move Thunderbolt", "switch Garchomp"], method="generate")
    assert decision.option == "switch Garchomp" and decision.method == "generate"
    assert decision.cost.tokens_in == 31 and decision.cost.tokens_out == 9
    path, body, auth = Handler.seen[-1]
    assert path == "/v1/chat/completions" and auth == f"Bearer {SECRET}"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["choice"]["enum"]
    assert SECRET not in repr(model) and SECRET not in json.dumps(vars(model))


def test_chat_scoring_by_first_token(endpoint: str) -> None:
    model = make_model("openai", model="qwen", base_url=endpoint)
    scores = model.score(PROMPT, ["move Thunderbolt", "switch Garchomp", "tera"])
    assert scores.logprobs == [-0.2, -1.9, -100.0]
    assert Handler.seen[-1][2] is None  # no key set: no Authorization header


def test_text_scoring_with_echo(endpoint: str) -> None:
    model = make_model("openai", model="qwen", base_url=endpoint)
    scores = model.score("Best: ", ["move Thunderbolt", "switch"])
    # option 0: two words -> -1/1 + -1/2; option 1: one word -> -2/1
    assert scores.logprobs == pytest.approx([-1.5, -2.0])
    assert scores.n_tokens == [2, 1]
    assert Handler.seen[-1][1]["echo"] is True


def test_endpoint_down_is_a_clear_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = make_model("openai", model="qwen", base_url=f"http://127.0.0.1:{port}/v1", retries=1)
    with pytest.raises(EndpointError, match=r"Check that the server is running"):
        model.complete(PROMPT)
    decision = choose(model, PROMPT, ["move A", "move B"], fallback=1)
    assert decision.used_fallback and decision.option == "move B"
    assert "EndpointError" in decision.errors[0]


def test_http_error_is_not_retried(endpoint: str) -> None:
    model = make_model("openai", model="qwen", base_url=endpoint.replace("/v1", "/nope"))
    with pytest.raises(EndpointError, match="HTTP 404"):
        model.complete(PROMPT)
    assert len(Handler.seen) == 1  # one attempt: a 404 is not retried


def test_a_passed_deadline_sends_nothing(endpoint: str) -> None:
    model = make_model("openai", model="qwen", base_url=endpoint)
    with call_deadline(time.monotonic() - 1.0), pytest.raises(DeadlineExceededError):
        model.complete(PROMPT)
    assert Handler.seen == []


def test_a_server_that_never_answers_is_cut_at_the_deadline() -> None:
    with socket.socket() as silent:  # accepts connections (backlog) but never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]
        model = make_model("openai", model="qwen", base_url=f"http://127.0.0.1:{port}/v1",
                           timeout=600.0, retries=3)  # fmt: skip
        with call_deadline(time.monotonic() + 0.5):
            with pytest.raises(DeadlineExceededError, match="deadline"):
                model.complete(PROMPT)
            decision = choose(model, PROMPT, ["move A", "move B"], fallback=1)
        assert decision.used_fallback and "DeadlineExceededError" in decision.errors[0]
