"""Benchmarks of the ``pokegym`` package, run as ``pokegym bench NAME [--quick]``.

``env`` (env steps/s against poke-env's wrapper), ``arena`` (arena battles/s against
poke-env's ``battle_against``), ``calc`` (the damage calculator against real hits),
``worldmodel`` (the transition model against real turns) and ``llm`` (scoring against
generation). Each prints ratios against a baseline measured in the same run and ends
with one summary line. Scripts that measure the layers above ``pokegym`` (memory,
training, agents) are in ``benchmarks/``; docs/benchmarks.md lists both.
"""
