import re

import pytest

from skillpack import AGENTS, ARCHITECT, VARIANTS, skill_files, split

SKILLS = skill_files()
EXPECTED = ["loop", "understand", "proposer", "implementer", "evaluator"] + [f"variants/{v}" for v in VARIANTS]


def test_the_whole_pack_is_there():
    names = {p.relative_to(ARCHITECT).with_suffix("").as_posix() for p in ARCHITECT.rglob("*.md")}
    assert set(EXPECTED) <= names


@pytest.mark.parametrize("path", SKILLS, ids=lambda p: p.name)
def test_front_matter_has_the_documented_keys(path):
    meta, body = split(path)
    assert isinstance(meta.get("description"), str) and meta["description"].strip()
    assert isinstance(meta.get("argument-hint"), str)
    args = meta.get("arguments")
    assert isinstance(args, list) and args and all(re.fullmatch(r"[a-z_]+", a) for a in args)
    tools = meta.get("allowed-tools")
    tools = [t.strip() for t in tools.split(",")] if isinstance(tools, str) else tools
    assert "Bash(architect *)" in tools
    assert ":" not in str(meta.get("name", "")), "no colon in a name: key"
    for arg in args:  # every named argument is used, and only named ones are
        assert f"${arg}" in body, f"{path.name}: argument {arg} is never used"
    used = set(re.findall(r"\$([a-z_]+)\b", body))
    assert used <= set(args), f"{path.name}: undeclared placeholders {used - set(args)}"
    hint_words = re.findall(r"<([a-z_]+)", meta["argument-hint"])
    assert hint_words[: len(args)] == args[: len(hint_words)]


def test_loop_prompt_stays_short_enough_to_survive_compaction():
    text = (ARCHITECT / "loop.md").read_text(encoding="utf-8")
    assert len(text) / 4 < 2500  # ~tokens; Claude Code re-attaches only the first ~5,000


def test_loop_uses_named_variant_and_executor():
    meta, body = split(ARCHITECT / "loop.md")
    assert meta["arguments"] == ["variant", "executor"]
    assert "variants/$variant.md" in split(ARCHITECT / "proposer.md")[1]


@pytest.mark.parametrize("path", sorted(AGENTS.glob("*.md")), ids=lambda p: p.name)
def test_subagents_have_name_description_tools(path):
    meta, body = split(path)
    assert re.fullmatch(r"[a-z][a-z0-9-]*", meta["name"]) and meta["name"] == path.stem
    assert meta["description"] and meta["tools"] and body.strip()


def test_subagents_are_run_in_the_foreground():
    for variant in ("adas", "kdloop"):
        body = split(ARCHITECT / "variants" / f"{variant}.md")[1]
        assert "foreground" in body and ("wait" in body or "awaited" in body)
        agent = "reflexion" if variant == "adas" else "critic"
        assert f".claude/agents/{agent}.md" in body and (AGENTS / f"{agent}.md").is_file()
