"""Load the JSON Schemas in `schemas/` and validate documents against them.

Every schema is Draft 2020-12. Schemas may `$ref` each other by file name
(e.g. `"$ref": "graph.schema.json#/$defs/edge"`); they are resolved through one
`referencing.Registry` built from the whole folder.
"""

from __future__ import annotations

import json
import math
import threading
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator as _Draft202012
from jsonschema import validators
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from harness import SCHEMAS_DIR

_lock = threading.Lock()


def _finite_number(checker, instance) -> bool:
    """JSON has no NaN or infinities: a non-finite float is not a "number" (so a
    bounded number can never be NaN or .inf, whatever produced the document)."""
    return _Draft202012.TYPE_CHECKER.is_type(instance, "number") and (
        not isinstance(instance, float) or math.isfinite(instance))


# Draft 2020-12 with finite numbers only; every schema check of the harness uses it.
Draft202012Validator = validators.extend(
    _Draft202012, type_checker=_Draft202012.TYPE_CHECKER.redefine("number", _finite_number))


class SchemaNotFound(KeyError):
    """No `schemas/<name>.schema.json` exists."""


def _schema_path(name: str):
    base = name[: -len(".schema.json")] if name.endswith(".schema.json") else name
    return SCHEMAS_DIR / f"{base}.schema.json"


def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema `schemas/<name>.schema.json` (cached; do not mutate)."""
    return _load_schema(_schema_path(name).name)


@lru_cache(maxsize=None)
def _load_schema(filename: str) -> dict[str, Any]:
    path = SCHEMAS_DIR / filename
    if not path.is_file():
        raise SchemaNotFound(f"no schema named {filename!r} (looked for {path})")
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS_DIR.glob("*.schema.json")):
        schema = load_schema(path.name)
        resource = Resource.from_contents(schema, default_specification=DRAFT202012)
        resources.append((path.name, resource))
        if "$id" in schema:
            resources.append((schema["$id"], resource))
    return Registry().with_resources(resources)


@lru_cache(maxsize=None)
def validator(name: str) -> Draft202012Validator:
    """A compiled validator for the named schema (cached, thread-safe to use)."""
    with _lock:
        schema = load_schema(name)
        Draft202012Validator.check_schema(schema)
        return Draft202012Validator(schema, registry=_registry())


_DRAFT2020_ONLY = ("prefixItems", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor",
                   "dependentSchemas", "dependentRequired", "$anchor")


def compile_fast(schema: dict[str, Any]):
    """A fast validity test `f(obj) -> bool` for a self-contained schema.

    fastjsonschema compiles the schema to Python code (~20x faster than
    jsonschema); it implements draft-07, so schemas using 2020-12-only keywords
    or external `$ref`s fall back to jsonschema. Only for the yes/no answer:
    error reports always come from jsonschema.
    """
    text = json.dumps(schema)
    if any(f'"{kw}"' in text for kw in _DRAFT2020_ONLY) or '"$ref": "http' in text or ".json#" in text:
        checker = Draft202012Validator(schema)
        return checker.is_valid
    import fastjsonschema

    draft7 = {k: v for k, v in schema.items() if k != "$schema"}
    draft7["$schema"] = "http://json-schema.org/draft-07/schema#"
    try:
        compiled = fastjsonschema.compile(draft7, use_default=False, use_formats=False)
    except Exception:  # a construct fastjsonschema cannot compile: use jsonschema
        return Draft202012Validator(schema).is_valid

    def is_valid(obj) -> bool:
        try:
            compiled(obj)
            return True
        except fastjsonschema.JsonSchemaException:
            return False

    return is_valid


@lru_cache(maxsize=None)
def fast_is_valid(name: str):
    """`compile_fast` for a schema in schemas/ (cached)."""
    with _lock:
        return compile_fast(load_schema(name))


def json_pointer(parts) -> str:
    """RFC 6901 pointer for a path of keys/indices ("" for the document root)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def iter_schema_errors(name: str, obj: Any):
    """Yield `(pointer, message)` for every schema violation, in document order."""
    errors = sorted(validator(name).iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        error = _most_specific(error)
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        yield json_pointer(error.absolute_path), message


def validate_instance(name: str, obj: Any) -> list[str]:
    """All schema violations of `obj` as `"<json pointer>: <message>"` (empty if valid)."""
    return [f"{pointer or '/'}: {message}" for pointer, message in iter_schema_errors(name, obj)]


def _most_specific(error):
    # For anyOf/oneOf the top-level message is a dump of the instance; the most
    # relevant sub-error is what a reader can act on.
    while error.context:
        error = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return error


@lru_cache(maxsize=None)
def subschema_validator(name: str, pointer: str) -> Draft202012Validator:
    """A validator for one part of a schema, e.g. `("patch", "/$defs/op")`."""
    ref = f"{_schema_path(name).name}#{pointer}"
    return Draft202012Validator({"$ref": ref}, registry=_registry())


def iter_subschema_errors(name: str, pointer: str, obj: Any):
    """Like iter_schema_errors, against a part of a schema."""
    errors = sorted(subschema_validator(name, pointer).iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        error = _most_specific(error)
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        yield json_pointer(error.absolute_path), message
