"""``pokegym bench calc``: the damage calculator against Showdown's simulator.

Battles are played on the embedded simulator by scripted agents (max power against
random, and max power against itself), in random-team and built-in-team formats.
Each battle is logged omnisciently: every HP figure in the log is exact for both
sides, and both teams' full sets are known (Showdown's own ``side.team``). The log is
then replayed line by line, tracking the state that matters for damage (active
Pokémon, HP, boosts, status, item and ability changes, Tera, formes, volatiles,
weather, terrain, screens), and every direct damaging hit of a move (a ``-damage``
line on the target with no ``[from]``) is predicted by
:func:`pokegym.world.damage.calculate` from the state just before the move and compared
with the exact HP the target lost. A hit flagged by ``-crit`` is compared with the
critical-hit rolls.

A hit is *in range* when the HP lost lies between the smallest and the largest
predicted damage. When the hit knocks the target out (or leaves it at 1 HP through
Sturdy, Focus Sash, Endure or False Swipe) the HP lost is only a lower bound of the
damage, so such a hit is in range when the largest prediction reaches it.

Hits the calculator cannot be given the state of (damage delayed by Future Sight or
Doom Desire, whose user may have left the field; in generation 8, a Max Move when the
set holds two moves of its type with different Max Move power, since the log names only
the Max Move) are excluded, counted and listed; hits on a substitute change no HP and
are listed too. ``--formats gen8randombattle`` measures generation 8 (Dynamax included).
The last line holds the figures: ``calc_in_range=<share> hits=<n> battles=<n>``
(the latest are in docs/results.md).

``--engine`` also asks poke-engine's calculator (``pokegym engine build``) about the same
hits (:mod:`bench.engine_damage`) and reports the two side by side: the hits in
each range, in both, in only one, the hits the engine could not be given (by reason) and
the biggest groups of hits where they disagree, each with an example. The last line then
ends in ``engine_in_range=<share> engine_hits=<n>``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from tqdm import tqdm

from bench.engine_damage import ENGINE_GENERATION, EngineHit, EngineTally, score_hits
from bench.log_replay import LogReplay
from bench.log_state import Hit, Tally
from pokegym.actions import ActionCodec
from pokegym.agents import make_agent
from pokegym.backends.sim import SimBattleSession
from pokegym.engine import require_engine
from pokegym.env import opponent_choice
from pokegym.formats import resolve_format
from pokegym.showdown.simulator import Simulator
from pokegym.teams import builtin_pool
from pokegym.world.damage import Combatant
from pokegym.world.data import load_dex

DEFAULT_FORMATS = ("gen9randombattle", "gen9ou")
PAIRINGS = (
    ("max_power", "random"), ("max_power", "max_power"), ("simple_heuristics", "max_power"),
    ("simple_heuristics", "random"),
)  # fmt: skip


# ------------------------------------------------------------------ playing
def play_battles(
    n_battles: int, formats: Iterable[str], *, seed: int = 0, progress: bool = True
) -> Tally:
    """Play ``n_battles`` (formats and pairings in turn), replay each log, score every hit."""
    tally = Tally()
    sim = Simulator()
    sim.ensure_running()
    rng = np.random.default_rng(seed)
    fmts = [resolve_format(f, simulator=sim) for f in formats]
    # Formats without random teams play pokegym's built-in teams (a clear error if none).
    pools = {fmt.id: builtin_pool(fmt.id) for fmt in fmts if not fmt.random_teams}
    bar = None
    if progress:
        bar = tqdm(total=n_battles, desc="battles", file=sys.stderr, leave=False)
    try:
        for index in range(n_battles):
            fmt = fmts[index % len(fmts)]
            pairing = PAIRINGS[(index // len(fmts)) % len(PAIRINGS)]
            agents = [make_agent(name) for name in pairing]
            if index % 2:
                agents.reverse()
            for agent in agents:
                seed_agent = getattr(agent, "seed", None)
                if callable(seed_agent):
                    seed_agent(int(rng.integers(2**31)))
            teams: list[str | None] = [None, None]
            pool = pools.get(fmt.id)
            if pool is not None:
                teams = [pool.sample(rng).text, pool.sample(rng).text]
            codec = ActionCodec(fmt.gimmick)
            start = time.perf_counter()
            session = SimBattleSession(
                sim, fmt, teams=teams, log="omniscient",
                seeds=tuple(int(x) for x in rng.integers(0, 2**62, 3)),  # type: ignore[arg-type]
            )  # fmt: skip
            try:
                sets = session.teams()
                for _ in range(3000):
                    if session.finished:
                        break
                    choices = {
                        side: opponent_choice(agents[side], session.battles[side], codec, rng)
                        for side in (0, 1)
                        if session.needs_choice(side)
                    }
                    session.choose(choices)
                log = session.replay_log() or ""
            finally:
                session.close()
            tally.seconds_playing += time.perf_counter() - start
            LogReplay(load_dex(fmt.gen), fmt.id, sets, tally).run(log)
            tally.battles += 1
            tally.formats[fmt.id] += 1
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        sim.close()
    return tally


# ------------------------------------------------------------------ reporting
def _miss_reasons(hit: Hit) -> list[str]:
    reasons = [f"move {hit.move}"]
    a, d = hit.attacker, hit.defender
    if a.ability:
        reasons.append(f"attacker ability {a.ability}")
    if a.item:
        reasons.append(f"attacker item {a.item}")
    if d.ability:
        reasons.append(f"defender ability {d.ability}")
    if d.item:
        reasons.append(f"defender item {d.item}")
    reasons.extend(f"calculator note: {n}" for n in hit.notes)
    return reasons


def _describe(c: Combatant) -> str:
    extras = [c.ability or "no ability", c.item or "no item", "/".join(c.types)]
    if c.terastallized:
        extras.append(f"tera {c.tera_type}")
    if c.status:
        extras.append(c.status)
    boosts = {k: v for k, v in c.boosts.items() if v}
    if boosts:
        extras.append(" ".join(f"{k}{v:+d}" for k, v in boosts.items()))
    if c.volatiles:
        extras.append(" ".join(sorted(c.volatiles)))
    return f"{c.species} L{c.level} ({', '.join(extras)})"


# A miss by at most this many HP, or this share of the HP lost, is put down to rounding
# (the engine takes 85 % of its largest roll where Showdown rolls before its modifiers).
ROUNDING_HP, ROUNDING_SHARE = 2, 0.02
OVER_REPRESENTED = 2.0  # a group is listed when this many times commoner among misses


def _hit_features(h: Hit) -> list[str]:
    """What a hit involved: move, abilities, items, crit, later hit, Tera, weather, terrain."""
    features = [r for r in _miss_reasons(h) if not r.startswith("calculator note")]
    if h.crit:
        features.append("critical hit")
    if h.hit_number > 1:
        features.append("second or later hit of a multi-hit move")
    for role, c in (("attacker", h.attacker), ("defender", h.defender)):
        if c.terastallized:
            features.append(f"{role} terastallized")
    if h.field.weather:
        features.append(f"weather {h.field.weather}")
    if h.field.terrain:
        features.append(f"terrain {h.field.terrain}")
    return features


def _miss_size(pair: EngineHit) -> tuple[str, bool]:
    """How the prediction out of range misses (ours when the engine's is in range): the
    line naming it, and whether it misses by more than rounding."""
    h = pair.hit
    who, low, high = ("ours", h.low, h.high) if pair.in_range else ("engine", pair.low, pair.high)
    below = high < h.lost
    gap = h.lost - high if below else low - h.lost
    big = gap > max(ROUNDING_HP, ROUNDING_SHARE * h.lost)
    amount = "more than rounding" if big else "rounding"
    return f"{who} {'below' if below else 'above'} the HP lost by {amount}", big


def _engine_line(pair: EngineHit) -> str:
    h = pair.hit
    return (
        f"{h.format_id} turn {h.turn}: {_describe(h.attacker)} {h.move} -> "
        f"{_describe(h.defender)}: lost {h.lost} of {h.hp_before}"
        f"{' (lower bound)' if h.censored else ''}{' crit' if h.crit else ''} hit "
        f"{h.hit_number}; ours {h.low}-{h.high}, engine {pair.low}-{pair.high}; weather "
        f"{h.field.weather or '-'}, terrain {h.field.terrain or '-'}"
    )


def report_engine(tally: Tally, engine: EngineTally, *, groups: int = 12, out: Any = None) -> str:
    """Print the engine's figures beside ours; returns the final line's addition."""
    out = out or sys.stdout
    pairs = engine.scored
    given = len(pairs)
    ours = sum(p.hit.in_range for p in pairs)
    theirs = sum(p.in_range for p in pairs)
    both = sum(p.hit.in_range and p.in_range for p in pairs)

    def share(k: int, n: int) -> str:
        return f"{k / n:.3f}" if n else "nan"

    print(
        f"poke-engine beside the calculator: {given} of {len(tally.hits)} hits given to the "
        "engine (its range: its largest roll x 0.85 to its largest; crits from its "
        "critical-hit roll)",
        file=out,
    )
    print(f"  {'':34s} {'ours':>7s} {'engine':>7s} {'hits':>6s}", file=out)
    rows: list[tuple[str, list[EngineHit]]] = [("in range", pairs)]
    by_format: dict[str, list[EngineHit]] = {}
    for p in pairs:
        by_format.setdefault(p.hit.format_id, []).append(p)
    rows += [(f"  {fmt}", group) for fmt, group in sorted(by_format.items())]
    rows.append(("  exact HP losses", [p for p in pairs if not p.hit.censored]))
    rows.append(("  knock-outs and other lower bounds", [p for p in pairs if p.hit.censored]))
    rows.append(("  critical hits", [p for p in pairs if p.hit.crit]))
    for label, group in rows:
        print(
            f"  {label:34s} {share(sum(p.hit.in_range for p in group), len(group)):>7s} "
            f"{share(sum(p.in_range for p in group), len(group)):>7s} {len(group):6d}",
            file=out,
        )
    print(
        f"  both in range {both}, only ours {ours - both}, only the engine {theirs - both}, "
        f"neither {given - ours - theirs + both}",
        file=out,
    )
    print(f"hits not given to the engine: {sum(engine.not_given.values())}", file=out)
    for reason, count in engine.not_given.most_common():
        print(f"  {count:5d}  {reason}", file=out)
    if engine.given_unknown:
        print(
            "hits given with an item or ability unknown to the engine and without a damage "
            "callback in Showdown's data (the engine reads it as none):",
            file=out,
        )
        for name, count in engine.given_unknown.most_common():
            print(f"  {count:5d}  {name}", file=out)
    # What all the hits given involve, to pick what is commoner among the disagreements.
    everywhere = Counter(f for p in pairs for f in set(_hit_features(p.hit)))
    for label, side in (("only ours", True), ("only the engine", False)):
        split = [p for p in pairs if p.hit.in_range == side and p.in_range != side]
        if not split:
            continue
        members: dict[str, list[EngineHit]] = {}
        for p in split:
            size, big = _miss_size(p)
            members.setdefault(size, []).append(p)
            for feature in set(_hit_features(p.hit)) if big else ():
                members.setdefault(feature, []).append(p)

        def listed(reason: str, group: list[EngineHit], n: int = len(split)) -> bool:
            if reason not in everywhere:  # a size line
                return True
            return len(group) / n >= OVER_REPRESENTED * everywhere[reason] / given

        ranked = sorted(members.items(), key=lambda kv: -len(kv[1]))
        ranked = [(r, g) for r, g in ranked if listed(r, g)][:groups]
        print(
            f"in range for {label}: {len(split)} hits; by how far the other misses (rounding: "
            f"{ROUNDING_HP} HP or {ROUNDING_SHARE:.0%} of the HP lost at most), then what the "
            f"misses by more involve ({OVER_REPRESENTED:g}x commoner than among all hits; a "
            "hit counts once per line):",
            file=out,
        )
        shown: set[int] = set()
        for reason, group in ranked:
            # Its first hit not shown yet (the first one if all were).
            example = next((p for p in group if id(p) not in shown), group[0])
            shown.add(id(example))
            print(f"  {len(group):5d}  {reason}", file=out)
            print(f"         e.g. {_engine_line(example)}", file=out)
    print(
        f"time: the engine {engine.seconds_predicting:.2f} s "
        f"({engine.seconds_predicting / max(1, given) * 1e6:.0f} us a hit)",
        file=out,
    )
    return f"engine_in_range={share(theirs, given)} engine_hits={given}"


def report(
    tally: Tally, *, show_misses: int = 10, out: Any = None, engine: EngineTally | None = None
) -> str:
    """Print the figures (with ``engine``, the engine's beside them); returns the final
    line."""
    out = out or sys.stdout
    hits = tally.hits
    n = len(hits)
    inside = sum(h.in_range for h in hits)
    share = inside / n if n else float("nan")
    exact = [h for h in hits if not h.censored]
    print(
        f"battles: {tally.battles} ({', '.join(f'{k} {v}' for k, v in tally.formats.items())})",
        file=out,
    )
    print(
        f"hits scored: {n} (crits {sum(h.crit for h in hits)}, knock-outs and other "
        f"lower bounds {n - len(exact)})",
        file=out,
    )
    if n:
        by_format: dict[str, list[Hit]] = {}
        for h in hits:
            by_format.setdefault(h.format_id, []).append(h)
        for fmt, group in sorted(by_format.items()):
            rate = sum(h.in_range for h in group) / len(group)
            print(f"  {fmt}: {rate:.3f} in range over {len(group)} hits", file=out)
        if exact:
            print(
                f"  exact HP losses: {sum(h.in_range for h in exact) / len(exact):.3f} in range,"
                f" {sum(h.lost in h.rolls for h in exact) / len(exact):.3f} equal to one of the "
                f"16 predicted rolls ({len(exact)} hits)",
                file=out,
            )
        flagged = [h for h in hits if h.notes]
        if flagged:
            rate = sum(h.in_range for h in flagged) / len(flagged)
            print(
                f"  hits the calculator flagged approximate: {len(flagged)} ({rate:.3f} in range)",
                file=out,
            )
    excluded = sum(tally.excluded.values())
    print(f"excluded hits: {excluded}", file=out)
    for reason, count in tally.excluded.most_common():
        print(f"  {count:5d}  {reason}", file=out)
    print(f"hits that changed no HP: {sum(tally.not_observable.values())}", file=out)
    for reason, count in tally.not_observable.most_common():
        print(f"  {count:5d}  {reason}", file=out)
    misses = [h for h in hits if not h.in_range]
    print(f"misses: {len(misses)}", file=out)
    if misses:
        reasons: Counter[str] = Counter()
        for h in misses:
            reasons.update(_miss_reasons(h))
        print(
            "  misses by move / ability / item / calculator note (a miss counts once per line):",
            file=out,
        )
        for reason, count in reasons.most_common(25):
            print(f"  {count:5d}  {reason}", file=out)
        for h in misses[:show_misses]:
            a, d = h.attacker, h.defender
            print(
                f"  - {h.format_id} turn {h.turn}: {_describe(a)} {h.move} -> {_describe(d)}: "
                f"lost {h.lost} of {h.hp_before}{' (lower bound)' if h.censored else ''}, "
                f"predicted {h.low}-{h.high}{' crit' if h.crit else ''} hit {h.hit_number}; "
                f"weather {h.field.weather or '-'}, terrain {h.field.terrain or '-'}"
                f"{'; notes ' + ', '.join(h.notes) if h.notes else ''}",
                file=out,
            )
    print(
        f"time: playing {tally.seconds_playing:.1f} s, predicting {tally.seconds_predicting:.2f} s"
        f" ({tally.seconds_predicting / max(1, n) * 1e6:.0f} us a hit)",
        file=out,
    )
    final = f"calc_in_range={share:.3f} hits={n} battles={tally.battles}"
    if engine is not None:
        final += " " + report_engine(tally, engine, out=out)
    print(final, file=out)
    return final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pokegym bench calc", description=__doc__.split("\n")[0] if __doc__ else None
    )
    parser.add_argument("--quick", action="store_true", help="fewer battles (a few minutes)")
    parser.add_argument("--battles", type=int, help="number of battles (default 60, quick 16)")
    parser.add_argument(
        "--formats",
        default=",".join(DEFAULT_FORMATS),
        help="comma-separated formats, played in turn",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--misses", type=int, default=10, help="misses to list in detail")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--engine",
        action="store_true",
        help="also score the hits with poke-engine's calculator (pokegym engine build)",
    )
    args = parser.parse_args(argv)
    battles = args.battles or (16 if args.quick else 60)
    if battles < 1:
        parser.error("--battles must be at least 1")
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    if not formats:
        parser.error("--formats needs at least one format")
    pe = require_engine() if args.engine else None  # a missing build fails before any battle
    print(
        f"pokegym bench calc: {battles} battles over {', '.join(formats)}; pairings "
        f"{', '.join(' vs '.join(p) for p in PAIRINGS)}"
        f"{'; poke-engine beside the calculator' if pe is not None else ''}"
    )
    tally = play_battles(battles, formats, seed=args.seed, progress=not args.no_progress)
    engine = None
    if pe is not None:
        engine = score_hits(pe, load_dex(ENGINE_GENERATION), tally.hits)
    report(tally, show_misses=args.misses, engine=engine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
