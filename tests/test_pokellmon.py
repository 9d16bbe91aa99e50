"""pokellmon: the self-consistency vote, early stop, fallbacks, the prompt, real battles."""

from __future__ import annotations

import json

import pytest
from test_pokechamp import battle_position

from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.llm.scripted import ScriptedModel
from pokegym.text import legal_actions
from policies.llm_common import TurnClock, fallback_order
from policies.pokellmon import PokeLLMonPolicy, vote


def answer(label: str) -> str:
    return json.dumps({"choice": label})


def test_vote_rule():
    assert vote([]) is None
    assert vote(["a", "b", "b"]) == "b"
    assert vote(["a", "b"]) == "a"  # a tie goes to the first answer (the greedy sample)
    assert vote(["c", "a", "a", "c", "b"]) == "c"


@pytest.mark.slow
def test_self_consistency_votes_and_stops_early():
    session, battle = battle_position(seed=21)
    try:
        labels = [a.label for a in legal_actions(battle)]
        a, b = labels[0], labels[-1]
        model = ScriptedModel(completions=[answer(a), answer(b), answer(b)])
        policy = PokeLLMonPolicy(model=model, samples=3, time_limit=60)
        order = policy.choose(battle)
        assert policy.last_votes == [a, b, b]
        assert policy.last_decisions[0].method == "generate"
        expected = b.removeprefix("switch ").removeprefix("move ")
        assert expected.lower().replace(" ", "") in str(order).lower().replace(" ", "")
        # Two agreeing answers are a majority of 3: the third sample is not drawn.
        model = ScriptedModel(completions=[answer(a), answer(a), answer(b)])
        policy = PokeLLMonPolicy(model=model, samples=3, time_limit=60)
        policy.choose(battle)
        assert policy.last_votes == [a, a] and policy.pop_usage()["calls"] == 2
        # The prompt: knowledge, history and the legal labels, never player names.
        prompt = model.prompts[0][-1]["content"]
        assert "Type effectiveness" in prompt and "Last turns" in prompt and a in prompt
        assert "p2" not in prompt.split("Your legal actions")[0].split()
    finally:
        session.close()


@pytest.mark.slow
def test_malformed_answers_fall_back_to_the_strongest_move():
    session, battle = battle_position(seed=23)
    try:
        model = ScriptedModel(completions=["no idea", "still no idea"] * 3)
        policy = PokeLLMonPolicy(model=model, samples=3, max_repairs=1, time_limit=60)
        order = policy.choose(battle)
        assert str(order) == str(fallback_order(battle))
        assert policy.last_votes == [] and policy.pop_usage()["fallbacks"] == 1
        strongest = max(battle.available_moves, key=lambda m: m.base_power)
        assert order.order is strongest
    finally:
        session.close()


def test_turn_clock_budget():
    clock = TurnClock(bank=150, increment=15, margin=3)
    assert clock.budget("b") == pytest.approx(15 + 0.1 * 135 - 3)
    clock.spent("b", 60)  # the bank falls to 105
    assert clock.budget("b") == pytest.approx(15 + 0.1 * 90 - 3)
    clock.spent("b", 200)  # overdrawn: only the minimum is left
    assert clock.budget("b") == clock.minimum


class LegalEcho(ScriptedModel):
    """Answers the first legal label of the JSON schema at temperature 0 and the second
    when sampling; summaries in the expected format; uniform scores."""

    def __init__(self):
        super().__init__(scores=lambda prefix, options: [0.0] * len(options))

    def complete(self, messages, *, max_tokens=256, temperature=0.0, seed=None, json_schema=None):
        if json_schema is not None:
            options = json_schema["properties"]["choice"]["enum"]
            self._completions = [answer(options[int(temperature > 0)])]
        else:
            self._completions = ["Summary: a close battle.\n- Keep the faster attacker healthy."]
        return super().complete(
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed,
            json_schema=json_schema,
        )  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_pokellmon_plays_real_battles_with_the_scripted_backend():
    register_agent("pokellmon_scripted", lambda **o: PokeLLMonPolicy(model=LegalEcho(), **o))
    result = run_arena(
        ArenaConfig(
            agents=["pokellmon_scripted:samples=3", "random"],
            battles_per_pair=2,
            seed=5,
            concurrency=2,
        )
    )
    record = result.record("pokellmon_scripted")
    assert record["battles"] == 2 and record["timeouts"] == 0
    stats = result.agent_stats["pokellmon_scripted"]
    # Greedy and sampled answers differ: every model decision draws all 3 samples.
    assert 2.0 < stats.usage["calls"] / stats.decisions <= 3.0
