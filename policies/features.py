"""A features extractor for pokegym's Dict observation (stable-baselines3).

The flat observation vector has three parts (see
:func:`pokegym.observation.layout_table`): the player's own team (6 Pokémon
blocks in team order, the order of the switch actions), the opponent's team as
revealed so far (6 blocks in the order they were first seen) and the field.
:class:`ShowdownFeaturesExtractor` gives each part a sub-network of its own:

* **own team**: one small network shared by the six Pokémon blocks; the six
  embeddings are concatenated in team order, so that "switch to slot 3" can be
  read off slot 3's embedding. The active Pokémon, wherever it sits in the
  team, is also given on its own: its embedding, and its four move blocks each
  through a shared move network, in move-slot order (the order of actions 0-3);
* **opponent**: another shared network over the opponent's blocks; the order in
  which the opponent's Pokémon were seen means nothing, so the blocks are pooled
  (mean and max over the Pokémon present) and the active one is added on its own;
* **field**: a network over the field block and the action mask (which tells a
  forced switch or a disabled move apart from an ordinary turn).

The three outputs are concatenated and mixed by one more layer. This module
imports torch at import time; nothing in ``pokegym`` imports it.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from pokegym.actions import N_ACTIONS, N_MOVES, N_TEAM
from pokegym.observation import (
    FIELD_OFFSET,
    FIELD_SIZE,
    MOVE_SIZE,
    N_MOVE_SLOTS,
    N_SLOTS,
    OBSERVATION_SIZE,
    OPPONENT_TEAM_OFFSET,
    OWN_TEAM_OFFSET,
    POKEMON_FEATURES,
    POKEMON_SIZE,
)


def _feature_offset(name: str) -> int:
    position = 0
    for feature, width, _ in POKEMON_FEATURES:
        if feature == name:
            return position
        position += width
    raise KeyError(name)


PRESENT = _feature_offset("present")
ACTIVE = _feature_offset("active")
MOVES = _feature_offset("moves")


def _mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, outputs), nn.ReLU()
    )


class ShowdownFeaturesExtractor(BaseFeaturesExtractor):  # type: ignore[misc]
    """One sub-network per observation part: own team, opponent as revealed, field.

    Args:
        observation_space: the env's ``Dict{"observation", "action_mask"}`` space.
        pokemon_dim: size of one Pokémon's embedding (own and opponent networks).
        move_dim: size of one move's embedding (the active Pokémon's moves).
        field_dim: size of the field embedding.
        features_dim: size of the output (what the policy and value heads see).
        mix: mix the parts with one more layer (output ``features_dim`` values). False
            outputs the parts side by side, in :meth:`part_sizes` order, for a head
            that reads them apart (:class:`ActionScorer`); ``features_dim`` is then
            their total size.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Dict,
        pokemon_dim: int = 64,
        field_dim: int = 32,
        features_dim: int = 256,
        move_dim: int = 32,
        mix: bool = True,
    ):
        self.pokemon_dim, self.move_dim, self.field_dim = pokemon_dim, move_dim, field_dim
        parts = sum(self.part_sizes().values())
        super().__init__(observation_space, features_dim if mix else parts)
        self.mixes = mix
        obs_space = observation_space["observation"]
        if obs_space.shape != (OBSERVATION_SIZE,):
            raise ValueError(
                f"expected an observation of {OBSERVATION_SIZE} values (pokegym layout v0), "
                f"got shape {obs_space.shape}"
            )
        mask_size = int(observation_space["action_mask"].shape[0])
        # A Pokémon = its own features + its moves as a set (mean and max of the move
        # embeddings), so the order of a moveset changes nothing but the move slots.
        pokemon_in = MOVES + 2 * move_dim
        self.moves = _mlp(MOVE_SIZE, 2 * move_dim, move_dim)
        self.own_pokemon = _mlp(pokemon_in, 2 * pokemon_dim, pokemon_dim)
        self.opponent_pokemon = _mlp(pokemon_in, 2 * pokemon_dim, pokemon_dim)
        self.field = _mlp(FIELD_SIZE + mask_size, 2 * field_dim, field_dim)
        self.mix = (
            nn.Sequential(nn.Linear(parts, features_dim), nn.ReLU()) if mix else nn.Identity()
        )

    def part_sizes(self) -> dict[str, int]:
        """The parts of the unmixed output, in order, and their sizes."""
        p = self.pokemon_dim
        return {
            "own_team": N_SLOTS * p,
            "own_active": p,
            "active_moves": N_MOVE_SLOTS * self.move_dim,
            "opponent_mean": p,
            "opponent_max": p,
            "opponent_active": p,
            "field": self.field_dim,
        }

    def _team(
        self, obs: torch.Tensor, offset: int, network: nn.Module
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(blocks, Pokémon embeddings, move embeddings) of one side's six slots."""
        batch = obs.shape[0]
        blocks = obs[:, offset : offset + N_SLOTS * POKEMON_SIZE].reshape(batch, N_SLOTS, -1)
        moves = blocks[:, :, MOVES : MOVES + N_MOVE_SLOTS * MOVE_SIZE]
        moves = self.moves(moves.reshape(batch, N_SLOTS, N_MOVE_SLOTS, MOVE_SIZE))
        known = blocks[:, :, MOVES : MOVES + N_MOVE_SLOTS * MOVE_SIZE : MOVE_SIZE].unsqueeze(-1)
        moves = moves * known  # empty move slots (unrevealed moves) contribute nothing
        pooled = [moves.sum(dim=2) / known.sum(dim=2).clamp(min=1.0), moves.max(dim=2).values]
        embedded = network(torch.cat([blocks[:, :, :MOVES], *pooled], dim=2))
        return blocks, embedded, moves

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        obs = observations["observation"].float()
        mask = observations["action_mask"].float()
        batch = obs.shape[0]
        own_blocks, own_embedded, own_moves = self._team(obs, OWN_TEAM_OFFSET, self.own_pokemon)
        own = own_embedded.reshape(batch, -1)
        own_active = own_blocks[:, :, ACTIVE : ACTIVE + 1]
        active = (own_embedded * own_active).sum(dim=1)
        moves = (own_moves * own_active.unsqueeze(-1)).sum(dim=1).reshape(batch, -1)

        blocks, embedded, _ = self._team(obs, OPPONENT_TEAM_OFFSET, self.opponent_pokemon)
        present = blocks[:, :, PRESENT : PRESENT + 1]
        opponent_active = blocks[:, :, ACTIVE : ACTIVE + 1]
        embedded = embedded * present
        count = present.sum(dim=1).clamp(min=1.0)
        mean = embedded.sum(dim=1) / count
        # Embeddings are non-negative (ReLU), so masking absent slots to 0 keeps the max honest.
        peak = embedded.max(dim=1).values
        on_field = (embedded * opponent_active).sum(dim=1)

        field = self.field(torch.cat([obs[:, FIELD_OFFSET:], mask], dim=1))
        parts = [own, active, moves, mean, peak, on_field, field]
        return self.mix(torch.cat(parts, dim=1))


class ActionScorer(nn.Module):
    """Action logits from the unmixed features: one score per action, from its own part.

    A move slot's two logits (plain, with the gimmick) come from one network shared by
    the four slots, over that move's embedding and a context vector; a switch's logit
    from another network shared by the six team slots, over that Pokémon's embedding
    and the context; wait from the context alone. The context summarises the rest
    without slot order (the active Pokémon, the opponent, the field, and the means of
    the move and team embeddings), so the same reasoning ("this move is super
    effective", "this Pokémon resists") applies to every slot, and swapping two move
    or team slots swaps their logits. Output: ``(batch, 15)`` in the action layout.
    """

    def __init__(self, parts: dict[str, int], n_team: int, n_moves: int, context_dim: int = 128):
        super().__init__()
        if 2 * n_moves + n_team + 1 != N_ACTIONS:
            raise ValueError("the action layout changed; ActionScorer needs updating")
        self.parts = dict(parts)
        self.n_team, self.n_moves = n_team, n_moves
        self.pokemon_dim = parts["own_active"]
        self.move_dim = parts["active_moves"] // n_moves
        offsets, position = {}, 0
        for name, size in parts.items():
            offsets[name] = (position, position + size)
            position += size
        self.offsets = offsets
        self.summary_parts = [
            name for name in parts if name not in ("own_team", "active_moves")
        ]  # fmt: skip
        summary = sum(parts[name] for name in self.summary_parts)
        summary += self.move_dim + self.pokemon_dim
        hidden = 64
        self.context = nn.Sequential(nn.Linear(summary, context_dim), nn.ReLU())
        self.move_score = nn.Sequential(
            nn.Linear(self.move_dim + context_dim, hidden), nn.ReLU(), nn.Linear(hidden, 2)
        )
        self.switch_score = nn.Sequential(
            nn.Linear(self.pokemon_dim + context_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )
        self.wait_score = nn.Linear(context_dim, 1)

    def _part(self, features: torch.Tensor, name: str) -> torch.Tensor:
        start, end = self.offsets[name]
        return features[:, start:end]

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        batch = features.shape[0]
        moves = self._part(features, "active_moves").reshape(batch, self.n_moves, self.move_dim)
        team = self._part(features, "own_team").reshape(batch, self.n_team, self.pokemon_dim)
        summary = [self._part(features, name) for name in self.summary_parts]
        context = self.context(torch.cat([*summary, moves.mean(dim=1), team.mean(dim=1)], dim=1))
        ctx = context.unsqueeze(1)
        move_logits = self.move_score(torch.cat([moves, ctx.expand(-1, self.n_moves, -1)], dim=2))
        switch_logits = self.switch_score(torch.cat([team, ctx.expand(-1, self.n_team, -1)], 2))
        return torch.cat(
            [
                move_logits[:, :, 0],
                move_logits[:, :, 1],
                switch_logits[:, :, 0],
                self.wait_score(context),
            ],
            dim=1,
        )


class ScoredActorCriticPolicy(MaskableMultiInputActorCriticPolicy):  # type: ignore[misc]
    """MaskablePPO's Dict-observation actor-critic with :class:`ActionScorer` as its
    action head. Use it with ``ShowdownFeaturesExtractor(mix=False)`` and ``pi=[]`` in
    ``net_arch`` (the value head keeps its hidden layers)."""

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        extractor = self.features_extractor
        if getattr(extractor, "mixes", True) or (
            self.mlp_extractor.latent_dim_pi != extractor.features_dim
        ):
            raise ValueError(
                "The scored action head reads the extractor's parts: use "
                "ShowdownFeaturesExtractor(mix=False) and net_arch pi=[]."
            )
        scorer = ActionScorer(extractor.part_sizes(), N_TEAM, N_MOVES)
        if self.ortho_init:
            scorer.apply(partial(self.init_weights, gain=np.sqrt(2)))
            for head in (scorer.move_score[-1], scorer.switch_score[-1], scorer.wait_score):
                head.apply(partial(self.init_weights, gain=0.01))
        self.action_net = scorer
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),
            **self.optimizer_kwargs,
        )
