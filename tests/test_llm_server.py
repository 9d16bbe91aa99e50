"""The openai backend against a real OpenAI-compatible server: llama.cpp's, from
llama-cpp-python, serving the qwen-0.5b bundle converted to a float16 GGUF.

``make test`` builds the server and the GGUF first (``pokegym llm server build``, once,
cached in ``$POKEGYM_HOME/llama-server``); the session fixture starts the server on a
free port of 127.0.0.1 and stops it at the end. The same bundle loaded with transformers
(float32) is the reference: the choices must be the same and the log-probabilities
within ``LOGPROB_TOLERANCE`` (the float16 weights and kernels differ in rounding only).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.llm import EndpointError, choose, make_model
from pokegym.llm.openai_backend import UNLISTED_LOGPROB, OpenAIModel
from pokegym.llm.server import LlamaServer, build, free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# Largest |difference| of an option's log-probability (nats) between the server (float16
# GGUF) and transformers (float32) on the prompts below; measured: see docs/llm.md.
LOGPROB_TOLERANCE = 0.02

SYSTEM = {"role": "system", "content": "You are a Pokémon battle expert. Answer briefly."}
PROMPTS = [
    (
        [SYSTEM, {"role": "user", "content": (
            "Which type is super effective against Water?\nA) Fire\nB) Grass\nC) Steel\n"
            "Answer with the letter only."
        )}],
        ("A", "B", "C"),
    ),
    (
        [SYSTEM, {"role": "user", "content": (
            "Garchomp (100% HP) faces a Weavile (12% HP) that is faster. Which move should "
            "Garchomp use?\nA) Swords Dance\nB) Earthquake\nC) Protect\nD) Stealth Rock\n"
            "Answer with the letter only."
        )}],
        ("A", "B", "C", "D"),
    ),
    (
        [SYSTEM, {"role": "user", "content": (
            "Our side: 6 Pokémon left, all healthy. Opponent: 1 Pokémon left at 5% HP and "
            "slower. How good is our position, from 0 (lost) to 9 (won)? Answer with one digit."
        )}],
        tuple(str(d) for d in range(10)),
    ),
    (
        [SYSTEM, {"role": "user", "content": (
            "Is Pikachu an Electric-type Pokémon? Answer yes or no."
        )}],
        ("yes", "no", "Yes", "No"),
    ),
]  # fmt: skip


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The real server for the whole session: built once (cached), stopped at the end."""
    built = build("qwen-0.5b")
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    # One thread: on a busy 2-core machine two threads wait on each other (measured:
    # decoding 7.4 tokens/s with one, 0.33 with two, reading a prompt 48 vs 38 tokens/s).
    server = LlamaServer(built.gguf, alias="qwen-0.5b", threads=1, log_path=log)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        assert server.process is None


@pytest.fixture(scope="session")
def served(llama_server: LlamaServer) -> OpenAIModel:
    return OpenAIModel(
        "qwen-0.5b", base_url=llama_server.base_url, timeout=300, schema_format="json_object"
    )


@pytest.fixture(scope="session")
def local():
    return make_model("qwen-0.5b", dtype="float32", threads=2)


def test_scores_match_transformers(served: OpenAIModel, local) -> None:
    worst = 0.0
    for messages, options in PROMPTS:
        remote, reference = served.score(messages, options), local.score(messages, options)
        assert remote.best() == reference.best(), (options, remote.logprobs, reference.logprobs)
        assert remote.cost.calls == 1 and remote.cost.tokens_in > 20
        for option, a, b in zip(options, remote.logprobs, reference.logprobs, strict=True):
            if a == UNLISTED_LOGPROB:  # not among the server's top alternatives
                assert b < max(reference.logprobs) - 2.0, (option, b)
                continue
            worst = max(worst, abs(a - b))
            assert abs(a - b) < LOGPROB_TOLERANCE, (option, a, b)
    print(f"largest logprob difference: {worst:.4f} nats")


def test_choose_gives_the_same_decisions(served: OpenAIModel, local) -> None:
    for messages, options in PROMPTS:
        remote = choose(served, messages, list(options))
        reference = choose(local, messages, list(options))
        assert remote.method == "score" and not remote.errors
        assert remote.index == reference.index, (options, remote.option, reference.option)


def test_complete_matches_greedy_generation(served: OpenAIModel, local) -> None:
    messages = [SYSTEM, {"role": "user", "content": "Name the type of the move Thunderbolt."}]
    remote = served.complete(messages, max_tokens=8, temperature=0.0)
    reference = local.complete(messages, max_tokens=8, temperature=0.0)
    assert remote.text.strip() and remote.cost.tokens_out >= 1
    assert remote.text.strip() == reference.text.strip()


def test_generated_json_follows_the_schema(served: OpenAIModel) -> None:
    """llama.cpp's server constrains generation with ``json_object`` + ``schema``."""
    options = ["move Thunderbolt", "move Volt Switch", "switch Garchomp"]
    messages = [SYSTEM, {"role": "user", "content": "Pikachu faces a Gyarados. Pick one: "
                         + ", ".join(options) + '. Answer as JSON {"choice": ...}.'}]  # fmt: skip
    decision = choose(served, messages, options, method="generate")
    assert decision.method == "generate" and decision.repairs == 0, decision.errors
    assert decision.option in options


# ------------------------------------------------------------------- agents in battles
def test_llm_agents_play_a_battle_on_the_server(served: OpenAIModel) -> None:
    from policies.pokechamp import PokeChampPolicy
    from policies.pokellmon import PokeLLMonPolicy

    # A battle prompt is ~1,500 tokens, which a busy 2-core machine reads in about a
    # minute: one decision each (the battles stop at turn 2), no deadline to miss.
    register_agent(
        "pokellmon_served",
        lambda **o: PokeLLMonPolicy(model=served, samples=1, knowledge=False, time_limit=900, **o),
    )
    register_agent(
        "pokechamp_served",
        lambda **o: PokeChampPolicy(
            model=served, depth=1, candidates=2, opponent_candidates=2, time_limit=900, **o
        ),
    )
    result = run_arena(
        ArenaConfig(
            agents=["pokellmon_served", "pokechamp_served", "random"],
            pairs=[("pokellmon_served", "random"), ("pokechamp_served", "random")],
            battles_per_pair=1,
            seed=7,
            concurrency=1,
            max_turns=2,
            clock_bank=None,
        )
    )
    for name in ("pokellmon_served", "pokechamp_served"):
        record = result.record(name)
        assert record["battles"] == 1 and record["timeouts"] == 0, record
        stats = result.agent_stats[name]
        assert stats.decisions >= 1
        # Every decision was the model's: no fallback, no missed deadline.
        assert stats.usage["calls"] >= stats.decisions, stats.usage
        assert stats.usage["fallbacks"] == 0 and stats.usage["deadline_misses"] == 0, stats.usage


# -------------------------------------------------------------------- failures, in time
def test_server_down_is_one_named_error_and_the_fallback() -> None:
    model = OpenAIModel("qwen-0.5b", base_url=f"http://127.0.0.1:{free_port()}/v1", retries=1)
    messages, options = PROMPTS[0]
    with pytest.raises(EndpointError, match=r"failed .*Check that the server is running"):
        model.score(messages, options)
    decision = choose(model, messages, list(options), fallback=2)
    assert decision.method == "fallback" and decision.index == 2
    assert "EndpointError" in decision.errors[0]


def test_http_error_from_the_real_server(llama_server: LlamaServer) -> None:
    # Without /v1 the server has no such route: 404, not retried.
    model = OpenAIModel("qwen-0.5b", base_url=llama_server.base_url.removesuffix("/v1"))
    with pytest.raises(EndpointError, match="HTTP 404"):
        model.complete([SYSTEM, {"role": "user", "content": "Hi"}], max_tokens=2)


class _CuttingProxy:
    """Forwards one connection at a time to the real server and cuts its answer short:
    the headers arrive, the JSON body stops halfway."""

    def __init__(self, target_port: int, mode: str = "cut"):
        self.target_port = target_port
        self.mode = mode
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with client:
                request = _read_http(client)
                if self.mode == "silent":
                    time.sleep(30)  # accepts, never answers
                    continue
                with socket.create_connection(("127.0.0.1", self.target_port)) as upstream:
                    upstream.sendall(request)
                    answer = _read_http(upstream)
                head, _, body = answer.partition(b"\r\n\r\n")
                head = b"\r\n".join(
                    line for line in head.split(b"\r\n")
                    if not line.lower().startswith(b"content-length")
                ) + b"\r\nConnection: close"  # fmt: skip
                client.sendall(head + b"\r\n\r\n" + body[: len(body) // 2])

    def close(self) -> None:
        self.sock.close()


def _read_http(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_malformed_body_is_one_named_error(llama_server: LlamaServer) -> None:
    proxy = _CuttingProxy(llama_server.port)
    try:
        model = OpenAIModel("qwen-0.5b", base_url=f"http://127.0.0.1:{proxy.port}/v1")
        messages, options = PROMPTS[0]
        with pytest.raises(EndpointError, match="not JSON"):
            model.score(messages, options)
        decision = choose(model, messages, list(options), fallback=1)
        assert decision.method == "fallback" and decision.index == 1
    finally:
        proxy.close()


def test_a_silent_server_times_out(llama_server: LlamaServer) -> None:
    proxy = _CuttingProxy(llama_server.port, mode="silent")
    try:
        model = OpenAIModel(
            "qwen-0.5b", base_url=f"http://127.0.0.1:{proxy.port}/v1", timeout=1.0, retries=0
        )
        messages, options = PROMPTS[0]
        with pytest.raises(EndpointError, match=r"timed out|TimeoutError"):
            model.score(messages, options)
    finally:
        proxy.close()


@pytest.mark.parametrize("failure", ["down", "silent"])
def test_agents_fall_back_when_the_endpoint_fails(failure: str) -> None:
    """A dead or silent endpoint costs each call at most its timeout; the agents answer
    with their fallback and count it."""
    from test_pokechamp import battle_position

    from policies.llm_common import fallback_order
    from policies.pokechamp import PokeChampPolicy
    from policies.pokellmon import PokeLLMonPolicy

    proxy = _CuttingProxy(0, mode="silent") if failure == "silent" else None
    port = proxy.port if proxy else free_port()
    model = OpenAIModel("qwen-0.5b", base_url=f"http://127.0.0.1:{port}/v1", timeout=1.0, retries=0)
    session, battle = battle_position(seed=21)
    try:
        pokellmon = PokeLLMonPolicy(model=model, samples=1, time_limit=120)
        assert str(pokellmon.choose(battle)) == str(fallback_order(battle))
        assert pokellmon.pop_usage()["fallbacks"] >= 1
        pokechamp = PokeChampPolicy(model=model, depth=1, time_limit=120)
        order = pokechamp.choose(battle)
        assert order.order in (*battle.available_moves, *battle.available_switches)
        assert pokechamp.pop_usage()["fallbacks"] >= 1
    finally:
        session.close()
        if proxy is not None:
            proxy.close()


def test_the_server_is_stopped_with_its_process_group(tmp_path: Path) -> None:
    """A server that fails to start leaves nothing running."""
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"GGUF but not really")
    server = LlamaServer(bad, log_path=tmp_path / "log", start_timeout=120)
    from pokegym.llm.server import LlamaServerError

    with pytest.raises(LlamaServerError, match="exited"):
        server.start()
    assert server.process is None
