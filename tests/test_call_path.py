"""One ``distilled`` decision, traced call by call: it runs in the ``mcts`` agent's module
(``distilled`` is a preset of it), the search, ``policies/core`` and the world model, and
never passes through another agent's module (the anchor, ``abyssal``, is called as the
anchor registry built it), nor does the world model call back up into the agent layer.
Offline: a recorded random battle, no Node."""

from __future__ import annotations

import sys
from collections import Counter

from test_engine_agent import _recorded_views

from pokegym.agents import make_agent

# The modules of the agent layer that one distilled (MCTS) decision may run.
ALLOWED = ("policies.mcts_agent", "policies.search.mcts", "policies.core.", "policies.value_net",
           "policies.abyssal.")  # fmt: skip
AGENTS = ("policies.distilled", "policies.minimax", "policies.pokechamp", "policies.engine",
          "policies.one_step", "policies.baselines", "policies.ppo", "policies.pokellmon",
          "policies.porimon")  # fmt: skip


def _decision_battle():
    for battle, requests in _recorded_views():
        asked = requests and not requests[-1].get("wait")
        if asked and battle.turn >= 3 and battle.available_moves and battle.opponent_active_pokemon:
            return battle
    raise AssertionError("no request with moves after turn 3 in the recorded battle")


def test_a_distilled_decision_runs_no_other_agents_module():
    agent = make_agent("distilled:iterations=50")
    battle = _decision_battle()
    calls: Counter[tuple[str, str]] = Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_back is not None:
            calls[
                (frame.f_back.f_globals.get("__name__", "?"), frame.f_globals.get("__name__", "?"))
            ] += 1

    sys.setprofile(profile)
    try:
        order = agent.choose(battle)
    finally:
        sys.setprofile(None)
    assert order is not None
    ran = {callee for _, callee in calls if callee.startswith("policies")}
    assert "policies.search.mcts" in ran and "policies.core.evaluators" in ran  # it searched
    assert not {m for m in ran if m.startswith(AGENTS)}, sorted(ran)
    assert all(m.startswith(ALLOWED) for m in ran), sorted(
        m for m in ran if not m.startswith(ALLOWED)
    )
    upward = {(a, b) for a, b in calls if a.startswith("pokegym") and b.startswith("policies")}
    assert not upward, sorted(upward)
