"""Prompt templates (files in ``templates/``) and the battle prompts built from them.

Templates are :class:`string.Template` files rendered strictly: a placeholder without
a value raises ``KeyError``. Every prompt of one battle turn starts with the same
system message and battle description, and differs only in the question at the end,
so a backend with a prefix cache computes the description once per turn.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    state_text,
    team_text,
    untrusted_strings,
)

#: Score buckets of a leaf evaluation: single digits, one token each.
VALUE_BUCKETS = tuple(str(d) for d in range(10))


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

    def attach(self, battle: AbstractBattle) -> None:
        """Start recording the battle's messages for the history (call early)."""
        ProtocolRecorder.attach(battle)

    def context(self, battle: AbstractBattle) -> list[dict[str, str]]:
        """System message and the battle description: the shared start of every prompt."""
        names = GameNames(battle.gen)
        recorder = ProtocolRecorder.attach(battle)
        untrusted = untrusted_strings(battle)
        extras = ""
        if self.strategy:
            extras += "\n\n" + render_template("strategy", strategy=scrub(self.strategy, untrusted))
        if self.lookahead is not None:
            text = self.lookahead(battle) if callable(self.lookahead) else self.lookahead
            if text:
                extras += "\n\n" + render_template("lookahead", lookahead=scrub(text, untrusted))
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
        fmt = f"Gen {battle.gen}"
        return [
            {"role": "system", "content": render_template("system", format=fmt)},
            {"role": "user", "content": description},
        ]

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
        question = render_template("action", actions="\n".join(a.line() for a in actions))
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
