"""The diagnostic scripts in bench/ (the leaf-value probe) and the shipped GPU battles."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = ["-m", "bench.llm_value_probe"]
SHIPPED = ROOT / "policies" / "checkpoints" / "distilled-gen9randombattle"


def test_the_shipped_gpu_battles_are_consistent():
    """docs/data holds every battle behind the pokechamp rows of docs/results.md
    (per-run lines of the sharded runs, read by `pokegym compare --summarize`)."""
    from pokegym import journal as module

    data = ROOT / "docs" / "data" / "pokechamp-qwen-0.5b-h200.jsonl.gz"
    total = 0
    for opponent in ("abyssal", "one_step", "max_power"):
        summary = module.summarize([data], "pokechamp", opponent)
        assert summary["opponents"] == {opponent: summary["battles"]}
        assert sum(summary["record"]) == summary["battles"]
        assert summary["timeouts"] == 0
        total += summary["battles"]
    assert module.summarize([data], "pokechamp")["battles"] == total


def test_the_probe_judges_with_the_held_out_auc_of_training(benchmark_script):
    """One AUC for the probe and for `pokegym distill`'s held-out metrics (tested there)."""
    from train.metrics import roc_auc

    assert benchmark_script("llm_value_probe").roc_auc is roc_auc
    assert np.isnan(roc_auc(np.array([0.5, 0.6]), np.array([1, 1])))


@pytest.mark.slow
def test_the_value_probe_scores_real_states(tmp_path):
    pytest.importorskip("transformers")
    sys.path.insert(0, str(ROOT / "tests"))
    from llm_helpers import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    out = tmp_path / "probe.json"
    done = subprocess.run([sys.executable, *PROBE, "--battles", "2", "--stride", "4",
                           "--seed", "2", "--model", f"transformers:{folder}",
                           "--bootstrap", "50", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    summary, states = result["summary"], result["states"]
    assert summary["states"] == len(states) > 0 and summary["battles"] == 2
    for state in states:
        assert 0.0 <= state["llm"] <= 1.0 and 0.0 <= state["heuristic"] <= 1.0
        assert 0.0 <= state["network"] <= 1.0 and state["llm_mode"] in range(10)
    assert sum(summary["llm_modal_bucket_counts"]) == len(states)


@pytest.mark.slow
def test_the_value_probe_without_a_model_compares_the_other_two(tmp_path):
    out = tmp_path / "probe.json"
    done = subprocess.run([sys.executable, *PROBE, "--battles", "4", "--stride", "2",
                           "--seed", "3", "--model", "none", "--bootstrap", "100",
                           "--network", str(SHIPPED), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(out.read_text())["summary"]
    assert "llm" not in summary and "llm_modal_bucket_counts" not in summary
    for name in ("heuristic", "network"):
        assert 0.0 <= summary[name]["auc"] <= 1.0
    difference = summary["auc_network_minus_heuristic"]
    assert difference["value"] == pytest.approx(
        summary["network"]["auc"] - summary["heuristic"]["auc"]
    )
    assert -1.0 <= summary["spearman_heuristic_network"] <= 1.0


def test_cpu_hogs_run_inside_the_block_and_are_gone_after(benchmark_script):
    llm_clock = benchmark_script("llm_clock")
    with llm_clock.cpu_hogs(2) as hogs:
        assert len(hogs) == 2 and all(h.poll() is None for h in hogs)  # running
    assert all(h.poll() is not None for h in hogs)  # stopped and reaped


@pytest.mark.slow
def test_the_clock_benchmark_reads_the_arena_s_records(benchmark_script):
    llm_clock = benchmark_script("llm_clock")
    row = llm_clock.run("max_power", "random", 1, 0, "gen9randombattle")
    assert row["agent"] == "max_power" and row["wins"] + row["losses"] <= 1
    assert row["clock_losses"] == 0 and row["decisions"] > 0
    assert 0 <= row["median"] <= row["p95"] <= row["max"]


@pytest.mark.slow
def test_the_value_probe_compares_two_models_on_the_same_states(tmp_path):
    pytest.importorskip("transformers")
    sys.path.insert(0, str(ROOT / "tests"))
    from llm_helpers import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    other = build_tiny_model(tmp_path / "other", seed=5)
    out = tmp_path / "probe.json"
    models = f"transformers:{folder},transformers:{other}"
    done = subprocess.run([sys.executable, *PROBE, "--battles", "2", "--stride", "4",
                           "--seed", "2", "--model", models, "--bootstrap", "50",
                           "--out", str(out)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    first, second = f"llm:transformers:{folder}", f"llm:transformers:{other}"
    summary = result["summary"]
    assert first in summary and second in summary
    assert f"auc_{second}_minus_{first}" in summary  # paired on the same states
    values = [(s[first], s[second]) for s in result["states"]]
    assert values and all(0.0 <= a <= 1.0 and 0.0 <= b <= 1.0 for a, b in values)
    assert any(a != b for a, b in values)  # two different models, two sets of values


def test_the_scoring_benchmark_computes_only_the_options(tmp_path, benchmark_script, capsys):
    pytest.importorskip("transformers")
    sys.path.insert(0, str(ROOT / "tests"))
    from llm_helpers import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    script = benchmark_script("llm_scoring")
    assert script.main(["--model", f"transformers:{folder}", "--tokens", "80", "--tries", "1"]) == 0
    out = capsys.readouterr().out
    computed = int(out.split("(")[1].split(" option tokens")[0])
    # The cached calls compute the options' later tokens only, never the prompt again.
    assert 0 < computed < sum(len(label) for label in script.LABELS)
    assert "-token cached prompt" in out


def test_value_by_action_groups_searched_decisions_by_the_kind_played(benchmark_script):
    """bench/value_by_action.py: Tera moves are attacks, self-boosting status moves are
    boosts, rows without a search value are left out, and each cell averages its rows."""
    from pokegym.world.data import load_dex

    script = benchmark_script("value_by_action")
    dex = load_dex(9)
    assert script.action_kind("move:earthquake:tera", dex) == "attack"
    assert script.action_kind("move:swordsdance", dex) == "boost"
    assert script.action_kind("move:stealthrock", dex) == "status"
    assert script.action_kind("switch:2", dex) == "switch"
    assert script.action_kind(None, dex) == "other"
    rows = {
        "agent": ["a", "a", "a", "a"],
        "opponent": ["b", "b", "b", "b"],
        "action_label": ["move:earthquake", "move:closecombat:tera", "switch:1", "switch:2"],
        "search_value": [0.6, 0.8, 0.3, None],
        "heuristic_value": [0.5, 0.7, 0.4, 0.9],
        "outcome": [1.0, 0.0, 1.0, 0.0],
    }
    result = script.table(rows, dex)
    assert set(result) == {("a", "b", "attack"), ("a", "b", "switch")}
    n, value, heuristic, won = result[("a", "b", "attack")]
    assert (n, won) == (2, 0.5) and value == pytest.approx(0.7) and heuristic == pytest.approx(0.6)
    assert result[("a", "b", "switch")] == (1, 0.3, 0.4, 1.0)


@pytest.mark.slow
def test_the_belief_is_right_about_everything_the_battle_has_shown(capsys):
    """bench/belief_accuracy.py on real battles: what a battle has revealed (an item, an
    ability, a Tera type) the belief's guesses hold (short of an ability or item changed
    in battle, Trick or Skill Swap); what it has not, they guess."""
    from bench import belief_accuracy

    assert belief_accuracy.main(["--battles", "2", "--seed", "2", "--samples", "3"]) == 0
    rows = {}
    out = capsys.readouterr().out
    kept, wrong = re.search(r"evidence: (\d+); not explained by the true set: (\d+)", out).groups()
    assert int(kept) >= 5 and int(wrong) == 0, out  # Showdown rolled every hit with the truth
    clues = re.search(r"clues about items kept as evidence: (\d+); not explained.*: (\d+)", out)
    kept, wrong = clues.groups()
    assert int(kept) >= 5 and int(wrong) == 0, out
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] in belief_accuracy.ATTRIBUTES:
            rows[(parts[0], parts[1])] = (int(parts[2]), float(parts[3]))
    assert rows[("item", "hidden")][0] > 0 and rows[("item", "shown")][0] > 0
    for attribute in ("item", "ability", "tera"):
        if (attribute, "shown") in rows:
            assert rows[(attribute, "shown")][1] >= 95.0, (attribute, rows)
    assert 0.0 < rows[("tera", "hidden")][1] < 100.0


def test_an_order_is_named_as_the_engine_names_its_options():
    from poke_env.battle import Move, Pokemon
    from poke_env.player.battle_order import DefaultBattleOrder, SingleBattleOrder

    from bench.opponent_prediction import engine_name

    assert engine_name(SingleBattleOrder(Move("thunderbolt", gen=9))) == "thunderbolt"
    assert engine_name(SingleBattleOrder(Move("thunderbolt", gen=9), terastallize=True)) == (
        "thunderbolt-tera"
    )
    assert engine_name(SingleBattleOrder(Pokemon(gen=9, species="Ogerpon-Wellspring"))) == (
        "switch ogerponwellspring"
    )
    assert engine_name(DefaultBattleOrder()) is None


@pytest.mark.slow
def test_the_opponent_prediction_scores_every_turn_with_each_predictor():
    from bench.opponent_prediction import measure, report

    result = measure(1, 3, "engine:iterations=200,samples=2", "simple_heuristics", "gen9ou")
    probs, unnamed = result["probs"], result["unnamed"]
    engine, prior = probs["engine"], probs["prior"]
    assert len(engine) >= 5 and all(0.0 <= p <= 1.0 for p in engine + prior)
    assert result["battles"] == [0] * len(engine)  # each turn's battle: the interval's cluster
    # Every predictor is scored at every turn; an action it cannot name counts as 0.
    for name in ("prior", "prior_seen", "uniform"):
        assert len(probs[name]) == len(engine)
        assert sum(p == 0.0 for p in probs[name]) >= unnamed[name]
    # The world model names nearly every action played (not a move the guess lacks), and
    # with Team Preview's Pokémon in its state it names what it names without them.
    assert unnamed["prior"] == unnamed["uniform"] <= len(engine) // 5
    assert unnamed["prior"] <= unnamed["prior_seen"]
    assert not result["top"]["uniform"]
    # The probability on the reply played (all switches one) is at least that on the action.
    for name in ("engine", "prior", "prior_seen"):
        reply = probs[name, "reply"]
        assert len(reply) == len(engine)
        assert all(r >= p - 1e-9 and r <= 1 + 1e-9 for r, p in zip(reply, probs[name], strict=True))
    lines = report(result)
    assert [line.split()[0] for line in lines[1:5]] == ["engine", "prior", "prior_seen", "uniform"]
    assert lines[5].startswith("prior - prior_seen, paired")
