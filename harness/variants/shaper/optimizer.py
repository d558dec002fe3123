"""Proposals: the optimizer model writes a full replacement of the artefact of the
current stage; a harness proposal must pass the context-harness sandbox
(`harness.models.context_harness.check_context_harness`), and a rejected one gets
the sandbox's error back for `repair_attempts` more tries."""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.models.context_harness import check_context_harness
from harness.variants.shaper import prompts
from harness.variants.shaper.config import ShaperConfig

FILES = {"skill": "skill.md", "harness": "build_context.py"}


def sandbox_problems(source: str) -> list[str]:
    """What the sandbox says about a context-harness text (empty: accepted)."""
    with tempfile.TemporaryDirectory(prefix="shaper-gate-") as tmp:
        path = Path(tmp) / FILES["harness"]
        path.write_text(source, encoding="utf-8")
        return check_context_harness(path)


def propose(roles, round_number: int, *, stage: str, texts: dict, gradient: str, history: list[str],
            branch: int, config: ShaperConfig) -> dict:
    """One proposal: {"text", "status": "ok"|"rejected", "rejections": [[problem, ...], ...]}.
    `texts` holds the parent's {"skill", "harness"}; only texts[stage] is rewritten (the other is frozen)."""
    frozen = "harness" if stage == "skill" else "skill"
    messages = prompts.optimizer_messages(artefact=stage, current=texts[stage], frozen_name=frozen,
                                          frozen=texts[frozen], gradient=gradient, history=history,
                                          branch=branch, branching=config.branching)
    reply = roles.ask("optimizer", round_number, system=prompts.OPTIMIZER_SYSTEM, messages=messages,
                      temperature=config.optimizer_temperature)
    text = prompts.extract_artefact(reply)
    rejections: list[list[str]] = []
    if stage == "harness":
        for attempt in range(config.repair_attempts + 1):
            problems = sandbox_problems(text)
            if not problems:
                break
            rejections.append(problems)
            if attempt == config.repair_attempts:
                return {"text": text, "status": "rejected", "rejections": rejections}
            messages = prompts.repair_messages(messages, reply, problems)
            reply = roles.ask("optimizer", round_number, system=prompts.OPTIMIZER_SYSTEM, messages=messages,
                              temperature=config.optimizer_temperature)
            text = prompts.extract_artefact(reply)
    return {"text": text, "status": "ok", "rejections": rejections}
