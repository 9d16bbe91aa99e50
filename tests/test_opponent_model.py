"""The opponent model: its features, its prior, its fit, and its use by the search."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pokegym.world.data import load_dex
from pokegym.world.sets import compute_stats
from pokegym.world.state import BattleState, MonState, SideState
from pokegym.world.transition import TransitionModel
from policies.opponent_model import (
    DEFAULT_MODEL,
    FEATURES,
    ActionFeatures,
    OpponentModel,
    OpponentPrior,
    OpponentPriorError,
    load_opponent_model,
)
from train.opponent_model import fit_weights, main, read_decisions, scores


def mon(dex, species, moves, hp_share=1.0, status=""):
    raw = compute_stats(dex, species, 100, (84,) * 6, (31,) * 6, "")
    stats = (raw["hp"], raw["atk"], raw["def"], raw["spa"], raw["spd"], raw["spe"])
    entry = dex.species_entry(species)
    return MonState(species, 100, tuple(entry["types"]), stats, stats[0] * hp_share,
                    tuple(moves), status=status, tera_type="Fire")  # fmt: skip


@pytest.fixture(scope="module")
def model():
    return TransitionModel(load_dex(9))


def position(model, garchomp_hp=1.0, rocks=False, heatran_status=""):
    """Our Heatran against the opponent's Garchomp (side 1), which can knock it out with
    Earthquake, lay Stealth Rock, set up, heal, burn, protect, or switch to Blissey or a
    Corviknight at half HP."""
    dex = model.dex
    ours = [mon(dex, "heatran", ("magmastorm", "earthpower"), status=heatran_status)]
    theirs = [
        mon(dex, "garchomp", ("earthquake", "dragonclaw", "stealthrock", "swordsdance",
                              "recover", "willowisp", "protect"), garchomp_hp),
        mon(dex, "blissey", ("seismictoss",)),
        mon(dex, "corviknight", ("bravebird",), 0.5),
    ]  # fmt: skip
    return BattleState(sides=[SideState(mons=ours, stealth_rock=rocks), SideState(mons=theirs)])


ACTIONS = [("move", "earthquake", False), ("move", "dragonclaw", False),
           ("move", "stealthrock", False), ("move", "swordsdance", False),
           ("move", "recover", False), ("move", "willowisp", False), ("move", "protect", False),
           ("switch", 1, False), ("switch", 2, False), ("move", "earthquake", True)]  # fmt: skip


def named(row):
    return {name: value for name, value in zip(FEATURES, row, strict=True) if value}


def test_each_action_gets_the_features_a_player_weighs(model):
    rows = ActionFeatures(model).features(position(model, garchomp_hp=0.5), 1, ACTIONS)
    quake, claw, rocks, dance, recover, wisp, protect, blissey, corv, tera = map(named, rows)
    # Earthquake: 4x on Heatran, a knock-out, the strongest attack; Dragon Claw less.
    assert quake["attack_ko"] == pytest.approx(1.0) and quake["strongest_attack"] == 1.0
    assert 0 < claw["attack_damage"] < quake["attack_damage"] == pytest.approx(1.0)
    assert "strongest_attack" not in claw and "attack_ko" not in claw
    assert rocks == {"status_move": 1.0, "hazard": 1.0}
    danger = dance["setup_in_danger"]  # Heatran's best attack against Garchomp
    assert dance["setup"] == 1.0 and 0 < danger <= 1.0
    assert recover["recovery"] == pytest.approx(0.5) and "recovery_at_full" not in recover
    assert wisp == {"status_move": 1.0, "inflict_status": 1.0}
    assert protect == {"status_move": 1.0, "protect": 1.0}
    assert blissey["switch"] == 1.0 and blissey["switch_danger"] == pytest.approx(danger)
    assert blissey["switch_incoming_hp"] == 1.0 and corv["switch_incoming_hp"] == 0.5
    assert blissey["switch_active_hp"] == pytest.approx(0.5)
    assert tera["tera"] == 1.0 and tera["attack_ko"] == quake["attack_ko"]
    # What the position changes: rocks laid, full HP, a target already burned.
    rows = ActionFeatures(model).features(position(model, 1.0, True, "brn"), 1, ACTIONS)
    _, _, rocks, _, recover, wisp, *_ = map(named, rows)
    assert rocks == {"status_move": 1.0, "hazard_laid": 1.0}
    assert recover == {"status_move": 1.0, "recovery_at_full": 1.0}
    assert wisp == {"status_move": 1.0, "status_redundant": 1.0}


def test_the_prior_follows_the_weights_for_its_side_and_the_base_for_the_other(model):
    state = position(model)
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("hazard")] = 3.0
    prior = OpponentPrior(model, OpponentModel(tuple(weights), {}))
    probs = prior.prior(state, 1, ACTIONS)
    assert sum(probs) == pytest.approx(1.0)
    others = [p for i, p in enumerate(probs) if i != 2]
    assert probs[2] == pytest.approx(math.exp(3) / (math.exp(3) + 9))
    assert max(others) == pytest.approx(min(others))  # nothing else is weighed
    ours = [("move", "magmastorm", False), ("move", "earthpower", False)]
    assert prior.prior(state, 0, ours) == [0.5, 0.5]  # no base: uniform for side 0

    class Base:
        def prior(self, state, side, actions):
            return [0.9, 0.1]

    assert OpponentPrior(model, OpponentModel(tuple(weights), {}), Base()).prior(
        state, 0, ours
    ) == [0.9, 0.1]
    assert prior.prior(state, 1, [("move", "earthquake", False)]) == [1.0]


def test_the_fit_recovers_the_weights_that_made_the_choices():
    rng = np.random.default_rng(3)
    truth = rng.normal(0.0, 1.0, len(FEATURES))
    rows = []
    for _ in range(4000):
        n = int(rng.integers(2, 10))
        features = rng.random((n, len(FEATURES)))
        logits = features @ truth
        p = np.exp(logits - logits.max())
        rows.append({"features": features.tolist(),
                     "chosen": int(rng.choice(n, p=p / p.sum()))})  # fmt: skip
    fitted = np.array(fit_weights(rows, l2=0.0))
    assert np.abs(fitted - truth).max() < 0.35
    assert np.corrcoef(fitted, truth)[0, 1] > 0.97


def test_scores_compare_the_model_with_the_damage_prior_and_a_uniform_guess():
    w = [0.0] * len(FEATURES)
    w[0] = 10.0  # the model picks the action with the first feature set
    first, second = [1.0] + [0.0] * (len(FEATURES) - 1), [0.0] * len(FEATURES)
    rows = [{"features": [first, second], "chosen": 0, "damage_prior": [0.25, 0.75]},
            {"features": [second, first], "chosen": 0, "damage_prior": [0.5, 0.5]}]  # fmt: skip
    out = scores(rows, w)
    assert out["decisions"] == 2
    assert out["uniform_top1"] == 0.5 and out["uniform_logloss"] == pytest.approx(math.log(2))
    assert out["model_top1"] == 0.5  # right on the first, wrong on the second
    # the damage prior: wrong on the first, a tie it wins half the time on the second
    assert out["damage_prior_top1"] == 0.25
    assert out["damage_prior_logloss"] == pytest.approx((math.log(4) + math.log(2)) / 2)


def test_a_model_file_that_cannot_be_used_is_a_clear_error(tmp_path):
    with pytest.raises(OpponentPriorError, match="pokegym train opponent"):
        load_opponent_model(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(OpponentPriorError, match="not an opponent model"):
        load_opponent_model(bad)
    bad.write_text(json.dumps({"features": ["attack_damage"], "weights": [1.0]}))
    with pytest.raises(OpponentPriorError, match="other features"):
        load_opponent_model(bad)
    bad.write_text(json.dumps({"features": list(FEATURES), "weights": [1.0]}))
    with pytest.raises(OpponentPriorError, match="no weight for each feature"):
        load_opponent_model(bad)
    from policies.mcts_agent import MCTSPolicy

    with pytest.raises(OpponentPriorError, match="no opponent model at"):
        MCTSPolicy(opponent_model=str(tmp_path / "missing.json"))


def test_the_shipped_model_loads_and_says_what_it_was_fitted_on():
    fitted = load_opponent_model(DEFAULT_MODEL)
    assert len(fitted.weights) == len(FEATURES)
    assert len(fitted.provenance["players"]) >= 2 and fitted.provenance["decisions"] > 1000
    weights = dict(zip(FEATURES, fitted.weights, strict=True))
    # What opponents were seen to do: prefer the attack that does more, and leave a
    # threatened Pokémon for one that takes the threat better.
    assert weights["attack_damage"] > 0 and weights["switch_relief"] > 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_decisions_collected_from_real_battles_fit_a_model_the_search_plays_with(tmp_path):
    from pokegym.arena import ArenaConfig, run_arena

    decisions = tmp_path / "decisions.jsonl"
    assert main(["collect", "--agents", "max_power,one_step", "--battles", "2",
                 "--seed", "5", "--out", str(decisions)]) == 0  # fmt: skip
    rows = read_decisions([decisions])
    assert len(rows) > 20 and {r["player"] for r in rows} == {"max_power", "one_step"}
    for row in rows:
        n = len(row["actions"])
        assert n >= 2 and 0 <= row["chosen"] < n
        assert len(row["features"]) == len(row["damage_prior"]) == n
        assert sum(row["damage_prior"]) == pytest.approx(1.0, abs=1e-4)
        assert all(len(f) == len(FEATURES) for f in row["features"])
    # max_power plays an attack whenever it can.
    assert all(row["actions"][row["chosen"]][0] == "move"
               for row in rows if row["player"] == "max_power")  # fmt: skip
    path = tmp_path / "model.json"
    assert main(["fit", str(decisions), "--exclude", "one_step", "--out", str(path)]) == 0
    fitted = load_opponent_model(path)
    assert fitted.provenance["players"] == ["max_power"]
    assert fitted.provenance["excluded"] == ["one_step"]
    spec = (
        f"mcts:iterations=60,determinizations=2,prior=heuristic,opponent_model={path},"
        "model_reply_turns=1"
    )
    config = ArenaConfig(agents=[spec, "random"], battles_per_pair=1, seed=3, concurrency=1,
                         clock_bank=None)  # fmt: skip
    result = run_arena(config)
    assert len(result.battles) == 1 and result.battles[0].winner in ("mcts", "random", None)
    assert result.battles[0].turns > 1
