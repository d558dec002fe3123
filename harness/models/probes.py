"""Probe histories for checking a context harness, generated from the history
format its executor declares (`schemas/context_history_<executor>.schema.json`,
else the generic `context_history.schema.json`): empty, one round, typical,
long, and rounds whose values take the odd shapes the format allows (nulls,
empty and very long strings, non-ASCII text, empty and long lists, extreme
numbers, every type where any value is allowed)."""

from __future__ import annotations

import random
from typing import Any

from harness.schemas import SchemaNotFound, load_schema, validate_instance

LONG_ROUNDS = 200
ODD_SEEDS = (1, 2, 3, 4)
_ANY_TYPES = ["null", "boolean", "integer", "number", "string", "array", "object"]
_ODD_STRINGS = ["", " ", "é ü 中文 ☃ \u200b", "line one\nline two\t\"quoted\" {braces} %s %d \\", "x" * 2000]


def history_schema_name(executor: str | None) -> str:
    """The schema declaring `executor`'s history format (the generic one if it declares none)."""
    if executor:
        try:
            load_schema(f"context_history_{executor}")
            return f"context_history_{executor}"
        except SchemaNotFound:
            pass
    return "context_history"


def probe_histories(executor: str | None) -> list[tuple[str, list]]:
    """`(label, history)` pairs, every history valid against the executor's schema."""
    name = history_schema_name(executor)
    schema = load_schema(name)
    item = schema["items"]
    typical = random.Random(0)
    probes = [("an empty history", []),
              ("one round", _rounds(item, 1, typical, odd=False)),
              ("a typical history of 5 rounds", _rounds(item, 5, typical, odd=False)),
              (f"a long history of {LONG_ROUNDS} rounds", _rounds(item, LONG_ROUNDS, typical, odd=False))]
    for seed in ODD_SEEDS:
        probes.append((f"rounds with odd values (seed {seed})", _rounds(item, 1 + seed * 3, random.Random(seed), odd=True)))
    return [(label, history) for label, history in probes if not validate_instance(name, history)]


def _rounds(item: dict, count: int, rng: random.Random, odd: bool) -> list[dict]:
    rounds = []
    for number in range(1, count + 1):
        value = _sample(item, rng, odd)
        if "round" in item.get("properties", {}):
            value["round"] = number
        rounds.append(value)
    return rounds


def _sample(schema: Any, rng: random.Random, odd: bool, depth: int = 0) -> Any:
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return _sample(rng.choice(schema[key]), rng, odd, depth)
    types = schema.get("type", _ANY_TYPES if not ({"properties", "items"} & set(schema)) else None)
    if types is None:
        types = ["object"] if "properties" in schema else ["array"]
    types = [types] if isinstance(types, str) else list(types)
    if depth >= 3:  # odd values stay shallow: scalars below three levels
        types = [t for t in types if t not in ("array", "object")] or ["null"]
    kind = rng.choice(types) if odd else next((t for t in types if t != "null"), types[0])
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 10 ** 9 if odd else 40)
        value = rng.choice([low, high, rng.randint(int(low), int(min(high, low + 50)))]) if odd else \
            rng.randint(int(low), int(min(high, low + 30)))
        return value if kind == "integer" or not odd else value + 0.5 * (value < high)
    if kind == "string":
        if odd:
            return rng.choice(_ODD_STRINGS)
        return rng.choice(schema.get("examples") or ["some text"])
    if kind == "array":
        length = rng.choice([0, 1, 40]) if odd else rng.randint(1, 4)
        return [_sample(schema.get("items", {} if odd else {"type": "string"}), rng, odd, depth + 1)
                for _ in range(length)]
    properties = schema.get("properties")
    if properties is None:  # an object with any content
        return {"note": rng.choice(_ODD_STRINGS), "nested": {"list": [1, None, "x"]}} if odd else {}
    required = set(schema.get("required", []))
    return {key: _sample(sub, rng, odd, depth + 1) for key, sub in properties.items()
            if key in required or not odd or rng.random() < 0.5}
