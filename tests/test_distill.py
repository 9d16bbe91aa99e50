"""Distillation on a small real dataset: held-out loss goes down, seeded runs match,
the LLM-score head trains only where labels exist, checkpoints load without pickles."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from policies.value_net import CheckpointError, load_checkpoint
from train.collection import read_collection
from train.dataset import FOLDER_SHIFT, load_dataset, td_lambda_targets
from train.distill import DistillConfig, main, train
from train.metrics import roc_auc


def config(data, out, **changes):
    base = dict(data=str(data), out=str(out), hidden=(32,), residual=False, dropout=0.0,
                max_epochs=8, patience=8, batch_size=64, val_fraction=0.3, threads=1)  # fmt: skip
    return DistillConfig(**{**base, **changes})


@pytest.mark.slow
def test_training_lowers_the_held_out_loss(small_collection, tmp_path):
    summary = train(config(small_collection, tmp_path / "ck"), log=lambda _: None)
    assert summary["best"]["log_loss"] < summary["initial"]["log_loss"]
    assert summary["best"]["epoch"] >= 1
    assert summary["held_out_rows"] > 0 and summary["train_rows"] > 0
    network = load_checkpoint(tmp_path / "ck")
    document = json.loads((tmp_path / "ck" / "config.json").read_text())
    assert document["training"]["seed"] == 0 and document["metrics"]["best"]["auc"] > 0.5
    # NumPy inference agrees with the held-out metric the trainer computed.
    table = read_collection(small_collection, ["state"])
    states = np.asarray(table.column("state").to_pylist(), dtype=np.float32)
    p = network.win_probability(states)
    assert p.shape == (len(states),) and np.all((p > 0) & (p < 1))
    assert network.llm_score(states) is None  # no LLM labels: head (b) skipped


@pytest.mark.slow
def test_seeded_runs_match(small_collection, tmp_path):
    for name in ("a", "b"):
        train(config(small_collection, tmp_path / name, max_epochs=2), log=lambda _: None)
    a = (tmp_path / "a" / "model.safetensors").read_bytes()
    assert a == (tmp_path / "b" / "model.safetensors").read_bytes()
    train(config(small_collection, tmp_path / "c", max_epochs=2, seed=1), log=lambda _: None)
    assert a != (tmp_path / "c" / "model.safetensors").read_bytes()


@pytest.mark.slow
def test_llm_head_trains_where_labels_exist(small_collection, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    data = tmp_path / "with-llm"
    shutil.copytree(small_collection, data)
    for path in data.glob("shard-*.parquet"):  # label half the rows with a score
        table = pq.read_table(path)
        values = table.column("heuristic_value").to_pylist()
        labels = [v if i % 2 else None for i, v in enumerate(values)]
        column = pa.array(labels, type=pa.float32())
        index = table.schema.get_field_index("llm_value")
        pq.write_table(table.set_column(index, "llm_value", column), path)
    summary = train(config(data, tmp_path / "ck"), log=lambda _: None)
    assert np.isfinite(summary["best"]["llm_mae"])
    network = load_checkpoint(tmp_path / "ck")
    assert network.config.llm_head
    scores = network.llm_score(np.zeros((2, network.config.state_features), np.float32))
    assert scores is not None and scores.shape == (2,)


@pytest.mark.slow
def test_several_collections_are_pooled_with_distinct_battles(small_collection, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(small_collection, copy)  # the same battle ids in two folders
    one = load_dataset(config(small_collection, tmp_path / "x"))
    both = load_dataset(config(f"{small_collection},{copy}", tmp_path / "x"))
    n = len(one.outcome)
    assert len(both.outcome) == 2 * n and len(both.labels) == 2 * n
    np.testing.assert_array_equal(both.states[n:], one.states)
    np.testing.assert_array_equal(both.battle[n:], one.battle + (1 << FOLDER_SHIFT))
    assert len(np.unique(both.battle)) == 2 * len(np.unique(one.battle))
    summary = train(
        config(f"{small_collection},{copy}", tmp_path / "ck", max_epochs=1), log=lambda _: None
    )
    assert summary["train_rows"] + summary["held_out_rows"] == 2 * n
    # A folder that is not a collection is named in the error.
    assert (
        main(["--data", f"{small_collection},{tmp_path / 'none'}", "--out", str(tmp_path / "e")])
        == 2
    )
    assert f"{tmp_path / 'none'} has no collection.json" in capsys.readouterr().err


def test_td_lambda_targets():
    battle = np.array([0, 0, 0, 0, 0])
    side = np.array([0, 0, 0, 1, 1])
    step = np.array([2, 0, 1, 0, 1])
    teacher = np.array([0.2, 0.9, 0.6, 0.5, 0.4])
    outcome = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    g = td_lambda_targets(battle, side, step, teacher, outcome, 0.5)
    assert g[0] == 1.0  # the last decision: the result
    assert g[2] == pytest.approx(0.5 * 0.2 + 0.5 * 1.0)
    assert g[1] == pytest.approx(0.5 * 0.6 + 0.5 * g[2])
    assert g[4] == 0.0 and g[3] == pytest.approx(0.5 * 0.4)
    np.testing.assert_allclose(td_lambda_targets(battle, side, step, teacher, outcome, 1.0),
                               outcome)  # fmt: skip


def test_auc_on_known_rankings():
    assert roc_auc(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1])) == 1.0
    assert roc_auc(np.array([0.9, 0.8, 0.2, 0.1]), np.array([0, 0, 1, 1])) == 0.0
    assert roc_auc(np.array([0.5, 0.5]), np.array([0, 1])) == 0.5


@pytest.mark.slow
def test_bad_inputs_give_clear_errors(tmp_path, small_collection, capsys):
    assert main(["--data", str(tmp_path / "none"), "--out", str(tmp_path / "ck")]) == 2
    assert "pokegym collect" in capsys.readouterr().err
    with pytest.raises(CheckpointError, match=r"model\.safetensors"):
        load_checkpoint(tmp_path)
    train(config(small_collection, tmp_path / "ck", max_epochs=1), log=lambda _: None)
    weights = tmp_path / "ck" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:50])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(tmp_path / "ck")


BAD_CONFIGS = {
    "list": lambda doc: [1, 2, 3],
    "string": lambda doc: "a checkpoint",
    "network-string": lambda doc: {**doc, "network": "oops"},
    "network-list": lambda doc: {**doc, "network": [128, 64]},
    "hidden-int": lambda doc: {**doc, "network": {**doc["network"], "hidden": 5}},
    "hidden-strings": lambda doc: {**doc, "network": {**doc["network"], "hidden": ["wide"]}},
    "features-string": lambda doc: {**doc, "network": {**doc["network"], "state_features": "many"}},
    "residual-string": lambda doc: {**doc, "network": {**doc["network"], "residual": "yes"}},
    "hidden-other-shape": lambda doc: {
        **doc,
        "network": {**doc["network"], "hidden": [64, 64, 64]},
    },
}


@pytest.mark.parametrize("change", list(BAD_CONFIGS.values()), ids=list(BAD_CONFIGS))
def test_a_config_of_the_wrong_shape_is_a_checkpoint_error(tmp_path, change):
    """Valid JSON that is not a checkpoint's config is refused with the file's name,
    never a TypeError or AttributeError from inside the loader."""
    import json
    import shutil

    from policies.value_net import default_checkpoint

    folder = tmp_path / "ck"
    shutil.copytree(default_checkpoint(), folder)
    document = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(change(document)))
    with pytest.raises(CheckpointError, match=r"config\.json"):
        load_checkpoint(folder)
