"""Errors a user can cause are clear exceptions that say what to do."""

from __future__ import annotations

import socket

import pytest

from pokegym.agents import make_agent, parse_agent_spec
from pokegym.cli import main as cli_main
from pokegym.env import ShowdownEnv
from pokegym.errors import (
    AgentOptionError,
    InvalidTeamError,
    NodeNotFoundError,
    PokegymError,
    PortInUseError,
    ServerError,
    ShowdownInstallError,
    UnknownAgentError,
    UnknownBackendError,
    UnknownFormatError,
)
from pokegym.formats import resolve_format
from pokegym.showdown import install
from pokegym.showdown.server import LocalServer
from pokegym.showdown.simulator import Simulator
from pokegym.teams import validate_team
from pokegym.vector import ShowdownVectorEnv

ILLEGAL_MOVE_TEAM = """\
Pikachu @ Light Ball
Ability: Static
Tera Type: Electric
EVs: 252 SpA / 4 SpD / 252 Spe
Timid Nature
- Thunderbolt
- Spore
- Volt Switch
- Surf
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("battle_format", "suggestion"),
    [
        ("gen9oo", "gen9ou"),
        ("gen9randombatle", "gen9randombattle"),
        ("Gen8RandomBattel", "gen8randombattle"),
    ],
)
def test_unknown_format_suggests_formats(battle_format, suggestion):
    with pytest.raises(UnknownFormatError) as excinfo:
        ShowdownEnv(battle_format)
    assert isinstance(excinfo.value, ValueError)
    message = str(excinfo.value)
    assert battle_format in message
    assert f"Did you mean {suggestion}" in message


@pytest.mark.parametrize("battle_format", ["", "   ", None, 9])
def test_format_must_be_a_non_empty_string(battle_format):
    with pytest.raises(UnknownFormatError, match="non-empty string"):
        resolve_format(battle_format)


@pytest.mark.slow
@pytest.mark.parametrize("battle_format", ["gen9doublesou", "gen9randomdoublesbattle"])
def test_doubles_formats_are_rejected(battle_format):
    with pytest.raises(UnknownFormatError, match="doubles format; pokegym plays singles"):
        ShowdownEnv(battle_format)


@pytest.mark.slow
def test_format_facts():
    ou = resolve_format("gen9ou")
    assert (ou.gen, ou.random_teams, ou.team_preview, ou.gimmick) == (
        9,
        False,
        True,
        "terastallize",
    )
    assert ou.needs_teams
    random8 = resolve_format("gen8randombattle")
    assert (random8.gen, random8.random_teams, random8.gimmick) == (8, True, "dynamax")
    assert resolve_format("gen8randombattle", dynamax=False).gimmick is None
    assert resolve_format("gen91v1factory").picked_team_size == 1


@pytest.mark.slow
def test_illegal_move_in_team_quotes_showdown(make_env):
    with pytest.raises(InvalidTeamError) as excinfo:
        make_env("gen9ou", team=ILLEGAL_MOVE_TEAM)
    assert isinstance(excinfo.value, ValueError)
    assert "Pikachu can't learn Spore" in str(excinfo.value)
    with pytest.raises(InvalidTeamError, match="Pikachu can't learn Spore"):
        make_env("gen9ou", opponent_team=ILLEGAL_MOVE_TEAM)


@pytest.mark.slow
def test_banned_tera_blast_quotes_showdown(gen9ou_pool):
    team = next(t for t in gen9ou_pool if "rain" in t.name)
    banned = team.text.replace("- Knock Off", "- Tera Blast")
    assert banned != team.text
    with pytest.raises(InvalidTeamError) as excinfo:
        validate_team(banned, "gen9ou")
    message = str(excinfo.value)
    assert "Tera Blast is banned" in message
    assert "gen9ou" in message


@pytest.mark.slow
def test_unreadable_teams():
    with pytest.raises(InvalidTeamError, match="neither a team file that exists nor team text"):
        ShowdownEnv("gen9ou", team="/no/such/team.txt")
    with pytest.raises(InvalidTeamError, match="empty"):
        validate_team("   \n  ", "gen9ou")
    with pytest.raises(InvalidTeamError):
        validate_team("Not A Pokemon\n- Splash\n", "gen9ou")


@pytest.mark.slow
def test_a_team_file_that_is_not_utf8_is_an_invalid_team(tmp_path, rain_team):
    """A team saved in another encoding (here UTF-16, as some editors on Windows do) is
    one clear InvalidTeamError naming the file, also inside a folder of teams."""
    from pokegym.teams import TeamPool, load_team

    bad = tmp_path / "utf16.txt"
    bad.write_bytes(rain_team.encode("utf-16"))
    with pytest.raises(InvalidTeamError, match=r"utf16\.txt.*UTF-8"):
        load_team(bad)
    with pytest.raises(InvalidTeamError, match=r"utf16\.txt.*UTF-8"):
        load_team(str(bad))
    (tmp_path / "good.txt").write_text(rain_team)
    with pytest.raises(InvalidTeamError, match=r"utf16\.txt.*UTF-8"):
        TeamPool.from_sources([tmp_path], "gen9ou")
    with pytest.raises(InvalidTeamError, match=r"utf16\.txt"):
        ShowdownEnv("gen9ou", team=bad)


@pytest.mark.slow
def test_empty_team_string_is_an_empty_team(tmp_path, monkeypatch, rain_team):
    """``team=""`` is an empty team, not "every .txt file in the current directory"."""
    (tmp_path / "notes.txt").write_text(rain_team)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidTeamError, match="empty"):
        ShowdownEnv("gen9ou", team="")


@pytest.mark.slow
def test_team_for_random_format_is_rejected(rain_team):
    with pytest.raises(InvalidTeamError, match="generates its own teams"):
        ShowdownEnv("gen9randombattle", team=rain_team)
    with pytest.raises(InvalidTeamError, match="generates its own teams"):
        ShowdownEnv("gen9randombattle", opponent_team=rain_team)


@pytest.mark.slow
def test_mirror_with_opponent_team_is_rejected(rain_team):
    with pytest.raises(ValueError, match="mirror"):
        ShowdownEnv("gen9ou", mirror=True, opponent_team=rain_team)


@pytest.mark.slow
def test_unknown_opponent_lists_known_agents():
    with pytest.raises(UnknownAgentError) as excinfo:
        ShowdownEnv("gen9randombattle", opponent="no_such_agent")
    message = str(excinfo.value)
    assert "'no_such_agent'" in message
    assert "max_power" in message and "random" in message
    assert isinstance(excinfo.value, PokegymError)


@pytest.mark.parametrize("spec", ["random:seed", "random:=3", "max_power:seed=1,depth"])
def test_bad_agent_option_syntax(spec):
    with pytest.raises(ValueError, match="key=value"):
        make_agent(spec)


def test_agent_options_are_typed():
    name, options = parse_agent_spec(" mine:a=1,b=true,c=none,d=0.5,e=text ")
    assert name == "mine"
    assert options == {"a": 1, "b": True, "c": None, "d": 0.5, "e": "text"}
    with pytest.raises(TypeError, match="Cannot use 42 as an agent"):
        make_agent(42)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("distilled:colour=red", "unexpected keyword argument 'colour'"),
        ("distilled:depth=1", r"maximin search: write distilled:search=maximin,depth="),
        ("distilled:search=maximin,depth=1", "depth >= 2"),
        ("distilled:search=maximin,anchor=nobody", "anchor must be one of"),
        ("distilled:anchor=nobody", "anchor is one of none, abyssal"),
        ("distilled:search=greedy", "search is one of mcts, maximin"),
    ],
)
def test_bad_agent_options_name_the_spec_and_the_class(spec, message):
    with pytest.raises(AgentOptionError, match=message) as excinfo:
        make_agent(spec)
    assert spec in str(excinfo.value) and "keyword arguments" in str(excinfo.value)
    assert isinstance(excinfo.value, PokegymError) and isinstance(excinfo.value, ValueError)


@pytest.mark.parametrize("option", ["checkpoint", "memory"])
def test_a_missing_file_named_by_an_agent_option_is_a_clear_cli_error(option, tmp_path):
    """``pokegym compare`` reports it in one line (no traceback, no header or progress bar
    first) and plays nothing."""
    import subprocess
    import sys

    out = tmp_path / "results"
    search = "" if option == "checkpoint" else "search=maximin,"
    spec = f"distilled:{search}{option}={tmp_path / 'missing'}"
    run = subprocess.run([sys.executable, "-m", "pokegym.cli", "compare", "--agents",
                          f"{spec},abyssal", "--battles", "1", "--out", str(out)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert "Traceback" not in run.stderr and "%|" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("pokegym: error:")
    assert ("pokegym distill" if option == "checkpoint" else "pokegym memorize") in run.stderr
    assert not out.exists()


def test_vector_env_refuses_the_server_backend():
    with pytest.raises(UnknownBackendError, match="backend='sim'"):
        ShowdownVectorEnv(2, backend="server")


@pytest.mark.parametrize("backend", ["nope", "", "SIM", None])
def test_an_unknown_backend_is_a_pokegym_error_listing_the_valid_ones(backend):
    with pytest.raises(UnknownBackendError) as caught:
        ShowdownEnv("gen9randombattle", backend=backend)
    assert isinstance(caught.value, PokegymError)
    assert isinstance(caught.value, ValueError)  # what it was before, for callers catching that
    assert str(caught.value) == (
        f"Unknown backend {backend!r}: use 'sim' (the embedded simulator, the default) or "
        "'server' (a Showdown server, with server_url= or one started here)."
    )


def test_an_unknown_backend_at_the_command_line_is_status_2_naming_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as caught:
        cli_main(["battle", "--backend", "nope"])
    assert caught.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--backend: invalid choice: 'nope'" in last and "sim" in last and "server" in last


@pytest.fixture
def fresh_find_node():
    install.find_node.cache_clear()
    yield
    install.find_node.cache_clear()


@pytest.mark.slow
def test_node_missing(monkeypatch, fresh_find_node, tmp_path):
    missing = tmp_path / "no-node-here" / "node"
    with monkeypatch.context() as patch:
        patch.setenv("POKEGYM_NODE", str(missing))
        install.find_node.cache_clear()
        with pytest.raises(NodeNotFoundError, match="no-node-here"):
            install.find_node()
        sim = Simulator()
        try:
            with pytest.raises(NodeNotFoundError):
                sim.ensure_running()
            assert not sim.is_running()
        finally:
            sim.close()
    install.find_node.cache_clear()
    assert install.find_node().version[0] >= install.MIN_NODE_MAJOR


def test_node_not_on_path(monkeypatch, fresh_find_node, tmp_path):
    with monkeypatch.context() as patch:
        patch.delenv("POKEGYM_NODE", raising=False)
        patch.setenv("PATH", str(tmp_path))
        install.find_node.cache_clear()
        with pytest.raises(NodeNotFoundError, match="POKEGYM_NODE"):
            install.find_node()


def test_showdown_dir_without_showdown(monkeypatch, tmp_path):
    with monkeypatch.context() as patch:
        patch.setenv("POKEGYM_SHOWDOWN_DIR", str(tmp_path))
        with pytest.raises(ShowdownInstallError, match="POKEGYM_SHOWDOWN_DIR"):
            install.showdown_package_dir()
        sim = Simulator()
        try:
            with pytest.raises(ShowdownInstallError, match=r"dist/sim/index\.js"):
                sim.ensure_running()
        finally:
            sim.close()
        with pytest.raises(ShowdownInstallError):
            LocalServer().start()
    assert (install.showdown_package_dir() / "dist" / "sim" / "index.js").exists()


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(60)
def test_port_in_use_by_a_listening_socket():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        server = LocalServer(port=port, startup_timeout=20)
        with pytest.raises(PortInUseError, match=str(port)) as excinfo:
            server.start()
        assert isinstance(excinfo.value, ServerError)
        assert not server.is_running()


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(60)
def test_port_in_use_by_a_bound_socket():
    """A port another program has bound (not yet listening) is in use too: the
    server cannot bind it. start() must say so, promptly."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        # A start that waited for the server to answer would end, after the startup
        # timeout, in a plain ServerError; the port is recognised as taken instead.
        server = LocalServer(port=port, startup_timeout=8)
        try:
            with pytest.raises(PortInUseError, match=str(port)):
                server.start()
        finally:
            server.stop()
