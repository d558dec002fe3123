"""proposal.md: YAML front matter (description, axes, parent) + a free-text rationale."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from harness.errors import UserError
from harness.fileio import read_text, split_front_matter, write_text_atomic
from harness.schemas import load_schema, validate_instance

# The intervention axes, defined once: the enum of schemas/proposal_front_matter.schema.json.
AXES: tuple[str, ...] = tuple(load_schema("proposal_front_matter")["properties"]["axes"]["items"]["enum"])
PLACEHOLDER = "(one line: what this iteration changes)"


def split(text: str) -> tuple[dict | None, str]:
    meta, body = split_front_matter(text, "proposal.md")
    return ((meta or {}) if text.startswith("---") else None), body


def problems(path: Path) -> list[dict]:
    """Schema problems of proposal.md's front matter, as check violations."""
    if not path.exists():
        return [{"code": "proposal", "path": "proposal.md", "message": "proposal.md is missing", "hint": "run `architect stage` again"}]
    try:
        meta, _ = split(read_text(path, "proposal"))
    except UserError as exc:
        yaml_syntax = "not valid YAML" in exc.message
        return [{"code": "proposal", "path": "proposal.md", "message": exc.message,
                 "hint": 'put a value holding ": " or " #" in double quotes (description: "...")' if yaml_syntax
                 else None}]
    if meta is None:
        return [{"code": "proposal", "path": "proposal.md", "message": "proposal.md has no YAML front matter", "hint": "start it with ---, description, axes, parent, ---"}]
    return [
        {"code": "proposal", "path": "proposal.md", "message": f"front matter {p}", "hint": "axes come from: " + ", ".join(AXES)}
        for p in validate_instance("proposal_front_matter", meta)
    ]


def read(path: Path) -> tuple[dict, str]:
    meta, body = split(read_text(path, "proposal")) if path.exists() else (None, "")
    return meta or {}, body


def salvage(path: Path) -> tuple[dict, str | None]:
    """What can be read of proposal.md's front matter whatever state it is in, and the
    problem when it is not valid YAML: the `description:` line as text and the known
    axes of an `axes: [...]` line (for discard, which must always work)."""
    try:
        return read(path)[0], None
    except UserError as exc:
        problem = exc.message
    try:
        text = path.read_bytes()[:65536].decode("utf-8", errors="replace")
    except OSError:
        return {}, problem
    head = text.split("\n---", 1)[0]
    meta: dict = {}
    description = re.search(r"^description:[ \t]*(.*)$", head, re.M)
    if description:
        meta["description"] = description.group(1).strip().strip("'\"")[:500]
    axes = re.search(r"^axes:[ \t]*\[(.*)\]", head, re.M)
    if axes:
        meta["axes"] = [a for a in (x.strip().strip("'\"") for x in axes.group(1).split(",")) if a in AXES]
    return meta, problem


class _FrontMatterDumper(yaml.SafeDumper):
    """Puts a string holding `: ` or ` #` in double quotes, the form the proposer's skill asks for."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if ": " in value or " #" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontMatterDumper.add_representer(str, _string)


def write(path: Path, meta: dict, body: str) -> None:
    front = yaml.dump(meta, Dumper=_FrontMatterDumper, sort_keys=False, allow_unicode=True).strip()
    write_text_atomic(path, f"---\n{front}\n---\n{body}")


def template(parent: int | None) -> tuple[dict, str]:
    meta = {"description": PLACEHOLDER, "axes": [], "parent": parent}
    body = "\n## Rationale\n\n(why this change should raise the primary metric; what was observed)\n"
    return meta, body
