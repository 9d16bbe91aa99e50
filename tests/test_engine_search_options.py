"""The shipped patch's search, ``mcts_with_options``: poke-engine's MCTS with side two's
root move drawn from a given distribution (``engine:opponent=prior``) and weights on the
terms of its evaluation (``engine:boost_value``, ``alive_value``, ``score_scale``, ...);
the prior's probabilities by the engine's option names, the options, and the agent on
live battles.

The tests of the real module fail, never skip, when the engine is missing (``make setup``
builds it)."""

from __future__ import annotations

import shutil
import subprocess
from types import SimpleNamespace

import pytest
from test_engine_agent import _play, _register_made
from test_engine_build import _state  # our Garchomp against a Pikachu, a Rotom-Wash behind each
from test_engine_reply import FixedPrior, _recorded_state

from pokegym.engine import require_engine, source
from pokegym.errors import EngineMissingError
from pokegym.world.data import to_id
from policies import engine as engine_agent
from policies.core.battle import legal_actions
from policies.core.engine_reply import reply_probabilities
from policies.engine import ENGINE_SEARCH, EVALUATION_WEIGHTS, EngineOptions, EnginePolicy

CACHED_SDIST = source.engine_home() / "sdist" / source.SDIST_NAME


@pytest.fixture(scope="module")
def pe():
    return require_engine()


def _search(pe, prior, *, unnamed=0.0, weight=1.0, iterations=3000, boosts=(1.0, 1.0),
            state=None, weights=None):  # fmt: skip
    state = _state(pe) if state is None else state
    raw = getattr(pe, ENGINE_SEARCH)(state, 0, iterations, prior, unnamed, weight, *boosts,
                                     weights or {})  # fmt: skip
    result = pe.MctsResult._from_rust(raw)
    return result, {o.move_choice.lower(): o.visits for o in result.side_two}


def _mean_score(result, name):
    option = next(o for o in result.side_one if o.move_choice.lower() == name)
    return option.total_score / option.visits


# ------------------------------------------------------------------------ the patch
def test_the_search_patch_applies_to_the_sdist_and_the_debian_port_after_it(tmp_path):
    if not CACHED_SDIST.is_file():
        pytest.fail(f"{CACHED_SDIST} is missing: `pokegym engine build` (make setup) caches it")
    tree = source.unpack(CACHED_SDIST, tmp_path / "ours")
    first = source.apply_patch(tree, source.SEARCH_PATCH.read_text())
    assert set(first) == {"src/mcts.rs", "src/genx/evaluate.rs", "poke-engine-py/src/lib.rs"}
    mcts = (tree / "src/mcts.rs").read_text()
    assert "pub fn perform_mcts_with_root_prior(" in mcts and "pub fn perform_mcts(" in mcts
    binding = (tree / "poke-engine-py/src/lib.rs").read_text()
    assert f"wrap_pyfunction!({ENGINE_SEARCH}, m)" in binding
    evaluate = (tree / "src/genx/evaluate.rs").read_text()
    assert "boost * get_boost_multiplier(" in evaluate and "w.alive * POKEMON_ALIVE" in evaluate
    assert "score_scale() * x" in mcts
    registry_tree = {p: (tree / p).read_bytes() for p in first}
    source.apply_patch(tree, source.PATCH.read_text())  # the debian path: the port after it
    assert "rand::rng" not in (tree / "src/mcts.rs").read_text()
    assert f"fn {ENGINE_SEARCH}(" in (tree / "poke-engine-py/src/lib.rs").read_text()
    if shutil.which("patch"):  # GNU patch makes the same registry-path files
        theirs = source.unpack(CACHED_SDIST, tmp_path / "theirs")
        subprocess.run(["patch", "-p1", "--quiet", "--batch", "-i",
                        str(source.SEARCH_PATCH)], cwd=theirs, check=True)  # fmt: skip
        for path, content in registry_tree.items():
            assert (theirs / path).read_bytes() == content, path


# -------------------------------------------------------------- the engine's search
def test_side_two_root_moves_are_drawn_from_the_prior(pe):
    result, theirs = _search(pe, {"quickattack": 1.0})
    assert result.total_visits >= 3000
    assert theirs["quickattack"] == result.total_visits
    assert sum(v for n, v in theirs.items() if n != "quickattack") == 0
    # Side one still searches: every option of ours is tried.
    assert all(option.visits > 0 for option in result.side_one)


def test_weight_zero_is_the_engines_own_search(pe):
    _, theirs = _search(pe, {"quickattack": 1.0}, weight=0.0)
    assert sum(1 for v in theirs.values() if v > 0) >= 2


def test_options_the_prior_does_not_name_share_the_unnamed_weight(pe):
    result, theirs = _search(pe, {"quickattack": 1.0, "notamove": 5.0}, unnamed=1.0)
    n = len(theirs)
    assert n >= 3 and all(v > 0 for v in theirs.values())
    for name, visits in theirs.items():  # each of the n options drawn with probability 1/n
        assert visits / result.total_visits == pytest.approx(1 / n, abs=0.05), name


def test_a_prior_with_no_weight_on_any_option_leaves_the_search_as_it_is(pe):
    result, theirs = _search(pe, {"notamove": 1.0}, iterations=1000)
    assert result.total_visits >= 1000 and sum(1 for v in theirs.values() if v > 0) >= 2
    result, theirs = _search(pe, {}, iterations=1000)
    assert sum(theirs.values()) == result.total_visits


def test_an_empty_prior_is_no_draw_whatever_the_unnamed_weight(pe):
    """No prior names nothing: side two's root move stays the search's own (the switch
    to Rotom-Wash), not a uniform draw over options that all weigh ``unnamed``."""
    result, theirs = _search(pe, {}, unnamed=1.0, weight=1.0)
    assert max(theirs, key=lambda n: theirs[n]) == "switch rotomwash"
    assert theirs["switch rotomwash"] > 0.5 * result.total_visits


def test_our_choice_answers_the_drawn_move(pe):
    """Earthquake is the answer to a Pikachu that stays in; against one that switches to
    the levitating Rotom-Wash it does nothing, and the engine's own search (whose
    opponent switches: Thunderbolt cannot touch Garchomp) hedges with Dragon Claw."""

    def most_visited(result):
        return max(result.side_one, key=lambda o: o.visits).move_choice.lower()

    stays, _ = _search(pe, {"quickattack": 1.0}, iterations=4000)
    leaves, _ = _search(pe, {"switch rotomwash": 1.0}, iterations=4000)
    free, theirs = _search(pe, {}, iterations=4000)
    assert most_visited(stays) == "earthquake"
    assert most_visited(leaves) != "earthquake" and most_visited(free) != "earthquake"
    assert _mean_score(stays, "earthquake") > _mean_score(leaves, "earthquake") + 0.1
    assert max(theirs, key=lambda n: theirs[n]) == "switch rotomwash"


def test_the_boosts_weight_changes_what_setting_up_is_worth(pe):
    """Garchomp with Swords Dance in front of a Pikachu that cannot touch it: with our
    boosts weighed at 0 the set-up scores only what the search sees it bring (0.08–0.09
    less in 25 runs of each); the weight is put back after the search."""
    released = _state(pe)
    garchomp = released.side_one.pokemon[0]
    setter = pe.Pokemon(
        id="garchomp", level=100, types=("dragon", "ground"), hp=357, maxhp=357,
        ability="roughskin", item="leftovers", attack=garchomp.attack, defense=226,
        special_attack=176, special_defense=206, speed=333, tera_type="steel",
        moves=[pe.Move(id="swordsdance"), pe.Move(id="dragonclaw")],
    )  # fmt: skip

    def state():
        return pe.State(side_one=pe.Side(pokemon=[setter, released.side_one.pokemon[1]]),
                        side_two=released.side_two)  # fmt: skip

    full, _ = _search(pe, {}, weight=0.0, iterations=4000, state=state())
    none, _ = _search(pe, {}, weight=0.0, iterations=4000, boosts=(0.0, 1.0), state=state())
    assert _mean_score(none, "swordsdance") < _mean_score(full, "swordsdance") - 0.03
    after = pe.monte_carlo_tree_search(state(), iterations=4000)  # the released search again
    sd = next(o for o in after.side_one if o.move_choice == "swordsdance")
    assert sd.total_score / sd.visits == pytest.approx(_mean_score(full, "swordsdance"), abs=0.03)


def test_the_weight_of_a_pokemon_alive_changes_what_a_knock_out_is_worth(pe):
    """Earthquake knocks out a Pikachu that stays in: weighing each Pokémon alive at 3
    raises its score (0.07 in repeated runs), at 0 lowers it (0.045); the weights are put
    back after each search."""
    stays = {"quickattack": 1.0}
    released, _ = _search(pe, stays, iterations=4000)
    more, _ = _search(pe, stays, iterations=4000, weights={"alive": 3.0})
    none, _ = _search(pe, stays, iterations=4000, weights={"alive": 0.0})
    again, _ = _search(pe, stays, iterations=4000)
    assert _mean_score(more, "earthquake") > _mean_score(released, "earthquake") + 0.03
    assert _mean_score(none, "earthquake") < _mean_score(released, "earthquake") - 0.02
    assert _mean_score(again, "earthquake") == pytest.approx(
        _mean_score(released, "earthquake"), abs=0.02)  # fmt: skip


def test_the_scale_of_the_sigmoid(pe):
    """At scale 0 every leaf short of the battle's end is worth 0.5 whatever its score; at
    2 the scores spread further from it than as released (Earthquake into a Pikachu that
    stays in: 0.78 as released, 0.89 at 2)."""
    flat, _ = _search(pe, {}, weight=0.0, iterations=3000, weights={"scale": 0.0})
    assert all(abs(o.total_score / o.visits - 0.5) < 0.02 for o in flat.side_one)
    stays = {"quickattack": 1.0}
    released, _ = _search(pe, stays, iterations=3000)
    steep, _ = _search(pe, stays, iterations=3000, weights={"scale": 2.0})
    assert _mean_score(steep, "earthquake") > _mean_score(released, "earthquake") + 0.05


def test_a_weight_the_engine_does_not_know_is_refused_by_name(pe):
    assert "alive" in pe.evaluation_weights() and "scale" in pe.evaluation_weights()
    with pytest.raises(ValueError, match='unknown evaluation weight "alve"; known: boost'):
        _search(pe, {}, iterations=100, weights={"alve": 2.0})
    assert set(EVALUATION_WEIGHTS.values()) <= set(pe.evaluation_weights())


@pytest.mark.parametrize("name", ["boost", "opponent_boost"])
def test_a_boosts_weight_is_its_own_argument_not_a_weight(pe, name):
    with pytest.raises(ValueError, match=f'"{name}" is set by its own argument \\({name}_value\\)'):
        _search(pe, {}, iterations=100, weights={name: 0.5})


def test_the_agent_passes_only_the_weights_it_changes():
    assert EngineOptions().evaluation_weights() == {}
    options = EngineOptions(alive_value=2, score_scale=0.5, hp_value=1.0)
    assert options.evaluation_weights() == {"alive": 2.0, "scale": 0.5}
    assert options.patched_search()


@pytest.mark.parametrize("options", [{"alive_value": 1.5}, {"boost_value": 0.5},
                                     {"opponent": "prior"}])  # fmt: skip
def test_a_search_without_a_prior_leaves_the_opponents_root_move_to_the_search(pe, options):
    """With the evaluation's weights and ``opponent=search``, or ``opponent=prior`` on a
    search given no prior (a lead's search, a turn the prior has nothing for), side two's
    root move is the engine's own choice (UCB1: the switch to Rotom-Wash, which
    Thunderbolt cannot touch), not drawn: no prior must not become a uniform draw."""
    agent = EnginePolicy(iterations=3000, **options)
    result = agent._run(_state(pe), agent.options.budget, agent.clock(), 1)
    theirs = {o.move_choice.lower(): o.visits for o in result.side_two}
    assert max(theirs, key=lambda n: theirs[n]) == "switch rotomwash"
    assert theirs["switch rotomwash"] > 0.5 * result.total_visits


# ---------------------------------------------------------- the prior by engine names
def test_the_priors_probabilities_carry_the_engines_names():
    model, state = _recorded_state()
    actions = legal_actions(model, state, 1)
    probabilities = reply_probabilities(model, FixedPrior(lambda a: 2.0 if a[2] else 1.0), state)
    assert sum(probabilities.values()) == pytest.approx(1.0)
    for kind, what, tera in actions:
        if kind == "move":
            name = to_id(what) + ("-tera" if tera else "")
        else:
            name = "switch " + to_id(state.sides[1].mons[int(what)].species)
        assert name in probabilities
    assert any(name.endswith("-tera") for name in probabilities) == any(a[2] for a in actions)
    assert any(name.startswith("switch ") for name in probabilities)


def test_a_side_with_one_choice_has_no_probabilities():
    _, state = _recorded_state()
    lone = SimpleNamespace(legal_actions=lambda s, side: [("move", "tackle", False)])
    assert reply_probabilities(lone, FixedPrior(lambda a: 1.0), state) == {}


# ------------------------------------------------------------------------- the agent
@pytest.mark.parametrize("options,word", [
    ({"boost_value": -1.0}, "boost_value"), ({"opponent_boost_value": -1}, "opponent_boost"),
    ({"alive_value": -0.5}, "alive_value"), ({"score_scale": -1}, "score_scale"),
    ({"hp_value": float("inf")}, "finite"),
    ({"alive_value": 2.0, "threads": 2}, "threads"),
    ({"boost_value": 0.5, "threads": 2}, "threads"),
    ({"opponent": "maybe"}, "opponent"), ({"opponent": "prior", "opponent_weight": 1.5},
                                          "opponent_weight"),
    ({"opponent": "prior", "opponent_unnamed": -1.0}, "opponent_unnamed"),
    ({"opponent": "prior", "reply": "prior"}, "one of them"),
])  # fmt: skip
def test_bad_opponent_options_are_refused_with_the_option_named(options, word):
    with pytest.raises(ValueError, match=word):
        EngineOptions(**options)


def test_an_engine_built_without_the_patch_is_one_error_naming_the_build(monkeypatch):
    monkeypatch.setattr(engine_agent, "import_engine", lambda: SimpleNamespace())
    with pytest.raises(EngineMissingError, match="pokegym engine build"):
        EnginePolicy(opponent="prior")
    with pytest.raises(EngineMissingError, match="pokegym engine build"):
        EnginePolicy(boost_value=0.5)
    with pytest.raises(EngineMissingError, match="pokegym engine build"):
        EnginePolicy(opponent_boost_value=2.0)
    # A build of the patch before the evaluation's weights: mcts_with_options alone.
    earlier = SimpleNamespace(mcts_with_options=lambda *args: None)
    monkeypatch.setattr(engine_agent, "import_engine", lambda: earlier)
    with pytest.raises(EngineMissingError, match="pokegym engine build"):
        EnginePolicy(alive_value=2.0)
    # A build that names fewer weights than the agent asks for.
    names = ["boost", "opponent_boost", "alive"]
    fewer = SimpleNamespace(mcts_with_options=lambda *args: None, evaluation_weights=lambda: names)
    monkeypatch.setattr(engine_agent, "import_engine", lambda: fewer)
    EnginePolicy(alive_value=2.0)
    with pytest.raises(EngineMissingError, match="pokegym engine build"):
        EnginePolicy(score_scale=2.0)
    EnginePolicy()  # the default does not need it


def test_no_prior_where_only_we_switch():
    agent = EnginePolicy.__new__(EnginePolicy)
    agent.options = EngineOptions(opponent="prior")
    assert agent._root_prior(SimpleNamespace(force_switch=True), {}) == {}
    agent.options = EngineOptions()
    assert agent._root_prior(SimpleNamespace(force_switch=False), {}) == {}


@pytest.mark.slow
@pytest.mark.parametrize("battle_format", ["gen9randombattle", "gen9ou"])
def test_the_engine_with_the_prior_at_its_root_plays_legal_orders(battle_format):
    spec = "engine:iterations=300,samples=2,opponent=prior,boost_value=0.5,alive_value=2"
    made = _register_made("engine_root_prior", spec)
    result = _play("engine_root_prior", "simple_heuristics", 2, 17, battle_format)
    assert result.record("engine_root_prior")["battles"] == 2
    assert all(agent.failures == 0 for agent in made)
    assert sum(agent.prior_searches for agent in made) >= 10
