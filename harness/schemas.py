"""Load the JSON Schemas in `schemas/` and validate documents against them.

Every schema is Draft 2020-12. Schemas may `$ref` each other by file name
(e.g. `"$ref": "graph.schema.json#/$defs/edge"`); they are resolved through one
`referencing.Registry` built from the whole folder.
"""

from __future__ import annotations

import copy
import hashlib
import json
import marshal
import math
import os
import re
import sys
import threading
from pathlib import Path
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from harness import SCHEMAS_DIR

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

# jsonschema and referencing are imported when a schema is first compiled or
# an error report is needed, not at import: a command that only reads files
# starts faster without them.

_lock = threading.Lock()


@lru_cache(maxsize=1)
def finite_draft202012():
    """Draft 2020-12 in which a "number" is finite: JSON has no NaN or infinities, so a
    bounded number can never be NaN or .inf, whatever produced the document. Every
    schema check of the harness uses this class (built on first use: jsonschema is
    not imported at start-up)."""
    from jsonschema import Draft202012Validator, validators

    def finite_number(checker, instance) -> bool:
        return Draft202012Validator.TYPE_CHECKER.is_type(instance, "number") and (
            not isinstance(instance, float) or math.isfinite(instance))

    return validators.extend(
        Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine("number", finite_number))


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
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

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
    draft = finite_draft202012()
    with _lock:
        schema = load_schema(name)
        draft.check_schema(schema)
        return draft(schema, registry=_registry())


_DRAFT2020_ONLY = ("prefixItems", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor",
                   "dependentSchemas", "dependentRequired", "$anchor")


def compile_fast(schema: dict[str, Any], handlers: dict | None = None, fallback=None):
    """A fast validity test `f(obj) -> bool` for a schema.

    fastjsonschema compiles the schema to Python code (~20x faster than
    jsonschema); it implements draft-07, so schemas using 2020-12-only keywords
    fall back to `fallback` (default: jsonschema on the schema alone), and so do
    `$ref`s into other documents unless `handlers` fetch them. Only for the
    yes/no answer: error reports always come from jsonschema.
    """
    def slow():
        return fallback or finite_draft202012()(schema).is_valid

    text = json.dumps(schema)
    external = '"$ref": "http' in text or _EXTERNAL_REF.search(text)
    if any(f'"{kw}"' in text for kw in _DRAFT2020_ONLY) or (external and handlers is None):
        return slow()
    draft7 = copy.deepcopy({k: v for k, v in schema.items() if k != "$schema"})  # compile rewrites $refs in place
    draft7["$schema"] = "http://json-schema.org/draft-07/schema#"
    try:
        compiled = _compile_cached(draft7, handlers)
    except Exception:  # a construct fastjsonschema cannot compile: use jsonschema
        return slow()

    return _predicate(compiled)


_EXTERNAL_REF = re.compile(r'"\$ref": "([^"#]+\.json)[#"]')


def _from_folder(uri: str) -> dict:
    """fastjsonschema's handler for a `$ref` to another schema in schemas/ (by file name)."""
    return copy.deepcopy(load_schema(uri.rsplit("/", 1)[-1].split("#", 1)[0]))


_FOLDER_HANDLERS = {"": _from_folder, "http": _from_folder, "https": _from_folder}


def compiled_schema_dir() -> Path:
    """Where compiled schema checks are kept between processes:
    `$ARCHITECT_CACHE_DIR/compiled-schemas` (default `~/.cache/architect/compiled-schemas`)."""
    from harness.fileio import cache_home

    return cache_home() / "compiled-schemas"


def _compile_cached(definition: dict, handlers: dict | None = None):
    """fastjsonschema's validate function for `definition`. Generating and
    compiling its code costs a command a noticeable part of its start-up, so
    the code is kept as a module in `compiled_schema_dir()` (named by a hash of
    the definition, the documents it refers to, the fastjsonschema and Python
    versions) as marshalled bytecode, and loaded from there next time. Any
    failure to read or write the folder falls back to compiling in memory."""
    import fastjsonschema

    referenced: dict[str, Any] = {}
    pending = [definition]
    while pending:  # the documents it refers to, and those they refer to
        for ref in _EXTERNAL_REF.findall(json.dumps(pending.pop())):
            name = ref.rsplit("/", 1)[-1]
            if name not in referenced:
                referenced[name] = load_schema(name)
                pending.append(referenced[name])
    text = json.dumps([definition, referenced, fastjsonschema.VERSION, sys.version], sort_keys=True)
    path = compiled_schema_dir() / f"schema_{hashlib.sha256(text.encode()).hexdigest()[:24]}.bin"
    try:
        if path.is_file():
            entry, code = marshal.loads(path.read_bytes())
        else:
            source = fastjsonschema.compile_to_code(copy.deepcopy(definition), handlers=handlers or {},
                                                    use_default=False, use_formats=False)
            entry = re.search(r"^def (\w+)\(", source, re.M).group(1)  # the root schema's function comes first
            code = compile(source, str(path), "exec")
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
            tmp.write_bytes(marshal.dumps((entry, code)))
            tmp.replace(path)
        namespace: dict = {}
        exec(code, namespace)  # noqa: S102 - fastjsonschema's generated code, from our own schemas
        return namespace[entry]
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        return fastjsonschema.compile(copy.deepcopy(definition), handlers=handlers or {},
                                      use_default=False, use_formats=False)


@lru_cache(maxsize=None)
def fast_is_valid(name: str):
    """`compile_fast` for a schema in schemas/, its `$ref`s to the others
    resolved from the folder (cached). Agrees with `validator(name).is_valid`
    on every document of finite numbers (tests/artifacts/test_schemas_fast.py)."""

    def slow(obj) -> bool:
        return validator(name).is_valid(obj)

    with _lock:
        return compile_fast(load_schema(name), _FOLDER_HANDLERS, slow)


@lru_cache(maxsize=None)
def fast_subschema_is_valid(name: str, pointer: str):
    """A fast validity test for one part of a schema in schemas/, e.g.
    `("patch", "/$defs/op/allOf/3/then")`; `$ref`s into other files in schemas/
    are resolved from the folder. Yes/no only, like `compile_fast`: error
    reports come from `iter_subschema_errors`."""
    schema = load_schema(name)
    root = copy.deepcopy({"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#" + pointer,
                          **{k: v for k, v in schema.items() if k in ("$id", "$defs")}})  # compile rewrites $refs
    text = json.dumps(root)
    referenced = {ref.split("#", 1)[0] for ref in _EXTERNAL_REF.findall(text)}
    text += "".join(json.dumps(load_schema(f)) for f in referenced)
    if any(f'"{kw}"' in text for kw in _DRAFT2020_ONLY):
        return subschema_validator(name, pointer).is_valid

    with _lock:
        compiled = _compile_cached(root, _FOLDER_HANDLERS)

    return _predicate(compiled)


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
    """All schema violations of `obj` as `"<json pointer>: <message>"` (empty if valid).
    The compiled yes/no check answers first; jsonschema (slow to import and to
    build) is only asked to explain a document that fails it."""
    if fast_is_valid(name)(obj) and _all_finite(obj):
        return []
    return [f"{pointer or '/'}: {message}" for pointer, message in iter_schema_errors(name, obj)]


def _all_finite(obj: Any) -> bool:
    """No NaN or infinity anywhere in `obj` (the compiled check does not test
    what `finite_draft202012` does)."""
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_all_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_all_finite(v) for v in obj)
    return True


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
    return finite_draft202012()({"$ref": ref}, registry=_registry())


def iter_subschema_errors(name: str, pointer: str, obj: Any):
    """Like iter_schema_errors, against a part of a schema."""
    errors = sorted(subschema_validator(name, pointer).iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        error = _most_specific(error)
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        yield json_pointer(error.absolute_path), message


def _predicate(compiled):
    """A fastjsonschema validate function as a yes/no test."""
    import fastjsonschema

    def is_valid(obj) -> bool:
        try:
            compiled(obj)
            return True
        except fastjsonschema.JsonSchemaException:
            return False

    return is_valid
