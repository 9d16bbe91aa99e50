"""A tournament: its configuration (:class:`ArenaConfig`), one record per battle, each
agent's decision statistics, and the result with its statistics (Wilson intervals, exact
binomial tests with Holm–Bonferroni correction, Bradley–Terry and Elo), printed as a
table, written as JSON and CSV, and drawn as plots. :mod:`pokegym.arena` plays the
battles; the journal (:mod:`pokegym.journal`) stores the records as they come."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pokegym.agents import parse_agent_spec
from pokegym.ratings import BradleyTerry, Game, binomial_test, fit_bradley_terry, holm_bonferroni
from pokegym.stats import percentile, wilson_interval

__all__ = ["AgentStats", "ArenaConfig", "ArenaResult", "BattleRecord"]


@dataclass
class ArenaConfig:
    """One tournament."""

    agents: list[str]
    """Agent specs (``name`` or ``name:key=value,...``); each name must be unique."""
    battle_format: str = "gen9randombattle"
    """Showdown format id."""
    battles_per_pair: int = 20
    """Battles per pair of agents (sides alternate)."""
    pairs: list[tuple[str, str]] | None = None
    """Pairs to play (agent names); default: round-robin over all agents."""
    mirror: bool = False
    """Both sides play the same team (formats with teams)."""
    seed: int = 0
    """Master seed: battle k of a pair always gets the same battle seed."""
    concurrency: int = 8
    """Battles in flight at once."""
    simulators: int = 2
    """Simulator processes the battles are spread over (one per core is a good choice)."""
    clock_bank: float | None = 150.0
    """Seconds in each player's bank at the start (None: no clock)."""
    clock_increment: float = 15.0
    """Seconds added to the bank at every decision."""
    max_turns: int = 500
    """Battles reaching this turn end as ties (reported as truncated)."""
    replays: str | None = None
    """Folder for Showdown HTML replays (player 1's view), or None."""
    teams: str | None = None
    """Team file/folder for formats with teams (default: the built-in pool)."""


@dataclass
class BattleRecord:
    pair: tuple[str, str]
    index: int
    seed: int
    p1: str
    p2: str
    winner: str | None
    turns: int
    truncated: bool = False
    timeout: str | None = None  # the agent that lost on time
    seconds: float = 0.0
    replay: str | None = None


@dataclass
class AgentStats:
    decisions: int = 0
    latencies: list[float] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    aligned: int = 0
    alignable: int = 0

    def record_usage(self, usage: dict[str, float] | None) -> None:
        for key, value in (usage or {}).items():
            self.usage[key] = self.usage.get(key, 0.0) + float(value)

    def merge(self, other: AgentStats) -> None:
        """Add another battle's statistics of the same agent to these."""
        self.decisions += other.decisions
        self.latencies.extend(other.latencies)
        self.record_usage(other.usage)
        self.aligned += other.aligned
        self.alignable += other.alignable


@dataclass
class ArenaResult:
    config: ArenaConfig
    battles: list[BattleRecord]
    agent_stats: dict[str, AgentStats]
    seconds: float
    """Wall time of this run (battles resumed from a journal are not in it)."""
    resumed: int = 0
    """Battles that came from the journal of an earlier run instead of being played."""
    retried: int = 0
    """Battles played again because the worker playing them was lost or failed (Ray runs)."""
    failed: list[dict[str, Any]] = field(default_factory=list)
    """Battles that failed on every try (Ray runs): ``pair``, ``index``, ``attempts``,
    ``error``. They are not in :attr:`battles`."""

    # ----------------------------------------------------------- aggregates
    @property
    def agents(self) -> list[str]:
        return [parse_agent_spec(spec)[0] for spec in self.config.agents]

    def games(self) -> list[Game]:
        return [Game(b.p1, b.p2, b.winner) for b in self.battles]

    def record(self, agent: str, against: str | None = None) -> dict[str, int]:
        for name in (agent, against):
            if name is not None and name not in self.agents:
                raise KeyError(
                    f"No agent named {name!r} in this tournament (agents: "
                    f"{', '.join(self.agents)}); use the name without options."
                )
        wins = losses = ties = timeouts = 0
        for b in self.battles:
            if agent not in (b.p1, b.p2):
                continue
            other = b.p2 if b.p1 == agent else b.p1
            if against is not None and other != against:
                continue
            if b.winner == agent:
                wins += 1
            elif b.winner is None:
                ties += 1
            else:
                losses += 1
            if b.timeout == agent:
                timeouts += 1
        return {"wins": wins, "losses": losses, "ties": ties, "timeouts": timeouts,
                "battles": wins + losses + ties}  # fmt: skip

    def win_rate(self, agent: str, against: str | None = None) -> tuple[float, float, float]:
        """(rate, low, high): ties count half; 95 % Wilson interval."""
        r = self.record(agent, against)
        n = r["battles"]
        score = r["wins"] + 0.5 * r["ties"]
        low, high = wilson_interval(score, n)
        return (score / n if n else math.nan), low, high

    def pair_tests(self) -> dict[str, dict[str, float]]:
        """Exact binomial test of every pair (ties dropped), Holm-adjusted over the family."""
        raw: dict[str, float] = {}
        details: dict[str, dict[str, float]] = {}
        for a, b in self.pairs():
            r = self.record(a, b)
            decided = r["wins"] + r["losses"]
            p = binomial_test(r["wins"], decided) if decided else 1.0
            key = f"{a} vs {b}"
            raw[key] = p
            details[key] = {"wins": r["wins"], "losses": r["losses"], "ties": r["ties"], "p": p}
        for key, adjusted in holm_bonferroni(raw).items():
            details[key]["p_holm"] = adjusted
        return details

    def pairs(self) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        for b in self.battles:
            if b.pair not in seen:
                seen.append(b.pair)
        return seen

    def ratings(self, reference: str | None = None) -> BradleyTerry:
        return fit_bradley_terry(self.games(), reference=reference or self.agents[-1])

    # -------------------------------------------------------------- output
    def table(self) -> str:
        n = len(self.battles)
        played = n - self.resumed
        rate = played / self.seconds if self.seconds > 0 else math.nan
        lines = [f"{self.config.battle_format}: {n} battles"
                 + (f" ({self.resumed} from an earlier run, {played} played now)"
                    if self.resumed else "")
                 + f" in {self.seconds:.1f} s ({rate:.2f} battles/s)"
                 + (f"; {self.retried} retried" if self.retried else "")
                 + (f"; {len(self.failed)} FAILED on every try" if self.failed else "")
                 ]  # fmt: skip
        width = max([14, *(len(agent) + 1 for agent in self.agents)])
        header = (
            f"{'agent':<{width}}{'W':>5}{'L':>5}{'T':>4}{'TO':>4}  {'win rate [95% CI]':<24}"
            f"{'turns':>6}{'p50 ms':>9}{'p95 ms':>9}{'aligned':>9}  usage/decision"
        )
        lines.append(header)
        turns_by_agent: dict[str, list[int]] = {a: [] for a in self.agents}
        for b in self.battles:
            turns_by_agent[b.p1].append(b.turns)
            turns_by_agent[b.p2].append(b.turns)
        rating_elo: dict[str, tuple[float, float, float]] = {}
        if len(self.agents) > 1 and self.battles:
            rating_elo = self.ratings().elo()
        for agent in self.agents:
            r = self.record(agent)
            rate, low, high = self.win_rate(agent)
            stats = self.agent_stats[agent]
            aligned = stats.aligned / stats.alignable if stats.alignable else math.nan
            usage = ", ".join(
                f"{k} {v / max(stats.decisions, 1):.1f}" for k, v in stats.usage.items()
            )
            turns = np.mean(turns_by_agent[agent]) if turns_by_agent[agent] else math.nan
            lines.append(
                f"{agent:<{width}}{r['wins']:>5}{r['losses']:>5}{r['ties']:>4}{r['timeouts']:>4}  "
                f"{rate:6.1%} [{low:5.1%}, {high:5.1%}]{'':<3}{turns:>6.1f}"
                f"{percentile(stats.latencies, 50) * 1e3:>9.2f}"
                f"{percentile(stats.latencies, 95) * 1e3:>9.2f}{aligned:>9.1%}  {usage or '-'}"
            )
        if rating_elo:
            lines.append("Elo (MLE, 95% CI): " + ", ".join(
                f"{a} {e:.0f} [{lo:.0f}, {hi:.0f}]" for a, (e, lo, hi) in sorted(
                    rating_elo.items(), key=lambda item: -item[1][0])))  # fmt: skip
        lines.append("Pairs (exact binomial test on decided games, Holm-adjusted):")
        for key, d in self.pair_tests().items():
            lines.append(f"  {key}: {int(d['wins'])}-{int(d['losses'])} ({int(d['ties'])} ties)  "
                         f"p={d['p']:.3g}  p_holm={d['p_holm']:.3g}")  # fmt: skip
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        ratings = self.ratings() if len(self.agents) > 1 and self.battles else None
        return {
            "config": asdict(self.config),
            "seconds": self.seconds,
            "resumed": self.resumed,
            "retried": self.retried,
            "failed": self.failed,
            "agents": {
                agent: {
                    **self.record(agent),
                    "win_rate": self.win_rate(agent),
                    "latency_p50": percentile(self.agent_stats[agent].latencies, 50),
                    "latency_p95": percentile(self.agent_stats[agent].latencies, 95),
                    "decisions": self.agent_stats[agent].decisions,
                    "usage_per_decision": {
                        k: v / max(self.agent_stats[agent].decisions, 1)
                        for k, v in self.agent_stats[agent].usage.items()
                    },
                    "type_alignment": (
                        self.agent_stats[agent].aligned / self.agent_stats[agent].alignable
                        if self.agent_stats[agent].alignable else None
                    ),
                    "elo": ratings.elo()[agent] if ratings else None,
                    "bradley_terry": (ratings.strength(agent), ratings.std_error(agent))
                    if ratings else None,
                }
                for agent in self.agents
            },
            "pairs": {
                key: {**d, "win_rate": self.win_rate(*key.split(" vs "))}
                for key, d in self.pair_tests().items()
            },
            "battles": [asdict(b) for b in self.battles],
        }  # fmt: skip

    def write(self, folder: str | Path) -> list[Path]:
        """Write table.txt, results.json, battles.csv and the two plots into ``folder``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        written = [folder / "table.txt", folder / "results.json", folder / "battles.csv"]
        written[0].write_text(self.table() + "\n")
        written[1].write_text(json.dumps(self.to_dict(), indent=2, default=_json_default))
        with open(written[2], "w") as handle:
            handle.write("pair,index,seed,p1,p2,winner,turns,truncated,timeout,seconds\n")
            for b in self.battles:
                handle.write(f"{b.pair[0]} vs {b.pair[1]},{b.index},{b.seed},{b.p1},{b.p2},"
                             f"{b.winner or ''},{b.turns},{int(b.truncated)},{b.timeout or ''},"
                             f"{b.seconds:.3f}\n")  # fmt: skip
        written += self.plots(folder)
        return written

    def plots(self, folder: Path) -> list[Path]:
        """A pairwise win-rate heatmap and a ratings plot with 95 % intervals (PNG)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        agents = self.agents
        n = len(agents)
        matrix = np.full((n, n), np.nan)
        for i, a in enumerate(agents):
            for j, b in enumerate(agents):
                if i != j and self.record(a, b)["battles"]:
                    matrix[i, j] = self.win_rate(a, b)[0]
        fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * n + 2), max(4.5, 1.0 * n + 1.5)))
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="RdBu")
        ax.set_xticks(range(n), agents, rotation=30, ha="right")
        ax.set_yticks(range(n), agents)
        for i in range(n):
            for j in range(n):
                if not np.isnan(matrix[i, j]):
                    r = self.record(agents[i], agents[j])
                    ax.text(j, i, f"{matrix[i, j]:.0%}\n(n={r['battles']})", ha="center",
                            va="center", fontsize=8)  # fmt: skip
        ax.set_title("Win rate of the row agent against the column agent\n(ties count ½)",
                     fontsize=10)  # fmt: skip
        fig.colorbar(image, ax=ax)
        fig.tight_layout()
        heatmap = folder / "winrate_heatmap.png"
        fig.savefig(heatmap, dpi=120)
        plt.close(fig)
        paths = [heatmap]
        if n > 1 and self.battles:
            elo = self.ratings().elo()
            order = sorted(agents, key=lambda a: elo[a][0])
            fig, ax = plt.subplots(figsize=(7, 0.5 * n + 1.5))
            for y, agent in enumerate(order):
                value, low, high = elo[agent]
                ax.errorbar(value, y, xerr=[[value - low], [high - value]], fmt="o", capsize=4)
            ax.set_yticks(range(n), order)
            ax.set_xlabel(f"Elo (maximum likelihood, reference {self.agents[-1]} = 1000), 95% CI")
            ax.grid(axis="x", alpha=0.3)
            fig.tight_layout()
            path = folder / "ratings.png"
            fig.savefig(path, dpi=120)
            plt.close(fig)
            paths.append(path)
        return paths


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)
