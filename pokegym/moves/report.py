"""Batch evaluation of a move designer: ``pokegym moves eval``.

``n`` designs are requested over a fixed, varied list of Pokémon (physical and
special attackers of many types), ``batch_size`` designs per model call, and every
design goes through the checks of :mod:`pokegym.moves.generate` and, optionally, the
judge. The report gives what a study of LLM move designers compares per model and
per batch size:

* validity: the share of the ``n`` requested designs that parsed, are not copies of
  existing moves and break no rule of the evaluator (a design that never came back
  counts as invalid);
* balanced: the share that is valid and scores at least 70;
* copies: designs that reuse a Showdown move's name or numbers;
* mean creativity and originality (0-10) over the designs the judge rated, and the
  verdicts;
* tokens (prompt and answer) and seconds per requested design, judge included.

Shares come with 95 % Wilson intervals: thirty designs do not pin a rate down.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pokegym.llm.base import Cost, LanguageModel
from pokegym.moves.generate import Candidate, generate_moves
from pokegym.stats import wilson_interval
from pokegym.world.data import Dex, load_dex

DEFAULT_POKEMON = (
    "Garchomp", "Charizard", "Blastoise", "Venusaur", "Alakazam", "Gengar", "Tyranitar",
    "Lucario", "Gardevoir", "Dragonite", "Scizor", "Jolteon", "Mamoswine", "Toxapex",
    "Hatterene",
)  # fmt: skip


@dataclass
class BatchReport:
    model: str
    batch_size: int
    candidates: list[Candidate] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def n(self) -> int:
        return len(self.candidates)

    def _rate(self, count: int) -> dict[str, float]:
        low, high = wilson_interval(count, self.n)
        return {
            "count": count,
            "rate": count / self.n if self.n else float("nan"),
            "low": low,
            "high": high,
        }

    def metrics(self) -> dict[str, Any]:
        judged = [c.judgement for c in self.candidates if c.judgement is not None]
        rated = [j for j in judged if j.verdict is not None]
        cost = sum((c.cost for c in self.candidates), Cost())
        cost = cost + sum((j.cost for j in judged), Cost())
        n = max(self.n, 1)
        return {
            "model": self.model,
            "batch_size": self.batch_size,
            "n": self.n,
            "parsed": sum(c.design is not None for c in self.candidates),
            "validity": self._rate(sum(c.valid for c in self.candidates)),
            "balanced": self._rate(sum(c.balanced for c in self.candidates)),
            "copies": sum(c.copy_of is not None for c in self.candidates),
            "judged": len(rated),
            "judge_failures": len(judged) - len(rated),
            "creativity_mean": statistics.fmean(j.creativity for j in rated) if rated else None,
            "originality_mean": statistics.fmean(j.originality for j in rated) if rated else None,
            "verdicts": dict(Counter(j.verdict for j in rated)),
            "approved": sum(c.approved and c.judgement is not None for c in self.candidates),
            "tokens_in_per_design": cost.tokens_in / n,
            "tokens_out_per_design": cost.tokens_out / n,
            "seconds_per_design": self.seconds / n,
            "scores": [c.evaluation.score for c in self.candidates if c.evaluation is not None],
        }

    def summary(self) -> str:
        m = self.metrics()

        def rate(key: str) -> str:
            r = m[key]
            return f"{r['rate']:.1%} [{r['low']:.1%}, {r['high']:.1%}] ({r['count']}/{m['n']})"

        creativity = f"{m['creativity_mean']:.2f}" if m["creativity_mean"] is not None else "-"
        originality = f"{m['originality_mean']:.2f}" if m["originality_mean"] is not None else "-"
        lines = [
            f"{m['n']} designs by {m['model']}, batch size {m['batch_size']}",
            f"  validity    {rate('validity')}",
            f"  balanced    {rate('balanced')}",
            f"  parsed {m['parsed']}/{m['n']}, copies of existing moves {m['copies']}",
            f"  judge: {m['judged']} rated, {m['judge_failures']} failed; creativity "
            f"{creativity}, originality {originality}; verdicts {m['verdicts'] or '-'}",
            f"  per design: {m['tokens_in_per_design']:.0f} prompt tokens, "
            f"{m['tokens_out_per_design']:.0f} answer tokens, {m['seconds_per_design']:.1f} s",
        ]
        return "\n".join(lines)

    def to_json(self) -> str:
        payload = {"metrics": self.metrics(), "designs": [c.to_dict() for c in self.candidates]}
        return json.dumps(payload, indent=1, ensure_ascii=False)


def run_batch_eval(
    model: LanguageModel,
    n: int = 30,
    *,
    batch_size: int = 1,
    pokemon: Sequence[str] = DEFAULT_POKEMON,
    judge: bool = True,
    temperature: float = 0.7,
    seed: int = 0,
    dex: Dex | None = None,
    progress: Any = None,
) -> BatchReport:
    """Request ``n`` designs, ``batch_size`` per call, cycling over ``pokemon``.

    Each Pokémon in turn gets one call (``batch_size`` designs), so batch size 1 and 4
    spread the same ``n`` over different numbers of Pokémon; the list is long enough
    that both see a varied set. ``progress(done, n)`` is called after each call.
    """
    if not pokemon:
        raise ValueError("name at least one Pokémon")
    dex = dex or load_dex(9)
    report = BatchReport(model=getattr(model, "name", type(model).__name__), batch_size=batch_size)
    start = time.perf_counter()
    call = 0
    while report.n < n:
        count = min(batch_size, n - report.n)
        species = pokemon[call % len(pokemon)]
        report.candidates += generate_moves(
            model,
            species,
            count,
            batch_size=batch_size,
            temperature=temperature,
            seed=seed * 7919 + call,
            judge=model if judge else None,
            dex=dex,
        )
        call += 1
        if progress is not None:
            progress(report.n, n)
    report.seconds = time.perf_counter() - start
    return report
