"""Tournaments, collection and training on a real local Ray: the same per-battle outcomes as
the local arena, a killed worker's battle retried, a battle failing every try reported,
an interrupted run resumed, bad inputs refused with one error and nothing left running."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ray_helpers import (
    EQUAL,
    SMALL,
    children,
    decisions,
    listening_sockets,
    on_loopback,
    outcomes,
    processes,
    wait_until_gone,
)

from pokegym.arena import Arena, run_arena
from pokegym.errors import AgentOptionError
from pokegym.journal import JOURNAL_NAME, BattleJournal
from pokegym.scale.arena import RayOptions, run_on_ray
from pokegym.scale.cluster import (
    ClusterError,
    RayNotInstalledError,
    WorkerSetupError,
    import_ray,
    ray_cluster,
)
from pokegym.scale.resources import split_resources, worker_resources

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pokegym.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, **kwargs)  # fmt: skip


# ------------------------------------------------------------ without Ray running
@pytest.mark.slow
def test_resource_options_are_stripped_and_sized():
    assert split_resources("pokechamp:model=x,num_gpus=0.25,depth=1") == (
        "pokechamp:model=x,depth=1",
        {"num_gpus": 0.25},
    )
    assert split_resources("random:num_cpus=2") == ("random", {"num_cpus": 2.0})
    assert split_resources("abyssal") == ("abyssal", {})
    request = worker_resources(["a:num_gpus=0.5", "b:num_cpus=2", "c"])
    assert (request.num_cpus, request.num_gpus) == (2.0, 0.5)
    assert worker_resources(["a:num_cpus=0.5", "b:num_cpus=0.5"]).num_cpus == 0.5
    assert worker_resources(["a:num_cpus=0.5", "b"]).num_cpus == 1.0
    for bad in ("random:num_cpus=zero", "random:num_gpus=-1", "random:num_cpus=0"):
        with pytest.raises(AgentOptionError, match=r"write e\.g\."):
            split_resources(bad)
    # Locally the options build no agent and change no identity: a journal resumes either way.
    asking = Arena(dataclasses.replace(SMALL, agents=["max_power:num_cpus=2", "random"]))
    plain = Arena(SMALL)
    try:
        assert asking.identity() == plain.identity()
    finally:
        asking.close()
        plain.close()


def test_ray_is_imported_only_when_a_run_asks_for_it():
    code = ("import sys, pokegym.cli, pokegym.arena, pokegym.scale.arena, train.collect, "
            "train.distill; sys.exit('ray' in sys.modules)")  # fmt: skip
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=120).returncode == 0


def test_ray_missing_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets without Ray
    with pytest.raises(RayNotInstalledError, match=r"pip install 'pokegym\[ray\]'"):
        import_ray()


@pytest.mark.timeout(120)
def test_an_unreachable_or_malformed_address_is_one_error_and_starts_nothing(tmp_path):
    before = set(processes())
    for address, message in (("127.0.0.1:1", "Cannot reach a Ray cluster at 127.0.0.1:1"),
                             ("nonsense", "is not an address")):  # fmt: skip
        out = tmp_path / address.replace(":", "_")
        done = cli("compare", "--agents", "max_power,random", "--battles", "2", "--ray", address,
                   "--out", str(out), "--quiet", timeout=100)  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr
        assert not (out / JOURNAL_NAME).exists()  # refused before anything was written
    usage = cli("compare", "--workers", "2", "--out", str(tmp_path / "w"), timeout=100)
    assert usage.returncode == 2 and "need --ray" in usage.stderr
    assert not set(processes()) - before


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_ray_auto_stops_on_sigterm_and_the_same_command_resumes(tmp_path):
    """`--ray auto` starts Ray here; SIGTERM keeps the finished battles and stops every
    process it started; the same command plays only the missing battles."""
    before = set(processes())
    command = [sys.executable, "-m", "pokegym.cli", "compare", "--agents", "max_power,random",
               "--battles", "8", "--seed", "29", "--no-clock", "--ray", "auto", "--out",
               str(tmp_path), "--quiet"]  # fmt: skip
    journal = tmp_path / JOURNAL_NAME
    run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and run.poll() is None:
            if journal.exists() and len(journal.read_text().splitlines()) >= 2:
                break
            time.sleep(0.2)
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    saved = len(journal.read_text().splitlines()) - 1
    if run.returncode == 0:  # every battle ended before the signal arrived
        assert saved == 8
    else:
        assert run.returncode == 143, err
        assert f"{saved} of 8 battles are saved" in err and "Traceback" not in err
        assert 1 <= saved < 8
    assert not wait_until_gone(set(processes()) - before)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    if saved < 8:
        assert f"resuming: {saved} of 8 battles" in done.stdout
    assert "ray: " in done.stdout and "0 failed on every try" in done.stdout
    lines = journal.read_text().splitlines()[1:]
    assert sorted(json.loads(line)["index"] for line in lines) == list(range(8))
    reference = run_arena(dataclasses.replace(SMALL, battles_per_pair=8))
    results = json.loads((tmp_path / "results.json").read_text())
    assert outcomes(results["battles"]) == outcomes(reference.battles)
    assert not wait_until_gone(set(processes()) - before)


# ---------------------------------------------------------------- on one local Ray
@pytest.fixture(scope="module")
def local_ray():
    """A real Ray on this machine with 2 CPUs, small, started as `--ray auto` starts it;
    stopped after the module, with every process it started."""
    ray = import_ray()
    before = set(processes())
    with ray_cluster("auto", num_cpus=2, object_store_memory=100 * 2**20) as cluster:
        assert cluster.started
        yield ray
    assert not wait_until_gone(set(processes()) - before), "Ray left processes running"


@pytest.fixture(scope="module")
def small_reference():
    return run_arena(SMALL)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_local_ray_listens_on_loopback_only(local_ray):
    """Anyone who reaches a Ray's ports can run code on it: while battles are played, every
    socket of the local Ray (GCS, raylet, object manager, agents, the worker playing, the
    driver's own) listens on 127.0.0.1 only."""
    seen: dict = {}

    def event(kind, task, worker) -> None:
        if kind == "started" and not seen:
            seen["worker"] = worker.pid
            seen["sockets"] = listening_sockets(os.getpid())

    result, _ = run_on_ray(Arena(dataclasses.replace(SMALL, battles_per_pair=2)), RayOptions(),
                           event=event)  # fmt: skip
    assert len(result.battles) == 2
    sockets = seen["sockets"]
    commands = " ".join(s.command for s in sockets)
    # The sockets of Ray's own processes and of the worker playing were looked at ...
    assert "gcs_server" in commands and "raylet" in commands, commands
    assert seen["worker"] in {s.pid for s in sockets}
    # ... and none is open to the network.
    assert [str(s) for s in sockets if not on_loopback(s.address)] == []


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ray_battles_equal_the_local_arena(local_ray, tmp_path):
    reference = run_arena(EQUAL)
    path = tmp_path / JOURNAL_NAME
    arena = Arena(EQUAL)
    with BattleJournal(path, arena.identity()) as journal:
        result, run = run_on_ray(arena, RayOptions(), journal)
    assert len(result.battles) == 20
    assert outcomes(result.battles) == outcomes(reference.battles)
    assert decisions(result) == decisions(reference)
    assert run.workers == 2 and run.report.retried == 0 and not result.failed
    assert sum(run.report.by_node.values()) == 20
    # Every battle went to the journal as it arrived, in the local run's format.
    arena = Arena(EQUAL)
    arena.close()
    with BattleJournal(path, arena.identity()) as again:
        records = sorted((b.record for b in again.battles),
                         key=lambda r: (EQUAL.pairs.index(r.pair), r.index))  # fmt: skip
    assert outcomes(records) == outcomes(reference.battles)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_team_file_and_replays_travel_with_the_workers(local_ray, tmp_path):
    """The driver's team folder need not exist on a node: the workers get the same teams in
    the same order; each replay comes back to the driver's replays folder."""
    teams = tmp_path / "teams"
    teams.mkdir()
    builtin = ROOT / "pokegym" / "teams" / "data" / "gen9ou"
    for name in ("02-rain-offense.txt", "03-sun-offense.txt", "05-stall.txt"):
        (teams / name).write_text((builtin / name).read_text())
    config = dataclasses.replace(SMALL, battle_format="gen9ou", teams=str(teams),
                                 battles_per_pair=4, replays=str(tmp_path / "local"))  # fmt: skip
    reference = run_arena(config)
    on_ray = dataclasses.replace(config, replays=str(tmp_path / "replays"))
    result, _ = run_on_ray(Arena(on_ray), RayOptions())
    assert outcomes(result.battles) == outcomes(reference.battles)
    for battle in result.battles:
        replay = Path(battle.replay)
        assert replay.parent == tmp_path / "replays" and replay.read_text().startswith("<")
    assert len(list((tmp_path / "replays").glob("*.html"))) == 4


class KillWorker:
    """An event hook that SIGKILLs the worker a battle was handed to, at once, for the
    battles of ``index``, ``times`` times. Remembers every worker's process and its
    simulator.

    The kill is sent in the hook itself, before the driver goes on: the battle cannot end
    before it, however fast the machine. (A kill sent a moment later lost that race on a
    fast machine: the battle was over, and the kill hit the next one.)"""

    def __init__(self, index: int, times: int = 1):
        self.index, self.times = index, times
        self.killed: list[int] = []
        self.seen: set[int] = set()

    def __call__(self, kind, task, worker) -> None:
        self.seen.add(worker.pid)
        self.seen |= children(worker.pid)
        if kind == "started" and task[1] == self.index and len(self.killed) < self.times:
            self.killed.append(worker.pid)
            os.kill(worker.pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_killed_worker_s_battle_is_retried_and_nothing_is_lost(
    local_ray, small_reference, tmp_path
):
    kill = KillWorker(index=2)
    arena = Arena(SMALL)
    with BattleJournal(tmp_path / JOURNAL_NAME, arena.identity()) as journal:
        result, run = run_on_ray(arena, RayOptions(), journal, event=kill)
        assert len(journal) == 6
    assert kill.killed and run.report.lost_workers == 1
    assert result.retried == run.report.retried == 1 and not result.failed
    assert run.report.retried_tasks == [(("max_power", "random"), 2)]
    assert outcomes(result.battles) == outcomes(small_reference.battles)
    assert "1 retried" in result.table().splitlines()[0]
    # The pool stopped its workers (the restarted one too) and their simulators.
    assert not wait_until_gone(kill.seen)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_battle_failing_every_try_is_reported_and_played_by_the_next_run(
    local_ray, small_reference, tmp_path
):
    path = tmp_path / JOURNAL_NAME
    kill = KillWorker(index=3, times=2)
    arena = Arena(SMALL)
    with BattleJournal(path, arena.identity()) as journal:
        result, _ = run_on_ray(arena, RayOptions(retries=1), journal, event=kill)
    assert len(kill.killed) == 2
    assert [(f["pair"], f["index"], f["attempts"]) for f in result.failed] == [
        (["max_power", "random"], 3, 2)
    ]
    assert "worker lost" in result.failed[0]["error"]
    assert result.retried == 1 and len(result.battles) == 5
    assert "1 FAILED on every try" in result.table().splitlines()[0]
    assert result.to_dict()["failed"] == result.failed
    # The next run plays the missing battle only.
    arena = Arena(SMALL)
    with BattleJournal(path, arena.identity()) as journal:
        played = []
        again, _ = run_on_ray(arena, RayOptions(), journal, progress=played.append)
    assert [r.index for r in played] == [3] and again.resumed == 5
    assert outcomes(again.battles) == outcomes(small_reference.battles)
    assert not wait_until_gone(kill.seen)


class StopAfter:
    """A progress callback that presses Ctrl-C after ``after`` battles arrived."""

    def __init__(self, after: int):
        self.after, self.seen = after, 0

    def __call__(self, record) -> None:
        self.seen += 1
        if self.seen == self.after:
            raise KeyboardInterrupt


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_interrupted_ray_run_resumes_without_losing_a_battle(
    local_ray, small_reference, tmp_path
):
    path = tmp_path / JOURNAL_NAME
    watch = KillWorker(index=-1)  # kills nothing; remembers the workers' processes
    arena = Arena(SMALL)
    with BattleJournal(path, arena.identity()) as journal:
        with pytest.raises(KeyboardInterrupt):
            run_on_ray(arena, RayOptions(), journal, progress=StopAfter(2), event=watch)
    assert len(path.read_text().splitlines()) == 1 + 2
    assert watch.seen and not wait_until_gone(watch.seen)  # workers and simulators stopped
    played = []
    arena = Arena(SMALL)
    with BattleJournal(path, arena.identity()) as journal:
        result, _ = run_on_ray(arena, RayOptions(), journal, progress=played.append)
    assert result.resumed == 2 and len(played) == 4
    assert outcomes(result.battles) == outcomes(small_reference.battles)
    assert decisions(result) == decisions(small_reference)
    # Locally, the same journal is complete: nothing to play.
    local = run_arena(SMALL, journal=path)
    assert local.resumed == 6 and outcomes(local.battles) == outcomes(small_reference.battles)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_node_without_node_js_is_one_clear_error_and_leaves_nothing_running(local_ray):
    before = set(processes())
    options = RayOptions(runtime_env={"env_vars": {"POKEGYM_NODE": "/nonexistent/node"}})
    with pytest.raises(WorkerSetupError) as caught:
        run_on_ray(Arena(SMALL), options)
    message = str(caught.value)
    assert re.search(r"A worker on \d+\.\d+\.\d+\.\d+ cannot play battles", message)
    assert "/nonexistent/node" in message
    assert "pokegym showdown install" in message
    # Only the idle worker processes Ray keeps for reuse may remain, not our workers.
    left = {pid: cmd for pid, cmd in processes().items() if pid not in before}
    assert not wait_until_gone({pid for pid, cmd in left.items() if "ArenaWorker" in cmd})


@pytest.mark.slow
def test_a_worker_the_cluster_cannot_hold_is_refused(local_ray):
    config = dataclasses.replace(SMALL, agents=["max_power:num_gpus=1", "random"])
    with pytest.raises(ClusterError, match="has room for a worker asking for 1 CPU and 1 GPU"):
        run_on_ray(Arena(config), RayOptions())


# ------------------------------------------------------------ collect and distill
@pytest.fixture(scope="module")
def ray_collection(local_ray, tmp_path_factory):
    from train.collect import main

    out = tmp_path_factory.mktemp("ray-collect") / "data"
    code = main(["--agents", "max_power,random:num_cpus=1", "--battles", "4", "--out", str(out),
                 "--no-progress", "--seed", "5", "--shard-battles", "3", "--ray"])  # fmt: skip
    assert code == 0
    return out


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_collect_on_ray_writes_the_local_rows(ray_collection, tmp_path):
    from train.collect import main
    from train.collection import collected_battles, read_collection

    local = tmp_path / "local"
    assert main(["--agents", "max_power,random", "--battles", "4", "--out", str(local),
                 "--no-progress", "--seed", "5"]) == 0  # fmt: skip
    assert collected_battles(ray_collection) == {0, 1, 2, 3}
    assert len(list(ray_collection.glob("shard-*.parquet"))) == 2  # 3 battles, then the rest
    columns = ["battle_id", "side", "step", "turn", "agent", "action_label", "outcome"]

    def rows(folder):
        return sorted(tuple(r[c] for c in columns)
                      for r in read_collection(folder, columns).to_pylist())  # fmt: skip

    assert rows(ray_collection) == rows(local)
    manifest = json.loads((ray_collection / "collection.json").read_text())
    assert manifest["identity"]["agents"] == ["max_power", "random"]  # no resource option


@pytest.mark.timeout(600)
def test_distill_on_a_cluster_node_writes_the_checkpoint_here(ray_collection, tmp_path, capsys):
    from policies.value_net import load_checkpoint
    from train.distill import DistillConfig, main, train_remote

    config = DistillConfig(data=str(ray_collection), out=str(tmp_path / "net"), max_epochs=2,
                           memory=str(tmp_path / "memory"), ray="auto")  # fmt: skip
    # The path a GPU run takes, with the resources this machine has (no GPU here).
    summary = train_remote(config, num_gpus=0, device="cpu", log=lambda line: None)
    assert summary["ray_node"] and summary["device"] == "cpu"
    document = json.loads((tmp_path / "net" / "config.json").read_text())
    assert document["training"]["data"] == str(ray_collection)
    assert document["training"]["out"] == str(tmp_path / "net")
    assert load_checkpoint(tmp_path / "net").embed is not None
    assert (tmp_path / "memory" / "manifest.json").exists()
    # `distill --ray` on a cluster without a GPU says so and trains here.
    assert main(["--data", str(ray_collection), "--out", str(tmp_path / "here"),
                 "--max-epochs", "1", "--ray"]) == 0  # fmt: skip
    assert "has no GPU: training here" in capsys.readouterr().err
    assert (tmp_path / "here" / "model.safetensors").exists()
