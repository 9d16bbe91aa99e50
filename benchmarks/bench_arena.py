"""Benchmark `pokegym bench arena`; see pokegym/bench/arena_bench.py for what it measures.

python benchmarks/bench_arena.py [--quick]
"""

import sys

from pokegym.bench.arena_bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
