"""A Ray cluster to play on: Ray imported only when asked, joined by address or started here.

Ray is optional (``pip install 'pokegym[ray]'``): it is imported only here, only when a
run asks for it. :func:`ray_cluster` connects to a running cluster by address, or starts
a local one (``"auto"``), and stops what it started when the run ends. The workers that
play on it are in :mod:`pokegym.scale.pool`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pokegym.errors import PokegymError
from pokegym.scale.resources import WorkerResources

INSTALL_HINT = "pip install 'pokegym[ray]' (or, in a checkout, pip install -e '.[ray]')"


class ClusterError(PokegymError):
    """A Ray cluster cannot be reached, has no room for a worker, or lost every worker."""


class RayNotInstalledError(ClusterError):
    """``--ray`` was asked for, but Ray is not installed."""


class WorkerSetupError(ClusterError):
    """A worker could not start on its node (Node.js or Showdown missing, a bad agent)."""


def import_ray() -> Any:
    """The ``ray`` module.

    Raises:
        RayNotInstalledError: Ray is not installed (the message says how to install it).
    """
    try:
        import ray
    except ImportError as exc:
        raise RayNotInstalledError(
            f"Running on a Ray cluster needs Ray, which is not installed ({exc}). Install it "
            f"with {INSTALL_HINT}, on every node of the cluster."
        ) from None
    return ray


# ----------------------------------------------------------------- the cluster
@dataclass(frozen=True)
class ClusterInfo:
    """The cluster a run plays on."""

    address: str
    """What the run was given: ``auto`` or ``host:port``."""
    started: bool
    """Whether this run started it (and stops it when it ends)."""
    nodes: int
    cpus: float
    gpus: float


def parse_address(address: str) -> tuple[str, int]:
    """``host:port`` -> ``(host, port)``.

    Raises:
        ClusterError: not of that form.
    """
    text = address.strip()
    if text.startswith("ray://"):
        raise ClusterError(
            f"{address}: Ray Client addresses (ray://) are not supported; give the address "
            "of the head node's Ray (host:6379, as `ray start --head` prints it) and run "
            "the command on a node of the cluster."
        )
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterError(
            f"--ray {address!r} is not an address: give 'auto' (start Ray on this machine) "
            "or the head node's host:port (e.g. 10.0.0.5:6379)."
        )
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse an address nothing answers on, before Ray spends minutes retrying it.

    Raises:
        ClusterError: the address is malformed, unknown or nothing listens there.
    """
    host, port = parse_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if isinstance(exc, TimeoutError | socket.timeout):
            reason = f"no answer in {timeout:.0f} s"
        raise ClusterError(
            f"Cannot reach a Ray cluster at {address} ({reason}). Start one with "
            "`ray start --head` on the head node and pass the address it prints, or use "
            "--ray auto to start Ray on this machine."
        ) from None


@contextlib.contextmanager
def ray_cluster(
    address: str = "auto",
    *,
    num_cpus: int | None = None,
    object_store_memory: int | None = None,
) -> Iterator[ClusterInfo]:
    """Connect to a Ray cluster for the duration of a run.

    Args:
        address: ``"auto"`` starts a local Ray with this machine's CPUs (``num_cpus``
            to use fewer) and stops it on exit; ``host:port`` joins a running cluster
            (and leaves it running). When this process is already connected to Ray
            (a notebook, a test), that connection is used and left as it is.
        num_cpus: CPUs of a local Ray (``auto`` only).
        object_store_memory: bytes of a local Ray's object store (``auto`` only).

    Raises:
        RayNotInstalledError: Ray is missing.
        ClusterError: the address is unreachable or not a Ray cluster (nothing is left
            running).
    """
    ray = import_ray()
    if ray.is_initialized():
        yield _info(ray, address, started=False)
        return
    local = address.strip() == "auto"
    if not local:
        check_reachable(address)
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
    }
    if local:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        kwargs.update(address="local", num_cpus=num_cpus or os.cpu_count() or 1)
        if object_store_memory:
            kwargs["object_store_memory"] = object_store_memory
    else:
        kwargs["address"] = address.strip()
    # ray.init installs a SIGTERM handler that exits at once; keep ours (a run stops
    # cleanly on SIGTERM as on Ctrl-C).
    handler = _sigterm_handler()
    try:
        ray.init(**kwargs)
    except Exception as exc:
        with contextlib.suppress(Exception):
            ray.shutdown()
        what = "start Ray on this machine" if local else f"join the Ray cluster at {address}"
        detail = (str(exc).strip().splitlines() or [""])[0]
        advice = (
            "Is another program using Ray's ports?"
            if local
            else "Is it the head node of a Ray of the same Ray and Python versions as here?"
        )
        raise ClusterError(f"Could not {what} ({type(exc).__name__}: {detail}). {advice}") from None
    finally:
        _restore_sigterm(handler)
    try:
        yield _info(ray, address, started=True)
    finally:
        # Disconnects, and stops the processes of a local Ray this run started.
        ray.shutdown()


def _info(ray: Any, address: str, started: bool) -> ClusterInfo:
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(n["Resources"].get("CPU", 0.0) for n in nodes)
    gpus = sum(n["Resources"].get("GPU", 0.0) for n in nodes)
    return ClusterInfo(address, started, len(nodes), cpus, gpus)


def _sigterm_handler() -> Any:
    with contextlib.suppress(ValueError):
        return signal.getsignal(signal.SIGTERM)
    return None


def _restore_sigterm(handler: Any) -> None:
    if handler is not None:
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, handler)


def workers_that_fit(resources: WorkerResources) -> int:
    """How many workers asking for ``resources`` the live nodes can hold at once."""
    ray = import_ray()
    total = 0
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        have = node["Resources"]
        fit = math.floor(have.get("CPU", 0.0) / resources.num_cpus + 1e-9)
        if resources.num_gpus > 0:
            fit = min(fit, math.floor(have.get("GPU", 0.0) / resources.num_gpus + 1e-9))
        total += max(0, fit)
    return total


__all__ = [
    "ClusterError",
    "ClusterInfo",
    "RayNotInstalledError",
    "WorkerSetupError",
    "check_reachable",
    "import_ray",
    "parse_address",
    "ray_cluster",
    "workers_that_fit",
]
