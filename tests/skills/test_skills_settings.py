import json
import re

from skillpack import ROOT

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
