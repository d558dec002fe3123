"""The judge, summariser and optimizer prompts. Each system prompt starts with
its role's marker line, which the scripted stand-ins dispatch on."""

from __future__ import annotations

import json

JUDGE_MARKER = "SHAPER step judge."
SUMMARISER_MARKER = "SHAPER episode summariser."
OPTIMIZER_MARKER = "SHAPER artefact optimizer."
VERDICTS = ("progress", "no_progress", "wrong_subgoal", "executor_mismatch", "parse_error")

JUDGE_SYSTEM = f"""{JUDGE_MARKER}
You judge one step of an embodied agent. A frozen planner read the mission and
its context and wrote a subgoal; a frozen low-level executor turned it into
actions. Compare the observation before and after the actions. Say whether the
subgoal was the right next one for the mission, and whether what the executor
did matches what the planner asked (a planner/executor mismatch).
Reply with two lines:
VERDICT: one of {", ".join(VERDICTS)}
NOTE: one sentence naming what went wrong or right."""

SUMMARISER_SYSTEM = f"""{SUMMARISER_MARKER}
You summarise one episode of an embodied agent for an optimizer that edits the
planner's skill text and the code that builds the planner's context. You get the
mission, the outcome, the per-step judgements and non-visual metadata (commands
and their frequencies, action-chunk lengths, parse and runtime errors, steps).
Write at most five sentences: the failure or success pattern, unproductive
repetitions, instruction drift, parse errors. Do not propose edits."""

OPTIMIZER_SYSTEM = f"""{OPTIMIZER_MARKER}
You improve one text artefact of a frozen embodied agent: either its *skill*
(procedural guidance inserted into the planner's system prompt) or its *context
harness* (a Python function build_context(history) -> str deciding what of the
episode so far the planner sees). The planner model and the executor are frozen.
Read the current artefact, the textual gradient (diagnoses of recent episodes
with aggregate statistics) and the history of earlier proposals and their scores.
Reply with the complete replacement of the artefact in one fenced code block and
nothing else."""

HARNESS_RULES = """The context harness runs in a sandbox. It must define a top-level function
build_context(history) returning a str. `history` is a list of rounds
{"round", "decision", "outcome", "observation"} (the current harness's docstring
says what outcome and observation hold for this executor).
Not allowed: import statements, names starting with "_", class/global/nonlocal/
while, eval/exec/open/getattr and similar builtins, file or network access.
`json` (dumps/loads) and `math` are available without importing them. It must
finish within 2 seconds and 512 MB on histories of up to 50 rounds."""


def judge_messages(mission: str, step: dict, index: int, total: int) -> list:
    text = (f"Mission: {mission}\nStep {index} of {total}\n"
            f"Observation before: {step.get('observation_before') or '(none)'}\n"
            f"Planner output: {step.get('planner_output') or '(empty)'}"
            f"{' (did not parse)' if step.get('parse_error') else ''}\n"
            f"Executed actions: {', '.join(step.get('actions') or []) or '(none)'}\n"
            f"Observation after: {step.get('observation_after') or '(episode ended)'}\n")
    if "images_before" not in step:
        return [{"role": "user", "content": text}]
    content = [{"type": "text", "text": text}]
    for label, key in (("before", "images_before"), ("after", "images_after")):
        if step[key]:
            content.append({"type": "text", "text": f"Camera images {label} the actions:\n"})
            content += [{"type": "image", "media_type": "image/png", "data": frame} for frame in step[key]]
    return [{"role": "user", "content": content}]


def parse_judgement(text: str) -> dict:
    verdict, note = "unparsed", text.strip()[:300]
    for line in text.splitlines():
        head, _, rest = line.partition(":")
        key = head.strip().lstrip("[").upper()
        if key.endswith("VERDICT") and rest.strip():
            word = rest.strip().split()[0].strip(".,").lower()
            verdict = word if word in VERDICTS else "unparsed"
        elif key.endswith("NOTE") and rest.strip():
            note = rest.strip()[:300]
    return {"verdict": verdict, "note": note}


def summariser_messages(rollout: dict, judgements: list[dict]) -> list:
    lines = [f"Mission: {rollout['mission']}",
             f"Outcome: {'success' if rollout['success'] else 'failure'} ({rollout['termination']}), "
             f"reward {rollout['reward']:.3f}",
             "Metadata: " + json.dumps(rollout["meta"], sort_keys=True),
             "Judgements:"]
    for judgement in judgements:
        lines.append(f"- step {judgement['step']}: {judgement['verdict']}: {judgement['note']}")
    if not judgements:
        lines.append("- (no planner step)")
    return [{"role": "user", "content": "\n".join(lines)}]


def optimizer_messages(*, artefact: str, current: str, frozen_name: str, frozen: str, gradient: str,
                       history: list[str], branch: int, branching: int) -> list:
    kind = "skill (Markdown)" if artefact == "skill" else "context harness (Python)"
    lines = [f"Artefact to rewrite: the {kind}. The {frozen_name} is frozen in this stage.",
             f"This is proposal {branch} of {branching} from this artefact; make it different from the others.",
             "", f"## Current {artefact}", "```", current.rstrip(), "```",
             "", f"## Frozen {frozen_name} (for reference, do not return it)", "```", frozen.rstrip(), "```",
             "", "## Textual gradient", gradient.rstrip(), "", "## Earlier proposals and rounds, oldest first"]
    lines += [f"- {event}" for event in history] or ["- (none yet)"]
    if artefact == "harness":
        lines += ["", "## Rules", HARNESS_RULES]
    lines += ["", f"Return the complete new {artefact} in one fenced code block."]
    return [{"role": "user", "content": "\n".join(lines)}]


def repair_messages(messages: list, reply: str, problems: list[str]) -> list:
    return messages + [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "REJECTED by the sandbox:\n" + "\n".join(f"- {p}" for p in problems)
                                    + "\nReturn the corrected complete context harness in one fenced code block."}]


def extract_artefact(reply: str) -> str:
    """The last fenced code block of the reply (the whole reply when there is none), ending in a newline."""
    blocks, inside, current = [], False, []
    for line in reply.splitlines():
        if line.strip().startswith("```"):
            if inside:
                blocks.append("\n".join(current))
                current = []
            inside = not inside
            continue
        if inside:
            current.append(line)
    text = blocks[-1] if blocks else reply
    return text.strip("\n") + "\n"
