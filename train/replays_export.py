"""Replay decisions as a collection: the rows ``pokegym collect`` writes, read by
``pokegym distill``.

``pokegym replays export DIR --side p1|p2|both --out OUT`` writes ``OUT/collection.json``
and ``OUT/shard-<first>-<last>-<count>.parquet`` files with the columns, types and
metadata of a ``pokegym collect`` folder (schema version 2), one row per decision of
the chosen players (Team Preview excluded), computed from the replay's battle as that
player saw it (:mod:`pokegym.replays.view`) the way ``collect`` computes them from a
live battle: the world-model state encoding (the opponent's hidden sets filled with the
modal set of the priors), the observation, the action mask and the action taken in the
environment's action layout, the legal actions and the one taken as labels, the
one-step lookahead features, the hand-written evaluator's value, the outcome.

What a replay cannot give: ``battle_seed`` is 0 (a hash of the replay id would pretend
to be a seed); the LLM and search columns are null (nobody searched); move slots are
the order the log reveals the moves in and team slots the order Pokémon appear in
(a replay keeps no request); a decision whose action the log does not show (the
Pokémon fainted first, the battle ended) or names a move the player's known moves lack
is skipped. ``agent`` and ``opponent`` are ``replay:<player name>``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pokegym.errors import IllegalActionError, PokegymError
from pokegym.replays.decisions import ending
from pokegym.replays.files import Replay, ReplayFileError, read_replay
from pokegym.replays.view import ROLES, Decision, player_decisions
from pokegym.world.data import to_id
from policies.core.lookahead import lookahead_features
from train.collection_format import SCHEMA, SCHEMA_VERSION, encodings, write_shard

__all__ = [
    "COLUMNS",
    "Encoders",
    "ExportConfig",
    "ExportSummary",
    "decision_row",
    "export_replays",
    "replay_rows",
]

# The columns of a `pokegym collect` shard, in order: (name, arrow type).
COLUMNS: tuple[tuple[str, str], ...] = tuple((name, kind) for name, kind, _ in SCHEMA)


class ExportError(PokegymError):
    """The export's output folder holds something else, or no replay gave a row."""


@dataclass(frozen=True)
class ExportConfig:
    """One export run."""

    replays: str
    """A replay file or a folder of them (.json, .log, .html)."""
    out: str
    """Output folder (a new one, or one this export wrote before)."""
    side: str = "both"
    """Whose decisions: p1, p2 or both."""
    shard_battles: int = 100
    """Replays per shard file."""


@dataclass
class ExportSummary:
    replays: int = 0
    rows: int = 0
    skipped: int = 0  # decisions whose action the log does not show, or cannot be encoded
    unreadable: list[str] = field(default_factory=list)


# local imports: the encoders and the world model load only when replays are exported
class Encoders:
    """The encoders of one generation (built once)."""

    def __init__(self, gen: int):
        from pokegym.observation import ObservationEncoder
        from pokegym.world.data import load_dex
        from pokegym.world.transition import TransitionModel
        from policies.core.encoding import StateEncoder

        self.model = TransitionModel(load_dex(gen))
        self.encoder = StateEncoder(self.model)
        self.observer = ObservationEncoder(gen)


def _gimmick(replay: Replay) -> str | None:
    rules = " ".join(line.lower() for line in replay.lines if line.startswith("|rule|"))
    if replay.gen == 9 and "terastal clause" not in rules:
        return "terastallize"
    if replay.gen == 8 and "dynamax clause" not in rules:
        return "dynamax"
    return None


def replay_rows(
    replay: Replay, roles: Sequence[str], tools: Callable[[int], Encoders]
) -> tuple[list[dict[str, Any]], int]:
    """The rows of ``roles``' decisions in ``replay`` (battle ids not set), and how many
    decisions were skipped."""
    from pokegym.actions import ActionCodec

    codec = ActionCodec(_gimmick(replay))
    result = ending(replay.lines, replay.players)
    turns = max((int(line[6:]) for line in replay.lines
                 if line.startswith("|turn|") and line[6:].isdigit()), default=0)  # fmt: skip
    rows: list[dict[str, Any]] = []
    skipped = 0
    for role in roles:
        side = ROLES.index(role)
        name, other = replay.players[side], replay.players[1 - side]
        outcome = 0.5 if not result.winner else float(result.winner == name)
        step = 0
        for decision in player_decisions(replay, role):
            if decision.point.kind == "team_preview":
                continue
            row = decision_row(decision, codec, tools(replay.gen))
            if row is None:
                skipped += 1
                continue
            row.update(format=replay.format_id, side=side, agent=f"replay:{name}",
                       opponent=f"replay:{other}", step=step, battle_seed=0, outcome=outcome,
                       battle_turns=turns, truncated=result.reason == "unfinished")  # fmt: skip
            step += 1
            rows.append(row)
    return rows, skipped


def decision_row(decision: Decision, codec: Any, tools: Encoders) -> dict[str, Any] | None:
    """One decision's row as ``pokegym collect`` computes it from a live battle (its
    identity, outcome and step filled in by the caller); None where the action is unknown
    or cannot be encoded, or a side has no active Pokémon."""
    from poke_env.battle import Move, Pokemon

    from policies.core.encoding import HEURISTIC_INDEX

    battle, order = decision.battle, decision.order
    if order is None or battle.active_pokemon is None or battle.opponent_active_pokemon is None:
        return None
    try:
        action = codec.from_order(order, battle)
    except IllegalActionError:
        return None
    state = _decision_state(battle, tools)
    features = tools.encoder.encode(state)
    team = list(battle.team.values())

    def label(kind: str, arg: Any, tera: bool) -> str:
        if kind == "switch":
            return f"switch:{state.sides[0].mons[int(arg)].species}"
        return f"move:{arg}:tera" if tera else f"move:{arg}"

    legal = []
    for move in battle.available_moves:
        legal.append(label("move", to_id(move.id), False))
        if codec.gimmick == "terastallize" and battle.can_tera:
            legal.append(label("move", to_id(move.id), True))
    legal += [label("switch", team.index(mon), False) for mon in battle.available_switches
              if mon in team]  # fmt: skip
    target = order.order  # type: ignore[attr-defined]
    if isinstance(target, Move):
        taken = label("move", to_id(target.id), bool(order.terastallize))  # type: ignore[attr-defined]
    elif isinstance(target, Pokemon) and target in team:
        taken = label("switch", team.index(target), False)
    else:
        taken = ""
    return {
        "turn": int(battle.turn), "state": features, "observation": tools.observer.encode(battle),
        "action_mask": codec.mask(battle).astype(np.int8), "action": int(action),
        "legal_labels": legal, "action_label": taken,
        "lookahead": lookahead_features(tools.model, state),
        "heuristic_value": float(features[HEURISTIC_INDEX]), "llm_value": None,
        "llm_proposals": None, "llm_leaf_states": None, "llm_leaf_scores": None,
        "search_policy": None, "search_value": None,
    }  # fmt: skip


def _decision_state(battle: Any, tools: Encoders) -> Any:
    """The world-model state a search would start from: the opponent's hidden sets from
    the modal set of the priors; ``notes["unseen"]``: opponents not seen yet."""
    from pokegym.world.priors import belief_for
    from pokegym.world.state import state_from_battle

    state = state_from_battle(battle, belief_for(battle).modal_determinization(), tools.model.dex)
    sizes = getattr(battle, "_team_size", None) or {}
    size = max(len(battle.opponent_team), int(sizes.get(battle.opponent_role, 6)))
    state.notes = {"unseen": max(0, size - len(state.sides[1].mons))}
    return state


# ------------------------------------------------------------------ the collection
def _manifest(config: ExportConfig, format_ids: list[str]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "identity": {
            "replays": str(Path(config.replays).resolve()),
            "side": config.side,
            "formats": format_ids,
        },
        "source": "replays",
        **{k: v for k, v in encodings().items() if k != "schema_version"},
    }


def export_replays(
    config: ExportConfig, on_replay: Callable[[Path], None] | None = None
) -> ExportSummary:
    """Read every replay under ``config.replays`` and write its decisions to
    ``config.out`` (see the module docstring). A replay that cannot be read is listed in
    the summary and skipped; the shards of the replays read so far are kept when the run
    is interrupted.

    Raises:
        ExportError: ``out`` holds files of another kind, or a bad ``side``.
        ReplayFileError: ``replays`` names no replay file.
    """
    from pokegym.replays.files import replay_files

    if config.side not in ("p1", "p2", "both"):
        raise ExportError(f"--side is p1, p2 or both, got {config.side!r}.")
    if config.shard_battles < 1:
        raise ExportError("--shard-battles must be at least 1.")
    roles = ROLES if config.side == "both" else (config.side,)
    paths = replay_files(config.replays)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.glob("shard-*.parquet")) or (out / "collection.json").exists():
        raise ExportError(f"{out} already holds a collection; export into a new folder.")
    cache: dict[int, Encoders] = {}

    def tools(gen: int) -> Encoders:
        if gen not in cache:
            cache[gen] = Encoders(gen)
        return cache[gen]

    summary = ExportSummary()
    formats: list[str] = []
    rows: list[dict[str, Any]] = []
    ids: list[int] = []
    try:
        for battle_id, path in enumerate(paths):
            try:
                replay = read_replay(path)
                battle_rows, skipped = replay_rows(replay, roles, tools)
            except ReplayFileError as exc:
                summary.unreadable.append(str(exc))
                continue
            if replay.format_id not in formats:
                formats.append(replay.format_id)
            for row in battle_rows:
                row["battle_id"] = battle_id
            rows += battle_rows
            ids.append(battle_id)
            summary.replays += 1
            summary.rows += len(battle_rows)
            summary.skipped += skipped
            if on_replay is not None:
                on_replay(path)
            if len(ids) >= config.shard_battles:
                write_shard(out, ids, rows)
                rows, ids = [], []
    finally:
        if ids:
            write_shard(out, ids, rows)
        if summary.replays:
            manifest = _manifest(config, formats)
            (out / "collection.json").write_text(json.dumps({**manifest, "config": {
                "replays": config.replays, "side": config.side}}, indent=2))  # fmt: skip
    if summary.rows == 0:
        raise ExportError(
            f"No decision could be exported from {config.replays} "
            f"({len(summary.unreadable)} unreadable replays): nothing was written."
        )
    return summary
