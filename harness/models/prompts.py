"""Prompt files of a candidate and `{{name}}` templates filled from input ports."""

from __future__ import annotations

import json
import re
from pathlib import Path

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class PromptError(ValueError):
    """A prompt file is missing / outside the candidate, or a template names an unknown value."""


def read_candidate_file(candidate_dir: Path | None, relative: str) -> str:
    """Text of a file inside the candidate folder (never outside it)."""
    if candidate_dir is None:
        raise PromptError(f"prompt file {relative!r} needs a candidate folder (run the graph from its folder)")
    root = Path(candidate_dir).resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise PromptError(f"prompt file {relative!r} lies outside the candidate folder")
    if not path.is_file():
        raise PromptError(f"prompt file {relative!r} not found in candidate {root}")
    return path.read_text(encoding="utf-8")


def as_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else str(value)


def placeholders(template: str) -> set[str]:
    return set(PLACEHOLDER.findall(template))


def render(template: str, values: dict, *, where: str = "template") -> str:
    """Replace every `{{name}}`; a name with no value is an error naming it."""
    missing = sorted(placeholders(template) - set(values))
    if missing:
        raise PromptError(f"{where} uses {', '.join('{{' + m + '}}' for m in missing)} but only "
                          f"{', '.join(sorted(values)) or 'nothing'} is available")
    return PLACEHOLDER.sub(lambda m: as_text(values[m.group(1)]), template)


def extract_json(text: str):
    """The JSON value in a reply: the whole text, a fenced block, or the outermost {...} / [...]."""
    candidates = [text.strip()]
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        candidates.append(fence.group(1).strip())
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            candidates.append(text[start:end + 1])
    error = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            error = error or exc
    raise ValueError(f"reply is not JSON ({error.msg if error else 'empty'})")
