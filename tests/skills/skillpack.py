"""Reading the skill pack the way the tests need it: front matter, the
`architect …` command lines and the paths each skill names."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / ".claude" / "commands"
AGENTS = ROOT / ".claude" / "agents"
ARCHITECT = COMMANDS / "architect"
VARIANTS = ("adas", "aflow", "kdloop", "random")

_FRONT = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.S)
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"`([^`]+)`")


def skill_files() -> list[Path]:
    """Every command file of the project (/architect:*, /experiment:*)."""
    return sorted(COMMANDS.rglob("*.md"))


def split(path: Path) -> tuple[dict, str]:
    match = _FRONT.match(path.read_text(encoding="utf-8"))
    assert match, f"{path}: no YAML front matter between --- lines"
    meta = yaml.safe_load(match.group(1))
    assert isinstance(meta, dict), f"{path}: front matter is not a mapping"
    return meta, match.group(2)


def code_spans(body: str) -> list[str]:
    """Fenced lines and inline code spans, in order (inline spans outside fences only)."""
    spans = []
    for block in _FENCE.findall(body):
        spans += [line.strip() for line in block.splitlines() if line.strip()]
    outside = _FENCE.sub("", body)
    spans += [" ".join(m.split()) for m in _INLINE.findall(outside)]
    return spans


def command_lines(body: str) -> list[str]:
    return [s for s in code_spans(body) if s.startswith("architect ")]


# Placeholders the skills use → dummy values (paths are created by the test).
PLACEHOLDERS = {
    "$run": "r1", "$candidate": "seeds/babyai", "$tier": "smoke", "$variant": "kdloop", "$executor": "babyai",
    "$staging": "runs/r1/staging/1", "STAGING": "runs/r1/staging/1",
    "S_k": "runs/r1/staging/1-1", "S_1": "runs/r1/staging/1-1", "S_2": "runs/r1/staging/1-2",
    "S_3": "runs/r1/staging/1-3", "S_best": "runs/r1/staging/1-1",
    "EXECUTOR": "babyai", "NODE": "act", "N": "1", "P": "0", "k": "1", "L": "1", "RUN_DIR": "runs/r1",
    "OPTIONS": "",  # the loop's options (--max-iterations N, --tier T): none
}


def substitute(line: str, values: dict[str, str] | None = None) -> list[str]:
    """argv of a skill's command line with its placeholders replaced (whole
    tokens, or path segments of tokens holding a '/' or starting with '$')."""
    values = PLACEHOLDERS if values is None else values
    out = []
    for token in shlex.split(line):
        if token == "OPTIONS":  # stands for several words, or none
            out += shlex.split(values.get(token, ""))
            continue
        for name in sorted(values, key=len, reverse=True):
            if token == name or "/" in token or token.startswith("$"):
                token = re.sub(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_0-9])", values[name], token)
        out.append(token)
    return out


def named_paths(body: str) -> list[str]:
    """Repository or run paths a skill names in code spans."""
    roots = (".claude/", "schemas/", "harness/", "executors/", "seeds/", "docs/", "runs/", "RUN_DIR/")
    found = []
    for span in code_spans(body):
        for token in span.split():
            token = token.strip("`'\",;()")
            if token.startswith(roots):
                found.append(token)
    return found
