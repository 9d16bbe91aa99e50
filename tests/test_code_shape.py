"""Each module small enough to read in one sitting: none over 700 lines, and no function
over 100 lines without a comment right above it that says why it is long."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pokegym", "policies", "train", "memory", "bench")
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 100


def _sources() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


def test_no_module_is_over_700_lines():
    long = [f"{p.relative_to(ROOT)}: {n}" for p in _sources()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES]  # fmt: skip
    assert not long, "modules over 700 lines (split them):\n" + "\n".join(long)


def long_functions_without_a_reason(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line name (N lines)`` for each function over the limit whose first line (or
    first decorator) has no comment on the line above."""
    source = path.read_text()
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length <= MAX_FUNCTION_LINES:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = lines[first - 2].strip() if first >= 2 else ""
        if not above.startswith("#") or len(above) < 12:
            found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_every_function_over_100_lines_says_why_above_it():
    offenders = [line for path in _sources() for line in long_functions_without_a_reason(path)]
    assert not offenders, (
        "functions over 100 lines without a reason in a comment right above them:\n"
        + "\n".join(offenders)
    )


def test_the_rule_finds_a_long_function_without_a_reason(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    bare = tmp_path / "bare.py"
    bare.write_text(f"x = 1\n\ndef long():\n{body}\n")
    explained = tmp_path / "explained.py"
    explained.write_text(
        f"# Long on purpose: one table, read top to bottom.\ndef long():\n{body}\n"
    )
    assert long_functions_without_a_reason(bare, tmp_path) == ["bare.py:3 long (101 lines)"]
    assert long_functions_without_a_reason(explained, tmp_path) == []
