"""What a local language model runs with, chosen for the machine: its floating-point
type, and how many CPU threads a call uses now.

bfloat16 halves the memory traffic of float32 and is about twice as fast on CPUs that
compute it natively (Intel AMX or AVX512-BF16, Armv8.6 BF16). On CPUs without those
instructions (an AVX2-only AMD EPYC, for example) PyTorch emulates it, and a model in
bfloat16 is many times slower than in float32. ``dtype="auto"`` therefore asks the
machine: on a CUDA GPU bfloat16 where the GPU supports it (else float16); on a CPU
bfloat16 only when its flags name a native bfloat16 instruction set, else float32.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DTYPES = ("auto", "bfloat16", "float32", "float16")
#: CPU flags (Linux /proc/cpuinfo) of instruction sets that compute bfloat16 natively.
BF16_FLAGS = ("amx_bf16", "avx512_bf16", "bf16")
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class DtypeChoice:
    """The dtype a model loads in, and why (printed by ``pokegym bench llm``)."""

    dtype: str
    reason: str


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags (x86 ``flags``, Arm ``Features``); empty where unknown."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            return frozenset(value.split())
    return frozenset()


def cpu_capability() -> str:
    """PyTorch's name for the vector instructions it uses here (``AVX2``, ``AVX512``...)."""
    try:
        import torch

        return str(torch.backends.cpu.get_cpu_capability())
    except (ImportError, AttributeError):
        return "unknown"


def choose_dtype(
    requested: str,
    device: Any = "cpu",
    *,
    flags: Iterable[str] | None = None,
    cuda_bf16: bool | None = None,
) -> DtypeChoice:
    """The dtype for ``requested`` (``auto`` or a dtype name) on ``device``.

    Args:
        requested: ``auto`` or one of ``bfloat16``, ``float32``, ``float16`` (kept as is).
        device: a torch device or its name (``cpu``, ``cuda``, ``cuda:1``).
        flags: the CPU's flags (default: read from the machine).
        cuda_bf16: whether the GPU supports bfloat16 (default: ask torch).

    Raises:
        ValueError: ``requested`` is not one of :data:`DTYPES`.
    """
    if requested not in DTYPES:
        raise ValueError(f"dtype is one of {', '.join(DTYPES)}, got {requested!r}")
    if requested != "auto":
        return DtypeChoice(requested, "as asked")
    kind = getattr(device, "type", str(device).partition(":")[0])
    if kind == "cuda":
        if cuda_bf16 is None:
            import torch

            cuda_bf16 = bool(torch.cuda.is_bf16_supported())
        if cuda_bf16:
            return DtypeChoice("bfloat16", "the GPU computes bfloat16")
        return DtypeChoice("float16", "the GPU has no bfloat16: float16")
    present = frozenset(flags) if flags is not None else cpu_flags()
    native = sorted(present & set(BF16_FLAGS))
    if native:
        return DtypeChoice("bfloat16", f"the CPU computes bfloat16 natively ({', '.join(native)})")
    return DtypeChoice(
        "float32",
        f"the CPU has no native bfloat16 (capability {cpu_capability()}), where bfloat16 "
        "is emulated and many times slower: float32",
    )


LOADAVG = Path("/proc/loadavg")


def usable_cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def free_cores(cores: int | None = None, loadavg: Path = LOADAVG) -> int:
    """Cores not taken right now by other runnable tasks (at least 1).

    Reads the instantaneous count of runnable tasks (``/proc/loadavg``'s fourth field,
    this process's running thread excluded), else the 1-minute load average. A model
    whose threads outnumber the free cores stalls at every parallel step waiting for
    the thread that was descheduled, so one thread can be several times faster than two
    on a machine busy with other battles (docs/llm.md, "Threads").
    """
    cores = cores or usable_cores()
    try:
        running = int(loadavg.read_text().split()[3].split("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        running = int(os.getloadavg()[0]) if hasattr(os, "getloadavg") else 0
    return max(1, min(cores, cores - max(0, running)))


__all__ = [
    "BF16_FLAGS",
    "DTYPES",
    "DtypeChoice",
    "choose_dtype",
    "cpu_capability",
    "cpu_flags",
    "free_cores",
    "usable_cores",
]
