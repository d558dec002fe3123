"""File I/O every part shares: crash-safe writes (temp file in the same folder,
fsync, os.replace — a reader sees the old file or the new one, never half of
one) and the one hardened reader per format (JSON, JSONL, YAML) every boundary
uses. The readers treat every file as hostile: strict UTF-8 (binary input is
refused), nesting depth and integer size bounded, NaN/Infinity, lone UTF-16
surrogates, duplicate keys and (YAML) anchors refused; every error is one
bounded line naming the file and, where known, line and column."""

from __future__ import annotations

import functools
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.roots import cache_home, data_home  # noqa: F401 - the folders plug-ins and readers name (defined in roots)

MAX_DEPTH = 100               # nesting of arrays/objects (mappings/sequences) in any input file
MAX_INT_DIGITS = 40           # larger integers are refused (no format here needs them)
MAX_MESSAGE_CHARS = 300       # error messages are cut to this length


class InputError(UserError, ValueError):
    """A file (or text) that cannot be read as the expected format; names the place.
    (Also a ValueError, so callers that tolerate a damaged file keep doing so.)"""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | None = None, details: Any = None, exit_code: int = 2):
        super().__init__(shorten(message), details=details, exit_code=exit_code)
        self.path, self.line, self.column = path, line, column


def shorten(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` cut to `limit` characters (an ellipsis says so); never a huge error line."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 15] + f"... (+{len(text) - limit + 15} chars)"


def _fail(error: type[UserError], message: str, path: str | None, line: int | None = None,
          column: int | None = None) -> UserError:
    """An instance of `error` (any UserError subclass) carrying where the problem is."""
    exc = error(shorten(" ".join(str(message).split())))
    exc.path, exc.line, exc.column = path, line, column
    return exc


def _where(source: str, line: int | None = None, column: int | None = None) -> str:
    return source + (f":{line}" if line else "") + (f":{column}" if line and column else "")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _shifted(text: str, offset: int, first_line: int) -> tuple[int, int]:
    line, column = _line_col(text, offset)
    return line + first_line - 1, column


def decode_text(data: bytes | str, source: str, what: str = "file", error: type[UserError] = InputError) -> str:
    """Strict UTF-8 text (a BOM is dropped); binary content is refused with the byte offset."""
    if isinstance(data, str):
        text = data
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line, column = _line_col(data[: exc.start].decode("utf-8", "replace"), exc.start)
            raise _fail(error, f"{_where(source, line, column)}: {what} is not UTF-8 text (binary content at byte "
                        f"{exc.start})", source, line, column) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        line, column = _line_col(text, nul)
        raise _fail(error, f"{_where(source, line, column)}: {what} contains a NUL byte (binary content)",
                    source, line, column)
    return text


def read_text(path: str | os.PathLike, what: str = "file", error: type[UserError] = InputError) -> str:
    """A text file's content; missing, a folder, unreadable or binary: one-line InputError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise _fail(error, f"{p}: {what} not found; check the path", str(p)) from None
    except IsADirectoryError:
        raise _fail(error, f"{p}: is a folder, expected a {what}", str(p)) from None
    except OSError as exc:
        raise _fail(error, f"{p}: cannot read {what}: {exc.strerror or exc}", str(p)) from None
    return decode_text(data, str(p), what, error)


# -- writing -------------------------------------------------------------------

def write_bytes_atomic(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: Path, obj: Any, indent: int | None = 2) -> None:
    write_text_atomic(path, json.dumps(obj, indent=indent, sort_keys=True, default=str) + "\n")


# -- JSON ----------------------------------------------------------------------

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")
_LONG_INT = re.compile(r"(?<![\w.\"])-?\d{%d,}" % (MAX_INT_DIGITS + 1))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _Refused(ValueError):
    """Raised by the parser hooks; carries the reason (and a needle to locate it)."""

    def __init__(self, reason: str, needle: str | None = None):
        super().__init__(reason)
        self.reason, self.needle = reason, needle


def _no_duplicates(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {shorten(json.dumps(key), 80)} (each key may appear once "
                               "per object)", needle=json.dumps(key))
            seen.add(key)
    return obj


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"integer with {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {shorten(text, 40)} is out of range (not a finite double)", needle=text)
    return value


def _no_constant(name: str):
    raise _Refused(f"{name} is not valid JSON (only finite numbers are allowed)", needle=name)


def _too_deep(text: str) -> int | None:
    """Offset where nesting first exceeds MAX_DEPTH (brackets inside strings ignored), or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    stripped = _JSON_STRING.sub(lambda m: " " * len(m.group(0)), text) if '"' in text else text
    level = 0
    for match in _BRACKET.finditer(stripped):
        level += 1 if match.group(0) in "[{" else -1
        if level > MAX_DEPTH:
            return match.start()
    return None


def _has_lone_surrogate(obj, depth: int = 0) -> bool:
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(obj, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v, depth + 1) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_has_lone_surrogate(v, depth + 1) for v in obj)
    return False


def parse_json(data: str | bytes, source: str, what: str = "JSON", error: type[UserError] = InputError,
               *, first_line: int = 1) -> Any:
    """Parse one JSON document; anything a boundary must not accept is an `error` naming
    `source:line:col` (`first_line`: the line number the text starts at, for JSONL rows)."""
    text = decode_text(data, source, what, error)
    _line_col = lambda text, offset: _shifted(text, offset, first_line)  # noqa: E731
    at = _too_deep(text)
    if at is not None:
        line, column = _line_col(text, at)
        raise _fail(error, f"{_where(source, line, column)}: {what} is nested more than {MAX_DEPTH} levels deep",
                    source, line, column)
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_int=_bounded_int,
                         parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        line = exc.lineno + first_line - 1
        raise _fail(error, f"{_where(source, line, exc.colno)}: malformed JSON in {what}: {exc.msg}",
                    source, line, exc.colno) from None
    except _Refused as exc:
        line = column = None
        match = _LONG_INT.search(_JSON_STRING.sub(lambda m: " " * len(m.group(0)), text)) \
            if exc.needle is None else None
        offset = match.start() if match else _second_occurrence(text, exc.needle)
        if offset is not None:
            line, column = _line_col(text, offset)
        raise _fail(error, f"{_where(source, line, column)}: {what}: {exc.reason}",
                    source, line, column) from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise _fail(error, f"{source}: {what} cannot be parsed: {type(exc).__name__}: {exc}", source) from None
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(obj):
        match = _SURROGATE_ESCAPE.search(text)
        line, column = _line_col(text, match.start())
        raise _fail(error, f"{_where(source, line, column)}: {what} holds a lone UTF-16 surrogate escape "
                    f"({match.group(0)}), which is not a character", source, line, column)
    return obj


def _second_occurrence(text: str, needle: str | None) -> int | None:
    """Where a duplicate key (or a refused literal) appears, for the error's line and column."""
    if not needle:
        return None
    first = text.find(needle)
    if first < 0:
        return None
    second = text.find(needle, first + len(needle))
    key_like = needle.startswith('"')
    return second if key_like and second >= 0 else first


def read_json(path: str | os.PathLike, what: str = "JSON file", error: type[UserError] = InputError) -> Any:
    """Read and parse a JSON file with `parse_json`'s guarantees."""
    p = Path(path)
    return parse_json(read_text(p, what, error), str(p), what, error)


def read_jsonl(path: str | os.PathLike, what: str = "JSONL file") -> list[Any]:
    """Rows of a JSONL file; a missing file is empty; a bad line names its number."""
    path = Path(path)
    if not path.is_file():
        return []
    text = read_text(path, what)
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            rows.append(parse_json(line, str(path), what, first_line=number))
    return rows


# -- YAML ----------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _strict_yaml_loader():
    """The YAML loader class (built on first use: importing yaml is not free)."""
    import yaml

    class _StrictYamlLoader(yaml.SafeLoader):
        """SafeLoader that builds only JSON-like values: no duplicate keys, anchors,
        aliases, binary or set tags; bounded nesting and integers; finite floats;
        timestamps stay strings."""

        def __init__(self, stream):
            super().__init__(stream)
            self._depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise yaml.composer.ComposerError(None, None, "anchors and aliases are not supported",
                                                  self.peek_event().start_mark)
            event = self.peek_event()
            if getattr(event, "anchor", None):
                raise yaml.composer.ComposerError(None, None, "anchors and aliases are not supported", event.start_mark)
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                                                      event.start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError(None, None, "a mapping key must be a scalar",
                                                            key_node.start_mark) from None
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {shorten(repr(key), 80)} (first at line {seen[key].line + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_int(self, node):
            digits = sum(ch.isalnum() for ch in str(node.value).lower().removeprefix("0x").removeprefix("0o")
                         .removeprefix("0b"))
            if digits > MAX_INT_DIGITS:
                raise yaml.constructor.ConstructorError(None, None, f"integer with {digits} digits "
                                                        f"(at most {MAX_INT_DIGITS})", node.start_mark)
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node):
            value = super().construct_yaml_float(node)
            if not math.isfinite(value):
                raise yaml.constructor.ConstructorError(None, None, f"number {shorten(node.value, 40)} is not finite "
                                                        "(.nan and .inf are not accepted)", node.start_mark)
            return value

        def construct_timestamp_text(self, node):
            return self.construct_scalar(node)

        def construct_refused(self, node):
            raise yaml.constructor.ConstructorError(None, None, f"tag {node.tag} is not accepted (plain JSON-like "
                                                    "values only)", node.start_mark)

    _StrictYamlLoader.add_constructor("tag:yaml.org,2002:int", _StrictYamlLoader.construct_yaml_int)
    _StrictYamlLoader.add_constructor("tag:yaml.org,2002:float", _StrictYamlLoader.construct_yaml_float)
    _StrictYamlLoader.add_constructor("tag:yaml.org,2002:timestamp", _StrictYamlLoader.construct_timestamp_text)
    for tag in ("binary", "set", "omap", "pairs"):
        _StrictYamlLoader.add_constructor(f"tag:yaml.org,2002:{tag}", _StrictYamlLoader.construct_refused)
    return _StrictYamlLoader


def parse_yaml(data: str | bytes, source: str, what: str = "YAML", error: type[UserError] = InputError,
               *, first_line: int = 1) -> Any:
    """Parse one YAML document with the same guarantees as `parse_json`."""
    import yaml

    text = decode_text(data, source, what, error)
    try:
        obj = yaml.load(text, Loader=_strict_yaml_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.reader.ReaderError as exc:
        line, column = _line_col(text, exc.position)
        line += first_line - 1
        raise _fail(error, f"{_where(source, line, column)}: not valid YAML in {what}: unacceptable character "
                    f"#x{ord(exc.character) if isinstance(exc.character, str) else exc.character:04x}",
                    source, line, column) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + first_line if mark else None
        column = mark.column + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise _fail(error, f"{_where(source, line, column)}: not valid YAML in {what}: {problem}",
                    source, line, column) from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise _fail(error, f"{source}: {what} cannot be parsed: {type(exc).__name__}: {exc}", source) from None
    if _has_lone_surrogate(obj):
        raise _fail(error, f"{source}: {what} holds a lone UTF-16 surrogate escape, which is not a character", source)
    return obj


def read_yaml(path: str | os.PathLike, what: str = "YAML file", error: type[UserError] = InputError) -> Any:
    """Read and parse a YAML file with `parse_yaml`'s guarantees."""
    p = Path(path)
    return parse_yaml(read_text(p, what, error), str(p), what, error)


def split_front_matter(text: str, source: str) -> tuple[Any, str]:
    """(YAML front matter between leading `---` lines, or None; the body after it) of a
    Markdown file (proposal.md, goal.md), the front matter parsed with `parse_yaml`."""
    if not text.startswith("---"):
        return None, text
    parts = text.split("\n---", 1)
    if len(parts) != 2:
        raise InputError(f"{source}: front matter opened with --- but never closed")
    meta = parse_yaml(parts[0][3:], source, "front matter", first_line=1)
    body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    return meta, body
