"""``pokegym compare``: a tournament between agents, on this machine or on Ray, kept in a
resumable journal; and ``--summarize``, the records and ratings of finished journals.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from pokegym.errors import PokegymError
from pokegym.interrupts import interrupt_signal, sigterm_as_interrupt


# local imports: the arena, the journal and Ray load when a comparison runs, not at start-up
def parse_pairs(text: str) -> list[tuple[str, str]]:
    """``a:b,a:c`` -> ``[("a", "b"), ("a", "c")]`` (agent names, checked by the arena).

    Raises:
        ArenaConfigError: an entry is not two names joined by ``:``.
    """
    from pokegym.arena import ArenaConfigError

    pairs: list[tuple[str, str]] = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        names = [name.strip() for name in token.split(":")]
        if len(names) != 2 or not all(names):
            raise ArenaConfigError(
                f"--pairs: {token!r} is not a pair; write each pair as two agent names joined "
                "by a colon, pairs separated by commas (a:b,a:c)."
            )
        pairs.append((names[0], names[1]))
    if not pairs:
        raise ArenaConfigError(f"--pairs {text!r} names no pair; write them as a:b,a:c.")
    return pairs


def command(args: argparse.Namespace) -> int:
    """Run ``pokegym compare`` (the exit status)."""
    # SIGTERM stops a tournament like Ctrl-C: finished battles are in the journal, the
    # simulators are stopped, and the exit status says which signal it was (128 + n).
    with sigterm_as_interrupt():
        return _run_compare(args)


def _run_compare(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from pokegym.arena import Arena
    from pokegym.journal import JOURNAL_NAME, BattleJournal

    if args.summarize:
        return _summarize(args)
    if args.ray is None and (args.workers is not None or args.retries is not None
                             or args.ray_runtime_env is not None):  # fmt: skip
        raise PokegymError("--workers, --retries and --ray-runtime-env need --ray.")
    config = _compare_config(args)
    agents, concurrency = config.agents, config.concurrency
    ray_options = _ray_options(args) if args.ray is not None else None
    if ray_options is not None:  # before anything starts or is written
        from pokegym.scale.cluster import check_reachable, import_ray

        import_ray()
        if ray_options.address != "auto":
            check_reachable(ray_options.address)
    # Builds every agent once and starts the simulators: a bad agent spec, format or team
    # fails here, before the header and the progress bar.
    arena = Arena(config)
    try:
        # Battles of an earlier run of the same tournament are kept; another
        # tournament's battles in this folder are refused.
        journal = BattleJournal(Path(args.out) / JOURNAL_NAME, arena.identity())
    except BaseException:
        arena.close()
        raise
    total = len(arena.tasks())
    where = (
        f"on Ray ({args.ray}), one battle at a time per worker"
        if ray_options is not None
        else f"concurrency {concurrency}"
    )
    print(
        f"{args.format}: {len(agents)} agents, {len(arena.pairs)} pairs x {args.battles} "
        f"battles (sides alternate), {where}, seed {args.seed}"
        + (f"; resuming: {len(journal)} of {total} battles are in {journal.path}"
           if len(journal) else ""),
        flush=True,
    )  # fmt: skip
    bar = tqdm(total=total, initial=len(journal), unit="battle", disable=args.quiet,
               file=sys.stderr)  # fmt: skip
    interrupted: KeyboardInterrupt | None = None
    ray_run = None
    with journal:
        try:
            if ray_options is not None:
                from pokegym.scale.arena import run_on_ray

                result, ray_run = run_on_ray(
                    arena, ray_options, journal, progress=lambda record: bar.update(1)
                )
            else:
                result = arena.run(progress=lambda record: bar.update(1), journal=journal)
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the simulators are stopped
            interrupted = exc
        finally:
            bar.close()
        saved = len(journal)
    if interrupted is not None:
        signum = interrupt_signal(interrupted)
        print(
            f"pokegym: interrupted ({signal.Signals(signum).name}); {saved} of {total} battles "
            f"are saved in {journal.path}: run the same command again to play the other "
            f"{total - saved}.",
            file=sys.stderr,
        )
        return 128 + signum
    return _report_compare(args, result, ray_run, journal.path)


def _compare_config(args: argparse.Namespace) -> Any:
    """The tournament ``pokegym compare``'s arguments describe (an ``ArenaConfig``)."""
    from pokegym.agents import split_agent_specs
    from pokegym.arena import ArenaConfig

    return ArenaConfig(
        agents=split_agent_specs(args.agents),
        battle_format=args.format,
        battles_per_pair=args.battles,
        pairs=parse_pairs(args.pairs) if args.pairs is not None else None,  # type: ignore[arg-type]
        mirror=args.mirror,
        seed=args.seed,
        concurrency=8 if args.concurrency is None else args.concurrency,
        simulators=args.simulators,
        clock_bank=None if args.no_clock else args.clock_bank,
        clock_increment=args.clock_increment,
        max_turns=args.max_turns,
        replays=str(Path(args.out).resolve() / "replays") if args.replays else None,
        teams=args.teams,
    )


def _report_compare(args: argparse.Namespace, result: Any, ray_run: Any, journal: Path) -> int:
    """Print the finished tournament's table, write its files; 1 when battles failed."""
    print(result.table())
    if ray_run is not None:
        print(ray_run.summary())
    written = [*result.write(args.out), journal]
    print(f"Results: {', '.join(str(p) for p in written)}")
    if result.failed:
        listed = "; ".join(
            f"{' vs '.join(f['pair'])} #{f['index']} ({f['attempts']} tries): {f['error']}"
            for f in result.failed[:5]
        )
        print(
            f"pokegym: {len(result.failed)} battle(s) failed on every try and are not in the "
            f"results: {listed}{' ...' if len(result.failed) > 5 else ''}. Run the same "
            "command again to try them again.",
            file=sys.stderr,
        )
        return 1
    return 0


def _ray_options(args: argparse.Namespace) -> Any:
    from pokegym.scale.arena import RayOptions

    if args.workers is not None and args.workers < 1:
        raise PokegymError(f"--workers must be at least 1, got {args.workers}.")
    if args.retries is not None and args.retries < 0:
        raise PokegymError(f"--retries must be 0 or more, got {args.retries}.")
    return RayOptions(
        address=args.ray,
        workers=args.workers,
        retries=2 if args.retries is None else args.retries,
        runtime_env=parse_runtime_env(args.ray_runtime_env),
    )


def parse_runtime_env(text: str | None) -> dict[str, Any] | None:
    """``--ray-runtime-env``: a JSON object, or the path of a file holding one.

    Raises:
        PokegymError: neither.
    """
    if text is None:
        return None
    source = text
    if not text.lstrip().startswith("{"):
        try:
            source = Path(text).read_text()
        except OSError as exc:
            raise PokegymError(
                f"--ray-runtime-env {text!r} is neither a JSON object nor a readable file "
                f"({exc.strerror or exc})."
            ) from None
    try:
        value = json.loads(source)
    except ValueError as exc:
        raise PokegymError(f"--ray-runtime-env is not valid JSON ({exc}).") from None
    if not isinstance(value, dict):
        raise PokegymError(
            '--ray-runtime-env must be a JSON object, e.g. {"env_vars": {"POKEGYM_HOME": "/x"}}.'
        )
    return value


def _summarize(args: argparse.Namespace) -> int:
    from pokegym.journal import agents_in, pooled_ratings, summarize

    if args.ratings:
        if args.agent or args.against:
            raise PokegymError("--ratings rates every agent: leave out --agent and --against.")
        print(json.dumps(pooled_ratings(args.summarize, args.reference), indent=1))
        return 0
    if args.reference:
        raise PokegymError("--reference anchors --ratings; add --ratings.")
    if args.against and not args.agent:
        raise PokegymError("--against needs --agent (whose record against it).")
    if args.agent:
        print(json.dumps(summarize(args.summarize, args.agent, args.against), indent=1))
        return 0
    print(json.dumps({a: summarize(args.summarize, a) for a in agents_in(args.summarize)},
                     indent=1))  # fmt: skip
    return 0
