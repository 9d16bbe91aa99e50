"""Expert iteration on the real path: the search agent's root visit shares are collected
from real battles, the policy head learns them from a checkpoint whose value heads stay
fixed, and the MCTS plays with that head as its root prior."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from pokegym.agents import make_agent
from pokegym.arena import ArenaConfig, run_arena
from policies.value_net import load_checkpoint
from train.collect import main as collect_main
from train.collection import CollectionError, collected_battles, read_collection
from train.distill import DistillConfig, train

pytest.importorskip("pyarrow", reason="collections need the distill extra")
pytestmark = pytest.mark.slow  # every test here plays real battles

SEARCHER = "mcts:iterations=40,determinizations=1,prior=heuristic"


def config(data, out, **changes):
    base = dict(data=str(data), out=str(out), hidden=(32,), residual=False, dropout=0.0,
                max_epochs=8, patience=8, batch_size=64, val_fraction=0.3, threads=1)  # fmt: skip
    return DistillConfig(**{**base, **changes})


@pytest.fixture(scope="module")
def search_collection(tmp_path_factory):
    """Six real battles of the MCTS agent against ``one_step``."""
    out = tmp_path_factory.mktemp("search") / "data"
    code = collect_main(["--agents", f"{SEARCHER},one_step", "--battles", "6", "--out", str(out),
                         "--no-progress", "--seed", "21"])  # fmt: skip
    assert code == 0
    return out


@pytest.fixture(scope="module")
def checkpoints(search_collection, tmp_path_factory):
    """A value checkpoint, and a policy head trained on the search's shares from it."""
    root = tmp_path_factory.mktemp("checkpoints")
    train(config(search_collection, root / "value"), log=lambda _: None)
    summary = train(
        config(search_collection, root / "policy", init=str(root / "value"), policy_head=True,
               policy_target="search", train_value=False, lr=3e-3),
        log=lambda _: None,
    )  # fmt: skip
    return root / "value", root / "policy", summary


def test_search_rows_hold_the_root_visit_shares(search_collection):
    rows = read_collection(search_collection).to_pylist()
    searched = [r for r in rows if r["agent"] == SEARCHER]
    others = [r for r in rows if r["agent"] == "one_step"]
    assert searched and others
    assert all(r["search_policy"] is None and r["search_value"] is None for r in others)
    reported = [r for r in searched if r["search_policy"] is not None]
    assert len(reported) > 0.5 * len(searched)  # forced moves (one legal order) are not searched
    for r in reported:
        shares = np.asarray(r["search_policy"])
        assert shares.sum() == pytest.approx(1.0, abs=1e-4)
        assert np.all(shares[np.asarray(r["action_mask"]) == 0] == 0)  # only legal actions
        assert shares[r["action"]] == shares.max()  # the most visited action was played
        assert 0.0 <= r["search_value"] <= 1.0


def test_the_policy_head_learns_the_shares_and_the_value_heads_stay(checkpoints):
    value, policy, summary = checkpoints
    before, after = load_checkpoint(value), load_checkpoint(policy)
    assert before.config.observation_features == 0 and after.config.observation_features > 0
    for name, tensor in before.weights.items():  # the value heads are the initial ones
        np.testing.assert_array_equal(after.weights[name], tensor, err_msg=name)
    assert summary["best"]["epoch"] >= 1
    assert summary["best"]["policy_ce"] < summary["initial"]["policy_ce"]
    document = json.loads((policy / "config.json").read_text())
    assert document["training"]["policy_target"] == "search"


def test_the_mcts_plays_with_the_learned_root_prior(checkpoints):
    _, policy, _ = checkpoints
    made = []

    def factory(**_):
        made.append(make_agent(f"mcts:iterations=30,prior=network,checkpoint={policy}"))
        return made[-1]

    from pokegym.agents import register_agent

    register_agent("prior_net", factory)
    result = run_arena(ArenaConfig(agents=["prior_net", "random"], battles_per_pair=1, seed=5,
                                   concurrency=1, clock_bank=None))  # fmt: skip
    assert result.record("prior_net")["battles"] == 1
    agent = max(made, key=lambda a: len(a.iteration_counts))
    assert agent.iteration_counts  # it searched


def test_search_targets_need_search_rows(small_collection, tmp_path):
    with pytest.raises(ValueError, match="no search visit shares"):
        train(config(small_collection, tmp_path / "ck", policy_head=True, policy_target="search"),
              log=lambda _: None)  # fmt: skip
    with pytest.raises(ValueError, match="--policy-head"):
        train(config(small_collection, tmp_path / "ck", train_value=False), log=lambda _: None)
    with pytest.raises(ValueError, match="policy-target"):
        train(config(small_collection, tmp_path / "ck", policy_head=True, policy_target="best"),
              log=lambda _: None)  # fmt: skip


def test_a_version_1_collection_is_read_with_null_search_columns(search_collection, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    old = tmp_path / "old"
    shutil.copytree(search_collection, old)
    for path in old.glob("shard-*.parquet"):
        table = pq.read_table(path).drop_columns(["search_policy", "search_value"])
        metadata = {**table.schema.metadata, b"pokegym.schema_version": b"1"}
        pq.write_table(table.replace_schema_metadata(metadata), path)
    table = read_collection(old)
    assert table.num_rows == read_collection(search_collection).num_rows
    assert table.column("search_policy").null_count == table.num_rows
    with pytest.raises(CollectionError, match="schema version 1"):
        collected_battles(old)  # new battles are not appended to an older collection
