"""The searches the agents run, with what they search given to them: the game (the world
model's legal actions and turn), the leaf evaluator, the priors and the proposers.

- :mod:`policies.search.mcts`: simultaneous-move MCTS (``SMMCTS``) over any ``Game``, with
  the ``Evaluator`` and ``Prior`` Protocols; it knows nothing about Pokémon;
- :mod:`policies.search.maximin`: the depth-limited maximin over world-model states
  (``MinimaxSearch``), with ``Proposer`` roles for each side's candidates.

The agents that compose them are in :mod:`policies` (``mcts_agent``, ``minimax``,
``pokechamp``); what they share is in :mod:`policies.core`.
"""
