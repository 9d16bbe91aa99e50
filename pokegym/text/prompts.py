"""Prompt templates (files in ``templates/``) and the battle prompts built from them.

Templates are :class:`string.Template` files rendered strictly: a placeholder without
a value raises ``KeyError``. Every prompt of one battle turn starts with the same
system message and battle description, and differs only in the question at the end,
so a backend with a prefix cache computes the description once per turn.

Two layouts of the description (``BattlePrompter(layout=...)``):

- ``"turn"``: made anew each turn: the team sheet, the state, the last
  ``history_turns`` turns. Across turns only the system message is shared, so each
  turn's first call computes the whole description again.
- ``"battle"``: append-only across the battle: the team's sets (and, with
  ``knowledge``, the descriptions of its moves, abilities and items) written once, then
  the battle log, one line per finished turn, then what changes every turn (HP, status,
  boosts, the field, the opponent, the matchup) and the question. Each turn's prompt
  starts with the previous turn's head and log, so a backend with a prefix cache
  computes only the new turn's line and the changing part. The log keeps at most
  ``log_turns`` turns: when it would hold more, its older half is dropped at once (one
  full recomputation, then appends again).
"""

from __future__ import annotations

import string
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from poke_env.battle import AbstractBattle

from pokegym.actions import ActionCodec
from pokegym.text.render import (
    GameNames,
    LegalAction,
    ProtocolRecorder,
    history_text,
    knowledge_text,
    legal_actions,
    opponent_options,
    scrub,
    set_text,
    state_text,
    team_knowledge_text,
    team_text,
    turn_events,
    turn_line,
    untrusted_strings,
)

#: Score buckets of a leaf evaluation: single digits, one token each.
VALUE_BUCKETS = tuple(str(d) for d in range(10))
LAYOUTS = ("turn", "battle")
#: Battles whose append-only head a prompter keeps (the arena plays a few at once).
_KEPT_BATTLES = 32


@cache
def load_template(name: str) -> string.Template:
    """The template ``templates/<name>.txt`` shipped with pokegym."""
    path = resources.files("pokegym.text").joinpath("templates", f"{name}.txt")
    if not path.is_file():
        raise FileNotFoundError(f"No prompt template named {name!r}")
    return string.Template(path.read_text(encoding="utf-8"))


def render_template(name: str, **values: object) -> str:
    """Render a template; a missing value raises ``KeyError`` naming it."""
    try:
        return load_template(name).substitute(values).strip("\n")
    except KeyError as error:
        raise KeyError(f"template {name!r} needs a value for {error.args[0]!r}") from None


@dataclass
class BattlePrompter:
    """Builds the chat prompts of an LLM agent for one side of a battle.

    Args:
        history_turns: how many past turns to describe (0: none).
        knowledge: add type effectiveness and move/ability/item descriptions.
        strategy: a text about the team's plan, written by the agent's owner.
        lookahead: the world model's one-step lookahead block, as text or as a
            function of the battle (e.g. ``lambda b: one_step_lookahead(model,
            state_from_battle(b)).text()``).
        codec: the action layout (default: terastallize in gen 9).
    """

    history_turns: int = 3
    knowledge: bool = False
    strategy: str | None = None
    lookahead: str | Callable[[AbstractBattle], str] | None = None
    codec: ActionCodec | None = None
    layout: str = "turn"
    log_turns: int = 24
    _logs: OrderedDict[str, _BattleLog] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(
                f"prompt layout is one of {', '.join(LAYOUTS)}, got {self.layout!r}: 'turn' "
                "describes each turn anew, 'battle' keeps the prompt append-only across a "
                "battle so a model's prefix cache is reused"
            )
        if self.log_turns < 2:
            raise ValueError(f"log_turns must be at least 2, got {self.log_turns}")

    def attach(self, battle: AbstractBattle) -> None:
        """Start recording the battle's messages for the history (call early)."""
        ProtocolRecorder.attach(battle)

    def _extras(self, battle: AbstractBattle, untrusted: list[str], *, strategy: bool) -> str:
        extras = ""
        if strategy and self.strategy:
            extras += "\n\n" + render_template("strategy", strategy=scrub(self.strategy, untrusted))
        if self.lookahead is not None:
            text = self.lookahead(battle) if callable(self.lookahead) else self.lookahead
            if text:
                extras += "\n\n" + render_template("lookahead", lookahead=scrub(text, untrusted))
        return extras

    def context(self, battle: AbstractBattle) -> list[dict[str, str]]:
        """System message and the battle description: the shared start of every prompt."""
        if self.layout == "battle":
            return self._battle_context(battle)
        names = GameNames(battle.gen)
        recorder = ProtocolRecorder.attach(battle)
        untrusted = untrusted_strings(battle)
        extras = self._extras(battle, untrusted, strategy=True)
        if self.knowledge:
            extras += "\n\n" + render_template("knowledge", knowledge=knowledge_text(battle, names))
        history = (
            history_text(
                recorder.messages, battle.player_role or "p1", names, self.history_turns, battle
            )
            if self.history_turns
            else "not shown"
        )
        description = render_template(
            "state",
            team=team_text(battle, names),
            state=state_text(battle, names),
            history=history,
            extras=extras,
        )
        return _messages(battle, description)

    def _battle_log(
        self, battle: AbstractBattle, names: GameNames, recorder: ProtocolRecorder
    ) -> _BattleLog:
        key = battle.battle_tag
        log = self._logs.get(key)
        # The same tag comes back when a battle is played again from its seed: a new
        # battle object (a new recorder) starts a new log.
        if log is None or log.recorder is not recorder:
            untrusted = untrusted_strings(battle)
            head = "Your team as the battle began:\n" + "\n".join(
                f"- {set_text(names, mon)}" for mon in battle.team.values()
            )
            if self.strategy:
                head += "\n\n" + render_template(
                    "strategy", strategy=scrub(self.strategy, untrusted)
                ).strip("\n")
            if self.knowledge:
                head += "\n\n" + team_knowledge_text(battle, names)
            log = self._logs[key] = _BattleLog(recorder, head)
            while len(self._logs) > _KEPT_BATTLES:
                self._logs.popitem(last=False)
        self._logs.move_to_end(key)
        return log

    def _battle_context(self, battle: AbstractBattle) -> list[dict[str, str]]:
        names = GameNames(battle.gen)
        recorder = ProtocolRecorder.attach(battle)
        log = self._battle_log(battle, names, recorder)
        role = battle.player_role or "p1"
        current: list[str] = []
        for turn, sentences in turn_events(recorder.messages, role, names, battle):
            if turn <= 0 or not sentences:
                continue
            if turn < battle.turn:  # finished: its line is written once and never changes
                log.lines.setdefault(turn, turn_line(turn, sentences))
            else:
                current.append(turn_line(turn, sentences))
        shown = [t for t in log.lines if t >= log.start]
        if len(shown) > self.log_turns:  # drop the older half at once
            log.start = shown[-(self.log_turns // 2)]
            shown = [t for t in shown if t >= log.start]
        lines = [log.lines[t] for t in shown]
        if log.start > 1:
            lines.insert(0, f"(turns before {log.start} not shown)")
        untrusted = untrusted_strings(battle)
        extras = self._extras(battle, untrusted, strategy=False)
        if self.knowledge:
            matchup = knowledge_text(battle, names, own_descriptions=False)
            if matchup:
                extras += "\n\n" + render_template("knowledge", knowledge=matchup)
        description = render_template(
            "battle",
            head=log.head,
            log="\n".join(lines) or "No turns finished yet.",
            current=f"This turn so far: {' '.join(current)}\n\n" if current else "",
            state=state_text(battle, names, own_sets=False),
            extras=extras,
        )
        return _messages(battle, description)

    def _ask(self, battle: AbstractBattle, question: str) -> list[dict[str, str]]:
        messages = self.context(battle)
        messages[-1]["content"] += "\n\n" + question
        return messages

    def action_prompt(
        self,
        battle: AbstractBattle,
        actions: Sequence[LegalAction] | None = None,
        *,
        json_answer: bool = False,
    ) -> tuple[list[dict[str, str]], list[LegalAction]]:
        """The 'choose an action' prompt and the legal actions it lists (by label).

        ``actions`` narrows the list (e.g. to a search's candidates); default: all legal.
        """
        if actions is None:
            actions = legal_actions(battle, self.codec, GameNames(battle.gen))
        actions = list(actions)
        lines = [a.short_line() if self.layout == "battle" else a.line() for a in actions]
        question = render_template("action", actions="\n".join(lines))
        if json_answer:
            question += "\n" + render_template("answer_json")
        return self._ask(battle, question), actions

    def opponent_prompt(
        self, battle: AbstractBattle, options: Sequence[str] | None = None
    ) -> tuple[list[dict[str, str]], list[str]]:
        """The 'predict the opponent' prompt and its option labels."""
        options = list(options) if options is not None else opponent_options(battle)
        question = render_template("opponent", options="\n".join(f"- {o}" for o in options))
        return self._ask(battle, question), options

    def value_prompt(
        self, battle: AbstractBattle, leaf: str
    ) -> tuple[list[dict[str, str]], tuple[str, ...]]:
        """The 'rate this outcome' prompt for a search leaf and its score buckets 0-9.

        ``leaf`` is text from the world model (what each side did and the resulting
        HP); it is scrubbed of names the players chose.
        """
        leaf = scrub(leaf, untrusted_strings(battle))
        return self._ask(battle, render_template("value", leaf=leaf)), VALUE_BUCKETS


def _messages(battle: AbstractBattle, description: str) -> list[dict[str, str]]:
    """The system message and the battle description as the user's message."""
    system = render_template("system", format=f"Gen {battle.gen}")
    return [{"role": "system", "content": system}, {"role": "user", "content": description}]


@dataclass
class _BattleLog:
    """What a ``layout="battle"`` prompt keeps of one battle: the battle object's
    recorder, the head written at its first decision, every finished turn's line as first
    written, and the first turn the log shows."""

    recorder: ProtocolRecorder
    head: str
    lines: dict[int, str] = field(default_factory=dict)
    start: int = 1
