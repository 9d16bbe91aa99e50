"""Priors over the opponent's hidden information: a distribution over full sets.

For every opponent Pokémon the world model needs a full set (moves, ability, item,
Tera Type, nature and EVs, hence stats, and level). This module gives, per
Pokémon, a :class:`SetDistribution` over :class:`~pokegym.world.sets.PokemonSet`\\ s,
conditioned on everything revealed so far.

Sources (a :class:`SetPrior` per format, see :func:`prior_for_format`)
----------------------------------------------------------------------
* **Random formats** (``gen9randombattle``, ``gen8randombattle``, any format whose
  teams Showdown generates): an empirical prior from Showdown's own team generator.
  :func:`random_battle_prior` generates ``n_teams`` teams (default
  :data:`DEFAULT_RANDOM_TEAMS`) through the simulator bridge with fixed seeds,
  merges identical sets per species and keeps their counts. The counts are cached
  as JSON in ``$POKEGYM_HOME/priors/<showdown lock hash>/<format>-<n_teams>-s<seed>.json``
  and reused afterwards (the first build prints a progress message). Random-battle
  levels are fixed per species, so the sets carry the generator's level. A species
  missing from the generated teams falls back to its entry in Showdown's
  ``data/random-battles/gen<N>/sets.json`` (every 4-move subset of each role's
  move pool, the role's abilities and Tera Types, 85 EVs in every stat, item
  unknown), then to the generic prior below.
* **OU and other team formats**: the sets of a team pool (the project's built-in
  pool by default, :func:`pool_prior`) mixed with — when the user provides one — a
  Smogon usage-statistics "chaos" JSON (:func:`usage_prior`; see
  :mod:`pokegym.world.usage` for how candidate sets are built from its marginals and
  the independence assumption behind it). Pass the file as ``usage_stats=`` to
  :func:`prior_for_format` / :meth:`BeliefState.from_battle`, or set the environment
  variable ``POKEGYM_USAGE_STATS`` to its path. When both sources know a species,
  the pool gets ``pool_weight`` (default 0.5) of the probability and the usage
  candidates the rest.
* **Unknown species** (in no source): a generic prior from Showdown's species data
  (:class:`GenericPrior`): one set per legal ability (uniform), no item knowledge
  (item ``""``), moves unknown (filled in as they are revealed), Tera Type one of the
  species' own types; random formats assume Showdown's random-battle spread (85 EVs
  in every stat, no nature, 31 IVs); team formats assume two spreads with equal
  weight, an offensive one (252 in the better attacking stat and in Speed, 4 HP,
  +Spe nature lowering the unused attacking stat) and a defensive one (252 HP, 252
  in the better defence, 4 in the other, nature raising that defence and lowering
  the unused attacking stat). Fields a generic set does not know are *templates*:
  a revealed value fills them in instead of contradicting them.

Posterior updates
-----------------
* Revealed moves, item (the *original* item, read from ``-enditem``/``-item`` lines
  so that a Knock Off or a consumed Berry still tells what was held; Trick and other
  swaps are tracked), ability, Tera Type and level: only consistent sets are kept
  (:meth:`SetDistribution.reveal`). If no set is consistent, the *closest* sets (the
  fewest contradicted facts) are kept, patched so they agree with what was seen (a
  missing move replaces the set's least likely unrevealed move) and the
  distribution is flagged ``off_support`` with a note. A known current item that
  differs from the original (knocked off, consumed, swapped) replaces the item in
  the sets returned (so determinizations hold what the Pokémon holds now).
* Turn order: :class:`TurnOrder` holds the facts of one turn in which both sides
  moved (our Speed stat, both sides' boosts, status, items, abilities, Tailwind,
  Trick Room, weather, terrain, the moves' priorities, who moved first);
  :func:`order_consistent` / :meth:`SetDistribution.given_turn_order` keep the sets
  whose Speed (with their own item, e.g. Choice Scarf, and ability, e.g. Prankster
  priority or Swift Swim) produces the observed order; speed ties are consistent
  either way. :func:`speed_bounds` gives the implied bounds on the opponent's
  effective Speed. :func:`turn_orders` / :class:`ProtocolTracker` extract the facts
  from a poke-env battle's protocol lines (it skips turns it cannot read with
  certainty: Quick Claw/Quick Draw/Custap activations, ability swaps, Transform,
  unknown priorities, forme changes of our Pokémon, Illusion once it is broken).
  Speeds are compared as Showdown computes them in gen 8+ (at the first action of the
  turn, after switch-ins).
* Damage: :meth:`SetDistribution.given_damage` takes a function
  ``damage_range(candidate_set) -> (min_fraction, max_fraction)`` and the observed
  fraction of HP lost, and keeps the candidates whose range contains it, give or take
  ``tolerance`` (default one HP-percent step, since the opponent's HP is shown in
  percent; ``lower_bound=True`` for a hit that knocked out, which could have done
  more). :func:`our_hit_range` (our hit on them: bounds on their bulk) and
  :func:`their_hit_range` (their hit on us: bounds on their attack, item, ability)
  build that function with the damage calculator (:mod:`pokegym.world.damage`);
  :meth:`BeliefState.observe_damage` adds such an observation to the evidence.
  :class:`BeliefState` applies the battle's own hits by itself
  (:mod:`~pokegym.world.priors.hits`): :class:`HitTracker` keeps both sides' full
  state at each hit (every stat stage, screens, Terastallization, Protosynthesis,
  Stakeout's "sent in this turn"), and :func:`hit_observation` turns each hit whose
  damage is known for certain into such an observation (no critical hits, multi-hit
  moves, moves whose power depends on the battle's history, items used in the hit,
  type changes, Illusion). ``BeliefState(..., hits=False)`` leaves them out.
* Item clues: what the opponent's item did *not* do (:mod:`~pokegym.world.priors.item_clues`,
  :class:`ClueTracker`, :class:`ItemClue`): no Life Orb recoil after a hit, no Leftovers
  heal at the end of a turn below full HP, Stealth Rock damage on entry or none (Heavy-Duty
  Boots), two different moves in a row (no Choice item), no status from an orb.
  ``BeliefState(..., clues=False)`` leaves them out.
  :func:`damage_events` lists the direct hits of a battle's protocol lines.

Outputs
-------
:class:`SetDistribution` (``sets``, normalised ``weights``, :meth:`~SetDistribution.modal`,
:meth:`~SetDistribution.sample`, marginals such as
:meth:`~SetDistribution.move_probabilities`, :meth:`~SetDistribution.stats_range`)
and :class:`BeliefState`, built from a poke-env battle with
:meth:`BeliefState.from_battle` and kept current with :meth:`BeliefState.update`
(a no-op when no protocol line arrived; otherwise only changed posteriors are
recomputed), giving a distribution for every opponent Pokémon seen, and for
Team-Preview-only ones. Determinizations for the world model
(:func:`~pokegym.world.state.state_from_battle`), keyed by species id:
:meth:`BeliefState.modal_determinization` (the point estimate PokéChamp used) and
:meth:`BeliefState.sample_determinizations` (``n`` draws for search).
:func:`belief_for` keeps one belief per battle object, and :func:`modal_determinizer`
``(battle, true_sets=None)`` is the one-call version for benchmarks and agents.
Modules: :mod:`~pokegym.world.priors.distribution` (set distributions),
:mod:`~pokegym.world.priors.turn_order` (speed inference from turn order),
:mod:`~pokegym.world.priors.set_priors` (the kinds of set prior),
:mod:`~pokegym.world.priors.sources` (which prior each format uses, its build step and caches),
:mod:`~pokegym.world.priors.protocol` (protocol parsing),
:mod:`~pokegym.world.priors.hits` (direct hits and what their damage depended on),
:mod:`~pokegym.world.priors.item_clues` (what the opponent's item did not do) and
:mod:`~pokegym.world.priors.belief` (the belief state and damage evidence). Every
public name is importable from ``pokegym.world.priors``.
"""

from __future__ import annotations

from pokegym.world.priors.battle_history import damage_events, turn_orders
from pokegym.world.priors.belief import (
    BeliefState,
    battle_format,
    belief_for,
    modal_determinizer,
    our_hit_range,
    their_hit_range,
)
from pokegym.world.priors.distribution import (
    SetDistribution,
)
from pokegym.world.priors.hits import HitContext, HitObservation, HitTracker, hit_observation
from pokegym.world.priors.item_clues import ClueTracker, ItemClue
from pokegym.world.priors.protocol import DamageEvent, ObservedTurnOrder, ProtocolTracker
from pokegym.world.priors.set_priors import (
    GenericPrior,
    MixturePrior,
    SetPrior,
    SetsJsonPrior,
    TablePrior,
    UsagePrior,
)
from pokegym.world.priors.sources import (
    DEFAULT_RANDOM_TEAMS,
    USAGE_STATS_ENV,
    PriorsNotBuiltError,
    build_format_priors,
    build_pool_set_counts,
    build_priors,
    build_random_set_counts,
    pool_prior,
    pool_prior_cache_path,
    prepare_priors,
    prior_for_format,
    random_battle_prior,
    random_prior_cache_path,
    usage_prior,
)
from pokegym.world.priors.turn_order import (
    SpeedFacts,
    TurnOrder,
    effective_speed,
    move_priority,
    order_consistent,
    speed_bounds,
)

__all__ = [
    "DEFAULT_RANDOM_TEAMS",
    "USAGE_STATS_ENV",
    "BeliefState",
    "ClueTracker",
    "DamageEvent",
    "GenericPrior",
    "HitContext",
    "HitObservation",
    "HitTracker",
    "ItemClue",
    "MixturePrior",
    "ObservedTurnOrder",
    "PriorsNotBuiltError",
    "ProtocolTracker",
    "SetDistribution",
    "SetPrior",
    "SetsJsonPrior",
    "SpeedFacts",
    "TablePrior",
    "TurnOrder",
    "UsagePrior",
    "battle_format",
    "belief_for",
    "build_format_priors",
    "build_pool_set_counts",
    "build_priors",
    "build_random_set_counts",
    "damage_events",
    "effective_speed",
    "hit_observation",
    "modal_determinizer",
    "move_priority",
    "order_consistent",
    "our_hit_range",
    "pool_prior",
    "pool_prior_cache_path",
    "prepare_priors",
    "prior_for_format",
    "random_battle_prior",
    "random_prior_cache_path",
    "speed_bounds",
    "their_hit_range",
    "turn_orders",
    "usage_prior",
]
