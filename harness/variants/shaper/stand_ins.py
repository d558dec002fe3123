"""Stand-ins for SHAPER's models, served on a loopback server speaking the
OpenAI and Anthropic APIs: a judge, a summariser and an optimizer, plus the
planner stand-in the executor offers (its spec's `stand_in_planner`, e.g.
`executors.babyai.stand_ins:scripted_planner`). They are deterministic rules,
not models, and every reply says so (the server reports the model as
`scripted-shaper-stand-in (no LLM)`). Used by `--scripted-models`, the tests and
the benchmark.

The scripted optimizer appends one line of guidance to a skill, or rewrites a
context harness in one of a few ways chosen by a hash of the prompt; its first
harness proposal of each pair imports `os` (so the sandbox rejects it) and the
repair round removes the import.
"""

from __future__ import annotations

import hashlib
import re

from harness.models.loopback import Answer, LoopbackServer
from harness.variants.shaper import prompts

REPLY_MODEL = "scripted-shaper-stand-in (no LLM)"
SKILL_LINES = (
    "Name the object with its colour whenever the mission gives one.",
    "When a part needs a door opened first, give the open subgoal before the go to subgoal.",
    "After a round with no executed actions, give the same part again unchanged.",
    "Keep to the order of the mission's parts; never skip ahead.",
    "Use `the` for objects the mission names with `the` and `a` otherwise.",
    "If the view lists the target object, ask for it directly rather than exploring.",
)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _digest(*parts: str) -> int:
    return int(hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12], 16)


def _field(prompt: str, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}:\s*(.*)$", prompt, re.M)
    return match.group(1).strip() if match else ""


def scripted_judge(prompt: str) -> str:
    before, after = _field(prompt, "Observation before"), _field(prompt, "Observation after")
    actions = _field(prompt, "Executed actions")
    if "(did not parse)" in _field(prompt, "Planner output"):
        verdict, note = "parse_error", "the planner's reply was not a subgoal the executor understands"
    elif "done" in [a.strip() for a in actions.split(",")]:
        verdict, note = "progress", "the executor declared the subgoal finished"
    elif actions in ("", "(none)"):
        verdict, note = "no_progress", "no action was executed for this subgoal"
    elif before == after:
        verdict, note = "no_progress", "the view is unchanged after the actions"
    else:
        verdict, note = "progress", "the agent moved towards the subgoal"
    return f"[scripted judge, not a model]\nVERDICT: {verdict}\nNOTE: {note}"


def scripted_summariser(prompt: str) -> str:
    verdicts = re.findall(r"^- step \d+: (\w+):", prompt, re.M)
    counts = ", ".join(f"{v} x{verdicts.count(v)}" for v in sorted(set(verdicts))) or "no judged step"
    return (f"[scripted summariser, not a model] {_field(prompt, 'Outcome')}. "
            f"Mission: {_field(prompt, 'Mission')}. Step verdicts: {counts}.")


def _current(prompt: str, artefact: str) -> str:
    match = re.search(rf"## Current {artefact}\n```\n(.*?)\n```\n", prompt, re.S)
    return (match.group(1) + "\n") if match else ""


def _rewrite_harness(source: str, choice: int) -> str:
    variants = []
    if re.search(r"^RECENT = \d+", source, re.M):
        value = int(re.search(r"^RECENT = (\d+)", source, re.M).group(1))
        variants.append(re.sub(r"^RECENT = \d+", f"RECENT = {value % 5 + 2}", source, count=1, flags=re.M))
    marker = '    return "\\n".join(lines)\n'
    if marker in source and "Last view:" not in source:
        variants.append(source.replace(marker, '    if history:\n        lines.append("Last view: %s" % '
                                               'history[-1].get("observation"))\n' + marker, 1))
    if "Subgoals completed so far" in source:
        variants.append(source.replace("Subgoals completed so far", "Parts done"))
    if not variants:
        variants.append(source + f"\nVARIANT = {choice % 97}\n")
    return variants[choice % len(variants)]


def scripted_optimizer(messages: list) -> str:
    first, last = _text(messages[0]["content"]), _text(messages[-1]["content"])
    if last.startswith("REJECTED"):
        previous = prompts.extract_artefact(_text(messages[-2]["content"]))
        fixed = "".join(line + "\n" for line in previous.splitlines() if not line.startswith(("import ", "from ")))
        return f"[scripted optimizer, not a model] repaired\n```python\n{fixed.lstrip()}```\n"
    branch = int(re.search(r"This is proposal (\d+)", first).group(1)) if "This is proposal" in first else 1
    # the same base for every branch of one parent, so its branches pick different rewrites
    choice = _digest(re.sub(r"This is proposal \d+", "", first)) + branch
    if "Artefact to rewrite: the skill" in first:
        current = _current(first, "skill")
        lines = [line for line in SKILL_LINES if line not in current] or list(SKILL_LINES)
        new = current.rstrip("\n") + f"\n- {lines[choice % len(lines)]}\n"
        return f"[scripted optimizer, not a model]\n```markdown\n{new}```\n"
    new = _rewrite_harness(_current(first, "harness"), choice)
    if branch == 1:
        new = "import os\n" + new
    return f"[scripted optimizer, not a model]\n```python\n{new}```\n"


def answerer(planner: Answer) -> Answer:
    """Answer as the judge, summariser or optimizer by the system prompt's marker, else as `planner`."""
    def answer(api: str, system, messages: list, body: dict) -> str:
        system = system or ""
        prompt = _text(messages[-1]["content"]) if messages else ""
        if system.startswith(prompts.JUDGE_MARKER):
            return scripted_judge(prompt)
        if system.startswith(prompts.SUMMARISER_MARKER):
            return scripted_summariser(prompt)
        if system.startswith(prompts.OPTIMIZER_MARKER):
            return scripted_optimizer(messages)
        return planner(api, system, messages, body)
    return answer


def stand_in_server(planner: Answer, delay_s: float = 0.0, failures: list[int] | None = None) -> LoopbackServer:
    """A (not yet started) loopback server answering as all four scripted stand-ins."""
    return LoopbackServer(answerer(planner), delay_s=delay_s, failures=failures, reply_model=REPLY_MODEL)
