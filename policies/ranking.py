"""Agents that rank actions: the player's legal orders, best first, and a guess of the
opponent's action.

:class:`ActionRanker` is what ``pokegym predict`` (:mod:`policies.predict`) asks of an
agent: ``rank(battle) -> [(order, score), ...]`` over the legal orders of the battle's
request, best first. An agent may implement it itself; :func:`ranker_for` adapts the
agents of this package that do not:

* **searches** (``mcts``, ``distilled``, ``engine``: anything with ``pop_search_report``):
  the order it plays first (``distilled`` plays the ``abyssal`` anchor's choice unless
  the search values another clearly higher, so its choice is not always the most
  visited order), then the root visit shares of the decision's search. Where the agent
  did not search (one legal order, no opponent in view) only its choice is ranked.
* **one_step**: its choice, then the moves by its lookahead's own key (fewest expected
  turns to KO, then more damage, then priority; a Terastallized move after the plain
  one), then the switches by its switch key (how much longer the switch-in survives
  than the opponent does).
* **ppo**: the policy network's probabilities of the legal actions (a softmax of its logits).
* **any other agent** (``abyssal``, ``max_power``, ...): its choice, then the other legal
  orders in :func:`fallback_order`. Such an agent exposes one choice, so only its
  top-1 accuracy measures it; its top-2..5 measure the fallback order. (The fallback
  order ranks moves by base power, which is ``max_power``'s own score.)

At Team Preview every agent's ranking is its ``/team`` order (leads in that order); an
agent without ``team_preview`` keeps the team order.

The opponent's action, from the player's view (:meth:`AgentRanker.rank_opponent`,
labels as :attr:`pokegym.replays.ReplayAction.label` writes them): a search's own
statistics for the opponent's root actions where the agent keeps them (``mcts`` and
``distilled``: ``last_stats``, the opponent's root visit shares), otherwise the project's
opponent model (:mod:`policies.opponent_model`, the shipped weights) over the world-model
state of the player's view. The opponent's Pokémon not seen yet cannot be named.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from poke_env.battle import AbstractBattle, Move, Pokemon
from poke_env.player.battle_order import BattleOrder, SingleBattleOrder

from pokegym.world.data import load_dex, to_id
from pokegym.world.transition import Action, TransitionModel
from policies.core.battle import decision_state
from policies.opponent_model import OpponentPrior, load_opponent_model
from policies.ppo import PPOPolicy

__all__ = [
    "ActionRanker",
    "AgentRanker",
    "action_label",
    "fallback_order",
    "order_label",
    "ranker_for",
]

Ranking = list[tuple[BattleOrder, float]]
LabelRanking = list[tuple[str, float]]


@runtime_checkable
class ActionRanker(Protocol):
    """Ranks the legal orders of the battle's request, best first."""

    def rank(self, battle: AbstractBattle) -> Ranking: ...


# ---------------------------------------------------------------------- labels
def order_label(order: BattleOrder, team_preview: bool = False) -> str:
    """The label of an order in :attr:`~pokegym.replays.ReplayAction.label`'s words:
    ``move:<id>[:tera|:dynamax|:mega|:z]``, ``switch:<species>``, ``team:<species>``
    (a lead at Team Preview); "" for an order that is neither a move nor a switch."""
    target = getattr(order, "order", None)
    if isinstance(target, Pokemon):
        return f"{'team' if team_preview else 'switch'}:{to_id(target.species)}"
    if isinstance(target, Move):
        gimmicks = (("tera", order.terastallize), ("dynamax", order.dynamax),
                    ("mega", order.mega), ("z", order.z_move))  # fmt: skip
        flags = [name for name, on in gimmicks if on]
        return ":".join(["move", target.id, *flags])
    return ""


def action_label(action: Action, species: list[str]) -> str:
    """The label of a world-model action of a side whose Pokémon are ``species``."""
    kind, what, tera = action
    if kind == "move":
        return f"move:{to_id(str(what))}" + (":tera" if tera else "")
    if kind == "switch" and isinstance(what, int) and 0 <= what < len(species):
        return f"switch:{to_id(species[what])}"
    return ""


# ---------------------------------------------------------------------- orders
def fallback_order(battle: AbstractBattle) -> list[BattleOrder]:
    """Every legal order in a fixed order: plain moves by base power (highest first, ties
    in move order), then switches by HP left (most first, ties in team order), then the
    moves with the format's gimmick (Terastallization, Dynamax...) by base power."""
    orders = list(battle.valid_orders)
    plain = [o for o in orders if isinstance(o.order, Move) and not _gimmick(o)]
    gimmick = [o for o in orders if isinstance(o.order, Move) and _gimmick(o)]
    switches = [o for o in orders if isinstance(o.order, Pokemon)]
    power: Callable[[BattleOrder], float] = lambda o: -float(o.order.base_power)  # noqa: E731
    return (
        sorted(plain, key=power)
        + sorted(switches, key=lambda o: -o.order.current_hp_fraction)
        + sorted(gimmick, key=power)
    )


def _gimmick(order: BattleOrder) -> bool:
    return bool(order.terastallize or order.dynamax or order.mega or order.z_move)


def _complete(battle: AbstractBattle, ranked: Ranking) -> Ranking:
    """``ranked`` followed by the legal orders it lacks (in :func:`fallback_order`),
    scored below it; each label once."""
    out: Ranking = []
    seen: set[str] = set()
    for order, score in ranked:
        label = order_label(order)
        if label and label not in seen:
            seen.add(label)
            out.append((order, float(score)))
    floor = min((s for _, s in out), default=0.0)
    for i, order in enumerate(fallback_order(battle)):
        label = order_label(order)
        if label and label not in seen:
            seen.add(label)
            out.append((order, floor - 1.0 - i))
    return out


def _team_preview_ranking(agent: Any, battle: AbstractBattle) -> Ranking:
    team = list(battle.team.values())
    choose = getattr(agent, "team_preview", None)
    text = str(choose(battle)) if callable(choose) else ""
    digits = [int(c) - 1 for c in text.removeprefix("/team").strip() if c.isdigit()]
    order = [i for i in dict.fromkeys(digits) if 0 <= i < len(team)]
    order += [i for i in range(len(team)) if i not in order]
    return [(SingleBattleOrder(team[i]), float(len(order) - r)) for r, i in enumerate(order)]


# ---------------------------------------------------------------------- the adapter
class AgentRanker:
    """An agent as an :class:`ActionRanker` (see the module docstring for how each kind
    of agent ranks), with :meth:`rank_opponent` for the opponent's action."""

    def __init__(self, agent: Any):
        self.agent = agent
        self._opponent_stats: LabelRanking | None = None
        self._opponent_model: Any = None
        self._models: dict[int, TransitionModel] = {}

    @property
    def method(self) -> str:
        """How this agent's ranking is made: ``own ranking``, ``choice, then search visit shares``,
        ``lookahead``, ``policy network`` or ``choice, then fallback order``."""
        agent = self.agent
        if _own_rank(agent) is not None:
            return "own ranking"
        if callable(getattr(agent, "pop_search_report", None)):
            return "choice, then search visit shares"
        if callable(getattr(agent, "lookahead", None)):
            return "lookahead"
        if _is_network_policy(agent):
            return "policy network"
        return "choice, then fallback order"

    def rank(self, battle: AbstractBattle) -> Ranking:
        self._opponent_stats = None
        if battle.teampreview:
            return _team_preview_ranking(self.agent, battle)
        own = _own_rank(self.agent)
        if own is not None:
            return _complete(battle, own(battle))
        if _is_network_policy(self.agent):
            return _complete(battle, _network_ranking(self.agent, battle))
        report = getattr(self.agent, "pop_search_report", None)
        if callable(report):
            report()  # drop what an earlier decision left
        if hasattr(self.agent, "last_lookahead"):
            self.agent.last_lookahead = None  # set again only where it looks ahead
        chosen = self.agent.choose(battle)
        ranked: Ranking = [(chosen, 1.0)]
        if callable(report):
            found = report() or {}
            shares = sorted(found.get("search_policy") or [], key=lambda p: -p[1])
            if shares:
                # What it plays first (an anchor can overrule the most visited order),
                # then its orders by visit share.
                top = 1.0 + max(float(s) for _, s in shares)
                ranked = [(chosen, top)] + [(o, float(s)) for o, s in shares]
                self._opponent_stats = _search_opponent(self.agent, battle)
        elif getattr(self.agent, "last_lookahead", None) is not None:
            ranked += _lookahead_ranking(battle, self.agent.last_lookahead)
        return _complete(battle, ranked)

    def rank_opponent(self, battle: AbstractBattle) -> tuple[LabelRanking, str]:
        """The opponent's actions best first (labels), and where the guess came from
        (``search`` or ``opponent model``). Call it after :meth:`rank` on the same
        battle: a search's statistics are those of that decision."""
        if self._opponent_stats:
            return self._opponent_stats, "search"
        return self.opponent_model_ranking(battle), "opponent model"

    def opponent_model_ranking(self, battle: AbstractBattle) -> LabelRanking:
        """The opponent model's ranking of the opponent's actions (labels), over the
        world-model state of the player's view."""
        if battle.opponent_active_pokemon is None or battle.active_pokemon is None:
            return []
        model = self._models.get(battle.gen)
        if model is None:
            model = self._models[battle.gen] = TransitionModel(load_dex(battle.gen))
        if self._opponent_model is None:
            self._opponent_model = load_opponent_model()
        state = decision_state(battle, model.dex)
        actions = model.legal_actions(state, 1)
        prior = OpponentPrior(model, self._opponent_model)
        scores = prior.scores(state, 1, actions)
        species = [mon.species for mon in state.sides[1].mons]
        ranked = sorted(zip(actions, scores, strict=True), key=lambda p: -p[1])
        return _labels([(action_label(a, species), s) for a, s in ranked])


def ranker_for(agent: Any) -> AgentRanker:
    """``agent`` as an :class:`AgentRanker` (any object with ``choose(battle)``)."""
    if not callable(getattr(agent, "choose", None)):
        raise TypeError(f"{agent!r} cannot choose orders, so it cannot rank them")
    return AgentRanker(agent)


def _own_rank(agent: Any) -> Callable[[AbstractBattle], Ranking] | None:
    rank = getattr(agent, "rank", None)
    return rank if callable(rank) else None


def _labels(ranked: LabelRanking) -> LabelRanking:
    out: LabelRanking = []
    seen: set[str] = set()
    for label, score in ranked:
        if label and label not in seen:
            seen.add(label)
            out.append((label, float(score)))
    return out


# ---------------------------------------------------------------------- per kind of agent
def _search_opponent(agent: Any, battle: AbstractBattle) -> LabelRanking | None:
    """The opponent's root visit shares of the search that just ran (mcts, distilled)."""
    stats = getattr(agent, "last_stats", None)
    if stats is None or len(getattr(stats, "actions", ())) < 2:
        return None
    state = decision_state(battle, load_dex(battle.gen))
    species = [mon.species for mon in state.sides[1].mons]
    shares = sorted(stats.shares(1).items(), key=lambda p: -p[1])
    return _labels([(action_label(a, species), s) for a, s in shares]) or None


def _lookahead_ranking(battle: AbstractBattle, look: Any) -> Ranking:
    """one_step's own keys: moves by (expected turns to KO, -damage, -priority), plain
    before Terastallized; then switches by (their turns to KO - ours, HP)."""
    available = {to_id(m.id): m for m in battle.available_moves}
    keyed: list[tuple[tuple[float, ...], BattleOrder]] = []
    for tera in (False, True) if battle.can_tera else (False,):
        for hit in look.matchup(tera, False).ours:
            move = available.get(to_id(hit.move))
            if move is None or math.isinf(hit.turns_to_ko):
                continue
            key = (hit.expected_turns, -hit.expected, -hit.priority, int(tera))
            keyed.append((key, SingleBattleOrder(move, terastallize=tera)))
    keyed.sort(key=lambda p: p[0])
    ranked: Ranking = [(o, -float(i)) for i, (_, o) in enumerate(keyed)]
    team = list(battle.team.values())
    available_switches = {id(m) for m in battle.available_switches}
    switches = [s for s in look.switches
                if s.index < len(team) and id(team[s.index]) in available_switches]  # fmt: skip
    switches.sort(key=lambda s: (min(s.their_turns_to_ko, 9) - min(s.our_turns_to_ko, 9),
                                 s.hp_fraction), reverse=True)  # fmt: skip
    start = -float(len(ranked))
    ranked += [(SingleBattleOrder(team[s.index]), start - 1 - i) for i, s in enumerate(switches)]
    return ranked


def _is_network_policy(agent: Any) -> bool:
    return isinstance(agent, PPOPolicy)


def _network_ranking(agent: Any, battle: AbstractBattle) -> Ranking:
    """The policy network's probability of each legal action (``ppo``)."""
    encoder, codec = agent._tools(battle.gen)  # the encoders the policy plays with
    mask = codec.mask(battle)
    logits = agent.network.logits(encoder.encode(battle), mask)
    legal = np.flatnonzero(mask)
    weights = np.exp(logits[legal] - logits[legal].max())
    probabilities = weights / weights.sum()
    ranked = sorted(zip(legal, probabilities, strict=True), key=lambda p: -p[1])
    return [(codec.to_order(int(a), battle), float(p)) for a, p in ranked]
