"""Move generation, the judge and batch evaluation: scripted backend and the real local path."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pokegym.cli import main
from pokegym.llm import make_model
from pokegym.llm.scripted import ScriptedModel
from pokegym.moves import MoveDesign, MoveLibrary
from pokegym.moves.generate import (
    MoveGenerationError,
    PokemonBrief,
    design_prompt,
    find_copy,
    generate_moves,
)
from pokegym.moves.judge import JUDGE_SCHEMA, judge_move
from pokegym.moves.report import run_batch_eval
from pokegym.world.data import load_dex

sys.path.insert(0, str(Path(__file__).parent))

GOOD = {
    "name": "Magma Lance",
    "type": "Fire",
    "category": "Physical",
    "power": 85,
    "accuracy": 95,
    "pp": 10,
    "effect": "burn",
    "effect_chance": 20,
    "description": "A spear of molten rock that may burn the target.",
}
DUNE = {**GOOD, "name": "Dune Breaker", "type": "Ground", "power": 90, "accuracy": 100,
        "effect": "lower_def", "effect_chance": 20}  # fmt: skip
BROKEN = {**GOOD, "name": "Doom Comet", "type": "Dragon", "power": 300, "accuracy": 100, "pp": 40}
JUDGED = '{"creativity": 7, "originality": 6, "verdict": "approve"}'


def test_prompt_is_tailored_to_the_pokemon() -> None:
    text = design_prompt(PokemonBrief.of("garchomp"), 1)[1]["content"]
    assert "Garchomp is a Dragon/Ground-type Pokémon" in text
    assert "Attack 130" in text and "Sp. Atk 80" in text
    assert "a Physical move suits it best" in text
    batch = design_prompt(PokemonBrief.of("Alakazam"), 4)[1]["content"]
    assert '{"moves": [...]}' in batch and "holds 4 such objects" in batch
    assert "a Special move suits it best" in batch
    with pytest.raises(MoveGenerationError, match="Unknown Pokémon 'Garchompp'"):
        PokemonBrief.of("Garchompp")


def test_copies_of_showdown_moves_are_found() -> None:
    dex = load_dex(9)
    assert find_copy(MoveDesign.from_dict(GOOD), dex) is None
    renamed = MoveDesign("Flame Thrower", "Fire", "Special", 90, 100, 15, "burn", 10)
    assert find_copy(renamed, dex) == "Flamethrower"  # same id
    numbers = MoveDesign("Blaze Ray", "Fire", "Special", 90, 100, 15, "burn", 10)
    assert find_copy(numbers, dex) == "Flamethrower"  # same numbers under a new name
    assert find_copy(MoveDesign("Blaze Ray", "Fire", "Special", 90, 100, 15), dex) is None


def test_generation_checks_every_answer() -> None:
    model = ScriptedModel(
        completions=[
            "Here is my move:\n```json\n" + json.dumps(GOOD) + "\n```",  # fenced: parsed
            "I cannot do JSON today.",  # unreadable: repaired ...
            json.dumps(BROKEN),  # ... into an unbalanced design
            json.dumps({**GOOD, "name": "Flamethrower"}),  # a copy
            json.dumps({**GOOD, "category": "Status"}),  # breaks the schema: repaired ...
            json.dumps({**GOOD, "name": " "}),  # ... into a design of the wrong shape
            "still not JSON",  # unreadable twice: a failed design
            "nor this",
        ]
    )
    candidates = generate_moves(model, "Garchomp", 5, seed=3)
    assert len(candidates) == 5
    good, broken, copy, shape, failed = candidates
    assert good.valid and good.balanced and good.design.name == "Magma Lance"
    assert broken.design is not None and not broken.balanced
    assert copy.copy_of == "Flamethrower" and not copy.valid
    assert shape.design is None and "name must not be empty" in shape.error
    assert failed.design is None and "not a JSON object" in failed.error
    # The repair request named the problem and replayed the bad answer.
    repair = model.prompts[2]
    assert repair[-2] == {"role": "assistant", "content": "I cannot do JSON today."}
    assert "invalid" in repair[-1]["content"]
    assert all(c.cost.tokens_out > 0 for c in candidates)


def test_batches_and_duplicates_within_a_batch() -> None:
    model = ScriptedModel(
        completions=[
            json.dumps({"moves": [GOOD, DUNE, GOOD]}),  # the third repeats the first
            json.dumps({"moves": [DUNE]}),  # asked for 1 more, got a repeat of an earlier one
        ]
    )
    candidates = generate_moves(model, "Garchomp", 4, batch_size=3)
    assert [c.design.name for c in candidates] == ["Magma Lance", "Dune Breaker"] * 2
    assert [c.valid for c in candidates] == [True, True, False, False]
    assert "designed twice" in candidates[2].copy_of
    short = generate_moves(
        ScriptedModel(completions=[json.dumps({"moves": [GOOD]})]), "Garchomp", 2, batch_size=2
    )
    assert short[0].valid and short[1].design is None and "held 1 designs" in short[1].error
    with pytest.raises(MoveGenerationError, match="batch_size"):
        generate_moves(model, "Garchomp", 2, batch_size=0)


def test_judge_answers_and_failures() -> None:
    design = MoveDesign.from_dict(GOOD)
    ok = judge_move(ScriptedModel(completions=[JUDGED]), design, "Garchomp")
    assert (ok.creativity, ok.originality, ok.verdict, ok.error) == (7, 6, "approve", None)
    model = ScriptedModel(completions=['{"creativity": 12, "verdict": "yes"}', "nope"])
    failed = judge_move(model, design, "Garchomp")
    assert failed.verdict is None and failed.error and failed.repairs == 1
    prompt = model.prompts[0][1]["content"]
    assert "Magma Lance" in prompt and "most similar existing moves" in prompt
    assert "Fire" in prompt.split("most similar existing moves are:")[1]


def test_batch_evaluation_report() -> None:
    # The judge sees valid designs only: BROKEN (power 300) is not judged.
    revise = '{"creativity": 4, "originality": 3, "verdict": "revise"}'
    answers = [json.dumps(GOOD), JUDGED, json.dumps(BROKEN), json.dumps(DUNE), revise]
    model = ScriptedModel(completions=answers, name="scripted")
    report = run_batch_eval(model, 3, batch_size=1, pokemon=["Garchomp"], seed=1)
    metrics = report.metrics()
    assert metrics["n"] == 3 and metrics["validity"]["count"] == 2
    assert metrics["balanced"]["count"] == 2
    assert 0 < metrics["balanced"]["low"] < 2 / 3 < metrics["balanced"]["high"] <= 1
    assert metrics["judged"] == 2 and metrics["creativity_mean"] == pytest.approx(5.5)
    assert metrics["verdicts"] == {"approve": 1, "revise": 1} and metrics["approved"] == 1
    assert metrics["tokens_out_per_design"] > 0
    assert "validity    66.7%" in report.summary()
    payload = json.loads(report.to_json())
    assert len(payload["designs"]) == 3 and payload["designs"][1]["balanced"] is False


def test_cli_generate_approves_into_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pokegym.llm as llm

    scripted = ScriptedModel(completions=[json.dumps(GOOD), JUDGED, json.dumps(BROKEN)])
    monkeypatch.setattr(llm, "make_model", lambda name, **options: scripted)
    library = tmp_path / "lib.json"
    args = ["moves", "generate", "--pokemon", "Garchomp", "--n", "2", "--approve"]
    code = main([*args, "--library", str(library), "--json", str(tmp_path / "d.json")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Magma Lance" in out and "verdict approve" in out and "added to" in out
    first, second = out.split("\n2. ")
    assert "added to" in first and "Doom Comet" in second
    assert "violation" in second and "added to" not in second and "judge" not in second
    assert [m.id for m in MoveLibrary(library)] == ["magmalance"]
    assert len(json.loads((tmp_path / "d.json").read_text())) == 2
    assert main(["moves", "list", "--library", str(library)]) == 0
    assert "Magma Lance" in capsys.readouterr().out


def test_cli_check_and_add(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, broken = tmp_path / "good.json", tmp_path / "broken.json"
    good.write_text(json.dumps(GOOD))
    broken.write_text(json.dumps(BROKEN))
    assert main(["moves", "check", str(good), "--pokemon", "Garchomp"]) == 0
    assert main(["moves", "check", str(broken)]) == 1
    library = tmp_path / "lib.json"
    assert (
        main(["moves", "add", str(broken), "--pokemon", "Dragonite", "--library", str(library)])
        == 1
    )
    assert not library.exists()
    assert (
        main(["moves", "add", str(good), "--pokemon", "Garchomp", "--library", str(library)]) == 0
    )
    assert main(["moves", "remove", "Magma Lance", "--library", str(library)]) == 0
    assert len(MoveLibrary(library)) == 0


# ----------------------------------------------------------------- the real local path
def test_real_local_model_generation_and_constrained_judge(tmp_path: Path) -> None:
    """A tiny random-weights model through transformers: noise in, clean accounting out.

    Its designs are noise, so they must come back as failed candidates (never an
    exception); the judge's answer schema is finite, so even this model's judgement
    is always well-formed JSON.
    """
    pytest.importorskip("transformers")
    from llm_helpers import build_tiny_model

    model = make_model("transformers", model=str(build_tiny_model(tmp_path / "tiny")))
    candidates = generate_moves(model, "Garchomp", 1, max_repairs=0, judge=None)
    assert len(candidates) == 1
    candidate = candidates[0]
    assert candidate.cost.tokens_in > 500 and candidate.cost.tokens_out > 0
    if candidate.design is None:
        assert candidate.error
    judgement = judge_move(model, MoveDesign.from_dict(GOOD), "Garchomp")
    assert (
        judgement.error is None
        and judgement.verdict in JUDGE_SCHEMA["properties"]["verdict"]["enum"]
    )
    assert 0 <= judgement.creativity <= 10 and 0 <= judgement.originality <= 10
    assert judgement.cost.tokens_out > 0
