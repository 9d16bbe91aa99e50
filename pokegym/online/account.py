"""The account a player logs in with, and the password rules.

The password comes from a file (``--password-file``) or from the environment variable
``POKEGYM_PASSWORD``, never from the command line (other users of the machine can read
a command line). It is held by :class:`Password`, whose ``repr`` and ``str`` are masked,
and goes to one place only: the login server's ``action.php``, over HTTPS on public
servers, which answers with a signed token (the *assertion*) that the Showdown server
checks. The token is sent to the server and not logged either.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from pokegym.online.errors import LoginRefusedError, PasswordError, ServerUnreachableError

PASSWORD_VARIABLE = "POKEGYM_PASSWORD"
LOGIN_SERVER = "https://play.pokemonshowdown.com/action.php?"
MASK = "********"


class Password:
    """A password that does not show itself: ``repr``, ``str`` and formatting print a mask;
    :meth:`reveal` returns the text (for the login request only). It cannot be pickled."""

    __slots__ = ("_text",)

    def __init__(self, text: str):
        self._text = text

    def reveal(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Password({MASK!r})"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return MASK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._text == self._text

    def __hash__(self) -> int:
        return hash((Password, self._text))

    def __reduce__(self) -> NoReturn:
        raise TypeError("A Password is not stored: it cannot be pickled.")


def read_password(
    password_file: str | Path | None, environ: Mapping[str, str] | None = None
) -> Password | None:
    """The password from ``password_file`` (its first line) or, without a file, from
    ``POKEGYM_PASSWORD``; None when neither gives one (servers without security).

    Raises:
        PasswordError: the file cannot be read, is not text, or is empty.
    """
    if password_file is not None:
        path = Path(password_file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise PasswordError(f"The password file {path} is not UTF-8 text.") from None
        except OSError as exc:
            raise PasswordError(
                f"Cannot read the password file {path} ({exc.strerror or type(exc).__name__})."
            ) from None
        first = text.splitlines()[0] if text.strip() else ""
        if not first:
            raise PasswordError(
                f"The password file {path} is empty: write the account's password on its "
                "first line."
            )
        return Password(first)
    value = (os.environ if environ is None else environ).get(PASSWORD_VARIABLE, "")
    return Password(value) if value else None


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def check_login_server(url: str) -> None:
    """Refuse to send a password to a login server over plain HTTP, except on this machine.

    Raises:
        PasswordError: the address is not ``https://`` and not a loopback host.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS):
        return
    raise PasswordError(
        f"The login server {url} is not an https:// address: the password would cross the "
        "network unencrypted. Give an https:// login server (plain http only on this machine)."
    )


def fetch_assertion(
    login_server: str, username: str, password: Password, challstr: str, timeout: float = 15.0
) -> str:
    """Ask the login server for the signed token that logs ``username`` in on the server
    that sent ``challstr`` (``KEYID|CHALLENGE``, the two fields of ``|challstr|``).

    Raises:
        ServerUnreachableError: the login server does not answer.
        LoginRefusedError: it refuses (a wrong password, no such account).
    """
    check_login_server(login_server)
    # requests: only the login needs it
    import requests

    try:
        response = requests.post(
            login_server,
            # The challenge's two parts joined by an encoded "|", as poke-env sends it.
            data={"act": "login", "name": username, "pass": password.reveal(),
                  "challstr": challstr.replace("|", "%7C", 1)},
            timeout=timeout,
        )  # fmt: skip
    except requests.RequestException as exc:
        raise ServerUnreachableError(
            f"The login server {login_server} did not answer ({type(exc).__name__}). Check "
            "the address (--login-server) and the network."
        ) from None
    return parse_login_answer(response.text, username, login_server)


def parse_login_answer(text: str, username: str, login_server: str) -> str:
    """The assertion in a login server's answer (``]{"assertion": ...}``).

    Raises:
        LoginRefusedError: the answer carries no token; its reason when it gives one.
    """
    try:
        answer = json.loads(text[1:] if text.startswith("]") else text)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise LoginRefusedError(
            f"The login server {login_server} gave no usable answer for {username}; is "
            "--login-server the server's action.php address?"
        )
    assertion = answer.get("assertion")
    if isinstance(assertion, str) and assertion.startswith(";;"):
        reason = assertion[2:].strip() or "no reason given"
        raise LoginRefusedError(f"The login server refused {username}: {reason}")
    if assertion == ";":
        raise LoginRefusedError(
            f"The name {username} is registered: the password is missing or wrong."
        )
    if not isinstance(assertion, str) or not assertion or answer.get("actionsuccess") is False:
        raise LoginRefusedError(
            f"The login server refused {username} (a wrong password, or no such account)."
        )
    return assertion
