"""Does a replay, seen from each side, show what the players saw while they played?

:func:`check_agreement` plays battles on the embedded simulator and keeps, at every
decision of either player, what that player's live battle object showed (fed with the
simulator's own messages and requests). It then reads each battle's spectator log as a
replay (:mod:`pokegym.replays.files`), replays it from each side
(:func:`~pokegym.replays.view.player_decisions`) and compares the two at the same
decisions, Pokémon by Pokémon:

* the opponent's Pokémon: the same Pokémon seen, and for each the same species, HP
  fraction, status, fainted or not, and revealed moves;
* the player's own Pokémon: those the replay knows are on the live team with the same
  species, status and fainted or not, HP within one percentage point (a replay keeps
  HP as percentages; the live player sees exact HP), and moves the live team has.

``pokegym replays check --battles 50`` runs it and prints the agreement.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pokegym.replays.files import Replay, replay_from_log, replay_html, replay_json
from pokegym.replays.view import player_decisions

__all__ = ["AgreementConfig", "AgreementReport", "check_agreement", "compare_views", "snapshot"]

ROLES = ("p1", "p2")


@dataclass(frozen=True)
class AgreementConfig:
    """One agreement check."""

    battle_format: str = "gen9randombattle"
    """Showdown format id (team formats use the built-in team pool)."""
    battles: int = 50
    """Battles to play and compare."""
    seed: int = 0
    """Battle k's seeds derive from (seed, k)."""
    agents: tuple[str, str] = ("max_power", "random")
    """Agent specs of p1 and p2."""
    max_turns: int = 300
    """Battles are stopped (and still compared) at this turn."""
    out: str | None = None
    """Write each battle's replay here as .log, .json and .html (None: keep nothing)."""


@dataclass
class AgreementReport:
    """What was compared and where the views differed."""

    battles: int = 0
    decisions: int = 0
    agreeing: int = 0
    missing: int = 0  # decisions of a live player that the replay does not show
    extra: int = 0  # decisions the replay shows that no live player had
    differences: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agreeing / self.decisions if self.decisions else 0.0

    def summary(self) -> str:
        lines = [
            f"{self.battles} battles, {self.decisions} decisions compared (both sides): "
            f"{self.agreeing} agree ({self.rate:.2%}); {self.missing} live decisions the "
            f"replay does not show, {self.extra} replay decisions no live player had."
        ]
        for what, count in self.differences.most_common():
            lines.append(f"  {count:>5}  {what}")
        lines += [f"  e.g. {example}" for example in self.examples[:5]]
        return "\n".join(lines)


def snapshot(battle: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """What a battle object shows of both teams: per Pokémon identifier, its species,
    HP fraction, status, fainted or not and moves."""

    def mons(team: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {
            ident: {
                "species": mon.species,
                "hp": float(mon.current_hp_fraction),
                "status": mon.status.name if mon.status is not None else "",
                "fainted": bool(mon.fainted),
                "moves": frozenset(mon.moves),
            }
            for ident, mon in team.items()
        }

    return {"team": mons(battle.team), "opponent": mons(battle.opponent_team)}


def compare_views(live: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """The differences between a live player's :func:`snapshot` and the replay's."""
    found: list[str] = []
    theirs_live, theirs = live["opponent"], replayed["opponent"]
    if set(theirs_live) != set(theirs):
        found.append("opponent Pokémon seen")
    for ident in set(theirs_live) & set(theirs):
        a, b = theirs_live[ident], theirs[ident]
        for key in ("species", "status", "fainted", "moves"):
            if a[key] != b[key]:
                found.append(f"opponent {key}")
        if abs(a["hp"] - b["hp"]) > 1e-9:
            found.append("opponent hp")
    ours_live, ours = live["team"], replayed["team"]
    if not set(ours) <= set(ours_live):
        found.append("own Pokémon known")
    for ident in set(ours_live) & set(ours):
        a, b = ours_live[ident], ours[ident]
        for key in ("species", "status", "fainted"):
            if a[key] != b[key]:
                found.append(f"own {key}")
        if abs(a["hp"] - b["hp"]) > 0.01 + 1e-9:
            found.append("own hp")
        if not b["moves"] <= a["moves"]:
            found.append("own moves")
    return found


def _decision_kind(battle: Any) -> str:
    if battle.teampreview:
        return "team_preview"
    return "forced_switch" if battle.force_switch else "turn"


# local imports: the battle session, the agents and the simulator load only when the check runs
def _play(sim: Any, fmt: Any, config: AgreementConfig, index: int, agents: Any) -> tuple[str, dict]:
    """Play battle ``index``; returns its spectator log and each live decision's snapshot."""
    from pokegym.actions import ActionCodec
    from pokegym.backends.sim import SimBattleSession
    from pokegym.env import opponent_choice
    from pokegym.teams import builtin_pool

    state = np.random.SeedSequence([config.seed, index]).generate_state(4, dtype=np.uint64)
    seeds = [int(x) >> 2 for x in state]
    rng = np.random.default_rng(seeds[3])
    teams: list[str | None] = [None, None]
    if not fmt.random_teams:
        pool = builtin_pool(fmt.id)
        teams = [pool.sample(rng).text, pool.sample(rng).text]
    codec = ActionCodec(fmt.gimmick)
    for agent in agents:
        seed_fn = getattr(agent, "seed", None)
        if callable(seed_fn):
            seed_fn(int(rng.integers(2**63 - 1)))
    session = SimBattleSession(sim, fmt, teams=teams, seeds=(seeds[0], seeds[1], seeds[2]),
                               log="spectator")  # fmt: skip
    live: dict[tuple[str, int, str, int], dict] = {}
    counts: Counter[tuple[str, int, str]] = Counter()
    recorded, rejected = [-1, -1], [0, 0]
    try:
        for _ in range(20_000):
            if session.finished or session.battles[0].turn >= config.max_turns:
                break
            choices = {}
            for side in (0, 1):
                if not session.needs_choice(side):
                    continue
                battle = session.battles[side]
                view = session.views[side]
                asked_again = view.rejections != rejected[side]  # after a rejected choice
                rejected[side] = view.rejections
                if recorded[side] != view.request_count and not asked_again:
                    recorded[side] = view.request_count
                    key = (ROLES[side], battle.turn, _decision_kind(battle))
                    live[(*key, counts[key])] = snapshot(battle)
                    counts[key] += 1
                choices[side] = opponent_choice(agents[side], battle, codec, rng)
            session.choose(choices)
        log = session.replay_log() or ""
    finally:
        session.close()
    return log, live


def _replayed(replay: Replay) -> dict[tuple[str, int, str, int], dict]:
    out: dict[tuple[str, int, str, int], dict] = {}
    counts: Counter[tuple[str, int, str]] = Counter()
    for role in ROLES:
        for decision in player_decisions(replay, role):
            point = decision.point
            if point.action is not None and point.action.kind in ("forfeit", "timeout"):
                continue
            key = (role, point.turn, point.kind)
            out[(*key, counts[key])] = snapshot(decision.battle)
            counts[key] += 1
    return out


def check_agreement(config: AgreementConfig, simulator: Any = None) -> AgreementReport:
    """Play ``config.battles`` battles and compare each side's live view with the
    replay's (see the module docstring)."""
    from pokegym.agents import make_agent
    from pokegym.formats import resolve_format
    from pokegym.showdown.simulator import Simulator

    own_sim = simulator is None
    sim = simulator or Simulator()
    report = AgreementReport()
    out = Path(config.out) if config.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    try:
        sim.ensure_running()
        fmt = resolve_format(config.battle_format, simulator=sim)
        agents = (make_agent(config.agents[0]), make_agent(config.agents[1]))
        for index in range(config.battles):
            log, live = _play(sim, fmt, config, index, agents)
            replay = replay_from_log(log, replay_id=f"{fmt.id}-{index}", format_id=fmt.id,
                                     source=f"battle {index}")  # fmt: skip
            if out is not None:
                report.written += _write(out, replay)
            _compare(report, index, live, _replayed(replay))
    finally:
        if own_sim:
            sim.close()
    return report


def _compare(report: AgreementReport, index: int, live: dict, replayed: dict) -> None:
    report.battles += 1
    report.missing += len(set(live) - set(replayed))
    report.extra += len(set(replayed) - set(live))
    for key in sorted(set(live) & set(replayed)):
        report.decisions += 1
        found = compare_views(live[key], replayed[key])
        if not found:
            report.agreeing += 1
            continue
        report.differences.update(set(found))
        if len(report.examples) < 20:
            report.examples.append(f"battle {index}, {key}: {', '.join(sorted(set(found)))}")


def _write(folder: Path, replay: Replay) -> list[str]:
    paths = []
    for suffix, text in ((".log", replay.log + "\n"), (".json", replay_json(replay)),
                         (".html", replay_html(replay))):  # fmt: skip
        path = folder / f"{replay.id}{suffix}"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths
