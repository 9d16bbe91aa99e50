"""MaskablePPO training, the PPO agent and its checkpoints (real battles, real torch)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from pokegym.actions import N_ACTIONS, SWITCH  # noqa: E402
from pokegym.env import ShowdownEnv  # noqa: E402
from pokegym.observation import (  # noqa: E402
    OBSERVATION_SIZE,
    OPPONENT_TEAM_OFFSET,
    POKEMON_SIZE,
    observation_space,
)
from policies.features import ShowdownFeaturesExtractor  # noqa: E402
from policies.ppo import (  # noqa: E402
    CheckpointError,
    PolicyNetwork,
    PPOPolicy,
    build_policy,
    load_network,
    save_policy,
)
from train.ppo import (  # noqa: E402
    OpponentMixture,
    PPOConfig,
    ensure_ppo_registered,
    main,
    parse_curriculum,
    train,
)

SHORT = dict(
    steps=256,
    n_envs=4,
    n_steps=32,
    batch_size=64,
    n_epochs=2,
    curriculum="random@0,max_power@0.5",
    self_play_start=0.25,
    snapshot_every=64,
    checkpoint_every=128,
    eval_every=0,
    final_eval=False,
    tensorboard=False,
    verbose=0,
)


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True)["state_dict"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """One short training run shared by the tests that need a saved policy."""
    out = tmp_path_factory.mktemp("ppo") / "run"
    summary = train(PPOConfig(out=str(out), seed=3, **SHORT))
    assert summary["steps"] >= 256
    return out


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_short_training_run_completes_and_saves(trained):
    for name in ("policy.pt", "model.zip", "config.json", "summary.json", "progress.jsonl"):
        assert (trained / name).is_file(), name
    config = json.loads((trained / "config.json").read_text())
    assert config["steps"] == 256 and config["seed"] == 3
    checkpoints = sorted(p.name for p in (trained / "checkpoints").iterdir())
    assert checkpoints[:2] == ["step_000000128", "step_000000256"]
    assert (trained / "checkpoints" / "step_000000128" / "policy.pt").is_file()
    lines = [json.loads(x) for x in (trained / "progress.jsonl").read_text().splitlines()]
    assert lines[-1]["steps"] == 256
    # The curriculum moved on to max_power and self-play snapshots joined the mixture.
    assert lines[-1]["stage"] == "max_power"
    assert any(name.startswith("self_play") for name in lines[-1]["mixture"])
    played = set().union(*(line["win_rate"] for line in lines))
    assert "random" in played
    # The weights changed during training (the run did learn something).
    header = torch.load(trained / "policy.pt", weights_only=True)
    assert header["header"]["steps"] == 256
    assert header["head"] == "scored"
    fresh = build_policy(header["net_arch"], header["features"], header["head"]).state_dict()
    trained_weights = header["state_dict"]
    assert any(not torch.equal(fresh[k], trained_weights[k]) for k in fresh)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_seeded_runs_match(trained, tmp_path):
    again = tmp_path / "again"
    train(PPOConfig(out=str(again), seed=3, **{**SHORT, "checkpoint_every": 0}))
    first, second = _weights(trained / "policy.pt"), _weights(again / "policy.pt")
    assert first.keys() == second.keys()
    for key in first:
        assert torch.equal(first[key], second[key]), key
    other = tmp_path / "other"
    train(PPOConfig(out=str(other), seed=4, **{**SHORT, "checkpoint_every": 0}))
    third = _weights(other / "policy.pt")
    assert any(not torch.equal(first[k], third[k]) for k in first)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_saved_policy_plays_in_the_arena(trained):
    from pokegym.arena import ArenaConfig, run_arena

    ensure_ppo_registered()
    result = run_arena(
        ArenaConfig(
            agents=[f"ppo:path={trained / 'policy.pt'}", "max_power"],
            battles_per_pair=4,
            concurrency=4,
            seed=11,
        )
    )
    assert len(result.battles) == 4
    assert all(b.winner in ("ppo", "max_power") or b.truncated for b in result.battles)
    assert {b.p1 for b in result.battles} == {"ppo", "max_power"}  # sides alternate
    assert result.agent_stats["ppo"].decisions > 20


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_policy_as_env_opponent_and_masks_respected(trained, make_env):
    """The policy plays both sides of real battles; every action it picks is legal."""
    learner = PPOPolicy(trained, deterministic=False, seed=1)
    env: ShowdownEnv = make_env("gen9randombattle", opponent=PPOPolicy(trained / "policy.pt"))
    checked = 0
    for episode in range(2):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            battle = info["battle"]
            action = learner.action(battle)
            assert obs["action_mask"][action] == 1
            order_index = env.unwrapped.codec.from_order(learner.choose(battle), battle)
            assert obs["action_mask"][order_index] == 1
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            checked += 1
        assert info["battle"].finished
    assert checked > 10


@pytest.mark.slow
def test_masks_override_the_network(make_env):
    """A network that prefers illegal actions above all still only plays legal ones."""
    policy = build_policy({"pi": [8], "vf": [8]}, {"pokemon_dim": 8, "field_dim": 4,
                                                   "features_dim": 16})  # fmt: skip
    with torch.no_grad():
        policy.action_net.weight.zero_()
        policy.action_net.bias.copy_(torch.arange(N_ACTIONS, dtype=torch.float32) * 100.0)
    agent = PPOPolicy(network=PolicyNetwork.from_policy(policy))
    env = make_env("gen9randombattle", opponent="random")
    obs, info = env.reset(seed=5)
    for _ in range(30):
        mask = obs["action_mask"]
        action = agent.action(info["battle"])
        # The highest legal index wins: the bias ranks 14 > 13 > ... and 14 is never legal.
        assert action == int(np.flatnonzero(mask).max())
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    logits = agent.network.logits(obs["observation"], np.zeros(N_ACTIONS, dtype=np.int8))
    assert np.isneginf(logits).all()


def test_features_extractor_parts():
    space = observation_space()
    extractor = ShowdownFeaturesExtractor(space, pokemon_dim=8, field_dim=4, features_dim=16)
    rng = np.random.default_rng(0)
    obs = rng.random((3, OBSERVATION_SIZE), dtype=np.float32)
    mask = np.ones((3, N_ACTIONS), dtype=np.float32)
    batch = {"observation": torch.from_numpy(obs), "action_mask": torch.from_numpy(mask)}
    features = extractor(batch)
    assert features.shape == (3, 16)
    # The opponent's Pokémon are in first-seen order: swapping two changes nothing.
    swapped = obs.copy()
    a, b = OPPONENT_TEAM_OFFSET, OPPONENT_TEAM_OFFSET + 2 * POKEMON_SIZE
    swapped[:, a : a + POKEMON_SIZE] = obs[:, b : b + POKEMON_SIZE]
    swapped[:, b : b + POKEMON_SIZE] = obs[:, a : a + POKEMON_SIZE]
    out = extractor({"observation": torch.from_numpy(swapped), "action_mask": batch["action_mask"]})
    assert torch.allclose(out, features, atol=1e-5)
    # Own team slots are the switch targets: swapping two of them does change the features.
    own = obs.copy()
    own[:, :POKEMON_SIZE], own[:, POKEMON_SIZE : 2 * POKEMON_SIZE] = (
        obs[:, POKEMON_SIZE : 2 * POKEMON_SIZE],
        obs[:, :POKEMON_SIZE],
    )
    out = extractor({"observation": torch.from_numpy(own), "action_mask": batch["action_mask"]})
    assert not torch.allclose(out, features, atol=1e-5)
    with pytest.raises(ValueError, match="observation"):
        import gymnasium as gym

        bad = gym.spaces.Dict(
            {"observation": gym.spaces.Box(0, 1, (10,)), "action_mask": space["action_mask"]}
        )
        ShowdownFeaturesExtractor(bad)


@pytest.mark.slow
def test_checkpoint_errors_say_what_to_do(trained, tmp_path):
    with pytest.raises(CheckpointError, match="Train one"):
        PPOPolicy(tmp_path / "nothing.pt")
    with pytest.raises(CheckpointError, match="needs a checkpoint"):
        PPOPolicy()
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes((trained / "policy.pt").read_bytes()[:5000])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_network(corrupt)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(CheckpointError, match="not a pokegym PPO policy"):
        load_network(foreign)
    with pytest.raises(CheckpointError, match="pickled"):
        load_network(trained / "model.zip")
    assert zipfile.is_zipfile(trained / "model.zip")


class _Boom:
    def __reduce__(self):
        return (Path.touch, (Path(_Boom.target),))


def test_checkpoints_never_unpickle_objects(tmp_path):
    """A file that would run code when unpickled is refused, and the code does not run;
    the one-line message says what the file is not and what to pass instead, and never
    suggests loading it with ``weights_only=False``."""
    _Boom.target = str(tmp_path / "ran")
    evil = tmp_path / "evil.pt"
    with open(evil, "wb") as handle:
        pickle.dump({"format": "pokegym-ppo-policy", "payload": _Boom()}, handle, protocol=2)
    evil_zip = tmp_path / "evil-zip.pt"  # torch's own format, with the object inside
    torch.save({"format": "pokegym-ppo-policy", "payload": _Boom()}, evil_zip)
    noise = tmp_path / "noise.pt"
    noise.write_bytes(np.random.default_rng(0).bytes(4096))
    for path, reason in ((evil, "it asks to build the Python object "),
                         (evil_zip, "it asks to build the Python object "),
                         (noise, "not tensors and plain values")):  # fmt: skip
        with pytest.raises(CheckpointError) as caught:
            load_network(path)
        message = str(caught.value)
        assert message.startswith(f"{path} is not a pokegym PPO checkpoint ({reason}")
        assert "nothing in it was run" in message and "pokegym train ppo" in message
        assert "\n" not in message and "weights_only" not in message
    assert not (tmp_path / "ran").exists()


def test_an_untrusted_checkpoint_is_one_line_and_status_2_at_the_command_line(tmp_path):
    _Boom.target = str(tmp_path / "ran")
    evil = tmp_path / "evil.pt"
    torch.save({"payload": _Boom()}, evil)
    done = subprocess.run([sys.executable, "-m", "pokegym.cli", "compare", "--agents",
                           f"ppo:path={evil},random", "--battles", "1", "--out",
                           str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"pokegym: error: {evil} is not a pokegym PPO checkpoint (it asks "
                           "to build the Python object ")  # fmt: skip
    assert line.endswith("); nothing in it was run. Train one with `pokegym train ppo --out "
                         "DIR` and pass DIR or DIR/policy.pt.")  # fmt: skip
    assert not (tmp_path / "ran").exists()


def test_save_and_load_round_trip(tmp_path):
    policy = build_policy({"pi": [16], "vf": [16]}, {"pokemon_dim": 8, "field_dim": 4,
                                                     "features_dim": 16})  # fmt: skip
    path = save_policy(policy, tmp_path / "p" / "policy.pt", steps=7)
    network = load_network(tmp_path / "p")  # a folder finds its policy.pt
    assert network.header["steps"] == 7
    obs = np.random.default_rng(1).random(OBSERVATION_SIZE, dtype=np.float32)
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    mask[[0, 2, SWITCH + 1]] = 1
    expected = PolicyNetwork.from_policy(policy).logits(obs, mask)
    np.testing.assert_allclose(network.logits(obs, mask), expected, rtol=1e-6)
    assert path.stat().st_size < 5_000_000


def test_curriculum_and_mixture():
    assert parse_curriculum("random@0,max_power@0.1,abyssal@0.35") == [
        ("random", 0.0), ("max_power", 0.1), ("abyssal", 0.35)]  # fmt: skip
    assert parse_curriculum("one_step:tera=false@0") == [("one_step:tera=false", 0.0)]
    for bad in ("random@0.2", "random@0,max_power@x", "random@0,a@0.5,b@0.2", "random@2"):
        with pytest.raises(ValueError):
            parse_curriculum(bad)
    config = PPOConfig(steps=1000, replay=0.2, self_play=0.1)
    mixture = OpponentMixture(config)
    assert mixture.weights() == {"random": 1.0}
    mixture.update(500)
    weights = mixture.weights()
    assert weights["abyssal"] == pytest.approx(0.8)
    assert weights["random"] == pytest.approx(0.1) and weights["max_power"] == pytest.approx(0.1)
    mixture.add_snapshot("self_play_1", None)  # type: ignore[arg-type]
    weights = mixture.weights()
    assert weights["self_play_1"] == pytest.approx(0.1)
    assert sum(weights.values()) == pytest.approx(1.0)


def test_cli_rejects_bad_options(capsys):
    assert main(["--steps", "0"]) == 2
    assert "steps" in capsys.readouterr().err
    assert main(["--curriculum", "random@0.5"]) == 2
    with pytest.raises(SystemExit):
        main(["--no-such-option"])
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "--curriculum" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_self_play_through_the_two_player_env(tmp_path):
    from train.selfplay import SelfPlayEnv, network_player

    policy = build_policy({"pi": [16], "vf": [16]}, {"pokemon_dim": 8, "field_dim": 4,
                                                     "features_dim": 16})  # fmt: skip
    frozen = network_player(PolicyNetwork.from_policy(policy))
    seen: list[np.ndarray] = []

    def opponent(obs, rng):
        seen.append(obs["action_mask"].copy())
        action = frozen(obs, rng)
        assert obs["action_mask"][action] == 1
        return action

    env = SelfPlayEnv("gen9randombattle", opponent=opponent, reward="shaped")
    try:
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=2)
        done, steps = False, 0
        while not done:
            mask = obs["action_mask"]
            assert not mask[14] and mask.any()  # the learner never has to wait
            assert (env.action_masks() == mask.astype(bool)).all()
            obs, reward, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(mask)))
            assert np.isfinite(reward)
            done, steps = terminated or truncated, steps + 1
        assert info["battle"].finished and "is_success" in info
        assert len(seen) >= steps  # the frozen policy answered every turn (and its waits)
        assert any(m[14] and m.sum() == 1 for m in seen) or len(seen) == steps
    finally:
        env.close()
    # A short training run mixing the vector env with two two-player battles.
    out = tmp_path / "mixed"
    summary = train(
        PPOConfig(
            out=str(out),
            seed=1,
            **{**SHORT, "steps": 192, "self_play_envs": 2, "checkpoint_every": 0},
        )
    )
    assert summary["steps"] >= 192 and (out / "policy.pt").is_file()


def test_scored_head_follows_the_slots():
    """Swapping two move slots (or two bench slots) swaps their logits, nothing else."""
    from pokegym.observation import MOVE_SIZE, POKEMON_FEATURES

    dims = {"pokemon_dim": 8, "move_dim": 8, "field_dim": 4, "features_dim": 0}
    policy = build_policy({"pi": [], "vf": [16]}, dims, "scored")
    network = PolicyNetwork.from_policy(policy)
    offsets, position = {}, 0
    for name, width, _ in POKEMON_FEATURES:
        offsets[name] = position
        position += width
    rng = np.random.default_rng(3)
    obs = rng.random(OBSERVATION_SIZE, dtype=np.float32)
    for slot in range(6):  # own slot 0 is the active Pokémon
        obs[slot * POKEMON_SIZE + offsets["active"]] = 1.0 if slot == 0 else 0.0
    mask = np.ones(N_ACTIONS, dtype=np.int8)
    base = network.logits(obs, mask)
    assert np.isfinite(base).all() and len(set(np.round(base, 6))) > 10

    moves = obs.copy()
    m0 = offsets["moves"]
    first, second = slice(m0, m0 + MOVE_SIZE), slice(m0 + MOVE_SIZE, m0 + 2 * MOVE_SIZE)
    moves[first], moves[second] = obs[second], obs[first]
    swapped = network.logits(moves, mask)
    order = [1, 0, 2, 3, 5, 4, 6, 7, *range(8, 15)]
    np.testing.assert_allclose(swapped, base[order], rtol=1e-5, atol=1e-6)

    bench = obs.copy()
    a, b = slice(2 * POKEMON_SIZE, 3 * POKEMON_SIZE), slice(3 * POKEMON_SIZE, 4 * POKEMON_SIZE)
    bench[a], bench[b] = obs[b], obs[a]
    swapped = network.logits(bench, mask)
    order = [*range(10), 11, 10, 12, 13, 14]
    np.testing.assert_allclose(swapped, base[order], rtol=1e-5, atol=1e-6)
