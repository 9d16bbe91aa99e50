"""The commands the README and docs/ show parse as written: a reader copies them.

Every ``pokegym`` line of a fenced code block whose command is built in (``battle``,
``compare``, ``play``, ...) goes through the real argument parser, and every agent of its
``--agents``, ``--p1`` and ``--p2`` splits into a registered agent; the ``engine``
agent's options are checked as the agent checks them. Lines with stand-ins
(``...``, ``<x>``, ``[x]``, ``$x``, ``a|b``) are left out and counted.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import shlex
from pathlib import Path

import pytest

from pokegym.agents import parse_agent_spec, registered_agents, split_agent_specs
from pokegym.cli import BUILTIN_COMMANDS, build_parser
from policies.engine import EngineOptions

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
PREFIX = re.compile(r"^((nice -n \d+|time|timeout \d+|[A-Z_]+=\S+)\s+)+")
PLACEHOLDER = re.compile(r"\.\.\.|…|<|>|\[|\]|\{|\}|\$|\|")
AGENT_FLAGS = ("--agents", "--p1", "--p2")


def documented_commands() -> list[tuple[str, list[str]]]:
    """(file, tokens after ``pokegym``) of each built-in command in a code block."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text().replace("\\\n", " ")
        for block in FENCE.findall(text):
            for line in block.splitlines():
                line = PREFIX.sub("", line.strip()).split(" #")[0].split(" > ")[0]
                if not line.startswith("pokegym "):
                    continue
                try:
                    tokens = shlex.split(line)[1:]
                except ValueError:  # an unclosed quote: a fragment of prose
                    continue
                if tokens and tokens[0] in BUILTIN_COMMANDS:
                    found.append((str(path.relative_to(ROOT)), tokens))
    return found


def agent_specs(tokens: list[str]) -> list[str]:
    specs = []
    for flag, value in itertools.pairwise(tokens):
        if flag in AGENT_FLAGS:
            specs += split_agent_specs(value)
    for token in tokens:
        flag, eq, value = token.partition("=")
        if eq and flag in AGENT_FLAGS:
            specs += split_agent_specs(value)
    return specs


COMMANDS = documented_commands()


def test_the_docs_show_commands():
    assert len(COMMANDS) >= 50  # the collector finds them: a changed layout would hide all
    assert {tokens[0] for _, tokens in COMMANDS} >= {"battle", "compare"}


@pytest.fixture(scope="module")
def parser():
    return build_parser()


CHECKED = [c for c in COMMANDS if not any(PLACEHOLDER.search(t) for t in c[1])]


@pytest.mark.parametrize(
    ("where", "tokens"), CHECKED, ids=[f"{w}:{' '.join(t)[:50]}" for w, t in CHECKED]
)
def test_documented_command_parses(where, tokens, parser):
    errors = io.StringIO()
    stopped = False
    with contextlib.redirect_stderr(errors):
        try:
            parser.parse_args(tokens)
        except SystemExit as stop:
            stopped = stop.code != 0
    assert not stopped, f"{where}: `pokegym {' '.join(tokens)}`: {errors.getvalue().strip()}"
    known = set(registered_agents())
    for spec in agent_specs(tokens):
        name, options = parse_agent_spec(spec)
        assert name in known, f"{where}: {spec!r} names no registered agent"
        if name == "engine":
            EngineOptions(**options)
