"""A poke-env battle's protocol history, read by the
:class:`~pokegym.world.priors.protocol.ProtocolTracker`: the turn orders that pin the
opponent's Speed (:func:`turn_orders`) and the direct hits (:func:`damage_events`), with
our side's Speed, item and ability taken from the battle's own team.
"""

from __future__ import annotations

from poke_env.battle import AbstractBattle

from pokegym.world.history import battle_events
from pokegym.world.priors.protocol import DamageEvent, ObservedTurnOrder, ProtocolTracker
from pokegym.world.priors.turn_order import TurnOrder


def resolve_order(
    obs: ObservedTurnOrder, tracker: ProtocolTracker, battle: AbstractBattle
) -> TurnOrder | None:
    """``obs`` with our side's Speed, item and ability from the battle's team, or None
    when they cannot be known for that turn (a forme change since, an item not known)."""
    mon = battle.team.get(obs.ours)
    if mon is None:
        return None
    speed = (mon.stats or {}).get("spe")
    if not speed:
        return None
    if not tracker.forme_stable_after(obs.ours, obs.event_index):
        return None
    item = tracker.our_item_at(obs.ours, obs.event_index, mon.item)
    if item is None or item == "unknownitem":
        return None
    return obs.resolve(speed, item, mon.ability or "")


def turn_orders(battle: AbstractBattle) -> list[tuple[str, TurnOrder]]:
    """Every usable turn order of a poke-env battle, as ``(opponent identifier, order)``.

    Reads the protocol lines the battle keeps; our Speed, item and ability come from
    the battle's own team (the request).
    """
    role = battle.player_role or "p1"
    tracker = ProtocolTracker(role, battle.gen)
    for event in battle_events(battle):
        tracker.feed(event)
    out = []
    for obs in tracker.orders:
        if (obs.theirs[:2], obs.their_stint) in tracker.invalid_stints:
            continue
        order = resolve_order(obs, tracker, battle)
        if order is not None:
            out.append((obs.theirs, order))
    return out


def damage_events(battle: AbstractBattle) -> list[DamageEvent]:
    """Direct hits in a poke-env battle (both directions), from its protocol lines."""
    tracker = ProtocolTracker(battle.player_role or "p1", battle.gen)
    for event in battle_events(battle):
        tracker.feed(event)
    return list(tracker.damage)


__all__ = ["battle_events", "damage_events", "resolve_order", "turn_orders"]
