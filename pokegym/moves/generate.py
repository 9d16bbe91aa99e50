"""Move generation: a language model designs new moves for a Pokémon, as strict JSON.

One call asks for ``batch_size`` designs (a single JSON object, or ``{"moves": [...]}``
for several); the prompt (``text/templates/move_design.txt``) gives the Pokémon's
types and base stats, the fields and their ranges, and one example. Every answer goes
through the same pipeline, and nothing a model writes is trusted:

1. parse: the JSON object is extracted and must hold the keys of
   :data:`~pokegym.moves.schema.DESIGN_SCHEMA`;
2. shape: :meth:`MoveDesign.from_dict` (types, known words; ``"Paralysis"`` and ``10.0``
   are read as ``"paralysis"`` and ``10``). An answer that fails 1 or 2 is sent back
   once with the problem named (a *repair*), then counted as a failed design (in a
   batch, a malformed item is counted as failed without a repair);
3. novelty: a design that reuses the name of a Showdown move, or copies one's
   numbers (same type, category, power, accuracy, effect and chance), is a copy and
   is never valid (:func:`find_copy`, against Showdown's own move table);
4. balance: :func:`pokegym.moves.balance.evaluate` (violations, warnings, score);
5. judge (optional): :func:`pokegym.moves.judge.judge_move`.

Every candidate keeps the model's raw answer and the cost of producing it, so a batch
evaluation can report validity, balance, judge scores and tokens per design.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pokegym.llm.base import AnswerFormatError, Cost, LanguageModel
from pokegym.llm.decide import parse_json_answer
from pokegym.moves.balance import evaluate
from pokegym.moves.brief import MoveGenerationError, PokemonBrief
from pokegym.moves.judge import judge_move
from pokegym.moves.schema import DESIGN_SCHEMA, EFFECTS, MoveDesign, MoveFormatError
from pokegym.text.prompts import render_template
from pokegym.world.data import Dex, load_dex

MAX_BATCH = 8
TOKENS_PER_DESIGN = 160  # a design is ~70-100 tokens of JSON; room for a long description


def batch_schema(count: int) -> dict[str, Any]:
    """The JSON schema of an answer holding ``count`` designs."""
    return {
        "type": "object",
        "properties": {"moves": {"type": "array", "items": {"type": "object"}}},
        "required": ["moves"],
    }


@dataclass
class Candidate:
    """One design as the model gave it, and what the checks made of it."""

    pokemon: str
    raw: Any  # the parsed JSON item, or the answer text when it did not parse
    design: MoveDesign | None = None
    error: str | None = None  # why there is no design (parse or shape problem)
    copy_of: str | None = None  # the Showdown move it copies, if any
    evaluation: Any = None  # pokegym.moves.balance.Evaluation
    judgement: Any = None  # pokegym.moves.judge.Judgement
    cost: Cost = field(default_factory=Cost)  # its share of the generation call(s)

    @property
    def valid(self) -> bool:
        """Parsed, not a copy, and no balance violation."""
        return (
            self.design is not None
            and self.copy_of is None
            and self.evaluation is not None
            and bool(self.evaluation.valid)
        )

    @property
    def balanced(self) -> bool:
        return self.valid and bool(self.evaluation.balanced)

    @property
    def approved(self) -> bool:
        """Balanced, and the judge (when there was one) said approve."""
        if not self.balanced:
            return False
        return self.judgement is None or self.judgement.verdict == "approve"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pokemon": self.pokemon,
            "design": self.design.to_dict() if self.design else None,
            "raw": self.raw if self.design is None else None,
            "error": self.error,
            "copy_of": self.copy_of,
            "valid": self.valid,
            "balanced": self.balanced,
            "evaluation": self.evaluation.to_dict() if self.evaluation is not None else None,
            "judgement": self.judgement.to_dict() if self.judgement is not None else None,
            "cost": self.cost.as_dict(),
        }


def find_copy(design: MoveDesign, dex: Dex) -> str | None:
    """The name of the Showdown move ``design`` copies, or None.

    A copy reuses an existing move's name (compared as Showdown ids), or its numbers:
    same type, category, power, accuracy and secondary effect with the same chance.
    """
    existing = dex.moves.get(design.id)
    if existing is not None and not existing.get("designed"):
        return str(existing.get("name", design.name))
    for entry in dex.moves.values():
        if entry.get("designed") or entry.get("category") != design.category:
            continue
        if entry.get("type") != design.type or entry.get("basePower") != design.power:
            continue
        accuracy = 100 if entry.get("accuracy") is True else entry.get("accuracy")
        if accuracy != design.accuracy:
            continue
        other = MoveDesign.from_showdown(entry)
        if other is None:
            continue
        if (other.effect, other.effect_chance) == (design.effect, design.effect_chance):
            return str(entry["name"])
    return None


def design_prompt(brief: PokemonBrief, count: int) -> list[dict[str, str]]:
    """The chat prompt that asks for ``count`` designs for ``brief``'s Pokémon."""
    if count == 1:
        answer = (
            "Reply with only one JSON object with the keys name, type, category, power, "
            "accuracy, pp, effect, effect_chance and description."
        )
    else:
        answer = (
            f'Reply with only a JSON object {{"moves": [...]}} whose list holds {count} such '
            "objects, each with the keys name, type, category, power, accuracy, pp, effect, "
            "effect_chance and description, each move different from the others."
        )
    stats = brief.base_stats
    user = render_template(
        "move_design",
        count=count,
        moves_word="move" if count == 1 else "moves",
        pokemon=brief.name,
        types_text=brief.types_text,
        types_list=", ".join(brief.types),
        hp=stats["hp"],
        atk=stats["atk"],
        **{"def": stats["def"]},
        spa=stats["spa"],
        spd=stats["spd"],
        spe=stats["spe"],
        stronger_stat=brief.stronger_stat,
        category=brief.category,
        effects=", ".join(EFFECTS),
        answer_format=answer,
    )
    return [
        {"role": "system", "content": render_template("move_design_system")},
        {"role": "user", "content": user},
    ]


# What an answer must be before :meth:`MoveDesign.from_dict` reads it: an object with
# the keys. Types and words are checked (and normalised: "Paralysis", 10.0) there.
_ANSWER_SCHEMA: dict[str, Any] = {"type": "object", "required": DESIGN_SCHEMA["required"]}


def _items(text: str, count: int) -> list[Any]:
    """The design objects in an answer (raises AnswerFormatError when there are none)."""
    if count == 1:
        try:
            item = parse_json_answer(text, _ANSWER_SCHEMA)
            try:
                MoveDesign.from_dict(item)
            except MoveFormatError as exc:  # repaired like any other bad answer
                raise AnswerFormatError(f"the design is invalid: {exc}") from None
            return [item]
        except AnswerFormatError as error:
            # A model asked for one design may still wrap it in {"moves": [...]}.
            try:
                value = parse_json_answer(text, batch_schema(1))
            except AnswerFormatError:
                raise error from None
            if not value["moves"]:
                raise
            return list(value["moves"])[:1]
    value = parse_json_answer(text, batch_schema(count))
    items = list(value["moves"])
    if not items:
        raise AnswerFormatError('the "moves" list is empty')
    return items[:count]


def generate_moves(
    model: LanguageModel,
    pokemon: str,
    n: int = 4,
    *,
    batch_size: int = 1,
    temperature: float = 0.7,
    seed: int = 0,
    max_repairs: int = 1,
    judge: LanguageModel | None = None,
    dex: Dex | None = None,
) -> list[Candidate]:
    """Ask ``model`` for ``n`` designs for ``pokemon``, ``batch_size`` per call, and check them.

    Returns exactly ``n`` candidates: designs the model did not deliver (an answer that
    never parsed, a batch that came back short) are candidates with an ``error``. With
    ``judge`` (a model, often the same one) each valid design (parsed, not a copy, no
    balance violation) is also judged; judging designs that cannot be played would
    spend tokens on answers nobody uses. Backend failures (:class:`LLMError`) propagate;
    bad answers never do.
    """
    if n < 1:
        raise MoveGenerationError(f"n must be at least 1, got {n}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise MoveGenerationError(f"batch_size must be between 1 and {MAX_BATCH}, got {batch_size}")
    dex = dex or load_dex(9)
    brief = PokemonBrief.of(pokemon, dex)
    out: list[Candidate] = []
    call = 0
    while len(out) < n:
        count = min(batch_size, n - len(out))
        messages = design_prompt(brief, count)
        cost = Cost()
        items: list[Any] = []
        error: str | None = None
        text = ""
        for _attempt in range(max_repairs + 1):
            completion = model.complete(
                messages,
                max_tokens=TOKENS_PER_DESIGN * count + 40,
                temperature=temperature,
                seed=seed * 1000 + call,
            )
            cost = cost + completion.cost
            text = completion.text
            try:
                items = _items(text, count)
                error = None
                break
            except AnswerFormatError as exc:
                error = str(exc)
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": f"That answer is invalid ({exc}). Reply again with only the "
                        "JSON, exactly in the format asked for.",
                    },
                ]
        call += 1
        share = _share(cost, count)
        seen = {c.design.id for c in out if c.design is not None}
        for k in range(count):
            if k >= len(items):
                reason = error or f"the answer held {len(items)} designs, {count} were asked for"
                out.append(Candidate(brief.name, text, error=reason, cost=share))
                continue
            candidate = _check(brief, items[k], dex, share, seen)
            if candidate.design is not None:
                seen.add(candidate.design.id)
                candidate.evaluation = evaluate(candidate.design, pokemon=brief.name, dex=dex)
                if judge is not None and candidate.copy_of is None and candidate.evaluation.valid:
                    candidate.judgement = judge_move(
                        judge, candidate.design, brief.name, candidate.evaluation, dex=dex
                    )
            out.append(candidate)
    return out


def _check(brief: PokemonBrief, item: Any, dex: Dex, cost: Cost, seen: set[str]) -> Candidate:
    try:
        design = MoveDesign.from_dict(item)
    except MoveFormatError as exc:
        return Candidate(brief.name, item, error=str(exc), cost=cost)
    candidate = Candidate(brief.name, item, design=design, cost=cost)
    candidate.copy_of = find_copy(design, dex)
    if candidate.copy_of is None and design.id in seen:
        candidate.copy_of = f"{design.name} (designed twice)"
    return candidate


def _share(cost: Cost, count: int) -> Cost:
    """An even share of one call's cost for each of the ``count`` designs it produced."""
    return Cost(
        tokens_in=round(cost.tokens_in / count),
        tokens_out=round(cost.tokens_out / count),
        cached_tokens=round(cost.cached_tokens / count),
        calls=1 if count == 1 else 0,
        seconds=cost.seconds / count,
    )


def describe(design: MoveDesign) -> str:
    """One line: ``Magma Lance  Fire Physical  85/95/10  burn 20%``."""
    effect = "-" if not design.has_effect else f"{design.effect} {design.effect_chance}%"
    return (
        f"{design.name}  {design.type} {design.category}  "
        f"power {design.power} acc {design.accuracy} pp {design.pp}  {effect}"
    )


def candidates_json(candidates: Sequence[Candidate]) -> str:
    return json.dumps([c.to_dict() for c in candidates], indent=1, ensure_ascii=False)
