"""A tournament on a Ray cluster: ``pokegym compare --ray``.

Each worker (a Ray actor) builds its own :class:`~pokegym.arena.Arena` from the
tournament's configuration (its own simulator and agent instances) and plays the
battles it is handed one at a time, by ``(pair, index)``: battle ``k`` of a pair gets
the seed it gets in a local run, so the per-battle outcomes are the local arena's. The
driver writes every battle to the tournament's journal (``OUT/battles.jsonl``) the moment
its result arrives, so an interrupted run resumes exactly as a local one does, with or
without Ray. Lost workers and failing battles are retried and reported
(:mod:`pokegym.scale.pool`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pokegym.arena import Arena, ArenaConfig
from pokegym.journal import BattleJournal, PlayedBattle
from pokegym.scale.cluster import ClusterError, ClusterInfo, ray_cluster, workers_that_fit
from pokegym.scale.pool import Event, PoolReport, WorkerPool, where
from pokegym.scale.resources import worker_resources
from pokegym.tournament import ArenaResult, BattleRecord

Task = tuple[tuple[str, str], int]


@dataclass(frozen=True)
class RayOptions:
    """How a run uses Ray."""

    address: str = "auto"
    """``auto`` (start Ray on this machine) or the head node's ``host:port``."""
    workers: int | None = None
    """Workers (actors); default: as many as the cluster's nodes hold at once."""
    retries: int = 2
    """Tries after the first for a battle whose worker was lost or that failed."""
    runtime_env: dict[str, Any] | None = None
    """A Ray runtime environment for the workers (``env_vars``, ``pip``, ...)."""
    num_cpus: int | None = None
    """CPUs of a Ray started by ``auto`` (default: this machine's)."""
    object_store_memory: int | None = None
    """Bytes of the object store of a Ray started by ``auto`` (default: Ray's)."""


@dataclass
class RayRun:
    """What the Ray side of a run did (printed under the table)."""

    cluster: ClusterInfo | None
    workers: int
    report: PoolReport

    def summary(self) -> str:
        if self.cluster is None:
            return "ray: nothing to play (every battle was in the journal)"
        report = self.report
        nodes = ", ".join(f"{host} {n}" for host, n in sorted(report.by_node.items()))
        return (
            f"ray: {self.workers} workers on {self.cluster.nodes} node(s) "
            f"({self.cluster.cpus:g} CPUs, {self.cluster.gpus:g} GPUs); battles per node: "
            f"{nodes or '-'}; {report.retried} retried ({report.lost_workers} workers lost); "
            f"{len(report.failed)} failed on every try"
        )


class ArenaWorker:
    """One worker of a tournament (a Ray actor): its own arena, simulator and agents."""

    def __init__(self, config: ArenaConfig, teams: list[str] | None = None):
        self._config = config
        self._teams = teams
        self._arena: Arena | None = None
        self._folder: str | None = None  # for replays and teams, made when needed

    def _get(self) -> Arena:
        if self._arena is None:
            changes: dict[str, Any] = {"simulators": 1, "concurrency": 1}
            if (self._config.replays or self._teams is not None) and self._folder is None:
                self._folder = tempfile.mkdtemp(prefix="pokegym-worker-")
            if self._config.replays:
                changes["replays"] = os.path.join(str(self._folder), "replays")
            if self._teams is not None:
                # The driver's team file may not exist on this node: the same teams, in
                # the same order, from a folder of this worker's own.
                folder = Path(str(self._folder)) / "teams"
                folder.mkdir(exist_ok=True)
                for k, text in enumerate(self._teams):
                    (folder / f"{k:05d}.txt").write_text(text)
                changes["teams"] = str(folder)
            self._arena = Arena(dataclasses.replace(self._config, **changes))
        return self._arena

    def setup(self) -> dict[str, Any]:
        """Start the simulator and build the agents; where this worker runs."""
        self._get()
        return where()

    def play(self, task: Task) -> dict[str, Any]:
        """Play one battle; its journal line, and its replay's HTML when asked for."""
        arena = self._get()
        try:
            (battle,) = list(arena.play([(tuple(task[0]), int(task[1]))]))  # type: ignore[arg-type]
        except BaseException:
            arena.close()  # its battle is abandoned; the next one starts a fresh simulator
            raise
        replay = None
        if battle.record.replay:
            path = Path(battle.record.replay)
            replay = path.read_text()
            path.unlink()
        return {"battle": battle.to_json(), "replay": replay}

    def close(self) -> None:
        if self._arena is not None:
            self._arena.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def run_on_ray(
    arena: Arena,
    options: RayOptions,
    journal: BattleJournal | None = None,
    progress: Callable[[BattleRecord], None] | None = None,
    event: Event | None = None,
) -> tuple[ArenaResult, RayRun]:
    """Play ``arena``'s tournament on Ray (see the module docstring).

    ``arena`` is the driver's (it checked the configuration and gives the identity); its
    simulators are stopped here, the workers play. With a ``journal``, battles already
    in it are not played again, and each new one is written to it as it arrives.

    Raises:
        ClusterError: Ray is missing, the cluster is unreachable or has no room for a
            worker, or a worker cannot start (Node.js or Showdown missing on its node).
    """
    try:
        earlier = arena.resume(journal)
    finally:
        arena.close()
    tasks = arena.missing(earlier)
    played: list[PlayedBattle] = []
    start = time.perf_counter()
    if not tasks:
        run = RayRun(None, 0, PoolReport())
        return arena.result(earlier, 0.0, len(earlier)), run
    config = arena.config
    replays = Path(config.replays) if config.replays else None
    teams = [t.text for t in arena.pool.teams] if arena.pool is not None and config.teams else None
    resources = worker_resources(config.agents)

    def on_result(task: Any, result: dict[str, Any], worker: Any) -> None:
        battle = PlayedBattle.from_json(result["battle"])
        if replays is not None and result["replay"] is not None:
            replays.mkdir(parents=True, exist_ok=True)
            path = replays / Path(battle.record.replay or "replay.html").name
            path.write_text(result["replay"])
            battle.record.replay = str(path)
        if journal is not None:
            journal.append(battle.record, battle.stats)
        played.append(battle)
        if progress is not None:
            progress(battle.record)

    with ray_cluster(
        options.address, num_cpus=options.num_cpus,
        object_store_memory=options.object_store_memory,
    ) as cluster:  # fmt: skip
        fit = workers_that_fit(resources)
        if fit < 1:
            raise ClusterError(
                f"No node of the Ray cluster at {options.address} has room for a worker "
                f"asking for {resources.num_cpus:g} CPU and {resources.num_gpus:g} GPU (the "
                f"largest num_cpus/num_gpus of the agents); the cluster has {cluster.cpus:g} "
                f"CPUs and {cluster.gpus:g} GPUs on {cluster.nodes} node(s)."
            )
        workers = min(options.workers or fit, len(tasks))
        with WorkerPool(
            ArenaWorker, (config, teams), workers=workers, resources=resources,
            retries=options.retries, runtime_env=options.runtime_env,
        ) as pool:  # fmt: skip
            report = pool.run(tasks, on_result, event)
    failed = [
        {"pair": list(f.task[0]), "index": f.task[1], "attempts": f.attempts, "error": f.error}
        for f in report.failed
    ]
    result = arena.result(
        [*earlier, *played], time.perf_counter() - start, len(earlier),
        retried=report.retried, failed=failed,
    )  # fmt: skip
    return result, RayRun(cluster, workers, report)


__all__ = ["ArenaWorker", "RayOptions", "RayRun", "run_on_ray"]
