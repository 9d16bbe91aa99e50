"""Showdown's battle protocol, one message at a time.

A battle log is a list of lines such as ``|move|p1a: Garchomp|Earthquake|p2a: Heatran``
or ``|-damage|p2a: Heatran|0 fnt|[from] Stealth Rock``: a message kind, its positional
arguments, then bracketed tags. Every reader of the protocol in pokegym (the priors'
:class:`~pokegym.world.priors.protocol.ProtocolTracker`, the damage benchmark's
:class:`~bench.log_replay.LogReplay` and the battle narrator of
:mod:`pokegym.text.render`) splits lines and reads these fields here, and the two
trackers dispatch messages to their handlers through :class:`ProtocolReader`.

Reference: ``sim/SIM-PROTOCOL.md`` in the Pokémon Showdown repository.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from pokegym.world.data import to_id

__all__ = [
    "Condition",
    "Details",
    "Message",
    "ProtocolReader",
    "effect_id",
    "messages",
    "parse_condition",
    "parse_details",
    "parse_message",
    "pokemon_ident",
]


@dataclass(frozen=True, slots=True)
class Message:
    """One protocol line.

    Attributes:
        kind: the message kind as written (``"move"``, ``"-damage"``, ``"switch"``).
        args: the positional arguments, bracketed tags removed (an empty argument stays).
        tags: the bracketed tags in order (``"[from] item: Life Orb"``, ``"[miss]"``).
        parts: the line split on ``|``, with the empty field before the first bar, as
            poke-env keeps it (``["", "move", "p1a: X", "Tackle", ...]``).
    """

    kind: str
    args: tuple[str, ...]
    tags: tuple[str, ...]
    parts: tuple[str, ...]

    def sources(self) -> set[str]:
        """The effect ids named by ``[from]`` tags (``"[from] move: Trick"`` -> ``trick``)."""
        return {to_id(t.split(":")[-1]) for t in self.tags if t.startswith("[from]")}


def parse_message(line: str | Sequence[str]) -> Message | None:
    """A raw line (``"|move|..."``) or a split one (``["", "move", ...]``) as a
    :class:`Message`; None for text that is not a protocol message."""
    if isinstance(line, str):
        if not line.startswith("|"):
            return None
        parts: tuple[str, ...] = tuple(line.split("|"))
    else:
        parts = tuple(line)
    if len(parts) < 2:
        return None
    rest = parts[2:]
    return Message(
        kind=parts[1],
        args=tuple(p for p in rest if not p.startswith("[")),
        tags=tuple(p for p in rest if p.startswith("[")),
        parts=parts,
    )


def messages(lines: Iterable[str | Sequence[str]]) -> Iterator[Message]:
    """The protocol messages among ``lines`` (raw or split), in order."""
    for line in lines:
        message = parse_message(line)
        if message is not None:
            yield message


def pokemon_ident(text: str) -> str:
    """A Pokémon identifier without its position: ``"p2a: Great Tusk"`` ->
    ``"p2: Great Tusk"`` (poke-env's team keys); other text is returned stripped."""
    text = text.strip()
    if len(text) > 3 and text[2] != ":" and text[3] == ":":
        return text[:2] + text[3:]
    return text


class Condition(NamedTuple):
    """A Pokémon's HP and status as a message shows them (``"123/301 par"``)."""

    hp: int
    max_hp: int | None  # None where the text gives no maximum ("0 fnt")
    status: str  # "" when healthy; "fnt" when fainted


def parse_condition(text: str) -> Condition:
    """``"123/301 par"`` -> ``Condition(123, 301, "par")``; ``"0 fnt"`` ->
    ``Condition(0, None, "fnt")``. Raises ValueError on HP that is not a number."""
    parts = text.split()
    if not parts:
        return Condition(0, None, "")
    status = parts[1] if len(parts) > 1 else ""
    hp, sep, max_hp = parts[0].partition("/")
    return Condition(int(float(hp)), int(float(max_hp)) if sep else None, status)


class Details(NamedTuple):
    """A Pokémon's details field (``"Palafin-Hero, L77, M"``)."""

    species: str
    level: int
    gender: str


def parse_details(text: str) -> Details:
    """``"Palafin-Hero, L77, M"`` -> ``Details("Palafin-Hero", 77, "M")`` (level 100 and
    no gender where the text names none)."""
    parts = [p.strip() for p in text.split(",")]
    level, gender = 100, ""
    for part in parts[1:]:
        if part.startswith("L") and part[1:].isdigit():
            level = int(part[1:])
        elif part in ("M", "F"):
            gender = part
    return Details(parts[0], level, gender)


def effect_id(text: str) -> str:
    """An effect's id without its kind: ``"move: Protect"``, ``"ability: Intimidate"``,
    ``"item: Leftovers"`` and ``"Leftovers"`` all give the bare id."""
    for prefix in ("move: ", "ability: ", "item: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return to_id(text)


class ProtocolReader:
    """Feeds protocol messages to handlers, by kind.

    A subclass names its handlers in ``HANDLERS`` (message kind -> method name); each
    handler takes the :class:`Message`. :meth:`feed` takes one line, raw or split, and
    :meth:`feed_lines` many; :meth:`on_message` sees every message before its handler
    (a subclass may override it, for instance to reset per-turn state).
    """

    HANDLERS: ClassVar[Mapping[str, str]] = {}

    def feed(self, line: str | Sequence[str]) -> None:
        """Take one protocol line (raw or split)."""
        message = parse_message(line)
        if message is not None:
            self.dispatch(message)

    def feed_lines(self, lines: Iterable[str | Sequence[str]]) -> None:
        """Take protocol lines in order; text that is not a message is skipped."""
        for line in lines:
            self.feed(line)

    def dispatch(self, message: Message) -> None:
        if not self.on_message(message):
            return
        name = self.HANDLERS.get(message.kind)
        if name is not None:
            getattr(self, name)(message)

    def on_message(self, message: Message) -> bool:
        """Called for every message first; False skips its handler."""
        return True
