"""The import direction between layers: bench -> train -> policies -> memory -> pokegym, never
upwards."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each layer and the layers above it, which it must never import.
ABOVE = {
    "pokegym": {"memory", "policies", "train", "bench"},
    "memory": {"policies", "train", "bench"},
    "policies": {"train", "bench"},
    "train": {"bench"},
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


def _pokegym_import_graph() -> dict[str, set[str]]:
    """Module -> the pokegym modules it imports anywhere (functions included)."""
    modules = {}
    for path in (ROOT / "pokegym").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path

    def owner(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for _, imported in imported_modules(path):
            if imported.split(".")[0] == "pokegym":
                found.add(owner(imported))
        graph[name] = found - {name, ""}
    return graph


# Known and accepted: the journal reads the arena's record types back, in functions.
ACCEPTED_CYCLES = [{"pokegym.arena", "pokegym.journal"}]


def test_pokegym_modules_import_each_other_without_cycles():
    """A cycle hidden in a function-level import is still a cycle: two modules that
    need each other cannot be read (or imported) one at a time."""
    graph = _pokegym_import_graph()
    cycles = []
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start and set(path) not in ACCEPTED_CYCLES:
                    cycles.append(" -> ".join([*path, start]))
                elif nxt not in path and nxt > start:
                    stack.append((nxt, [*path, nxt]))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(set(cycles)))
