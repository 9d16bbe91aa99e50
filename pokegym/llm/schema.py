"""The small part of JSON Schema the LLM layer needs: validation and finite schemas.

Answer schemas here are plain: objects with ``properties``/``required``, strings,
integers, numbers, booleans, arrays and ``enum``/``const``. :func:`validate` checks an
instance against such a schema and names the first problem; :func:`finite_json_choices`
lists every instance of a schema that has finitely many (every value an enum, a const
or a boolean), which lets a local model be constrained to exactly those answers.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def validate(instance: Any, schema: Mapping[str, Any], path: str = "$") -> str | None:
    """None when ``instance`` satisfies ``schema``, else a sentence saying what is wrong."""
    if "const" in schema and instance != schema["const"]:
        return f"{path} must be {schema['const']!r}"
    if "enum" in schema and instance not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        return f"{path} must be one of {allowed}; got {instance!r}"
    kind = schema.get("type")
    if kind is not None:
        types = _TYPES.get(kind)
        if types is None:
            return f"unsupported schema type {kind!r}"
        if isinstance(instance, bool) and kind in ("integer", "number"):
            return f"{path} must be {kind}, got a boolean"
        if not isinstance(instance, types):
            return f"{path} must be {kind}, got {type(instance).__name__}"
    if isinstance(instance, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in instance:
                return f"{path} lacks the required key {name!r}"
        if schema.get("additionalProperties") is False:
            extra = sorted(set(instance) - set(properties))
            if extra:
                return f"{path} has unexpected keys {extra}"
        for name, sub in properties.items():
            if name in instance:
                problem = validate(instance[name], sub, f"{path}.{name}")
                if problem:
                    return problem
    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            problem = validate(item, schema["items"], f"{path}[{i}]")
            if problem:
                return problem
    if isinstance(instance, int | float) and not isinstance(instance, bool):
        if "minimum" in schema and instance < schema["minimum"]:
            return f"{path} must be at least {schema['minimum']}"
        if "maximum" in schema and instance > schema["maximum"]:
            return f"{path} must be at most {schema['maximum']}"
    return None


def finite_json_choices(schema: Mapping[str, Any], limit: int = 1024) -> list[Any] | None:
    """Every instance of ``schema`` when there are at most ``limit``, else None.

    Objects list their properties in schema order, all of them present (optional ones
    too: a constrained answer always gives every key).
    """
    if "const" in schema:
        return [schema["const"]]
    if "enum" in schema:
        return list(schema["enum"])[: limit + 1] if len(schema["enum"]) <= limit else None
    kind = schema.get("type")
    if kind == "boolean":
        return [True, False]
    if kind == "null":
        return [None]
    if kind == "object":
        properties = schema.get("properties") or {}
        if not properties:
            return None
        names, values = [], []
        for name, sub in properties.items():
            choices = finite_json_choices(sub, limit)
            if choices is None:
                return None
            names.append(name)
            values.append(choices)
        count = 1
        for v in values:
            count *= len(v)
            if count > limit:
                return None
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]
    return None
