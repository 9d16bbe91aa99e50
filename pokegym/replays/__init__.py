"""Showdown replays as data: read the replay site's files and pokegym's own logs, replay
either player's view into poke-env battle objects decision by decision (docs/replays.md).
The export of those decisions as a training collection, and the ``pokegym replays``
command, are in the training layer (:mod:`train.replays_export`, :mod:`train.replays_cli`)."""

from pokegym.replays.decisions import DecisionPoint, Ending, ReplayAction, decision_points, ending
from pokegym.replays.files import (
    Replay,
    ReplayFileError,
    read_replay,
    replay_files,
    replay_from_log,
    replay_html,
    replay_json,
)
from pokegym.replays.view import Decision, player_decisions

__all__ = [
    "Decision",
    "DecisionPoint",
    "Ending",
    "Replay",
    "ReplayAction",
    "ReplayFileError",
    "decision_points",
    "ending",
    "player_decisions",
    "read_replay",
    "replay_files",
    "replay_from_log",
    "replay_html",
    "replay_json",
]
