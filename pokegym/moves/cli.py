"""``pokegym moves``: design, check, judge, evaluate and approve new moves.

    pokegym moves generate --pokemon Garchomp --n 4 [--approve]
    pokegym moves check design.json --pokemon Garchomp
    pokegym moves add design.json --pokemon Garchomp
    pokegym moves list | remove NAME
    pokegym moves eval --n 30 --batch-size 1|4 [--out report.json]

``--model`` takes a bundle (``qwen-0.5b``, ``qwen-1.5b``), ``transformers:<folder>`` or
``openai:<model>`` (with ``--base-url``). Approved moves go to the library
(``--library``, default ``$POKEGYM_HOME/moves/library.json``), from which the formats
``gen9designedmoves`` and ``gen9designedmovesrandombattle`` make them playable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pokegym.errors import PokegymError


def add_parser(sub: Any) -> None:
    moves = sub.add_parser("moves", help="design new moves with a language model and play them")
    verbs = moves.add_subparsers(dest="moves_command", required=True)

    def model_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--model", default="qwen-0.5b", help="bundle or backend (default qwen-0.5b)")
        p.add_argument("--base-url", default=None, help="for openai:<model>: the server's URL")
        p.add_argument("--threads", type=int, default=None, help="torch CPU threads (local models)")
        p.add_argument("--temperature", type=float, default=0.7)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--batch-size", type=int, default=1, help="designs per model call")
        p.add_argument("--no-judge", action="store_true", help="skip the LLM judge")

    gen = verbs.add_parser("generate", help="design moves for a Pokémon")
    gen.add_argument("--pokemon", required=True, help="species name, e.g. Garchomp")
    gen.add_argument("--n", type=int, default=4, help="designs to ask for")
    model_options(gen)
    gen.add_argument(
        "--approve",
        action="store_true",
        help="add balanced, judge-approved designs to the library",
    )
    gen.add_argument("--library", default=None, help="library file (default: POKEGYM_MOVES_FILE)")
    gen.add_argument("--json", dest="json_out", default=None, help="write the designs as JSON here")

    check = verbs.add_parser("check", help="run the balance evaluator on a design (JSON file or -)")
    check.add_argument("design", help="a JSON file with one design, or - for standard input")
    check.add_argument("--pokemon", default=None)

    add = verbs.add_parser("add", help="add a design (JSON file or -) to the library")
    add.add_argument("design")
    add.add_argument("--pokemon", required=True, action="append", help="may learn it (repeatable)")
    add.add_argument("--library", default=None)
    add.add_argument("--force", action="store_true", help="add it even when it is not balanced")
    add.add_argument("--replace", action="store_true", help="overwrite a move of the same name")

    lst = verbs.add_parser("list", help="the moves in the library")
    lst.add_argument("--library", default=None)

    rm = verbs.add_parser("remove", help="remove a move from the library")
    rm.add_argument("name")
    rm.add_argument("--library", default=None)

    ev = verbs.add_parser("eval", help="batch evaluation: validity, balance, judge scores, tokens")
    ev.add_argument("--n", type=int, default=30)
    ev.add_argument("--pokemon", default=None, help="comma-separated species (default: 15 varied)")
    ev.add_argument("--out", default=None, help="write the report (metrics and designs) as JSON")
    model_options(ev)


# local imports: each subcommand imports its modules when it runs, so that the command starts fast
def _model(args: argparse.Namespace) -> Any:
    from pokegym.llm import make_model

    options: dict[str, Any] = {}
    if args.threads and not args.model.startswith(("openai", "scripted")):
        options["threads"] = args.threads
    if args.base_url:
        options["base_url"] = args.base_url
    return make_model(args.model, **options)


def _read_design(source: str) -> Any:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PokegymError(f"{source} is not JSON ({exc}).") from exc


def run(args: argparse.Namespace) -> int:
    from pokegym.moves.library import MoveLibrary

    verb = args.moves_command
    if verb == "generate":
        return _generate(args)
    if verb == "eval":
        return _eval(args)
    if verb == "check":
        from pokegym.moves.balance import evaluate

        result = evaluate(_read_design(args.design), pokemon=args.pokemon)
        print(json.dumps(result.to_dict(), indent=1, ensure_ascii=False))
        return 0 if result.balanced else 1
    library = MoveLibrary(args.library)
    if verb == "list":
        moves = library.moves()
        if not moves:
            print(f"The library {library.path} is empty.")
        from pokegym.moves.generate import describe

        for move in moves:
            print(f"{describe(move.design)}  for {', '.join(move.pokemon)}")
        return 0
    if verb == "remove":
        removed = library.remove(args.name)
        print(f"Removed {removed.design.name} from {library.path}.")
        return 0
    if verb == "add":
        from pokegym.moves.balance import evaluate
        from pokegym.moves.schema import MoveDesign

        raw = _read_design(args.design)
        evaluation = evaluate(raw, pokemon=args.pokemon[0])
        if not evaluation.balanced and not args.force:
            print(json.dumps(evaluation.to_dict(), indent=1, ensure_ascii=False))
            print(
                "The design is not balanced (see above); fix it or pass --force.", file=sys.stderr
            )
            return 1
        design = MoveDesign.from_dict(raw)
        item = library.add(
            design, args.pokemon, evaluation=evaluation.to_dict(), replace=args.replace
        )
        print(f"Added {design.name} (#{item.num}) for {', '.join(item.pokemon)} to {library.path}.")
        return 0
    raise PokegymError(f"unknown moves command {verb!r}")


def _generate(args: argparse.Namespace) -> int:
    from pokegym.moves.generate import candidates_json, describe, generate_moves
    from pokegym.moves.library import MoveLibrary, MoveLibraryError

    model = _model(args)
    candidates = generate_moves(
        model,
        args.pokemon,
        args.n,
        batch_size=args.batch_size,
        temperature=args.temperature,
        seed=args.seed,
        judge=None if args.no_judge else model,
    )
    library = MoveLibrary(args.library) if args.approve else None
    for index, c in enumerate(candidates, 1):
        if c.design is None:
            print(f"{index}. (no design: {c.error})")
            continue
        print(f"{index}. {describe(c.design)}")
        if c.design.description:
            print(f"   {c.design.description}")
        if c.copy_of:
            print(f"   COPY of {c.copy_of}")
        e = c.evaluation
        status = "balanced" if c.balanced else ("valid" if c.valid else "INVALID")
        print(f"   balance score {e.score}/100, {status}")
        for v in e.violations:
            print(f"   violation: {v}")
        for w in e.warnings:
            print(f"   warning: {w}")
        j = c.judgement
        if j is not None:
            if j.verdict is None:
                print(f"   judge: no answer ({j.error})")
            else:
                print(
                    f"   judge: creativity {j.creativity}/10, originality {j.originality}/10, "
                    f"verdict {j.verdict}"
                )
        if library is not None and c.approved:
            try:
                item = library.add(
                    c.design,
                    args.pokemon,
                    evaluation=e.to_dict(),
                    judge=j.to_dict() if j is not None else None,
                )
                print(f"   added to {library.path} as #{item.num}")
            except MoveLibraryError as exc:
                print(f"   not added: {exc}")
    if args.json_out:
        Path(args.json_out).write_text(candidates_json(candidates), encoding="utf-8")
        print(f"Designs written to {args.json_out}")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from pokegym.moves.report import DEFAULT_POKEMON, run_batch_eval

    model = _model(args)
    pokemon = [p.strip() for p in args.pokemon.split(",")] if args.pokemon else DEFAULT_POKEMON

    def progress(done: int, total: int) -> None:
        print(f"\r{done}/{total} designs", end="", file=sys.stderr, flush=True)

    report = run_batch_eval(
        model,
        args.n,
        batch_size=args.batch_size,
        pokemon=pokemon,
        judge=not args.no_judge,
        temperature=args.temperature,
        seed=args.seed,
        progress=progress,
    )
    print(file=sys.stderr)
    print(report.summary())
    if args.out:
        Path(args.out).write_text(report.to_json(), encoding="utf-8")
        print(f"Report written to {args.out}")
    return 0
