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


REFRESH = ("Refresh the understanding notes every iteration: follow `.claude/commands/architect/understand.md` "
           "for RUN: its step 7 for each iteration committed since the last refresh, then its step 6")


def test_loop_refreshes_the_understanding_each_iteration_as_iterate_does():
    loop = " ".join(split(ARCHITECT / "loop.md")[1].split())
    iteration = loop[loop.index("## 2. One iteration"):loop.index("## 3.")]
    assert REFRESH in iteration
    step = iteration[iteration.index("2. **"):iteration.index("3. **Propose")]
    assert REFRESH in step  # step 2, which iterate.md runs as part of "steps 2 to 5"
    iterate = " ".join(split(ARCHITECT / "iterate.md")[1].split())
    assert "steps 2 to 5 of section 2 of `.claude/commands/architect/loop.md`" in iterate
    assert "understanding refresh" in iterate
    understand = split(ARCHITECT / "understand.md")[1]  # the steps named: 6 writes the notes, 7 refreshes them
    assert "\n6. Write `RUN_DIR/understanding.md`" in understand and "\n7. When refreshing it after iteration N" in understand


def test_loop_says_what_an_unattended_agent_does_about_permissions():
    body = " ".join(split(ARCHITECT / "loop.md")[1].split())
    setup = body[body.index("## 1. Set up"):body.index("## 2.")]
    unattended = setup[setup.index("Unattended"):]
    assert "continue" in unattended and "final report" in unattended


def test_reflexion_tries_edits_in_the_scratch_folder_adas_gives_it():
    """Not in /tmp: a graph is validated against the nodeset/ of the folder it is written to,
    and a shared /tmp/nodeset/ would be read as the candidate's."""
    text = split(AGENTS / "reflexion.md")[1]
    body = " ".join(text.split())
    assert "/tmp" not in body
    assert "`TRY/nodeset/NAME.py`" in body and "`candidate.NAME`" in body and "`validated_in`" in body
    lines = command_lines(text)
    assert "architect patch CANDIDATE/graph.json TRY/edit.json -o TRY/graph.json --json" in lines
    assert "architect validate TRY --json" in lines
    adas = " ".join(split(ARCHITECT / "variants" / "adas.md")[1].split())
    assert "its scratch folder `STAGING/reflexion-k-try/`" in adas


def test_aflow_says_how_its_accept_rule_and_the_best_rule_differ():
    body = " ".join(split(ARCHITECT / "variants" / "aflow.md")[1].split())
    assert "not accepted (indistinguishable); the run's best by mean" in body and "`best_note`" in body


@pytest.mark.parametrize("path", [ARCHITECT / "variants" / "kdloop.md", ARCHITECT / "understand.md"],
                         ids=lambda p: p.name)
def test_the_evidence_lists_name_the_node_outputs_counter(path):
    assert any(line.startswith("architect outputs $run ") and " NODE " in line
               for line in command_lines(split(path)[1]))


def test_evaluator_says_what_passed_means():
    body = " ".join(split(ARCHITECT / "evaluator.md")[1].split())
    assert "`scored`" in body and "no comparison with the parent" in body
