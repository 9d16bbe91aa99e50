"""The distilled value network: a feature encoding of world-model states and a small MLP.

The search scores *world-model states* at its leaves (:class:`~pokegym.world.state.BattleState`,
built once per decision from the live battle and then advanced by the transition model),
so the network reads a fixed-length encoding of that state, computed the same way for a
state built from a live battle (:func:`~pokegym.world.state.state_from_battle`) and for
a state thousands of transitions deep in a search. Side 0 is the player the state was
built for; every feature is from that player's point of view.

The encoding (:data:`STATE_FEATURES`, :func:`state_layout_table`) has a field block, one
block per side (team totals, hazards and screens, the active Pokémon in detail, the
bench pooled) and a matchup block (speed, best type-weighted attack each way, the
hand-written evaluator's value and duel term). Everything is plain arithmetic over the
state and Showdown's tables: no damage rolls except through the hand-written evaluator,
whose damage calculations the transition model caches.

Checkpoints are a ``model.safetensors`` file plus ``config.json`` (no pickles anywhere).
Inference runs in NumPy, so playing the ``distilled`` agent does not import torch; the
torch module (:func:`torch_network`) is only built for training.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pokegym.errors import PokegymError
from pokegym.files import atomic_write_json
from pokegym.world.data import TYPES, Dex
from pokegym.world.state import BattleState, MonState, SideState
from pokegym.world.transition import Action, TransitionModel
from policies.search import HeuristicEvaluator

STATE_ENCODER_VERSION = 1
CHECKPOINT_FORMAT = "pokegym-distilled"
CHECKPOINT_VERSION = 1

WEATHER_GROUPS = {
    "sunnyday": 0, "desolateland": 0, "raindance": 1, "primordialsea": 1, "sandstorm": 2,
    "snowscape": 3, "hail": 3, "deltastream": 4,
}  # fmt: skip
TERRAINS = ("electricterrain", "grassyterrain", "mistyterrain", "psychicterrain")
STATUSES = ("brn", "par", "psn", "tox", "slp", "frz")
TYPE_INDEX = {t: i for i, t in enumerate(TYPES)}
# Scale of the type-weighted attack figure (base power x STAB x effectiveness x A/D).
POWER_SCALE = 200.0

# (name, width, description): the layout, in order.
FIELD_FEATURES: list[tuple[str, int, str]] = [
    ("weather", 5, "sun, rain, sand, snow/hail, strong winds (one-hot)"),
    ("weather_turns", 1, "turns left / 8"),
    ("terrain", 4, "electric, grassy, misty, psychic (one-hot)"),
    ("terrain_turns", 1, "turns left / 8"),
    ("trick_room", 1, "turns left / 5"),
    ("gravity", 1, "turns left / 5"),
    ("turn", 1, "turn / 50, capped at 1"),
]
SIDE_FEATURES: list[tuple[str, int, str]] = [
    ("alive", 1, "Pokémon not fainted / 6 (unseen opponents count as alive)"),
    ("hp_total", 1, "sum of HP fractions / 6 (unseen opponents count as full)"),
    ("unseen", 1, "opponent Pokémon never seen / 6 (0 for side 0)"),
    ("statused", 1, "Pokémon with a major status / 6"),
    ("hazards", 4, "stealth rock, spikes / 3, toxic spikes / 2, sticky web"),
    ("screens", 4, "reflect, light screen, aurora veil / 5 and tailwind / 4 (turns left)"),
    ("tera_used", 1, "1 if this side has terastallized"),
    ("active_hp", 1, "active Pokémon's HP fraction"),
    ("active_level", 1, "level / 100"),
    ("active_stats", 5, "atk, def, spa, spd, spe / 400 (level-scaled stats)"),
    ("active_boosts", 7, "stat stages / 6 (atk, def, spa, spd, spe, accuracy, evasion)"),
    ("active_status", 6, "brn, par, psn, tox, slp, frz (one-hot)"),
    ("active_status_turns", 1, "sleep turns left or toxic counter / 4"),
    ("active_types", 18, "current types (Tera type once terastallized), one-hot"),
    ("active_tera", 2, "terastallized; can still terastallize"),
    ("active_flags", 3, "choice-locked; protected last turn; holds a Choice item"),
    (
        "active_attack",
        2,
        "best type-weighted attack on the other active, and its mean over attacking moves (/ 200)",
    ),
    ("bench_count", 1, "bench Pokémon alive / 5"),
    ("bench_hp", 1, "sum of bench HP fractions / 5"),
    ("bench_types", 18, "bench types weighted by HP fraction / 5"),
    ("bench_attack", 1, "best type-weighted attack of a bench Pokémon on the other active"),
    ("bench_defence", 1, "lowest weakness of a bench Pokémon to the other active's moves / 4"),
]
MATCHUP_FEATURES: list[tuple[str, int, str]] = [
    ("speed", 3, "side 0 faster; log speed ratio / 2 (clipped to ±1); Trick Room inverts"),
    ("heuristic", 2, "the hand-written evaluator's win chance and duel term (side 0)"),
]


def _width(table: list[tuple[str, int, str]]) -> int:
    return sum(width for _, width, _ in table)


FIELD_SIZE = _width(FIELD_FEATURES)
SIDE_SIZE = _width(SIDE_FEATURES)
MATCHUP_SIZE = _width(MATCHUP_FEATURES)
STATE_FEATURES = FIELD_SIZE + 2 * SIDE_SIZE + MATCHUP_SIZE
HEURISTIC_INDEX = STATE_FEATURES - 2  # the hand-written evaluator's win chance


def state_layout_table() -> str:
    """Every slot of the state encoding, with its offset (for the docs)."""
    rows = []
    offset = 0
    for block, table in (("field", FIELD_FEATURES), ("side 0", SIDE_FEATURES),
                         ("side 1", SIDE_FEATURES), ("matchup", MATCHUP_FEATURES)):  # fmt: skip
        for name, width, description in table:
            rows.append(f"{offset:4d}  {block:8s} {name:22s} {width:3d}  {description}")
            offset += width
    return "\n".join(rows)


# -------------------------------------------------------------------- encoder
class StateEncoder:
    """World-model state -> float32 vector of :data:`STATE_FEATURES` values.

    Args:
        model: the transition model of the decision (its Dex gives types and moves;
            its damage cache is shared with the search and the hand-written evaluator).
    """

    def __init__(self, model: TransitionModel):
        self.model = model
        self.dex: Dex = model.dex
        self.heuristic = HeuristicEvaluator(model)
        self._move_cache: dict[tuple[str, tuple[str, ...], tuple[str, ...]], tuple[float, int]] = {}

    @property
    def size(self) -> int:
        return STATE_FEATURES

    def encode_many(self, states: Sequence[BattleState]) -> np.ndarray:
        out = np.zeros((len(states), STATE_FEATURES), dtype=np.float32)
        for i, state in enumerate(states):
            out[i] = self.encode(state)
        return out

    def encode(self, state: BattleState) -> np.ndarray:
        values: list[float] = []
        weather = [0.0] * 5
        if state.weather in WEATHER_GROUPS:
            weather[WEATHER_GROUPS[state.weather]] = 1.0
        terrain = [float(state.terrain == t) for t in TERRAINS]
        values += weather
        values.append(min(state.weather_turns, 8) / 8.0)
        values += terrain
        values.append(min(state.terrain_turns, 8) / 8.0)
        values.append(min(state.trick_room, 5) / 5.0)
        values.append(min(state.gravity, 5) / 5.0)
        values.append(min(state.turn, 50) / 50.0)
        unseen = int(state.notes.get("unseen", 0) or 0) if state.notes else 0
        ours, theirs = state.sides
        values += self._side(ours, theirs, 0)
        values += self._side(theirs, ours, unseen)
        values += self._matchup(state)
        return np.asarray(values, dtype=np.float32)

    # -------------------------------------------------------------- blocks
    def _side(self, side: SideState, other: SideState, unseen: int) -> list[float]:
        mons = side.mons
        alive = [m for m in mons if m.hp > 0]
        values = [
            (len(alive) + unseen) / 6.0,
            (sum(m.hp_fraction for m in alive) + unseen) / 6.0,
            unseen / 6.0,
            sum(1 for m in alive if m.status) / 6.0,
            float(side.stealth_rock), side.spikes / 3.0, side.toxic_spikes / 2.0,
            float(side.sticky_web),
            min(side.reflect, 5) / 5.0, min(side.light_screen, 5) / 5.0,
            min(side.aurora_veil, 5) / 5.0, min(side.tailwind, 4) / 4.0,
            float(side.tera_used),
        ]  # fmt: skip
        active = side.active_mon
        foe = other.active_mon
        values.append(active.hp_fraction)
        values.append(active.level / 100.0)
        values += [s / 400.0 for s in active.stats[1:]]
        values += [b / 6.0 for b in active.boosts]
        values += [float(active.status == s) for s in STATUSES]
        values.append(min(active.status_turns, 4) / 4.0 if active.status else 0.0)
        types = [0.0] * 18
        for t in active.current_types():
            if t in TYPE_INDEX:
                types[TYPE_INDEX[t]] = 1.0
        values += types
        can_tera = not side.tera_used and bool(active.tera_type) and not active.terastallized
        values += [float(active.terastallized), float(can_tera)]
        values += [
            float(bool(active.choice_lock)),
            float(active.protect_streak > 0),
            float(active.item in ("choiceband", "choicespecs", "choicescarf")),
        ]
        best, mean = self._attack(active, foe) if active.hp > 0 and foe.hp > 0 else (0.0, 0.0)
        values += [min(best, 2.0), min(mean, 2.0)]
        bench = [m for i, m in enumerate(mons) if i != side.active and m.hp > 0]
        values.append(len(bench) / 5.0)
        values.append(sum(m.hp_fraction for m in bench) / 5.0)
        bench_types = [0.0] * 18
        for m in bench:
            for t in m.types:
                if t in TYPE_INDEX:
                    bench_types[TYPE_INDEX[t]] += m.hp_fraction / 5.0
        values += bench_types
        bench_attack = 0.0
        bench_defence = 1.0 if not bench else 4.0
        if foe.hp > 0:
            foe_types = self._attack_types(foe)
            for m in bench:
                bench_attack = max(bench_attack, self._attack(m, foe)[0])
                if foe_types:
                    worst = max(self.dex.effectiveness(t, m.types) for t in foe_types)
                    bench_defence = min(bench_defence, worst)
        values.append(min(bench_attack, 2.0))
        values.append(min(bench_defence, 4.0) / 4.0)
        return values

    def _matchup(self, state: BattleState) -> list[float]:
        ours, theirs = state.sides[0].active_mon, state.sides[1].active_mon
        if ours.hp <= 0 or theirs.hp <= 0:
            speed = [0.5, 0.0, float(state.trick_room > 0)]
        else:
            s0 = max(1.0, self.model.speed(state, 0))
            s1 = max(1.0, self.model.speed(state, 1))
            faster = (s0 > s1) != (state.trick_room > 0)
            ratio = max(-1.0, min(1.0, math.log(s0 / s1) / 2.0))
            speed = [float(faster), ratio, float(state.trick_room > 0)]
        heuristic, duel = self.heuristic.value_and_duel(state)
        return [*speed, heuristic, duel]

    def _attack_types(self, mon: MonState) -> list[str]:
        types = []
        for move in mon.moves:
            entry = self.dex.moves.get(move)
            if entry and entry.get("category") != "Status" and entry.get("basePower", 0):
                types.append(entry["type"])
        return types

    def _attack(self, attacker: MonState, defender: MonState) -> tuple[float, float]:
        """(best, mean) type-weighted attack of ``attacker``'s moves on ``defender``."""
        attacker_types = attacker.current_types()
        defender_types = defender.current_types()
        powers = []
        for move in attacker.moves:
            key = (move, attacker_types, defender_types)
            cached = self._move_cache.get(key)
            if cached is None:
                cached = self._move_cache[key] = self._move_power(move, attacker, defender)
            power, category = cached
            if category == 0:
                continue
            if category == 1:
                ratio = _stat(attacker, 1) / max(1.0, _stat(defender, 2))
            else:
                ratio = _stat(attacker, 3) / max(1.0, _stat(defender, 4))
            powers.append(power * ratio / POWER_SCALE)
        if not powers:
            return 0.0, 0.0
        return max(powers), sum(powers) / len(powers)

    def _move_power(self, move: str, attacker: MonState, defender: MonState) -> tuple[float, int]:
        entry = self.dex.moves.get(move)
        if not entry or entry.get("category") == "Status":
            return 0.0, 0
        base = float(entry.get("basePower", 0) or 0)
        if base <= 1:
            base = 60.0  # variable-power moves (Low Kick, Gyro Ball, ...): a typical value
        move_type = entry.get("type", "???")
        effectiveness = self.dex.effectiveness(move_type, defender.current_types())
        stab = 1.5 if move_type in attacker.current_types() or move_type in attacker.types else 1.0
        accuracy = entry.get("accuracy", 100)
        accuracy = 1.0 if accuracy is True else float(accuracy) / 100.0
        category = 1 if entry.get("category") == "Physical" else 2
        return base * stab * effectiveness * accuracy, category


def _stat(mon: MonState, index: int) -> float:
    stage = mon.boosts[index - 1]
    factor = (2 + stage) / 2 if stage >= 0 else 2 / (2 - stage)
    return mon.stats[index] * factor


def action_label(state: BattleState, side: int, action: Action) -> str:
    """A name for a world-model action that means the same thing in every state:
    ``move:<id>``, ``move:<id>:tera`` or ``switch:<species>``."""
    kind, arg, tera = action
    if kind == "switch":
        return f"switch:{state.sides[side].mons[int(arg)].species}"  # type: ignore[arg-type]
    if kind == "move":
        return f"move:{arg}:tera" if tera else f"move:{arg}"
    return "pass"


# -------------------------------------------------------------------- network
@dataclass
class NetworkConfig:
    """The architecture (saved in ``config.json`` next to the weights)."""

    state_features: int = STATE_FEATURES
    hidden: tuple[int, ...] = (128, 64)
    llm_head: bool = False
    observation_features: int = 0  # 0: no policy-prior head
    policy_hidden: int = 128
    n_actions: int = 15
    state_encoder_version: int = STATE_ENCODER_VERSION
    observation_version: int = 0
    residual: bool = True  # the win logit corrects the hand-written evaluator's logit
    dropout: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "hidden": list(self.hidden)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NetworkConfig:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["hidden"] = tuple(known.get("hidden", (128, 64)))
        return cls(**known)


def torch_network(config: NetworkConfig) -> Any:
    """The torch module with the parameter names the checkpoint uses (imports torch)."""
    import torch
    from torch import nn

    class DistilledNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("value_mean", torch.zeros(config.state_features))
            self.register_buffer("value_std", torch.ones(config.state_features))
            layers: list[nn.Module] = []
            width = config.state_features
            for hidden in config.hidden:
                layers += [nn.Linear(width, hidden), nn.ReLU(), nn.Dropout(config.dropout)]
                width = hidden
            self.value_trunk = nn.Sequential(*layers)
            self.value_head = nn.Linear(width, 1)
            # Residual mode: logit = scale * logit(hand-written value) + head(trunk); the head
            # starts at zero, so training starts from the hand-written evaluator.
            self.value_scale = nn.Parameter(torch.ones(1))
            if config.residual:
                nn.init.zeros_(self.value_head.weight)
                nn.init.zeros_(self.value_head.bias)
            self.llm_head = nn.Linear(width, 1) if config.llm_head else None
            self.policy: nn.Module | None = None
            if config.observation_features:
                self.register_buffer("policy_mean", torch.zeros(config.observation_features))
                self.register_buffer("policy_std", torch.ones(config.observation_features))
                self.policy = nn.Sequential(
                    nn.Linear(config.observation_features, config.policy_hidden), nn.ReLU(),
                    nn.Linear(config.policy_hidden, config.n_actions),
                )  # fmt: skip

        def forward(self, states: Any) -> tuple[Any, Any]:
            """(win logit, LLM-score logit or None) per state row."""
            hidden = self.value_trunk((states - self.value_mean) / self.value_std)
            win = self.value_head(hidden).squeeze(-1)
            if config.residual:
                h = states[:, HEURISTIC_INDEX].clamp(1e-4, 1 - 1e-4)
                win = win + self.value_scale * torch.log(h / (1 - h))
            llm = self.llm_head(hidden).squeeze(-1) if self.llm_head is not None else None
            return win, llm

        def policy_logits(self, observations: Any) -> Any:
            assert self.policy is not None
            return self.policy((observations - self.policy_mean) / self.policy_std)

    return DistilledNetwork()


class CheckpointError(PokegymError):
    """A checkpoint is missing, corrupt or was made for another encoding."""


@dataclass
class DistilledNetwork:
    """NumPy inference over a checkpoint's weights (see :func:`load_checkpoint`)."""

    config: NetworkConfig
    weights: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        w = self.weights
        self._mean = w["value_mean"].astype(np.float32)
        self._inv_std = (1.0 / w["value_std"]).astype(np.float32)
        self._layers = []
        for i in range(len(self.config.hidden)):
            self._layers.append((w[f"value_trunk.{3 * i}.weight"].T.copy(),
                                 w[f"value_trunk.{3 * i}.bias"]))  # fmt: skip
        self._scale = float(w["value_scale"][0]) if self.config.residual else 0.0
        self._head = (w["value_head.weight"].T.copy(), w["value_head.bias"])
        self._llm = (
            (w["llm_head.weight"].T.copy(), w["llm_head.bias"]) if self.config.llm_head else None
        )
        self._policy = None
        if self.config.observation_features:
            self._policy = (
                w["policy_mean"], 1.0 / w["policy_std"],
                w["policy.0.weight"].T.copy(), w["policy.0.bias"],
                w["policy.2.weight"].T.copy(), w["policy.2.bias"],
            )  # fmt: skip

    def _hidden(self, features: np.ndarray) -> np.ndarray:
        x = (features - self._mean) * self._inv_std
        for weight, bias in self._layers:
            x = np.maximum(x @ weight + bias, 0.0)
        return x

    def embed(self, features: np.ndarray) -> np.ndarray:
        """The trunk's last hidden layer per row: the state embedding of the memory."""
        return np.ascontiguousarray(self._hidden(np.atleast_2d(features)), dtype=np.float32)

    def win_probability(self, features: np.ndarray) -> np.ndarray:
        """Side 0's chance to win per row of state features."""
        features = np.atleast_2d(features)
        hidden = self._hidden(features)
        logits = (hidden @ self._head[0] + self._head[1])[:, 0]
        if self._scale:
            h = np.clip(features[:, HEURISTIC_INDEX], 1e-4, 1 - 1e-4)
            logits = logits + self._scale * np.log(h / (1 - h))
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))

    def llm_score(self, features: np.ndarray) -> np.ndarray | None:
        """The predicted LLM leaf score per row, or None without that head."""
        if self._llm is None:
            return None
        hidden = self._hidden(np.atleast_2d(features))
        logits = (hidden @ self._llm[0] + self._llm[1])[:, 0]
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))

    def policy_logits(self, observation: np.ndarray) -> np.ndarray | None:
        """Logits over the action layout, or None without the policy-prior head."""
        if self._policy is None:
            return None
        mean, inv_std, w1, b1, w2, b2 = self._policy
        x = (np.atleast_2d(observation) - mean) * inv_std
        return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2  # type: ignore[no-any-return]


def save_checkpoint(
    folder: str | Path, config: NetworkConfig, weights: dict[str, np.ndarray], meta: dict[str, Any]
) -> Path:
    """Write ``model.safetensors`` and ``config.json`` into ``folder`` (each atomically)."""
    import os
    import tempfile

    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(fd)
    try:
        save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}, tmp)
        os.replace(tmp, folder / "model.safetensors")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    document = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION,
                "network": config.to_json(), **meta}  # fmt: skip
    atomic_write_json(folder / "config.json", document, indent=2, sort_keys=True)
    return folder


def load_checkpoint(folder: str | Path) -> DistilledNetwork:
    """Load a checkpoint folder (``model.safetensors`` + ``config.json``), never unpickling.

    Raises:
        CheckpointError: a file is missing or unreadable, or the checkpoint was made for
            another version of the state encoding (retrain with ``pokegym distill``).
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    folder = Path(folder)
    config_path, weights_path = folder / "config.json", folder / "model.safetensors"
    for path in (config_path, weights_path):
        if not path.is_file():
            raise CheckpointError(
                f"No {path.name} in {folder}: a distilled checkpoint is a folder with "
                "model.safetensors and config.json, as written by `pokegym distill --out`."
            )
    try:
        document = json.loads(config_path.read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{config_path} is not readable JSON ({exc}).") from exc
    if not isinstance(document, dict):
        raise CheckpointError(
            f"{config_path} holds a JSON {type(document).__name__}, not a checkpoint's "
            "configuration (an object); the folder is not a distilled checkpoint."
        )
    if document.get("format") != CHECKPOINT_FORMAT or document.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{config_path} is not a version-{CHECKPOINT_VERSION} distilled checkpoint "
            f"(format {document.get('format')!r}, version {document.get('version')!r})."
        )
    config = _network_config(document.get("network", {}), config_path)
    if config.state_encoder_version != STATE_ENCODER_VERSION:
        raise CheckpointError(
            f"{folder} was trained on state encoding v{config.state_encoder_version}; this "
            f"code encodes v{STATE_ENCODER_VERSION}. Collect again and retrain with "
            "`pokegym distill`."
        )
    if config.state_features != STATE_FEATURES:
        raise CheckpointError(
            f"{folder} expects {config.state_features} state features; the encoder gives "
            f"{STATE_FEATURES}. Retrain with `pokegym distill`."
        )
    try:
        weights = load_file(str(weights_path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(f"{weights_path} is corrupt or unreadable ({exc}).") from exc
    _check_shapes(config, weights, weights_path, config_path)
    try:
        return DistilledNetwork(config, weights, {k: v for k, v in document.items()
                                                  if k not in ("network",)})  # fmt: skip
    except KeyError as exc:
        raise CheckpointError(f"{weights_path} lacks the tensor {exc}; retrain.") from exc


def _network_config(data: Any, config_path: Path) -> NetworkConfig:
    """The ``network`` entry of a checkpoint's config.json, with every field's type checked."""
    if not isinstance(data, dict):
        raise CheckpointError(
            f'"network" in {config_path} is a JSON {type(data).__name__}, not an object of '
            "layer sizes; the file is damaged or was not written by `pokegym distill`."
        )
    defaults = NetworkConfig()
    for name, value in data.items():
        if name not in NetworkConfig.__dataclass_fields__:
            continue
        default = getattr(defaults, name)
        if isinstance(default, tuple):
            good = isinstance(value, list) and all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
            )
        elif isinstance(default, bool):
            good = isinstance(value, bool)
        elif isinstance(default, int):
            good = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:
            good = isinstance(value, int | float) and not isinstance(value, bool)
        if not good:
            kind = "a list of positive integers" if isinstance(default, tuple) else (
                type(default).__name__)  # fmt: skip
            raise CheckpointError(
                f'"network.{name}" in {config_path} is {value!r}, expected {kind}; the file is '
                "damaged or was not written by `pokegym distill`."
            )
    return NetworkConfig.from_json(data)


def _check_shapes(
    config: NetworkConfig, weights: dict[str, np.ndarray], weights_path: Path, config_path: Path
) -> None:
    """The value trunk's tensors must have the sizes config.json states."""
    widths = [config.state_features, *config.hidden]
    for i in range(len(config.hidden)):
        name = f"value_trunk.{3 * i}.weight"
        tensor = weights.get(name)
        if tensor is None:
            raise CheckpointError(
                f"{weights_path} lacks the tensor {name!r} that {config_path} describes "
                "(hidden layers do not match); retrain or restore the pair of files."
            )
        if tensor.shape != (widths[i + 1], widths[i]):
            raise CheckpointError(
                f"{weights_path}: {name} has shape {tuple(tensor.shape)}, but {config_path} "
                f"describes ({widths[i + 1]}, {widths[i]}); the two files do not belong "
                "together. Retrain or restore the pair."
            )
    if f"value_trunk.{3 * len(config.hidden)}.weight" in weights:
        raise CheckpointError(
            f"{weights_path} has more hidden layers than {config_path} describes; the two "
            "files do not belong together. Retrain or restore the pair."
        )


class EnsembleNetwork:
    """A checkpoint and the members trained beside it, averaged.

    The win probability is the mean over the members' (one network trained with another
    seed each: another held-out split, initialisation and batch order); the embedding,
    the LLM score and the policy prior are the primary checkpoint's, so an experience
    memory built for it still matches. A single network is right on average but noisy on
    single positions and the search picks the maximum over noisy values; averaging
    members lowers that noise for a few more matrix products per batch (on 200 battles
    against ``abyssal`` a five-network average played no measurably better:
    docs/distilled.md).
    """

    def __init__(self, primary: DistilledNetwork, members: Sequence[DistilledNetwork]):
        self.primary = primary
        self.members = [primary, *members]
        self.config = primary.config
        self.meta = primary.meta

    def win_probability(self, features: np.ndarray) -> np.ndarray:
        values = [member.win_probability(features) for member in self.members]
        return np.mean(values, axis=0)  # type: ignore[no-any-return]

    def embed(self, features: np.ndarray) -> np.ndarray:
        return self.primary.embed(features)

    def llm_score(self, features: np.ndarray) -> np.ndarray | None:
        return self.primary.llm_score(features)

    def policy_logits(self, observation: np.ndarray) -> np.ndarray | None:
        return self.primary.policy_logits(observation)


MEMBERS_FOLDER = "members"
"""Sub-folder of a checkpoint holding further checkpoints averaged with it."""


def load_ensemble(folder: str | Path) -> DistilledNetwork | EnsembleNetwork:
    """The checkpoint in ``folder``, averaged with those under ``folder/members/`` if any.

    Raises:
        CheckpointError: as :func:`load_checkpoint`, for the checkpoint or any member
            (the message names the member's folder).
    """
    folder = Path(folder)
    primary = load_checkpoint(folder)
    member_root = folder / MEMBERS_FOLDER
    if not member_root.is_dir():
        return primary
    paths = sorted(path for path in member_root.iterdir() if path.is_dir())
    members = [load_checkpoint(path) for path in paths]  # each names its folder on error
    return EnsembleNetwork(primary, members) if members else primary


def default_checkpoint(battle_format: str = "gen9randombattle") -> Path:
    """The checkpoint shipped with the package for ``battle_format``."""
    return Path(__file__).parent / "checkpoints" / f"distilled-{battle_format}"


def agent_network(checkpoint: str | Path | None) -> DistilledNetwork:
    """The value network an agent's ``checkpoint=`` option names (default: the shipped one).

    Raises:
        CheckpointError: no folder there (the message says how to train one), or
            :func:`load_checkpoint`'s errors.
    """
    folder = Path(checkpoint) if checkpoint else default_checkpoint("gen9randombattle")
    if not folder.exists():
        raise CheckpointError(
            f"No value-network checkpoint at {folder}. Train one with "
            "`pokegym distill --out DIR`, then pass checkpoint=DIR."
        )
    return load_checkpoint(folder)


__all__ = [
    "STATE_FEATURES",
    "CheckpointError",
    "DistilledNetwork",
    "EnsembleNetwork",
    "NetworkConfig",
    "StateEncoder",
    "action_label",
    "agent_network",
    "default_checkpoint",
    "load_checkpoint",
    "load_ensemble",
    "save_checkpoint",
    "state_layout_table",
    "torch_network",
]
