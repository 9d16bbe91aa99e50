"""The import direction between layers: train -> policies -> memory -> pokegym, never upwards."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each layer and the layers above it, which it must never import.
ABOVE = {
    "pokegym": {"memory", "policies", "train"},
    "memory": {"policies", "train"},
    "policies": {"train"},
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_no_layer_imports_the_layers_above_it(layer):
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"no Python files under {layer}/"
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in imported_modules(path)
        if name.split(".")[0] in ABOVE[layer]
    ]
    assert not offenders, f"{layer} imports a layer above it:\n" + "\n".join(offenders)
