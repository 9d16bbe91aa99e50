"""The project's benchmarks, one module each, run as ``pokegym bench NAME [options]``
(``pokegym bench list`` names them; ``python -m bench.NAME`` works too).

This package sits above every other layer: a benchmark may measure anything from the
simulator to an agent, and nothing imports it. Each benchmark prints ratios against a
baseline measured in the same run (never a timing compared with a number written down
elsewhere) and ends with one summary line; docs/benchmarks.md describes them all.
"""
