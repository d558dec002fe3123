"""Exploration scorers: which lettered point in view to explore (ExploreEQA's local
query) and whether anything in view is worth exploring (its global query)."""

from __future__ import annotations

import math

from executors.eqa.nodes.answer import normalised
from executors.eqa.vocabulary import CATEGORIES, ROOM_WORDS, category_named, words
from executors.mp3d.panorama import describe
from executors.mp3d.prompting import PROMPTED_SCHEMA, Prompted, probability
from harness.canvas.registry import Node, node_type

PORTS = dict(
    inputs={"question": "Text", "view": "EQAView", "points": "List[PromptPoint]"},
    outputs={"explore": {"type": "ExploreScores",
                         "doc": "{probs: {letter: p} over the points (sums to 1), worth: P(worth exploring)}"}},
)
MIN_POINTS = 2   # ExploreEQA's min_num_prompt_points: fewer points, no exploration query


def point_text(points: list[dict]) -> str:
    return "\n".join(f"{p['letter']}. {math.degrees(p['rel_heading']):+.0f} degrees: {describe(p)}" for p in points)


@node_type("eqa.HeuristicExplore", **PORTS, role="explore",
           config_schema={"type": "object", "additionalProperties": False, "properties": {
               "match_weight": {"type": "number", "minimum": 0, "maximum": 10, "default": 2.0,
                                "description": "weight of each question word found in a point's description"}}},
           doc="Model-free exploration scorer: the points whose descriptions share words with the question "
               "(its object, the rooms it names) score higher; worth exploring when any does.")
class HeuristicExplore(Node):
    """For each prompt point, m = the number of the question's cue words found in the
    point's caption and objects; cue words are the asked categories' caption and
    detector words (every category the question or its choices name) and the room words
    of the rooms named. A point's weight is 1 + `match_weight` x m, normalised over the
    points; `worth` is 0.8 when some point or the view itself has a cue word, else 0.4.
    With fewer than two points it emits nothing (no exploration query, as ExploreEQA)."""

    def step(self, inputs, ctx):
        points = inputs["points"]
        if len(points) < MIN_POINTS:
            return {}
        text = inputs["question"].lower()
        cues: set[str] = set()
        for line in text.splitlines():
            category = category_named(line)
            if category is not None:
                cues |= set(CATEGORIES[category][2])
        for name, room_words in ROOM_WORDS.items():
            if name in text:
                cues |= set(room_words)
        matches = [len(words(p["caption"] + " " + " ".join(p["objects"])) & cues) for p in points]
        weights = normalised([1 + self.config["match_weight"] * m for m in matches])
        worth = 0.8 if any(matches) or words(inputs["view"]["text"]) & cues else 0.4
        return {"explore": {"probs": {p["letter"]: w for p, w in zip(points, weights)}, "worth": worth}}


@node_type("eqa.ExploreVLM", **PORTS, role="explore", uses_model=True,
           config_schema=PROMPTED_SCHEMA,
           doc="Asks the pinned model which lettered point in view it would explore to answer the question and "
               "whether any direction in view is worth exploring (ExploreEQA's local and global queries).")
class ExploreVLM(Prompted, Node):
    """With at least two prompt points, renders `user_template` with {{question}} (the
    question and choices), {{view}} (the current view's text) and {{points}} (one line
    per point: 'A. <relative heading> degrees: <caption> (objects: ...)') and reads a
    JSON object {"direction": {"A": p, ...}, "worth_exploring": p} (images of the view in
    image mode). Direction probabilities are clipped to [0, 1] and normalised over the
    points; missing letters count 0, and all-zero or unparsable directions become
    uniform; an unparsable reply also gives worth 0.5. No retry. With fewer than two
    points it emits nothing and makes no call. A graph without a pinned model_profile,
    or a missing prompt file, is a node error."""

    def step(self, inputs, ctx):
        points = inputs["points"]
        if len(points) < MIN_POINTS:
            return {}
        images = [v["image"] for v in inputs["view"]["views"] if "image" in v]
        value, _ = self.ask(ctx, {"question": inputs["question"], "view": inputs["view"]["text"],
                                  "points": point_text(points)}, images)
        direction = value.get("direction") if value else None
        probs = [probability(direction.get(p["letter"])) for p in points] if isinstance(direction, dict) else []
        weights = normalised(probs) if probs and sum(probs) > 0 else [1 / len(points)] * len(points)
        worth = probability(value.get("worth_exploring")) if value else 0.5
        return {"explore": {"probs": {p["letter"]: w for p, w in zip(points, weights)}, "worth": worth}}
