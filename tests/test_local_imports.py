"""Imports sit at the top of modules; an import inside a function says why it is there.

Read from the source with ``ast``. An ``import`` or ``from ... import`` inside a function
of pokegym, policies, train or memory is accepted when

- it imports one of the heavy optional dependencies below (their top-level package), or
- a comment on the same line or on the line above gives the reason
  (``# torch: optional, heavy``; linter directives alone are no reason), or
- a column-0 comment ``# local imports: <reason>`` above it in the same file gives the
  reason for every function-level import after it (a command-line dispatch section whose
  subcommands import their modules when they run, so that the command starts fast).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pokegym", "policies", "train", "memory", "bench")
# Heavy optional dependencies (top-level package names): imported where they are used.
HEAVY_OPTIONAL = frozenset({
    "accelerate", "faiss", "gguf", "llama_cpp", "matplotlib", "mypy", "pyarrow", "ray",
    "sb3_contrib", "selenium", "sentencepiece", "setuptools", "sklearn", "stable_baselines3",
    "starlette", "tensorboard", "torch", "transformers", "uvicorn",
})  # fmt: skip
SECTION_MARKER = re.compile(r"^# local imports: \S")
# Comments that are tool directives, not reasons.
DIRECTIVE = re.compile(r"^#\s*(noqa\b|type:|fmt:|pragma\b|pyright:|mypy:)")


def _comments(source: str) -> dict[int, tuple[int, str]]:
    """Line -> (column, text) of each comment."""
    found = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = (token.start[1], token.string)
    return found


def _is_reason(comment: tuple[int, str] | None) -> bool:
    return comment is not None and not DIRECTIVE.match(comment[1]) and len(comment[1]) > 3


def _top_level(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.ImportFrom):
        return "." if node.level else (node.module or "").split(".")[0]
    return node.names[0].name.split(".")[0]


def _function_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


def unexplained_local_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: statement`` for each function-level import without a reason."""
    source = path.read_text()
    comments = _comments(source)
    lines = source.splitlines()
    sections = [
        line for line, (col, text) in comments.items() if col == 0 and SECTION_MARKER.match(text)
    ]
    offenders = []
    for node in _function_imports(ast.parse(source, str(path))):
        if _top_level(node) in HEAVY_OPTIONAL:
            continue
        same = comments.get(node.lineno) or comments.get(node.end_lineno or node.lineno)
        above = comments.get(node.lineno - 1)
        above_is_comment_line = lines[node.lineno - 2].lstrip().startswith("#")
        if _is_reason(same) or (above_is_comment_line and _is_reason(above)):
            continue
        if any(line < node.lineno for line in sections):
            continue
        offenders.append(
            f"{path.relative_to(root)}:{node.lineno}: {lines[node.lineno - 1].strip()}"
        )
    return offenders


def test_every_import_inside_a_function_says_why() -> None:
    offenders = [
        offender
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for offender in unexplained_local_imports(path)
    ]
    assert not offenders, (
        "imports inside functions without a reason (move them to the top of the module, or "
        "say why on the line or the line above):\n" + "\n".join(offenders)
    )


def test_the_rule_flags_a_bare_local_import_and_accepts_the_reasons(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text(
        "def bare():\n"
        "    import json\n"
        "\n"
        "def heavy():\n"
        "    import torch\n"
        "\n"
        "def explained():\n"
        "    import json  # cheap, but a test patches it\n"
        "    # a cycle-breaker: pokegym.x imports this module\n"
        "    from pokegym import errors\n"
        "    import os  # noqa: F401\n"
        "\n"
        "# local imports: subcommands import their modules when run (start-up time)\n"
        "def dispatch():\n"
        "    import csv\n"
    )
    assert unexplained_local_imports(module, tmp_path) == [
        "probe.py:2: import json",
        "probe.py:11: import os  # noqa: F401",
    ]
