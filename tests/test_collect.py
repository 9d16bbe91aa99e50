"""Battle collection: real sim battles to Parquet shards, the schema, resuming after an
interruption without losing finished battles, and refusing a different collection."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pokegym.agents import register_agent
from policies.baselines import RandomPolicy
from policies.value_net import STATE_FEATURES
from train import collect as collect_module
from train.collect import main
from train.collection import SCHEMA_VERSION, collected_battles, read_collection

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


class Interrupting(RandomPolicy):
    """A random agent that raises KeyboardInterrupt (Ctrl-C) after ``after`` decisions."""

    budget: int | None = None

    def choose(self, battle):
        if Interrupting.budget is not None:
            Interrupting.budget -= 1
            if Interrupting.budget < 0:
                raise KeyboardInterrupt
        return super().choose(battle)


register_agent("interrupting", Interrupting)
ARGS = ["--agents", "max_power,interrupting", "--no-progress", "--seed", "3"]


def test_collection_rows_schema_and_outcomes(tmp_path):
    out = tmp_path / "data"
    assert main([*ARGS, "--battles", "3", "--out", str(out), "--shard-battles", "2"]) == 0
    assert collected_battles(out) == {0, 1, 2}
    assert len(list(out.glob("shard-*.parquet"))) == 2
    manifest = json.loads((out / "collection.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["state_features"] == STATE_FEATURES
    table = read_collection(out)
    rows = table.to_pylist()
    assert {r["battle_id"] for r in rows} == {0, 1, 2}
    for battle in (0, 1, 2):
        sides = {r["side"]: r["outcome"] for r in rows if r["battle_id"] == battle}
        assert set(sides) == {0, 1}
        assert sides[0] + sides[1] == pytest.approx(1.0)  # one side's win is the other's loss
    for r in rows:
        assert len(r["state"]) == STATE_FEATURES
        assert r["action_label"] in r["legal_labels"]
        assert r["action"] == -1 or r["action_mask"][r["action"]] == 1
        assert 0.0 <= r["heuristic_value"] <= 1.0
        assert r["llm_value"] is None and r["llm_leaf_scores"] is None  # no LLM played
        assert r["agent"] in ("max_power", "interrupting") and r["agent"] != r["opponent"]
    steps = [r["step"] for r in rows if r["battle_id"] == 0 and r["side"] == 0]
    assert steps == list(range(len(steps)))


def test_resume_after_an_interruption_keeps_finished_battles(tmp_path):
    out = tmp_path / "data"
    # The interruption lands in battle 2 of a 5-battle shard: battles 0 and 1 are finished.
    Interrupting.budget = None
    assert main([*ARGS, "--battles", "2", "--out", str(tmp_path / "reference")]) == 0
    reference = read_collection(tmp_path / "reference").to_pylist()
    per_battle = sum(1 for r in reference if r["agent"] == "interrupting")
    Interrupting.budget = per_battle + 3
    (out).mkdir()
    (out / ".shard-0000-dead.tmp").write_bytes(b"half a shard")  # a write that was cut off
    try:
        code = main([*ARGS, "--battles", "5", "--out", str(out), "--shard-battles", "5"])
    finally:
        Interrupting.budget = None
    assert code == 130
    assert collected_battles(out) == {0, 1}
    assert not list(out.glob(".shard-*.tmp"))
    # The same command again plays only the missing battles.
    assert main([*ARGS, "--battles", "5", "--out", str(out), "--shard-battles", "5"]) == 0
    assert collected_battles(out) == {0, 1, 2, 3, 4}
    rows = read_collection(out).to_pylist()
    ids = [(r["battle_id"], r["side"], r["step"]) for r in rows]
    assert len(ids) == len(set(ids))  # no battle twice
    # Seeded: battles 0-1 are the same battles as in the uninterrupted reference run.
    first = [r for r in rows if r["battle_id"] < 2]
    key = lambda r: (r["battle_id"], r["side"], r["step"])  # noqa: E731
    assert [r["action_label"] for r in sorted(first, key=key)] == [
        r["action_label"] for r in sorted(reference, key=key)
    ]
    np.testing.assert_allclose(
        [r["state"] for r in sorted(first, key=key)],
        [r["state"] for r in sorted(reference, key=key)],
    )


def test_a_different_collection_in_the_same_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "data"
    assert main([*ARGS, "--battles", "1", "--out", str(out)]) == 0
    assert main(["--agents", "max_power,random", "--battles", "2", "--out", str(out),
                 "--no-progress"]) == 2  # fmt: skip
    assert "holds another collection" in capsys.readouterr().err
    assert collected_battles(out) == {0}


def test_parallel_workers(tmp_path):
    out = tmp_path / "data"
    summary = collect_module.collect(collect_module.CollectConfig(
        agents=["max_power", "random"], battles=4, out=str(out), workers=2, shard_battles=2,
        progress=False))  # fmt: skip
    assert summary["collected"] == 4 and not summary["interrupted"]
    assert collected_battles(out) == {0, 1, 2, 3}
