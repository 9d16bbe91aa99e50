"""``pokegym memorize``: build an experience memory for a checkpoint that already exists.

    pokegym memorize --data data/ao --out runs/memory            # the shipped checkpoint
    pokegym memorize --checkpoint runs/distilled --data data/rb,data/da --out runs/distilled/mem

``pokegym distill --memory`` builds a memory of the rows it trained on. This command does
the same for any checkpoint and any collections, without training: every decision of the
collections is embedded by the checkpoint's network (the trunk's last hidden layer) and
stored with its action and the battle's outcome (:mod:`memory.experience`). The memory
records the checkpoint's hash, so the agent refuses it with another network:

    pokegym compare --agents "distilled:search=maximin,memory=runs/memory,memory_weight=0.1",abyssal
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from memory.experience import MemoryFileError
from policies.value_net import CheckpointError, default_checkpoint, load_checkpoint
from train.collection import CollectionError
from train.dataset import load_dataset
from train.distill import DistillConfig, build_memory


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pokegym memorize", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", required=True, help="`pokegym collect` folder(s), comma-separated"
    )
    parser.add_argument("--out", required=True, help="memory folder to write")
    parser.add_argument(
        "--checkpoint", default=None, help="checkpoint folder (default: the shipped one)"
    )
    parser.add_argument(
        "--format", default="gen9randombattle", help="whose shipped checkpoint (no --checkpoint)"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        checkpoint = args.checkpoint or str(default_checkpoint(args.format))
        load_checkpoint(checkpoint)  # a bad checkpoint fails before the collection is read
        data = load_dataset(DistillConfig(data=args.data, out=checkpoint))
        memory = build_memory(checkpoint, data)
        memory.save(args.out)
    except (CollectionError, CheckpointError, MemoryFileError, ValueError, OSError) as exc:
        print(f"pokegym memorize: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {len(memory):,} decisions of {len(set(data.battle.tolist())):,} "
          f"battles ({memory.kind} index) for {checkpoint} in "
          f"{time.perf_counter() - start:.0f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
