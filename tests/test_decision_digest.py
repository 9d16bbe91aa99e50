"""The search agents' decisions on a recorded battle are the ones committed
(bench/decision_digest.py): a change that moves any of them changes the digest.

Offline: the battle is replayed from tests/data/protocol, no Node is started.
"""

from __future__ import annotations

import pytest

DIGEST = "d188975c74812d491cf5dd20cdb22e20e25f2e8d297e81920d53dd2558fe3a0f"
"""The digest of the committed agents (``pokegym bench decision_digest``)."""


@pytest.fixture(scope="module")
def digest_script(benchmark_script):
    return benchmark_script("decision_digest")


@pytest.mark.timeout(180)
def test_the_agents_decide_as_committed(digest_script):
    value, orders = digest_script.digest()
    counts = {spec: len(chosen) for spec, chosen in orders.items()}
    assert set(counts) == set(digest_script.AGENTS)
    assert len(set(counts.values())) == 1 and min(counts.values()) >= 25, counts
    # The agents do not all agree: the digest sees each one's own choices.
    assert len({tuple(chosen) for chosen in orders.values()}) >= 4
    assert value == DIGEST, (
        "the agents' decisions on the recorded battle changed: compare "
        "`pokegym bench decision_digest --orders` before and after the change"
    )


def test_the_digest_is_repeatable_and_depends_on_the_decisions(digest_script):
    recording = digest_script.load()
    value, orders = digest_script.digest(("one_step",), recording)
    again, _ = digest_script.digest(("one_step",), recording)
    assert value == again
    changed = digest_script.digest(("one_step",), recording, stride=2)[0]
    assert changed != value and len(orders["one_step"]) >= 25
