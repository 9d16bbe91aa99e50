"""The import direction between layers: ``pokegym`` never imports ``policies`` or ``train``."""

from __future__ import annotations

import ast
from pathlib import Path

import pokegym

UPPER_LAYERS = {"policies", "train", "memory"}


def test_pokegym_never_imports_the_layers_above_it():
    root = Path(pokegym.__file__).parent
    offenders = []
    files = sorted(root.rglob("*.py"))
    assert len(files) > 20
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if name.split(".")[0] in UPPER_LAYERS:
                    offenders.append(f"{path.relative_to(root.parent)}:{node.lineno} {name}")
    assert not offenders, "pokegym imports an upper layer:\n" + "\n".join(offenders)
