"""Helpers of the tests that run battles on a real Ray: reference outcomes, stray processes
and the sockets Ray listens on."""

from __future__ import annotations

import ipaddress
import os
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from pokegym.arena import ArenaConfig
from pokegym.scale.cluster import import_ray

# Deterministic agents on 20 seeded battles (no clock: a loaded machine must not decide).
EQUAL = ArenaConfig(
    agents=["max_power", "one_step", "abyssal", "random"],
    pairs=[("max_power", "random"), ("one_step", "abyssal")],
    battles_per_pair=10, seed=17, clock_bank=None, concurrency=4,
)  # fmt: skip
# Cheap battles for the runs that kill workers and interrupt.
SMALL = ArenaConfig(agents=["max_power", "random"], battles_per_pair=6, seed=29, clock_bank=None,
                    concurrency=3)  # fmt: skip
# Processes of a Ray node (its workers are titled ray::...).
RAY_NAMES = ("raylet", "gcs_server", "ray::", "ray/dashboard", "runtime_env/agent",
             "log_monitor.py")  # fmt: skip


def outcomes(battles) -> list[tuple]:
    """What a battle's outcome is, without its wall time."""
    keep = ("pair", "index", "seed", "p1", "p2", "winner", "turns", "truncated", "timeout")
    rows = [b if isinstance(b, dict) else asdict(b) for b in battles]
    return [tuple(tuple(r[k]) if k == "pair" else r[k] for k in keep) for r in rows]


def decisions(result) -> dict[str, int]:
    return {name: stats.decisions for name, stats in result.agent_stats.items()}


def processes(names: tuple[str, ...] = RAY_NAMES) -> dict[int, str]:
    """Running processes whose command line mentions one of ``names``: pid -> command."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(name in command for name in names):
            found[int(entry.name)] = command.strip()
    return found


def children(pid: int) -> set[int]:
    """The child processes of ``pid`` (its simulator, for a worker)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(x) for x in text.split()}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until_gone(pids, timeout: float = 60.0) -> set[int]:
    """Poll until none of ``pids`` runs (Ray ends processes asynchronously); the survivors."""
    deadline = time.monotonic() + timeout
    left = {pid for pid in pids if alive(pid)}
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = {pid for pid in left if alive(pid)}
    return left


@dataclass(frozen=True)
class Listening:
    """A socket a process listens on (TCP) or receives on from anyone (unconnected UDP)."""

    address: str
    port: int
    pid: int
    command: str

    def __str__(self) -> str:
        return f"{self.address}:{self.port} ({self.command[:60]}, pid {self.pid})"


def listening_sockets(pid: int) -> list[Listening]:
    """Every socket that ``pid`` and the processes under it listen on.

    A Ray started by a process runs under it: the GCS, the raylet, the agents and the
    workers (children of the raylet)."""
    import_ray()  # psutil ships with Ray: importing Ray puts it on the path
    import psutil

    root = psutil.Process(pid)
    found = []
    for process in (root, *root.children(recursive=True)):
        try:
            command = " ".join(process.cmdline()) or process.name()
            connections = process.net_connections(kind="inet")
        except psutil.Error:  # ended meanwhile
            continue
        for c in connections:
            if c.status == psutil.CONN_LISTEN or (c.type == socket.SOCK_DGRAM and not c.raddr):
                found.append(Listening(c.laddr.ip, c.laddr.port, process.pid, command))
    return found


def on_loopback(address: str) -> bool:
    """127.0.0.0/8 or ::1, also written as an IPv4-mapped IPv6 address (::ffff:127.0.0.1);
    not a wildcard (0.0.0.0, ::) nor any interface's address."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback
