"""What the search agents share: adapters from poke-env's battle object to the states
that searches read, and back from a search's choice to a legal order; the leaf
evaluators, priors and anchors the agents compose with a search.

- :mod:`policies.core.battle`: the battle as the world model sees it (the decision state,
  our root actions with their orders, legal actions, an order as a world-model action);
- :mod:`policies.core.engine_state`: the battle as poke-engine sees it (one sampled set
  for every hidden opponent Pokémon, from the project's belief), and the engine's root
  options mapped to the request's legal orders;
- :mod:`policies.core.state_key`: what makes two world-model states the same search node;
- :mod:`policies.core.evaluators`: the value network's leaf evaluator;
- :mod:`policies.core.priors`: the anchored prior over actions;
- :mod:`policies.core.anchors`: the rule-based agents that can anchor a search;
- :mod:`policies.core.deadline`: the deadline rule of the time-budgeted searches;
- :mod:`policies.core.evaluation`: the hand-written leaf value and the terminal value;
- :mod:`policies.core.encoding`: a world-model state as the value network's input;
- :mod:`policies.core.action_prior`: the damage prior over a side's actions;
- :mod:`policies.core.action_features`: each action's features for the opponent model;
- :mod:`policies.core.lookahead`: the one-step lookahead (each move's damage and KO
  chances, each switch's threat) that proposers, rule agents and collections read.

The modules in :data:`COMPILED` run on every search node; ``pokegym accel build`` compiles
them with the world model (registered in the ``pokegym.accel`` entry-point group), and this
package loads the compiled ones when that build matches their sources.
"""

from pokegym.world import _accel

# Compiled with the world model's build (pokegym.world._accel), which they call natively.
COMPILED = ("evaluation", "encoding", "action_prior", "action_features")

_accel.activate_extension(__name__, __path__, COMPILED)
