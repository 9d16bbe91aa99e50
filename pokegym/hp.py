"""The HP of a poke-env Pokémon, read the same way by every part of pokegym.

poke-env's ``current_hp_fraction`` is what the protocol last said, and once it says
something that is not true. Zoroark's Illusion wears another Pokémon's look: when the
disguised Zoroark is knocked out, Showdown sends ``-damage`` to the *disguise*'s name
(to 0), then ``replace`` reveals Zoroark, and Zoroark faints. poke-env leaves the
disguise at 0 HP without fainting it, although that Pokémon has not been in battle. Read
through :func:`hp_fraction`, a Pokémon at 0 HP that has not fainted is at full HP (also
one whose HP poke-env does not know yet), so the rewards, the world model's state, the
prompts and the rule-based agents all see the same battle (an opponent's side that looked
finished made the search refuse its root). The observation keeps poke-env's figure: its
layout is versioned and policies are trained on it, and its presence and revealed slots
tell those Pokémon apart.
"""

from __future__ import annotations

from typing import Any


def hp_fraction(mon: Any) -> float:
    """``mon``'s HP fraction in [0, 1] (a poke-env ``Pokemon``): 0 once fainted, 1 for a
    Pokémon shown at 0 HP that has not fainted (Zoroark's Illusion, see the module)."""
    if mon.fainted:
        return 0.0
    fraction = float(mon.current_hp_fraction)
    return fraction if fraction > 0 else 1.0
