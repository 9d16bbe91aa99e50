"""A replay seen by one player, decision by decision, in poke-env's battle object.

:func:`player_decisions` feeds the log's lines into a
:class:`~pokegym.backends.base.ShowdownBattle` (poke-env's ``Battle``) that belongs to
one player, the way a live player's battle is fed, and stops at each of that player's
decisions (:mod:`pokegym.replays.decisions`) to hand over the battle, the action the
player took next and the opponent's action at the same moment.

**What the player sees.** The opponent's side: exactly what the log shows (the log is
what a spectator saw, which is what the player saw of the opponent). The player's own
side: a live player also gets a ``|request|`` with the whole team, which a replay does
not keep. In its place, at each decision, the battle receives a request made from the
log: the player's Pokémon that appear anywhere in the log (in order of appearance),
each with the moves and ability the log shows it using anywhere in the battle (the
player knew them all along; at most four moves), HP and status as the log shows them
(percentages), and the choices those give (moves of the active Pokémon, switches to
the others that have not fainted, Terastallization or Dynamax while unused and not
banned by the format's rules). Pokémon that never appear, items, stats and hidden
moves stay unknown. With ``team=`` (the player's team in Showdown's export text) the
player's Pokémon start from their full sets instead.

The battle object is the live one: read what you need from a :class:`Decision` before
asking for the next (``copy=False``), or let each decision carry its own battle,
rebuilt from the log up to that point (``copy=True``, slower).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from poke_env.battle import Effect, Move, MoveCategory, Pokemon
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder
from poke_env.teambuilder import Teambuilder

from pokegym.backends.base import ShowdownBattle
from pokegym.replays.decisions import DecisionPoint, ReplayAction, decision_points
from pokegym.replays.files import Replay, ReplayFileError
from pokegym.showdown.protocol import parse_details, parse_message
from pokegym.world.data import load_dex, to_id
from pokegym.world.sets import compute_stats

__all__ = ["Decision", "OwnPokemon", "own_teams", "player_decisions", "replay_battle"]

logger = logging.getLogger("pokegym.replays")
ROLES = ("p1", "p2")
# Lines a player's battle object never receives (a client handles them itself).
_NOT_BATTLE = frozenset(
    {"t:", "j", "J", "l", "L", "n", "c", "c:", "chat", "raw", "html", "uhtml", "uhtmlchange",
     "inactive", "inactiveoff", "expire", "request", "error", "bigerror", "tempnotify",
     "tempnotifyoff", "split", "timestamp", "debug", "seed", "noinit", "deinit", "badge",
     "askreg", "notify", "unlink", "hidelines", "controlshtml", "fieldhtml", "sentchoice",
     "rule", "clearpoke", "message", "-message", "init", "title", "rated"}
)  # fmt: skip


@dataclass
class OwnPokemon:
    """One of a player's Pokémon as the whole log shows it."""

    ident: str  # "p1: Name"
    details: str
    moves: list[str]
    ability: str = ""
    regenerator: bool = False  # came back with more HP than it left with, unseen


@dataclass(frozen=True)
class Decision:
    """One decision of the player, with the battle as that player saw it.

    Attributes:
        point: where and what (:class:`~pokegym.replays.decisions.DecisionPoint`).
        battle: the player's battle object just before the choice.
        order: the action as a poke-env order in this battle (None where the action is
            unknown, is no move or switch, or names a move the request lacks).
    """

    point: DecisionPoint
    battle: ShowdownBattle
    order: BattleOrder | None

    @property
    def action(self) -> ReplayAction | None:
        return self.point.action

    @property
    def opponent_action(self) -> ReplayAction | None:
        return self.point.opponent_action


def own_teams(lines: tuple[str, ...], gen: int = 9) -> dict[str, dict[str, OwnPokemon]]:
    """Each player's Pokémon as the whole log shows them (appearance order)."""
    teams: dict[str, dict[str, OwnPokemon]] = {"p1": {}, "p2": {}}
    hp: dict[str, int] = {}  # last HP shown, per Pokémon
    left_with: dict[str, int] = {}  # HP shown when it last switched out
    active: dict[str, str] = {}
    transformed: set[str] = set()  # its moves are another Pokémon's until it switches out
    for line in lines:
        m = parse_message(line)
        if m is None or not m.args or m.args[0][:2] not in ROLES:
            continue
        role = m.args[0][:2]
        ident = f"{role}: {m.args[0].partition(': ')[2]}"
        if m.kind in ("-damage", "-heal", "-sethp", "switch", "drag") and len(m.args) > 1 + (
            m.kind in ("switch", "drag")
        ):
            shown = _hp(m.args[2] if m.kind in ("switch", "drag") else m.args[1])
            if m.kind in ("switch", "drag"):
                out = active.get(role)
                transformed.discard(out or "")
                if out is not None and out != ident and hp.get(out, 0) > 0:
                    left_with[out] = hp[out]
                if ident in left_with and shown is not None and shown > left_with.pop(ident):
                    teams[role][ident].regenerator = True
                active[role] = ident
            if shown is not None:
                hp[ident] = shown
        if m.kind in ("switch", "drag", "replace") and len(m.args) > 1:
            mon = teams[role].setdefault(ident, OwnPokemon(ident, m.args[1], []))
            mon.details = mon.details if m.kind != "replace" else m.args[1]
        elif m.kind == "-transform":
            transformed.add(ident)
        elif m.kind == "move" and ident in teams[role] and len(m.args) > 1:
            if ident in transformed:
                continue
            called = any(t.startswith("[from]") and "lockedmove" not in to_id(t) for t in m.tags)
            move = to_id(m.args[1])
            mon = teams[role][ident]
            if not called and move not in mon.moves and _is_plain_move(move, 9):
                mon.moves.append(move)
        elif m.kind == "-ability" and ident in teams[role] and len(m.args) > 1:
            if not any(t.startswith("[from]") for t in m.tags):
                teams[role][ident].ability = teams[role][ident].ability or to_id(m.args[1])
    for team in teams.values():
        for mon in team.values():
            mon.regenerator = mon.regenerator and _may_have(mon.details, "regenerator", gen)
    return teams


def _may_have(details: str, ability: str, gen: int) -> bool:
    """Whether the species in ``details`` can have ``ability`` (an Illusion can make
    another Pokémon seem to come back healed)."""
    # poke-env's move data loads only when decisions are shown
    from poke_env.data import GenData

    entry = GenData.from_gen(gen).pokedex.get(to_id(parse_details(details).species), {})
    return ability in {to_id(a) for a in entry.get("abilities", {}).values()}


def _hp(condition: str) -> int | None:
    text = condition.split()[0] if condition.split() else ""
    number = text.partition("/")[0]
    return int(number) if number.isdigit() else None


def _is_plain_move(move_id: str, gen: int) -> bool:
    """A move a set can hold (not Struggle, a Max Move or a Z-Move)."""
    if move_id in ("struggle", "recharge", ""):
        return False
    try:
        entry = Move(move_id, gen=gen).entry
    except (KeyError, ValueError):
        return False
    return not (entry.get("isMax") or (entry.get("isZ") and entry.get("basePower", 0) > 1))


def replay_battle(replay: Replay, role: str, team: str | None = None) -> ShowdownBattle:
    """A new battle object for ``role`` (``p1`` or ``p2``), before any line is fed."""
    if role not in ROLES:
        raise ValueError(f"role is 'p1' or 'p2', got {role!r}")
    name = replay.players[ROLES.index(role)]
    tag = f"battle-{replay.format_id}-{replay.id}"
    battle = ShowdownBattle(tag, name, logger, replay.gen)
    battle.parse_message(["", "init", "battle"])
    battle.parse_message(["", "title", f"{replay.players[0]} vs. {replay.players[1]}"])
    battle._player_role = role  # the |player| lines confirm it; a nameless log cannot
    if team:
        members = [Pokemon(gen=replay.gen, teambuilder=m) for m in
                   Teambuilder.parse_showdown_team(team)]  # fmt: skip
        battle.teampreview_team = members
        for mon in members:
            battle.team[f"{role}: {mon.name}"] = mon
    return battle


def player_decisions(
    replay: Replay, role: str, *, team: str | None = None, copy: bool = False
) -> Iterator[Decision]:
    """Yield ``role``'s decisions in ``replay``, each with the battle as that player saw
    it just before choosing (see the module docstring).

    Raises:
        ReplayFileError: the log cannot be read into a battle (a line poke-env rejects).
    """
    points = [p for p in decision_points(replay.lines, replay.players) if p.role == role]
    own = own_teams(replay.lines, replay.gen)[role]
    feeder = _Feeder(replay, role, team, own)
    for point in points:
        feeder.feed_until(point.index)
        battle = feeder.battle
        if copy:
            battle = _Feeder(replay, role, team, own).rebuilt(point.index, point)
        else:
            feeder.request(point)
        yield Decision(point, battle, _order(battle, point.action, role))


class _Feeder:
    """Feeds one player's battle object, line by line."""

    def __init__(self, replay: Replay, role: str, team: str | None, own: dict[str, OwnPokemon]):
        self.replay, self.role, self.own = replay, role, own
        self.team_given = bool(team)
        self.battle = replay_battle(replay, role, team)
        self.stats = _team_stats(team, replay.gen) if team else {}
        self.position = 0
        self.details: dict[str, str] = {}
        rules = [line.lower() for line in replay.lines if line.startswith("|rule|")]
        self.tera_banned = any("terastal clause" in r for r in rules)
        self.dynamax_banned = any("dynamax clause" in r for r in rules)

    def rebuilt(self, index: int, point: DecisionPoint) -> ShowdownBattle:
        self.feed_until(index)
        self.request(point)
        return self.battle

    def feed_until(self, index: int) -> None:
        battle = self.battle
        lines = self.replay.lines
        while self.position < min(index, len(lines)):
            line = lines[self.position]
            self.position += 1
            parts = line.split("|")
            if len(parts) < 2 or parts[1] in _NOT_BATTLE:
                continue
            kind = parts[1]
            if kind in ("switch", "drag", "replace", "detailschange") and len(parts) > 3:
                self.details[f"{parts[2][:2]}: {parts[2].partition(': ')[2]}"] = parts[3]
            if kind in ("switch", "drag") and parts[2][:2] == self.role:
                self._regenerate()
            if kind == "player" and len(parts) < 5:
                continue  # a name-only |player| line (a player leaving or joining)
            try:
                if kind == "win":
                    battle.won_by(parts[2])
                elif kind == "tie":
                    battle.tied()
                else:
                    battle.parse_message(parts)
            except NotImplementedError:
                logger.debug("%s: line %r is not known to poke-env", self.replay.id, line)
            except (ValueError, KeyError, IndexError, AssertionError, RuntimeError) as exc:
                raise ReplayFileError(
                    f"{self.replay.source or self.replay.id}: line {self.position} {line!r} "
                    f"cannot be read into a battle ({type(exc).__name__}: {exc})."
                ) from exc

    def _regenerate(self) -> None:
        """Regenerator's unseen healing of the player's own Pokémon switching out."""
        mon = self.battle.active_pokemon
        if mon is None or mon.fainted:
            return
        ident = next((i for i, m in self.battle.team.items() if m is mon), "")
        own = self.own.get(ident)
        # poke-env heals a Pokémon whose ability it knows to be Regenerator itself.
        if own is not None and own.regenerator and mon.max_hp and mon.ability != "regenerator":
            mon._current_hp = min(mon.max_hp, mon.current_hp + round(mon.max_hp / 3))

    def request(self, point: DecisionPoint) -> None:
        """Give the battle the request the player had (made from the log)."""
        battle = self.battle
        entries = [self._entry(ident, mon) for ident, mon in self.own.items()]
        if self.team_given:  # the full team: its members the log never shows too
            shown = {e["ident"] for e in entries}
            entries += [self._known_entry(i, m) for i, m in battle.team.items() if i not in shown]
        entries = entries[:6]
        for entry in entries:  # the team's stats; a member never out yet is at full HP
            mon = battle.team.get(entry["ident"])
            stats = self.stats.get(to_id(mon.species)) if mon is not None else None
            if stats is None:
                continue
            entry["stats"] = {k: v for k, v in stats.items() if k != "hp"}
            if not mon.max_hp and not mon.fainted:
                entry["condition"] = f"{stats['hp']}/{stats['hp']}"
        request: dict[str, Any] = {
            "side": {"name": battle.player_username, "id": self.role, "pokemon": entries},
            "rqid": point.index,
        }
        if point.kind == "team_preview":
            request["teamPreview"] = True
        elif point.kind == "forced_switch":
            request["forceSwitch"] = [True]
            target = battle.team.get(point.action.pokemon) if point.action else None
            if target is not None and target.fainted:  # Revival Blessing
                for entry in entries:
                    entry["reviving"] = entry["active"]
        else:
            request["active"] = [self._active(entries, point.action)]
        try:
            battle.parse_request(request)
        except (ValueError, KeyError, AssertionError) as exc:
            raise ReplayFileError(
                f"{self.replay.source or self.replay.id}: {self.role}'s view before line "
                f"{point.index} cannot be built ({type(exc).__name__}: {exc})."
            ) from exc

    def _entry(self, ident: str, own: OwnPokemon) -> dict[str, Any]:
        mon = self.battle.team.get(ident)
        moves = list(mon.moves) if mon is not None and self.team_given else []
        for move in own.moves:
            if move not in moves:
                moves.append(move)
        if mon is None:
            condition, active = "100/100", False
        else:
            condition, active = _condition(mon), bool(mon.active)
        ability = own.ability or (mon.ability if mon is not None and mon.ability else "")
        return {
            "ident": ident, "details": self.details.get(ident, own.details),
            "condition": condition, "active": active, "moves": moves[:4],
            "baseAbility": ability, "ability": ability,
            "item": mon.item if mon is not None and mon.item is not None else "",
            "pokeball": "pokeball",
        }  # fmt: skip

    def _known_entry(self, ident: str, mon: Pokemon) -> dict[str, Any]:
        details = f"{mon.species}, L{mon.level}"
        return {
            "ident": ident, "details": details, "condition": _condition(mon),
            "active": bool(mon.active), "moves": list(mon.moves)[:4],
            "baseAbility": mon.ability or "", "item": mon.item or "", "pokeball": "pokeball",
        }  # fmt: skip

    def _active(self, entries: list[dict[str, Any]], action: ReplayAction | None) -> dict[str, Any]:
        battle = self.battle
        active = next((e for e in entries if e["active"]), None)
        known = active["moves"] if active else []
        if action is not None and (action.kind == "recharge" or action.move == "struggle"):
            known = [action.kind if action.kind == "recharge" else "struggle"]  # the only choice
        moves = [_move_entry(m, battle.active_pokemon) for m in known]
        entry: dict[str, Any] = {"moves": moves}
        gen = self.replay.gen
        if gen == 9 and not self.tera_banned and not battle.used_tera:
            mon = battle.active_pokemon
            tera = mon.tera_type.name.title() if mon is not None and mon.tera_type else "Normal"
            entry["canTerastallize"] = tera
        if gen == 8 and not self.dynamax_banned and not battle.used_dynamax:
            entry["canDynamax"] = True
        return entry


def _team_stats(team: str, gen: int) -> dict[str, dict[str, int]]:
    """Each team member's stats from its set (EVs, IVs, nature, level), by species id."""
    dex = load_dex(gen)
    out = {}
    for member in Teambuilder.parse_showdown_team(team):
        species = to_id(member.species or member.nickname or "")
        if species not in dex.species:
            continue
        out[species] = compute_stats(
            dex, species, int(member.level or 100), tuple(member.evs or (0,) * 6),
            tuple(member.ivs or (31,) * 6), member.nature or "",
        )  # fmt: skip
    return out


def _condition(mon: Pokemon) -> str:
    if mon.fainted:
        return "0 fnt"
    status = f" {mon.status.name.lower()}" if mon.status is not None else ""
    return f"{mon.current_hp}/{mon.max_hp}{status}"


def _order(battle: ShowdownBattle, action: ReplayAction | None, role: str) -> BattleOrder | None:
    """The action as a poke-env order in ``battle`` (None where it cannot be one)."""
    if action is None:
        return None
    if action.kind in ("switch", "team"):
        mon = battle.team.get(action.pokemon)
        return SingleBattleOrder(mon) if mon is not None else None
    if action.kind not in ("move", "recharge"):
        return None
    wanted = "recharge" if action.kind == "recharge" else action.move
    move = next((m for m in battle.available_moves if m.id == wanted), None)
    if move is None:
        move = _base_of_max_move(battle, action.move)
    if move is None:
        return None
    return SingleBattleOrder(move, terastallize=action.terastallize, dynamax=action.dynamax,
                             mega=action.mega, z_move=action.z_move)  # fmt: skip


def _base_of_max_move(battle: ShowdownBattle, max_move: str) -> Move | None:
    """The move that became ``max_move``, when only one of the known moves can."""
    try:
        entry = Move(max_move, gen=battle.gen).entry
    except (KeyError, ValueError):
        return None
    if not entry.get("isMax"):
        return None
    candidates = []
    for move in battle.available_moves:
        status = move.entry.get("category") == "Status"
        if (max_move == "maxguard" and status) or (
            not status and move.entry.get("type") == entry.get("type")
        ):
            candidates.append(move)
    return candidates[0] if len(candidates) == 1 else None


def _move_entry(move_id: str, mon: Pokemon | None) -> dict[str, Any]:
    """A request's entry for one of the active Pokémon's moves, with what the log shows of
    its PP and of what stops it: PP spent (poke-env counts each use, Pressure included),
    Encore (only the last move used), Taunt (no status move). Disable, Torment and a
    Choice lock the log does not show stay unknown: such a move is offered."""
    move = mon.moves.get(move_id) if mon is not None else None
    if move is None or move_id in ("recharge", "struggle"):
        return {"move": move_id, "id": move_id, "pp": 8, "maxpp": 8, "target": "normal",
                "disabled": False}  # fmt: skip
    disabled = move.current_pp <= 0
    if Effect.ENCORE in mon.effects and any(m.is_last_used for m in mon.moves.values()):
        disabled |= not move.is_last_used
    if Effect.TAUNT in mon.effects:
        disabled |= move.category == MoveCategory.STATUS
    return {"move": move_id, "id": move_id, "pp": move.current_pp, "maxpp": move.max_pp,
            "target": "normal", "disabled": disabled}  # fmt: skip
