"""poke-engine, the Rust battle engine (MIT; PyPI ``poke-engine``), as a dependency.

PyPI ships poke-engine as source only and its features are chosen at build time, so
``pokegym engine build`` (``make setup`` runs it) compiles the pinned version for Gen 9
once, caches the wheel in ``$POKEGYM_HOME/poke-engine/`` and installs it
(:mod:`pokegym.engine.build`; docs/engine.md). Code that searches with the engine gets
the module through :func:`require_engine`, which turns a missing build into one error
that names the command.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from pokegym.errors import EngineMissingError

MODULE = "poke_engine"
BUILD_HINT = "run `pokegym engine build` (or `make setup`)"


def require_engine() -> ModuleType:
    """The ``poke_engine`` module.

    Raises:
        EngineMissingError: it is not installed, or it does not load in this Python.
    """
    try:
        return importlib.import_module(MODULE)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == MODULE:
            problem = "poke-engine is not installed in this environment"
        else:
            problem = f"poke-engine is installed but does not load ({exc})"
        raise EngineMissingError(f"{problem}: {BUILD_HINT}.") from exc


__all__ = ["BUILD_HINT", "MODULE", "require_engine"]
