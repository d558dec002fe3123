import fnmatch
import json
import re

from skillpack import ROOT, named_paths, skill_files, split

SETTINGS = ROOT / ".claude" / "settings.json"
RULE = re.compile(r"^(Bash|Read|Edit|Write|WebFetch|Glob|Grep|Agent)(\((.+)\))?$")


def test_settings_is_valid_and_allows_the_cli():
    settings = json.loads(SETTINGS.read_text(encoding="utf-8"))
    perms = settings["permissions"]
    assert "Bash(architect *)" in perms["allow"]
    for rule in perms["allow"] + perms["deny"]:
        assert RULE.match(rule), rule


def test_framework_code_is_denied_to_edits():
    deny = json.loads(SETTINGS.read_text(encoding="utf-8"))["permissions"]["deny"]
    for folder in ("harness", "executors", "seeds", "schemas"):
        assert f"Edit(/{folder}/**)" in deny
    assert not any(r.startswith("Edit(/runs/**") for r in deny)  # runs stay editable


def test_every_project_file_a_skill_names_is_readable_without_a_prompt():
    """A skill sends the agent to the pack's own files, the docs, schemas and executors' READMEs:
    each named path outside runs/ matches an allowed Read rule (so a headless session that
    approves only what the settings allow can follow it)."""
    allow = json.loads(SETTINGS.read_text(encoding="utf-8"))["permissions"]["allow"]
    readable = [m[3] for m in map(RULE.match, allow) if m and m[1] == "Read" and m[3]]
    named = {path for p in skill_files() for path in named_paths(split(p)[1])
             if not path.startswith(("runs/", "RUN_DIR/", "harness/"))}
    assert named, "no project path found in the skills: the scan is broken"
    unreadable = sorted(path for path in named
                        if not any(fnmatch.fnmatch("/" + path.rstrip("/"), rule.replace("/**", "*")) for rule in readable))
    assert not unreadable, f"named by a skill but not allowed to Read in .claude/settings.json: {unreadable}"
