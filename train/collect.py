"""``pokegym collect``: play battles on the embedded simulator and log every decision.

    pokegym collect --agents abyssal,one_step,max_power --battles 2000 --out data/rb

Battles are played between every pair of the given agents (sides alternate; with
``--self-play`` each agent also plays itself), spread over ``--workers`` processes,
each with its own Showdown simulator. Battle ``k`` always gets the same seeds, so a
collection is reproducible and can be extended or resumed: the battles already in
``DIR`` are skipped.

**Rows.** One row per decision of either side (Team Preview excluded), from that
side's point of view (see :data:`train.collection.SCHEMA` for every column): the world-model state
encoding (:class:`policies.value_net.StateEncoder`, on the state the search would
start from: the opponent's hidden sets filled with the modal set of the priors), the
environment's observation encoding, the action mask and the action taken in the
environment's action layout, the legal world-model actions and the one taken as
labels (``move:<id>``, ``move:<id>:tera``, ``switch:<species>``), one-step lookahead
features, the hand-written evaluator's value, the final outcome (1 win, 0 loss,
½ tie or truncation) — and, when the agent reports them after a decision through
``pop_search_report() -> dict | None``, the LLM fields: ``"value"`` (its score of
the decision state), ``"proposals"`` (action labels it proposed) and ``"leaves"``
(``[(BattleState, score), ...]`` for the leaf states it scored); and the search
fields: ``"search_policy"`` (``[(order, share), ...]``, the root visit shares of a
search agent such as ``mcts`` or ``distilled``, stored over the action layout) and
``"search_value"`` (the search's win chance of the position). They stay null for
agents that report nothing. Collections of schema version 1 (before the search
columns) are still read, with those columns null.

**Files.** ``DIR/collection.json`` (schema version, format, agents, seed, encoder
sizes) and ``DIR/shard-<first>-<last>.parquet`` files of ``--shard-battles`` battles
each, written to a temporary name and renamed, so a shard is either whole or absent.
An interrupted run (Ctrl-C, SIGTERM) writes the battles its workers had finished
before it exits; running the same command again plays only the missing ones.

**On a Ray cluster** (``--ray auto`` or ``--ray HOST:PORT``, docs/scale.md), each Ray
worker owns a simulator and the agents and plays one battle at a time; the driver
writes the rows to shards as battles arrive (every ``--shard-battles``, and what it
holds when the run stops). Battle ``k`` has the same seeds as in a local run. A battle
whose worker is lost is played again (``--retries``); one that fails every try is
reported and stays missing, to be played by the next run. Agent specs may ask for
``num_cpus``/``num_gpus`` per worker (:mod:`pokegym.scale.resources`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import multiprocessing
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from pokegym.actions import ActionCodec
from pokegym.agents import make_agent
from pokegym.backends.sim import SimBattleSession
from pokegym.env import opponent_choice
from pokegym.errors import IllegalActionError, PokegymError
from pokegym.formats import resolve_format
from pokegym.observation import ObservationEncoder
from pokegym.scale.cluster import (
    ClusterError,
    check_reachable,
    import_ray,
    ray_cluster,
    workers_that_fit,
)
from pokegym.scale.pool import WorkerPool, where
from pokegym.scale.resources import split_resources, worker_resources
from pokegym.showdown.simulator import Simulator
from pokegym.teams import builtin_pool
from pokegym.world.data import load_dex
from pokegym.world.transition import TransitionModel
from policies.core.battle import decision_state, root_actions, world_action
from policies.core.lookahead import lookahead_features
from policies.value_net import StateEncoder, action_label
from train.collection import (
    MANIFEST,
    SCHEMA_VERSION,
    CollectionError,
    collected_battles,
    write_shard,
)
from train.collection_format import encodings
from train.config import config_parser, field_docs

MAX_TURNS = 300


@dataclass
class CollectConfig:
    """One collection run (saved as ``DIR/collection.json``)."""

    agents: list[str]
    """Agent specs (``name`` or ``name:key=value,...``), comma-separated on the command line."""
    battle_format: str = "gen9randombattle"
    """Showdown format id (random-team formats; team formats use the built-in pool)."""
    battles: int = 100
    """Battles the collection should hold in the end (already collected ones count)."""
    out: str = "data/collect"
    """Output folder."""
    seed: int = 0
    """Master seed: battle k always gets the same seeds."""
    self_play: bool = False
    """Also pair every agent with itself."""
    workers: int | None = None
    """Processes playing battles, each with its own simulator (default 1; with ``ray``:
    as many Ray workers as the cluster holds)."""
    shard_battles: int = 20
    """Battles per shard file (the most an abrupt kill, e.g. SIGKILL, can lose per worker)."""
    progress: bool = True
    """Show a progress bar on stderr."""
    ray: str | None = None
    """Play on Ray: ``auto`` (start it on this machine) or a cluster's ``host:port``."""
    retries: int = 2
    """With ``ray``: tries after the first for a battle whose worker was lost or failed."""
    pairs: list[list[str]] = field(default_factory=list)
    """Resolved agent pairs (filled in)."""

    def identity(self) -> dict[str, Any]:
        """What must match for a folder to be resumed."""
        return {"agents": self.agents, "battle_format": self.battle_format, "seed": self.seed,
                "self_play": self.self_play}  # fmt: skip


def _pairs(agents: Sequence[str], self_play: bool) -> list[tuple[str, str]]:
    pairs = list(itertools.combinations(agents, 2))
    if self_play or len(agents) == 1:
        pairs += [(a, a) for a in agents]
    return pairs


def battle_seeds(seed: int, battle_id: int) -> tuple[int, int, int, int]:
    """(battle seed, p1 team seed, p2 team seed, agents seed) of battle ``battle_id``."""
    state = np.random.SeedSequence([seed, battle_id]).generate_state(4, dtype=np.uint64)
    return tuple(int(x) >> 2 for x in state)  # type: ignore[return-value]


# ------------------------------------------------------------------ playing
class _Worker:
    """Plays battles in one process; keeps one simulator and one agent per spec."""

    def __init__(self, config: CollectConfig):
        self.config = config
        self.sim = Simulator()
        self.sim.ensure_running()
        self.fmt = resolve_format(config.battle_format, simulator=self.sim)
        self.codec = ActionCodec(self.fmt.gimmick)
        self._agents: dict[str, Any] = {}
        self._tools: dict[int, Any] = {}

    def close(self) -> None:
        self.sim.close()

    def agent(self, spec: str, slot: int) -> Any:
        key = f"{slot}:{spec}"
        if key not in self._agents:
            self._agents[key] = make_agent(spec)
        return self._agents[key]

    def tools(self, gen: int) -> Any:
        if gen not in self._tools:
            model = TransitionModel(load_dex(gen))
            self._tools[gen] = (model, StateEncoder(model), ObservationEncoder(gen))
        return self._tools[gen]

    def play(self, battle_id: int) -> list[dict[str, Any]]:
        """Play battle ``battle_id`` and return its rows."""
        config = self.config
        pairs = config.pairs
        pair = pairs[battle_id % len(pairs)]
        swapped = (battle_id // len(pairs)) % 2 == 1
        specs = (pair[1], pair[0]) if swapped else (pair[0], pair[1])
        battle_seed, team1, team2, agent_seed = battle_seeds(config.seed, battle_id)
        rng = np.random.default_rng(agent_seed)
        agents = (self.agent(specs[0], 0), self.agent(specs[1], 1))
        for agent in agents:
            seed_fn = getattr(agent, "seed", None)
            if callable(seed_fn):
                seed_fn(int(rng.integers(2**63 - 1)))
            forget = getattr(agent, "pop_search_report", None)
            if callable(forget):
                forget()
        teams: list[str | None] = [None, None]
        if not self.fmt.random_teams:
            pool = builtin_pool(self.fmt.id)
            teams = [pool.sample(rng).text, pool.sample(rng).text]
        session = SimBattleSession(self.sim, self.fmt, teams=teams,
                                   seeds=(battle_seed, team1, team2))  # fmt: skip
        rows: list[dict[str, Any]] = []
        steps = [0, 0]
        try:
            for _ in range(5000):
                if session.finished or session.battles[0].turn >= MAX_TURNS:
                    break
                choices: dict[int, str] = {}
                for side in (0, 1):
                    if not session.needs_choice(side):
                        continue
                    battle = session.battles[side]
                    agent = agents[side]
                    if battle.teampreview:
                        choices[side] = opponent_choice(agent, battle, self.codec, rng)
                        continue
                    order = agent.choose(battle)
                    choices[side] = self.codec.order_to_choice(order, battle)
                    report = getattr(agent, "pop_search_report", None)
                    row = self._row(battle, order, report() if callable(report) else None)
                    if row is not None:
                        row.update(battle_id=battle_id, battle_seed=battle_seed,
                                   format=self.fmt.id, side=side, agent=specs[side],
                                   opponent=specs[1 - side], step=steps[side])  # fmt: skip
                        steps[side] += 1
                        rows.append(row)
                if choices:
                    session.choose(choices)
            turns = session.battles[0].turn
            truncated = not session.finished
            winner = session.winner if session.finished else None
        finally:
            session.close()
        for row in rows:
            side = row["side"]
            row["outcome"] = 0.5 if winner is None else float(winner == side)
            row["battle_turns"] = turns
            row["truncated"] = truncated
        return rows

    def _row(self, battle: Any, order: Any, report: dict[str, Any] | None) -> dict[str, Any] | None:
        if battle.opponent_active_pokemon is None or battle.active_pokemon is None:
            return None
        model, encoder, observer = self.tools(battle.gen)
        state = decision_state(battle, model.dex)
        features = encoder.encode(state)
        try:
            action = self.codec.from_order(order, battle)
        except IllegalActionError:
            action = -1
        taken = world_action(order, battle)
        legal = list(root_actions(battle, True))
        look = lookahead_features(model, state)
        row: dict[str, Any] = {
            "turn": int(battle.turn),
            "state": features,
            "observation": observer.encode(battle),
            "action_mask": self.codec.mask(battle).astype(np.int8),
            "action": int(action),
            "legal_labels": [action_label(state, 0, a) for a in legal],
            "action_label": action_label(state, 0, taken) if taken is not None else "",
            "lookahead": look,
            "heuristic_value": float(features[-2]),
            "llm_value": None,
            "llm_proposals": None,
            "llm_leaf_states": None,
            "llm_leaf_scores": None,
            "search_policy": None,
            "search_value": None,
        }
        if report:
            if report.get("search_policy"):
                shares = np.zeros(self.codec.n_actions, dtype=np.float32)
                for search_order, share in report["search_policy"]:
                    try:
                        shares[self.codec.from_order(search_order, battle)] += float(share)
                    except IllegalActionError:
                        continue
                row["search_policy"] = shares if shares.sum() > 0 else None
            if report.get("search_value") is not None and math.isfinite(report["search_value"]):
                row["search_value"] = float(report["search_value"])
            if report.get("value") is not None:
                row["llm_value"] = float(report["value"])
            if report.get("proposals") is not None:
                row["llm_proposals"] = [str(p) for p in report["proposals"]]
            leaves = report.get("leaves") or []
            if leaves:
                row["llm_leaf_states"] = [encoder.encode(s) for s, _ in leaves]
                row["llm_leaf_scores"] = [float(v) for _, v in leaves]
        return row


class CollectWorker:
    """One Ray worker of a collection (an actor): a :class:`_Worker` of its own."""

    def __init__(self, config: CollectConfig):
        self._config = config
        self._worker: _Worker | None = None

    def setup(self) -> dict[str, Any]:
        if self._worker is None:
            self._worker = _Worker(self._config)
        return where()  # type: ignore[no-any-return]

    def play(self, battle_id: int) -> list[dict[str, Any]]:
        self.setup()
        assert self._worker is not None
        return self._worker.play(battle_id)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


_WORKER: _Worker | None = None


def _init_worker(config: CollectConfig) -> None:
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    _WORKER = _Worker(config)


def _play_chunk(ids: list[int], out: str, stop_file: str | None = None) -> int:
    """Play battles ``ids`` in this worker and write their shard; returns battles written."""
    assert _WORKER is not None
    return _play_and_write(_WORKER, ids, Path(out), stop_file)


def _play_and_write(worker: _Worker, ids: list[int], out: Path, stop_file: str | None) -> int:
    rows: list[dict[str, Any]] = []
    done: list[int] = []
    try:
        for battle_id in ids:
            if stop_file and os.path.exists(stop_file):
                break
            rows += worker.play(battle_id)
            done.append(battle_id)
    finally:
        if done:
            write_shard(out, done, rows)
    return len(done)


# --------------------------------------------------------------------- main
def _manifest(config: CollectConfig) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "identity": config.identity(),
        **{k: v for k, v in encodings().items() if k != "schema_version"},
    }


def prepare_folder(config: CollectConfig) -> set[int]:
    """Create or check the output folder; returns the battle ids already collected."""
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    for leftover in out.glob(".shard-*.tmp"):
        leftover.unlink()  # a shard that was being written when the run died
    manifest = _manifest(config)
    path = out / MANIFEST
    if path.exists():
        try:
            existing = json.loads(path.read_text())
        except ValueError as exc:
            raise CollectionError(f"{path} is not valid JSON ({exc}).") from exc
        for key in ("schema_version", "identity", "state_encoder_version", "state_features",
                    "observation_version", "observation_features", "n_actions"):  # fmt: skip
            if existing.get(key) != manifest[key]:
                raise CollectionError(
                    f"{out} holds another collection ({key}: {existing.get(key)!r}, this run: "
                    f"{manifest[key]!r}). Use a new --out folder, or the same agents, format "
                    "and seed to extend it."
                )
    else:
        fd, tmp = tempfile.mkstemp(dir=out, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump({**manifest, "config": asdict(config)}, handle, indent=2)
        os.replace(tmp, path)
    return collected_battles(out)


def collect(config: CollectConfig) -> dict[str, Any]:
    """Run a collection (see the module docstring); returns a summary."""
    if not config.agents:
        raise ValueError("Give at least one agent (--agents abyssal,one_step).")
    workers = config.workers
    if config.battles < 0 or (workers is not None and workers < 1) or config.shard_battles < 1:
        raise ValueError("--battles must be >= 0, --workers and --shard-battles >= 1.")
    if config.retries < 0:
        raise ValueError("--retries must be 0 or more.")
    # num_cpus=/num_gpus= are for Ray's scheduler: no agent sees them, no row names them.
    resources = worker_resources(config.agents)
    config.agents = [split_resources(spec)[0] for spec in config.agents]
    config.pairs = [list(p) for p in _pairs(config.agents, config.self_play)]

    for spec in config.agents:
        make_agent(spec)  # fail early on unknown names or bad options
    if config.ray is not None:
        import_ray()  # before the folder is touched
        if config.ray != "auto":
            check_reachable(config.ray)
    done = prepare_folder(config)
    todo = [k for k in range(config.battles) if k not in done]
    chunks = [todo[i : i + config.shard_battles] for i in range(0, len(todo), config.shard_battles)]
    out = Path(config.out)
    bar = None
    if config.progress:
        bar = tqdm(total=config.battles, initial=config.battles - len(todo), desc="battles",
                   unit="battle", file=sys.stderr, dynamic_ncols=True)  # fmt: skip
    start = time.perf_counter()
    played = 0
    interrupted = False
    stop_file = str(out / ".stop")
    previous = signal.getsignal(signal.SIGTERM)

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if os.path.exists(stop_file):
        os.unlink(stop_file)
    try:
        signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread
        previous = None
    ray_report: dict[str, Any] = {}
    try:
        if config.ray is not None:
            played = _collect_on_ray(config, todo, out, bar, resources, ray_report)
        elif (workers or 1) == 1:
            worker = _Worker(config)
            try:
                for chunk in chunks:
                    played += _play_and_write(worker, chunk, out, None)
                    if bar is not None:
                        bar.update(len(chunk))
            finally:
                worker.close()
        else:
            played = _collect_parallel(config, chunks, out, stop_file, bar)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if bar is not None:
            bar.close()
        if os.path.exists(stop_file):
            os.unlink(stop_file)
    total = len(collected_battles(out))
    seconds = time.perf_counter() - start
    return {"played": total - len(done), "collected": total, "target": config.battles,
            "seconds": seconds, "interrupted": interrupted, **ray_report}  # fmt: skip


def _collect_on_ray(
    config: CollectConfig, todo: list[int], out: Path, bar: Any, resources: Any,
    report_out: dict[str, Any],
) -> int:  # fmt: skip
    """Play ``todo`` on Ray workers; shards are written as battles arrive."""
    rows: list[dict[str, Any]] = []
    ids: list[int] = []
    written = 0

    def flush() -> None:
        nonlocal rows, ids, written
        if ids:
            write_shard(out, ids, rows)
            written += len(ids)
            rows, ids = [], []

    def on_result(battle_id: int, battle_rows: list[dict[str, Any]], worker: Any) -> None:
        rows.extend(battle_rows)
        ids.append(battle_id)
        if len(ids) >= config.shard_battles:
            flush()
        if bar is not None:
            bar.update(1)

    if not todo:
        return 0
    try:
        with ray_cluster(config.ray or "auto") as cluster:
            fit = workers_that_fit(resources)
            if fit < 1:
                raise ClusterError(
                    f"No node of the Ray cluster has room for a worker asking for "
                    f"{resources.num_cpus:g} CPU and {resources.num_gpus:g} GPU; it has "
                    f"{cluster.cpus:g} CPUs and {cluster.gpus:g} GPUs."
                )
            workers = min(config.workers or fit, len(todo))
            with WorkerPool(CollectWorker, (config,), workers=workers, resources=resources,
                            retries=config.retries) as pool:  # fmt: skip
                report = pool.run(todo, on_result)
    finally:
        flush()  # the battles that arrived, also when the run stops early
    report_out.update(
        workers=workers, retried=report.retried, lost_workers=report.lost_workers,
        failed=[{"battle_id": f.task, "attempts": f.attempts, "error": f.error}
                for f in report.failed],
        by_node=dict(report.by_node),
    )  # fmt: skip
    return written


def _collect_parallel(
    config: CollectConfig, chunks: list[list[int]], out: Path, stop_file: str, bar: Any
) -> int:

    context = multiprocessing.get_context("spawn")
    played = 0
    with ProcessPoolExecutor(config.workers, mp_context=context, initializer=_init_worker,
                             initargs=(config,)) as pool:  # fmt: skip
        pending = {pool.submit(_play_chunk, chunk, str(out), stop_file): chunk for chunk in chunks}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    chunk = pending.pop(future)
                    played += future.result()
                    if bar is not None:
                        bar.update(len(chunk))
        except KeyboardInterrupt:
            # Workers finish the battle they are in, write what they finished, and stop.
            Path(stop_file).touch()
            for future in pending:
                future.cancel()
            for future in pending:
                if not future.cancelled():
                    # A worker that failed while stopping has already written what it
                    # finished; the interrupt below is what the caller needs to see.
                    with contextlib.suppress(Exception):
                        played += future.result()
            raise
    return played


def parse_args(argv: Sequence[str] | None) -> CollectConfig:
    parser = config_parser(
        CollectConfig, prog="pokegym collect", description=__doc__.split("\n")[0],
        aliases={"battle_format": ["--format"]}, converters={"agents": _split_agents},
        skip=("pairs", "ray"), required=("battles", "out"),
    )  # fmt: skip
    parser.add_argument("--ray", nargs="?", const="auto", default=None, metavar="auto|ADDRESS",
                        help=field_docs(CollectConfig)["ray"] + " (pip install 'pokegym[ray]'; "
                        "docs/scale.md)")  # fmt: skip
    args = parser.parse_args(list(argv) if argv is not None else None)
    return CollectConfig(**vars(args))


def _split_agents(text: str) -> list[str]:
    """Split ``a,b:x=1,y=2,c`` into specs: a part with ``=`` and no ``:`` is an option."""
    specs: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = parse_args(argv)
        summary = collect(config)
    except (CollectionError, ValueError, PokegymError) as exc:
        print(f"pokegym collect: {exc}", file=sys.stderr)
        return 2
    state = (
        "interrupted; run the same command again to finish" if summary["interrupted"] else "done"
    )
    print(f"{summary['collected']}/{summary['target']} battles in {config.out} "
          f"({summary['played']} played in {summary['seconds']:.1f} s; {state})")  # fmt: skip
    if "workers" in summary:
        print(f"ray: {summary['workers']} workers; battles per node: {summary['by_node']}; "
              f"{summary['retried']} retried ({summary['lost_workers']} workers lost)")  # fmt: skip
    if summary.get("failed"):
        listed = "; ".join(f"#{f['battle_id']}: {f['error']}" for f in summary["failed"][:5])
        print(f"pokegym collect: {len(summary['failed'])} battle(s) failed on every try and "
              f"are not collected ({listed}); run the same command again to try them "
              "again.", file=sys.stderr)  # fmt: skip
        return 1
    return 130 if summary["interrupted"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
