"""Helpers for the smartway and eqa tests: the Matterport3D fixture, the full-data
checks, and scripted (deterministic, not a model) answerers for a loopback server
speaking the OpenAI API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
# the fixture, the seeds folder and the full-R2R check are mapgpt's
from mapgpt_testkit import FIXTURE, SEEDS  # noqa: F401
from mapgpt_testkit import full_data_dir as full_r2r  # noqa: F401
from mapgpt_testkit import needs_full_data as needs_full_r2r  # noqa: F401

from harness.models.loopback import text_of

SCRIPTED_MODEL = "scripted-navigation-model"


def full_eqa_data() -> Path | None:
    """The user's data folder when R2R, REVERIE and the room labels are all installed, else None."""
    from executors.eqa import data_regions, data_reverie
    from executors.mp3d import data_r2r

    ok = data_r2r.complete() and data_reverie.complete() and data_regions.complete()
    return data_reverie.reverie_dir().parent if ok else None


needs_full_eqa_data = pytest.mark.skipif(
    full_eqa_data() is None,
    reason="needs the full R2R, REVERIE and mp3d-regions data in the data folder: run `architect data fetch r2r`, "
           "`architect data fetch reverie` and `architect data fetch mp3d-regions` (CI imports them from "
           "../shared/data/ with --from)")


def scripted_navigator(api: str, system, messages: list, body: dict) -> str:
    """Answers SmartWay's four tasks. decompose: one part per comma-separated clause, its
    action 'go straight' and its longest word as landmark. progress: part min(moves, n),
    done from 3 moves. choose: the first waypoint not marked visited (A otherwise), stop
    when the progress line says done. fuse: always continue."""
    prompt = text_of(messages[-1]["content"])
    task = prompt.splitlines()[0].removeprefix("Task: ").strip()
    if task == "decompose":
        instruction = re.search(r"^Instruction: (.*)$", prompt, re.M).group(1)
        parts = [p.strip() for p in instruction.split(",") if p.strip()]
        return json.dumps({"sub_instructions": [{"text": p, "action": "go straight",
                                                 "landmarks": [max(p.split(), key=len).lower()]} for p in parts]})
    if task == "progress":
        moves = int(re.search(r"^Moves made so far: (\d+)$", prompt, re.M).group(1))
        parts = len(re.findall(r"^\d+\. ", prompt, re.M))
        return json.dumps({"thought": f"{moves} moves made", "current": max(1, min(moves, parts)), "done": moves >= 3})
    if task == "choose":
        if "(done: yes)" in prompt:
            return json.dumps({"thought": "arrived", "action": "stop"})
        waypoints = re.findall(r"^([A-Z])\. Place \d+, [^:]*?(\(visited\))?:", prompt, re.M)
        fresh = [letter for letter, visited in waypoints if not visited]
        return json.dumps({"thought": "the first new waypoint", "action": (fresh or ["A"])[0]})
    if task == "fuse":
        return json.dumps({"thought": "keep going", "decision": "continue"})
    return "I do not know this task."


def scripted_vlm(api: str, system, messages: list, body: dict) -> str:
    """Answers ExploreEQA's two queries. answer: 0.7 on the first choice whose words occur in
    the view (the rest spread), confident 0.6 then, else uniform and 0.1. explore: the
    point whose line is longest gets 0.6, worth exploring 0.7."""
    prompt = text_of(messages[-1]["content"])
    task = prompt.splitlines()[0].removeprefix("Task: ").strip()
    view = prompt.split("What you see now", 1)[1].lower() if "What you see now" in prompt else ""
    if task == "answer":
        choices = re.findall(r"^([A-D])\. (.*)$", prompt, re.M)
        hit = next((letter for letter, text in choices if not text.startswith("(")
                    and any(w in view for w in re.findall(r"[a-z]{4,}", text.lower()))), None)
        if hit is None:
            return json.dumps({"answer": {letter: 0.25 for letter, _ in choices}, "confident": 0.1})
        return json.dumps({"answer": {letter: 0.7 if letter == hit else 0.1 for letter, _ in choices},
                           "confident": 0.6})
    if task == "explore":
        points = re.findall(r"^([A-D])\. ([+-]\d+ degrees: .*)$", prompt, re.M)
        best = max(points, key=lambda p: len(p[1]))[0] if points else "A"
        return json.dumps({"direction": {letter: 0.6 if letter == best else 0.2 for letter, _ in points},
                           "worth_exploring": 0.7})
    return "no JSON here"
