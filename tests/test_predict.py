"""``pokegym predict``: top-k accuracy of an agent's ranking of the actions in replays.

The hand-made replay fixtures (tests/fixtures/replays) are read without Node; the
battles marked ``slow`` are played on the simulator in the test and read back as the
replays it wrote.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pokegym.errors import PokegymError, UnknownAgentError
from pokegym.replays import ReplayFileError, player_decisions, read_replay
from policies.abyssal import AbyssalPolicy
from policies.predict import Accuracy, PredictConfig, PredictError, main, predict
from policies.ranking import ActionRanker, order_label, ranker_for

FIXTURES = Path(__file__).parent / "fixtures" / "replays"


def _check_table(report) -> None:
    """Every row: shares in [0, 1], top-k never falls as k grows, intervals hold it."""
    assert report.rows()
    for _, _, acc in report.rows():
        assert acc.n > 0
        tops = [acc.top(k) for k in range(1, 6)]
        assert all(0.0 <= t <= 1.0 for t in tops)
        assert tops == sorted(tops)
        for k, top in enumerate(tops, start=1):
            low, high = acc.interval(k)
            assert low - 1e-9 <= top <= high + 1e-9  # Wilson's bounds, to rounding


def test_accuracy_counts_ranks_and_wilson_intervals():
    acc = Accuracy()
    for position in (0, 0, 1, 4, -1):
        acc.add(position, 6)
    assert acc.n == 5 and acc.mean_choices == 6.0
    assert [acc.top(k) for k in range(1, 6)] == [0.4, 0.6, 0.6, 0.6, 0.8]
    low, high = acc.interval(1)
    assert 0.0 < low < 0.4 < high < 1.0


@pytest.mark.parametrize("agent", ["max_power", "abyssal", "one_step"])
def test_the_fixtures_give_a_table_for_each_rule_bot(agent):
    report = predict(PredictConfig(agent, str(FIXTURES)))
    assert report.replays == 3 and not report.unreadable
    _check_table(report)
    player = report.table[("player", "all")]
    # Every decision whose action is an order of the request is counted, once.
    counted = sum(
        1
        for path in sorted(FIXTURES.iterdir())
        for role in ("p1", "p2")
        for d in player_decisions(read_replay(path), role)
        if d.order is not None
    )
    assert player.n == counted
    assert report.table[("player", "leads")].n == 2  # the gen9ou fixture's Team Preview
    assert ("opponent", "all") in report.table
    assert report.opponent_sources == {"opponent model": report.table[("opponent", "all")].n}


def test_a_ranking_holds_each_legal_order_once_with_the_choice_first():
    replay = read_replay(FIXTURES / "gen9randombattle-illusion-timeout.log")
    ranker = ranker_for(AbyssalPolicy(seed=0))
    assert isinstance(ranker, ActionRanker)
    checked = 0
    for decision in player_decisions(replay, "p1"):
        battle = decision.battle
        if not battle.valid_orders:
            continue
        ranked = ranker.rank(battle)
        labels = [order_label(o) for o, _ in ranked]
        assert len(labels) == len(set(labels))
        assert set(labels) == {order_label(o) for o in battle.valid_orders}
        scores = [s for _, s in ranked]
        assert scores == sorted(scores, reverse=True)
        ranker.agent.seed(0)
        assert labels[0] == order_label(ranker.agent.choose(battle))
        checked += 1
    assert checked >= 3


def test_a_search_ranks_by_its_visit_shares_and_guesses_the_opponent_by_its_own_tree():
    path = FIXTURES / "gen9randombattle-illusion-timeout.log"
    config = PredictConfig("distilled:iterations=40", str(path), side="p1")
    report = predict(config)
    _check_table(report)
    assert report.method == "choice, then search visit shares"
    assert report.opponent_sources.get("search", 0) > 0


def test_the_opponent_seen_from_its_own_side_is_that_sides_ranking():
    path = FIXTURES / "gen9randombattle-illusion-timeout.log"
    view = predict(PredictConfig("max_power", str(path), side="p1", opponent="view"))
    p2 = predict(PredictConfig("max_power", str(path), side="p2"))
    assert set(view.opponent_sources) == {"view"}
    opponent, theirs = view.table[("opponent", "all")], p2.table[("player", "all")]
    # The moments both players chose at are a part of p2's decisions.
    assert 0 < opponent.n <= theirs.n
    assert opponent.hits(1) <= theirs.hits(1)


def test_the_command_prints_the_table_and_writes_json(tmp_path, capsys):
    from pokegym.cli import main as pokegym_main

    out = tmp_path / "table.json"
    code = pokegym_main(["predict", "--agent", "max_power", "--replays", str(FIXTURES),
                         "--side", "p2", "--out", str(out)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "max_power on 3 replays" in printed and "top-5" in printed
    data = json.loads(out.read_text())
    assert data["config"]["side"] == "p2"
    rows = {(r["action"], r["group"]): r for r in data["table"]}
    assert 0.0 <= rows[("player", "all")]["top1"] <= rows[("player", "all")]["top5"] <= 1.0


def test_an_empty_folder_and_an_unknown_agent_are_named_errors(tmp_path, capsys):
    with pytest.raises(ReplayFileError, match="holds no replay files"):
        predict(PredictConfig("max_power", str(tmp_path)))
    with pytest.raises(UnknownAgentError, match="no_such_agent"):
        predict(PredictConfig("no_such_agent", str(FIXTURES)))
    with pytest.raises(PredictError, match="--side"):
        PredictConfig("max_power", str(FIXTURES), side="p3")
    assert main(["--agent", "no_such_agent", "--replays", str(FIXTURES)]) == 2
    assert "No agent named 'no_such_agent'" in capsys.readouterr().err
    assert main(["--agent", "max_power", "--replays", str(tmp_path)]) == 2
    assert "holds no replay files" in capsys.readouterr().err


def test_a_folder_of_unreadable_replays_is_one_error_that_names_them(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(PredictError, match=r"broken\.json") as caught:
        predict(PredictConfig("max_power", str(tmp_path)))
    assert isinstance(caught.value, PokegymError)
    # A readable replay next to it is measured, the broken one listed.
    shutil.copy(FIXTURES / "gen8randombattle-dynamax.log", tmp_path)
    report = predict(PredictConfig("max_power", str(tmp_path)))
    assert report.replays == 1 and len(report.unreadable) == 1


# ------------------------------------------------- battles played on the simulator
@pytest.mark.slow
def test_max_power_predicts_its_own_moves_in_its_own_battles(tmp_path):
    """max_power's move is a function of the moves it has (its switches are random
    draws). Battles stop at turn 6, before any move can run out of PP: the rebuilt
    request offers every known move with PP left (docs/predict.md)."""
    from pokegym.replays.agreement import AgreementConfig, check_agreement

    check_agreement(AgreementConfig(battles=4, seed=3, agents=("max_power", "max_power"),
                                    max_turns=6, out=str(tmp_path)))  # fmt: skip
    report = predict(PredictConfig("max_power", str(tmp_path)))
    assert report.replays == 4
    _check_table(report)
    moves = report.table[("player", "moves")]
    assert moves.n >= 20
    assert moves.top(1) == 1.0


def test_opponent_max_moves_are_skipped_not_counted_as_misses():
    from policies.predict import _not_comparable

    assert _not_comparable("move:maxairstream:dynamax") and _not_comparable("move:maxairstream")
    assert _not_comparable("move:gmaxwildfire") and _not_comparable("move:flamethrower:z")
    assert not _not_comparable("move:bodypress") and not _not_comparable("move:bodypress:tera")
    assert not _not_comparable("switch:maxwell") and not _not_comparable("team:garchomp")
