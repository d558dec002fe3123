"""Port types: parsing and the compatibility relation.

A port type is a string: a name (`Text`, `Observation`, `Action`, ...), a
generic (`List[T]`, `Optional[T]`, `Dict[K,V]`), a type variable (one capital
letter, optionally followed by digits: `T`, `U`, `K2`) or `Any`.

`compatible(src, dst)` answers "may a value of type src flow into a port of
type dst?":
- `Any` on either side is compatible with everything;
- a type variable on the destination binds to the source (consistently within
  one node when a `bindings` dict is shared), one on the source is unknown and
  so accepted;
- `Optional[X]` accepts `X` and `Optional[X]`; `Optional[X]` does not flow into `X`;
- generics are covariant in their arguments;
- a single `Action` is accepted where an `ActionChunk` (= `List[Action]`) is expected;
- `Int` and `Float` flow into `Number`, `Int` into `Float`.
"""

from __future__ import annotations

import re
from functools import lru_cache

TypeExpr = tuple  # (name: str, args: tuple[TypeExpr, ...])

ANY = "Any"
GENERIC_ARITY = {"List": 1, "Optional": 1, "Dict": 2}
ALIASES = {"ActionChunk": "List[Action]"}
SUPERTYPES: dict[str, frozenset[str]] = {
    "Int": frozenset({"Float", "Number"}),
    "Float": frozenset({"Number"}),
    "Bool": frozenset(),
}

_TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(\[)|(\])|(,))")
_TYPEVAR = re.compile(r"^[A-Z][0-9]*$")


class TypeSyntaxError(ValueError):
    """A port-type string that cannot be parsed."""


@lru_cache(maxsize=4096)
def is_typevar(name: str) -> bool:
    return bool(_TYPEVAR.match(name))


@lru_cache(maxsize=4096)
def has_typevars(t: TypeExpr) -> bool:
    return is_typevar(t[0]) or any(has_typevars(a) for a in t[1])


@lru_cache(maxsize=8192)
def flows(src: TypeExpr, dst: TypeExpr) -> bool:
    """`unify` for a destination without type variables (no bindings involved), cached."""
    return unify(src, dst, None)


@lru_cache(maxsize=4096)
def parse(text: str) -> TypeExpr:
    """Parse a type string into `(name, args)`; aliases are expanded."""
    if not isinstance(text, str) or not text.strip():
        raise TypeSyntaxError(f"empty or non-string type {text!r}")
    tokens = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        match = _TOKEN.match(stripped, pos)
        if not match:
            raise TypeSyntaxError(f"unexpected character {stripped[pos]!r} in type {text!r}")
        tokens.append(match.group(1) or match.group(2) or match.group(3) or match.group(4))
        pos = match.end()

    def expr(i: int) -> tuple[TypeExpr, int]:
        if i >= len(tokens) or tokens[i] in "[],":
            raise TypeSyntaxError(f"expected a type name in {text!r}")
        name = tokens[i]
        i += 1
        args: list[TypeExpr] = []
        if i < len(tokens) and tokens[i] == "[":
            i += 1
            while True:
                arg, i = expr(i)
                args.append(arg)
                if i < len(tokens) and tokens[i] == ",":
                    i += 1
                    continue
                if i < len(tokens) and tokens[i] == "]":
                    i += 1
                    break
                raise TypeSyntaxError(f"expected ',' or ']' in type {text!r}")
        if name in GENERIC_ARITY and len(args) != GENERIC_ARITY[name]:
            raise TypeSyntaxError(f"{name} takes {GENERIC_ARITY[name]} type argument(s) in {text!r}")
        if args and (name == ANY or is_typevar(name)):
            raise TypeSyntaxError(f"{name} takes no type arguments in {text!r}")
        if name in ALIASES and not args:
            return parse(ALIASES[name]), i
        return (name, tuple(args)), i

    result, end = expr(0)
    if end != len(tokens):
        raise TypeSyntaxError(f"unexpected {tokens[end]!r} after the type in {text!r}")
    return result


def format_type(t: TypeExpr) -> str:
    name, args = t
    return f"{name}[{', '.join(format_type(a) for a in args)}]" if args else name


def typevars(t: TypeExpr) -> set[str]:
    name, args = t
    found = {name} if is_typevar(name) else set()
    for arg in args:
        found |= typevars(arg)
    return found


def substitute(t: TypeExpr, bindings: dict[str, TypeExpr]) -> TypeExpr:
    name, args = t
    if not args:
        return bindings.get(name, t) if is_typevar(name) else t
    return (name, tuple(substitute(a, bindings) for a in args))


def unify(src: TypeExpr, dst: TypeExpr, bindings: dict[str, TypeExpr] | None = None) -> bool:
    """Whether src flows into dst; binds dst's type variables in `bindings`."""
    s_name, s_args = src
    d_name, d_args = dst
    if d_name == ANY or s_name == ANY:
        return True
    if not d_args and is_typevar(d_name):
        if bindings is None:
            return True
        bound = bindings.get(d_name)
        if bound is None:
            bindings[d_name] = src
            return True
        return unify(src, bound, bindings) or unify(bound, src, None)
    if not s_args and is_typevar(s_name):
        return True
    if d_name == "Optional":
        inner = s_args[0] if s_name == "Optional" else src
        return unify(inner, d_args[0], bindings)
    if s_name == "Optional":
        return False
    if d_name == "List" and s_name == "Action" and d_args[0][0] == "Action":
        return True
    if s_name == d_name and len(s_args) == len(d_args):
        return all(unify(s, d, bindings) for s, d in zip(s_args, d_args))
    if not s_args and not d_args:
        return d_name in SUPERTYPES.get(s_name, ())
    return False


@lru_cache(maxsize=8192)
def compatible(src: str, dst: str) -> bool:
    """May a value of port type `src` flow into a port of type `dst`?"""
    return unify(parse(src), parse(dst), {})


def is_list_like(t: TypeExpr) -> bool:
    return t[0] in ("List", ANY) or is_typevar(t[0])


def is_dict_like(t: TypeExpr) -> bool:
    return t[0] in ("Dict", "Map", ANY) or is_typevar(t[0])


def is_numeric(t: TypeExpr) -> bool:
    return t[0] in ("Int", "Float", "Number", ANY) or is_typevar(t[0])
