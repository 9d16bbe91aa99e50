"""``pokegym memorize`` and the memory's place in the agent, on real battles: a memory
built for the shipped checkpoint from a real collection, the agent querying it while it
plays, clear errors for bad inputs, and the held-out memory diagnostic of benchmarks/."""

from __future__ import annotations

import numpy as np
import pytest

from memory.experience import MemoryFileError, StateMemory
from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from policies.distilled import DistilledPolicy
from policies.value_net import checkpoint_id, default_checkpoint
from train.collection import read_collection
from train.dataset import load_dataset, split_battles
from train.distill import DistillConfig
from train.memorize import main as memorize
from train.metrics import roc_auc

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def memory_folder(small_collection, tmp_path_factory):
    out = tmp_path_factory.mktemp("memory") / "mem"
    assert memorize(["--data", str(small_collection), "--out", str(out)]) == 0
    return out


def test_memorize_stores_every_decision_for_the_shipped_checkpoint(small_collection, memory_folder):
    rows = read_collection(small_collection, ["outcome", "action_label", "battle_id"])
    memory = StateMemory.load(memory_folder, embedding_id=checkpoint_id(default_checkpoint()))
    assert len(memory) == rows.num_rows > 0
    np.testing.assert_array_equal(np.sort(memory.outcomes),
                                  np.sort(rows.column("outcome").to_numpy()))  # fmt: skip
    assert set(memory.vocabulary) == set(rows.column("action_label").to_pylist())
    # Tied to the checkpoint that embedded it: another network's agent refuses it.
    with pytest.raises(MemoryFileError):
        StateMemory.load(memory_folder, embedding_id="another-network")


def test_the_agent_queries_the_memory_while_it_plays(memory_folder):
    agents: list[DistilledPolicy] = []

    def factory(**options):
        agent = DistilledPolicy(**options)
        assert agent.memory is not None
        calls = {"n": 0}
        query = agent.memory.query

        def counted(*args, **kwargs):
            calls["n"] += 1
            return query(*args, **kwargs)

        agent.memory.query = counted  # type: ignore[method-assign]
        agent.memory_calls = calls  # type: ignore[attr-defined]
        agents.append(agent)
        return agent

    register_agent("distilled_memory_probe", factory)
    spec = f"distilled_memory_probe:memory={memory_folder},memory_weight=0.3,time_limit=5.0"
    config = ArenaConfig(agents=[spec, "max_power"], battles_per_pair=1, concurrency=1,
                         simulators=1, seed=3)  # fmt: skip
    result = run_arena(config)
    assert result.record("distilled_memory_probe")["battles"] == 1
    # Leaf values (memory_weight) and root candidates (prior_actions) both query it.
    assert sum(agent.memory_calls["n"] for agent in agents) > sum(len(a.depths) for a in agents)


def test_bad_inputs_are_clear_errors(small_collection, tmp_path, capsys):
    assert memorize(["--data", str(tmp_path / "none"), "--out", str(tmp_path / "m")]) == 2
    assert "collection.json" in capsys.readouterr().err
    code = memorize(["--data", str(small_collection), "--checkpoint", str(tmp_path),
                     "--out", str(tmp_path / "m")])  # fmt: skip
    assert code == 2
    assert "a distilled checkpoint is a folder" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()  # nothing half-written


def test_the_memory_diagnostic_holds_out_whole_battles(small_collection, benchmark_script):
    bench = benchmark_script("memory_value")
    checkpoint = str(default_checkpoint())
    result = bench.evaluate(checkpoint, str(small_collection), held_out=0.34, rows=0, ks=[4],
                            weights=[0.5], blend_k=4, bootstrap=50, seed=2)  # fmt: skip
    data = load_dataset(DistillConfig(data=str(small_collection), out=checkpoint))
    held = split_battles(data.battle, 0.34, 2)
    # The memory holds exactly the other battles' decisions; every held-out decision
    # of a decided battle is scored.
    assert result["memory_entries"] == int((~held).sum())
    assert result["held_out_decisions"] == int((held & (data.outcome != 0.5)).sum())
    rows = result["evaluators"]
    assert set(rows) == {"hand-written", "network", "memory k=4", "blend m=0.5 (k=4)"}
    # The network's figure is the plain AUC of its values on those decisions.
    from policies.value_net import load_checkpoint

    keep = held & (data.outcome != 0.5)
    p = load_checkpoint(checkpoint).win_probability(data.states[keep])
    assert rows["network"]["auc"] == pytest.approx(roc_auc(p, data.outcome[keep]))
    assert rows["network"]["minus_network"] == 0.0
    for row in rows.values():
        assert 0.0 <= row["auc"] <= 1.0
        low, high = row["auc_95"]
        assert low <= high


def test_the_memory_benchmark_times_a_real_memory(memory_folder, capsys, benchmark_script):
    bench = benchmark_script("memory_latency")
    assert bench.main(["--quick", "--queries", "50", "--memory", str(memory_folder)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if str(memory_folder) in line)
    size = len(StateMemory.load(memory_folder))
    assert f"{size:,d} entries" in line and "(flat, width 64)" in line
    p95 = float(line.split("p95 ")[1].split(" ms")[0])
    assert 0.0 < p95 < 1000.0
    assert "exact_p95_ms_1e5=" in out.splitlines()[-1]
