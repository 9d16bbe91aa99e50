"""LLM turn cost on the offline 0.5B bundle: choice scoring with prefix reuse vs. generation.

python benchmarks/bench_llm.py [--quick]     (same as `pokegym bench llm`)
"""

import sys

from pokegym.bench.llm_bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
