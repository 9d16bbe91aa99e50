"""``pokegym play``: a person plays a real battle against an agent in the terminal.

The loop is driven with scripted answers in-process, and the real command is run
through a pseudo-terminal, the way a person at a keyboard would use it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import process_group_alive

from pokegym.agents import make_agent
from pokegym.choices import ChoiceOption, InputError, choice_options, resolve_input
from pokegym.errors import PokegymError
from pokegym.play import (
    PROMPT,
    RATING_PROMPT,
    display_names,
    make_play_setup,
    play_battle_interactive,
    read_rating,
)
from pokegym.play_result import PlayResult, save_replay
from pokegym.text.render import GameNames, to_id

Answer = str | Callable[[], str] | type[BaseException]


class Script:
    """An ``input_fn`` that answers from a list (strings, callables, or an exception
    class to raise), echoing prompts and answers into ``output`` like a terminal."""

    def __init__(self, answers: list[Answer], output: io.StringIO):
        self.answers = list(answers)
        self.output = output
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        self.output.write(prompt)
        if not self.answers:
            raise AssertionError(f"no scripted answer left for {prompt!r}")
        answer = self.answers.pop(0)
        if isinstance(answer, type) and issubclass(answer, BaseException):
            raise answer()
        text = answer() if callable(answer) else answer
        self.output.write(text + "\n")
        return text


def play(
    answers: list[Answer],
    *,
    battle_format: str = "gen9randombattle",
    opponent: str = "random",
    seed: int = 7,
    ask_rating: bool = True,
) -> tuple[PlayResult, str, Any]:
    names = display_names("Tester", opponent)
    setup = make_play_setup(battle_format, names=names)
    output = io.StringIO()
    script = Script(answers, output)
    holder: dict[str, Any] = {"setup": setup}
    script.holder = holder  # type: ignore[attr-defined]
    result = play_battle_interactive(
        setup,
        make_agent(opponent),
        input_fn=script,
        output=output,
        seed=seed,
        player_name=names[0],
        opponent_name=names[1],
        ask_rating=ask_rating,
    )
    assert setup.session is None, "the session must be closed after the battle"
    return result, output.getvalue(), script


# ------------------------------------------------------------ input parsing
OPTIONS = [
    ChoiceOption(1, "move", "Thunder", "move 1"),
    ChoiceOption(2, "move", "Thunderbolt", "move 2"),
    ChoiceOption(3, "move", "Surf", "move 3"),
    ChoiceOption(4, "gimmick", "Thunderbolt", "move 2 terastallize"),
    ChoiceOption(5, "switch", "Garchomp", "switch 2"),
    ChoiceOption(6, "switch", "Surskit", "switch 3"),
]


@pytest.mark.parametrize(
    ("text", "choice"),
    [
        ("2", "move 2"),
        ("  5 ", "switch 2"),
        ("thunder", "move 1"),  # an exact name wins over a longer one it prefixes
        ("THUNDERB", "move 2"),
        ("Thunder Bolt", "move 2"),
        ("gar", "switch 2"),
        ("tera thunderb", "move 2 terastallize"),
        ("Tera thunderbolt", "move 2 terastallize"),
        ("switch sur", "switch 3"),  # "sur" alone is ambiguous (Surf, Surskit)
        ("move sur", "move 3"),
        ("surf", "move 3"),
    ],
)
def test_resolve_input_numbers_names_and_prefixes(text, choice):
    assert resolve_input(text, OPTIONS).choice == choice


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "Type the number"),
        ("0", "no choice 0"),
        ("7", "from 1 to 6"),
        ("thu", "several choices"),
        ("sur", "several choices"),
        ("banana", "No legal choice matches 'banana'"),
        ("tera", "tera what?"),
        ("tera surf", "No legal choice matches"),
        ("flamethrower", "Flamethrower is not a legal choice now"),
        ("!!", "names no choice"),
    ],
)
def test_resolve_input_rejects_with_a_reason(text, fragment):
    with pytest.raises(InputError, match=re.escape(fragment)):
        resolve_input(text, OPTIONS, unavailable=["Flamethrower"])


def test_read_rating_validates_and_can_be_skipped():
    output = io.StringIO()
    assert read_rating(Script(["9", "x", "0", " 4 "], output), output) == 4
    assert output.getvalue().count(RATING_PROMPT) == 4
    assert output.getvalue().count("from 1 (easy) to 5") == 3
    assert read_rating(Script([""], output), output) is None
    assert read_rating(Script([EOFError], output), output) is None
    assert read_rating(Script([KeyboardInterrupt], output), output) is None


def test_display_names_are_checked_and_kept_distinct():
    assert display_names("Ash", "abyssal") == ("Ash", "abyssal")
    player, opponent = display_names("random", "random")
    assert player == "random" and opponent != player
    for bad in ("", "a|b", "x" * 19, " -dash"):
        with pytest.raises(PokegymError):
            display_names(bad, "random")


# -------------------------------------------------------- the play loop
@pytest.mark.slow
def test_invalid_input_is_asked_again_and_never_sent():
    answers: list[Answer] = [
        "banana", "0", "99", "", "tera", "help", "state", "1",
        "forfeit", "n", "forfeit", "yes", "6", "abc", "2",
    ]  # fmt: skip
    result, out, script = play(answers)
    assert not script.answers
    for message in (
        "No legal choice matches 'banana'",
        "There is no choice 0",
        "There is no choice 99",
        "Type the number of a choice",
        "tera what?",
        "Commands: help",
        "The battle goes on.",
        "You forfeited. random wins.",
        "from 1 (easy) to 5",
    ):
        assert message in out
    # Every invalid answer was followed by the same question again.
    assert script.prompts[:8] == [PROMPT] * 8
    # The "state" command drew the same turn again.
    assert out.count("=== Turn 1 ===") == 2
    assert "Your choices:" in out and "  1. " in out
    # Only the valid answer became a choice; the battle then ended by forfeit.
    assert [c["input"] for c in result.choices] == ["1"]
    assert result.choices[0]["turn"] == 1 and result.choices[0]["choice"].startswith("move")
    assert (result.result, result.ended_by, result.winner) == ("forfeit", "forfeit", "opponent")
    assert result.finished and result.rating == 2
    assert result.log is not None and result.log.rstrip().endswith("|win|random")


@pytest.mark.slow
def test_names_and_prefixes_pick_moves_tera_and_switches():
    expected: list[str] = []
    holder: dict[str, Any] = {}

    def options() -> list[ChoiceOption]:
        setup = holder["script"].holder["setup"]
        battle = setup.session.battles[0]
        return choice_options(battle, setup.codec, GameNames(9))

    def unique_prefix(option: ChoiceOption, among: list[ChoiceOption]) -> str:
        name = to_id(option.name)
        for n in range(1, len(name) + 1):
            others = [o for o in among if o is not option and to_id(o.name).startswith(name[:n])]
            if not others:
                return option.name[: len(option.name) - len(name) + n].upper()
        return option.name

    def tera_move() -> str:
        gimmicks = [o for o in options() if o.kind == "gimmick"]
        assert gimmicks, "Tera must be available on the first turn"
        option = gimmicks[-1]
        expected.append(option.choice)
        return "tera " + unique_prefix(option, gimmicks)

    def plain_move() -> str:
        opts = options()
        pool = [o for o in opts if o.kind in ("move", "switch")]
        option = next((o for o in pool if o.kind == "move"), pool[0])
        expected.append(option.choice)
        return option.name.lower()  # the full name, lower-case

    def switch() -> str:
        opts = options()
        pool = [o for o in opts if o.kind in ("move", "switch")]
        option = [o for o in pool if o.kind == "switch"][-1]
        expected.append(option.choice)
        return "switch " + unique_prefix(option, [o for o in pool if o.kind == "switch"])

    answers: list[Answer] = [tera_move, plain_move, switch, "forfeit", "y", ""]
    names = display_names("Tester", "max_power")
    setup = make_play_setup("gen9randombattle", names=names)
    output = io.StringIO()
    script = Script(answers, output)
    script.holder = {"setup": setup}  # type: ignore[attr-defined]
    holder["script"] = script
    result = play_battle_interactive(
        setup, make_agent("max_power"), input_fn=script, output=output, seed=11,
        player_name=names[0], opponent_name=names[1],
    )  # fmt: skip
    assert not script.answers, output.getvalue()
    assert [c["choice"] for c in result.choices] == expected
    assert expected[0].endswith(" terastallize")
    assert expected[2].startswith("switch ")
    assert "|-terastallize|p1a:" in (result.log or "")
    assert result.rating is None  # Enter skipped it
    assert result.result == "forfeit"


@pytest.mark.slow
def test_team_preview_lead_by_name():
    picked: dict[str, str] = {}

    def lead() -> str:
        setup = script.holder["setup"]
        battle = setup.session.battles[0]
        options = choice_options(battle, setup.codec, GameNames(9))
        assert battle.teampreview and all(o.kind == "lead" for o in options)
        assert len(options) == 6
        picked["name"] = options[2].name
        picked["choice"] = options[2].choice
        return "lead " + options[2].name

    names = display_names("Tester", "random")
    setup = make_play_setup("gen9ou", names=names)
    output = io.StringIO()
    script = Script([lead, "forfeit", "y"], output)
    script.holder = {"setup": setup}  # type: ignore[attr-defined]
    result = play_battle_interactive(
        setup, make_agent("random"), input_fn=script, output=output, seed=3,
        player_name=names[0], opponent_name=names[1], ask_rating=False,
    )  # fmt: skip
    assert "Team Preview" in output.getvalue() and "Opponent's team:" in output.getvalue()
    assert result.choices[0] == {
        "turn": 0, "choice": picked["choice"], "label": f"lead {picked['name']}",
        "input": f"lead {picked['name']}",
    }  # fmt: skip
    assert picked["choice"].startswith("team 3")
    # The chosen Pokémon is the one Showdown sent out first.
    first_switch = next(line for line in (result.log or "").splitlines() if "|switch|p1a" in line)
    assert first_switch.split("|")[3].split(",")[0] == picked["name"]


@pytest.mark.slow
@pytest.mark.parametrize(("error", "how"), [(EOFError, "eof"), (KeyboardInterrupt, "interrupt")])
def test_eof_or_interrupt_forfeits_and_the_replay_is_saved(tmp_path, error, how):
    result, out, script = play(["1", error])
    assert not script.answers
    assert result.ended_by == how
    assert (result.result, result.winner, result.finished) == ("forfeit", "opponent", True)
    assert result.rating is None and RATING_PROMPT not in out
    assert len(result.choices) == 1
    log_path, json_path = save_replay(result, tmp_path, opponent_spec="random")
    assert log_path is not None and log_path.read_text().rstrip().endswith("|win|random")
    data = json.loads(json_path.read_text())
    assert (data["ended_by"], data["result"], data["rating"]) == (how, "forfeit", None)
    assert data["log"] == log_path.name
    # Atomic writes leave no temporary files behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([log_path.name, json_path.name])


@pytest.mark.slow
def test_ctrl_c_while_the_opponent_thinks_forfeits():
    inner = make_agent("random")
    calls = {"n": 0}

    def slow_thinker(battle: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # the person pressed Ctrl-C while it thought
        return inner.choose(battle)

    names = display_names("Tester", "thinker")
    setup = make_play_setup("gen9randombattle", names=names)
    output = io.StringIO()
    script = Script(["1", "1", "1"], output)
    result = play_battle_interactive(
        setup, make_agent(slow_thinker), input_fn=script, output=output, seed=5,
        player_name=names[0], opponent_name=names[1],
    )  # fmt: skip
    assert calls["n"] == 2 and setup.session is None
    assert (result.ended_by, result.result, result.winner) == ("interrupt", "forfeit", "opponent")
    assert result.log is not None and result.log.rstrip().endswith("|win|thinker")
    assert RATING_PROMPT not in output.getvalue()


def test_save_replay_never_overwrites(tmp_path):
    result = PlayResult("gen9randombattle", "Tester", "random:x", seed=1, log="|win|Tester")
    first = save_replay(result, tmp_path, opponent_spec="random")
    second = save_replay(result, tmp_path, opponent_spec="random")
    assert first[1] != second[1] and first[0] != second[0]
    assert len(list(tmp_path.iterdir())) == 4
    data = json.loads(second[1].read_text())
    for key in (
        "pokegym_version", "timestamp", "format", "opponent", "seed", "winner", "turns",
        "choices", "rating", "result", "finished", "log",
    ):  # fmt: skip
        assert key in data


# ---------------------------------------------------- the real command
POKEGYM = Path(sys.executable).with_name("pokegym")
PTY_TIMEOUT = 180.0


class Terminal:
    """``pokegym`` run in a pseudo-terminal: it reads a keyboard and writes a screen."""

    def __init__(self, *args: str, cwd: Path):
        assert POKEGYM.exists(), f"the pokegym command is not installed next to {sys.executable}"
        env = {**os.environ, "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: becomes the command
            try:
                os.chdir(cwd)
                # A person's terminal delivers Ctrl-C. A test run started in the background
                # (`pytest &` in a script) inherits SIGINT ignored, and an ignored signal
                # stays ignored across exec, so give the command the default back.
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.execve(str(POKEGYM), [str(POKEGYM), *args], env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.text = ""
        self.pos = 0
        self.closed = False
        self.status: int | None = None

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the command exited and closed the terminal
            chunk = b""
        if not chunk:
            self.closed = True
            return False
        self.text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return True

    def expect(self, *patterns: str, timeout: float = PTY_TIMEOUT) -> str | None:
        """Read until one of the strings appears after the last match (None at exit)."""
        deadline = time.monotonic() + timeout
        while True:
            found = [(self.text.find(p, self.pos), p) for p in patterns]
            found = [(i, p) for i, p in found if i >= 0]
            if found:
                index, pattern = min(found)
                self.pos = index + len(pattern)
                return pattern
            if self.closed:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {patterns}:\n{self.text[-3000:]}")
            self._read(min(remaining, 1.0))

    def send(self, data: str | bytes) -> None:
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def wait_until_reading(self, timeout: float = 30.0) -> None:
        """Wait until the command's main thread blocks in select/poll for the keyboard.

        A Ctrl-C sent the instant the prompt appears can land after readline printed the
        prompt but before it calls select(): CPython then only notices the signal at the
        next keypress, so the interrupt would wait forever. A person is never that fast;
        the test waits for the same moment a person's key would arrive in."""
        wchan = Path(f"/proc/{self.pid}/wchan")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                where = wchan.read_text()
            except OSError:  # no /proc here: a pause a person's reaction would take
                time.sleep(1.0)
                return
            if "poll" in where or "select" in where:
                return
            time.sleep(0.02)

    def wait(self, timeout: float = PTY_TIMEOUT) -> int:
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            self._read(0.5)
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.05)
        self.kill()
        raise AssertionError(f"pokegym play did not exit:\n{self.text[-3000:]}")

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):  # already gone
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)

    def simulator_pids(self) -> list[int]:
        """Showdown simulator processes the command started (its Node children)."""
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.pid and b"sim_bridge" in cmdline:
                pids.append(int(entry))
        return pids


def assert_gone(pids: list[int], timeout: float = 15.0) -> None:
    """No process of the simulators' own process groups is left running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(process_group_alive(pid) for pid in pids):
            return
        time.sleep(0.2)
    raise AssertionError(f"Showdown processes left running: {pids}")


def replay_files(folder: Path) -> tuple[Path, dict[str, Any]]:
    logs = sorted(folder.glob("*.log"))
    sidecars = sorted(folder.glob("*.json"))
    assert len(logs) == 1 and len(sidecars) == 1, list(folder.iterdir())
    return logs[0], json.loads(sidecars[0].read_text())


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_play_a_whole_battle_in_a_terminal(tmp_path):
    replays = tmp_path / "replays"
    term = Terminal(
        "play", "--opponent", "random", "--format", "gen9randombattle", "--seed", "4",
        "--replays", str(replays), "--name", "Tester", cwd=tmp_path,
    )  # fmt: skip
    try:
        answered, simulators = 0, []
        while True:
            seen = term.expect(PROMPT, RATING_PROMPT)
            if seen is None:
                break
            if seen == PROMPT:
                if not simulators:
                    simulators = term.simulator_pids()
                term.send("1\n")
                answered += 1
                assert answered < 1000, "the battle does not end"
            else:
                term.send("3\n")
        code = term.wait()
    finally:
        term.kill()
    screen = term.text
    assert code == 0, screen[-3000:]
    assert simulators, "the command runs its battle on a Showdown simulator process"
    assert_gone(simulators)
    assert "=== Turn 1 ===" in screen and "Your choices:" in screen and "  1. " in screen
    assert "What happened:" in screen
    assert re.search(r"You (won against|lost: ) ?random", screen) or "tie" in screen
    assert "Rated 3/5" in screen

    log_path, data = replay_files(replays)
    log = log_path.read_text()
    assert "|win|" in log or "|tie" in log
    assert "|player|p1|Tester|" in log and "|player|p2|random|" in log
    assert f"Replay: {log_path}" in screen
    assert data["rating"] == 3
    assert data["format"] == "gen9randombattle" and data["opponent"] == "random"
    assert data["seed"] == 4 and data["finished"] is True and data["ended_by"] == "battle"
    assert data["winner"] in ("player", "opponent", None)
    assert data["result"] in ("won", "lost", "tie")
    turns = data["turns"]
    assert turns >= 2 and f"|turn|{turns}" in log
    # A choice for every turn (forced switches add more), each the answer "1".
    assert {c["turn"] for c in data["choices"]} == set(range(1, turns + 1))
    assert len(data["choices"]) == answered
    assert all(c["input"] == "1" for c in data["choices"])


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("key", "code", "how"),
    [(b"\x04", 1, "eof"), (b"\x03", 130, "interrupt")],
    ids=["ctrl-d", "ctrl-c"],
)
def test_ctrl_d_or_ctrl_c_in_a_terminal_forfeits_and_saves(tmp_path, key, code, how):
    replays = tmp_path / "replays"
    term = Terminal(
        "play", "--opponent", "max_power", "--seed", "9", "--replays", str(replays),
        cwd=tmp_path,
    )  # fmt: skip
    try:
        assert term.expect(PROMPT) == PROMPT
        simulators = term.simulator_pids()
        term.send("2\n")
        assert term.expect(PROMPT) == PROMPT
        term.wait_until_reading()
        term.send(key)
        exit_code = term.wait()
    finally:
        term.kill()
    assert exit_code == code, term.text[-3000:]
    assert "Traceback" not in term.text
    assert "you forfeited the battle" in term.text
    assert RATING_PROMPT not in term.text
    assert simulators
    assert_gone(simulators)
    log_path, data = replay_files(replays)
    assert log_path.read_text().rstrip().endswith("|win|max_power")
    assert (data["ended_by"], data["result"], data["winner"]) == (how, "forfeit", "opponent")
    assert data["rating"] is None and len(data["choices"]) == 1


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pokegym.cli", *args],
        capture_output=True, text=True, timeout=120, cwd=cwd, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.timeout(300)
def test_bad_options_fail_with_exit_code_2(tmp_path):
    result = run_cli("play", "--opponent", "no_such_agent", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("pokegym: error: No agent named 'no_such_agent'")
    assert "random" in lines[0] and "abyssal" in lines[0]  # it lists the known agents
    assert not (tmp_path / "replays").exists()

    result = run_cli("play", "--opponent", "random:seed", cwd=tmp_path)
    assert result.returncode == 2 and "key=value" in result.stderr

    result = run_cli("play", "--opponent", "random", "--name", "a|b", cwd=tmp_path)
    assert result.returncode == 2 and "--name" in result.stderr


def test_switch_names_a_lead_at_team_preview():
    leads = [
        ChoiceOption(1, "lead", "Garchomp", "team 123"),
        ChoiceOption(2, "lead", "Gholdengo", "team 213"),
    ]
    assert resolve_input("switch gho", leads).choice == "team 213"
    assert resolve_input("lead GAR", leads).choice == "team 123"
    with pytest.raises(InputError, match="several choices"):
        resolve_input("g", leads)


@pytest.mark.slow
def test_the_same_seed_and_answers_replay_the_same_battle():
    first, _, _ = play(["1", "2", "1", EOFError], seed=13)
    again, _, _ = play(["1", "2", "1", EOFError], seed=13)
    other, _, _ = play(["1", "2", "1", EOFError], seed=14)
    assert first.log == again.log and first.choices == again.choices
    assert first.log != other.log
