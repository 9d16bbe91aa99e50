"""What the opponent's item did not do, as evidence (pokegym/world/priors/item_clues.py).

Scripted protocol lines check each clue and the cases that must give none; the
simulator's battles check every clue against the opponent's true set
(tests/test_hits.py's slow test, through bench/belief_accuracy.py).
"""

from __future__ import annotations

import pytest

from pokegym.world.priors.item_clues import CHOICE_ITEMS, ClueTracker, ItemClue
from pokegym.world.sets import PokemonSet

START = """
|switch|p1a: Garchomp|Garchomp, L80, M|280/280
|switch|p2a: Scizor|Scizor, L82, M|100/100
|turn|1
"""


def clues(text: str) -> list[ItemClue]:
    tracker = ClueTracker("p1")
    for line in (START + text).strip().splitlines():
        tracker.feed(line.strip())
    return tracker.clues


def only(found: list[ItemClue], why: str) -> list[ItemClue]:
    return [c for c in found if c.why == why]


def test_a_hit_without_recoil_rules_out_life_orb():
    found = only(
        clues("""
|move|p2a: Scizor|Bullet Punch|p1a: Garchomp
|-damage|p1a: Garchomp|250/280
|move|p1a: Garchomp|Earthquake|p2a: Scizor
|-damage|p2a: Scizor|60/100
"""),
        "no Life Orb recoil",
    )
    (clue,) = found
    assert clue.ident == "p2: Scizor" and not clue.has and clue.items == {"lifeorb"}
    assert clue.unless == {"magicguard"}  # Bullet Punch has no secondary effect
    orb = PokemonSet("scizor", item="lifeorb", ability="technician")
    assert clue.distance(orb) == 1.0
    assert clue.distance(PokemonSet("scizor", item="lifeorb", ability="magicguard")) == 0.0
    assert not only(
        clues("""
|move|p2a: Scizor|Bullet Punch|p1a: Garchomp
|-damage|p1a: Garchomp|250/280
|-damage|p2a: Scizor|90/100|[from] item: Life Orb
|upkeep
"""),
        "no Life Orb recoil",
    )


def test_the_end_of_a_turn_below_full_hp_without_a_heal_rules_out_leftovers():
    hurt = """
|move|p1a: Garchomp|Earthquake|p2a: Scizor
|-damage|p2a: Scizor|60/100
"""
    (clue,) = only(clues(hurt + "|upkeep\n"), "no heal at the end of a turn")
    assert clue.items == {"leftovers", "blacksludge"} and not clue.has
    healed = hurt + "|-heal|p2a: Scizor|66/100|[from] item: Leftovers\n|upkeep\n"
    blocked = hurt + "|-start|p2a: Scizor|move: Heal Block\n|upkeep\n"
    residual = hurt + "|-damage|p2a: Scizor|48/100 psn|[from] psn\n|upkeep\n"
    for text in (healed, blocked, residual, "|upkeep\n"):
        assert not only(clues(text), "no heal at the end of a turn"), text


def test_stealth_rock_on_entry_tells_boots_even_when_both_sides_switch():
    rocks = """
|move|p1a: Garchomp|Stealth Rock|p2a: Scizor
|-sidestart|p2: Player|move: Stealth Rock
|upkeep
|turn|2
|switch|p2a: Heatran|Heatran, L80, M|100/100
|switch|p1a: Dragonite|Dragonite, L74, M|250/250
"""
    (hurt,) = only(clues(rocks + "|-damage|p2a: Heatran|88/100|[from] Stealth Rock\n|upkeep\n"),
                   "hurt by Stealth Rock")  # fmt: skip
    assert hurt.items == {"heavydutyboots"} and not hurt.has
    (kept,) = only(clues(rocks + "|move|p2a: Heatran|Magma Storm|p1a: Dragonite\n"),
                   "no Stealth Rock damage")  # fmt: skip
    assert kept.has and kept.unless == {"magicguard"}
    assert kept.distance(PokemonSet("heatran", item="leftovers", ability="flashfire")) == 1.0
    assert kept.distance(PokemonSet("heatran", item="heavydutyboots")) == 0.0


def test_two_different_moves_in_a_row_rule_out_choice_items():
    def turns(between: str) -> str:
        return f"""
|move|p2a: Scizor|Bullet Punch|p1a: Garchomp
|upkeep
|turn|2
{between}
|move|p2a: Scizor|Swords Dance|p2a: Scizor
"""

    (clue,) = only(clues(turns("")), "two different moves in a row")
    assert clue.items == CHOICE_ITEMS and not clue.has
    # Out and back in: a choice lock ends with the switch.
    back = "|switch|p2a: Heatran|Heatran, L80|100/100\n|switch|p2a: Scizor|Scizor, L82, M|100/100"
    assert not only(clues(turns(back)), "two different moves in a row")
    # A move called by another (Sleep Talk) is not a choice.
    called = ("|move|p2a: Scizor|Sleep Talk|p2a: Scizor\n"
              "|move|p2a: Scizor|Bullet Punch||[from]move: Sleep Talk")  # fmt: skip
    text = clues(turns("").replace("|move|p2a: Scizor|Swords Dance|p2a: Scizor", called))
    assert len(only(text, "two different moves in a row")) == 1  # Sleep Talk itself


@pytest.mark.parametrize(
    ("species", "orbs"),
    [
        ("Scizor", {"flameorb"}),  # Steel: a Toxic Orb could not act
        ("Heatran", set()),  # Fire and Steel: neither could
        ("Garchomp", {"flameorb", "toxicorb"}),
    ],
)
def test_an_end_of_turn_free_of_status_rules_out_the_orbs_that_could_act(species, orbs):
    text = f"""
|switch|p2a: {species}|{species}, L80|100/100
|upkeep
"""
    found = [c for c in clues(text) if c.why.startswith("no ") and "orb" in c.why]
    assert {item for c in found for item in c.items} == orbs
