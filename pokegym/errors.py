"""Exceptions a user can cause or meet, each saying what to do about it."""

from __future__ import annotations


class PokegymError(Exception):
    """Base class for every error raised on purpose by pokegym."""


class NodeNotFoundError(PokegymError):
    """Node.js or npm is missing or too old to run Pokémon Showdown."""


class ShowdownInstallError(PokegymError):
    """Installing the pinned Pokémon Showdown package with npm failed."""


class SimulatorError(PokegymError):
    """The Showdown simulator process died or answered something unusable.

    The battles it hosted are lost; the next ``reset()`` of an environment starts
    a fresh process.
    """


class BattleTimeoutError(PokegymError):
    """A battle did not answer within its time limit (a stalled battle)."""


class ServerError(PokegymError):
    """A Showdown server could not be started, reached, or died mid-battle."""


class PortInUseError(ServerError):
    """The requested port is already taken by another program."""


class UnknownFormatError(PokegymError, ValueError):
    """Showdown does not know the requested battle format."""


class UnknownBackendError(PokegymError, ValueError):
    """No battle backend of that name (or none this environment runs on); the message lists
    the valid ones."""


class InvalidTeamError(PokegymError, ValueError):
    """A team failed Showdown's validator; the message carries its reasons."""


class IllegalActionError(PokegymError, ValueError):
    """An action is not legal in the current battle state. Nothing was sent."""


class UnknownAgentError(PokegymError, KeyError):
    """No agent is registered under the requested name."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else ""


class AgentOptionError(PokegymError, ValueError, TypeError):
    """An agent named by a spec (``"name:key=value,..."``) could not be built from its
    options: an unknown option, a bad value, or a file it names (a checkpoint, a memory)
    that is missing or damaged. The message names the spec and the cause."""


class DeviceNotAvailableError(PokegymError, ValueError):
    """The requested torch device (a CUDA GPU) is not visible to torch on this machine."""


class EngineMissingError(PokegymError, ImportError):
    """poke-engine (the compiled Rust battle engine) is not installed, or does not load in
    this Python; ``pokegym engine build`` builds and installs it."""


class EngineBuildError(PokegymError):
    """poke-engine could not be downloaded, built or installed; the message says which
    step failed and what it printed."""
