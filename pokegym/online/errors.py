"""What can go wrong when an agent plays on a Showdown server, each saying what to do."""

from __future__ import annotations

from pokegym.errors import PokegymError, ServerError


class PasswordError(PokegymError, ValueError):
    """The password file cannot be read or is empty (the message never quotes it)."""


class LoginRefusedError(ServerError):
    """The login server or the Showdown server refused the login: a wrong password, a
    registered name without its password, a name already in use, a token the server
    does not accept."""


class ServerUnreachableError(ServerError):
    """The Showdown server (or its login server) cannot be reached: nothing answers at
    the address, or the connection closed before the login."""


class ServerDisconnectedError(ServerError):
    """The connection to the Showdown server closed during the run; the battles that had
    finished are written."""


class OpponentNotFoundError(PokegymError):
    """The player to challenge is not online on the server (within the wait)."""


class AgentFailedError(PokegymError):
    """The agent raised an error while choosing an order; the battle is forfeited."""
