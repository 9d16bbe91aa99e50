"""render_mode="ansi" and "human": a readable picture of the battle."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import masked_random

from pokegym.parallel_env import ShowdownParallelEnv

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


@pytest.mark.timeout(120)
def test_ansi_render_names_active_pokemon_and_legal_actions(make_env):
    env = make_env("gen9randombattle", render_mode="ansi")
    assert env.render() == "No battle yet; call reset()."
    obs, info = env.reset(seed=13)
    choose = masked_random(13)
    for _ in range(2_000):
        battle = info["battle"]
        text = env.render()
        assert isinstance(text, str)
        assert f"Turn {battle.turn}" in text
        assert battle.active_pokemon.species in text
        assert battle.opponent_active_pokemon.species in text
        assert "Legal actions: " in text
        for action in np.flatnonzero(obs["action_mask"]):
            assert env.codec.describe(int(action), battle) in text
        obs, _, terminated, truncated, info = env.step(choose(obs))
        if terminated or truncated:
            break
    text = env.render()
    assert "Battle over: " in text and "Legal actions" not in text
    assert ("won" if info["won"] else "lost") in text


@pytest.mark.timeout(60)
def test_ansi_render_at_team_preview(make_env):
    env = make_env("gen9ou", render_mode="ansi", team_preview=True)
    _, info = env.reset(seed=1)
    text = env.render()
    assert "(team preview)" in text
    assert "lead with slot 1" in text
    for mon in info["battle"].teampreview_opponent_team:
        assert mon.species in text


@pytest.mark.timeout(60)
def test_human_render_prints(make_env, capsys):
    env = make_env("gen9randombattle", render_mode="human")
    obs, _ = env.reset(seed=2)
    assert env.render() is None
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    out = capsys.readouterr().out
    assert "Own active: " in out and "Legal actions" in out


@pytest.mark.timeout(60)
def test_render_without_mode_warns(make_env):
    env = make_env("gen9randombattle")
    env.reset(seed=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert env.render() is None
    assert any("render_mode" in str(w.message) for w in caught)


@pytest.mark.timeout(60)
def test_parallel_ansi_render_shows_both_players():
    env = ShowdownParallelEnv("gen9randombattle", render_mode="ansi")
    try:
        _, infos = env.reset(seed=3)
        text = env.render()
        for agent, info in infos.items():
            assert f"{agent}:" in text
            assert info["battle"].active_pokemon.species in text
        assert text.count("Legal actions") == 2
    finally:
        env.close()
