"""What the search agents share: adapters from poke-env's battle object to the states
that searches read, and back from a search's choice to a legal order.

- :mod:`policies.core.engine_state`: the battle as poke-engine sees it (one sampled set
  for every hidden opponent Pokémon, from the project's belief), and the engine's root
  options mapped to the request's legal orders.
"""
