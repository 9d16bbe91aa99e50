"""``pokellmon``: a knowledge-augmented LLM player with self-consistency.

Each decision renders one prompt (:class:`pokegym.text.BattlePrompter`): the team sheet,
the observable state, the last ``history_turns`` turns of the battle (in-context
feedback: what each move did), and, with ``knowledge=True``, type effectiveness both ways
and the descriptions of the moves, abilities and items in play. The legal actions are
listed with unique labels and the model picks one of them.

**Self-consistency.** ``samples`` answers are drawn for the same prompt (with
``method="generate"``: a JSON answer, constrained to the legal labels where the backend
can; the first sample at temperature 0, the others at ``temperature``; with
``reasoning=True`` each sample first writes its own short analysis). **Vote rule:** the
label with the most votes wins; a tie goes to the tied label that was answered first
(so the greedy sample breaks ties). Sampling stops early once a label holds a strict
majority of ``samples`` (later samples cannot change the result) or when the next sample
would not end before the deadline. Samples that fell back (malformed after
``max_repairs`` repairs, or a backend error) do not vote. With ``method="score"`` and no
reasoning the answer is deterministic, so one sample is taken.

**Fallback:** when no sample voted (or the model failed), the highest base-power move,
else the safest switch (:func:`policies.llm_common.fallback_order`).

**Time:** the deadline of a decision comes from the turn clock
(:class:`policies.llm_common.TurnClock`: Showdown's 150 s bank + 15 s per turn minus a
margin), or ``time_limit`` seconds when given.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import Any

from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from pokegym.llm import Decision, choose
from pokegym.text import BattlePrompter
from policies.llm_common import Deadline, LLMPolicy, codec_for, fallback_index

log = logging.getLogger(__name__)


def vote(answers: list[str]) -> str | None:
    """The label with the most votes; ties go to the one answered first (None if empty)."""
    if not answers:
        return None
    counts = Counter(answers)
    top = max(counts.values())
    return next(a for a in answers if counts[a] == top)


class PokeLLMonPolicy(LLMPolicy):
    """Knowledge-augmented prompt, last turns in context, self-consistency vote.

    Args (besides :class:`LLMPolicy`'s):
        samples: answers per decision (k of the vote).
        temperature: sampling temperature of the samples after the first.
        method: ``"generate"`` (JSON answer; sampling makes the vote meaningful) or
            ``"score"`` (log-probabilities of the labels).
        history_turns: past turns in the prompt (T).
        knowledge: add type effectiveness and descriptions.
        prompt_layout: ``turn`` (the paper's: the description made anew each turn,
            ``history_turns`` turns of history) or ``battle`` (append-only across the
            battle, the whole log; the model's prefix cache leaves each turn only what
            changed to compute; see :class:`pokegym.text.BattlePrompter`).
        max_repairs: repairs of a malformed answer per sample.
    """

    name = "pokellmon"

    def __init__(
        self,
        seed: int | None = None,
        *,
        samples: int = 3,
        temperature: float = 0.7,
        method: str = "generate",
        history_turns: int = 3,
        knowledge: bool = True,
        max_repairs: int = 1,
        prompt_layout: str = "turn",
        **options: Any,
    ):
        super().__init__(seed, **options)
        if samples < 1:
            raise ValueError("samples must be at least 1")
        if method not in ("generate", "score"):
            raise ValueError(f"method is 'generate' or 'score', got {method!r}")
        self.samples = int(samples)
        self.temperature = float(temperature)
        self.method = method
        self.max_repairs = int(max_repairs)
        self.prompter = BattlePrompter(
            history_turns=int(history_turns), knowledge=knowledge, layout=prompt_layout
        )
        self.last_votes: list[str] = []
        self.last_decisions: list[Decision] = []

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        self.prompter.attach(battle)
        return super().choose(battle)

    def decide(self, battle: AbstractBattle, deadline: Deadline) -> BattleOrder:
        codec = codec_for(battle)
        messages, actions = self.prompter.action_prompt(
            battle, json_answer=self.method == "generate"
        )
        if not actions:
            return self.fallback(battle)
        labels = [a.label for a in actions]
        fallback = fallback_index(battle, actions, codec)
        samples = self.samples
        if self.method == "score" and not self.reasoning:
            samples = 1  # deterministic: more samples would repeat the first
        votes: list[str] = []
        self.last_decisions = []
        for i in range(samples):
            kind = "answer" if i == 0 else "sample"
            if not self.llm.affordable(kind, deadline):
                break
            began = time.monotonic()
            decision = choose(
                self.model,
                messages,
                labels,
                method=self.method,  # type: ignore[arg-type]
                reasoning=self.reasoning,
                reasoning_tokens=self.reasoning_tokens,
                max_repairs=self.max_repairs,
                fallback=fallback,
                temperature=0.0 if i == 0 else self.temperature,
                seed=int(self.rng.integers(2**31)),
            )
            self.llm.record(kind, decision.cost, time.monotonic() - began)
            self.last_decisions.append(decision)
            if decision.used_fallback:
                log.warning("pokellmon: sample %d fell back (%s)", i, "; ".join(decision.errors))
                continue
            votes.append(decision.option)
            if Counter(votes).most_common(1)[0][1] * 2 > samples:
                break
        self.last_votes = votes
        winner = vote(votes)
        if winner is None:
            return self.fallback(battle)
        return codec.to_order(actions[labels.index(winner)].action, battle)
