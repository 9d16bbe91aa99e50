"""What a worker asks a Ray cluster for, read from the agent specs it plays.

An agent spec may carry two options that no agent sees: ``num_cpus`` and ``num_gpus``
(``"pokechamp:model=qwen-0.5b,num_gpus=0.25"``). They are removed from the spec before
the agent is built (locally too, where they mean nothing), are not part of a
tournament's identity (a journal resumes with or without them), and tell Ray what one
worker playing that agent needs. Every worker of a run asks for the largest request
among the run's agents (an agent without ``num_cpus`` asks for one CPU): a worker plays
battles of every pair, so it must fit the most demanding agent. A fractional
``num_gpus`` packs several workers on one GPU.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from pokegym.errors import AgentOptionError

RESOURCE_OPTIONS = ("num_cpus", "num_gpus")


@dataclass(frozen=True)
class WorkerResources:
    """What one worker asks Ray for."""

    num_cpus: float = 1.0
    """CPUs reserved for the worker (its Python process; the simulator rides along)."""
    num_gpus: float = 0.0
    """GPUs reserved for the worker (fractions share a GPU)."""

    def ray_options(self) -> dict[str, float]:
        return {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus}


def split_resources(spec: str) -> tuple[str, dict[str, float]]:
    """``"name:a=1,num_gpus=0.5"`` -> ``("name:a=1", {"num_gpus": 0.5})``; the other
    options keep their text as written.

    Raises:
        AgentOptionError: a resource option is not a non-negative number.
    """
    name, colon, rest = spec.strip().partition(":")
    if not colon:
        return spec.strip(), {}
    kept: list[str] = []
    resources: dict[str, float] = {}
    for part in rest.split(","):
        key, _, value = part.partition("=")
        if key.strip() in RESOURCE_OPTIONS:
            try:
                amount = float(value.strip())
            except ValueError:
                amount = math.nan
            cpus = key.strip() == "num_cpus"
            if not math.isfinite(amount) or amount < 0 or (cpus and amount == 0):
                raise AgentOptionError(
                    f"{key.strip()}={value.strip()!r} in {spec!r} is not "
                    f"{'a number of CPUs above 0' if cpus else 'a number of GPUs (0 or more)'};"
                    f" write e.g. {key.strip()}=1 or {key.strip()}=0.5."
                )
            resources[key.strip()] = amount
        else:
            kept.append(part)
    return (f"{name}:{','.join(kept)}" if kept else name.strip()), resources


def worker_resources(specs: Iterable[str]) -> WorkerResources:
    """The request of a worker that may play any of ``specs``: the largest of each (an
    agent without ``num_cpus`` asks for one CPU)."""
    cpus, gpus = 0.0, 0.0
    for spec in specs:
        asked = split_resources(spec)[1]
        cpus = max(cpus, asked.get("num_cpus", 1.0))
        gpus = max(gpus, asked.get("num_gpus", 0.0))
    return WorkerResources(num_cpus=cpus or 1.0, num_gpus=gpus)


__all__ = ["RESOURCE_OPTIONS", "WorkerResources", "split_resources", "worker_resources"]
