"""Answer nodes: per step, answer probabilities over A-D and a confidence that the
current view suffices (ExploreEQA's two VLM queries), from a model or from the captions."""

from __future__ import annotations

import math

from executors.eqa.questions import LETTERS, PAD
from executors.eqa.vocabulary import CATEGORIES, NUMBER_WORDS, ROOM_WORDS, category_named, words
from executors.mp3d.prompting import PROMPTED_SCHEMA, Prompted, probability
from harness.canvas.registry import Node, node_type

PORTS = dict(
    inputs={"question": {"type": "Text", "doc": "the question with its lettered choices"},
            "choices": "List[Text]", "view": "EQAView"},
    outputs={"scores": {"type": "AnswerScores", "doc": "{probs: [p_A, p_B, p_C, p_D] summing to 1, confidence in [0, 1]}"}},
)
UNIFORM = [0.25, 0.25, 0.25, 0.25]


def normalised(weights: list[float]) -> list[float]:
    total = sum(weights)
    return [w / total for w in weights] if total > 0 else list(UNIFORM)


def share(choices: list[str], favoured: set[int], mass: float) -> list[float]:
    """`mass` spread over the favoured choices, the rest over the other real choices (pads get 0)."""
    real = [i for i, c in enumerate(choices) if c != PAD]
    others = [i for i in real if i not in favoured]
    out = [0.0] * len(choices)
    for i in favoured:
        out[i] = mass / len(favoured)
    for i in others:
        out[i] = (1 - mass if favoured else 1.0) / len(others)
    return normalised(out)


@node_type("eqa.HeuristicAnswer", **PORTS, role="answer",
           config_schema={"type": "object", "additionalProperties": False, "properties": {
               "seen_confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.9,
                                   "description": "confidence when the asked object is in view"},
               "unseen_confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.15,
                                     "description": "confidence in 'No' to an existence question when it is not"}}},
           doc="Model-free answerer: matches the question's object (and rooms, numbers, choices) against the "
               "current view's captions and detected objects.")
class HeuristicAnswer(Node):
    """Reads the question's first line by its wording and looks for the asked category's
    caption and detector words (`executors.eqa.vocabulary`) in the current view's text.
    'Is there a X': in view, Yes 0.9 / No 0.1 with `seen_confidence`; not in view, Yes
    0.3 / No 0.7 with `unseen_confidence`. 'How many X': n = view columns whose text
    names X; the numbered choices get weights exp(-|number - n|); confidence
    min(0.9, 0.3 + 0.15 n), or 0.02 when n is 0 (uniform). 'In which room is the X': X
    in view and some choice's room words (`ROOM_WORDS`) in the view text: those choices
    share 0.8, confidence 0.8; X in view but no room word: uniform, 0.2; X not in view:
    uniform, 0.02. 'Which of these is near the X': X in view: the choices whose
    category is also in view share 0.85, confidence 0.8 for one such choice, 0.4 for
    several, 0.1 for none; X not in view: uniform, 0.02. Padding choices ('(Do not
    choose this option)') always get 0. A question of another form, or naming no known
    category, gets uniform probabilities over the real choices and confidence 0."""

    def step(self, inputs, ctx):
        question = inputs["question"].splitlines()[0]
        choices = list(inputs["choices"])
        seen = words(inputs["view"]["text"])
        lowered = question.lower()
        category = category_named(question.split(" near the ")[-1] if " near the " in lowered else question)
        if category is None:
            scores = {"probs": share(choices, set(), 0.0), "confidence": 0.0}
        elif lowered.startswith("is there"):
            scores = self._existence(choices, category, seen)
        elif lowered.startswith("how many"):
            scores = self._count(choices, category, inputs["view"]["views"])
        elif lowered.startswith("in which room"):
            scores = self._room(choices, category, seen)
        elif lowered.startswith("which of these"):
            scores = self._identification(choices, category, seen)
        else:
            scores = {"probs": share(choices, set(), 0.0), "confidence": 0.0}
        ctx.log(category=category, confidence=scores["confidence"])
        return {"scores": scores}

    def _existence(self, choices, category, seen):
        present = bool(seen & set(CATEGORIES[category][2]))
        yes = {i for i, c in enumerate(choices) if c == "Yes"}
        no = {i for i, c in enumerate(choices) if c == "No"}
        probs = [0.0] * len(choices)
        for i in yes:
            probs[i] = 0.9 if present else 0.3
        for i in no:
            probs[i] = 0.1 if present else 0.7
        return {"probs": normalised(probs),
                "confidence": self.config["seen_confidence" if present else "unseen_confidence"]}

    @staticmethod
    def _count(choices, category, views):
        columns = {v["view_index"] % 12 for v in views
                   if words(v["caption"] + " " + " ".join(v["objects"])) & set(CATEGORIES[category][2])}
        n = len(columns)
        if n == 0:
            return {"probs": share(choices, set(), 0.0), "confidence": 0.02}
        numbers = [NUMBER_WORDS.index(c.lower()) if c.lower() in NUMBER_WORDS else None for c in choices]
        probs = [math.exp(-abs(k - n)) if k is not None else 0.0 for k in numbers]
        return {"probs": normalised(probs), "confidence": min(0.9, 0.3 + 0.15 * n)}

    @staticmethod
    def _room(choices, category, seen):
        if not seen & set(CATEGORIES[category][2]):
            return {"probs": share(choices, set(), 0.0), "confidence": 0.02}
        matched = {i for i, c in enumerate(choices)
                   if any(name in c.lower() and seen & set(room_words) for name, room_words in ROOM_WORDS.items())}
        if not matched:
            return {"probs": share(choices, set(), 0.0), "confidence": 0.2}
        return {"probs": share(choices, matched, 0.8), "confidence": 0.8}

    @staticmethod
    def _identification(choices, anchor, seen):
        if not seen & set(CATEGORIES[anchor][2]):
            return {"probs": share(choices, set(), 0.0), "confidence": 0.02}
        matched = set()
        for i, choice in enumerate(choices):
            category = category_named(choice)
            if category is not None and seen & set(CATEGORIES[category][2]):
                matched.add(i)
        confidence = 0.8 if len(matched) == 1 else (0.4 if matched else 0.1)
        return {"probs": share(choices, matched, 0.85), "confidence": confidence}


@node_type("eqa.AnswerVLM", **PORTS, role="answer", uses_model=True,
           config_schema=PROMPTED_SCHEMA,
           doc="Asks the pinned model, once per step, for its probability of each choice and its probability "
               "that the current view suffices to answer (ExploreEQA's answer and confidence queries).")
class AnswerVLM(Prompted, Node):
    """Renders `user_template` with {{question}} (the question and lettered choices),
    {{view}} (the current view's text) and {{choices}}, sends it with `system_prompt` to
    the pinned model (with the current view's images in image mode) and reads a JSON
    object {"answer": {"A": p, ..., "D": p}, "confident": p}. Probabilities are clipped
    to [0, 1] and normalised over A-D; a missing letter counts 0. A reply without that
    JSON object, or whose answer probabilities are all 0, gives uniform probabilities
    and confidence 0 (ExploreEQA's value for a view it cannot use); no retry is made. A
    graph without a pinned model_profile, or a missing prompt file, is a node error."""

    def step(self, inputs, ctx):
        images = [v["image"] for v in inputs["view"]["views"] if "image" in v]
        value, _ = self.ask(ctx, {"question": inputs["question"], "view": inputs["view"]["text"],
                                  "choices": "\n".join(inputs["choices"])}, images)
        answer = value.get("answer") if value else None
        probs = [probability(answer.get(letter)) for letter in LETTERS] if isinstance(answer, dict) else [0.0] * 4
        if sum(probs) == 0:
            return {"scores": {"probs": list(UNIFORM), "confidence": 0.0}}
        return {"scores": {"probs": normalised(probs), "confidence": probability(value.get("confident"))}}
