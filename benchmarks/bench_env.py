"""Environment throughput against poke-env, measured in the same run.

python benchmarks/bench_env.py [--quick]     (same as `pokegym bench env`)
"""

import sys

from pokegym.bench.env_bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
