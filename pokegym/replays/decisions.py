"""Where in a replay each player decided, and what they chose.

A replay holds no ``|request|``: the decisions are read from the log itself.

* **Team Preview** (``|teampreview``): each player chose a lead, the first Pokémon
  of theirs that switches in.
* **A turn's choice** (``|turn|N``): each player's first ``|move|`` (not one called by
  another move or an ability: no ``[from]`` tag, except the ``[from]lockedmove`` of a
  move the Pokémon is locked into) or ``|switch|`` of the turn, with the gimmick that
  came with it (``|-terastallize|``, ``|-start|...|Dynamax``, ``|-mega|``, ``|-zpower|``).
  A ``|cant|`` tells the move only when the log names it; recharging is its own choice.
  A player whose Pokémon faints before it acts, or whose battle ends first, made a
  choice the log does not show (the action is None).
* **A forced switch**: any later ``|switch|`` of that player in the same turn (after a
  faint, U-turn, Baton Pass, Eject Button...): the player chose what came in. Switches
  that come in together (both players replacing a fainted Pokémon) were chosen at the
  same moment. ``|drag|`` (Roar, Dragon Tail, Red Card) is nobody's choice.
* **Revival Blessing**: the ``|-heal|...|[from] move: Revival Blessing`` of the
  Pokémon the player chose to bring back (a forced switch among the fainted).
* **The end**: a forfeit (``|-message|NAME forfeited.``) or a loss to the battle timer
  (``|-message|NAME lost due to inactivity.``) is the choice of the player whose
  decision was open then.

Illusion: a switch that brought in a Zoroark in disguise names the disguise; the
``|replace|`` that ends the Illusion corrects the switch to the Zoroark.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pokegym.showdown.protocol import Message, parse_details, parse_message
from pokegym.world.data import to_id

__all__ = ["DecisionPoint", "Ending", "ReplayAction", "decision_points", "ending"]

ActionKind = Literal["move", "switch", "team", "recharge", "forfeit", "timeout"]
DecisionKind = Literal["team_preview", "turn", "forced_switch"]
ROLES = ("p1", "p2")


@dataclass(frozen=True)
class ReplayAction:
    """What a player did at a decision.

    Attributes:
        kind: ``move``, ``switch``, ``team`` (the lead at Team Preview), ``recharge``,
            ``forfeit`` or ``timeout`` (lost to the battle timer).
        move: the move's id as the log names it (``move``); a Max Move's id when the
            Pokémon is Dynamaxed.
        pokemon: the Pokémon switched in or led with, as ``p1: Name`` (``switch``, ``team``).
        species: that Pokémon's species as its details show it.
        terastallize, dynamax, mega, z_move: the gimmick that came with the move.
    """

    kind: ActionKind
    move: str = ""
    pokemon: str = ""
    species: str = ""
    terastallize: bool = False
    dynamax: bool = False
    mega: bool = False
    z_move: bool = False

    @property
    def label(self) -> str:
        """``move:<id>[:tera|:dynamax|:mega|:z]``, ``switch:<species>``, ``team:<species>``,
        ``recharge``, ``forfeit`` or ``timeout``."""
        if self.kind == "move":
            flags = [f for f, on in (("tera", self.terastallize), ("dynamax", self.dynamax),
                                     ("mega", self.mega), ("z", self.z_move)) if on]  # fmt: skip
            return ":".join(["move", self.move, *flags])
        if self.kind in ("switch", "team"):
            return f"{self.kind}:{to_id(self.species)}"
        return self.kind


@dataclass(frozen=True)
class DecisionPoint:
    """One decision of one player.

    Attributes:
        index: the decision was taken before line ``index`` of the log (every earlier
            line is what the battle showed by then).
        role: ``p1`` or ``p2``.
        kind: ``team_preview``, ``turn`` or ``forced_switch``.
        turn: the turn it belongs to (0 before the first turn).
        action: what the player did (None: the log does not show it).
        opponent_action: what the other player did at the same moment (None: it had no
            decision then, or the log does not show it).
    """

    index: int
    role: str
    kind: DecisionKind
    turn: int
    action: ReplayAction | None
    opponent_action: ReplayAction | None = None


@dataclass(frozen=True)
class Ending:
    """How the battle ended: ``winner`` (a player's name, "" for a tie or no result)
    and ``reason``: ``normal``, ``forfeit``, ``timeout``, ``tie`` or ``unfinished``."""

    winner: str
    reason: str
    loser_role: str = ""


def _role(ident: str) -> str:
    return ident[:2] if ident[:2] in ROLES else ""


def _ident(text: str) -> str:
    """``p1a: Name`` -> ``p1: Name``."""
    role, _, name = text.partition(": ")
    return f"{role[:2]}: {name}"


class _Scan:
    """The state of one pass over the log."""

    def __init__(self, players: tuple[str, str]):
        self.players = players
        self.points: list[dict] = []
        self.turn = 0
        self.open: dict[str, dict | None] = {"p1": None, "p2": None}  # turn choices
        self.gimmick: dict[str, dict[str, bool]] = {"p1": {}, "p2": {}}
        self.acted = False  # a move has been made this turn: later switches are forced
        self.preview: dict[str, dict] = {}
        self.switch_group: list[dict] = []
        self.last_switch: dict[str, dict] = {}
        self.replacing: dict[str, bool] = {}  # a player's active fainted, not yet replaced

    def point(self, index: int, role: str, kind: DecisionKind) -> dict:
        entry = {"index": index, "role": role, "kind": kind, "turn": self.turn, "action": None}
        self.points.append(entry)
        return entry

    def close_turn(self) -> None:
        self.open = {"p1": None, "p2": None}
        self.gimmick = {"p1": {}, "p2": {}}
        self.switch_group = []

    # -- lines
    def on_turn(self, index: int, m: Message) -> None:
        self.close_turn()
        self.turn = int(m.args[0]) if m.args and m.args[0].isdigit() else self.turn + 1
        self.acted = False
        for role in ROLES:
            self.open[role] = self.point(index + 1, role, "turn")

    def on_move(self, m: Message) -> None:
        role = _role(m.args[0]) if m.args else ""
        self.switch_group = []
        if not role or len(m.args) < 2:
            return
        called = [t for t in m.tags if t.startswith("[from]")]
        if called and not all(to_id(t[6:]) == "lockedmove" for t in called):
            return
        if to_id(m.args[1]) != "pursuit":
            self.acted = True
        entry = self.open[role]
        if entry is not None:
            flags = self.gimmick[role]
            entry["action"] = ReplayAction("move", move=to_id(m.args[1]),
                                           terastallize=flags.get("tera", False),
                                           dynamax=flags.get("dynamax", False),
                                           mega=flags.get("mega", False),
                                           z_move=flags.get("z", False))  # fmt: skip
            self.open[role] = None

    def on_cant(self, m: Message) -> None:
        role = _role(m.args[0]) if m.args else ""
        self.acted = True
        self.switch_group = []
        entry = self.open.get(role)
        if entry is None:
            return
        reason = to_id(m.args[1]) if len(m.args) > 1 else ""
        if reason == "recharge":
            entry["action"] = ReplayAction("recharge")
        elif len(m.args) > 2 and m.args[2]:
            entry["action"] = ReplayAction("move", move=to_id(m.args[2]))
        self.open[role] = None

    def on_switch(self, index: int, m: Message) -> None:
        role = _role(m.args[0]) if m.args else ""
        if not role:
            return
        species = parse_details(m.args[1]).species if len(m.args) > 1 else ""
        action = ReplayAction("switch", pokemon=_ident(m.args[0]), species=species)
        preview = self.preview.pop(role, None)
        if preview is not None:  # the lead chosen at Team Preview
            preview["action"] = replace(action, kind="team")
            self.last_switch[role] = preview
            return
        if self.turn == 0:
            return  # the leads of a format without Team Preview: nobody chose them
        entry = self.open.get(role)
        if entry is not None and not self.acted:
            entry["action"] = action
            self.open[role] = None
            self.last_switch[role] = entry
            return
        self.open[role] = None  # the turn's choice was never shown (it fainted first)
        # Players replacing fainted Pokémon at the end of a turn choose at the same moment;
        # a switch in the middle of a turn (U-turn, Eject Button) is chosen alone.
        replacing = self.replacing.pop(role, False)
        if not (replacing and self.switch_group):
            self.switch_group = []
        group_index = self.switch_group[0]["index"] if self.switch_group else index
        entry = self.point(group_index, role, "forced_switch")
        entry["action"] = action
        if replacing:
            self.switch_group.append(entry)
        self.last_switch[role] = entry

    def on_replace(self, m: Message) -> None:
        role = _role(m.args[0]) if m.args else ""
        entry = self.last_switch.get(role)
        if entry is not None and entry["action"] is not None and len(m.args) > 1:
            entry["action"] = replace(entry["action"], pokemon=_ident(m.args[0]),
                                      species=parse_details(m.args[1]).species)  # fmt: skip

    def on_gimmick(self, m: Message) -> None:
        role = _role(m.args[0]) if m.args else ""
        if not role:
            return
        kind = {"-terastallize": "tera", "-mega": "mega", "-zpower": "z"}.get(m.kind)
        if m.kind == "-start" and len(m.args) > 1 and to_id(m.args[1]) == "dynamax":
            kind = "dynamax"
        if kind is not None and self.open.get(role) is not None:
            self.gimmick[role][kind] = True

    def on_revival(self, index: int, m: Message) -> None:
        """Revival Blessing: the player chose which fainted Pokémon comes back."""
        role = _role(m.args[0]) if m.args else ""
        if role:
            name = _ident(m.args[0])
            entry = self.point(index, role, "forced_switch")
            entry["action"] = ReplayAction("switch", pokemon=name, species=name[4:])

    def on_faint(self, m: Message) -> None:
        role = _role(m.args[0]) if m.args else ""
        if role:
            self.open[role] = None
            self.replacing[role] = True
        self.switch_group = []

    def on_message(self, m: Message) -> None:
        text = m.args[0] if m.args else ""
        for role, name in zip(ROLES, self.players, strict=True):
            if text in (f"{name} forfeited.", f"{name} lost due to inactivity."):
                kind = "forfeit" if text.endswith("forfeited.") else "timeout"
                entry = self.open.get(role) or self.point(-1, role, "turn")
                entry["action"] = ReplayAction(kind)  # type: ignore[arg-type]
                self.open[role] = None


def decision_points(
    lines: tuple[str, ...] | list[str], players: tuple[str, str]
) -> list[DecisionPoint]:
    """Every decision of both players in the log, in order (see the module docstring)."""
    scan = _Scan(players)
    end = len(lines)
    for index, line in enumerate(lines):
        m = parse_message(line)
        if m is None:
            continue
        kind = m.kind
        if kind == "teampreview":
            for role in ROLES:
                scan.preview[role] = scan.point(index + 1, role, "team_preview")
        elif kind == "turn":
            scan.on_turn(index, m)
        elif kind == "move":
            scan.on_move(m)
        elif kind == "cant":
            scan.on_cant(m)
        elif kind == "switch":
            scan.on_switch(index, m)
        elif kind == "replace":
            scan.on_replace(m)
        elif kind in ("-terastallize", "-mega", "-zpower", "-start"):
            scan.on_gimmick(m)
        elif kind == "faint":
            scan.on_faint(m)
        elif kind == "-heal" and any(to_id(t) == "frommoverevivalblessing" for t in m.tags):
            scan.on_revival(index, m)
        elif kind in ("-message", "message"):
            scan.on_message(m)
        elif kind == "upkeep":
            scan.acted = True
        elif kind in ("win", "tie"):
            end = index
            break
    for entry in scan.points:
        if entry["index"] < 0:  # a forfeit with no decision open: at the end
            entry["index"] = end
    return _pair(scan.points)


def _pair(points: list[dict]) -> list[DecisionPoint]:
    """Each decision with the other player's action at the same moment."""
    by_moment: dict[tuple[int, str], dict[str, dict]] = {}
    for entry in points:
        by_moment.setdefault((entry["index"], entry["kind"]), {})[entry["role"]] = entry
    out = []
    for entry in sorted(points, key=lambda e: (e["index"], e["role"])):
        other = by_moment[(entry["index"], entry["kind"])].get(
            "p2" if entry["role"] == "p1" else "p1"
        )
        out.append(
            DecisionPoint(
                index=entry["index"], role=entry["role"], kind=entry["kind"], turn=entry["turn"],
                action=entry["action"], opponent_action=other["action"] if other else None,
            )
        )  # fmt: skip
    return out


def ending(lines: tuple[str, ...] | list[str], players: tuple[str, str]) -> Ending:
    """How the battle in ``lines`` ended (see :class:`Ending`)."""
    reason, loser = "normal", ""
    for line in lines:
        m = parse_message(line)
        if m is None:
            continue
        if m.kind in ("-message", "message") and m.args:
            for role, name in zip(ROLES, players, strict=True):
                if m.args[0] == f"{name} forfeited.":
                    reason, loser = "forfeit", role
                elif m.args[0] == f"{name} lost due to inactivity.":
                    reason, loser = "timeout", role
        elif m.kind == "win":
            return Ending(m.args[0] if m.args else "", reason, loser)
        elif m.kind == "tie":
            return Ending("", "tie")
    return Ending("", "unfinished", loser)
