"""``pokegym bench worldmodel``: the transition model against Showdown's simulator.

Battles are played on the embedded simulator by two scripted agents (random and
max power, sides alternating). Before every ordinary turn (both sides choose a move
or a switch) the world-model state is built from player 1's battle object, the turn
is predicted with the true actions of both sides, and after Showdown has played it
the prediction is compared with what happened to the two Pokémon that were active
when the turn began:

* HP error: |predicted − actual| remaining HP, as a fraction of max HP (exact HP
  on both sides, read from each player's own view);
* faint accuracy: predicted fainted / not fainted against the truth.

Two settings: ``true`` sets (both teams known: the opponent's side is built from
Showdown's own sets of the battle) and ``priors`` (the opponent's sets hidden and
determinized by the modal set of the priors). The last figures are transitions per
second of ``TransitionModel.step`` in expected mode on the recorded states, and a digest
of every state the model produces from them (equal digests: the same states). The first
line says whether the compiled world model (``pokegym accel build``) or the Python
modules ran.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle, Move, Pokemon
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder
from tqdm import tqdm

from pokegym.actions import ActionCodec
from pokegym.agents import make_agent
from pokegym.backends.sim import SimBattleSession
from pokegym.env import opponent_choice
from pokegym.formats import BattleFormat, resolve_format
from pokegym.showdown.simulator import Simulator
from pokegym.teams import builtin_pool
from pokegym.world import _accel, priors
from pokegym.world.data import Dex, load_dex, to_id
from pokegym.world.sets import PokemonSet
from pokegym.world.state import BattleState, opponent_mon_state, state_from_battle
from pokegym.world.transition import Action, TransitionModel
from policies.core.action_prior import HeuristicPrior
from policies.core.encoding import StateEncoder

Determinizer = Callable[[AbstractBattle, list[PokemonSet]], dict[str, PokemonSet]]


@dataclass
class Scores:
    hp_errors: list[float] = field(default_factory=list)
    faint_right: int = 0
    faint_total: int = 0
    turns: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    @property
    def hp_mae_median(self) -> float:
        return statistics.median(self.hp_errors) if self.hp_errors else float("nan")

    @property
    def faint_accuracy(self) -> float:
        return self.faint_right / self.faint_total if self.faint_total else float("nan")


def _world_action(
    order: BattleOrder, battle: AbstractBattle, state: BattleState, side: int
) -> Action | None:
    """The world-model action for a poke-env order (None if it has no counterpart)."""
    if not isinstance(order, SingleBattleOrder):
        return None
    target = order.order
    if isinstance(target, Move):
        return ("move", target.id, bool(order.terastallize))
    if isinstance(target, Pokemon):
        species = to_id(target.species)
        for i, mon in enumerate(state.sides[side].mons):
            if mon.species == species:
                return ("switch", i, False)
    return None


def _true_determinization(battle: AbstractBattle, sets: list[PokemonSet]) -> dict[str, PokemonSet]:
    return {s.species: s for s in sets}


def _full_true_state(
    battle: AbstractBattle, opponent_sets: list[PokemonSet], opponent_view: AbstractBattle, dex: Dex
) -> BattleState:
    """Player 1's state with the opponent's whole team (true sets, exact HP from its own view)."""
    state = state_from_battle(battle, {s.species: s for s in opponent_sets}, dex)
    opp_side = state.sides[1]
    known = {mon.species for mon in opp_side.mons}
    for mon in opponent_view.team.values():
        species = to_id(mon.species)
        exact = next((s for s in opponent_sets if s.species == species), None)
        if exact is None:
            continue
        if species not in known:
            opp_side.mons.append(opponent_mon_state(dex, mon, exact))
    for mon_state in opp_side.mons:
        view_mon = next(
            (m for m in opponent_view.team.values() if to_id(m.species) == mon_state.species), None
        )
        if view_mon is not None:
            mon_state.hp = 0.0 if view_mon.fainted else float(view_mon.current_hp or 0)
    return state


def _actual_hp(view: AbstractBattle, species: str) -> float | None:
    for mon in view.team.values():
        if to_id(mon.species) == species:
            return 0.0 if mon.fainted else (mon.current_hp or 0) / (mon.max_hp or 1)
    return None


def play_and_score(
    n_battles: int,
    formats: list[str],
    *,
    determinizer: Determinizer | None = None,
    seed: int = 0,
    progress: bool = True,
) -> tuple[Scores, list[tuple[BattleState, Action, Action]]]:
    """Play battles, predict every ordinary turn, score; returns scores and the samples."""
    sim = Simulator()
    sim.ensure_running()
    rng = np.random.default_rng(seed)
    scores = Scores()
    samples: list[tuple[BattleState, Action, Action]] = []
    fmts: list[BattleFormat] = [resolve_format(f, simulator=sim) for f in formats]
    agents = (make_agent("random"), make_agent("max_power"))
    bar = None
    if progress:
        bar = tqdm(total=n_battles, desc="battles", file=sys.stderr, leave=False)
    try:
        for index in range(n_battles):
            fmt = fmts[index % len(fmts)]
            dex = load_dex(fmt.gen)
            model = TransitionModel(dex)
            codec = ActionCodec(fmt.gimmick)
            teams: list[str | None] = [None, None]
            if not fmt.random_teams:
                pool = builtin_pool(fmt.id)
                teams = [pool.sample(rng).text, pool.sample(rng).text]
            seats = (agents[0], agents[1]) if index % 2 == 0 else (agents[1], agents[0])
            for agent in seats:
                agent.seed(int(rng.integers(2**31)))  # type: ignore[attr-defined]
            session = SimBattleSession(
                sim, fmt, teams=teams, seeds=tuple(int(x) for x in rng.integers(0, 2**62, 3))
            )
            try:
                all_sets = session.teams()
                opponent_sets = [PokemonSet.from_showdown(s) for s in all_sets[1]]
                _play_one(session, seats, codec, rng, dex, model, opponent_sets,
                          determinizer, scores, samples)  # fmt: skip
            finally:
                session.close()
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        sim.close()
    return scores, samples


def _play_one(
    session: SimBattleSession,
    seats: tuple[Any, Any],
    codec: ActionCodec,
    rng: np.random.Generator,
    dex: Dex,
    model: TransitionModel,
    opponent_sets: list[PokemonSet],
    determinizer: Determinizer | None,
    scores: Scores,
    samples: list[tuple[BattleState, Action, Action]],
) -> None:
    p1, p2 = session.views[0].battle, session.views[1].battle
    for _ in range(2000):
        if session.finished or p1.turn >= 300:
            return
        deciding = [side for side in (0, 1) if session.needs_choice(side)]
        ordinary = (
            len(deciding) == 2
            and not p1.teampreview
            and not p1.force_switch
            and not p2.force_switch
        )
        orders: dict[int, Any] = {}
        choices: dict[int, str] = {}
        for side in deciding:
            battle = session.battles[side]
            if battle.teampreview:
                choices[side] = opponent_choice(seats[side], battle, codec, rng)
                continue
            order = seats[side].choose(battle)
            orders[side] = order
            choices[side] = codec.order_to_choice(order, battle)
        state = None
        actions: list[Action | None] = [None, None]
        if ordinary:
            if determinizer is None:
                state = _full_true_state(p1, opponent_sets, p2, dex)
            else:
                state = state_from_battle(p1, determinizer(p1, opponent_sets), dex)
            actions = [_world_action(orders[side], session.battles[side], state, side)
                       for side in (0, 1)]  # fmt: skip
        session.choose(choices)
        if state is None:
            continue
        if actions[0] is None or actions[1] is None:
            scores.skip("switch to a Pokémon the state does not hold")
            continue
        predicted = model.step(state, actions[0], actions[1])
        samples.append((state, actions[0], actions[1]))
        scores.turns += 1
        for side, view in ((0, p1), (1, p2)):
            before = state.sides[side].active_mon
            actual = _actual_hp(view, before.species)
            if actual is None:
                scores.skip("Pokémon not found after the turn")
                continue
            after = next(m for m in predicted.sides[side].mons if m.species == before.species)
            scores.hp_errors.append(abs(after.hp_fraction - actual))
            scores.faint_total += 1
            scores.faint_right += int((after.hp <= 0) == (actual <= 0))


def transitions_per_second(
    samples: list[tuple[BattleState, Action, Action]],
    dex_by_gen: dict[int, Dex],
    seconds: float = 3.0,
    width: int = 5,
) -> tuple[float, float]:
    """Expected-mode steps per CPU second (one core), the way a search uses them.

    For each recorded state, with a fresh model (an empty damage cache, as at the start
    of a decision): a depth-2 expansion over at most ``width`` x ``width`` joint actions
    per turn (25 children, 625 grandchildren). Returns ``(search, independent)``: steps
    per CPU second in that expansion, and for single steps on unrelated states (every
    step on a new state with a fresh model: no reuse at all, the worst case). CPU time
    rather than wall time, so that other processes on a shared machine do not count.
    """
    if not samples:
        return float("nan"), float("nan")
    count = 0
    cpu0 = time.process_time()
    while time.process_time() - cpu0 < seconds:
        for state, _, _ in samples:
            model = TransitionModel(dex_by_gen[state.gen])
            count += _expand(model, state, width, depth=2)
            if time.process_time() - cpu0 >= seconds:
                break
    search = count / (time.process_time() - cpu0)
    count = 0
    cpu0 = time.process_time()
    while time.process_time() - cpu0 < seconds:
        for state, a0, a1 in samples:
            TransitionModel(dex_by_gen[state.gen]).step(state, a0, a1)
            count += 1
    independent = count / (time.process_time() - cpu0)
    return search, independent


def transition_digest(
    samples: list[tuple[BattleState, Action, Action]],
    dex_by_gen: dict[int, Dex],
    width: int = 5,
    seed: int = 0,
) -> str:
    """A SHA-256 over every state the world model produces from the recorded samples:
    the played turn and a depth-2 ``width`` x ``width`` expansion in expected mode, and
    the played turn drawn in sample mode with a fixed seed per sample. Two
    implementations of the model with the same digest give the same states (HP and
    weight are hashed as floats: 300 and 300.0 are the same HP)."""
    digest = hashlib.sha256()
    for k, (state, a0, a1) in enumerate(samples):
        dex = dex_by_gen[state.gen]
        model = TransitionModel(dex)
        digest.update(_state_bytes(model.step(state, a0, a1)))
        for child in _expansion(model, state, width, depth=2):
            digest.update(_state_bytes(child))
        sampler = TransitionModel(dex, mode="sample")
        rng = np.random.default_rng((seed, k))
        digest.update(_state_bytes(sampler.step(state, a0, a1, rng=rng)))
    return digest.hexdigest()


def leaf_digest(
    samples: list[tuple[BattleState, Action, Action]],
    dex_by_gen: dict[int, Dex],
    width: int = 5,
    encoder_factory: Any = None,
) -> str:
    """A SHA-256 over what a search reads from every state of the depth-2 expansions of
    :func:`transition_digest` besides the next states: the hand-written evaluator's value
    and duel term, the value network's state encoding (its float32 bytes) and the damage
    prior over each side's legal actions. Two implementations with the same digest score
    every leaf and steer every node alike."""
    digest = hashlib.sha256()
    for state, _, _ in samples:
        model = TransitionModel(dex_by_gen[state.gen])
        encoder = (encoder_factory or StateEncoder)(model)
        prior = HeuristicPrior(model, switch_gain=0.6)
        for child in [state, *_expansion(model, state, width, depth=2)]:
            value, duel = encoder.heuristic.value_and_duel(child)
            digest.update(repr((value, duel)).encode())
            digest.update(encoder.encode(child).tobytes())
            for side in (0, 1):
                actions = model.legal_actions(child, side)
                if actions:
                    digest.update(repr(prior.prior(child, side, actions)).encode())
    return digest.hexdigest()


def _state_bytes(state: BattleState) -> bytes:
    parts: list[Any] = [state.gen, state.weather, state.weather_turns, state.terrain,
                        state.terrain_turns, state.trick_room, state.gravity,
                        state.turn]  # fmt: skip
    for side in state.sides:
        parts.append((side.active, side.stealth_rock, side.spikes, side.toxic_spikes,
                      side.sticky_web, side.reflect, side.light_screen, side.aurora_veil,
                      side.tailwind, side.tera_used))  # fmt: skip
        for m in side.mons:
            parts.append((m.species, m.level, m.types, m.stats, round(float(m.hp), 6), m.moves,
                          m.item, m.ability, m.status, m.status_turns, m.boosts, m.tera_type,
                          m.terastallized, float(m.weight), m.choice_lock,
                          m.protect_streak))  # fmt: skip
    return repr(parts).encode()


def _expansion(
    model: TransitionModel, state: BattleState, width: int, depth: int
) -> list[BattleState]:
    if depth == 0 or state.finished:
        return []
    out: list[BattleState] = []
    for a0 in model.legal_actions(state, 0)[:width]:
        for a1 in model.legal_actions(state, 1)[:width]:
            child = model.step(state, a0, a1)
            out.append(child)
            out.extend(_expansion(model, child, width, depth - 1))
    return out


def _expand(model: TransitionModel, state: BattleState, width: int, depth: int) -> int:
    if depth == 0 or state.finished:
        return 0
    count = 0
    ours = model.legal_actions(state, 0)[:width]
    theirs = model.legal_actions(state, 1)[:width]
    for a0 in ours:
        for a1 in theirs:
            child = model.step(state, a0, a1)
            count += 1 + _expand(model, child, width, depth - 1)
    return count


def _pct(scores: Scores, q: float) -> float:
    return float(np.percentile(scores.hp_errors, q)) if scores.hp_errors else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pokegym bench worldmodel", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a few minutes")
    parser.add_argument("--battles", type=int, help="battles per setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rate-seconds", type=float, default=3.0,
                        help="CPU seconds for each transitions-per-second figure")  # fmt: skip
    args = parser.parse_args(argv)
    battles = args.battles or (12 if args.quick else 60)
    formats = ["gen9randombattle", "gen9ou"]

    print(f"pokegym bench worldmodel: {battles} battles per setting over {', '.join(formats)}")
    print(_accel.describe())
    true_scores, samples = play_and_score(battles, formats, seed=args.seed)
    print(
        f"true sets:   {true_scores.turns} turns, median HP error {true_scores.hp_mae_median:.3f}, "
        f"faint accuracy {true_scores.faint_accuracy:.3f}, skipped {true_scores.skipped}"
    )

    prior_scores, _ = play_and_score(
        battles, formats, seed=args.seed + 1, determinizer=priors.modal_determinizer
    )
    print(
        f"priors only: {prior_scores.turns} turns, "
        f"median HP error {prior_scores.hp_mae_median:.3f}, "
        f"faint accuracy {prior_scores.faint_accuracy:.3f}, skipped {prior_scores.skipped}"
    )
    rate, independent = transitions_per_second(samples, {9: load_dex(9)}, args.rate_seconds)
    digest = transition_digest(samples, {9: load_dex(9)})
    print(
        f"transitions per CPU second on one core: {rate:.0f} in depth-2 5x5 expansions, "
        f"{independent:.0f} on unrelated states with nothing cached; "
        f"HP error p75/p90: true sets {_pct(true_scores, 75):.3f}/{_pct(true_scores, 90):.3f}, "
        f"priors {_pct(prior_scores, 75):.3f}/{_pct(prior_scores, 90):.3f}"
    )
    print(
        f"hp_mae_median={true_scores.hp_mae_median:.3f} faint_acc={true_scores.faint_accuracy:.3f} "
        f"hp_mae_median_priors={prior_scores.hp_mae_median:.3f} "
        f"faint_acc_priors={prior_scores.faint_accuracy:.3f} transitions_per_s={rate:.0f}"
    )
    print(f"digest of the model's states on these battles (seed {args.seed}): {digest}")
    leaves = leaf_digest(samples, {9: load_dex(9)})
    print(f"digest of the leaf evaluation (hand-written value, encoding, prior): {leaves}")
    return 0
