"""What the LLM agents share: one loaded model per process, usage accounting, the turn
clock, the safe fallback order, and labels <-> orders.

* :func:`shared_model`: models are built lazily on first use and shared by every agent
  instance of the process that asks for the same name and options (the arena builds
  one agent per side and per battle in flight; the weights are loaded once).
* :class:`UsageMeter`: the cost of the model calls of one decision, reported to the arena
  through ``pop_usage()`` (tokens in/out, cached tokens, calls, model seconds, fallbacks).
* :class:`TurnClock`: the time a decision may take under Showdown's battle timer as the
  arena reproduces it (a bank of ``bank`` seconds, ``increment`` added per decision): the
  agent keeps its own estimate of its bank per battle and spends at most the increment
  plus a tenth of the surplus, minus a safety margin.
* :func:`fallback_order`: the deterministic answer when the model fails or time runs out:
  the highest base-power move, else the safest switch (the one the opposing active's
  types hit least, then the healthiest).
"""

from __future__ import annotations

import logging
import time
from abc import abstractmethod
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from poke_env.battle import AbstractBattle, Pokemon
from poke_env.player.battle_order import BattleOrder, DefaultBattleOrder, SingleBattleOrder

from pokegym.actions import ActionCodec
from pokegym.llm import Cost, LanguageModel, call_deadline, make_model
from pokegym.text import GameNames, LegalAction, ProtocolRecorder, history_text
from policies.base import Policy

log = logging.getLogger(__name__)

DEFAULT_MODEL = "qwen-0.5b"

_MODELS: dict[tuple[str, tuple[tuple[str, Any], ...]], LanguageModel] = {}


def _freeze(value: Any) -> Hashable:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value if isinstance(value, Hashable) else repr(value)


def shared_model(name: str, options: Mapping[str, Any] | None = None) -> LanguageModel:
    """The model ``make_model(name, **options)``, built once per process and shared."""
    options = dict(options or {})
    key = (name, tuple(sorted((k, _freeze(v)) for k, v in options.items())))
    model = _MODELS.get(key)
    if model is None:
        model = _MODELS[key] = make_model(name, **options)
    return model


def _model_options(
    model_options: Mapping[str, Any] | None, extra: Mapping[str, Any]
) -> dict[str, Any]:
    """Backend options from ``model_options`` plus agent-spec keys ``model_<option>``.

    Agent specs are flat (``pokechamp:model=qwen-0.5b,model_threads=2``), so an option of
    the backend is written with the ``model_`` prefix; any other unknown key is an error.
    """
    options = dict(model_options or {})
    for key, value in extra.items():
        if not key.startswith("model_"):
            raise TypeError(
                f"Unknown option {key!r}. Backend options are given as model_<name>=value "
                "(e.g. model_threads=2) or as model_options={...}."
            )
        options[key.removeprefix("model_")] = value
    return options


# --------------------------------------------------------------------- usage
@dataclass
class UsageMeter:
    """Model cost and fallbacks since the last :meth:`pop` (one decision in the arena)."""

    cost: Cost = field(default_factory=Cost)
    fallbacks: int = 0
    deadline_misses: int = 0

    def add(self, cost: Cost) -> None:
        self.cost = self.cost + cost

    def pop(self) -> dict[str, float]:
        usage = {
            "tokens_in": float(self.cost.tokens_in),
            "tokens_out": float(self.cost.tokens_out),
            "cached_tokens": float(self.cost.cached_tokens),
            "calls": float(self.cost.calls),
            "model_s": round(self.cost.seconds, 4),
            "fallbacks": float(self.fallbacks),
            "deadline_misses": float(self.deadline_misses),
        }
        self.cost, self.fallbacks, self.deadline_misses = Cost(), 0, 0
        return usage


class ModelHandle:
    """A lazily built shared model, the usage meter, and running call-time estimates.

    ``estimate(kind, units)`` is the expected seconds of a call of that kind (an
    exponential average of the seconds per unit seen so far, 0 before the first), so an
    agent can skip a call that would not end before its deadline.
    """

    def __init__(
        self,
        model: str | LanguageModel = DEFAULT_MODEL,
        options: Mapping[str, Any] | None = None,
    ):
        self.name = model if isinstance(model, str) else str(getattr(model, "name", "model"))
        self._model: LanguageModel | None = None if isinstance(model, str) else model
        self.options = dict(options or {})
        self.usage = UsageMeter()
        self._rates: dict[str, float] = {}

    @property
    def model(self) -> LanguageModel:
        if self._model is None:
            self._model = shared_model(self.name, self.options)
        return self._model

    def estimate(self, kind: str, units: float = 1.0) -> float:
        """Expected seconds of a call of ``kind`` over ``units`` (e.g. leaves); a kind not
        seen yet is expected to take as long as the slowest call seen so far."""
        rate = self._rates.get(kind)
        if rate is None:
            return max(self._rates.values(), default=0.0)
        return rate * units

    def record(self, kind: str, cost: Cost, seconds: float, units: float = 1.0) -> None:
        self.usage.add(cost)
        rate = seconds / max(units, 1e-9)
        old = self._rates.get(kind)
        self._rates[kind] = rate if old is None else 0.5 * old + 0.5 * rate

    def affordable(self, kind: str, deadline: Deadline, units: float = 1.0) -> bool:
        """Whether a call of ``kind`` is expected to end before ``deadline``.

        A refused call lowers its estimate a little, so a model that was slow once (a busy
        machine) is tried again later instead of never.
        """
        if deadline.allows(1.1 * self.estimate(kind, units)):
            return True
        if kind in self._rates:
            self._rates[kind] *= 0.85
        self.usage.deadline_misses += 1
        return False


# --------------------------------------------------------------------- clock
@dataclass
class TurnClock:
    """Seconds a decision may take, from Showdown's timer as the arena plays it.

    Per battle the clock keeps an estimate of the agent's bank: ``bank`` at the start,
    plus ``increment`` and minus the time taken at every decision. A decision gets
    ``min(max_seconds, increment + share · max(0, bank − increment), bank + increment)``
    minus ``margin`` (never less than ``minimum``). The margin covers what cannot be
    interrupted (one model call, building the order).
    """

    bank: float = 150.0
    increment: float = 15.0
    margin: float = 3.0
    share: float = 0.1
    max_seconds: float | None = None
    minimum: float = 0.5
    _banks: dict[str, float] = field(default_factory=dict)

    def budget(self, battle_tag: str) -> float:
        bank = self._banks.get(battle_tag, self.bank)
        seconds = min(
            self.increment + self.share * max(0.0, bank - self.increment), bank + self.increment
        )
        if self.max_seconds is not None:
            seconds = min(seconds, self.max_seconds)
        return max(self.minimum, seconds - self.margin)

    def spent(self, battle_tag: str, seconds: float) -> None:
        if len(self._banks) > 512 and battle_tag not in self._banks:
            self._banks.pop(next(iter(self._banks)))
        bank = self._banks.get(battle_tag, self.bank)
        self._banks[battle_tag] = bank + self.increment - seconds


class Deadline:
    """A ``time.monotonic()`` instant with helpers."""

    def __init__(self, at: float):
        self.at = at

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def left(self) -> float:
        return self.at - time.monotonic()

    def allows(self, seconds: float) -> bool:
        """Whether ``seconds`` of work still end before the deadline."""
        return self.left() > seconds


# --------------------------------------------------------------------- orders
def safe_switch(battle: AbstractBattle) -> Pokemon | None:
    """The available switch the opposing active's types hit least (then the healthiest)."""
    switches = list(battle.available_switches)
    if not switches:
        return None
    opponent = battle.opponent_active_pokemon
    types = [t for t in (opponent.types if opponent is not None else ()) if t is not None]

    def risk(mon: Pokemon) -> tuple[float, float]:
        worst = max((mon.damage_multiplier(t) for t in types), default=1.0)
        return (worst, -mon.current_hp_fraction)

    return min(switches, key=risk)


def fallback_order(battle: AbstractBattle) -> BattleOrder:
    """The highest base-power move, else the safest switch, else Showdown's default."""
    moves = battle.available_moves
    if moves:
        return SingleBattleOrder(max(moves, key=lambda move: move.base_power))
    switch = safe_switch(battle)
    if switch is not None:
        return SingleBattleOrder(switch)
    return DefaultBattleOrder()


def fallback_index(battle: AbstractBattle, actions: list[LegalAction], codec: ActionCodec) -> int:
    """Index in ``actions`` of :func:`fallback_order` (0 when it is not listed)."""
    try:
        wanted = codec.from_order(fallback_order(battle), battle)
    except Exception:  # an order the codec cannot place: keep the first action
        return 0
    for i, action in enumerate(actions):
        if action.action == wanted:
            return i
    return 0


def codec_for(battle: AbstractBattle) -> ActionCodec:
    return ActionCodec("terastallize" if battle.gen >= 9 else None)


def battle_log_text(battle: AbstractBattle, limit: int = 12_000) -> str:
    """The battle so far as sentences (species and move names only), last ``limit`` chars."""
    recorder = ProtocolRecorder.attach(battle)
    text = history_text(
        recorder.messages, battle.player_role or "p1", GameNames(battle.gen), 10_000, battle
    )
    return text[-limit:]


# --------------------------------------------------------------------- agents
class LLMPolicy(Policy):
    """The frame of the LLM agents: the model (lazy, shared), usage, clock, fallbacks.

    Subclasses implement :meth:`decide`; :meth:`choose` answers forced choices without
    the model, gives :meth:`decide` its deadline, and charges the time to the clock.

    Args:
        model: a name for :func:`pokegym.llm.make_model` (``"qwen-0.5b"``, ``"scripted"``,
            ``"openai"``, ``"transformers:<folder>"``) or a model object.
        model_options: options for the backend (also accepted as ``model_<name>=``).
        reasoning: let the model write a short analysis before each answer.
        reasoning_tokens: the analysis' length limit.
        time_limit: seconds per decision; None: from the turn clock.
        clock_bank, clock_increment, clock_margin: the turn clock (Showdown's timer).
    """

    name = "llm"

    def __init__(
        self,
        seed: int | None = None,
        *,
        model: str | LanguageModel = DEFAULT_MODEL,
        model_options: dict[str, Any] | None = None,
        reasoning: bool = False,
        reasoning_tokens: int = 96,
        time_limit: float | None = None,
        clock_bank: float = 150.0,
        clock_increment: float = 15.0,
        clock_margin: float = 3.0,
        **extra: Any,
    ):
        super().__init__(seed)
        self.llm = ModelHandle(model, _model_options(model_options, extra))
        self.reasoning = bool(reasoning)
        self.reasoning_tokens = int(reasoning_tokens)
        if time_limit is not None and time_limit <= 0:
            raise ValueError("time_limit must be positive (seconds per decision) or None")
        self.time_limit = time_limit
        self.clock = TurnClock(clock_bank, clock_increment, clock_margin)

    @property
    def model(self) -> LanguageModel:
        """The language model, built (once per process and options) on first use."""
        return self.llm.model

    def pop_usage(self) -> dict[str, float]:
        """Model cost since the last call (the arena reads it after each decision)."""
        return self.llm.usage.pop()

    def decision_seconds(self, battle: AbstractBattle) -> float:
        """How long this decision may take."""
        if self.time_limit is not None:
            return self.time_limit
        return self.clock.budget(battle.battle_tag)

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        start = time.monotonic()
        try:
            if not battle.available_moves and not battle.available_switches:
                return DefaultBattleOrder()
            if len(battle.valid_orders) == 1:
                return battle.valid_orders[0]
            deadline = Deadline(start + self.decision_seconds(battle))
            with call_deadline(deadline.at):  # a model call past it stops (LLMError)
                return self.decide(battle, deadline)
        finally:
            self.clock.spent(battle.battle_tag, time.monotonic() - start)

    @abstractmethod
    def decide(self, battle: AbstractBattle, deadline: Deadline) -> BattleOrder:
        """The order for ``battle``, in time for ``deadline`` (each agent's own rule)."""

    def fallback(self, battle: AbstractBattle) -> BattleOrder:
        """:func:`fallback_order`, counted in the usage."""
        self.llm.usage.fallbacks += 1
        return fallback_order(battle)
