"""One sha256 over the orders the search agents choose on a recorded battle.

Player 1's view of a recorded random battle (``tests/data/protocol/
gen9randombattle-seed11.json.gz``, replayed offline: no Node, no server) is rebuilt
request by request; at every request that asks for a choice, each agent of
:data:`AGENTS` (built with a fixed seed, and a fixed iteration count or a time limit its
depth-bounded search never reaches, so no clock enters a decision) is asked for its
order. The digest is the sha256 of every agent's orders, one line each, in that order.

The same code and data give the same digest: a change to an agent or to what it reads
(the world model, the belief, the network) that changes any decision changes it.

    pokegym bench decision_digest            # the digest
    pokegym bench decision_digest --orders   # and each agent's orders
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The Python world model (the compiled build is checked against it by tests/test_accel.py).
os.environ.setdefault("POKEGYM_ACCEL", "0")

from poke_env.battle import AbstractBattle

from pokegym.agents import make_agent
from pokegym.backends.base import PlayerView

RECORDING = (Path(__file__).resolve().parent.parent / "tests" / "data" / "protocol"
             / "gen9randombattle-seed11.json.gz")  # fmt: skip

AGENTS = (
    "distilled:iterations=600",
    "distilled:search=maximin,time_limit=600",
    "mcts:iterations=300",
    "mcts:iterations=300,chance=sampled,prior=heuristic,opponent_model=default",
    "minimax:time_limit=600",
    "one_step",
    "abyssal",
)
"""The agents asked, as ``make_agent`` specs (each built with ``seed=SEED``)."""

SEED = 7
STRIDE = 1
"""Every ``STRIDE``-th request that asks for a choice is a decision of the digest."""


def load(path: Path = RECORDING) -> dict[str, Any]:
    return json.loads(gzip.decompress(path.read_bytes()))


def decisions(recording: dict[str, Any], stride: int = STRIDE) -> Iterator[AbstractBattle]:
    """Player 1's battle at each ``stride``-th request that asks for a choice (one battle
    object, brought up to date between yields, as a live agent sees it)."""
    view = PlayerView(recording["tag"], recording["names"][0], recording["names"][1], "p1",
                      recording["gen"])  # fmt: skip
    asked = 0
    for text, requests in recording["blocks"]:
        view.feed(text)
        view.feed_requests(requests)
        battle = view.battle
        if not requests or requests[-1].get("wait") or battle.finished:
            continue
        if battle.opponent_active_pokemon is None:
            continue
        if asked % stride == 0:
            yield battle
        asked += 1


def agent_orders(spec: str, recording: dict[str, Any], seed: int = SEED,
                 stride: int = STRIDE) -> list[str]:  # fmt: skip
    """The orders agent ``spec`` gives at each decision of the recording."""
    agent = make_agent(spec, seed=seed)
    return [f"{battle.turn} {agent.choose(battle).message}"
            for battle in decisions(recording, stride)]  # fmt: skip


def digest(agents: tuple[str, ...] = AGENTS, recording: dict[str, Any] | None = None,
           seed: int = SEED, stride: int = STRIDE) -> tuple[str, dict[str, list[str]]]:  # fmt: skip
    """The sha256 over every agent's orders, and those orders by agent."""
    recording = recording if recording is not None else load()
    orders = {spec: agent_orders(spec, recording, seed, stride) for spec in agents}
    lines = [f"{spec}\t{order}" for spec in agents for order in orders[spec]]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest(), orders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", action="store_true", help="print each agent's orders")
    args = parser.parse_args(argv)
    value, orders = digest()
    if args.orders:
        for spec, chosen in orders.items():
            print(f"{spec}: {len(chosen)} decisions")
            for line in chosen:
                print(f"  {line}")
    print(value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
