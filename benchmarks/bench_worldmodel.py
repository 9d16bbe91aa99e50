"""Benchmark `pokegym bench worldmodel`; see pokegym/bench/worldmodel_bench.py for what it measures.

python benchmarks/bench_worldmodel.py [--quick]
"""

import sys

from pokegym.bench.worldmodel_bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
