"""``abyssal``: a rule-based heuristic bot in the Abyssal tradition.

Every decision starts from one small model of the position: expected damage of
every known or likely attack both ways (a simplified damage formula over real or
estimated stats, types including Tera types, STAB, boosts, burn, screens, weather,
cheap item and ability effects, accuracy), who moves first, and how many hits each
side needs. On top of it, rules run in a fixed order, the first that fires decides:

1. **Force switch**: the switch-in with the best matchup after hazard damage.
2. **Finish**: a move that knocks the opponent out before it can act (priority
   moves included) is used at once.
3. **Switch out** of a bad matchup when a clearly better switch-in exists (never
   when trapped; a recent voluntary switch raises the bar, against ping-pong;
   the switch-in is charged the hazards and the hit it takes on the way in).
4. **Entry hazards**: Stealth Rock, Spikes, Toxic Spikes, Sticky Web while the
   opponent has Pokémon left to hit and the layer is not maxed.
5. **Hazard removal**: Rapid Spin, Mortal Spin, Defog, Tidy Up, Court Change when
   our side has hazards, we have Pokémon left to protect and removal can work.
6. **Recovery** when low and healing outpaces the damage taken.
7. **Setup** (Swords Dance, Nasty Plot, Dragon Dance, ...) when healthy, not
   threatened with a 2HKO and not boosted enough already.
8. **Status** (Toxic, Will-O-Wisp, Thunder Wave, sleep) on targets it can affect,
   when our attacks are not already doing the job.
9. **Attack** with the best expected-value move (Terastallizing when it pays).

Team Preview leads with the Pokémon with the best average matchup against the
opponent's six. Opponent sets: revealed moves first; in random battles the
species' move pools, abilities and levels from Showdown's own random-battle data;
otherwise STAB attacks of its types are assumed.
"""

from policies.abyssal.model import Combatant, Model
from policies.abyssal.policy import AbyssalPolicy

__all__ = ["AbyssalPolicy", "Combatant", "Model"]
