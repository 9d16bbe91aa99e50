"""Which torch device to run on, by name, for every part that runs a torch model.

The language-model backend and value-head training take the same names: ``"auto"``
(the first CUDA GPU when torch sees one, else the CPU), ``"cpu"``, ``"cuda"`` or
``"cuda:<index>"``. A GPU asked for by name that torch cannot see is an error, not a
silent fall back to the CPU, so that a run never reports CPU timings as GPU ones.
"""

from __future__ import annotations

from typing import Any

from pokegym.errors import DeviceNotAvailableError

DEVICE_NAMES = "'auto', 'cpu', 'cuda' or 'cuda:<index>'"


def torch_device(name: str) -> Any:
    """The ``torch.device`` for ``name``.

    Raises:
        ValueError: ``name`` is not one of the device names above.
        DeviceNotAvailableError: a CUDA device is named and torch sees no such GPU.
    """
    import torch

    if not isinstance(name, str):
        raise ValueError(f"device is {DEVICE_NAMES}, got {name!r}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    kind, _, index = name.partition(":")
    if kind != "cuda" or (index and not index.isdigit()):
        raise ValueError(f"device is {DEVICE_NAMES}, got {name!r}")
    if not torch.cuda.is_available():
        raise DeviceNotAvailableError(
            f"device={name!r} asks for a CUDA GPU, but this torch sees none "
            f"(torch {torch.__version__}). Use 'cpu' (or 'auto'), or install a CUDA "
            "build of torch on a machine with an NVIDIA GPU."
        )
    if index and int(index) >= torch.cuda.device_count():
        raise DeviceNotAvailableError(
            f"device={name!r} asks for a CUDA GPU that is not there: torch sees "
            f"{torch.cuda.device_count()} CUDA GPU(s)."
        )
    return torch.device(name)
