"""Shared fixtures and helpers.

Tests run real Showdown battles: on the embedded simulator (the process-wide one that
environments share unless given their own) or on a local Showdown server that pokegym
starts itself. Nothing here mocks Showdown.

Two tiers (docs/testing.md): tests marked ``slow`` start Node.js (battles, servers,
Showdown's own damage numbers) or run for minutes; the others, ``pytest -m "not slow"``,
run without starting Node. A test that is not marked ``slow`` and still starts Node
fails with :class:`NodeInFastTest`, so the fast tier stays fast.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# The suite runs on the Python world model (tests patch and subclass it) unless
# POKEGYM_ACCEL is set: POKEGYM_ACCEL=1 runs it on the compiled build where one exists.
# tests/test_accel.py compares the two builds itself.
os.environ.setdefault("POKEGYM_ACCEL", "0")

from pokegym.env import ShowdownEnv
from pokegym.errors import NodeNotFoundError
from pokegym.showdown import server as showdown_server
from pokegym.showdown import simulator as showdown_simulator
from pokegym.showdown.server import LocalServer, shared_server
from pokegym.showdown.simulator import Simulator
from pokegym.teams import builtin_pool

# Where a fast test's subprocesses look for Node: nowhere, so they cannot start it either.
NO_NODE = "/nonexistent/fast-tests-start-no-node/node"


class NodeInFastTest(NodeNotFoundError):
    """A test that is not marked ``slow`` tried to start Node.js."""


@pytest.fixture(autouse=True)
def _fast_tests_start_no_node(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside ``slow`` tests, starting Node (a simulator, a server, npm) is an error."""
    if request.node.get_closest_marker("slow") is not None:
        return

    def refuse() -> Any:
        raise NodeInFastTest(
            f"{request.node.nodeid} starts Node.js but is not marked slow: add "
            "@pytest.mark.slow (the fast tier, pytest -m 'not slow', runs without Node). "
            "If it only reads Showdown's game data or the priors, build them once with "
            "`pokegym priors build`."
        )

    # The places that start Node processes (find_node itself stays testable).
    for module in (showdown_simulator, showdown_server):
        monkeypatch.setattr(module, "find_node", refuse)
    monkeypatch.setenv("POKEGYM_NODE", NO_NODE)


@pytest.fixture(scope="session")
def benchmark_script() -> Callable[[str], ModuleType]:
    """A benchmark module of :mod:`bench` by name (``"memory_value"``)."""

    def load(name: str) -> ModuleType:
        return importlib.import_module(f"bench.{name}")

    return load


@pytest.fixture(scope="session")
def small_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Ten real battles of ``one_step`` against ``random`` from ``pokegym collect``, shared
    by the tests of training and memories. Read-only: copy it before changing it."""
    pytest.importorskip(
        "pyarrow", reason="collections need the distill extra (pip install -e '.[distill]')"
    )
    from train.collect import main as collect_main

    out = tmp_path_factory.mktemp("collection") / "data"
    code = collect_main(["--agents", "one_step,random", "--battles", "10", "--out", str(out),
                         "--no-progress", "--seed", "11"])  # fmt: skip
    assert code == 0
    return out


@pytest.fixture
def make_env() -> Iterator[Callable[..., ShowdownEnv]]:
    """Build ``ShowdownEnv``s that are closed after the test."""
    envs: list[ShowdownEnv] = []

    def factory(battle_format: str = "gen9randombattle", **kwargs: Any) -> ShowdownEnv:
        env = ShowdownEnv(battle_format, **kwargs)
        envs.append(env)
        return env

    yield factory
    for env in envs:
        env.close()


@pytest.fixture
def private_simulator() -> Iterator[Callable[..., Simulator]]:
    """Simulators of the test's own (for crash and stall tests), closed afterwards.

    A stopped (SIGSTOP) process is resumed before it is closed, so that no test
    leaves a frozen Node process behind.
    """
    sims: list[Simulator] = []

    def factory(**kwargs: Any) -> Simulator:
        sim = Simulator(**kwargs)
        sim.ensure_running()
        sims.append(sim)
        return sim

    yield factory
    for sim in sims:
        pid = sim.pid
        if pid is not None and sim.is_running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        sim.close()


@pytest.fixture(scope="session")
def gen9ou_pool():
    return builtin_pool("gen9ou")


@pytest.fixture(scope="session")
def rain_team(gen9ou_pool) -> str:
    """Export text of the built-in rain team (species without ambiguous forms)."""
    for team in gen9ou_pool:
        if "rain" in team.name:
            return team.text
    raise AssertionError("the built-in pool has no rain team")


@pytest.fixture(scope="session")
def local_server() -> LocalServer:
    """The process-wide local Showdown server (what ``backend="server"`` uses).

    Tests must not stop it; it is stopped when the test process exits.
    """
    return shared_server()
