"""A Ray cluster to play on: Ray imported only when asked, joined by address or started here.

Ray is optional (``pip install 'pokegym[ray]'``): it is imported only here, only when a
run asks for it. :func:`ray_cluster` connects to a running cluster by address, or starts
a local one (``"auto"``), and stops what it started when the run ends. The workers that
play on it are in :mod:`pokegym.scale.pool`.

A Ray started here listens on 127.0.0.1 only (its GCS, raylet, object manager, workers
and agents; the dashboard is off unless asked for, and then on 127.0.0.1 too): anyone who
can reach a Ray's ports can run code on it. A cluster named by address listens where its
owner started it (docs/scale.md says how to keep it on a trusted network).
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
LOOPBACK = "127.0.0.1"
"""The address of every Ray node this module starts."""


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
    dashboard: str | None = None
    """The dashboard's URL when this run started Ray with one (on 127.0.0.1)."""


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
    dashboard: bool = False,
) -> Iterator[ClusterInfo]:
    """Connect to a Ray cluster for the duration of a run.

    Args:
        address: ``"auto"`` starts a local Ray with this machine's CPUs (``num_cpus``
            to use fewer) and stops it on exit; ``host:port`` joins a running cluster
            (and leaves it running). When this process is already connected to Ray
            (a notebook, a test), that connection is used and left as it is.
        num_cpus: CPUs of a local Ray (``auto`` only).
        object_store_memory: bytes of a local Ray's object store (``auto`` only).
        dashboard: start Ray's dashboard with a local Ray (``auto`` only), on 127.0.0.1
            (port 8265 or the next free one; :attr:`ClusterInfo.dashboard` has its URL).
            Off by default.

    A local Ray listens on 127.0.0.1 only, every process of it (see the module docstring).

    Raises:
        RayNotInstalledError: Ray is missing.
        ClusterError: the address is unreachable or not a Ray cluster, or a local Ray
            would not listen on 127.0.0.1 only (nothing is left running).
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
        kwargs.update(address="local", num_cpus=num_cpus or os.cpu_count() or 1,
                      _node_ip_address=LOOPBACK)  # fmt: skip
        if dashboard:
            kwargs.update(include_dashboard=True, dashboard_host=LOOPBACK)
        if object_store_memory:
            kwargs["object_store_memory"] = object_store_memory
    else:
        kwargs["address"] = address.strip()
    # ray.init installs a SIGTERM handler that exits at once; keep ours (a run stops
    # cleanly on SIGTERM as on Ctrl-C).
    handler = _sigterm_handler()
    try:
        with loopback_nodes(ray) if local else contextlib.nullcontext():
            context = ray.init(**kwargs)
        if local:
            _check_loopback(ray)
    except ClusterError:
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise
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
        url = getattr(context, "dashboard_url", None) if local and dashboard else None
        yield _info(ray, address, started=True, dashboard=f"http://{url}" if url else None)
    finally:
        # Disconnects, and stops the processes of a local Ray this run started.
        ray.shutdown()


@contextlib.contextmanager
def loopback_nodes(ray: Any) -> Iterator[None]:
    """While inside, a Ray node started in this process on 127.0.0.1 stays there.

    Ray on Linux replaces a node address of 127.0.0.1 (``_node_ip_address``, ``--address
    127.0.0.1:PORT``) by this machine's outward address, and its GCS, raylet, workers and
    agents then listen on every interface. It keeps 127.0.0.1 when its multi-machine mode is
    off (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, read once when Ray is imported): this
    turns that mode off for the time a local node starts and the driver connects to it,
    and restores it afterwards, so joining a cluster by address later is unchanged. A node
    keeps the address it started with; the processes it starts get it from the node.
    """
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    saved = getattr(constants, "ENABLE_RAY_CLUSTER", None)
    if saved is not None:
        constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if saved is not None:
            constants.ENABLE_RAY_CLUSTER = saved


def _check_loopback(ray: Any) -> None:
    """Refuse a local Ray whose node is not on 127.0.0.1 (a Ray version that ignores
    :func:`loopback_nodes`): its ports would be open to the network."""
    node_ip = ray.util.get_node_ip_address()
    if node_ip != LOOPBACK:
        raise ClusterError(
            f"The local Ray started on {node_ip}, not on {LOOPBACK}: its ports would be open "
            f"to the network, so it was stopped. This Ray ({ray.__version__}) does not keep "
            "a local node on 127.0.0.1; start a cluster yourself on a trusted network "
            "(docs/scale.md) and pass its address to --ray."
        )


def _info(ray: Any, address: str, started: bool, dashboard: str | None = None) -> ClusterInfo:
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(n["Resources"].get("CPU", 0.0) for n in nodes)
    gpus = sum(n["Resources"].get("GPU", 0.0) for n in nodes)
    return ClusterInfo(address, started, len(nodes), cpus, gpus, dashboard)


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
    "LOOPBACK",
    "ClusterError",
    "ClusterInfo",
    "RayNotInstalledError",
    "WorkerSetupError",
    "check_reachable",
    "import_ray",
    "loopback_nodes",
    "parse_address",
    "ray_cluster",
    "workers_that_fit",
]
