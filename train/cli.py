"""``pokegym train <method> ...``: the training commands, by method name."""

from __future__ import annotations

import importlib
import sys

# method -> module with ``main(argv) -> int``
METHODS = {"ppo": "train.ppo", "opponent": "train.opponent_model"}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        usage = "usage: pokegym train {" + ",".join(METHODS) + "} [options]\n\n"
        print(
            usage + "  ppo        MaskablePPO on the env: curriculum, self-play, arena evaluation\n"
            "  opponent   the search's opponent model: collect decisions, fit the model"
        )
        return 0 if args else 2
    method, rest = args[0], args[1:]
    if method not in METHODS:
        print(f"pokegym train: unknown method {method!r}; available: {', '.join(METHODS)}",
              file=sys.stderr)  # fmt: skip
        return 2
    return int(importlib.import_module(METHODS[method]).main(rest))
