"""Train a policy with sb3-contrib's MaskablePPO on pokegym battles.

``pokegym train ppo --format gen9randombattle --steps N --out DIR`` (or
``python -m train.ppo ...``) trains on many battles at once on the embedded
simulator (:class:`~pokegym.vector.ShowdownVectorEnv`: battles pipelined over one
simulator process per core, seen by stable-baselines3 through
:func:`pokegym.sb3.to_sb3`), with illegal actions masked through
``action_masks()``.

**Opponents.** Every battle draws its opponent from a mixture that changes with
training progress:

* a curriculum of scripted agents (default ``random`` from the start,
  ``max_power`` from 2 % of the steps, ``abyssal`` from 50 %); the newest stage
  gets most battles, the earlier ones keep ``replay`` of them so nothing learnt is
  forgotten;
* self-play: from ``self_play_start`` on, ``self_play`` of the battles are played
  against frozen snapshots of the policy itself (one taken every
  ``snapshot_every`` steps, the last ``max_snapshots`` kept). A snapshot plays the
  other side of the same two-player battle through the environment's own
  observation encoder and action codec, sampling from its masked distribution.

**Outputs** in ``--out``: ``config.json`` (the resolved configuration),
``policy.pt`` (weights only; what ``ppo:path=DIR`` loads), ``model.zip``
(stable-baselines3's archive, to resume training; it contains pickled objects),
``checkpoints/step_N/`` (both, every ``checkpoint_every`` steps), ``evals.jsonl``
(periodic arena results with Wilson intervals), ``progress.jsonl`` and
TensorBoard logs in ``tb/`` (when tensorboard is installed).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from poke_env.battle import AbstractBattle
from poke_env.player.battle_order import BattleOrder

from pokegym.agents import Agent, make_agent, register_agent, registered_agents
from pokegym.arena import ArenaConfig, run_arena
from pokegym.sb3 import to_sb3
from pokegym.vector import ShowdownVectorEnv
from policies.ppo import (
    HEADS,
    WEIGHTS_NAME,
    PolicyNetwork,
    PPOPolicy,
    policy_class,
    policy_kwargs,
    save_policy,
)
from train.config import config_parser, seed_everything
from train.selfplay import SelfPlayEnv, concat_vec_envs, network_player

SELF_PLAY = "self_play"


@dataclass(frozen=True)
class PPOConfig:
    """One training run. Every field is a command-line option (``--n-envs 16``)."""

    battle_format: str = "gen9randombattle"
    """Showdown format id (``--format``)."""
    steps: int = 1_000_000
    """Environment steps (agent decisions) to train for."""
    out: str = "runs/ppo"
    """Output folder (config, weights, checkpoints, logs)."""
    seed: int = 0
    """Seeds torch, NumPy, the battles and the opponents."""
    max_minutes: float | None = None
    """Stop after this much wall time (the policy is saved); None: no limit."""
    n_envs: int = 24
    """Battles played side by side."""
    simulators: int | None = None
    """Simulator (Node) processes; default one per CPU core."""
    reward: str = "shaped"
    """``shaped`` (win/loss plus potential-based HP and faint terms) or ``win_loss``."""
    curriculum: str = "random@0,max_power@0.02,abyssal@0.5"
    """Opponent stages as ``agent@fraction``: the agent becomes the main opponent at that
    fraction of ``steps``. Agent specs may carry options (``one_step:tera=false@0.5``)."""
    replay: float = 0.3
    """Share of battles against the earlier stages' opponents (split evenly)."""
    self_play: float = 0.15
    """Share of battles against frozen snapshots of the policy, once there is one."""
    self_play_start: float = 0.6
    """Fraction of ``steps`` from which snapshots are taken and played."""
    snapshot_every: int = 50_000
    """Steps between two snapshots."""
    max_snapshots: int = 5
    """Snapshots kept (the oldest is dropped)."""
    self_play_envs: int = 0
    """Extra battles, besides ``n_envs``, played in the two-player env against snapshots
    from the start (the first battles face the learner's own current weights)."""
    eval_every: int = 150_000
    """Steps between two arena evaluations (0: only at the end)."""
    eval_battles: int = 100
    """Battles per evaluation opponent (sides alternate)."""
    eval_opponents: str = "max_power,abyssal"
    """Comma-separated agents the policy is evaluated against."""
    final_eval: bool = True
    """Evaluate once more at the end of training."""
    checkpoint_every: int = 150_000
    """Steps between two checkpoints in ``out/checkpoints/``."""
    learning_rate: float = 3e-4
    """Adam step size (decays linearly to 10 % of it)."""
    n_steps: int = 128
    """Steps per battle slot per rollout (rollout = n_steps * n_envs)."""
    batch_size: int = 768
    """Minibatch size."""
    n_epochs: int = 6
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clipping."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    head: str = "scored"
    """Action head: ``scored`` (each action scored from its own move or team-slot
    embedding by a network shared across slots) or ``mlp`` (SB3's linear head)."""
    net_arch: str = "128,64"
    """Hidden layers of the value head, and of the policy head for ``--head mlp``."""
    pokemon_dim: int = 64
    """Embedding size of one Pokémon in the features extractor."""
    move_dim: int = 32
    """Embedding size of one of the active Pokémon's moves in the features extractor."""
    field_dim: int = 32
    """Embedding size of the field in the features extractor."""
    features_dim: int = 256
    """Output size of the features extractor."""
    torch_threads: int = 1
    """Threads torch may use (the simulators need the other cores)."""
    tensorboard: bool = True
    """Write TensorBoard logs to ``out/tb`` (needs the tensorboard package)."""
    verbose: int = 1
    """0: quiet; 1: one progress line per rollout."""

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError("steps must be at least 1")
        if self.n_envs < 1:
            raise ValueError("n_envs must be at least 1")
        if not 0 <= self.replay < 1 or not 0 <= self.self_play < 1:
            raise ValueError("replay and self_play are shares in [0, 1)")
        if self.replay + self.self_play >= 1:
            raise ValueError("replay + self_play must leave battles for the current stage")
        if self.self_play_envs < 0:
            raise ValueError("self_play_envs must be 0 or more")
        rollout = self.n_steps * (self.n_envs + self.self_play_envs)
        if self.batch_size > rollout:
            raise ValueError(
                f"batch_size {self.batch_size} is larger than a rollout "
                f"(n_steps * (n_envs + self_play_envs) = {rollout}); lower it or raise n_steps."
            )
        parse_curriculum(self.curriculum)
        self.hidden_layers()
        if self.head not in HEADS:
            raise ValueError(f"head is one of {', '.join(HEADS)}, got {self.head!r}")

    def hidden_layers(self) -> list[int]:
        try:
            layers = [int(x) for x in self.net_arch.split(",") if x.strip()]
        except ValueError:
            raise ValueError(
                f"net_arch is comma-separated integers, got {self.net_arch!r}"
            ) from None
        if not layers or min(layers) < 1:
            raise ValueError(f"net_arch needs positive layer sizes, got {self.net_arch!r}")
        return layers

    def features(self) -> dict[str, int]:
        return {
            "pokemon_dim": self.pokemon_dim,
            "move_dim": self.move_dim,
            "field_dim": self.field_dim,
            "features_dim": self.features_dim,
        }


def parse_curriculum(text: str) -> list[tuple[str, float]]:
    """``"random@0,max_power@0.1"`` -> ``[("random", 0.0), ("max_power", 0.1)]``."""
    stages: list[tuple[str, float]] = []
    for part in text.split(","):
        if not part.strip():
            continue
        spec, at, start = part.strip().rpartition("@")
        if not at:
            spec, start = part.strip(), "0" if not stages else ""
        try:
            fraction = float(start)
        except ValueError:
            raise ValueError(
                f"Curriculum stages are agent@fraction, e.g. 'random@0,max_power@0.1'; "
                f"got {part!r}."
            ) from None
        if not 0 <= fraction <= 1:
            raise ValueError(f"Curriculum fractions lie in [0, 1], got {part!r}.")
        if stages and fraction < stages[-1][1]:
            raise ValueError(f"Curriculum stages must start in order, got {text!r}.")
        stages.append((spec, fraction))
    if not stages:
        raise ValueError("The curriculum needs at least one opponent.")
    if stages[0][1] != 0:
        raise ValueError(f"The first curriculum stage starts at 0, got {text!r}.")
    return stages


# ------------------------------------------------------------------ opponents
class OpponentMixture:
    """Which opponents a new battle draws from, and with what weights.

    Shared by every battle slot; the training callback updates it as training
    progresses. Snapshots are :class:`~policies.ppo.PolicyNetwork` objects.
    """

    def __init__(self, config: PPOConfig):
        self.config = config
        self.stages = parse_curriculum(config.curriculum)
        self.snapshots: list[tuple[str, PolicyNetwork]] = []
        #: The policy being trained (set once the model exists).
        self.live: PolicyNetwork | None = None
        self.stage = 0
        self.update(0)

    def update(self, steps: int) -> None:
        fraction = steps / self.config.steps
        self.stage = max(i for i, (_, start) in enumerate(self.stages) if start <= fraction)

    @property
    def self_play_on(self) -> bool:
        return bool(self.snapshots) and self.config.self_play > 0

    def weights(self) -> dict[str, float]:
        """Opponent name -> share of new battles."""
        config = self.config
        names = [spec for spec, _ in self.stages]
        current = names[self.stage]
        earlier = [name for name in names[: self.stage] if name != current]
        out: dict[str, float] = {}
        rest = 1.0
        if self.self_play_on:
            for name, _ in self.snapshots:
                out[name] = config.self_play / len(self.snapshots)
            rest -= config.self_play
        if earlier and config.replay > 0:
            for name in earlier:
                out[name] = out.get(name, 0.0) + config.replay / len(earlier)
            rest -= config.replay
        out[current] = out.get(current, 0.0) + rest
        return out

    def network(self, name: str) -> PolicyNetwork | None:
        for snapshot, network in self.snapshots:
            if snapshot == name:
                return network
        return None

    def add_snapshot(self, name: str, network: PolicyNetwork) -> None:
        self.snapshots.append((name, network))
        del self.snapshots[: -self.config.max_snapshots]

    def pick_snapshot(self, rng: np.random.Generator) -> PolicyNetwork | None:
        """A snapshot drawn uniformly (the live policy while there is none)."""
        if not self.snapshots:
            return self.live
        return self.snapshots[int(rng.integers(len(self.snapshots)))][1]


class SnapshotPlayer:
    """``player_1`` of a :class:`~train.selfplay.SelfPlayEnv`: one snapshot per battle."""

    def __init__(self, mixture: OpponentMixture):
        self.mixture = mixture
        self.network: PolicyNetwork | None = None

    def new_battle(self, rng: np.random.Generator) -> None:
        self.network = self.mixture.pick_snapshot(rng)

    def __call__(self, obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
        network = self.network or self.mixture.pick_snapshot(rng)
        if network is None:
            raise RuntimeError("No policy to play self-play battles with yet.")
        return network_player(network)(obs, rng)


class CurriculumOpponent:
    """One battle slot's opponent: draws an agent from the mixture for every battle.

    The vector env calls :meth:`seed` when it starts a new battle in this slot;
    that is when the next opponent is drawn (from this slot's seeded generator), so
    one battle is always played by one opponent. ``finished`` names the opponent
    of the battle that ended last.
    """

    def __init__(self, mixture: OpponentMixture):
        self.mixture = mixture
        self.rng = np.random.default_rng()
        self.current = ""
        self.finished = ""
        self._agent: Agent | None = None
        self._agents: dict[str, Agent] = {}

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.finished = self.current
        weights = self.mixture.weights()
        names = list(weights)
        p = np.array([weights[name] for name in names])
        self.current = names[int(self.rng.choice(len(names), p=p / p.sum()))]
        self._agent = self._build(self.current)
        agent_seed = getattr(self._agent, "seed", None)
        if callable(agent_seed):
            agent_seed(int(self.rng.integers(2**63 - 1)))

    def _build(self, name: str) -> Agent:
        network = self.mixture.network(name)
        if network is not None:
            # Snapshots come and go: keep only those still in the pool.
            live = {snap for snap, _ in self.mixture.snapshots}
            for old in [key for key in self._agents if key.startswith(SELF_PLAY)]:
                if old not in live:
                    del self._agents[old]
        agent = self._agents.get(name)
        if agent is None:
            if network is not None:
                agent = PPOPolicy(network=network, deterministic=False)
            else:
                agent = make_agent(name)
            self._agents[name] = agent
        return agent

    def choose(self, battle: AbstractBattle) -> BattleOrder:
        if self._agent is None:
            self.seed(int(self.rng.integers(2**63 - 1)))
        assert self._agent is not None
        return self._agent.choose(battle)

    def team_preview(self, battle: AbstractBattle) -> str:
        preview = getattr(self._agent, "team_preview", None)
        if callable(preview):
            return str(preview(battle))
        size = len(battle.team)
        lead = int(self.rng.integers(size)) + 1 if size else 1
        return "/team " + "".join(
            str(i) for i in [lead, *(j for j in range(1, size + 1) if j != lead)]
        )


# ------------------------------------------------------------------ helpers
def ensure_ppo_registered() -> None:
    """Make ``ppo:path=...`` resolvable even when the entry point is not installed."""
    if "ppo" not in registered_agents():
        register_agent("ppo", PPOPolicy)


def export_policy(model: Any, path: str | Path, config: PPOConfig, steps: int) -> Path:
    """Write the weights-only ``policy.pt`` of a MaskablePPO model."""
    return save_policy(
        model.policy,
        path,
        battle_format=config.battle_format,
        steps=int(steps),
        seed=config.seed,
        team_size=6,
    )


def evaluate(
    policy_path: str | Path,
    opponents: list[str],
    *,
    battle_format: str,
    battles: int,
    seed: int,
    concurrency: int = 8,
) -> dict[str, dict[str, float]]:
    """Arena results of the policy at ``policy_path`` against each opponent.

    Returns ``{opponent: {"win_rate", "low", "high", "wins", "losses", "ties", "battles"}}``
    with 95 % Wilson intervals (ties count half).
    """
    ensure_ppo_registered()
    spec = f"ppo:path={Path(policy_path).resolve()}"
    names = [opponent.partition(":")[0] for opponent in opponents]
    result = run_arena(
        ArenaConfig(
            agents=[spec, *opponents],
            battle_format=battle_format,
            battles_per_pair=battles,
            pairs=[("ppo", name) for name in names],
            seed=seed,
            concurrency=concurrency,
            clock_bank=None,
        )
    )
    out: dict[str, dict[str, float]] = {}
    for name in names:
        rate, low, high = result.win_rate("ppo", name)
        record = result.record("ppo", name)
        out[name] = {"win_rate": rate, "low": low, "high": high, **record}
    return out


def _jsonl(path: Path, entry: dict[str, Any]) -> None:
    with open(path, "a") as handle:
        handle.write(json.dumps(entry) + "\n")


# ------------------------------------------------------------------ training
# Long only because it holds a class: SB3's BaseCallback is subclassed on first use, so
# that importing train.ppo does not import stable-baselines3; each method is short.
def _callback_class() -> type:
    from stable_baselines3.common.callbacks import BaseCallback

    class TrainingCallback(BaseCallback):  # type: ignore[misc]
        """Curriculum, snapshots, checkpoints, evaluations and progress lines."""

        def __init__(self, config: PPOConfig, mixture: OpponentMixture, opponents: list[Any]):
            super().__init__(verbose=config.verbose)
            self.config = config
            self.mixture = mixture
            self.opponents = opponents
            self.out = Path(config.out)
            self.started = time.perf_counter()
            self.deadline = (
                self.started + 60 * config.max_minutes if config.max_minutes is not None else None
            )
            self.results: dict[str, list[float]] = {}
            self.next_snapshot = int(config.self_play_start * config.steps)
            self.next_checkpoint = config.checkpoint_every or 0
            self.next_eval = config.eval_every or 0
            self.last_line = (0, self.started)
            self.snapshot_count = 0
            self.stopped_on_time = False

        def _on_step(self) -> bool:
            steps = self.num_timesteps
            dones = self.locals.get("dones")
            if dones is not None:
                for i in np.flatnonzero(dones):
                    info = self.locals["infos"][i]
                    if "is_success" in info:
                        name = self.opponents[i].finished if i < len(self.opponents) else SELF_PLAY
                        if name.startswith(SELF_PLAY):
                            name = SELF_PLAY
                        self.results.setdefault(name, []).append(float(info["is_success"]))
            self.mixture.update(steps)
            config = self.config
            if config.self_play > 0 and steps >= self.next_snapshot:
                self._snapshot(steps)
                self.next_snapshot = steps + config.snapshot_every
            if config.checkpoint_every and steps >= self.next_checkpoint:
                self._checkpoint(steps)
                self.next_checkpoint += config.checkpoint_every
            if config.eval_every and steps >= self.next_eval:
                self.evaluate(steps)
                self.next_eval += config.eval_every
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                self.stopped_on_time = True
                return False
            return True

        def _snapshot(self, steps: int) -> None:
            frozen = copy.deepcopy(self.model.policy).to("cpu")
            self.snapshot_count += 1
            name = f"{SELF_PLAY}_{self.snapshot_count}"
            self.mixture.add_snapshot(name, PolicyNetwork.from_policy(frozen, {"steps": steps}))

        def _checkpoint(self, steps: int) -> Path:
            folder = self.out / "checkpoints" / f"step_{steps:09d}"
            export_policy(self.model, folder / WEIGHTS_NAME, self.config, steps)
            self.model.save(folder / "model.zip")
            return folder

        def evaluate(self, steps: int) -> dict[str, Any]:
            config = self.config
            folder = self._checkpoint(steps)
            opponents = [o for o in config.eval_opponents.split(",") if o.strip()]
            began = time.perf_counter()
            results = evaluate(
                folder / WEIGHTS_NAME,
                opponents,
                battle_format=config.battle_format,
                battles=config.eval_battles,
                seed=config.seed + 1,
            )
            entry = {"steps": steps, "seconds": time.perf_counter() - began, "results": results}
            _jsonl(self.out / "evals.jsonl", entry)
            for name, r in results.items():
                self.logger.record(f"eval/win_rate_vs_{name}", r["win_rate"])
                self.logger.record(f"eval/win_rate_low_vs_{name}", r["low"])
            if self.verbose:
                text = ", ".join(
                    f"{name} {r['win_rate']:.1%} [{r['low']:.1%}, {r['high']:.1%}] "
                    f"(n={r['battles']})"
                    for name, r in results.items()
                )
                print(f"[eval @ {steps}] {text}", flush=True)
            # Evaluation time is not training time.
            self.last_line = (self.last_line[0], self.last_line[1] + entry["seconds"])
            return entry

        def _on_rollout_end(self) -> None:
            steps = self.num_timesteps
            now = time.perf_counter()
            done_steps, since = self.last_line
            rate = (steps - done_steps) / max(now - since, 1e-9)
            self.last_line = (steps, now)
            weights = self.mixture.weights()
            line: dict[str, Any] = {
                "steps": steps,
                "seconds": round(now - self.started, 1),
                "steps_per_s": round(rate, 1),
                "stage": self.mixture.stages[self.mixture.stage][0],
                "mixture": {k: round(v, 3) for k, v in weights.items()},
                "win_rate": {},
            }
            self.logger.record("train/env_steps_per_s", rate)
            for name, outcomes in self.results.items():
                recent = outcomes[-200:]
                line["win_rate"][name] = [round(float(np.mean(recent)), 3), len(recent)]
                self.logger.record(f"rollout/win_rate_vs_{name}", float(np.mean(recent)))
            _jsonl(self.out / "progress.jsonl", line)
            if self.verbose:
                wins = ", ".join(
                    f"{name} {v[0]:.0%} (n={v[1]})" for name, v in line["win_rate"].items()
                )
                print(
                    f"[{steps:>9} steps, {line['seconds']:>7.0f} s] {rate:6.0f} steps/s  "
                    f"stage {line['stage']}  recent wins: {wins or '-'}",
                    flush=True,
                )

    return TrainingCallback


def make_model(config: PPOConfig, venv: Any) -> Any:
    """The MaskablePPO model of a config (features extractor of :mod:`policies.features`)."""
    from sb3_contrib import MaskablePPO

    layers = config.hidden_layers()
    tensorboard_log = None
    if config.tensorboard:
        try:
            import tensorboard  # noqa: F401

            tensorboard_log = str(Path(config.out) / "tb")
        except ImportError:
            print(
                "tensorboard is not installed: no TensorBoard logs "
                "(pip install tensorboard, or pass --no-tensorboard).",
                file=sys.stderr,
            )
    lr = config.learning_rate
    return MaskablePPO(
        policy_class(config.head),
        venv,
        learning_rate=lambda remaining: lr * (0.1 + 0.9 * remaining),
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        max_grad_norm=config.max_grad_norm,
        policy_kwargs=policy_kwargs({"pi": layers, "vf": layers}, config.features(), config.head),
        tensorboard_log=tensorboard_log,
        seed=config.seed,
        device="cpu",
        verbose=0,
    )


def make_vec_env(config: PPOConfig) -> tuple[Any, OpponentMixture, list[CurriculumOpponent]]:
    """The SB3 vector env of a config: ``n_envs`` battles against curriculum opponents
    in the pipelined vector env, then ``self_play_envs`` two-player-env battles."""
    mixture = OpponentMixture(config)
    env = ShowdownVectorEnv(
        config.n_envs,
        config.battle_format,
        opponent="random",
        num_simulators=config.simulators,
        autoreset_mode="same_step",
        reward=config.reward,
    )
    opponents = [CurriculumOpponent(mixture) for _ in range(config.n_envs)]
    for slot, opponent in zip(env.slots, opponents, strict=True):
        slot.opponent = opponent
    venv = to_sb3(env)
    if config.self_play_envs > 0:
        from stable_baselines3.common.vec_env import DummyVecEnv

        def make_one() -> SelfPlayEnv:
            return SelfPlayEnv(
                config.battle_format,
                opponent=SnapshotPlayer(mixture),
                battle_info=False,
                reward=config.reward,
            )

        two_player = DummyVecEnv([make_one for _ in range(config.self_play_envs)])
        venv = concat_vec_envs([venv, two_player])
    return venv, mixture, opponents


def train(config: PPOConfig) -> dict[str, Any]:
    """Run one training (see the module docstring); returns a summary dict."""
    import torch

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(config), indent=2) + "\n")
    torch.set_num_threads(max(1, config.torch_threads))
    seed_everything(config.seed)
    venv, mixture, opponents = make_vec_env(config)
    began = time.perf_counter()
    try:
        model = make_model(config, venv)
        mixture.live = PolicyNetwork(model.policy, {"live": True})
        callback = _callback_class()(config, mixture, opponents)
        model.learn(total_timesteps=config.steps, callback=callback, tb_log_name="ppo")
        steps = int(model.num_timesteps)
        seconds = time.perf_counter() - began
        export_policy(model, out / WEIGHTS_NAME, config, steps)
        model.save(out / "model.zip")
        summary: dict[str, Any] = {
            "steps": steps,
            "seconds": seconds,
            "stopped_on_time": callback.stopped_on_time,
            "policy": str(out / WEIGHTS_NAME),
        }
    finally:
        venv.close()
    if config.final_eval and config.eval_battles > 0:
        summary["final_eval"] = callback.evaluate(steps)["results"]
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


# ------------------------------------------------------------------ command line
def _parser() -> argparse.ArgumentParser:
    return config_parser(
        PPOConfig,
        prog="pokegym train ppo",
        description="Train a MaskablePPO policy on Showdown battles (see docs/ppo.md).",
        aliases={"battle_format": ["--format"]},
    )


def main(argv: list[str] | None = None) -> int:
    """``pokegym train ppo ...``: parse the options, train, print the summary."""
    args = _parser().parse_args(argv)
    try:
        config = PPOConfig(**vars(args))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        print(
            "error: training needs stable-baselines3 and sb3-contrib: pip install 'pokegym[rl]' "
            "(on a CPU-only machine install a CPU build of torch first, see the README).",
            file=sys.stderr,
        )
        return 2
    summary = train(config)
    print(json.dumps(summary, indent=2))
    print(f"policy: {summary['policy']}  (use it as the agent ppo:path={summary['policy']})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
