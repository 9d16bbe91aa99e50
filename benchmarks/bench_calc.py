"""Benchmark `pokegym bench calc`; see pokegym/bench/calc_bench.py for what it measures.

python benchmarks/bench_calc.py [--quick]
"""

import sys

from pokegym.bench.calc_bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
