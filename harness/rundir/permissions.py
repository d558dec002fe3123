"""The skill pack's file rules for a runs folder outside the project: the
project's `.claude/settings.json` allows and denies file tools on `/runs/...`
(relative to the project); runs under `$ARCHITECT_RUNS_DIR` elsewhere need the
same rules with that folder's absolute path (`//...` in Claude Code's rule
syntax), or every Read and Edit of the run prompts and the certification deny
does not hold."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness import PROJECT_ROOT

SETTINGS = PROJECT_ROOT / ".claude" / "settings.json"
LOCAL = ".claude/settings.local.json"
_RUNS_RULE = re.compile(r"^(?P<tool>[A-Za-z]+)\(/runs(?P<rest>/.*)\)$")


def rules_for(runs_dir: Path) -> dict | None:
    """{"file", "allow", "deny"}: the rules to add for `runs_dir`; None when the project's rules cover it
    (it is the project's runs/) or the project has no settings."""
    runs_dir = Path(runs_dir).resolve()
    if runs_dir == (PROJECT_ROOT / "runs").resolve():
        return None
    try:
        permissions = json.loads(SETTINGS.read_text(encoding="utf-8")).get("permissions") or {}
    except (OSError, ValueError):
        return None

    def moved(rules) -> list[str]:
        out = []
        for rule in rules or ():
            match = _RUNS_RULE.match(str(rule))
            if match:
                out.append(f"{match['tool']}(/{runs_dir.as_posix()}{match['rest']})")
        return out

    allow, deny = moved(permissions.get("allow")), moved(permissions.get("deny"))
    return {"file": LOCAL, "allow": allow, "deny": deny} if allow or deny else None


def text(rules: dict) -> str:
    return (f"permissions: the project's file rules cover ./runs only; add to {rules['file']} "
            f"(permissions.allow) {', '.join(rules['allow'])} and (permissions.deny) {', '.join(rules['deny'])}")
