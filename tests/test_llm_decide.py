"""Decisions with the scripted backend: scoring, generation, repair, fallback, reasoning."""

from __future__ import annotations

import pytest

from pokegym.llm import (
    AnswerFormatError,
    LanguageModel,
    LLMError,
    ScoreRequest,
    Scores,
    choice_schema,
    choose,
    make_model,
    parse_json_answer,
)
from pokegym.llm.schema import finite_json_choices, validate

PROMPT = [{"role": "user", "content": "Pick a move."}]
OPTIONS = ["move Thunderbolt", "move Volt Switch", "switch Garchomp"]


def test_scripted_model_satisfies_the_protocol() -> None:
    model = make_model("scripted", completions=["hi"], scores=[[0.0, -1.0, -2.0]])
    assert isinstance(model, LanguageModel)
    assert model.complete(PROMPT).text == "hi"
    with pytest.raises(LLMError, match="no completion left"):
        model.complete(PROMPT)


def test_choice_by_scoring_picks_the_most_likely_option() -> None:
    model = make_model("scripted", scores=[{"move Volt Switch": -0.1, "move Thunderbolt": -3.0}])
    decision = choose(model, PROMPT, OPTIONS)
    assert (decision.index, decision.option, decision.method) == (1, "move Volt Switch", "score")
    assert decision.cost.calls == 1 and decision.scores is not None


def test_scores_helpers() -> None:
    scores = Scores(["a", "bb"], [-1.0, -1.5], [1, 3])
    assert scores.best() == 0 and scores.best(normalize=True) == 1
    assert sum(scores.probabilities()) == pytest.approx(1.0)
    assert scores.expectation([0.0, 10.0]) == pytest.approx(10 * scores.probabilities()[1])


def test_generated_answer_in_a_code_fence_is_accepted() -> None:
    model = make_model(
        "scripted", completions=['Sure!\n```json\n{"choice": "switch Garchomp"}\n```']
    )
    decision = choose(model, PROMPT, OPTIONS, method="generate")
    assert decision.option == "switch Garchomp" and decision.repairs == 0


def test_malformed_then_repaired_answer() -> None:
    model = make_model(
        "scripted", completions=["I would attack!", '{"choice": "move Thunderbolt"}']
    )
    decision = choose(model, PROMPT, OPTIONS, method="generate", max_repairs=1)
    assert decision.method == "generate" and decision.option == "move Thunderbolt"
    assert decision.repairs == 1 and "not a JSON object" in decision.errors[0]
    repair_prompt = model.prompts[1]
    assert (
        "invalid" in repair_prompt[-1]["content"]
        and "switch Garchomp" in repair_prompt[-1]["content"]
    )
    assert decision.cost.calls == 2


def test_illegal_answers_end_in_the_deterministic_fallback() -> None:
    model = make_model("scripted", completions=['{"choice": "forfeit"}', '{"choice": "move Surf"}'])
    decision = choose(model, PROMPT, OPTIONS, method="generate", max_repairs=1, fallback=2)
    assert decision.used_fallback and decision.index == 2 and decision.option == OPTIONS[2]
    assert len(decision.errors) == 2 and "must be one of" in decision.errors[0]
    by_function = choose(
        make_model("scripted", completions=["?", "?"]),
        PROMPT,
        OPTIONS,
        method="generate",
        fallback=lambda options: options.index("move Volt Switch"),
    )
    assert by_function.option == "move Volt Switch" and by_function.used_fallback


def test_backend_failure_falls_back_and_says_why() -> None:
    decision = choose(make_model("scripted"), PROMPT, OPTIONS)
    assert decision.used_fallback and decision.index == 0
    assert "no scores left" in decision.errors[0]
    with pytest.raises(ValueError, match="fallback index"):
        choose(make_model("scripted"), PROMPT, OPTIONS, fallback=7)


def test_reasoning_mode_records_its_cost_and_conditions_the_answer() -> None:
    model = make_model(
        "scripted",
        completions=["Garchomp is immune to Electric moves, so switching is risky."],
        scores=lambda prefix, options: [0.0 if o == " move Volt Switch" else -5.0 for o in options],
    )
    decision = choose(model, PROMPT, OPTIONS, reasoning=True)
    assert decision.option == "move Volt Switch"
    assert decision.reasoning.startswith("Garchomp is immune")
    assert decision.reasoning_cost.tokens_out == 10 and decision.reasoning_cost.calls == 1
    assert decision.cost.calls == 2
    scored_prefix = model.prompts[1]
    assert scored_prefix[-1]["role"] == "assistant"
    assert scored_prefix[-1]["content"].endswith("Answer:")
    direct = choose(make_model("scripted", scores=[[0, -1, -2]]), PROMPT, OPTIONS)
    assert direct.reasoning is None and direct.cost.calls == 1


def test_parse_json_answer_errors() -> None:
    schema = choice_schema(OPTIONS)
    with pytest.raises(AnswerFormatError, match="not a JSON object"):
        parse_json_answer("[1, 2]", schema)
    with pytest.raises(AnswerFormatError, match="required key"):
        parse_json_answer('{"action": "move Thunderbolt"}', schema)
    with pytest.raises(AnswerFormatError, match="unexpected keys"):
        parse_json_answer('{"choice": "switch Garchomp", "x": 1}', schema)


def test_schema_helpers() -> None:
    schema = {
        "type": "object",
        "properties": {"choice": {"enum": ["a", "b"]}, "tera": {"type": "boolean"}},
    }
    choices = finite_json_choices(schema)
    assert choices == [
        {"choice": "a", "tera": True},
        {"choice": "a", "tera": False},
        {"choice": "b", "tera": True},
        {"choice": "b", "tera": False},
    ]
    assert finite_json_choices({"type": "object", "properties": {"t": {"type": "string"}}}) is None
    assert validate({"choice": "a", "tera": 1}, schema) == "$.tera must be boolean, got int"
    assert validate(3, {"type": "integer", "maximum": 2}) == "$ must be at most 2"


def test_scripted_batch_and_option_checks() -> None:
    model = make_model("scripted", scores=lambda prefix, options: [-len(o) for o in options])
    results = model.score_batch([ScoreRequest(PROMPT, ["a", "bb"]), ScoreRequest(PROMPT, ["ccc"])])
    assert [r.best() for r in results] == [0, 0]
    with pytest.raises(ValueError, match="distinct"):
        model.score(PROMPT, ["a", "a"])
    with pytest.raises(ValueError, match="Unknown model"):
        make_model("gpt-99")
