"""A person plays a battle against an agent in the terminal (``pokegym play``).

The person plays side p1 and any registered agent plays p2, on the embedded
simulator. Each decision shows what happened since the last one, the state of the
battle (from :mod:`pokegym.text.render`, so the person sees the same vocabulary the
LLM agents do) and a numbered list of the legal choices; only a choice from that
list is ever sent to Showdown. At the end the person may rate how hard the
opponent was, and the battle is saved as a Showdown spectator log plus a JSON
sidecar (see :func:`pokegym.play_result.save_replay`).

One battle loop (:func:`run_battle`), two front ends (:class:`PlayFrontEnd`): the
terminal (:class:`TerminalFrontEnd`, numbered choices read from a function, text
written to a file-like object, so tests drive it with scripted answers) and the web
page of ``pokegym play --web`` (:mod:`pokegym.web`). Every battle that ends also
appends a playtest record (:mod:`pokegym.playtest`).

Team formats (gen9ou ...): the person picks the lead at Team Preview (``1`` keeps
the team sheet's order); the rest of the team follows in team-sheet order.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np
from poke_env.battle import AbstractBattle

from pokegym.agents import Agent, make_agent, parse_agent_spec
from pokegym.backends import BattleSession, SimBackend
from pokegym.backends.base import ROLES
from pokegym.backends.sim import SimBattleSession
from pokegym.choices import (
    ChoiceOption,
    InputError,
    choice_options,
    resolve_input,
    unavailable_names,
)
from pokegym.env import BattleSetup, TeamSpec, opponent_choice
from pokegym.errors import IllegalActionError, PokegymError
from pokegym.play_result import PlayResult, save_replay
from pokegym.playtest import append_record, playtest_record
from pokegym.showdown.simulator import Simulator
from pokegym.text.render import (
    GameNames,
    ProtocolRecorder,
    history_text,
    state_text,
    team_text,
    to_id,
)

HUMAN, AGENT = 0, 1
PROMPT = "Your choice> "
RATING_PROMPT = "Rate the opponent's difficulty 1-5 (Enter to skip)> "
CONFIRM_PROMPT = "Forfeit the battle? [y/N]> "
DEFAULT_OPPONENT = "abyssal"
MAX_NAME_LENGTH = 18  # Showdown's limit on player names
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.\-]*$")

HELP = """\
Type the number of a choice, or its name: a move ("thunderbolt"), a Pokémon to
switch to ("garchomp"); a unique prefix is enough ("thund"). Prefix a move with
"tera" to Terastallize ("tera thund"), with "dynamax" in gen 8; "switch NAME"
and "move NAME" say which one you mean when names clash.
Commands: help (this text), state (show the battle again), forfeit (give up).
Ctrl-D or Ctrl-C forfeits the battle at once."""

InputFn = Callable[[str], str]
_EMPTY_FIELD = ("Weather: none. Field: none.", "Your side: none. Opponent's side: none.")


class PlayerLeft(Exception):
    """The person left (Ctrl-D, Ctrl-C at a prompt, a closed browser tab, the server
    stopping): raised by a front end, it unwinds the loop, which forfeits the battle."""

    def __init__(self, how: str):
        super().__init__(how)
        self.how = how


def forfeit(session: BattleSession, side: int = HUMAN) -> bool:
    """End the battle as a loss for ``side``; True when Showdown recorded it.

    On the simulator this is Showdown's ``>forcelose`` (the log then ends with the
    opponent's ``|win|`` line); a server battle forfeits when its session closes.
    """
    if session.finished:
        return True
    if isinstance(session, SimBattleSession):
        command = ["write", session.battle_id, f">forcelose {ROLES[side]}"]
        session.absorb(session.simulator.call([command])[0])
        return session.finished
    session.close()
    return False


# --------------------------------------------------------------- front ends
class PlayFrontEnd(Protocol):
    """The person's side of :func:`run_battle`: what it shows and how it asks.

    The terminal (:class:`TerminalFrontEnd`) and the web page
    (:class:`pokegym.web.session.WebFrontEnd`) are the two implementations; the battle
    loop, the legal choices and the result are the same for both.
    """

    def begin(self, battle: AbstractBattle, names: GameNames, intro: str) -> None:
        """The battle started (first request parsed); ``intro`` names the players."""

    def choose(
        self,
        battle: AbstractBattle,
        options: Sequence[ChoiceOption],
        unavailable: Sequence[str],
    ) -> tuple[ChoiceOption | None, str]:
        """The person's choice among ``options`` and what they typed or clicked (None
        as the choice: the person forfeits). Raises :class:`PlayerLeft` when the person
        is gone."""
        ...

    def tell(self, text: str) -> None:
        """A sentence for the person (a refused choice, the turn limit ...)."""

    def end(self, result: PlayResult, text: str) -> None:
        """The battle is over; ``text`` says how. ``result`` is filled in."""

    def rate(self) -> int | None:
        """The opponent's difficulty, 1-5, or None when the person skips it."""
        ...


class BattleEvents:
    """What happened since the last call, as sentences (species names only)."""

    def __init__(self, battle: AbstractBattle, names: GameNames):
        self.battle = battle
        self.names = names
        self.recorder = ProtocolRecorder.attach(battle)
        self.shown = 0  # recorder messages already told
        self.shown_turn = battle.turn

    def new(self) -> str:
        messages = self.recorder.messages[self.shown :]
        start = [["", "turn", str(self.shown_turn)]]
        self.shown = len(self.recorder.messages)
        self.shown_turn = self.battle.turn
        if not messages:
            return ""
        text = history_text(
            start + messages, "p1", self.names, last_turns=1_000, battle=self.battle
        )
        return "" if text == "No turns played yet." else text


def decision_title(battle: AbstractBattle, options: Sequence[ChoiceOption]) -> str:
    """``Turn 3``, ``Team Preview: choose your lead`` or ``Turn 3: choose a Pokémon to send in``."""
    if battle.teampreview:
        return "Team Preview: choose your lead"
    if any(o.kind == "switch" for o in options) and not any(
        o.kind in ("move", "gimmick") for o in options
    ):
        return f"Turn {battle.turn}: choose a Pokémon to send in"
    return f"Turn {battle.turn}"


class _Screen:
    """Writes the battle for a person: events since the last decision, state, choices."""

    def __init__(self, output: TextIO, battle: AbstractBattle, names: GameNames):
        self.output = output
        self.battle = battle
        self.names = names
        self.events = BattleEvents(battle, names)
        self.last_events = ""

    def say(self, text: str = "") -> None:
        self.output.write(text + "\n")
        self.output.flush()

    def state(self, options: Sequence[ChoiceOption]) -> None:
        battle = self.battle
        self.say(f"\n=== {decision_title(battle, options)} ===")
        if self.last_events:
            self.say("What happened:\n" + self.last_events)
        if battle.teampreview:
            self.say(team_text(battle, self.names))
            team = [
                self.names.species(m.species) or m.species for m in battle.teampreview_opponent_team
            ]
            self.say("Opponent's team: " + (", ".join(team) or "unknown") + ".")
        else:
            lines = state_text(battle, self.names).splitlines()
            # The title already names the turn; "none" lines about the field say nothing.
            self.say("\n".join(line for line in lines[1:] if line not in _EMPTY_FIELD))
        self.say("Your choices:")
        for option in options:
            self.say(option.line())


class TerminalFrontEnd:
    """The terminal: numbered choices, typed answers (``input_fn``), text on ``output``.

    ``input_fn(prompt)`` returns one line the person typed (``builtins.input`` in the
    terminal); ``EOFError`` and ``KeyboardInterrupt`` from it forfeit the battle.
    """

    def __init__(self, input_fn: InputFn, output: TextIO):
        self.input_fn = input_fn
        self.output = output
        self.screen: _Screen | None = None

    def _say(self, text: str) -> None:
        self.output.write(text + "\n")
        self.output.flush()

    def begin(self, battle: AbstractBattle, names: GameNames, intro: str) -> None:
        self.screen = _Screen(self.output, battle, names)
        self._say(f"{intro} Type 'help' for how to choose.")

    def choose(
        self,
        battle: AbstractBattle,
        options: Sequence[ChoiceOption],
        unavailable: Sequence[str],
    ) -> tuple[ChoiceOption | None, str]:
        screen = self.screen
        assert screen is not None, "begin() first"
        screen.last_events = screen.events.new() or screen.last_events
        screen.state(options)
        while True:
            typed = _read(self.input_fn, PROMPT, "interrupt")
            command = typed.strip().lower()
            if command in ("help", "?", "h"):
                screen.say(HELP)
                continue
            if command in ("state", "s", "show"):
                screen.state(options)
                continue
            if command in ("forfeit", "ff", "quit", "exit"):
                answer = _read(self.input_fn, CONFIRM_PROMPT, "interrupt").strip().lower()
                if answer in ("y", "yes"):
                    return None, typed
                screen.say("The battle goes on.")
                continue
            try:
                return resolve_input(typed, options, unavailable), typed
            except InputError as exc:
                screen.say(str(exc))

    def tell(self, text: str) -> None:
        self._say(text)

    def end(self, result: PlayResult, text: str) -> None:
        events = self.screen.events.new() if self.screen is not None else ""
        if events:
            self._say("\n" + events)
        self._say("\n" + text)

    def rate(self) -> int | None:
        return read_rating(self.input_fn, self.output)


def _read(input_fn: InputFn, prompt: str, on_interrupt: str) -> str:
    try:
        return input_fn(prompt)
    except EOFError:
        raise PlayerLeft("eof") from None
    except KeyboardInterrupt:
        raise PlayerLeft(on_interrupt) from None


def read_rating(input_fn: InputFn, output: TextIO) -> int | None:
    """Ask for the opponent's difficulty, 1-5; Enter, Ctrl-D or Ctrl-C skip it."""
    while True:
        try:
            text = input_fn(RATING_PROMPT).strip()
        except (EOFError, KeyboardInterrupt):
            output.write("\n")
            return None
        if not text:
            return None
        if text.isdigit() and 1 <= int(text) <= 5:
            return int(text)
        output.write("Please type a whole number from 1 (easy) to 5 (very hard), or press Enter.\n")
        output.flush()


# --------------------------------------------------------------------- loop
def _new_rng_seed() -> int:
    return int.from_bytes(os.urandom(8), "big") >> 1


def run_battle(
    setup: BattleSetup,
    opponent: Agent,
    front: PlayFrontEnd,
    *,
    seed: int | None = None,
    player_name: str = "Player",
    opponent_name: str = "opponent",
    ask_rating: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> PlayResult:
    """Play one battle: the person (side p1, through ``front``) against ``opponent``.

    Whatever happens, the session is closed and the returned result holds the
    protocol log so far (``setup`` should keep spectator logs:
    ``log_battles="spectator"``), so the caller can always save a replay. A
    :class:`PlayerLeft` from the front end or a ``KeyboardInterrupt`` forfeits the
    battle. ``clock`` times the decisions of both sides (``result.decision_seconds``,
    ``result.opponent_seconds``).

    Raises:
        PokegymError: the simulator failed; the partial result is attached to the
            exception as ``exc.play_result``.
    """
    seed = _new_rng_seed() if seed is None else seed
    rng = np.random.default_rng(seed)
    result = PlayResult(setup.fmt.id, player_name, opponent_name, seed)
    seed_fn = getattr(opponent, "seed", None)
    if callable(seed_fn):
        seed_fn(int(rng.integers(2**63 - 1)))
    session = setup._start_session(rng)
    battle = session.battles[HUMAN]
    front.begin(
        battle,
        GameNames(setup.fmt.gen),
        f"{setup.fmt.name}: {player_name} (you) vs {opponent_name}, seed {seed}.",
    )
    try:
        _loop(setup, session, opponent, rng, front, result, clock)
        if ask_rating and result.ended:
            result.rating = front.rate()
    except PlayerLeft as stop:
        result.ended_by = stop.how
        _forfeit_quietly(session, result)
    except KeyboardInterrupt:  # Ctrl-C while the opponent thinks or Showdown simulates
        result.ended_by = "interrupt"
        _forfeit_quietly(session, result)
    except PokegymError as exc:
        result.ended_by, result.error = "error", str(exc)
        _forfeit_quietly(session, result)
        exc.play_result = result  # type: ignore[attr-defined]
        raise
    finally:
        result.turns = battle.turn
        result.finished = session.finished
        result.log = session.replay_log()
        session.close()
        setup.session = None
    return result


def play_battle_interactive(
    setup: BattleSetup,
    opponent: Agent,
    *,
    input_fn: InputFn,
    output: TextIO,
    seed: int | None = None,
    player_name: str = "Player",
    opponent_name: str = "opponent",
    ask_rating: bool = True,
) -> PlayResult:
    """:func:`run_battle` in the terminal: ``input_fn(prompt)`` reads what the person
    types (``builtins.input``), the battle is written to ``output``."""
    return run_battle(
        setup,
        opponent,
        TerminalFrontEnd(input_fn, output),
        seed=seed,
        player_name=player_name,
        opponent_name=opponent_name,
        ask_rating=ask_rating,
    )


def _forfeit_quietly(session: BattleSession, result: PlayResult) -> None:
    try:
        if forfeit(session):
            result.result, result.winner = "forfeit", "opponent"
    except PokegymError as exc:  # the simulator is gone: keep the log so far
        result.error = result.error or str(exc)


def _loop(
    setup: BattleSetup,
    session: BattleSession,
    opponent: Agent,
    rng: np.random.Generator,
    front: PlayFrontEnd,
    result: PlayResult,
    clock: Callable[[], float],
) -> None:
    battle = session.battles[HUMAN]
    codec = setup.codec
    names = GameNames(setup.fmt.gen)
    view = getattr(session, "views", (None,))[HUMAN]
    for _ in range(100_000):
        if session.finished:
            break
        if battle.turn >= setup.max_turns:
            result.result, result.ended_by = "truncated", "max_turns"
            front.end(
                result, f"The battle reached the turn limit ({setup.max_turns}); it ends here."
            )
            return
        choices: dict[int, str] = {}
        if session.needs_choice(HUMAN):
            options = choice_options(battle, codec, names)
            if not options:
                raise PokegymError("Showdown asks for a choice but none is legal.")
            asked = clock()
            option, typed = front.choose(battle, options, unavailable_names(battle, names))
            if option is None:
                if forfeit(session):
                    result.result, result.ended_by, result.winner = "forfeit", "forfeit", "opponent"
                    front.end(result, f"You forfeited. {result.opponent_name} wins.")
                    return
                raise PokegymError("The battle could not be forfeited.")
            result.decision_seconds.append(round(clock() - asked, 3))
            choices[HUMAN] = option.choice
            result.choices.append(
                {"turn": battle.turn, "choice": option.choice, "label": option.label,
                 "input": typed}
            )  # fmt: skip
        if session.needs_choice(AGENT):
            asked = clock()
            choices[AGENT] = opponent_choice(opponent, session.battles[AGENT], codec, rng)
            result.opponent_seconds.append(round(clock() - asked, 3))
        if not choices:
            raise PokegymError("Neither side can move but the battle is not over.")
        rejections = getattr(view, "rejections", 0)
        try:
            session.choose(choices)
        except IllegalActionError as exc:  # Showdown refused it: the request still stands
            if HUMAN in choices and f"rejected {ROLES[HUMAN]}'s" in str(exc):
                front.tell(f"Showdown refused that choice: {exc}. Choose again.")
                _undo_choice(result)
                continue
            raise
        if getattr(view, "rejections", 0) > rejections and session.needs_choice(HUMAN):
            # [Unavailable choice]: e.g. a trap revealed; a new request followed.
            front.tell("That choice turned out to be unavailable (e.g. you are trapped).")
            _undo_choice(result)
    else:
        raise PokegymError("The battle did not end.")
    winner = session.winner
    if winner is None:
        result.result, result.winner = "tie", None
        text = "The battle ended in a tie."
    elif winner == HUMAN:
        result.result, result.winner = "won", "player"
        text = f"You won against {result.opponent_name} in {battle.turn} turns!"
    else:
        result.result, result.winner = "lost", "opponent"
        text = f"You lost: {result.opponent_name} won in {battle.turn} turns."
    result.ended_by = "battle"
    front.end(result, text)


def _undo_choice(result: PlayResult) -> None:
    """Forget the person's last choice: Showdown did not take it."""
    result.choices.pop()
    if result.decision_seconds:
        result.decision_seconds.pop()


# --------------------------------------------------------------------- setup
class NamedSimBackend(SimBackend):
    """The simulator backend with the players' display names in the battle (and so in
    the replay log) instead of "p1"/"p2"."""

    def __init__(self, names: tuple[str, str], simulator: Simulator | None = None):
        super().__init__(simulator)
        self.names = names

    def start(
        self,
        fmt: Any,
        *,
        teams: Sequence[str | None],
        seeds: tuple[int, int, int],
        log: str | None = None,
    ) -> BattleSession:
        return SimBattleSession(
            self.simulator, fmt, teams=teams, seeds=seeds, log=log, names=self.names
        )


def display_names(player: str, opponent: str) -> tuple[str, str]:
    """Checked player names: the person's as given, the opponent's made distinct."""
    player = player.strip()
    if not player or len(player) > MAX_NAME_LENGTH or not _NAME.match(player):
        raise PokegymError(
            f"--name {player!r}: use 1-{MAX_NAME_LENGTH} letters, digits, spaces, '_', '.' "
            "or '-', starting with a letter or digit."
        )
    opponent = opponent[:MAX_NAME_LENGTH] or "opponent"
    if to_id(opponent) == to_id(player):
        opponent = f"{opponent[: MAX_NAME_LENGTH - 4]} bot"
    return player, opponent


def make_play_setup(
    battle_format: str,
    *,
    names: tuple[str, str],
    team: TeamSpec = None,
    opponent_team: TeamSpec = None,
    max_turns: int = 500,
    simulator: Simulator | None = None,
    validate_teams: bool = True,
) -> BattleSetup:
    """A :class:`BattleSetup` on the simulator that keeps the spectator log."""
    return BattleSetup(
        battle_format,
        team=team,
        opponent_team=opponent_team,
        backend=NamedSimBackend(names, simulator),
        log_battles="spectator",
        max_turns=max_turns,
        validate_teams=validate_teams,
    )


def save_battle(
    result: PlayResult,
    folder: str | Path,
    *,
    opponent_spec: str,
    team: str | None = None,
    front_end: str = "terminal",
) -> tuple[Path | None, Path]:
    """:func:`save_replay`, and for a battle that ended, a playtest record
    (:func:`pokegym.playtest.append_record`) in ``folder``."""
    log_path, json_path = save_replay(result, folder, opponent_spec=opponent_spec, team=team)
    if result.ended:
        record = playtest_record(
            result, opponent_spec=opponent_spec, front_end=front_end, replay=json_path.name
        )
        append_record(folder, record)
    return log_path, json_path


# ---------------------------------------------------------------- command
def play_command(
    args: argparse.Namespace,
    *,
    input_fn: InputFn = input,
    output: TextIO | None = None,
) -> int:
    """``pokegym play``: 0 when the battle ended (forfeits included), 1 on Ctrl-D,
    130 on Ctrl-C; a replay is saved in every case."""
    out = sys.stdout if output is None else output
    if input_fn is input and sys.stdin.isatty():
        with contextlib.suppress(ImportError):  # line editing and history for input()
            # readline: importing it turns on line editing and history for input()
            import readline  # noqa: F401
    if args.seed is not None and args.seed < 0:
        raise PokegymError(f"--seed must be a non-negative integer, got {args.seed}")
    spec = args.opponent or DEFAULT_OPPONENT
    try:
        opponent = make_agent(spec)
        agent_name = parse_agent_spec(spec)[0]
    except (ValueError, TypeError) as exc:
        if isinstance(exc, PokegymError):
            raise
        raise PokegymError(f"--opponent {spec!r}: {exc}") from exc
    names = display_names(args.name, agent_name)
    setup = make_play_setup(args.format, names=names, team=args.team)
    saved: tuple[Path | None, Path] | None = None
    try:
        result = play_battle_interactive(
            setup,
            opponent,
            input_fn=input_fn,
            output=out,
            seed=args.seed,
            player_name=names[0],
            opponent_name=names[1],
            ask_rating=not args.no_rating,
        )
    except PokegymError as exc:
        partial = getattr(exc, "play_result", None)
        if partial is not None:
            saved = save_replay(partial, args.replays, opponent_spec=spec, team=args.team)
            out.write(f"The battle broke off; what was played is in {saved[1]}\n")
        raise
    finally:
        setup.backend.close()
    if result.ended_by in ("eof", "interrupt"):
        how = "Ctrl-D" if result.ended_by == "eof" else "Ctrl-C"
        if result.result == "forfeit":
            out.write(f"\n{how}: you forfeited the battle.\n")
        else:
            out.write(f"\n{how}: the battle was left unfinished ({result.error}).\n")
    if result.rating is not None:
        out.write(f"Thanks! Rated {result.rating}/5.\n")
    log_path, json_path = save_battle(result, args.replays, opponent_spec=spec, team=args.team)
    if log_path is not None:
        out.write(f"Replay: {log_path}\n")
    out.write(f"Details: {json_path}\n")
    out.flush()
    return {"eof": 1, "interrupt": 130}.get(result.ended_by, 0)
