"""``porimon``: an LLM player with a sliding window of turns and cross-battle experience.

**Short-term history.** The prompt carries the last ``history_turns`` turns (T), oldest
first, each turn one line of sentences, joined by ``separator``.

**Long-term experience** (:mod:`memory.porimon`). After each battle the agent stores one
:class:`~memory.porimon.ExperienceItem`: a model-written summary of the last 12,000
characters of the battle log (as sentences, species and move names only) with tactical
lessons, an importance score per Pokémon (the expected score bucket 0-9 of the question
"how important was X", divided by 9), both teams and the outcome. Before each decision
it retrieves the top 3 items by team similarity (the Porimon formula in
:mod:`memory.porimon`; nothing until 10 items are stored) and shows their summaries and
lessons. The memory is a JSON file that persists across runs (``memory_path``, default
``$POKEGYM_HOME/porimon/memory.json``).

The end of a battle is learnt through :meth:`policies.base.Policy.battle_finished`
(:func:`policies.base.notify_when_finished` is set on every battle the agent sees).

**Answer, retry budget and fallback.** With ``method="generate"`` the model answers a
JSON object naming one legal label; a malformed or illegal answer is sent back with the
problem up to ``retries`` times (T_r); then, or when the model fails or time runs out,
the fallback rule plays the highest base-power move, else the safest switch.
``method="score"`` picks the most likely label (cannot be malformed).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from memory.porimon import ExperienceItem, ExperienceMemory, records
from pokegym.llm import Cost, LLMError, ScoreRequest, choose
from pokegym.showdown.install import cache_home
from pokegym.text import (
    VALUE_BUCKETS,
    BattlePrompter,
    GameNames,
    ProtocolRecorder,
    history_text,
    render_template,
    scrub,
    untrusted_strings,
)
from pokegym.world.data import load_dex
from policies.base import notify_when_finished
from policies.llm_common import Deadline, LLMPolicy, battle_log_text, codec_for, fallback_index

log = logging.getLogger(__name__)

LOG_CHARS = 12_000
_MEMORIES: dict[tuple[str, float], ExperienceMemory] = {}
SUMMARY_INSTRUCTION = (
    "Above is the log of a Pokémon battle you just {outcome}. Write a short summary of "
    "how the battle was decided (two or three sentences) on a line starting with "
    "'Summary:', then two or three tactical lessons for future battles, each on its own "
    "line starting with '- '."
)
IMPORTANCE_QUESTION = (
    "How important was {species} to the outcome of this battle, from 0 (not at all) to 9 "
    "(decisive)? Answer with one digit."
)


def default_memory_path() -> Path:
    return cache_home() / "porimon" / "memory.json"


def parse_summary(text: str) -> tuple[str, list[str]]:
    """``(summary, lessons)`` from the model's answer (see ``SUMMARY_INSTRUCTION``).

    Lines starting with ``-``, ``*`` or a number are lessons; the rest is the summary
    (its ``Summary:`` prefix removed). At most 5 lessons of at most 300 characters.
    """
    summary: list[str] = []
    lessons: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line[0] in "-*•" or (line[0].isdigit() and line[1:3].strip().startswith((".", ")"))):
            lesson = line.lstrip("-*•0123456789.) ").strip()
            if lesson:
                lessons.append(lesson[:300])
            continue
        if line.lower().startswith("lessons"):
            continue
        summary.append(line.removeprefix("Summary:").removeprefix("summary:").strip())
    return " ".join(s for s in summary if s)[:800], lessons[:5]


class PorimonPolicy(LLMPolicy):
    """Turn window + experience memory (see the module docstring).

    Args (besides :class:`policies.llm_common.LLMPolicy`'s):
        history_turns: T, the turns in the window.
        separator: what joins the turns of the window.
        memory_path: the experience file (None: ``$POKEGYM_HOME/porimon/memory.json``).
        use_memory: retrieve items into the prompt.
        learn: store an item after each battle.
        retries: T_r, repairs of a malformed answer before the fallback rule.
        method: ``"generate"`` (JSON answer) or ``"score"``.
        knowledge: add type effectiveness and descriptions to the prompt.
        summary_tokens: length limit of the end-of-battle summary.
        alpha: weight of the base-stat term in the Pokémon similarity.
    """

    name = "porimon"

    def __init__(
        self,
        seed: int | None = None,
        *,
        history_turns: int = 5,
        separator: str = " || ",
        memory_path: str | Path | None = None,
        use_memory: bool = True,
        learn: bool = True,
        retries: int = 2,
        method: str = "generate",
        knowledge: bool = False,
        summary_tokens: int = 120,
        alpha: float = 0.5,
        **options: Any,
    ):
        super().__init__(seed, **options)
        if method not in ("generate", "score"):
            raise ValueError(f"method is 'generate' or 'score', got {method!r}")
        if retries < 0 or history_turns < 0:
            raise ValueError("retries and history_turns cannot be negative")
        self.history_turns = int(history_turns)
        self.separator = separator
        self.memory_path = Path(memory_path) if memory_path else default_memory_path()
        self.use_memory = bool(use_memory)
        self.learn = bool(learn)
        self.retries = int(retries)
        self.method = method
        self.summary_tokens = int(summary_tokens)
        self.alpha = float(alpha)
        self.prompter = BattlePrompter(history_turns=0, knowledge=bool(knowledge))
        self._memory: ExperienceMemory | None = None
        self.last_prompt: list[dict[str, str]] = []
        self.last_retrieved: list[tuple[ExperienceItem, float]] = []
        self.stored: list[ExperienceItem] = []
        #: Model cost of the end-of-battle summaries (not charged to any decision).
        self.learning_cost = Cost()

    # ------------------------------------------------------------ memory
    @property
    def memory(self) -> ExperienceMemory:
        """The experience memory (read from disk on first use; one object per file and
        process, so the agents of parallel battles add to the same list)."""
        if self._memory is None:
            key = (str(self.memory_path.resolve()), self.alpha)
            memory = _MEMORIES.get(key)
            if memory is None:
                memory = _MEMORIES[key] = ExperienceMemory(self.memory_path, alpha=self.alpha)
            self._memory = memory
        return self._memory

    def retrieve(self, battle: AbstractBattle) -> list[tuple[ExperienceItem, float]]:
        """The stored items most like this battle (top 3, once 10 are stored)."""
        dex = load_dex(battle.gen)
        ours = records(battle.team.values(), dex)
        theirs = records(battle.opponent_team.values(), dex)
        if not ours or not theirs:
            return []
        return self.memory.retrieve(ours, theirs)

    def experience_text(self, retrieved: list[tuple[ExperienceItem, float]]) -> str:
        lines = []
        for i, (item, score) in enumerate(retrieved, 1):
            outcome = {1.0: "won", 0.0: "lost"}.get(item.outcome, "tied")
            lines.append(f"{i}. A battle you {outcome} (similarity {score:.2f}): {item.summary}")
            lines += [f"   Lesson: {lesson}" for lesson in item.lessons]
        return "\n".join(lines)

    # ------------------------------------------------------------ decision
    def window(self, battle: AbstractBattle) -> str:
        """The last T turns, oldest first, joined by the separator."""
        if not self.history_turns:
            return "not shown"
        recorder = ProtocolRecorder.attach(battle)
        text = history_text(
            recorder.messages, battle.player_role or "p1", GameNames(battle.gen),
            self.history_turns, battle,
        )  # fmt: skip
        return self.separator.join(line for line in text.splitlines() if line.strip())

    def prompt(self, battle: AbstractBattle) -> tuple[list[dict[str, str]], list[Any]]:
        """The action prompt: battle description, turn window, experience, question."""
        messages, actions = self.prompter.action_prompt(battle)
        context = self.prompter.context(battle)
        question = messages[-1]["content"][len(context[-1]["content"]) :]
        extra = f"\n\nTurn history (last {self.history_turns} turns, oldest first, separated "
        extra += f"by '{self.separator.strip()}'):\n{self.window(battle)}"
        self.last_retrieved = self.retrieve(battle) if self.use_memory else []
        if self.last_retrieved:
            text = scrub(self.experience_text(self.last_retrieved), untrusted_strings(battle))
            extra += f"\n\nExperience from similar past battles:\n{text}"
        content = context[-1]["content"] + extra + question
        if self.method == "generate":
            content += "\n" + render_template("answer_json")
        messages = [*context[:-1], {"role": "user", "content": content}]
        return messages, actions

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        self.prompter.attach(battle)
        if self.learn:
            notify_when_finished(self, battle)
        return super().choose(battle)

    def decide(self, battle: AbstractBattle, deadline: Deadline) -> BattleOrder:
        messages, actions = self.prompt(battle)
        self.last_prompt = messages
        if not actions:
            return self.fallback(battle)
        if not self.llm.affordable("answer", deadline):
            return self.fallback(battle)
        codec = codec_for(battle)
        labels = [a.label for a in actions]
        began = time.monotonic()
        decision = choose(
            self.model, messages, labels, method=self.method,  # type: ignore[arg-type]
            reasoning=self.reasoning, reasoning_tokens=self.reasoning_tokens,
            max_repairs=self.retries, fallback=fallback_index(battle, actions, codec),
            seed=int(self.rng.integers(2**31)),
        )  # fmt: skip
        self.llm.record("answer", decision.cost, time.monotonic() - began)
        if decision.used_fallback:
            log.warning("porimon: fallback rule (%s)", "; ".join(decision.errors))
            self.llm.usage.fallbacks += 1
        return codec.to_order(actions[decision.index].action, battle)

    # ------------------------------------------------------------ learning
    def battle_finished(self, battle: AbstractBattle) -> None:
        """Store what this battle taught (never raises: a failure is logged)."""
        if not self.learn:
            return
        try:
            self.stored.append(self.remember(battle))
        except Exception:  # the battle is over; losing one memory must not end the run
            log.exception("porimon: could not store the experience of %s", battle.battle_tag)

    def remember(self, battle: AbstractBattle) -> ExperienceItem:
        """Summarise ``battle`` with the model and add the item to the memory."""
        outcome = 1.0 if battle.won else 0.0 if battle.lost else 0.5
        word = {1.0: "won", 0.0: "lost"}.get(outcome, "tied")
        dex = load_dex(battle.gen)
        ours = records(battle.team.values(), dex)
        theirs = records(battle.opponent_team.values(), dex)
        log_text = battle_log_text(battle, LOG_CHARS)
        base = [
            {"role": "system", "content": render_template("system", format=f"Gen {battle.gen}")},
            {"role": "user", "content": f"Battle log (you are 'your'):\n{log_text}"},
        ]
        summary, lessons = "", []
        try:
            asked = [*base]
            asked[-1] = {"role": "user", "content": base[-1]["content"] + "\n\n"
                         + SUMMARY_INSTRUCTION.format(outcome=word)}  # fmt: skip
            completion = self.model.complete(asked, max_tokens=self.summary_tokens)
            self.learning_cost = self.learning_cost + completion.cost
            summary, lessons = parse_summary(completion.text)
        except LLMError as error:
            log.warning("porimon: no summary for %s (%s)", battle.battle_tag, error)
        if not summary:
            summary = f"You {word} in {battle.turn} turns."
        importance: dict[str, float] = {}
        names = GameNames(battle.gen)
        team = [(r, mon) for r, mon in zip(ours, battle.team.values(), strict=True)]
        team += [(r, mon) for r, mon in zip(theirs, battle.opponent_team.values(), strict=True)]
        requests, keys = [], []
        for record, mon in team:
            species = names.species(mon.species)
            if not species or record.species in keys:
                continue
            question = IMPORTANCE_QUESTION.format(species=species)
            messages = [*base[:-1], {"role": "user", "content": base[-1]["content"]
                                     + "\n\n" + question}]  # fmt: skip
            requests.append(ScoreRequest(messages, VALUE_BUCKETS))
            keys.append(record.species)
        try:
            if requests:
                results = self.model.score_batch(requests)
                for key, scores in zip(keys, results, strict=True):
                    importance[key] = scores.expectation(range(len(VALUE_BUCKETS))) / 9.0
                    self.learning_cost = self.learning_cost + scores.cost
        except LLMError as error:
            log.warning("porimon: no importance scores for %s (%s)", battle.battle_tag, error)
        item = ExperienceItem(
            summary=summary, lessons=lessons, our_team=ours, their_team=theirs,
            importance=importance, outcome=outcome,
            battle_format=getattr(battle, "format", None) or "", battle_tag=battle.battle_tag,
        )  # fmt: skip
        self.memory.add(item)
        return item
