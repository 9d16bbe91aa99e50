"""The agent contract seen from the battle layer, and agents by name.

An agent is anything with ``choose(battle) -> BattleOrder`` over poke-env's battle
object (optionally ``team_preview(battle) -> str`` and ``seed(int)``). The
environments accept an agent object, a registered name such as ``"max_power"`` or
``"random:seed=3"``, a poke-env ``Player``, or a plain callable on the battle.

Names are resolved through the ``pokegym.agents`` entry-point group (the
``policies`` package registers its agents there) plus anything added at run time
with :func:`register_agent`. This keeps the layering: ``pokegym`` never imports
``policies``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import inspect
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from pokegym.errors import AgentOptionError, PokegymError, UnknownAgentError

ENTRY_POINT_GROUP = "pokegym.agents"


@runtime_checkable
class Agent(Protocol):
    """Chooses an order for the battle it is given (poke-env's battle object)."""

    def choose(self, battle: AbstractBattle) -> BattleOrder: ...


_runtime: dict[str, Callable[..., Any]] = {}


def register_agent(name: str, factory: Callable[..., Any]) -> None:
    """Make ``factory(**options)`` available as ``name`` in every agent spec."""
    if not name or ":" in name or "," in name:
        raise ValueError(f"agent names are plain words, got {name!r}")
    _runtime[name] = factory


def registered_agents() -> list[str]:
    """Every agent name known now (entry points and run-time registrations)."""
    names = {ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names | set(_runtime))


def _factory(name: str) -> Callable[..., Any]:
    if name in _runtime:
        return _runtime[name]
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()  # type: ignore[no-any-return]
    known = ", ".join(registered_agents()) or "none (is pokegym installed with pip?)"
    raise UnknownAgentError(f"No agent named {name!r}. Registered agents: {known}.")


def _literal(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        with contextlib.suppress(ValueError):
            return cast(text)
    return text


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name:key=value,key=value"`` -> ``(name, options)``; values are typed literally."""
    name, _, rest = spec.strip().partition(":")
    options: dict[str, Any] = {}
    if rest:
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise ValueError(
                    f"Bad agent option {part!r} in {spec!r}: options are key=value pairs "
                    "separated by commas, e.g. 'pokechamp:depth=2,model=qwen-0.5b'."
                )
            options[key.strip()] = _literal(value.strip())
    return name.strip(), options


def split_agent_specs(text: str) -> list[str]:
    """Split ``a,b:x=1,y=2,c`` into specs: a comma followed by ``key=value`` (no colon
    before the ``=``; the value may hold one, as a URL does) continues the previous
    agent's options."""
    specs: list[str] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        key, eq, _ = token.partition("=")
        if specs and eq and ":" not in key:
            specs[-1] += "," + token
        else:
            specs.append(token)
    return specs


def make_agent(spec: Any, **options: Any) -> Agent:
    """Build an agent from a name spec, or adapt an object that can choose orders.

    Accepts: a registered name (``"random"``, ``"max_power:seed=3"``); an object with
    ``choose(battle)``; a poke-env ``Player`` (``choose_move``/``teampreview``); or a
    callable ``f(battle) -> BattleOrder``.

    Raises:
        UnknownAgentError: no agent has that name (the message lists the known ones).
        AgentOptionError: the named agent could not be built from the spec's options
            (an unknown option, a bad value, a missing or damaged file it names).
        TypeError: the object cannot choose orders.
    """
    if isinstance(spec, str):
        name, spec_options = parse_agent_spec(spec)
        factory = _factory(name)
        try:
            agent = factory(**{**spec_options, **options})
        except PokegymError:
            raise  # already says what went wrong and what to do (a checkpoint, a device)
        except (ValueError, TypeError, OSError) as exc:
            raise AgentOptionError(
                f"Cannot build agent {spec!r}: {str(exc).rstrip('.')}. Options are the "
                f"keyword arguments of the agent's class ({_class_name(factory)})."
            ) from exc
        if not callable(getattr(agent, "choose", None)):
            raise TypeError(f"The factory for {name!r} returned {agent!r}, which has no choose().")
        return agent  # type: ignore[no-any-return]
    if callable(getattr(spec, "choose", None)):
        return spec  # type: ignore[no-any-return]
    if callable(getattr(spec, "choose_move", None)):
        return PlayerAgent(spec)
    if callable(spec):
        return CallableAgent(spec)
    raise TypeError(
        f"Cannot use {spec!r} as an agent: pass a registered name "
        f"({', '.join(registered_agents())}), "
        "an object with choose(battle), a poke-env Player, or a callable on the battle."
    )


def _class_name(factory: Any) -> str:
    if isinstance(factory, type):
        return f"{factory.__module__}.{factory.__qualname__}"
    qualname = getattr(factory, "__qualname__", None)
    if qualname is None:
        return repr(factory)
    return f"{factory.__module__}.{qualname}"


def _resolve(value: Any) -> Any:
    if inspect.isawaitable(value):
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(value)
        finally:
            loop.close()
    return value


class PlayerAgent:
    """Adapts a poke-env ``Player`` (its ``choose_move`` and ``teampreview``)."""

    def __init__(self, player: Any):
        self.player = player
        self.name = type(player).__name__

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        return _resolve(self.player.choose_move(battle))  # type: ignore[no-any-return]

    def team_preview(self, battle: AbstractBattle) -> str:
        return str(_resolve(self.player.teampreview(battle)))


class CallableAgent:
    """Adapts a plain function ``f(battle) -> BattleOrder``."""

    def __init__(self, function: Callable[[AbstractBattle], BattleOrder]):
        self.function = function
        self.name = getattr(function, "__name__", "callable")

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        return self.function(battle)
