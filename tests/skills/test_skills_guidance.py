"""Guidance a blind agent needed and did not find (the skill-test report):
every placeholder a command compares against is defined, with a way for
iteration 0; a commit description is given by its flag; a subagent can run
every command its body names; an operator stop and its certification are
documented."""

from __future__ import annotations

import re

import pytest
from skillpack import AGENTS, ARCHITECT, command_lines, skill_files, split

ALL = skill_files() + sorted(AGENTS.glob("*.md"))


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_a_vs_placeholder_is_defined_and_iteration_zero_has_a_way(path):
    body = split(path)[1]
    text = " ".join(body.split())
    for name in sorted({m for line in command_lines(body) for m in re.findall(r"--vs ([A-Z_]+)\b", line)}):
        assert re.search(rf"\b{name} being\b", text), f"{path.name}: `--vs {name}` names no defined iteration"
        assert "without `--vs`" in text, f"{path.name}: says nothing for an iteration without a parent"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_a_commit_description_is_given_by_its_flag(path):
    body = " ".join(split(path)[1].split())
    for match in re.finditer(r"commit description", body):
        assert "--description" in body[match.start():match.start() + 200], \
            f"{path.name}: 'commit description' without naming `architect commit --description`"


@pytest.mark.parametrize("path", sorted(AGENTS.glob("*.md")), ids=lambda p: p.name)
def test_a_subagent_may_run_every_command_it_names(path):
    meta, body = split(path)
    tools = str(meta.get("tools") or "")
    allowed = re.findall(r"Bash\(architect ([a-z-]*) ?\*\)", tools)
    for line in command_lines(body):
        family = line.split()[1]
        assert "" in allowed or family in allowed, f"{path.name}: names `{line}` but its tools allow {allowed}"


def test_reflexion_can_try_an_edit_with_architect_patch():
    meta, body = split(AGENTS / "reflexion.md")
    assert "Bash(architect patch *)" in meta["tools"]
    assert any(line.startswith("architect patch ") for line in command_lines(body))


def test_loop_documents_an_operator_stop_and_certifies_after_it():
    body = split(ARCHITECT / "loop.md")[1]
    lines = command_lines(body)
    assert any(line.startswith("architect end ") and '--reason "operator:' in line for line in lines)
    stop = body[body.index("operator:"):]
    assert "after an operator stop too" in stop and any(
        line.startswith("architect certify ") and "--holdout-episodes" in line for line in lines)


def test_kdloop_states_the_experiment_order_once():
    body = " ".join(split(ARCHITECT / "variants" / "kdloop.md")[1].split())
    experiment = body[body.index("**EXPERIMENT**"):body.index("**DISTILL**")]
    assert "One spec at a time" in experiment and "finish each slot before staging the next" in experiment
    assert experiment.index("Only when every spec has its slot") < experiment.index("architect kdloop evaluate")


@pytest.mark.parametrize("path", [ARCHITECT / "evaluator.md", ARCHITECT / "variants" / "kdloop.md"],
                         ids=lambda p: p.name)
def test_the_skills_say_what_a_behaviour_identical_warning_means(path):
    body = " ".join(split(path)[1].split())
    assert "`warning`" in body and "acted exactly as" in body


def test_loop_set_up_says_what_to_do_with_the_permission_rules_status_names():
    body = " ".join(split(ARCHITECT / "loop.md")[1].split())
    setup = body[body.index("## 1. Set up"):body.index("## 2.")]
    assert "`permissions`" in setup and "`file`" in setup and "certification.json" in setup
