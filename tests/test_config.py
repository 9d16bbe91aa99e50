"""Run configurations from the command line and seeding (train/config.py), and the
commands that use them (collect, distill, train ppo) parsing the same way."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import pytest

from train.collect import CollectConfig
from train.collect import parse_args as collect_args
from train.config import config_parser, field_docs, parse_config, seed_everything
from train.distill import DistillConfig
from train.distill import parse_args as distill_args
from train.ppo import _parser as ppo_parser


@dataclass(frozen=True)
class RunConfig:
    out: str
    """Output folder."""
    steps: int = 1000
    """Environment steps."""
    rate: float = 0.5
    """A rate, 50 % by default."""
    limit: float | None = None
    """Stop after this long; None: no limit."""
    hidden: tuple[int, ...] = (64, 32)
    """Layer widths."""
    fast: bool = False
    """Go fast."""
    progress: bool = True
    """Show progress."""
    filled_in: list[str] = field(default_factory=list)
    """Set by the program."""

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError(f"steps must be at least 1, got {self.steps}")


def parse(*argv: str, **options) -> RunConfig:
    return parse_config(RunConfig, list(argv), prog="run", description="a run",
                        skip=("filled_in",), **options)  # fmt: skip


def test_fields_become_typed_options():
    config = parse("--out", "runs/x", "--steps", "7", "--rate", "0.25", "--limit", "1.5",
                   "--hidden", "8,4,2", "--fast", "--no-progress")  # fmt: skip
    assert config == RunConfig(out="runs/x", steps=7, rate=0.25, limit=1.5, hidden=(8, 4, 2),
                               fast=True, progress=False)  # fmt: skip
    assert parse("--out", "o") == RunConfig(out="o")


def test_docstrings_are_the_help_with_defaults():
    assert field_docs(RunConfig)["limit"] == "Stop after this long; None: no limit."
    text = config_parser(
        RunConfig, prog="run", description="a run", skip=("filled_in",)
    ).format_help()
    assert "Layer widths. (default: 64,32)" in text
    assert "A rate, 50 % by default. (default: 0.5)" in text
    assert "--filled-in" not in text


def test_usage_errors_exit_with_status_2(capsys):
    for argv in ([], ["--out", "o", "--steps", "many"], ["--out", "o", "--hidden", "8,x"]):
        with pytest.raises(SystemExit) as stop:
            parse(*argv)
        assert stop.value.code == 2
    assert "comma-separated int" in capsys.readouterr().err


def test_validation_of_the_dataclass_reaches_the_caller():
    with pytest.raises(ValueError, match="steps must be at least 1"):
        parse("--out", "o", "--steps", "0")


def test_required_aliases_and_converters():
    with pytest.raises(SystemExit):
        parse("--out", "o", required=("steps",))
    config = parse("--out", "o", "--n", "3", aliases={"steps": ["--n"]})
    assert config.steps == 3
    config = parse("--out", "o", "--out", "O", converters={"out": str.lower})
    assert config.out == "o"


def test_a_field_without_a_converter_is_named():
    @dataclass
    class Odd:
        pairs: dict[str, int] = field(default_factory=dict)

    with pytest.raises(TypeError, match=r"Odd\.pairs"):
        config_parser(Odd, prog="odd", description="")
    assert config_parser(Odd, prog="odd", description="", skip=("pairs",))


def test_seed_everything_repeats_every_global_generator():
    torch = pytest.importorskip("torch")

    def draws() -> tuple[float, float, float]:
        return random.random(), float(np.random.random()), float(torch.rand(1))

    seed_everything(5)
    first = draws()
    seed_everything(5)
    assert draws() == first
    seed_everything(6)
    assert draws() != first


def test_commands_parse_through_the_one_helper():
    collect = collect_args(["--agents", "abyssal,one_step:tera=false,switching=false",
                            "--format", "gen9ou", "--battles", "3", "--out", "d", "--self-play",
                            "--no-progress"])  # fmt: skip
    assert collect == CollectConfig(
        agents=["abyssal", "one_step:tera=false,switching=false"], battle_format="gen9ou",
        battles=3, out="d", self_play=True, progress=False,
    )  # fmt: skip
    with pytest.raises(SystemExit):
        collect_args(["--agents", "abyssal"])  # --battles and --out are required
    distill = distill_args(["--data", "a,b", "--out", "ck", "--hidden", "32", "--no-residual"])
    assert distill == DistillConfig(data="a,b", out="ck", hidden=(32,), residual=False)
    ppo = ppo_parser().parse_args(["--format", "gen8randombattle", "--max-minutes", "2"])
    assert ppo.battle_format == "gen8randombattle" and ppo.max_minutes == 2.0
