"""Battle state as readable text (the environments' ``render_mode="ansi"``).

Only species, moves, items, abilities and game state appear: never player names or
nicknames, which the opponent controls.
"""

from __future__ import annotations

from poke_env.battle import AbstractBattle, Pokemon

from pokegym.actions import ActionCodec
from pokegym.hp import hp_fraction


def _status(mon: Pokemon) -> str:
    return f" {mon.status.name.lower()}" if mon.status is not None else ""


def _types(mon: Pokemon) -> str:
    return "/".join(t.name.capitalize() for t in mon.types if t is not None)


def _boosts(mon: Pokemon) -> str:
    parts = [f"{stat}{value:+d}" for stat, value in mon.boosts.items() if value]
    return f" [{' '.join(parts)}]" if parts else ""


def _line(mon: Pokemon, own: bool) -> str:
    hp = "fainted" if mon.fainted else f"{round(hp_fraction(mon) * 100)}% HP"
    tera = ""
    if mon.is_terastallized and mon.tera_type is not None:
        tera = f" tera-{mon.tera_type.name.lower()}"
    extra = []
    if mon.item and mon.item != "unknown_item":
        extra.append(f"@ {mon.item}")
    if mon.ability:
        extra.append(f"({mon.ability})")
    if not own and mon.moves:
        extra.append("moves: " + ", ".join(m.id for m in mon.moves.values()))
    tail = (" " + " ".join(extra)) if extra else ""
    return f"{mon.species} ({_types(mon)}){tera} {hp}{_status(mon)}{_boosts(mon)}{tail}"


def render_battle(battle: AbstractBattle, codec: ActionCodec | None = None) -> str:
    """A multi-line text picture of the battle from its player's side."""
    lines = [f"Turn {battle.turn}" + (" (team preview)" if battle.teampreview else "")]
    field = []
    if battle.weather:
        field.append("weather " + ", ".join(w.name.lower() for w in battle.weather))
    if battle.fields:
        field.append("field " + ", ".join(f.name.lower() for f in battle.fields))
    if battle.side_conditions:
        field.append("own side " + ", ".join(c.name.lower() for c in battle.side_conditions))
    if battle.opponent_side_conditions:
        field.append(
            "opponent side " + ", ".join(c.name.lower() for c in battle.opponent_side_conditions)
        )
    if field:
        lines.append("Field: " + "; ".join(field))
    opp = battle.opponent_active_pokemon
    lines.append("Opponent active: " + (_line(opp, own=False) if opp else "none"))
    bench = [m for m in battle.opponent_team.values() if not m.active]
    if bench:
        lines.append("Opponent bench: " + "; ".join(_line(m, own=False) for m in bench))
    elif battle.teampreview_opponent_team and not battle.opponent_team:
        lines.append(
            "Opponent team: " + ", ".join(m.species for m in battle.teampreview_opponent_team)
        )
    own = battle.active_pokemon
    lines.append("Own active: " + (_line(own, own=True) if own else "none"))
    for i, mon in enumerate(battle.team.values()):
        marker = "*" if mon.active else " "
        lines.append(f"  {marker}{i + 1}. {_line(mon, own=True)}")
    if codec is not None and not battle.finished:
        legal = codec.legal_actions(battle)
        lines.append("Legal actions: " + ", ".join(codec.describe(a, battle) for a in legal))
    if battle.finished:
        result = "won" if battle.won else "lost" if battle.lost else "tied"
        lines.append(f"Battle over: {result}.")
    return "\n".join(lines)
