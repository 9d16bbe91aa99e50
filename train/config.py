"""Run configurations on the command line, and seeding, for every command of ``train``.

A command's configuration is one dataclass whose fields carry docstrings (the string
literal after each field). :func:`config_parser` turns it into an ``argparse`` parser —
one ``--flag`` per field, the docstring as help — and :func:`parse_config` parses argv
into an instance, so a field added to the dataclass is an option at once::

    @dataclass(frozen=True)
    class RunConfig:
        out: str
        \"\"\"Output folder.\"\"\"
        steps: int = 1000
        \"\"\"Environment steps.\"\"\"

    config = parse_config(RunConfig, ["--out", "runs/x"], prog="pokegym run")

Flags are the field names with ``-`` for ``_``. A field without a default (or listed in
``required``) is a required option; ``bool`` fields get ``--flag``/``--no-flag``;
``X | None`` fields take an ``X``; ``tuple[int, ...]`` and ``tuple[float, ...]`` fields
take comma-separated values. Fields that are not options (filled in by the program) are
listed in ``skip``; anything else takes a function in ``converters``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import random
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

_SCALARS: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "str": str}


def seed_everything(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and torch (CPU and CUDA).

    torch is seeded only when it is installed; commands that do not train a network run
    without it. Every random draw a command makes should still come from generators it
    seeds explicitly (``np.random.default_rng(seed)``): this covers the libraries that
    draw from the global ones.
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)


def field_docs(cls: type) -> dict[str, str]:
    """The docstring of each field of the dataclass ``cls`` (the string after it)."""
    docs: dict[str, str] = {}
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return docs
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
        ):
            docs[node.target.id] = " ".join(str(after.value.value).split())
    return docs


def _comma_separated(kind: Callable[[str], Any]) -> Callable[[str], tuple[Any, ...]]:
    def parse(text: str) -> tuple[Any, ...]:
        try:
            return tuple(kind(part) for part in text.split(",") if part.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {kind.__name__} values, got {text!r}"
            ) from None

    parse.__name__ = f"comma-separated {kind.__name__}"
    return parse


def _converter(annotation: str) -> Callable[[str], Any] | None:
    """The argparse ``type`` for a field annotation (as a string: annotations are lazy)."""
    text = annotation.replace(" ", "")
    if text in _SCALARS:
        return _SCALARS[text]
    optional = re.fullmatch(r"(\w+)\|None|None\|(\w+)", text)
    if optional:
        return _SCALARS.get(optional[1] or optional[2])
    sequence = re.fullmatch(r"tuple\[(\w+),\.\.\.\]", text)
    if sequence and sequence[1] in _SCALARS:
        return _comma_separated(_SCALARS[sequence[1]])
    return None


def config_parser(
    cls: type,
    *,
    prog: str,
    description: str,
    aliases: Mapping[str, Sequence[str]] | None = None,
    converters: Mapping[str, Callable[[str], Any]] | None = None,
    skip: Sequence[str] = (),
    required: Sequence[str] = (),
    show_defaults: bool = True,
) -> argparse.ArgumentParser:
    """An argument parser with one option per field of the dataclass ``cls``.

    Args:
        aliases: more flags for a field (``{"battle_format": ["--format"]}``).
        converters: the argparse ``type`` of fields the annotation does not say.
        skip: fields that are not options.
        required: fields with a default that the command line must still give.
        show_defaults: end each help text with the field's default.

    Raises:
        TypeError: a field's type has no converter (add one to ``converters``).
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    aliases = aliases or {}
    converters = converters or {}
    docs = field_docs(cls)
    parser = argparse.ArgumentParser(prog=prog, description=description)
    for f in dataclasses.fields(cls):
        if f.name in skip or not f.init:
            continue
        names = ["--" + f.name.replace("_", "-"), *aliases.get(f.name, ())]
        default = _default(f)
        must = default is dataclasses.MISSING or f.name in required
        help_text = docs.get(f.name, "")
        if show_defaults and not must:
            help_text = f"{help_text} (default: {_shown(default)})"
        help_text = help_text.replace("%", "%%")
        annotation = str(f.type)
        if f.name not in converters and annotation in ("bool", "<class 'bool'>"):
            parser.add_argument(
                *names, dest=f.name, action=argparse.BooleanOptionalAction,
                default=default, help=help_text,
            )  # fmt: skip
            continue
        kind = converters.get(f.name) or _converter(annotation)
        if kind is None:
            raise TypeError(
                f"{cls.__name__}.{f.name}: no command-line converter for {annotation}; "
                "pass one in converters= or list the field in skip="
            )
        if must:
            parser.add_argument(*names, dest=f.name, type=kind, required=True, help=help_text)
        else:
            parser.add_argument(*names, dest=f.name, type=kind, default=default, help=help_text)
    return parser


def parse_config(
    cls: type[T],
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    aliases: Mapping[str, Sequence[str]] | None = None,
    converters: Mapping[str, Callable[[str], Any]] | None = None,
    skip: Sequence[str] = (),
    required: Sequence[str] = (),
    show_defaults: bool = True,
) -> T:
    """Parse ``argv`` (None: ``sys.argv[1:]``) into an instance of the dataclass ``cls``.

    A usage error exits with status 2, as argparse does; errors the dataclass raises
    itself (``__post_init__`` validation) reach the caller.
    """
    parser = config_parser(
        cls, prog=prog, description=description, aliases=aliases, converters=converters,
        skip=skip, required=required, show_defaults=show_defaults,
    )  # fmt: skip
    args = parser.parse_args(list(argv) if argv is not None else None)
    return cls(**vars(args))


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


__all__ = ["config_parser", "field_docs", "parse_config", "seed_everything"]
