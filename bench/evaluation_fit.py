"""Does poke-engine's evaluation know who wins? Its terms fitted to how recorded battles ended.

The ``engine`` agent's search scores its leaves with poke-engine's hand-written
evaluation: for each side, points for each Pokémon alive (30), its HP (100 at full),
its item (10), its status (−25 for paralysis, ...), the active Pokémon's stat boosts,
the hazards on its side, Leech Seed, Substitute and confusion, the screens and Tailwind
(points for each turn they have left), and a used Terastallization (−75); side two's
points are subtracted. Each term's weight is an option of the agent
(``engine:alive_value=...``, relative to the released evaluation, 1.0). The burn rule is
approximated from what the log shows: −25 for each physical move among those seen
(scaled to four moves; two if none is seen), halved where the species' base Special
Attack is above its Attack.

This benchmark reads the battles of ``pokegym compare --replays`` runs: each battle's
protocol log is fed into a poke-env battle seen from p1 (as ``pokegym replay`` does) and
at the start of every turn (the leads before the first) each term is computed for both
sides from what the log shows, with the released weights inside the term (Pokémon not
yet seen count as alive, at full HP, healthy, holding an item). Two logistic models of
"p1 wins" are fitted, symmetric in the sides (every turn is also counted from p2's side):

- ``released``: the released evaluation's score (p1 − p2) with one fitted slope;
- ``per term``: one coefficient per term. A term's coefficient over the released
  model's slope is the multiplier of its option that the battles' outcomes favour.

Both also carry a column per agent of the runs (+1 when it played p1, −1 when it played
p2): the stronger agent wins more from the same positions, and without these columns
whatever it does more often (a Tera, hazards of its own) would pass for a term's worth.

Both are judged on battles they were not fitted on (5 folds by battle: log loss); the
multipliers carry a bootstrap interval over battles (the turns of one battle are not
independent). Outcomes follow from who played: fitted on an agent's battles against
some opponents, the multipliers say what predicts winning in those battles, which is not
the same as what a search should value; play them to know.

    pokegym bench evaluation_fit runs/eng8/base-sh-s440 runs/eng8/base-aby-s340 \\
        --json runs/evaluation_fit.json
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle, Effect, MoveCategory, Pokemon, SideCondition, Status

from bench.paired import _battles
from pokegym.web.replay import ReplayError, read_replay, replay_battle, turn_starts
from policies.core.engine_state import TIMED_CONDITIONS, turns_left
from train.metrics import log_loss

# The terms, by the engine agent's option names, in the order of the feature columns.
TERMS = ("boost_value", "alive_value", "hp_value", "item_value", "status_value",
         "hazard_value", "volatile_value", "condition_value", "tera_value")  # fmt: skip
BOOST_MULTIPLIER = {6: 3.3, 5: 3.15, 4: 3.0, 3: 2.5, 2: 2.0, 1: 1.0, 0: 0.0}
BOOST_POINTS = {"atk": 30.0, "def": 15.0, "spa": 30.0, "spd": 15.0, "spe": 30.0}
STATUS_POINTS = {Status.FRZ: -40.0, Status.SLP: -25.0, Status.PAR: -25.0, Status.TOX: -30.0,
                 Status.PSN: -10.0}  # fmt: skip
POISON_ABILITIES = {"poisonheal": 15.0, "guts": 10.0, "marvelscale": 10.0, "quickfeet": 10.0,
                    "toxicboost": 10.0, "magicguard": 10.0}  # fmt: skip
# Points a turn left (the engine counts a screen's turns left: Reflect with 5 turns to go
# is 100 points).
CONDITION_POINTS = {SideCondition.REFLECT: 20.0, SideCondition.LIGHT_SCREEN: 20.0,
                    SideCondition.AURORA_VEIL: 40.0, SideCondition.SAFEGUARD: 5.0,
                    SideCondition.TAILWIND: 7.0}  # fmt: skip
VOLATILE_POINTS = {Effect.LEECH_SEED: -30.0, Effect.SUBSTITUTE: 40.0, Effect.CONFUSION: -20.0}
FOLDS = 5  # held-out log loss: battles in 5 folds
logging.getLogger("pokegym.replay").setLevel(logging.ERROR)


def boost_points(boosts: dict[str, int]) -> float:
    """The released evaluation's points for an active Pokémon's stat boosts."""
    total = 0.0
    for stat, points in BOOST_POINTS.items():
        stage = max(-6, min(6, boosts.get(stat, 0)))
        total += points * (BOOST_MULTIPLIER[stage] if stage >= 0 else -BOOST_MULTIPLIER[-stage])
    return total


def status_points(mon: Pokemon) -> float:
    status = mon.status
    if status is None:
        return 0.0
    ability = mon.ability or ""
    if status in (Status.PSN, Status.TOX) and ability in POISON_ABILITIES:
        return POISON_ABILITIES[ability]
    if status == Status.BRN:
        if ability in ("guts", "marvelscale", "quickfeet"):
            return 50.0
        known = list(mon.moves.values())
        physical = sum(move.category == MoveCategory.PHYSICAL for move in known)
        share = physical / len(known) * 4 if known else 2.0  # unknown moves: half physical
        stats = mon.base_stats
        if stats.get("spa", 0) > stats.get("atk", 0):
            share /= 2
        return -25.0 * share
    return STATUS_POINTS.get(status, 0.0)


def _grounded(mon: Pokemon) -> bool:
    if mon.item == "ironball":
        return True
    airborne = "flying" in {t.name.lower() for t in mon.types} or mon.ability == "levitate"
    return not airborne and mon.item != "airballoon"


def hazard_points(mon: Pokemon | None, conditions: dict[SideCondition, int]) -> float:
    """The hazards' points for one Pokémon of a side (None: one not seen yet)."""
    if mon is not None and mon.item == "heavydutyboots":
        return 0.0
    grounded = mon is None or _grounded(mon)
    points = 0.0
    if mon is None or mon.ability != "magicguard":
        points += -10.0 * (SideCondition.STEALTH_ROCK in conditions)
        if grounded:
            points += -7.0 * conditions.get(SideCondition.SPIKES, 0)
            points += -7.0 * conditions.get(SideCondition.TOXIC_SPIKES, 0)
    if grounded:
        points += -25.0 * (SideCondition.STICKY_WEB in conditions)
    return points


def side_terms(team: dict[str, Pokemon], size: int, active: Pokemon | None,
               conditions: dict[SideCondition, int], used_tera: bool,
               turn: int) -> np.ndarray:  # fmt: skip
    """One side's points per term (in :data:`TERMS`' order), released weights inside."""
    terms = np.zeros(len(TERMS))
    alive = [mon for mon in team.values() if not mon.fainted]
    unseen = max(0, size - len(team))
    for mon in alive:
        hp = 100.0 * mon.current_hp_fraction
        status = status_points(mon)
        item = 0.0 if mon.item in ("", None) else 10.0
        # The released evaluation floors HP, status and item together at 0.
        if hp + status + item < 0:
            status = -(hp + item)
        terms[2] += hp
        terms[3] += item
        terms[4] += status
        terms[5] += hazard_points(mon, conditions)
    terms[1] = 30.0 * (len(alive) + unseen)
    terms[2] += 100.0 * unseen
    terms[3] += 10.0 * unseen
    terms[5] += unseen * hazard_points(None, conditions)
    if active is not None and not active.fainted:
        terms[0] = boost_points(active.boosts)
        terms[6] = sum(v for effect, v in VOLATILE_POINTS.items() if effect in active.effects)
    terms[7] = sum(
        points * turns_left(conditions[c], turn, TIMED_CONDITIONS[c][1])
        for c, points in CONDITION_POINTS.items()
        if c in conditions
    )
    terms[8] = -75.0 * used_tera
    return terms


def turn_terms(battle: AbstractBattle) -> np.ndarray:
    """p1's terms minus p2's at this point of the battle (``battle`` seen from p1)."""
    sizes = battle._team_size  # poke-env keeps |teamsize| only there
    ours = side_terms(battle.team, sizes.get("p1", 6), battle.active_pokemon,
                      battle.side_conditions, battle.used_tera, battle.turn)  # fmt: skip
    theirs = side_terms(battle.opponent_team, sizes.get("p2", 6),
                        battle.opponent_active_pokemon, battle.opponent_side_conditions,
                        battle.opponent_used_tera, battle.turn)  # fmt: skip
    return ours - theirs


def battle_rows(replay_path: str | Path) -> tuple[np.ndarray, float] | None:
    """Every turn start's terms (p1 − p2) and whether p1 won (None: a tie, no result)."""
    replay = read_replay(replay_path)
    battle = replay_battle(replay)
    rows, result = [], None
    for result in turn_starts(replay, battle):  # noqa: B007 - the last one is the result
        rows.append(turn_terms(battle))
    rows = rows[:-1]  # the end, where the result is plain, is not a turn to predict
    p1, p2 = (f"{player} won." for player in replay.players)
    if result not in (p1, p2) or not rows:
        return None
    return np.array(rows), float(result == p1)


@dataclass(frozen=True)
class Turns:
    """The turns of the battles read: ``terms`` (p1 − p2, one column per :data:`TERMS`),
    ``players`` (+1 where the agent of that column played p1, −1 where it played p2; one
    column per agent but the first, so that how strong each agent is does not pass for a
    term's worth), whether p1 won, and each turn's battle number."""

    terms: np.ndarray
    players: np.ndarray
    won: np.ndarray
    battle: np.ndarray
    agents: tuple[str, ...]

    def take(self, rows: np.ndarray) -> Turns:
        return Turns(self.terms[rows], self.players[rows], self.won[rows], self.battle[rows],
                     self.agents)  # fmt: skip


def collect(folders: Iterable[Path]) -> Turns:
    """The turns of every battle with a replay and a winner in the given runs."""
    found: list[tuple[np.ndarray, float, str, str]] = []
    for folder in folders:
        for record in _battles(folder):
            replay = record.get("replay")
            if not replay:
                continue
            try:
                got = battle_rows(replay)
            except ReplayError:
                continue
            if got is not None:
                found.append((got[0], got[1], str(record.get("p1")), str(record.get("p2"))))
    if len(found) < FOLDS:
        raise SystemExit(
            f"{len(found)} battle(s) with a replay and a winner in the given runs; the fit "
            f"needs {FOLDS} at least (run pokegym compare with --replays)"
        )
    agents = tuple(sorted({name for _, _, p1, p2 in found for name in (p1, p2)}))
    column = {name: k - 1 for k, name in enumerate(agents)}  # the first agent: no column
    players = []
    for rows, _, p1, p2 in found:
        sides = np.zeros((len(rows), len(agents) - 1))
        for name, sign in ((p1, 1.0), (p2, -1.0)):
            if column[name] >= 0:
                sides[:, column[name]] += sign
        players.append(sides)
    return Turns(
        terms=np.concatenate([rows for rows, _, _, _ in found]),
        players=np.concatenate(players),
        won=np.concatenate([np.full(len(rows), won) for rows, won, _, _ in found]),
        battle=np.concatenate([np.full(len(f[0]), k) for k, f in enumerate(found)]),
        agents=agents,
    )


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-6, steps: int = 50) -> np.ndarray:
    """Coefficients of P(y) = σ(x·w), no intercept, symmetric in the sides: each row is
    also counted as (−x, 1 − y). Newton's method with a small ridge."""
    xs = np.vstack([x, -x])
    ys = np.concatenate([y, 1.0 - y])
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = _sigmoid(xs @ w)
        gradient = xs.T @ (p - ys) / len(ys) + l2 * w
        hessian = (xs * (p * (1 - p))[:, None]).T @ xs / len(ys) + l2 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w


def _released(turns: Turns) -> np.ndarray:
    return np.column_stack([turns.terms.sum(axis=1), turns.players])


def _per_term(turns: Turns) -> np.ndarray:
    return np.column_stack([turns.terms, turns.players])


def slope(turns: Turns) -> float:
    """The released evaluation's fitted slope (a point's weight in the log-odds)."""
    return float(fit_logistic(_released(turns), turns.won)[0])


def multipliers(turns: Turns) -> np.ndarray:
    """Each term's fitted coefficient over the released evaluation's fitted slope (NaN
    where that slope is not positive: the released score does not predict the winner)."""
    released = slope(turns)
    if not released > 1e-9:
        return np.full(len(TERMS), np.nan)
    return fit_logistic(_per_term(turns), turns.won)[: len(TERMS)] / released


def held_out_log_loss(turns: Turns) -> tuple[float, float]:
    """(released with its slope, per term): log loss on battles left out of the fit."""
    fold = turns.battle % FOLDS
    losses: list[tuple[float, float]] = []
    for k in range(FOLDS):
        train, test = turns.take(fold != k), turns.take(fold == k)
        released = _sigmoid(_released(test) @ fit_logistic(_released(train), train.won))
        per_term = _sigmoid(_per_term(test) @ fit_logistic(_per_term(train), train.won))
        losses.append((log_loss(released, test.won), log_loss(per_term, test.won)))
    mean = np.mean(losses, axis=0)
    return float(mean[0]), float(mean[1])


def bootstrap(turns: Turns, draws: int, seed: int) -> np.ndarray:
    """The multipliers refitted on battles drawn with replacement: (draws, terms)."""
    rng = np.random.default_rng(seed)
    rows_of = [np.flatnonzero(turns.battle == g) for g in range(int(turns.battle.max()) + 1)]
    out = []
    for _ in range(draws):
        picked = rng.integers(0, len(rows_of), len(rows_of))
        out.append(multipliers(turns.take(np.concatenate([rows_of[g] for g in picked]))))
    return np.array(out)


def report(turns: Turns, draws: int, seed: int) -> dict[str, Any]:
    fitted = multipliers(turns)
    spread = bootstrap(turns, draws, seed)
    released, per_term = held_out_log_loss(turns)
    present = np.abs(turns.terms).sum(axis=0) > 0
    first_turns = np.unique(turns.battle, return_index=True)[1]
    return {
        "battles": int(turns.battle.max()) + 1,
        "turns": len(turns.won),
        "agents": list(turns.agents),
        "p1_won": float(turns.won[first_turns].mean()),
        "held_out_log_loss": {
            "released": released,
            "per_term": per_term,
            "coin": float(np.log(2)),
        },
        "slope": slope(turns),
        "multipliers": {
            term: {
                "fitted": float(fitted[i]),
                "low": float(np.nanpercentile(spread[:, i], 2.5)),
                "high": float(np.nanpercentile(spread[:, i], 97.5)),
                "seen": bool(present[i]),
            }
            for i, term in enumerate(TERMS)
        },
    }


def spec(result: dict[str, Any]) -> str:
    """The fitted multipliers as the engine agent's options (terms never seen left out)."""
    parts = []
    for term, m in result["multipliers"].items():
        if m["seen"] and np.isfinite(m["fitted"]):
            value = f"{max(0.0, m['fitted']):.2f}"
            parts.append(f"{term}={value}")
            if term == "boost_value":  # the term is both sides' boosts: one weight for both
                parts.append(f"opponent_boost_value={value}")
    return "engine:" + ",".join(parts)


def table(result: dict[str, Any]) -> str:
    loss = result["held_out_log_loss"]
    lines = [
        f"{result['battles']} battles, {result['turns']} turns (p1 won "
        f"{100 * result['p1_won']:.1f} %; agents: {', '.join(result['agents'])}); the "
        f"released evaluation's slope {result['slope']:.4f} a point",
        f"log loss on held-out battles: released {loss['released']:.4f}, per term "
        f"{loss['per_term']:.4f} (a coin: {loss['coin']:.4f})",
        "",
        "| term (option) | fitted multiplier [95 % bootstrap] |",
        "|---|---|",
    ]
    for term, m in result["multipliers"].items():
        if not m["seen"]:
            lines.append(f"| `{term}` | never seen in these battles |")
            continue
        lines.append(f"| `{term}` | {m['fitted']:.2f} [{m['low']:.2f}, {m['high']:.2f}] |")
    lines += ["", spec(result)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "runs",
        nargs="+",
        type=Path,
        help="pokegym compare --replays output folders (or battles.jsonl)",
    )
    parser.add_argument("--draws", type=int, default=200, help="bootstrap draws")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the result here too")
    args = parser.parse_args(argv)
    if args.draws < 2:
        parser.error("--draws is the number of bootstrap draws (2 or more)")
    result = report(collect(args.runs), args.draws, args.seed)
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
