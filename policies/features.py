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

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

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
    """

    def __init__(
        self,
        observation_space: gym.spaces.Dict,
        pokemon_dim: int = 64,
        field_dim: int = 32,
        features_dim: int = 256,
        move_dim: int = 32,
    ):
        super().__init__(observation_space, features_dim)
        obs_space = observation_space["observation"]
        if obs_space.shape != (OBSERVATION_SIZE,):
            raise ValueError(
                f"expected an observation of {OBSERVATION_SIZE} values (pokegym layout v0), "
                f"got shape {obs_space.shape}"
            )
        mask_size = int(observation_space["action_mask"].shape[0])
        self.own_pokemon = _mlp(POKEMON_SIZE, 2 * pokemon_dim, pokemon_dim)
        self.opponent_pokemon = _mlp(POKEMON_SIZE, 2 * pokemon_dim, pokemon_dim)
        self.active_moves = _mlp(MOVE_SIZE, 2 * move_dim, move_dim)
        self.field = _mlp(FIELD_SIZE + mask_size, 2 * field_dim, field_dim)
        mixed = N_SLOTS * pokemon_dim + 4 * pokemon_dim + N_MOVE_SLOTS * move_dim + field_dim
        self.mix = nn.Sequential(nn.Linear(mixed, features_dim), nn.ReLU())

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        obs = observations["observation"].float()
        mask = observations["action_mask"].float()
        batch = obs.shape[0]
        own_blocks = obs[:, OWN_TEAM_OFFSET : OWN_TEAM_OFFSET + N_SLOTS * POKEMON_SIZE]
        own_blocks = own_blocks.reshape(batch, N_SLOTS, POKEMON_SIZE)
        own_embedded = self.own_pokemon(own_blocks)
        own = own_embedded.reshape(batch, -1)
        own_active = own_blocks[:, :, ACTIVE : ACTIVE + 1]
        active = (own_embedded * own_active).sum(dim=1)
        active_block = (own_blocks * own_active).sum(dim=1)
        moves = active_block[:, MOVES : MOVES + N_MOVE_SLOTS * MOVE_SIZE]
        moves = self.active_moves(moves.reshape(batch, N_MOVE_SLOTS, MOVE_SIZE)).reshape(batch, -1)

        blocks = obs[:, OPPONENT_TEAM_OFFSET : OPPONENT_TEAM_OFFSET + N_SLOTS * POKEMON_SIZE]
        blocks = blocks.reshape(batch, N_SLOTS, POKEMON_SIZE)
        present = blocks[:, :, PRESENT : PRESENT + 1]
        opponent_active = blocks[:, :, ACTIVE : ACTIVE + 1]
        embedded = self.opponent_pokemon(blocks) * present
        count = present.sum(dim=1).clamp(min=1.0)
        mean = embedded.sum(dim=1) / count
        # Embeddings are non-negative (ReLU), so masking absent slots to 0 keeps the max honest.
        peak = embedded.max(dim=1).values
        on_field = (embedded * opponent_active).sum(dim=1)

        field = self.field(torch.cat([obs[:, FIELD_OFFSET:], mask], dim=1))
        parts = [own, active, moves, mean, peak, on_field, field]
        return self.mix(torch.cat(parts, dim=1))
