"""Showdown replays as data: reading the replay site's forms, each player's view decision
by decision, agreement with the battles the simulator played, and the export that
``pokegym distill`` reads.

Hand-made logs in tests/fixtures/replays cover Team Preview, Terastallization, a forfeit,
Illusion, a loss to the battle timer and Dynamax; the other replays are battles played
here on the embedded simulator. Nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from poke_env.battle import Move, Pokemon

from pokegym.replays import (
    ReplayFileError,
    ending,
    player_decisions,
    read_replay,
    replay_files,
    replay_html,
    replay_json,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "replays"
PREVIEW = FIXTURES / "gen9ou-preview-tera-forfeit.log"
ILLUSION = FIXTURES / "gen9randombattle-illusion-timeout.log"
DYNAMAX = FIXTURES / "gen8randombattle-dynamax.log"


def decisions(path: Path, role: str) -> list:
    """(point, order, facts) per decision; facts read from the battle at that moment."""
    out = []
    for d in player_decisions(read_replay(path), role):
        b = d.battle
        facts = {
            "team": {k: (m.species, round(m.current_hp_fraction, 2)) for k, m in b.team.items()},
            "opponent": {k: m.species for k, m in b.opponent_team.items()},
            "active": b.active_pokemon.species if b.active_pokemon else None,
            "switches": sorted(m.species for m in b.available_switches),
            "moves": [m.id for m in b.available_moves],
            "can_tera": b.can_tera,
        }
        out.append((d.point, d.order, facts))
    return out


# ------------------------------------------------------------------------ files
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.log")), ids=lambda p: p.stem)
def test_every_fixture_reads_the_same_as_log_json_and_html(path, tmp_path):
    replay = read_replay(path)
    assert replay.id == path.stem and len(replay.lines) > 20
    (tmp_path / "r.json").write_text(replay_json(replay))
    (tmp_path / "r.html").write_text(replay_html(replay))
    for other in (read_replay(tmp_path / "r.json"), read_replay(tmp_path / "r.html")):
        assert other.lines == replay.lines
        assert other.players == replay.players and other.format_id == replay.format_id


def test_the_replay_sites_json_keys_are_read(tmp_path):
    log = PREVIEW.read_text()
    data = {"id": "gen9ou-2000000001", "format": "[Gen 9] OU", "players": ["Alice", "Bob"],
            "rating": 1502, "uploadtime": 1700000123, "views": 10, "log": log}  # fmt: skip
    (tmp_path / "gen9ou-2000000001.json").write_text(json.dumps(data))
    replay = read_replay(tmp_path / "gen9ou-2000000001.json")
    assert (replay.id, replay.format_id, replay.players) == (
        "gen9ou-2000000001", "gen9ou", ("Alice", "Bob")
    )  # fmt: skip
    assert (replay.rating, replay.upload_time, replay.gen) == (1502, 1700000123, 9)
    data.update(formatid="gen9ou", rating=None)
    (tmp_path / "b.json").write_text(json.dumps(data))
    assert read_replay(tmp_path / "b.json").rating is None


def test_the_html_page_unescapes_its_log(tmp_path):
    page = (
        '<html><script type="text/plain" class="battle-log-data">|player|p1|A &amp; B|1|\n'
        "|player|p2|C|2|\n|gen|9\n|tier|[Gen 9] OU\n|switch|p1a: X|Pikachu|100/100\n"
        "|c|C|see <b>this<\\/b>\n</script></html>"
    )
    (tmp_path / "page.html").write_text(page)
    replay = read_replay(tmp_path / "page.html")
    assert replay.players == ("A & B", "C")
    assert "|c|C|see <b>this</b>" in replay.lines


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("bad.json", "{not json", "not valid JSON"),
        ("nolog.json", '{"id": "x", "players": ["a", "b"]}', "without a replay's 'log'"),
        ("rating.json", '{"log": "|player|p1|a|1|\\n|turn|1", "rating": "high"}', "not a number"),
        ("page.html", "<html><body>no battle here</body></html>", "battle-log-data"),
        ("empty.log", "hello\nworld\n", "holds no battle log"),
        ("notes.txt", "|turn|1\n", "not a replay file"),
        ("sidecar.json", '{"log": "missing.log"}', "which is missing"),
    ],
)
def test_a_bad_file_gives_one_named_error_that_names_it(tmp_path, name, content, says):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ReplayFileError) as info:
        read_replay(path)
    assert str(path) in str(info.value) and says in str(info.value)


def test_binary_and_missing_files_are_named_errors(tmp_path):
    (tmp_path / "x.log").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(ReplayFileError, match="not UTF-8"):
        read_replay(tmp_path / "x.log")
    with pytest.raises(ReplayFileError, match="No replay file"):
        read_replay(tmp_path / "absent.json")
    with pytest.raises(ReplayFileError, match="No replay folder"):
        replay_files(tmp_path / "sub")
    (tmp_path / "sub").mkdir()
    with pytest.raises(ReplayFileError, match="holds no replay files"):
        replay_files(tmp_path / "sub")


def test_one_battle_in_several_forms_counts_once(tmp_path):
    replay = read_replay(PREVIEW)
    (tmp_path / "a.log").write_text(replay.log)
    (tmp_path / "a.json").write_text(replay_json(replay))
    (tmp_path / "a.html").write_text(replay_html(replay))
    (tmp_path / "b.html").write_text(replay_html(replay))
    assert [p.name for p in replay_files(tmp_path)] == ["a.json", "b.html"]


# ------------------------------------------------------------------ decisions
def test_team_preview_tera_and_a_forfeit():
    p1 = decisions(PREVIEW, "p1")
    kinds = [(p.kind, p.turn, p.action.label if p.action else None) for p, _, _ in p1]
    assert kinds == [("team_preview", 0, "team:garchomp"), ("turn", 1, "move:earthquake:tera"),
                     ("turn", 2, "move:earthquake"), ("turn", 3, None)]  # fmt: skip
    point, order, facts = p1[1]
    assert point.opponent_action.label == "move:icespinner"
    assert order.terastallize and isinstance(order.order, Move) and order.order.id == "earthquake"
    assert facts["can_tera"] and facts["moves"] == ["earthquake"]
    # Before turn 1 p1 has seen only the Great Tusk of p2's team.
    assert facts["opponent"] == {"p2: Great Tusk": "greattusk"}
    assert p1[2][2]["can_tera"] is False  # spent
    assert p1[2][0].opponent_action.label == "switch:gholdengo"
    p2 = decisions(PREVIEW, "p2")
    assert p2[-1][0].action.label == "forfeit" and p2[-1][1] is None
    assert p2[2][1] is not None and isinstance(p2[2][1].order, Pokemon)  # the switch's order
    assert ending(read_replay(PREVIEW).lines, ("Alice", "Bob")).reason == "forfeit"


def test_illusion_forced_switches_and_the_battle_timer():
    p1 = decisions(ILLUSION, "p1")
    labels = [(p.kind, p.action.label if p.action else None) for p, _, _ in p1]
    assert labels == [("turn", "move:voltswitch"), ("forced_switch", "switch:zoroark"),
                      ("turn", "move:knockoff"), ("forced_switch", "switch:pikachu"),
                      ("turn", "timeout")]  # fmt: skip
    # The U-turn-like switch is chosen between the move and the opponent's reply.
    assert p1[1][0].opponent_action is None
    # The player's view has its Zoroark all along (the log reveals it by |replace|)...
    assert "p1: Zoroark" in p1[0][2]["team"]
    # ...and the opponent saw a Kingdra until the Illusion broke.
    p2 = decisions(ILLUSION, "p2")
    assert p2[1][2]["opponent"].get("p1: Zoroark") == "zoroark"
    result = ending(read_replay(ILLUSION).lines, ("Carol", "Dave"))
    assert (result.winner, result.reason, result.loser_role) == ("Dave", "timeout", "p1")


def test_dynamax_names_the_move_that_became_the_max_move():
    p1 = decisions(DYNAMAX, "p1")
    point, order, _ = p1[0]
    assert point.action.label == "move:maxairstream:dynamax"
    assert order.dynamax and order.order.id == "bravebird"  # its only Flying move
    assert p1[2][0].action.label == "move:bravebird"
    p2 = decisions(DYNAMAX, "p2")
    assert p2[-1][0].action is None  # Lapras fainted before it moved


# ------------------------------------------------- battles played on the simulator
@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory):
    """Five battles on the simulator, compared side by side; their replays in DIR."""
    from pokegym.replays.agreement import AgreementConfig, check_agreement

    folder = tmp_path_factory.mktemp("played")
    report = check_agreement(AgreementConfig(battles=5, seed=0, out=str(folder)))
    return report, folder


@pytest.mark.slow
def test_each_sides_replayed_view_agrees_with_the_battle_the_simulator_played(played):
    report, _ = played
    assert report.battles == 5 and report.decisions > 100
    # Every decision a live player had is in the replay, and no other.
    assert report.missing == 0 and report.extra == 0
    # HP, status, faints, revealed moves of every Pokémon of both teams, at each decision.
    assert report.agreeing == report.decisions, report.summary()


@pytest.mark.slow
def test_the_written_replays_read_back_in_all_three_forms(played):
    _, folder = played
    written = sorted(folder.iterdir())
    assert len(written) == 15
    by_form = {suffix: [read_replay(p) for p in written if p.suffix == suffix]
               for suffix in (".log", ".json", ".html")}  # fmt: skip
    for log, page, data in zip(by_form[".log"], by_form[".html"], by_form[".json"], strict=True):
        assert log.lines == page.lines == data.lines
        assert data.format_id == "gen9randombattle" and data.players == ("p1", "p2")
    assert len(replay_files(folder)) == 5  # one per battle


def test_compare_views_finds_each_kind_of_difference():
    from pokegym.replays.agreement import compare_views

    mon = {"species": "pikachu", "hp": 0.5, "status": "", "fainted": False,
           "moves": frozenset({"thunderbolt"})}  # fmt: skip
    live = {"team": {"p1: P": dict(mon, moves=frozenset({"thunderbolt", "surf"}))},
            "opponent": {"p2: P": mon}}  # fmt: skip
    same = {"team": {"p1: P": dict(mon, hp=0.505)}, "opponent": {"p2: P": mon}}
    assert compare_views(live, same) == []
    off = {"team": {"p1: P": dict(mon, moves=frozenset({"tackle"}))},
           "opponent": {"p2: P": dict(mon, hp=0.49, status="PAR")}}  # fmt: skip
    assert sorted(compare_views(live, off)) == ["opponent hp", "opponent status", "own moves"]


@pytest.mark.slow
def test_export_writes_a_collection_that_distill_reads(played, tmp_path):
    import numpy as np

    from train.collection import SCHEMA, read_collection
    from train.dataset import load_dataset
    from train.distill import DistillConfig
    from train.replays_export import COLUMNS, ExportConfig, export_replays

    _, folder = played
    # The same columns and types as `pokegym collect` writes.
    assert [(n, t) for n, t, _ in SCHEMA] == list(COLUMNS)
    out = tmp_path / "data"
    summary = export_replays(ExportConfig(str(folder), str(out), side="both"))
    assert summary.replays == 5 and summary.rows > 100 and not summary.unreadable
    table = read_collection(out)
    assert table.num_rows == summary.rows
    rows = table.to_pylist()
    assert {r["side"] for r in rows} == {0, 1} and {r["format"] for r in rows} == {
        "gen9randombattle"
    }
    # The action taken is legal in its mask, and its label among the legal labels.
    assert all(r["action_mask"][r["action"]] == 1 for r in rows)
    assert all(r["action_label"] in r["legal_labels"] for r in rows)
    assert {r["outcome"] for r in rows} <= {0.0, 1.0}
    data = load_dataset(DistillConfig(data=str(out), out=str(tmp_path / "ckpt"),
                                      policy_head=True))  # fmt: skip
    assert data.states.shape[0] == summary.rows and np.isfinite(data.states).all()
    assert data.actions is not None and (data.actions >= 0).all()
    with pytest.raises(Exception, match="already holds a collection"):
        export_replays(ExportConfig(str(folder), str(out)))


@pytest.mark.slow
def test_the_command_exports_one_side_of_the_hand_made_replays(tmp_path, capsys):
    from pokegym.cli import main
    from train.collection import read_collection

    out = tmp_path / "p1"
    assert main(["replays", "export", str(FIXTURES), "--side", "p1", "--out", str(out)]) == 0
    assert "decisions of 3 replays" in capsys.readouterr().out
    rows = read_collection(out).to_pylist()
    assert {r["side"] for r in rows} == {0}
    assert "move:earthquake:tera" in {r["action_label"] for r in rows}
    assert main(["replays", "export", str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 2


@pytest.mark.slow
def test_rows_are_encoded_as_collect_encodes_them():
    """The same live battle and order give the same row through the export's encoder as
    through `pokegym collect`'s, column by column."""
    import numpy as np

    from pokegym.actions import ActionCodec
    from pokegym.backends.sim import SimBattleSession
    from pokegym.formats import resolve_format
    from pokegym.replays.decisions import DecisionPoint
    from pokegym.replays.view import Decision
    from train.collect import CollectConfig, _Worker
    from train.replays_export import Encoders, decision_row

    worker = _Worker(CollectConfig(agents=["random"], progress=False))
    try:
        fmt = resolve_format("gen9randombattle", simulator=worker.sim)
        codec, tools = ActionCodec(fmt.gimmick), Encoders(9)
        session = SimBattleSession(worker.sim, fmt, seeds=(11, 12, 13))
        rng = np.random.default_rng(0)
        compared = 0
        for _ in range(12):
            if session.finished:
                break
            choices = {}
            for side in (0, 1):
                if not session.needs_choice(side):
                    continue
                battle = session.battles[side]
                action = int(rng.choice(codec.legal_actions(battle)))
                order = codec.to_order(action, battle)
                theirs = worker._row(battle, order, None)
                point = DecisionPoint(0, "p1", "turn", battle.turn, None)
                ours = decision_row(Decision(point, battle, order), codec, tools)
                assert (theirs is None) == (ours is None)
                if theirs is not None:
                    compared += 1
                    for key, value in theirs.items():
                        assert np.array_equal(np.asarray(value), np.asarray(ours[key])), key
                choices[side] = codec.to_choice(action, battle)
            session.choose(choices)
        session.close()
        assert compared >= 10
    finally:
        worker.close()


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid``."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_sigterm_stops_a_check_and_leaves_no_simulator_running(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    command = [sys.executable, "-m", "pokegym.cli", "replays", "check", "--battles", "500",
               "--out", str(tmp_path)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # the simulator is up once the first replay is written
            if any(tmp_path.glob("*.log")):
                break
            time.sleep(0.1)
        children = _children(process.pid)
        assert children, "no simulator process was started"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM and b"interrupted" in err
    time.sleep(0.5)
    still = [pid for pid in children if _running(pid)]
    assert not still, f"processes {still} still run"


def test_recharge_and_struggle_are_the_only_choice_offered():
    from pokegym.replays import replay_from_log

    log = "\n".join([
        "|player|p1|A|1|", "|player|p2|B|2|", "|gen|9", "|tier|[Gen 9] Random Battle",
        "|start", "|switch|p1a: Snorlax|Snorlax, L84|100/100",
        "|switch|p2a: Pikachu|Pikachu, L93|100/100", "|turn|1",
        "|move|p1a: Snorlax|Giga Impact|p2a: Pikachu", "|-damage|p2a: Pikachu|10/100",
        "|-mustrecharge|p1a: Snorlax", "|move|p2a: Pikachu|Struggle|p1a: Snorlax",
        "|-damage|p1a: Snorlax|95/100", "|upkeep", "|turn|2",
        "|cant|p1a: Snorlax|recharge", "|move|p2a: Pikachu|Struggle|p1a: Snorlax",
        "|-damage|p1a: Snorlax|90/100", "|upkeep", "|turn|3",
    ])  # fmt: skip
    replay = replay_from_log(log)
    p1 = list(player_decisions(replay, "p1"))
    assert p1[1].action.label == "recharge"
    assert p1[1].order is not None and p1[1].order.order.id == "recharge"
    p2 = list(player_decisions(replay, "p2"))
    assert [d.action.label for d in p2[:2]] == ["move:struggle", "move:struggle"]
    assert all(d.order is not None and d.order.order.id == "struggle" for d in p2[:2])


@pytest.mark.slow
@pytest.mark.parametrize("battle_format", ["gen9ou", "gen8randombattle"])
def test_views_agree_with_team_preview_and_with_dynamax(battle_format):
    from pokegym.replays.agreement import AgreementConfig, check_agreement

    report = check_agreement(AgreementConfig(battle_format=battle_format, battles=3, seed=1))
    assert report.decisions > 50 and report.missing == report.extra == 0
    assert report.agreeing == report.decisions, report.summary()


def test_writing_a_collection_without_pyarrow_says_what_to_install(monkeypatch, tmp_path):
    import sys

    from pokegym.errors import PokegymError
    from train.collection_format import write_shard

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    with pytest.raises(PokegymError, match=r"pokegym\[distill\]"):
        write_shard(tmp_path, [0], [])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_with_the_team_given_every_own_pokemon_has_its_stats_and_full_hp_until_shown(tmp_path):
    from pokegym.arena import ArenaConfig, run_arena
    from pokegym.teams import builtin_pool
    from pokegym.world.data import to_id

    run_arena(ArenaConfig(agents=["max_power", "random"], battles_per_pair=1, seed=4,
                          concurrency=1, clock_bank=None, battle_format="gen9ou",
                          replays=str(tmp_path)))  # fmt: skip
    replay = read_replay(next(tmp_path.glob("*.html")))
    shown = [line.split("|")[3].split(",")[0] for line in replay.lines
             if line.startswith("|poke|p1|")]  # fmt: skip
    team = next(t for t in builtin_pool("gen9ou").teams if t.species == shown)
    # Showdown's own max HP for each p1 Pokémon the log shows coming in (its own log is
    # exact for both sides).
    max_hp = {}
    for line in replay.lines:
        parts = line.split("|")
        if parts[1:2] == ["switch"] and parts[2].startswith("p1a"):
            max_hp[to_id(parts[3].split(",")[0])] = int(parts[4].split()[0].split("/")[1])
    first = next(player_decisions(replay, "p1", team=team.text, copy=True))
    seen = set()
    for d in player_decisions(replay, "p1", team=team.text):
        for mon in d.battle.team.values():
            assert mon.stats["spe"] and mon.max_hp, (d.point, mon.species, mon.stats)
            if to_id(mon.species) in max_hp:
                assert mon.max_hp == max_hp[to_id(mon.species)]
                seen.add(to_id(mon.species))
    assert seen and len(first.battle.team) == 6
    assert all(m.current_hp == m.max_hp and not m.fainted for m in first.battle.team.values())
