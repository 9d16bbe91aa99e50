"""The protocol layer every reader shares (pokegym.showdown.protocol), and its readers."""

from __future__ import annotations

import pytest

from bench.log_replay import LogReplay
from pokegym.showdown.protocol import (
    Condition,
    Details,
    Message,
    ProtocolReader,
    effect_id,
    messages,
    parse_condition,
    parse_details,
    parse_message,
    pokemon_ident,
)
from pokegym.text import GameNames, history_text
from pokegym.world.priors.protocol import ProtocolTracker


def test_a_line_splits_into_kind_arguments_and_tags() -> None:
    m = parse_message("|move|p1a: Garchomp|Protect||[still]")
    assert m == Message(
        kind="move",
        args=("p1a: Garchomp", "Protect", ""),
        tags=("[still]",),
        parts=("", "move", "p1a: Garchomp", "Protect", "", "[still]"),
    )
    split = ["", "-item", "p2a: Rotom", "Choice Scarf", "[from] move: Trick"]
    assert parse_message(split) == parse_message("|" + "|".join(split[1:]))
    assert parse_message(split).sources() == {"trick"}  # type: ignore[union-attr]
    assert parse_message("not a protocol line") is None
    assert parse_message([""]) is None
    assert [m.kind for m in messages(["text", "|turn|3", ["", "upkeep"]])] == ["turn", "upkeep"]


def test_fields_parse_as_the_protocol_writes_them() -> None:
    assert pokemon_ident("p2a: Great Tusk") == "p2: Great Tusk"
    assert pokemon_ident(" p1: Name ") == "p1: Name"
    assert parse_condition("123/301 par") == Condition(123, 301, "par")
    assert parse_condition("0 fnt") == Condition(0, None, "fnt")
    assert parse_condition("57/100") == Condition(57, 100, "")
    with pytest.raises(ValueError):
        parse_condition("lots/100")
    assert parse_details("Palafin-Hero, L77, M") == Details("Palafin-Hero", 77, "M")
    assert parse_details("Gholdengo") == Details("Gholdengo", 100, "")
    assert effect_id("move: Stealth Rock") == "stealthrock"
    assert effect_id("ability: Grassy Surge") == "grassysurge"
    assert effect_id("Leftovers") == "leftovers"


def test_a_reader_dispatches_by_kind_after_its_filter() -> None:
    class Counting(ProtocolReader):
        HANDLERS = {"-damage": "_on_damage"}

        def __init__(self) -> None:
            self.hp: list[str] = []
            self.seen = 0

        def on_message(self, message: Message) -> bool:
            self.seen += 1
            return "[silent]" not in message.tags

        def _on_damage(self, m: Message) -> None:
            self.hp.append(m.args[1])

    reader = Counting()
    reader.feed_lines(
        ["|-damage|p1a: X|50/100", "|-damage|p1a: X|40/100|[silent]", "|move|p1a: X|Tackle", "x"]
    )
    assert reader.hp == ["50/100"]
    assert reader.seen == 3


def test_the_damage_benchmark_follows_forced_switches() -> None:
    # Roar, Whirlwind, Dragon Tail and Red Card write "drag"; it changes the active
    # Pokémon exactly as a switch does.
    handler = {kind: getattr(LogReplay, name) for kind, name in LogReplay.HANDLERS.items()}
    assert handler["drag"] is handler["switch"] is LogReplay._on_switch
    assert LogReplay.HANDLERS["-damage"] == "_on_damage"
    assert "turn" not in LogReplay.HANDLERS  # the turn resets state in on_message


def test_the_priors_tracker_reads_hits_and_speed_boosts() -> None:
    tracker = ProtocolTracker("p1")
    tracker.feed_lines(
        [
            "|switch|p1a: Chomp|Garchomp, L80, M|250/250",
            "|switch|p2a: Tusk|Great Tusk, L78|100/100",
            "|turn|1",
            "|move|p2a: Tusk|Rapid Spin|p1a: Chomp",
            "|-damage|p1a: Chomp|200/250",
            "|-boost|p2a: Tusk|spe|1",
            "|move|p1a: Chomp|Earthquake|p2a: Tusk",
            "|-damage|p2a: Tusk|61/100",
            "|-damage|p2a: Tusk|55/100|[from] item: Rocky Helmet",
        ]
    )
    assert [(d.attacker, d.move, round(d.fraction_lost, 2)) for d in tracker.damage] == [
        ("p2: Tusk", "rapidspin", 0.2),
        ("p1: Chomp", "earthquake", 0.39),
    ]
    assert tracker.sides["p2"].boost == 1
    assert tracker.events == 9  # every line counts, the items' order is read from it


def test_field_effects_with_a_source_are_narrated() -> None:
    # A terrain or Trick Room whose line ends in "[from] ability: ..." or "[of] ..." tags
    # is narrated by its effect, not by its last tag.
    lines = [
        "|turn|1",
        "|switch|p1a: Rillaboom|Rillaboom, L80, M|100/100",
        "|-fieldstart|move: Grassy Terrain|[from] ability: Grassy Surge|[of] p1a: Rillaboom",
        "|-fieldstart|move: Trick Room|[of] p1a: Rillaboom",
        "|turn|2",
    ]
    text = history_text(lines, "p1", GameNames(9))
    assert "Grassy Terrain started." in text
    assert "Trick Room started." in text
