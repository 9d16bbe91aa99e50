"""A simulated two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``): the
tournament spread over both nodes gives the local arena's outcomes, and a node lost
mid-run costs no battle. Every Ray started here listens on 127.0.0.1 only, the dashboard
of a local Ray too when it is asked for."""

from __future__ import annotations

import dataclasses
import os

import pytest
from ray_helpers import (
    EQUAL,
    SMALL,
    decisions,
    listening_sockets,
    on_loopback,
    outcomes,
    processes,
    wait_until_gone,
)

from pokegym.arena import Arena, run_arena
from pokegym.scale.arena import RayOptions, run_on_ray
from pokegym.scale.cluster import LOOPBACK, import_ray, loopback_nodes, ray_cluster


@pytest.mark.timeout(300)
def test_a_local_ray_s_dashboard_when_asked_for_listens_on_loopback_only():
    ray = import_ray()
    assert not ray.is_initialized(), "another test left Ray running"
    before = set(processes())
    with ray_cluster("auto", num_cpus=1, object_store_memory=80 * 2**20,
                     dashboard=True) as cluster:  # fmt: skip
        assert cluster.started and ray.util.get_node_ip_address() == LOOPBACK
        sockets = listening_sockets(os.getpid())
    assert cluster.dashboard is not None and cluster.dashboard.startswith(f"http://{LOOPBACK}:")
    assert int(cluster.dashboard.rsplit(":", 1)[1]) in {s.port for s in sockets}
    assert [str(s) for s in sockets if not on_loopback(s.address)] == []
    assert not wait_until_gone(set(processes()) - before)


@pytest.fixture(scope="module")
def two_nodes():
    """A head node and a worker node of one CPU each (so each holds one worker); the
    driver connects to the head. Every process is stopped afterwards."""
    ray = import_ray()
    from ray.cluster_utils import Cluster

    before = set(processes())
    small = {"num_cpus": 1, "object_store_memory": 80 * 2**20, "node_ip_address": LOOPBACK}
    with loopback_nodes(ray):
        cluster = Cluster(initialize_head=True,
                          head_node_args={**small, "include_dashboard": False})  # fmt: skip
    try:
        with loopback_nodes(ray):
            worker_node = cluster.add_node(**small)
            cluster.wait_for_nodes()
            ray.init(address=cluster.address, log_to_driver=False)
        yield cluster, worker_node
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert not wait_until_gone(set(processes()) - before), "the cluster left processes running"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_nodes_play_the_local_arena_s_battles(two_nodes):
    reference = run_arena(EQUAL)
    result, run = run_on_ray(Arena(EQUAL), RayOptions())
    assert run.cluster is not None and run.cluster.nodes == 2 and run.workers == 2
    assert len(run.report.by_node) == 2  # both nodes played
    assert sum(run.report.by_node.values()) == 20
    assert outcomes(result.battles) == outcomes(reference.battles)
    assert decisions(result) == decisions(reference)
    sockets = listening_sockets(os.getpid())  # both nodes' processes run under this one
    assert sum("raylet" in s.command for s in sockets) >= 2
    assert [str(s) for s in sockets if not on_loopback(s.address)] == []


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_node_lost_mid_run_costs_no_battle(two_nodes):
    """The worker node goes away just after its worker was handed a battle: the battle it
    was playing is played again by the head's worker, and the run ends with every battle.
    The battles are a search's (a second or more each, seeded and reproducible), so the
    node is gone before the battle it was handed can end."""
    cluster, worker_node = two_nodes
    config = dataclasses.replace(SMALL, agents=["mcts:iterations=300", "random"], seed=31)
    reference = run_arena(config)
    lost = []

    def event(kind, task, worker) -> None:
        on_worker_node = worker.node == worker_node.node_id
        if kind == "started" and on_worker_node and not lost and task[1] >= 1:
            lost.append(task)
            cluster.remove_node(worker_node, allow_graceful=False)

    result, run = run_on_ray(Arena(config), RayOptions(), event=event)
    assert lost and run.report.lost_workers == 1
    assert result.retried == 1 and not result.failed
    assert run.report.retried_tasks == lost
    assert outcomes(result.battles) == outcomes(reference.battles)
