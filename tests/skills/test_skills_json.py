"""Every command a skill names, run as the skill writes it (placeholders filled,
`--json` added) where no run exists yet: it prints exactly one JSON object on
stdout, and when it fails the error says what to do next."""

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from harness.cli import main
from skillpack import command_lines, skill_files, split, substitute

# A next step: a command to run, or an instruction after the description of what is wrong.
NEXT_STEP = re.compile(
    r"`(architect|pip|ls|touch) [^`]*`"
    r"|[:;(,—]\s*(run|rerun|re-run|give|pass|use|create|choose|fix|edit|name|add|set|install|fetch|start|stage|"
    r"check|evaluate|commit|discard|resume|write|remove|list|drop|see|save|put)\b",
    re.I)


def _distinct_lines() -> list[tuple[str, str]]:
    seen, out = set(), []
    for path in skill_files():
        for line in command_lines(split(path)[1]):
            argv = substitute(line)[1:]
            chain = tuple(t for t in argv[:2] if not t.startswith("-"))
            if chain not in seen:
                seen.add(chain)
                out.append((path.stem, line))
    return out


LINES = _distinct_lines()


@pytest.fixture
def empty_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARCHITECT_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("ARCHITECT_TIER_EPISODES", "1")  # `init` evaluates iteration 0
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(tools))  # git, and no agent for `drive` to start
    return tmp_path


def test_every_command_family_is_covered():
    families = {substitute(line)[1] for _, line in LINES}
    assert {"init", "status", "stage", "check", "smoke", "evaluate", "commit", "discard", "episodes", "episode",
            "nodes", "patch", "experiment", "kdloop", "adas", "aflow", "random", "shaper", "drive", "end",
            "certify"} <= families


@pytest.mark.parametrize("skill,line", LINES, ids=[f"{s}:{l[:50]}" for s, l in LINES])
def test_skill_command_prints_one_json_object_and_says_what_next(skill, line, empty_runs):
    argv = substitute(line)[1:]
    if "--json" not in argv:
        argv.append("--json")
    result = CliRunner().invoke(main, argv, catch_exceptions=False)
    out = result.stdout.strip()
    assert out and "\n" not in out, f"{skill}: `{line}` printed {out!r}"
    payload = json.loads(out)
    assert isinstance(payload, dict)
    if result.exit_code == 0:
        assert payload.get("ok") is True, f"{skill}: `{line}` printed no `ok`: {sorted(payload)}"
        return
    assert payload["ok"] is False and payload["error"]
    assert payload.get("kind", "").isidentifier(), f"{skill}: `{line}` fails without an error kind: {sorted(payload)}"
    assert NEXT_STEP.search(payload["error"]), f"{skill}: `{line}` fails without saying what to do: {payload['error']}"


def test_the_next_step_check_can_fail():
    assert not NEXT_STEP.search("no run at 'r1': expected a run folder holding manifest.json")
    assert NEXT_STEP.search("no run at 'r1'; create one with `architect init VARIANT EXECUTOR --run-id r1`")


def test_emit_adds_ok_unless_the_command_set_it(capsys):
    from harness.cli.conventions import emit

    emit({"rows": []}, True)
    emit({"ok": False, "problems": ["x"]}, True)
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert first == {"ok": True, "rows": []} and second["ok"] is False
