"""Experience-memory query latency at 10^4, 10^5 and 10^6 entries.

Entries are synthetic embeddings: a mixture of Gaussian clusters (the shape real state
embeddings have: many decisions in similar positions) of width 64, the width of the
value trunk's last layer. Each size is built the way the memory builds itself (exact
search up to its threshold, an inverted file beyond), then 1,000 single-state queries
(k = 32, as the agent asks at the root: value plus action priors) are timed one by
one (wall-clock and CPU time: on a shared machine the wall-clock tail measures the
scheduler). The named baseline is exact search (``IndexFlatL2``) at 10^5 entries, measured in
the same run. Prints one line per size and a final summary line.

    pokegym bench memory_latency [--quick] [--memory DIR]

``--memory DIR`` also times a real memory folder (``pokegym memorize``), queried with
its own stored embeddings moved by a little noise (new states near past ones).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memory.experience import StateMemory

DIM = 64


def synthetic(n: int, rng: np.random.Generator, clusters: int = 2000) -> np.ndarray:
    centres = rng.normal(size=(clusters, DIM)).astype(np.float32) * 3.0
    which = rng.integers(clusters, size=n)
    return centres[which] + rng.normal(size=(n, DIM)).astype(np.float32)


def fill(n: int, rng: np.random.Generator, threshold: int) -> StateMemory:
    memory = StateMemory(DIM, "bench", ivf_threshold=threshold)
    labels = [f"move:m{i}" for i in range(40)]
    step = 100_000
    vectors = synthetic(n, rng)
    outcomes = (rng.random(n) < 0.5).astype(np.float32)
    actions = [labels[i % 40] for i in range(n)]
    memory.ivf_threshold = n + 1  # add everything, then build once
    for begin in range(0, n, step):
        memory.add(vectors[begin : begin + step], outcomes[begin : begin + step],
                   actions[begin : begin + step])  # fmt: skip
    if n > threshold:
        memory.build()
    memory.ivf_threshold = threshold
    return memory


def time_queries(memory: StateMemory, queries: np.ndarray) -> np.ndarray:
    """Wall-clock milliseconds per query (and CPU milliseconds in ``time_queries.cpu``)."""
    times = np.empty(len(queries))
    cpu = np.empty(len(queries))
    for i, q in enumerate(queries):
        start, cpu_start = time.perf_counter(), time.thread_time()
        hood = memory.query(q[None, :], k=32)[0]
        memory.action_priors(hood, ["move:m1", "move:m2", "move:m3"])
        times[i] = time.perf_counter() - start
        cpu[i] = time.thread_time() - cpu_start
    time_queries.cpu = cpu * 1e3  # type: ignore[attr-defined]
    return times * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10^4 and 10^5 only")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory", help="also time this memory folder (real embeddings)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    sizes = [10_000, 100_000] + ([] if args.quick else [1_000_000])
    results: dict[int, float] = {}
    cpu_results: dict[int, float] = {}
    baseline = None
    for n in sizes:
        start = time.perf_counter()
        memory = fill(n, rng, threshold=50_000)
        built = time.perf_counter() - start
        queries = synthetic(args.queries, rng)
        ms = time_queries(memory, queries)
        results[n] = float(np.percentile(ms, 95))
        cpu = time_queries.cpu  # type: ignore[attr-defined]
        cpu_results[n] = float(np.percentile(cpu, 95))
        print(
            f"{n:>9,d} entries ({memory.kind}, built in {built:.1f} s): query p50 "
            f"{np.percentile(ms, 50):.3f} ms, p95 {results[n]:.3f} ms wall; CPU p50 "
            f"{np.percentile(cpu, 50):.3f} ms, p95 {cpu_results[n]:.3f} ms"
        )
        if n == 100_000:
            exact = StateMemory(DIM, "bench", ivf_threshold=10**9)
            exact.add(memory.vectors(), memory.outcomes, ["move:m0"] * n)
            exact_ms = time_queries(exact, queries[:200])
            baseline = float(np.percentile(exact_ms, 95))
            print(
                f"  baseline exact search (IndexFlatL2) at 100,000: p95 {baseline:.3f} ms "
                f"({baseline / results[n]:.1f}x the inverted file)"
            )
        del memory
    if args.memory:
        real = StateMemory.load(args.memory)
        stored = real.vectors()
        picks = stored[rng.choice(len(stored), args.queries)]
        noise = rng.normal(size=picks.shape).astype(np.float32) * 0.1 * stored.std(axis=0)
        ms = time_queries(real, picks + noise)
        print(
            f"{len(real):>9,d} entries of {args.memory} ({real.kind}, width {real.dim}): "
            f"query p50 {np.percentile(ms, 50):.3f} ms, p95 {np.percentile(ms, 95):.3f} ms wall"
        )
    line = " ".join(f"p95_ms_1e{len(str(n)) - 1}={v:.3f}" for n, v in results.items())
    line += " " + " ".join(
        f"cpu_p95_ms_1e{len(str(n)) - 1}={v:.3f}" for n, v in cpu_results.items()
    )
    if baseline is not None:
        line += f" exact_p95_ms_1e5={baseline:.3f}"
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
