"""One prompt, scored with one torch thread and with all of them, beside CPU hogs.

Loads a local model (the ``qwen-0.5b`` bundle by default, in the dtype chosen for this
CPU), then scores the same ~1,000-token prompt ``--tries`` times with each thread count,
interleaved so that both see the same load, with the prefix cache cleared before each
call. With ``--hogs`` busy processes beside it, the machine is oversubscribed the way a
loaded arena makes it; it prints the median seconds per count and their ratio, and what
the backend's own choice (threads following the free cores) would use right now.

    pokegym bench llm_threads --hogs 4

The hogs are stopped when the benchmark ends, also on Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench.llm_clock import cpu_hogs
from pokegym.llm import make_model
from pokegym.llm.dtypes import free_cores


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument("--hogs", type=int, default=0)
    parser.add_argument("--tries", type=int, default=4)
    args = parser.parse_args(argv)
    if args.hogs < 0 or args.tries < 1:
        parser.error("--hogs is 0 or more and --tries 1 or more")

    model = make_model(args.model)
    counts = sorted({1, model.max_threads})  # type: ignore[attr-defined]
    prompt = " ".join(
        f"Turn {k}: Great Tusk used Headlong Rush; Gholdengo lost 38% of its HP." for k in range(40)
    )
    seconds: dict[int, list[float]] = {n: [] for n in counts}
    with cpu_hogs(args.hogs):
        time.sleep(1.0)  # let the hogs start
        chosen = free_cores()
        for _ in range(args.tries):
            for n in counts:
                model.threads = n  # type: ignore[attr-defined]  # fixed: no choice per call
                torch.set_num_threads(n)
                model.clear_cache()
                start = time.perf_counter()
                model.score(prompt, [" yes", " no"])
                seconds[n].append(time.perf_counter() - start)
        load = os.getloadavg()[0]  # after the runs: the 1-minute average lags
    torch.set_num_threads(model.max_threads)  # type: ignore[attr-defined]
    tokens = model.count_tokens(prompt)
    print(f"{args.model} ({model.dtype}), prompt {tokens} tokens, {args.hogs} hogs, "  # type: ignore[attr-defined]
          f"1-minute load {load:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    for n in counts:
        print(f"{n} thread(s): median {statistics.median(seconds[n]):.2f} s over {args.tries} "
              f"({', '.join(f'{x:.2f}' for x in seconds[n])})")  # fmt: skip
    if len(counts) == 2:
        ratio = statistics.median(seconds[counts[1]]) / statistics.median(seconds[counts[0]])
        print(f"{counts[1]} threads / 1 thread: {ratio:.2f}")
    print(f"threads=None would use {min(chosen, model.max_threads)} now (free cores)")  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
