"""The transformers backend on a tiny random-weights model built in code (real code path)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from llm_helpers import build_tiny_model  # noqa: E402

from pokegym.llm import ScoreRequest, choice_schema, choose, make_model  # noqa: E402
from pokegym.llm.transformers_backend import TransformersModel  # noqa: E402

PROMPT = [
    {"role": "system", "content": "You pick moves in a Pokemon battle."},
    {"role": "user", "content": "Opposing Gholdengo at 62% HP. Your Great Tusk can act."},
]
OPTIONS = ["move Headlong Rush", "move Ice Spinner", "switch Kingambit", "x"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TransformersModel:
    folder = build_tiny_model(tmp_path_factory.mktemp("tiny"))
    return TransformersModel(folder, dtype="float32")


def naive_logprob(model: TransformersModel, prefix: list[int], option: list[int]) -> float:
    ids = torch.tensor([prefix + option], device=model.device)
    with torch.inference_mode():
        logp = model.model(input_ids=ids).logits[0].float().log_softmax(-1)
    return float(sum(logp[len(prefix) - 1 + k, option[k]] for k in range(len(option))))


def test_scores_equal_full_forward_passes(tiny: TransformersModel) -> None:
    tiny.clear_cache()
    scores = tiny.score(PROMPT, OPTIONS)
    prefix = tiny.tokenize(tiny.render(PROMPT))
    for option, value, n in zip(OPTIONS, scores.logprobs, scores.n_tokens, strict=True):
        ids = tiny.tokenize(option)
        assert n == len(ids)
        assert value == pytest.approx(naive_logprob(tiny, prefix, ids), abs=1e-3)
    assert scores.cost.tokens_in == len(prefix) + sum(n - 1 for n in scores.n_tokens)
    assert scores.cost.calls == 1 and scores.cost.seconds > 0


def test_prefix_cache_is_reused_and_changes_nothing(tiny: TransformersModel) -> None:
    tiny.clear_cache()
    cold = tiny.score(PROMPT, OPTIONS)
    warm = tiny.score(PROMPT, OPTIONS)
    assert warm.cost.cached_tokens == len(tiny.tokenize(tiny.render(PROMPT)))
    assert warm.logprobs == pytest.approx(cold.logprobs, abs=1e-4)
    longer = [PROMPT[0], {"role": "user", "content": PROMPT[1]["content"] + " Rain is up."}]
    extended = tiny.score(longer, OPTIONS)
    assert extended.cost.cached_tokens > 0
    assert extended.cost.tokens_in < len(tiny.tokenize(tiny.render(longer)))
    tiny.clear_cache()
    fresh = tiny.score(longer, OPTIONS)
    assert fresh.cost.cached_tokens == 0
    assert extended.logprobs == pytest.approx(fresh.logprobs, abs=1e-4)


def test_score_batch_matches_single_requests(tiny: TransformersModel) -> None:
    leaves = [
        ScoreRequest(
            [
                PROMPT[0],
                {"role": "user", "content": PROMPT[1]["content"] + f" Leaf {k}: " + "!" * k},
            ],
            ["0", "5", "9", "99"],
        )
        for k in range(5)
    ]
    tiny.clear_cache()
    batched = tiny.score_batch(leaves)
    assert batched[0].cost.calls == 1 and all(s.cost.calls == 0 for s in batched[1:])
    for request, result in zip(leaves, batched, strict=True):
        tiny.clear_cache()
        single = tiny.score(request.prefix, request.options)
        assert result.logprobs == pytest.approx(single.logprobs, abs=1e-3)


def test_generation_is_deterministic_and_seeded(tiny: TransformersModel) -> None:
    greedy = [tiny.complete(PROMPT, max_tokens=12).text for _ in range(2)]
    assert greedy[0] == greedy[1]
    a = tiny.complete(PROMPT, max_tokens=12, temperature=1.0, seed=3)
    b = tiny.complete(PROMPT, max_tokens=12, temperature=1.0, seed=3)
    assert a.text == b.text
    assert a.cost.tokens_out <= 12 and a.cost.calls == 1


def test_json_schema_constrains_even_a_random_model(tiny: TransformersModel) -> None:
    schema = choice_schema(OPTIONS)
    for seed in range(4):
        completion = tiny.complete(
            PROMPT, max_tokens=64, temperature=1.0, seed=seed, json_schema=schema
        )
        assert json.loads(completion.text)["choice"] in OPTIONS
        assert completion.finish_reason == "stop"
    decision = choose(tiny, PROMPT, OPTIONS, method="generate")
    assert decision.method == "generate" and decision.option in OPTIONS


def test_reasoning_mode_costs_more_and_still_answers(tiny: TransformersModel) -> None:
    direct = choose(tiny, PROMPT, OPTIONS)
    reasoned = choose(tiny, PROMPT, OPTIONS, reasoning=True, reasoning_tokens=16)
    assert direct.reasoning is None and direct.reasoning_cost.calls == 0
    assert reasoned.reasoning is not None and reasoned.reasoning_cost.tokens_out > 0
    assert reasoned.cost.calls == 2 and direct.cost.calls == 1
    assert reasoned.option in OPTIONS


def test_make_model_by_backend_name(tiny: TransformersModel, tmp_path) -> None:
    folder = build_tiny_model(tmp_path / "again")
    model = make_model(f"transformers:{folder}", dtype="float32")
    assert model.score(PROMPT, OPTIONS).logprobs == pytest.approx(
        tiny.score(PROMPT, OPTIONS).logprobs, abs=1e-4
    )


def test_device_auto_uses_a_gpu_when_torch_sees_one(tiny: TransformersModel) -> None:
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert tiny.device.type == expected
    assert next(tiny.model.parameters()).device.type == expected


def test_bad_or_missing_devices_are_clear_errors(tmp_path) -> None:
    from pokegym.errors import DeviceNotAvailableError

    folder = build_tiny_model(tmp_path / "tiny")
    for bad in ("tpu", "cuda:x", "gpu0", 0):
        with pytest.raises(ValueError, match="auto"):
            TransformersModel(folder, dtype="float32", device=bad)  # type: ignore[arg-type]
    if not torch.cuda.is_available():
        with pytest.raises(DeviceNotAvailableError, match="sees none"):
            TransformersModel(folder, dtype="float32", device="cuda")
    else:
        with pytest.raises(DeviceNotAvailableError, match="CUDA GPU"):
            TransformersModel(folder, dtype="float32", device=f"cuda:{torch.cuda.device_count()}")


def test_cpu_and_gpu_give_the_same_scores_and_answers(tiny: TransformersModel, tmp_path) -> None:
    """On a machine with CUDA the same checkpoint on both devices agrees up to rounding."""
    folder = build_tiny_model(tmp_path / "tiny")
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    results = []
    for device in devices:
        model = TransformersModel(folder, dtype="float32", device=device)
        assert model.device.type == device
        requests = [ScoreRequest(PROMPT, OPTIONS), ScoreRequest(PROMPT[:1], OPTIONS[:2])]
        scores = [s.logprobs for s in model.score_batch(requests)]
        answer = model.complete(PROMPT, max_tokens=6, temperature=0.0).text
        seeded = model.complete(PROMPT, max_tokens=6, temperature=1.0, seed=3).text
        again = model.complete(PROMPT, max_tokens=6, temperature=1.0, seed=3).text
        assert seeded == again  # a seeded generator on the model's own device
        results.append((scores, answer))
    cpu_scores, cpu_answer = results[0]
    for scores, answer in results[1:]:
        for got, want in zip(scores, cpu_scores, strict=True):
            assert got == pytest.approx(want, abs=2e-3)
        assert answer == cpu_answer


class TickingClock:
    """A monotonic clock that moves one second every time it is read."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_a_prompt_past_its_deadline_stops_and_the_next_call_resumes_it(tiny) -> None:
    from pokegym.llm import DeadlineExceededError, call_deadline

    clock = TickingClock()
    model = TransformersModel(tiny.model.name_or_path, dtype="float32", prefill_chunk=4,
                              clock=clock)  # fmt: skip
    prompt = model.tokenize(model.render(PROMPT))
    assert len(prompt) > 12
    # The deadline is checked before each 4-token chunk; the clock passes it after a few.
    with call_deadline(clock.now + 6.5), pytest.raises(DeadlineExceededError, match="prompt"):
        model.score(PROMPT, OPTIONS)
    resumed = model.score(PROMPT, OPTIONS)  # no deadline: finishes from the chunks kept
    kept = resumed.cost.cached_tokens
    assert 0 < kept < len(prompt) and kept % 4 == 0
    tiny.clear_cache()
    whole = tiny.score(PROMPT, OPTIONS)  # one pass, no chunks
    assert resumed.logprobs == pytest.approx(whole.logprobs, abs=1e-3)


def test_chunks_shrink_to_what_fits_before_the_deadline(tiny) -> None:
    from pokegym.llm import call_deadline

    model = TransformersModel(tiny.model.name_or_path, dtype="float32", clock=lambda: 10.0)
    assert model._chunk_tokens() == 512  # nothing measured, no deadline: the full chunk
    model._measured_prefill(200, 2.0)  # 100 prompt tokens per second
    with call_deadline(10.4):  # 0.4 s left: half of it computes 20 tokens
        assert model._chunk_tokens() == 20
    with call_deadline(10.01):
        assert model._chunk_tokens() == 16  # never fewer than MIN_CHUNK
    assert model._chunk_tokens() == 512


def test_generation_and_scoring_stop_at_the_deadline(tiny) -> None:
    from pokegym.llm import DeadlineExceededError, call_deadline

    clock = TickingClock()
    model = TransformersModel(tiny.model.name_or_path, dtype="float32", clock=clock)
    model.score(PROMPT, OPTIONS)  # the prompt is cached: only generation is left to check
    with call_deadline(clock.now + 5.5), pytest.raises(DeadlineExceededError, match="generation"):
        model.complete(PROMPT, max_tokens=40)
    with call_deadline(clock.now + 0.5), pytest.raises(DeadlineExceededError, match="scoring"):
        model.score(PROMPT, OPTIONS)  # the prompt is cached: the options' batch is checked
    decision = None
    with call_deadline(clock.now - 1.0):  # choose() answers its fallback
        decision = choose(model, PROMPT, OPTIONS, method="generate", fallback=2)
    assert decision.used_fallback and decision.option == OPTIONS[2]
    assert "DeadlineExceededError" in decision.errors[0]
    completion = model.complete(PROMPT, max_tokens=3)  # without a deadline: as before
    assert completion.cost.tokens_out <= 3


def test_deadlines_nest_to_the_earlier_one() -> None:
    from pokegym.llm.base import call_deadline, current_deadline

    assert current_deadline() is None
    with call_deadline(50.0):
        with call_deadline(80.0):
            assert current_deadline() == 50.0
        with call_deadline(None):
            assert current_deadline() == 50.0
        with call_deadline(20.0):
            assert current_deadline() == 20.0
    assert current_deadline() is None


def test_threads_follow_the_free_cores_unless_fixed(tiny) -> None:
    before = torch.get_num_threads()
    free = [1]
    try:
        model = TransformersModel(tiny.model.name_or_path, dtype="float32",
                                  cores_free=lambda: free[0])  # fmt: skip
        model.score(PROMPT, OPTIONS)
        assert torch.get_num_threads() == 1  # the machine is busy: one thread
        free[0] = 64
        model.score(PROMPT, OPTIONS)
        assert torch.get_num_threads() == model.max_threads  # never more than torch's own
        fixed = TransformersModel(tiny.model.name_or_path, dtype="float32", threads=1,
                                  cores_free=lambda: 64)  # fmt: skip
        fixed.score(PROMPT, OPTIONS)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
