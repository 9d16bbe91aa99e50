"""Battle -> text for LLM prompts: renderers and prompt templates.

Only game vocabulary (species, move, item, ability and type names, numbers) reaches
a prompt; player names, nicknames and chat never do. See :mod:`pokegym.text.render`
and :mod:`pokegym.text.prompts`.
"""

from pokegym.text.prompts import VALUE_BUCKETS, BattlePrompter, load_template, render_template
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

__all__ = [
    "VALUE_BUCKETS",
    "BattlePrompter",
    "GameNames",
    "LegalAction",
    "ProtocolRecorder",
    "history_text",
    "knowledge_text",
    "legal_actions",
    "load_template",
    "opponent_options",
    "render_template",
    "scrub",
    "state_text",
    "team_text",
    "untrusted_strings",
]
