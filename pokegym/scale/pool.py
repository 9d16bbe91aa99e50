"""Workers (Ray actors) that play tasks one at a time, their results streamed to the driver.

A :class:`WorkerPool` is a set of Ray actors, each owning its simulator and agent
instances; the driver hands an idle worker one task at a time and receives each result
as it ends, so results stream in the order they finish.

**Lost workers and failures.** A worker whose process dies (killed, out of memory, its
node gone) fails the task it was playing; Ray restarts the worker (on any node with
room), and the task goes back to the queue to be played again by the next free worker,
counted in :attr:`PoolReport.retried`. A task that raises fails the same way but its
worker stays. A task that has failed ``1 + retries`` times is reported in
:attr:`PoolReport.failed` with its last error, never dropped in silence. A worker that
cannot start at all (Node.js or Showdown missing on its node) stops the run with one
:class:`~pokegym.scale.cluster.WorkerSetupError` naming the node.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pokegym.scale.cluster import ClusterError, WorkerSetupError, import_ray
from pokegym.scale.resources import WorkerResources


@dataclass
class WorkerInfo:
    """Where a worker runs (from its ``setup()``; updated when Ray restarts it)."""

    index: int
    node: str = ""
    host: str = ""
    pid: int = 0

    @property
    def label(self) -> str:
        """``host/node`` (two nodes may share a host): how reports name the node."""
        return f"{self.host}/{self.node[:8]}"


@dataclass
class TaskFailure:
    task: Any
    attempts: int
    error: str


@dataclass
class PoolReport:
    """What happened to the tasks of one :meth:`WorkerPool.run`."""

    done: int = 0
    retried: int = 0
    """Tries beyond the first (a task lost twice counts twice)."""
    retried_tasks: list[Any] = field(default_factory=list)
    failed: list[TaskFailure] = field(default_factory=list)
    lost_workers: int = 0
    """Worker processes that died while playing."""
    by_node: Counter[str] = field(default_factory=Counter)
    """Tasks finished per node (:attr:`WorkerInfo.label`)."""
    seconds: float = 0.0


Event = Callable[[str, Any, WorkerInfo], None]
"""``event(kind, task, worker)``: kind is ``started``, ``done``, ``retry`` or ``failed``."""


class WorkerPool:
    """Ray actors of ``worker_class`` (see the module docstring).

    ``worker_class(*args)`` must offer ``setup() -> dict`` (start what it needs: its
    simulator, its agents; return ``{"node", "host", "pid"}``, see :func:`where`),
    ``play(task) -> result`` and ``close()``. Use as a context manager: leaving it stops
    every worker (and so every simulator they started), also on Ctrl-C.

    Args:
        worker_class: the actor's class (a plain class; made a Ray actor here).
        args: its constructor's arguments.
        workers: how many actors.
        resources: what each asks Ray for.
        retries: tries after the first for a task that fails.
        runtime_env: a Ray runtime environment for the workers (env_vars, pip, ...).
        setup_timeout: seconds to wait for the first worker to be ready.
    """

    def __init__(
        self,
        worker_class: type,
        args: Sequence[Any],
        *,
        workers: int,
        resources: WorkerResources,
        retries: int = 2,
        runtime_env: dict[str, Any] | None = None,
        setup_timeout: float = 900.0,
    ):
        if workers < 1:
            raise ClusterError(f"A pool needs at least one worker, got {workers}.")
        if retries < 0:
            raise ClusterError(f"retries must be 0 or more, got {retries}.")
        ray = import_ray()
        self.resources = resources
        self.retries = retries
        self.setup_timeout = setup_timeout
        options: dict[str, Any] = {
            **resources.ray_options(),
            # Ray restarts a dead worker process; the task it was playing is handed out
            # again by run() (counted), not replayed behind our back.
            "max_restarts": -1,
            "max_task_retries": 0,
        }
        if runtime_env:
            options["runtime_env"] = runtime_env
        actor = ray.remote(**options)(worker_class)
        self._ray = ray
        self.actors = [actor.remote(*args) for _ in range(workers)]
        self.info = [WorkerInfo(i) for i in range(workers)]
        self._closed = False

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker: ask each to stop its simulators, then end its process."""
        if self._closed:
            return
        self._closed = True
        ray = self._ray
        with contextlib.suppress(Exception):
            ray.wait([a.close.remote() for a in self.actors], num_returns=len(self.actors),
                     timeout=5.0)  # fmt: skip
        for actor in self.actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)

    def run(
        self,
        tasks: Sequence[Any],
        on_result: Callable[[Any, Any, WorkerInfo], None],
        event: Event | None = None,
    ) -> PoolReport:
        """Play every task; ``on_result(task, result, worker)`` is called in the driver as
        each one ends. Returns what happened (retries, failures, tasks per node).

        Raises:
            WorkerSetupError: a worker could not start (the message names its node).
            ClusterError: no worker became ready in time, or every worker was lost.
        """
        started = time.perf_counter()
        run = _Run(self, tasks, on_result, event)
        while run.queue or run.busy:
            run.hand_out()
            run.set_up_again()
            run.check_progress()
            refs = [*run.busy, *run.setting_up]
            if not refs:
                time.sleep(0.2)
                continue
            ready, _ = self._ray.wait(refs, num_returns=1, timeout=0.5)
            for ref in ready:
                if ref in run.setting_up:
                    run.worker_set_up(ref)
                else:
                    run.task_ended(ref)
        run.report.seconds = time.perf_counter() - started
        return run.report

    def _setup_message(self, index: int, exc: Exception) -> str:
        cause = _cause(exc)
        # Ray names the failing worker's node in its message: "ray::X.setup() (pid=1, ip=...)".
        named = re.search(r"\bip=([0-9A-Fa-f.:]+)", str(exc))
        where = self.info[index].host or (named[1] if named else "a node of the cluster")
        return (
            f"A worker on {where} cannot play battles: {cause} Every node needs pokegym, "
            "Node.js 18+ and Pokémon Showdown (`pokegym showdown install` on each node, or a "
            "Ray runtime environment that provides them); see docs/scale.md."
        )


class _Run:
    """The state of one :meth:`WorkerPool.run`: the tasks not yet handed out, the workers
    busy, idle, setting up or to be set up again, and the report."""

    def __init__(
        self,
        pool: WorkerPool,
        tasks: Sequence[Any],
        on_result: Callable[[Any, Any, WorkerInfo], None],
        event: Event | None,
    ):
        self.pool = pool
        self.ray = pool._ray
        self.on_result = on_result
        self.event = event
        self.report = PoolReport()
        self.queue: deque[Any] = deque(tasks)
        self.attempts: Counter[Any] = Counter()
        self.idle: list[int] = []
        self.busy: dict[Any, tuple[int, Any]] = {}  # play ref -> (worker, task)
        self.setting_up: dict[Any, int] = {}  # setup ref -> worker
        self.later: list[tuple[float, int]] = []  # (when, worker): set up again then
        self.dead: set[int] = set()
        for index, actor in enumerate(pool.actors):
            self.setting_up[actor.setup.remote()] = index
        self.last_ready = time.monotonic()

    def _event(self, kind: str, task: Any, index: int) -> None:
        if self.event is not None:
            self.event(kind, task, self.pool.info[index])

    def hand_out(self) -> None:
        """Give each idle worker a task."""
        while self.queue and self.idle:
            index = self.idle.pop()
            task = self.queue.popleft()
            self.attempts[task] += 1
            self.busy[self.pool.actors[index].play.remote(task)] = (index, task)
            self._event("started", task, index)

    def set_up_again(self) -> None:
        """Set up the restarted workers whose time has come."""
        now = time.monotonic()
        for when, index in list(self.later):
            if when <= now:
                self.later.remove((when, index))
                self.setting_up[self.pool.actors[index].setup.remote()] = index

    def check_progress(self) -> None:
        """Raise when no worker is left, or none became ready in time."""
        if not self.busy and not self.setting_up and not self.later:
            lost = ", ".join(f"{t}" for t in list(self.queue)[:5])
            raise ClusterError(
                f"Every worker is gone ({len(self.dead)} could not be restarted); "
                f"{len(self.queue)} task(s) were not played ({lost}"
                f"{', ...' if len(self.queue) > 5 else ''}). Check the cluster's nodes."
            )
        pool = self.pool
        if not self.busy and time.monotonic() - self.last_ready > pool.setup_timeout:
            raise ClusterError(
                f"No worker became ready in {pool.setup_timeout:.0f} s: the cluster has "
                f"no room for them (each asks for {pool.resources.num_cpus:g} CPU and "
                f"{pool.resources.num_gpus:g} GPU), or their "
                "nodes are still installing what they need."
            )

    def worker_set_up(self, ref: Any) -> None:
        """A worker's ``setup()`` ended: it is idle now, restarting, gone or broken."""
        ray = self.ray
        index = self.setting_up.pop(ref)
        try:
            where = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            raise WorkerSetupError(self.pool._setup_message(index, exc)) from None
        except ray.exceptions.ActorUnavailableError:
            self.later.append((time.monotonic() + 1.0, index))  # restarting
            return
        except ray.exceptions.RayActorError as exc:
            if exc.actor_init_failed:
                raise WorkerSetupError(self.pool._setup_message(index, exc)) from None
            self.dead.add(index)
            return
        except ray.exceptions.RayError as exc:  # e.g. its runtime environment
            raise WorkerSetupError(self.pool._setup_message(index, exc)) from None
        info = self.pool.info[index]
        info.node, info.host, info.pid = where["node"], where["host"], where["pid"]
        self.idle.append(index)
        self.last_ready = time.monotonic()

    def task_ended(self, ref: Any) -> None:
        """A task ended: its result goes to ``on_result``, or it is retried or failed."""
        ray = self.ray
        index, task = self.busy.pop(ref)
        try:
            result = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the battle raised
            self.idle.append(index)
            self._fail(index, task, _cause(exc))
            return
        except ray.exceptions.RayError as exc:  # the worker (or its result) is gone
            self.report.lost_workers += isinstance(exc, ray.exceptions.RayActorError)
            self.later.append((time.monotonic(), index))  # set up again once restarted
            self._fail(index, task, f"worker lost: {_first_line(exc)}")
            return
        self.idle.append(index)
        self.report.done += 1
        self.report.by_node[self.pool.info[index].label] += 1
        self.on_result(task, result, self.pool.info[index])
        self._event("done", task, index)

    def _fail(self, index: int, task: Any, error: str) -> None:
        if self.attempts[task] <= self.pool.retries:
            self.report.retried += 1
            self.report.retried_tasks.append(task)
            self.queue.appendleft(task)
            self._event("retry", task, index)
        else:
            self.report.failed.append(TaskFailure(task, self.attempts[task], error))
            self._event("failed", task, index)


def where() -> dict[str, Any]:
    """This worker's node id, host address and process id (for ``setup()``)."""
    ray = import_ray()
    context = ray.get_runtime_context()
    return {"node": context.get_node_id(), "host": ray.util.get_node_ip_address(),
            "pid": os.getpid()}  # fmt: skip


def _cause(exc: BaseException) -> str:
    """The message of the exception a worker raised (without Ray's traceback)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        text = str(cause).strip() or type(cause).__name__
        return text if text.endswith((".", "!", "?")) else text + "."
    return _first_line(exc)


def _first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[0].strip() if lines else type(exc).__name__


__all__ = ["Event", "PoolReport", "TaskFailure", "WorkerInfo", "WorkerPool", "where"]
