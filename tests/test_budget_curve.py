"""bench/budget_curve.py: the win-rate-against-budget table and plot from journals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _journal(folder: Path, budget: float, results: list[str], latency: float) -> Path:
    """A compare journal of ``distilled:budget=...`` against abyssal: battle ``k`` has seed
    ``1000 + k`` at every budget, so the budgets are paired battle by battle."""
    folder.mkdir(parents=True)
    lines = [
        json.dumps(
            {
                "format": "pokegym-arena-battles",
                "version": 1,
                "tournament": {"agents": [f"distilled:budget={budget}", "abyssal"]},
            }
        )
    ]
    for k, result in enumerate(results):
        winner = {"W": "distilled", "L": "abyssal", "T": None}[result]
        lines.append(json.dumps({
            "pair": ["distilled", "abyssal"], "index": k, "seed": 1000 + k, "winner": winner,
            "agents": {"distilled": {"decisions": 2, "latencies": [latency, 2 * latency]},
                       "abyssal": {"decisions": 2, "latencies": [0.001, 0.001]}},
        }))  # fmt: skip
    (folder / "battles.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_table_pairs_each_budget_with_the_reference(tmp_path, benchmark_script, capsys) -> None:
    module = benchmark_script("budget_curve")
    fast = _journal(tmp_path / "b01", 0.1, ["W", "L", "L", "W", "T"], 0.1)
    ref = _journal(tmp_path / "b05", 0.5, ["W", "W", "L", "W", "W"], 0.5)
    slow = _journal(tmp_path / "b1", 1.0, ["W", "W", "W", "W", "L"], 1.0)
    png = tmp_path / "img" / "curve.png"
    code = module.main(["--agent", "distilled", "--reference", "0.5", f"1={slow}",
                        f"0.1={fast}", f"0.5={ref}", "--plot", str(png)])  # fmt: skip
    assert code == 0
    rows = capsys.readouterr().out.splitlines()
    # sorted by budget; the reference row has no comparison
    assert rows[2].startswith("| 0.1 | 5 | 2–2 | 40.0 % ")
    assert rows[3].startswith("| 0.5 | 5 | 4–1 | 80.0 % ") and rows[3].endswith("| – | – | – |")
    assert rows[4].startswith("| 1 | 5 | 4–1 | 80.0 % ")
    # 0.1 s against 0.5 s: battles 1 and 4 won only at 0.5 s (the tie counts as not won)
    assert "| 2 / 0 (n = 5) | 0.500 | -40.0 [" in rows[2]
    # 1 s against 0.5 s: battle 2 won only at 1 s, battle 4 only at 0.5 s
    assert "| 1 / 1 (n = 5) | 1.000 | +0.0 [" in rows[4]
    # seconds per decision from the agent's own latencies, not the opponent's
    assert "| 0.150 / " in rows[2] and "| 1.500 / " in rows[4]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_folder_of_one_budget_joins_with_a_comma(tmp_path, benchmark_script) -> None:
    module = benchmark_script("budget_curve")
    a = _journal(tmp_path / "s1", 0.5, ["W", "L"], 0.5)
    point = module.load_point(0.5, [a, _journal(tmp_path / "s2", 0.5, ["W"], 0.5)], "distilled")
    # the second folder's battle 0 has the first's seed: it counts once, as its last record
    assert point.wins == 1 and len(point.outcomes) == 2
    assert len(point.latencies) == 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["0.5runs/x"], "give a point as BUDGET=FOLDER"),
        (["fast=runs/x"], "give a point as BUDGET=FOLDER"),
        (["0=runs/x"], "give a point as BUDGET=FOLDER"),
    ],
)
def test_bad_points_are_named(argv, message, benchmark_script, capsys) -> None:
    module = benchmark_script("budget_curve")
    with pytest.raises(SystemExit) as stop:
        module.main(["--agent", "distilled", *argv])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_a_reference_budget_with_no_runs_is_an_error(tmp_path, benchmark_script, capsys) -> None:
    module = benchmark_script("budget_curve")
    ref = _journal(tmp_path / "b05", 0.5, ["W"], 0.5)
    with pytest.raises(SystemExit) as stop:
        module.main(["--agent", "distilled", "--reference", "2", f"0.5={ref}"])
    assert stop.value.code == 2
    assert "--reference 2: no point has that budget" in capsys.readouterr().err
