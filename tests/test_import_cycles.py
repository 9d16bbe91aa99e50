"""No module of pokegym, policies, train or memory imports itself back through others.

The graph is read from the source with ``ast``: every ``import`` and ``from ... import``,
at the top of a module or inside a function, is an edge to the module it names
(``from pkg import name`` names ``pkg.name`` when that is a module, else ``pkg``).
There is no list of allowed cycles.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pokegym", "policies", "train", "memory", "bench")


def module_files() -> dict[str, Path]:
    """Every module of the packages by dotted name (a package is its ``__init__``)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts.pop()
    if node.level > 1:
        parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the packages that ``module`` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node)
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in modules else base)
    return {name for name in found if name in modules and name != module}


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of two or more modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return [_cycle_in(graph, set(group)) for group in groups]


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest cycle through the first module of a strongly connected group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    return [*paths[node], start]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a group always has one


def test_no_module_imports_itself_back():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_graph_sees_imports_inside_functions_and_relative_ones(tmp_path):
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    source = tmp_path / "agent.py"
    source.write_text(
        "from . import base\n"
        "from .core import key\n"
        "def choose():\n"
        "    from policies.core.deadline import seconds_left\n"
        "    import pokegym.world.data\n"
    )
    modules = {name: tmp_path / "x.py" for name in (
        "policies", "policies.agent", "policies.base", "policies.core",
        "policies.core.deadline", "pokegym.world.data")}  # fmt: skip
    assert imports_of("policies.agent", source, modules) == {
        "policies.base",
        "policies.core",
        "policies.core.deadline",
        "pokegym.world.data",
    }
    graph = import_graph()
    assert "policies.core.deadline" in graph and "pokegym.world.data" in graph
    assert "pokegym.world.priors" in graph["policies.core.maximin"]
