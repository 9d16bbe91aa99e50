"""Who predicts the opponent? At every turn of real battles, the ``engine`` agent's own
picture of the opponent's choice against the choice the opponent then made.

The engine searches both sides at once: its root statistics for the opponent (the visit
shares of the opponent's options, summed over its guesses) are what it plays against.
Other predictions are scored at the same decisions: the fitted opponent prior
(:class:`~policies.opponent_model.OpponentPrior`, a conditional logit over the
opponent's legal actions in the world model, the belief's modal guess) on the state
with every Pokémon Team Preview showed (``prior``) and on the state with only those
that have been out (``prior_seen``, as ``engine:reply=prior`` asks it: it cannot name a
switch to the others), and a uniform draw among the opponent's legal actions (those of
``prior``'s state). For each: the mean probability put on the action played and how
often it was the most likely one, each with a 95 % interval that counts the turns of one
battle as one cluster (they are not independent: an opponent that switches back and forth
for a hundred turns is one battle, not a hundred draws); an action a prediction cannot
name gets probability 0 (and is counted).
Turns where either side only switches after a faint are left out.

Both players run in this process on the embedded simulator, the engine as player one;
in formats with teams both draw from the built-in pool.

    pokegym bench opponent_prediction --battles 20 --seed 0 [--opponent simple_heuristics] \\
        [--format gen9ou] [--agent engine]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

import numpy as np
from poke_env.player.battle_order import SingleBattleOrder

from pokegym.actions import ActionCodec
from pokegym.agents import make_agent
from pokegym.backends.sim import SimBattleSession
from pokegym.env import opponent_choice
from pokegym.formats import resolve_format
from pokegym.showdown.simulator import shared_simulator
from pokegym.stats import clustered_mean_interval
from pokegym.teams import builtin_pool
from pokegym.world.data import load_dex, to_id
from pokegym.world.transition import TransitionModel
from policies.core.battle import decision_state, legal_actions
from policies.core.engine_reply import SWITCH, reply_name
from policies.core.root_rerank import opponent_action
from policies.opponent_model import OpponentPrior, load_opponent_model

PREDICTORS = ("engine", "prior", "prior_seen", "uniform")


def engine_name(order: Any) -> str | None:
    """The engine's name of a player's order (``"thunderbolt"``, ``"thunderbolt-tera"``,
    ``"switch pikachu"``); None for an order that is neither a move nor a switch."""
    if not isinstance(order, SingleBattleOrder):
        return None
    chosen = order.order
    if hasattr(chosen, "species"):
        return "switch " + to_id(chosen.species)
    if hasattr(chosen, "id"):
        return to_id(chosen.id) + ("-tera" if order.terastallize else "")
    return None


def _teams(fmt: Any, rng: np.random.Generator) -> tuple[str | None, str | None]:
    if not fmt.needs_teams:
        return None, None
    pool = builtin_pool(fmt.id)
    return pool.sample(rng).text, pool.sample(rng).text


def measure(battles: int, seed: int, agent: str, opponent: str,
            format_id: str) -> dict[str, Any]:  # fmt: skip
    """Play ``battles`` battles and score the predictions of the opponent's choice at
    each of player one's turns: per predictor, the probabilities on the action played
    and whether it was the most likely."""
    sim = shared_simulator()
    sim.ensure_running()
    fmt = resolve_format(format_id, simulator=sim)
    codec = ActionCodec(fmt.gimmick)
    dex = load_dex(fmt.gen)
    model = TransitionModel(dex)
    prior = OpponentPrior(model, load_opponent_model())
    rng = np.random.default_rng(seed)
    probs: dict[str, list[float]] = defaultdict(list)
    top: dict[str, list[bool]] = defaultdict(list)
    unnamed: dict[str, int] = defaultdict(int)
    turns: list[int] = []  # the battle of each scored turn
    switches = 0
    for b in range(battles):
        first = seed * 1000 + b
        seeds = (first, first + 1, first + 2)
        session = SimBattleSession(sim, fmt, teams=_teams(fmt, rng), seeds=seeds,
                                   names=("p1", "p2"))  # fmt: skip
        players = [make_agent(agent, seed=first), make_agent(opponent, seed=first)]
        if not hasattr(players[0], "pop_search_report"):
            raise SystemExit(f"--agent {agent!r} is not an engine agent")
        for _ in range(500):
            if session.finished:
                break
            ours, theirs = session.battles
            if ours.teampreview or theirs.teampreview:
                session.choose({side: opponent_choice(players[side], session.battles[side],
                                                      codec, rng)
                                for side in (0, 1) if session.needs_choice(side)})  # fmt: skip
                continue
            both = session.needs_choice(0) and session.needs_choice(1)
            turn = both and not ours.force_switch and not theirs.force_switch
            orders = {side: players[side].choose(session.battles[side]) for side in (0, 1)
                      if session.needs_choice(side)}  # fmt: skip
            if turn and ours.opponent_active_pokemon is not None:
                shares = dict(getattr(players[0], "_opponent_shares", {}) or {})
                name = engine_name(orders[1])
                if name is not None and shares:
                    switches += name.startswith("switch ")
                    _score(probs, top, unnamed, name, shares, ours, dex, model, prior)
                    turns.append(b)
            session.choose({side: codec.order_to_choice(order, session.battles[side])
                            for side, order in orders.items()})  # fmt: skip
    return {"probs": probs, "top": top, "unnamed": unnamed, "switches": switches,
            "battles": turns}  # fmt: skip


def _kind(name: str) -> str:
    """The reply an engine name belongs to, as ``reply=prior`` searches them: the move
    with or without Tera, or any switch."""
    return SWITCH if name.startswith(SWITCH + " ") else name.removesuffix("-tera")


def _score(probs, top, unnamed, name, shares, battle, dex, model, prior) -> None:
    total = sum(shares.values())
    engine = {k: v / total for k, v in shares.items()}
    probs["engine"].append(engine.get(name, 0.0))
    top["engine"].append(max(engine, key=lambda k: engine[k]) == name)
    probs["engine", "reply"].append(sum(v for k, v in engine.items() if _kind(k) == _kind(name)))
    for predictor, previewed in (("prior", True), ("prior_seen", False)):
        state = decision_state(battle, dex, previewed=previewed)
        actions = legal_actions(model, state, 1)
        action = opponent_action(name, state)
        weights = dict(zip(actions, prior.prior(state, 1, actions), strict=True))
        probs[predictor, "reply"].append(sum(
            w for a, w in weights.items()
            if (n := reply_name(a, state)) is not None and _kind(n) == _kind(name)
        ))  # fmt: skip
        if action is None or action not in actions:  # it cannot name it: no probability
            unnamed[predictor] += 1
            probs[predictor].append(0.0)
            top[predictor].append(False)
        else:
            probs[predictor].append(weights[action])
            top[predictor].append(max(weights, key=lambda k: weights[k]) == action)
        if previewed:
            named = action is not None and action in actions
            probs["uniform"].append(1.0 / len(actions) if named else 0.0)
            unnamed["uniform"] += not named


def _mean(values: Any, battles: list[int], scale: float = 1.0, digits: int = 3) -> str:
    """A mean with its 95 % interval, the turns of each battle one cluster."""
    mean, low, high = clustered_mean_interval([float(v) for v in values], battles)
    return f"{scale * mean:.{digits}f} [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"


def report(result: dict[str, Any]) -> list[str]:
    """The table: per predictor, the probability on the action played, how often it was
    the most likely, the log-likelihood, the actions it could not name, and the
    probability on the reply played (all switches one, a move with or without Tera)."""
    probs, battles = result["probs"], result["battles"]
    lines = [f"{'predictor':<12}{'n':>6}  {'p(played) [95 %]':<24}{'most likely [95 %]':<26}"
             f"{'log-likelihood':>14}  {'unnamed':<9}p(reply) [95 %]"]  # fmt: skip
    for name in PREDICTORS:
        p = np.asarray(probs[name], dtype=float)
        hits = result["top"][name]
        if not len(p):
            continue
        top = "-"  # a uniform draw has no most likely action
        if hits:
            top = _mean(hits, battles, scale=100, digits=1) + " %"
        loglik = float(np.mean(np.log(np.maximum(p, 1e-3))))
        reply = _mean(probs[name, "reply"], battles) if probs.get((name, "reply")) else "-"
        lines.append(f"{name:<12}{len(p):>6}  {_mean(p, battles):<24}{top:<26}{loglik:>8.3f}  "
                     f"{result['unnamed'][name]:<9}{reply}")  # fmt: skip
    if probs.get("prior") and probs.get("prior_seen"):
        played = np.subtract(probs["prior"], probs["prior_seen"])
        reply = np.subtract(probs["prior", "reply"], probs["prior_seen", "reply"])
        lines.append(f"prior - prior_seen, paired: p(played) {_mean(played, battles)}, "
                     f"p(reply) {_mean(reply, battles)}")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--battles", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agent", default="engine", help="player one: an engine agent spec")
    parser.add_argument("--opponent", default="simple_heuristics")
    parser.add_argument("--format", default="gen9ou")
    args = parser.parse_args(argv)
    if args.battles < 1:
        parser.error("--battles is a count (1 or more)")
    result = measure(args.battles, args.seed, args.agent, args.opponent, args.format)
    n = len(result["probs"]["engine"])
    print(f"opponent prediction: {args.battles} {args.format} battles, {args.agent} against "
          f"{args.opponent}, seed {args.seed}: {n} turns, the opponent switched on "
          f"{result['switches']}")  # fmt: skip
    print("\n".join(report(result)))
    return 0
