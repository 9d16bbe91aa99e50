"""porimon: the turn window, retrieval of the expected items on a constructed set, the
experience in the prompt, and an item stored after a real battle."""

from __future__ import annotations

import json

import pytest
from test_pokechamp import battle_position
from test_pokellmon import LegalEcho

from memory.porimon import ExperienceItem, ExperienceMemory, PokemonRecord, records
from pokegym.agents import register_agent
from pokegym.arena import ArenaConfig, run_arena
from pokegym.world.data import load_dex
from policies.porimon import PorimonPolicy, parse_summary


def item_for(ours, theirs, summary, outcome=1.0):
    return ExperienceItem(summary=summary, lessons=[f"lesson of {summary}"], our_team=ours,
                          their_team=theirs, outcome=outcome)  # fmt: skip


def test_parse_summary():
    summary, lessons = parse_summary(
        "Summary: Garchomp swept late.\nLessons:\n- Keep Stealth Rock up.\n2. Scout first.\nok"
    )
    assert summary == "Garchomp swept late. ok"
    assert lessons == ["Keep Stealth Rock up.", "Scout first."]
    assert parse_summary("") == ("", [])


@pytest.mark.slow
def test_retrieval_in_the_prompt_on_a_constructed_memory(tmp_path):
    session, battle = battle_position(seed=31, turn=6)
    try:
        dex = load_dex(9)
        ours = records(battle.team.values(), dex)
        theirs = records(battle.opponent_team.values(), dex)
        path = tmp_path / "memory.json"
        memory = ExperienceMemory(path)
        # Nine battles between unrelated teams.
        pikachu = [PokemonRecord("pikachu", (35, 55, 40, 50, 50, 90), 1.0, ("Electric",), "static")]
        for i in range(9):
            memory.add(item_for(pikachu, pikachu, f"unrelated {i}", outcome=0.0))
        policy = PorimonPolicy(model=LegalEcho(), memory_path=path, time_limit=60)
        assert policy.retrieve(battle) == []  # fewer than 10 items: nothing
        # Agents of one process share the memory object of a file: add through it.
        policy.memory.add(item_for(ours, theirs, "this very matchup"))
        assert len(ExperienceMemory(path)) == 10
        retrieved = policy.retrieve(battle)
        assert len(retrieved) == 3
        assert retrieved[0][0].summary == "this very matchup"
        assert retrieved[0][1] > retrieved[1][1]
        policy.choose(battle)
        prompt = policy.last_prompt[-1]["content"]
        assert "Experience from similar past battles" in prompt
        assert "this very matchup" in prompt and "lesson of this very matchup" in prompt
        assert "Turn history (last 5 turns" in prompt
        history = prompt.split("separated by '||'):\n")[1].split("\n")[0]
        assert history.count(" || ") >= 1 and history.startswith("Turn ")
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_porimon_stores_an_item_after_each_real_battle(tmp_path):
    path = tmp_path / "memory.json"
    register_agent("porimon_scripted", lambda **o: PorimonPolicy(model=LegalEcho(), **o))
    result = run_arena(
        ArenaConfig(
            agents=[f"porimon_scripted:memory_path={path},retries=1", "max_power"],
            battles_per_pair=2,
            seed=6,
            concurrency=2,
        )
    )
    record = result.record("porimon_scripted")
    assert record["battles"] == 2 and record["timeouts"] == 0
    data = json.loads(path.read_text())
    finished = [b for b in result.battles if not b.truncated]
    assert len(data["items"]) == len(finished) >= 1
    for raw in data["items"]:
        item = ExperienceItem.from_json(raw)
        assert item.summary == "a close battle."
        assert item.lessons == ["Keep the faster attacker healthy."]
        assert len(item.our_team) == 6 and item.their_team
        species = {p.species for p in item.our_team + item.their_team}
        assert set(item.importance) == species
        assert all(0.0 <= v <= 1.0 for v in item.importance.values())
    outcomes = sorted(ExperienceItem.from_json(raw).outcome for raw in data["items"])
    winners = sorted(1.0 if b.winner == "porimon_scripted" else 0.0 for b in finished)
    assert outcomes == winners
    # The file persists: a new agent reads the same items.
    assert len(ExperienceMemory(path)) == len(finished)
