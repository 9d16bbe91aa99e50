"""The opponent's predicted replies, for the ``engine`` agent's ``reply=prior``.

poke-engine's search plays both sides: its opponent is a searcher like itself, and its
root statistics for the opponent are what it answers. Opponents that are not (rule bots,
many people) play otherwise: :mod:`bench.opponent_prediction` measures how well those
statistics and the fitted opponent prior (:mod:`policies.opponent_model`) name what the
opponent then does.

:func:`predicted_replies` turns the prior into the few replies worth searching against,
by the engine's names: the most likely ones until ``mass`` of the probability is
covered, a move's Tera form counted with it and every switch counted as one reply (the
engine's state can bar the opponent's switches or its other moves for a turn, not pick
which switch). The prior is asked on the world-model state of the Pokémon that have
been out: it was fitted on such states, and given also those Team Preview showed
(``decision_state(..., previewed=True)``) it names the reply played less well in gen9ou
(``pokegym bench opponent_prediction``, docs/experiments/engine.md).
:func:`answer` values our near-best options against them. :func:`reply_probabilities`
gives the whole distribution by the same names, which ``opponent=prior`` draws the
opponent's root move from inside the engine's search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pokegym.world.data import to_id
from pokegym.world.state import BattleState
from policies.core.battle import legal_actions

SWITCH = "switch"
TERA = "-tera"  # the engine's suffix of a move's Tera form


def reply_name(action: tuple, state: BattleState) -> str | None:
    """The engine's name of the opponent's world-model action (a move without its Tera
    flag; ``"switch <species>"``), None for a pass."""
    kind, what, _ = action
    if kind == "move":
        return to_id(str(what))
    if kind == "switch":
        return f"{SWITCH} {to_id(state.sides[1].mons[int(what)].species)}"
    return None


def reply_probabilities(model, prior, state: BattleState) -> dict[str, float]:
    """The prior's probability of each of the opponent's actions by the engine's option
    names (a move's Tera form as ``<move>-tera``, a switch as ``switch <species>``); empty
    when it has one choice or none."""
    actions = legal_actions(model, state, 1)
    if len(actions) < 2:
        return {}
    probabilities: dict[str, float] = {}
    for action, p in zip(actions, prior.prior(state, 1, actions), strict=True):
        name = reply_name(action, state)
        if name is None:
            continue
        if action[0] == "move" and action[2]:
            name += TERA
        probabilities[name] = probabilities.get(name, 0.0) + float(p)
    return probabilities


def predicted_replies(
    model, prior, state: BattleState, mass: float = 0.8, most: int = 3
) -> list[tuple[str, float]]:
    """The opponent's likeliest replies by the engine's names with their probabilities
    (renormalised over those kept): at most ``most``, the first ones whose probabilities
    add up to ``mass``. Empty when the opponent has one choice or none."""
    merged: dict[str, float] = {}
    species: dict[str, float] = {}
    for name, p in reply_probabilities(model, prior, state).items():
        key = SWITCH if name.startswith(SWITCH + " ") else name.removesuffix(TERA)
        merged[key] = merged.get(key, 0.0) + p
        if key == SWITCH:
            species[name] = p
    ranked = sorted(merged.items(), key=lambda kv: -kv[1])
    kept: list[tuple[str, float]] = []
    covered = 0.0
    for key, p in ranked:
        if len(kept) >= most or (kept and covered >= mass):
            break
        name = max(species, key=lambda n: species[n]) if key == SWITCH else key
        kept.append((name, p))
        covered += p
    total = sum(p for _, p in kept)
    return [(name, p / total) for name, p in kept] if total > 0 else []


def answer(
    shares: Mapping[str, float],
    reply_scores: Sequence[tuple[float, Mapping[str, tuple[float, int]]]],
    floor_share: float,
    chosen: str,
) -> str:
    """Among our options with at least ``floor_share`` of the best one's visit share (the
    free search's), the one whose mean score against the replies, weighed by their
    probabilities, is highest; ``chosen`` (the free search's choice) on a tie or when no
    reply search valued two candidates. ``reply_scores``: per reply, its probability
    and each of our options' (total score, visits) in the search against it."""
    floor = max(shares.values()) * floor_share
    candidates = [name for name in shares if shares[name] >= floor]
    values: dict[str, float] = {}
    for name in candidates:
        value = weight = 0.0
        for p, scores in reply_scores:
            total, visits = scores.get(name, (0.0, 0))
            if visits > 0:
                value += p * total / visits
                weight += p
        if weight > 0:
            values[name] = value / weight
    if len(values) < 2:
        return chosen
    return max(values, key=lambda n: (values[n], n == chosen))
