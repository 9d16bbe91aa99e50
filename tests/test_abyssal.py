"""The ``abyssal`` heuristic: each rule on positions reached in real battles, and an
arena run.

Positions are played out on the embedded simulator with fixed teams
(``gen9customgame``): a scripted opponent makes its moves, ``abyssal`` is asked for
its decision on the live poke-env battle, and the test steps the battle with the
order it wants (or one the test imposes to reach the next position).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from poke_env.battle import Pokemon, SideCondition
from poke_env.player.battle_order import SingleBattleOrder

from pokegym.arena import ArenaConfig, run_arena
from pokegym.env import ShowdownEnv
from policies.abyssal import AbyssalPolicy

# Every test here plays real battles or starts Node (`pytest -m "not slow"` skips them).
pytestmark = pytest.mark.slow


def set_text(
    species: str,
    moves: list[str],
    ability: str,
    item: str = "Leftovers",
    tera: str = "",
    evs: str = "252 HP / 128 Def / 128 SpD",
) -> str:
    lines = [f"{species} @ {item}", f"Ability: {ability}"]
    if tera:
        lines.append(f"Tera Type: {tera}")
    lines += [f"EVs: {evs}", "Hardy Nature"]
    lines += [f"- {move}" for move in moves]
    return "\n".join(lines) + "\n"


def team(*sets: str) -> str:
    return "\n".join(sets)


class Scripted:
    """The opponent: uses the move named for each turn (the last one afterwards)."""

    def __init__(self, moves: list[str]):
        self.moves = [m.lower().replace(" ", "").replace("-", "") for m in moves]
        self.turn = 0

    def team_preview(self, battle) -> str:
        return "/team " + "".join(str(i + 1) for i in range(len(battle.team)))

    def choose(self, battle):
        wanted = self.moves[min(self.turn, len(self.moves) - 1)]
        self.turn += 1
        for move in battle.available_moves:
            if move.id == wanted:
                return SingleBattleOrder(move)
        if battle.available_moves:
            return SingleBattleOrder(battle.available_moves[0])
        return SingleBattleOrder(battle.available_switches[0])


class Position:
    """A live battle against a scripted opponent, stepped by orders."""

    def __init__(self, env: ShowdownEnv):
        self.env = env
        _, info = env.reset(seed=0)
        self.battle = info["battle"]
        self.done = False

    def play(self, order) -> None:
        action = self.env.codec.from_order(order, self.battle)
        _, _, terminated, truncated, info = self.env.step(action)
        self.battle = info["battle"]
        self.done = terminated or truncated

    def use(self, move_id: str) -> None:
        for move in self.battle.available_moves:
            if move.id == move_id:
                self.play(SingleBattleOrder(move))
                return
        raise AssertionError(f"{move_id} is not available: {self.battle.available_moves}")


@contextmanager
def position(
    ours: str, theirs: str, opponent_moves: list[str], **env_options
) -> Iterator[Position]:
    env = ShowdownEnv(
        "gen9customgame",
        team=ours,
        opponent_team=theirs,
        opponent=Scripted(opponent_moves),
        validate_teams=False,
        timeout=30,
        **env_options,
    )
    try:
        yield Position(env)
    finally:
        env.close()


def decide(policy: AbyssalPolicy, battle):
    order = policy.choose(battle)
    assert isinstance(order, SingleBattleOrder)
    return order, policy.last_rule


def move_id(order) -> str | None:
    return getattr(order.order, "id", None)


BLISSEY_SPLASH = set_text("Blissey", ["Splash"], "Natural Cure")
CHANSEY_SPLASH = set_text("Chansey", ["Splash"], "Natural Cure", item="Eviolite")
PASSIVE_TEAM = team(BLISSEY_SPLASH, CHANSEY_SPLASH, set_text("Snorlax", ["Splash"], "Thick Fat"))


# ----------------------------------------------------------------------------- hazards


@pytest.mark.timeout(120)
def test_sets_stealth_rock_once_then_spikes_up_to_three_layers():
    ours = team(
        set_text(
            "Ting-Lu", ["Stealth Rock", "Spikes", "Earthquake", "Whirlwind"], "Vessel of Ruin"
        ),
        set_text("Corviknight", ["Brave Bird", "Roost", "Defog", "U-turn"], "Pressure"),
    )
    policy = AbyssalPolicy()
    with position(ours, PASSIVE_TEAM, ["splash"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("stealthrock", "hazard")
        pos.play(order)
        assert SideCondition.STEALTH_ROCK in pos.battle.opponent_side_conditions
        layers = []
        for _ in range(4):
            order, rule = decide(policy, pos.battle)
            # Never a second Stealth Rock.
            assert move_id(order) != "stealthrock"
            if move_id(order) != "spikes":
                break
            pos.play(order)
            layers.append(pos.battle.opponent_side_conditions.get(SideCondition.SPIKES))
        assert layers == [1, 2, 3]
        # Three layers are the maximum: it attacks now.
        assert move_id(order) == "earthquake" and rule in ("attack", "finish")


@pytest.mark.timeout(120)
def test_no_hazards_against_a_last_pokemon():
    ours = set_text(
        "Ting-Lu", ["Stealth Rock", "Earthquake", "Spikes", "Ruination"], "Vessel of Ruin"
    )
    with position(ours, BLISSEY_SPLASH, ["splash"]) as pos:
        order, rule = decide(AbyssalPolicy(), pos.battle)
        assert move_id(order) not in ("stealthrock", "spikes") and rule != "hazard"


@pytest.mark.timeout(120)
def test_removes_hazards_unless_the_target_blocks_removal():
    tusk = set_text(
        "Great Tusk", ["Rapid Spin", "Headlong Rush", "Ice Spinner", "Protect"], "Protosynthesis"
    )
    corviknight = set_text("Corviknight", ["Defog", "Brave Bird", "Roost", "U-turn"], "Pressure")
    blissey = set_text(
        "Blissey", ["Soft-Boiled", "Seismic Toss", "Toxic", "Protect"], "Natural Cure"
    )
    ours = team(tusk, corviknight, blissey)
    setter = set_text("Skarmory", ["Stealth Rock", "Roost", "Whirlwind", "Body Press"], "Sturdy")
    ghost_setter = set_text(
        "Gholdengo", ["Stealth Rock", "Recover", "Make It Rain", "Nasty Plot"], "Good as Gold"
    )
    policy = AbyssalPolicy()
    with position(ours, team(setter, BLISSEY_SPLASH), ["stealthrock", "recover"]) as pos:
        pos.use("protect")
        assert SideCondition.STEALTH_ROCK in pos.battle.side_conditions
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("rapidspin", "hazard_removal")
    # Rapid Spin cannot touch a Ghost; Defog bounces off Good as Gold.
    with position(ours, team(ghost_setter, BLISSEY_SPLASH), ["stealthrock", "recover"]) as pos:
        pos.use("protect")
        assert SideCondition.STEALTH_ROCK in pos.battle.side_conditions
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "rapidspin" and rule != "hazard_removal"
        switch = next(m for m in pos.battle.available_switches if m.species == "corviknight")
        pos.play(SingleBattleOrder(switch))
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "defog" and rule != "hazard_removal"
    # Against a Pokémon without Good as Gold, Defog clears the rocks.
    opponents = team(setter, BLISSEY_SPLASH)
    with position(team(corviknight, blissey), opponents, ["stealthrock", "recover"]) as pos:
        pos.use("roost")
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("defog", "hazard_removal")


# ----------------------------------------------------------------------------- status


@pytest.mark.timeout(120)
def test_toxic_only_on_targets_that_can_be_poisoned():
    toxapex = set_text("Toxapex", ["Toxic", "Recover", "Surf", "Haze"], "Regenerator")
    policy = AbyssalPolicy()
    with position(toxapex, PASSIVE_TEAM, ["splash"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("toxic", "status")
        pos.play(order)
        assert pos.battle.opponent_active_pokemon.status is not None
        # Already poisoned: no second Toxic.
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "toxic"
    steel = team(set_text("Skarmory", ["Splash"], "Sturdy"), BLISSEY_SPLASH)
    with position(toxapex, steel, ["splash"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "toxic" and rule != "status"


@pytest.mark.timeout(120)
def test_thunder_wave_and_will_o_wisp_respect_immunities():
    paralyser = set_text(
        "Clefable", ["Thunder Wave", "Moonblast", "Soft-Boiled", "Calm Mind"], "Magic Guard"
    )
    ground = team(set_text("Hippowdon", ["Slack Off"], "Sand Stream"), BLISSEY_SPLASH)
    policy = AbyssalPolicy(setup=False)
    with position(
        paralyser, team(set_text("Snorlax", ["Splash"], "Thick Fat"), BLISSEY_SPLASH), ["splash"]
    ) as pos:
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("thunderwave", "status")
    with position(paralyser, ground, ["slackoff"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "thunderwave"
    burner = set_text("Skeledirge", ["Will-O-Wisp", "Hex", "Slack Off", "Shadow Ball"], "Unaware")
    physical = team(set_text("Garchomp", ["Protect"], "Rough Skin"), BLISSEY_SPLASH)
    fire = team(set_text("Heatran", ["Protect"], "Flame Body"), BLISSEY_SPLASH)
    with position(burner, physical, ["protect"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("willowisp", "status")
    with position(burner, fire, ["protect"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "willowisp"


# ----------------------------------------------------------------------------- switching

ABOMASNOW = set_text(
    "Abomasnow", ["Protect", "Wood Hammer", "Ice Shard", "Blizzard"], "Snow Warning"
)
VAPOREON = set_text("Vaporeon", ["Scald", "Wish", "Protect", "Haze"], "Water Absorb")
VOLCARONA = set_text(
    "Volcarona",
    ["Fire Blast", "Mean Look", "Bug Buzz", "Quiver Dance"],
    "Flame Body",
    evs="252 SpA / 4 SpD / 252 Spe",
)


@pytest.mark.timeout(120)
def test_switches_out_of_a_bad_matchup_but_not_when_trapped():
    policy = AbyssalPolicy()
    with position(team(ABOMASNOW, VAPOREON), team(VOLCARONA, BLISSEY_SPLASH), ["meanlook"]) as pos:
        order, rule = decide(policy, pos.battle)
        # Volcarona outspeeds and burns Abomasnow down; Vaporeon resists Fire.
        assert rule == "switch_out"
        assert isinstance(order.order, Pokemon) and order.order.species == "vaporeon"
        pos.use("protect")  # stays in; Volcarona uses Mean Look
        assert pos.battle.trapped
        order, rule = decide(policy, pos.battle)
        assert not isinstance(order.order, Pokemon) and rule != "switch_out"


@pytest.mark.timeout(120)
def test_stays_in_a_good_matchup():
    with position(team(VAPOREON, ABOMASNOW), team(VOLCARONA, BLISSEY_SPLASH), ["firestorm"]) as pos:
        order, _ = decide(AbyssalPolicy(), pos.battle)
        assert not isinstance(order.order, Pokemon)
        assert move_id(order) == "scald"


# ----------------------------------------------------------------------------- setup, recovery


@pytest.mark.timeout(120)
def test_sets_up_when_safe_and_stops_at_plus_two():
    dancer = set_text(
        "Volcarona", ["Quiver Dance", "Fiery Dance", "Bug Buzz", "Giga Drain"], "Flame Body"
    )
    policy = AbyssalPolicy()
    with position(dancer, PASSIVE_TEAM, ["splash"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("quiverdance", "setup")
        pos.play(order)
        order, rule = decide(policy, pos.battle)
        assert move_id(order) == "quiverdance"
        pos.play(order)
        assert pos.battle.active_pokemon.boosts["spa"] == 2
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "quiverdance" and rule in ("attack", "finish")


@pytest.mark.timeout(120)
def test_no_setup_when_threatened():
    dancer = set_text(
        "Volcarona", ["Quiver Dance", "Fiery Dance", "Bug Buzz", "Giga Drain"], "Flame Body"
    )
    rock = team(
        set_text(
            "Terrakion",
            ["Stone Edge", "Close Combat", "Swords Dance", "Quick Attack"],
            "Justified",
            evs="252 Atk / 4 SpD / 252 Spe",
        ),
        BLISSEY_SPLASH,
    )
    with position(team(dancer), rock, ["swordsdance"]) as pos:
        order, rule = decide(AbyssalPolicy(), pos.battle)
        assert move_id(order) != "quiverdance" and rule != "setup"


@pytest.mark.timeout(120)
def test_recovers_when_low_and_not_when_healthy():
    clefable = set_text(
        "Clefable", ["Soft-Boiled", "Moonblast", "Protect", "Calm Mind"], "Magic Guard"
    )
    fang = team(set_text("Blissey", ["Super Fang"], "Natural Cure"), CHANSEY_SPLASH)
    policy = AbyssalPolicy(setup=False)
    with position(clefable, fang, ["superfang"]) as pos:
        order, rule = decide(policy, pos.battle)
        assert move_id(order) != "softboiled"
        pos.use("protect")
        pos.use("moonblast")  # Super Fang: 50 %
        pos.use("moonblast")  # 25 %
        assert pos.battle.active_pokemon.current_hp_fraction < 0.5
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("softboiled", "recovery")


# ----------------------------------------------------------------------------- attacking


@pytest.mark.timeout(120)
def test_avoids_ability_immunities():
    chomp = set_text(
        "Garchomp",
        ["Earthquake", "Dragon Claw", "Stone Edge", "Fire Fang"],
        "Rough Skin",
        evs="252 Atk / 4 SpD / 252 Spe",
    )
    levitating = team(set_text("Rotom-Wash", ["Protect"], "Levitate"), BLISSEY_SPLASH)
    grounded = team(set_text("Heatran", ["Protect"], "Flame Body"), BLISSEY_SPLASH)
    with position(chomp, levitating, ["protect"]) as pos:
        order, _ = decide(AbyssalPolicy(), pos.battle)
        assert move_id(order) in ("dragonclaw", "stoneedge")
    with position(chomp, grounded, ["protect"]) as pos:
        order, _ = decide(AbyssalPolicy(), pos.battle)
        assert move_id(order) == "earthquake"


@pytest.mark.timeout(120)
def test_priority_finishes_a_faster_weakened_opponent():
    scizor = set_text(
        "Scizor",
        ["Close Combat", "Bullet Punch", "Protect", "Swords Dance"],
        "Technician",
        evs="252 HP / 252 Atk / 4 SpD",
    )
    weavile = team(
        set_text(
            "Weavile",
            ["Fillet Away", "Triple Axel"],
            "Pressure",
            item="Heavy-Duty Boots",
            evs="4 HP / 252 Atk / 252 Spe",
        ),
        BLISSEY_SPLASH,
    )
    policy = AbyssalPolicy(setup=False)
    with position(scizor, weavile, ["filletaway", "tripleaxel"]) as pos:
        order, _ = decide(policy, pos.battle)
        assert move_id(order) == "closecombat"  # full HP: the strongest hit
        pos.use("protect")
        opponent = pos.battle.opponent_active_pokemon
        assert opponent.current_hp_fraction <= 0.5 and opponent.boosts["spe"] == 2
        order, rule = decide(policy, pos.battle)
        assert (move_id(order), rule) == ("bulletpunch", "finish")


@pytest.mark.timeout(120)
def test_terastallizes_when_it_pays():
    blissey = set_text("Blissey", ["Tera Blast", "Soft-Boiled"], "Natural Cure", tera="Ground")
    heatran = team(set_text("Heatran", ["Protect"], "Flame Body"), BLISSEY_SPLASH)
    snorlax = team(set_text("Snorlax", ["Protect"], "Thick Fat"), BLISSEY_SPLASH)
    ours = team(blissey, VAPOREON)
    with position(ours, heatran, ["protect"]) as pos:
        assert pos.battle.can_tera
        order, _ = decide(AbyssalPolicy(), pos.battle)
        assert move_id(order) == "terablast" and order.terastallize
        order, _ = decide(AbyssalPolicy(tera=False), pos.battle)
        assert move_id(order) == "terablast" and not order.terastallize
        pos.play(SingleBattleOrder(pos.battle.available_moves[0], terastallize=True))
        assert pos.battle.active_pokemon.is_terastallized
    # Ground offers nothing against Snorlax: Tera is kept for later.
    with position(ours, snorlax, ["protect"]) as pos:
        order, _ = decide(AbyssalPolicy(), pos.battle)
        assert not order.terastallize


# ----------------------------------------------------------------------------- team preview


@pytest.mark.timeout(120)
@pytest.mark.parametrize("water_slot", [1, 3])
def test_team_preview_leads_with_the_best_matchup(water_slot):
    others = [
        set_text("Scizor", ["Bullet Punch", "U-turn", "Swords Dance", "Roost"], "Technician"),
        set_text("Ferrothorn", ["Power Whip", "Leech Seed", "Spikes", "Protect"], "Iron Barbs"),
    ]
    sets = list(others)
    sets.insert(water_slot - 1, VAPOREON)
    fire = team(
        VOLCARONA,
        set_text("Heatran", ["Magma Storm", "Earth Power"], "Flash Fire"),
        set_text("Cinderace", ["Pyro Ball", "U-turn"], "Libero"),
    )
    with position(team(*sets), fire, ["protect"], team_preview=True) as pos:
        assert pos.battle.teampreview
        assert len(pos.battle.teampreview_opponent_team) == 3
        order = AbyssalPolicy().team_preview(pos.battle)
        assert order.startswith(f"/team {water_slot}")
        assert sorted(order.split()[1]) == ["1", "2", "3"]


# ----------------------------------------------------------------------------- arena


@pytest.mark.timeout(600)
def test_arena_beats_max_power_with_legal_orders_only():
    # Any illegal order would raise out of the arena; every battle must finish.
    result = run_arena(
        ArenaConfig(agents=["abyssal", "max_power"], battles_per_pair=20, concurrency=4, seed=11)
    )
    record = result.record("abyssal")
    assert record["battles"] == 20 and record["ties"] == 0
    assert record["wins"] >= 15, result.table()
    assert result.agent_stats["abyssal"].decisions > 20 * 10


@pytest.mark.timeout(600)
def test_arena_team_preview_format():
    result = run_arena(
        ArenaConfig(
            agents=["abyssal", "random"], battle_format="gen9ou", battles_per_pair=4, seed=5
        )
    )
    assert result.record("abyssal")["wins"] >= 3, result.table()


class RecordingAbyssal(AbyssalPolicy):
    """Abyssal that records (battle, turn, rule) for every decision."""

    decisions: list[tuple[str, int, str]] = []

    def choose(self, battle):
        order = super().choose(battle)
        self.decisions.append((battle.battle_tag, battle.turn, self.last_rule))
        return order


@pytest.mark.timeout(600)
def test_no_switch_ping_pong_in_real_battles():
    from pokegym.agents import register_agent

    RecordingAbyssal.decisions = []
    register_agent("recording_abyssal", RecordingAbyssal)
    run_arena(
        ArenaConfig(agents=["recording_abyssal", "simple_heuristics"], battles_per_pair=30, seed=3)
    )
    switch_turns = {
        (tag, turn) for tag, turn, rule in RecordingAbyssal.decisions if rule == "switch_out"
    }
    assert switch_turns, "30 battles without a single voluntary switch"
    back_to_back = {(tag, turn) for tag, turn in switch_turns if (tag, turn - 1) in switch_turns}
    assert len(back_to_back) <= max(1, len(switch_turns) // 10)
    assert not any((tag, turn - 1) in back_to_back for tag, turn in back_to_back)
