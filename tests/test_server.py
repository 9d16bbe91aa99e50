"""The server backend on a real local Showdown server that pokegym starts itself."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import outcome_reward, play_episode, process_group_alive

from pokegym.backends.server import websocket_url
from pokegym.env import ShowdownEnv
from pokegym.errors import BattleTimeoutError, ServerError
from pokegym.showdown.server import LocalServer, free_port, is_showdown, port_in_use

pytestmark = pytest.mark.server


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("battle_format", ["gen9randombattle", "gen9ou"])
def test_battles_on_the_shared_local_server(make_env, battle_format):
    """``backend="server"`` without a URL starts (or reuses) the process-wide server."""
    env = make_env(battle_format, backend="server", timeout=30)
    for seed in (0, 1):
        episode = play_episode(env, seed=seed)
        assert episode.terminated and not episode.truncated
        # The server seeds its own battles: a (rare) tie is possible, then the reward is 0.
        assert episode.rewards[-1] == outcome_reward(episode.final_info)
        assert all(r == 0.0 for r in episode.rewards[:-1])
        battle = episode.final_info["battle"]
        assert battle.finished
        assert battle.battle_tag.startswith(f"battle-{battle_format}-")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_server_battle_with_team_preview_and_max_power(make_env, local_server):
    env = make_env(
        "gen9ou",
        backend="server",
        server_url=local_server.websocket_url,
        opponent="max_power",
        team_preview=True,
        timeout=30,
    )
    preview_states = []

    def on_state(obs, info):
        assert obs["action_mask"].any()
        if info["battle"].teampreview:
            preview_states.append(list(obs["action_mask"]))

    episode = play_episode(env, seed=4, on_state=on_state)
    assert episode.terminated and episode.rewards[-1] == outcome_reward(episode.final_info)
    assert preview_states == [[0] * 8 + [1] * 6 + [0]]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_local_server_lifecycle():
    server = LocalServer()
    assert not server.is_running() and not server.health()
    with pytest.raises(ServerError, match="not started"):
        server.websocket_url  # noqa: B018
    assert server.start() is server
    pid, port = server.pid, server.port
    try:
        assert server.is_running() and server.health()
        assert is_showdown(port) and port_in_use(port)
        assert server.websocket_url == f"ws://127.0.0.1:{port}/showdown/websocket"
        assert server.start() is server and server.pid == pid  # idempotent
    finally:
        server.stop()
    assert not server.is_running() and not server.health()
    assert server.pid is None
    # The server process and its helper processes are gone, the port is free.
    assert process_group_alive(pid) == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not port_in_use(port)
    server.stop()  # idempotent
    assert not server.is_running()


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_server_outlives_its_owner(how):
    # A library user's process that owns a server and dies without running its exit
    # handlers (SIGTERM with no handler installed, SIGKILL) takes the server with it.
    owner = subprocess.Popen(
        [sys.executable, "-c", "from pokegym.showdown.server import LocalServer\n"
         "import sys, time\ns = LocalServer().start()\nprint(s.pid, s.port, flush=True)\n"
         "time.sleep(600)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        pid, port = map(int, owner.stdout.readline().split())
        assert process_group_alive(pid) and is_showdown(port)
        owner.send_signal(how)
        owner.wait(timeout=30)
        for _ in range(300):  # the guard stops the group within a few seconds
            if not process_group_alive(pid):
                break
            time.sleep(0.1)
        assert process_group_alive(pid) == []
        assert not is_showdown(port)
    finally:
        if owner.poll() is None:
            owner.kill()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_forked_child_does_not_keep_its_owners_server_running():
    # The owner forks a child that lives on, then dies by SIGKILL: the child holds no copy
    # of the guard's pipe, so the server still stops.
    owner = subprocess.Popen(
        [sys.executable, "-c", "from pokegym.showdown.server import LocalServer\n"
         "import os, sys, time\ns = LocalServer().start()\nchild = os.fork()\n"
         "if child == 0:\n    time.sleep(60)\n    os._exit(0)\n"
         "print(s.pid, s.port, child, flush=True)\ntime.sleep(600)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    child = None
    try:
        pid, port, child = map(int, owner.stdout.readline().split())
        assert process_group_alive(pid) and is_showdown(port)
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
        for _ in range(300):
            if not process_group_alive(pid):
                break
            time.sleep(0.1)
        assert process_group_alive(pid) == []
        os.kill(child, 0)  # the child is still alive: it was not what stopped the server
    finally:
        if owner.poll() is None:
            owner.kill()
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_local_server_context_manager():
    with LocalServer() as server:
        pid = server.pid
        assert server.health()
    assert not server.is_running()
    assert process_group_alive(pid) == []


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_server_dies_mid_battle_then_recovers():
    server = LocalServer().start()
    try:
        # A fresh Showdown server greets its first connection only after several
        # seconds (it loads its data lazily): warm it up with a generous timeout.
        warm_up = ShowdownEnv(
            "gen9randombattle", backend="server", server_url=server.websocket_url, timeout=60
        )
        warm_up.reset(seed=0)
        warm_up.close()
        env = ShowdownEnv(
            "gen9randombattle", backend="server", server_url=server.websocket_url, timeout=5
        )
        obs, _ = env.reset(seed=0)
        obs, *_ = env.step(env.action_space.sample(mask=obs["action_mask"]))
        server.stop()
        # A clear error, bounded by the env's 5 s timeout at the latest (no hang).
        with pytest.raises((ServerError, BattleTimeoutError)):
            env.step(env.action_space.sample(mask=obs["action_mask"]))
        # With the server gone, reset() fails clearly instead of hanging.
        with pytest.raises(ServerError, match="server"):
            env.reset(seed=1)
        env.close()

        server.start()
        fresh = ShowdownEnv(
            "gen9randombattle", backend="server", server_url=server.websocket_url, timeout=60
        )
        try:
            episode = play_episode(fresh, seed=2)
            assert episode.terminated
            assert episode.rewards[-1] == outcome_reward(episode.final_info)
        finally:
            fresh.close()
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_unreachable_server_url():
    port = free_port()  # nobody listens there
    env = ShowdownEnv(
        "gen9randombattle", backend="server", server_url=f"localhost:{port}", timeout=5
    )
    with pytest.raises(ServerError, match=f"Could not connect.*{port}"):
        env.reset(seed=0)
    env.close()


def test_websocket_url_normalisation():
    expected = "ws://localhost:8000/showdown/websocket"
    assert websocket_url("localhost:8000") == expected
    assert websocket_url("http://localhost:8000/") == expected
    assert websocket_url("ws://localhost:8000") == expected
    assert websocket_url(expected) == expected
    assert websocket_url("https://example.org") == "wss://example.org/showdown/websocket"
