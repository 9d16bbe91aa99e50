"""The LLM judge: creativity and originality (0-10) and a verdict, as strict JSON.

The prompt (``text/templates/move_judge.txt``) shows the design, what the
deterministic evaluator said of it and the most similar existing moves, and asks for
``{"creativity": 0-10, "originality": 0-10, "verdict": "approve" | "revise" | "reject"}``.
The answer schema has finitely many instances (11 x 11 x 3), so a local model
(:mod:`pokegym.llm.transformers_backend`) is constrained token by token to exactly
those JSON texts: its answer always parses. Other backends get the schema as a
structured-output request and are validated; an invalid answer is sent back once
with the problem named, and a second failure gives a :class:`Judgement` whose
``verdict`` is None and whose ``error`` says why (a batch evaluation counts it;
nothing raises for a bad answer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pokegym.llm.base import AnswerFormatError, Cost, LanguageModel
from pokegym.llm.decide import parse_json_answer
from pokegym.moves.brief import PokemonBrief, similar_moves
from pokegym.moves.schema import MoveDesign
from pokegym.text.prompts import render_template
from pokegym.world.data import Dex, load_dex

VERDICTS = ("approve", "revise", "reject")

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "creativity": {"type": "integer", "enum": list(range(11))},
        "originality": {"type": "integer", "enum": list(range(11))},
        "verdict": {"type": "string", "enum": list(VERDICTS)},
    },
    "required": ["creativity", "originality", "verdict"],
}


@dataclass(frozen=True)
class Judgement:
    creativity: int | None
    originality: int | None
    verdict: str | None
    cost: Cost = field(default_factory=Cost)
    error: str | None = None
    repairs: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "creativity": self.creativity,
            "originality": self.originality,
            "verdict": self.verdict,
            "error": self.error,
            "repairs": self.repairs,
            "cost": self.cost.as_dict(),
        }


def judge_prompt(
    design: MoveDesign, pokemon: str, evaluation: Any, *, dex: Dex | None = None
) -> list[dict[str, str]]:
    """The chat prompt asking the judge about ``design`` (made for ``pokemon``)."""
    dex = dex or load_dex(9)
    brief = PokemonBrief.of(pokemon, dex)
    if evaluation is None:
        score, balance = "?", "not evaluated"
    else:
        score = str(evaluation.score)
        notes = [f"violation: {v}" for v in evaluation.violations]
        notes += [f"warning: {w}" for w in evaluation.warnings]
        balance = "; ".join(notes) if notes else "no problems found"
    shown = {k: v for k, v in design.to_dict().items()}
    user = render_template(
        "move_judge",
        pokemon=brief.name,
        types_text=brief.types_text,
        stronger_stat=brief.stronger_stat,
        move_json=json.dumps(shown, ensure_ascii=False),
        score=score,
        balance_text=balance,
        similar="; ".join(similar_moves(design, dex)) or "none",
    )
    return [
        {"role": "system", "content": render_template("move_judge_system")},
        {"role": "user", "content": user},
    ]


def judge_move(
    model: LanguageModel,
    design: MoveDesign,
    pokemon: str,
    evaluation: Any = None,
    *,
    dex: Dex | None = None,
    max_repairs: int = 1,
) -> Judgement:
    """Ask ``model`` to judge ``design``; see the module docstring for the failure rule."""
    messages = judge_prompt(design, pokemon, evaluation, dex=dex)
    cost = Cost()
    error = None
    for attempt in range(max_repairs + 1):
        completion = model.complete(
            messages, max_tokens=96, temperature=0.0, json_schema=JUDGE_SCHEMA
        )
        cost = cost + completion.cost
        try:
            answer = parse_json_answer(completion.text, JUDGE_SCHEMA)
        except AnswerFormatError as exc:
            error = str(exc)
            messages = [
                *messages,
                {"role": "assistant", "content": completion.text},
                {
                    "role": "user",
                    "content": f"That answer is invalid ({exc}). Reply with only the JSON object "
                    '{"creativity": <0-10>, "originality": <0-10>, "verdict": '
                    '"approve" | "revise" | "reject"}.',
                },
            ]
            continue
        return Judgement(
            int(answer["creativity"]),
            int(answer["originality"]),
            str(answer["verdict"]),
            cost,
            repairs=attempt,
        )
    return Judgement(None, None, None, cost, error=error, repairs=max_repairs)
