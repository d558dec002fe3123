"""`eqa.ConfidenceStop` (when to stop, what to answer) and `eqa.MoveOrStop` (the action)."""

from __future__ import annotations

from executors.eqa.questions import LETTERS
from harness.canvas.registry import Node, node_type

STOP = "stop"
TOLERANCE = 1e-9       # scores equal to the threshold up to rounding count as reaching it


@node_type(
    "eqa.ConfidenceStop",
    inputs={"scores": "AnswerScores", "map": "ValueMap",
            "exhausted": {"type": "Bool", "required": False, "doc": "no frontier left (the planner's output)"}},
    outputs={"answer": {"type": "Text", "doc": "the current final answer, a letter A-D"},
             "stop": {"type": "Bool", "doc": "true when the agent should stop now"}},
    config_schema={"type": "object", "additionalProperties": False, "properties": {
        "threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5,
                      "description": "calibrated threshold 1 - q_hat on confidence x probability "
                                     "(python -m executors.eqa.calibrate)"},
        "final_answer": {"enum": ["weighted_max", "most_confident"], "default": "weighted_max",
                         "description": "weighted_max: argmax over answers of the max over steps of confidence x "
                                        "probability; most_confident: the answer of the most confident step"},
        "stop_when_confident": {"type": "boolean", "default": True,
                                "description": "stop once exactly one answer is in the prediction set"},
        "min_moves": {"type": "integer", "minimum": 0, "default": 0,
                      "description": "never stop on confidence before this many moves"}}},
    role="stopping",
    doc="Explore until confident: keeps, per answer, the max over steps of confidence x probability; stops "
        "when exactly one answer reaches the calibrated threshold (or nothing is left to explore); answers "
        "as ExploreEQA's released code does.",
)
class ConfidenceStop(Node):
    """Each step it receives answer probabilities p_t and a confidence c_t and keeps
    s(y) = max over the steps so far of c_t x p_t(y). The prediction set is {y : s(y) >=
    `threshold`}; with `stop_when_confident` it stops when that set holds exactly one
    answer and at least `min_moves` moves were made, and always when the planner reports
    `exhausted`. The answer is emitted every step: 'weighted_max' is argmax_y s(y)
    (ExploreEQA's first rule), 'most_confident' the argmax of c_t x p_t at the step of
    highest confidence (its second rule); ties go to the earlier letter. The threshold is
    1 - q_hat of split conformal prediction (`executors.eqa.calibrate`: the
    ceil((n+1)(1-epsilon))/n quantile of 1 - s(true answer) over calibration questions
    run to their budget); the paper calibrates its stop this way, the released code
    runs every question to its budget. When the budget ends the episode first, the last
    answer emitted counts."""

    def reset(self, ctx):
        self.best = [0.0] * len(LETTERS)
        self.steps: list[tuple[float, list[float]]] = []

    def step(self, inputs, ctx):
        scores = inputs["scores"]
        confidence, probs = float(scores["confidence"]), [float(p) for p in scores["probs"]]
        weighted = [confidence * p for p in probs]
        self.best = [max(a, b) for a, b in zip(self.best, weighted)]
        self.steps.append((confidence, weighted))
        if self.config["final_answer"] == "weighted_max":
            pick = self.best
        else:
            pick = max(self.steps, key=lambda s: s[0])[1]          # first step of the highest confidence
        answer = LETTERS[pick.index(max(pick))]
        confident = [LETTERS[i] for i, s in enumerate(self.best) if s >= self.config["threshold"] - TOLERANCE]
        stop = bool(inputs.get("exhausted")) or (
            self.config["stop_when_confident"] and len(confident) == 1
            and inputs["map"]["moves"] >= self.config["min_moves"])
        ctx.log(scores=[round(b, 6) for b in self.best], prediction_set=confident, answer=answer, stop=stop)
        return {"answer": answer, "stop": stop}


@node_type(
    "eqa.MoveOrStop",
    inputs={"move": {"type": "Text", "required": False, "doc": "the planner's next place"},
            "stop": {"type": "Bool", "required": False, "doc": "stop now"}},
    outputs={"actions": {"type": "ActionChunk", "doc": "['stop'] or [the next place]"}},
    config_schema={"type": "object", "properties": {}, "additionalProperties": False},
    role="action",
    doc="Stop when told to or when there is no place to move to; otherwise move to the planner's next place.",
)
class MoveOrStop(Node):
    """Emits ['stop'] when `stop` is true or no `move` arrived this tick (nothing left to
    explore), else [move]. It has no config."""

    def step(self, inputs, ctx):
        if inputs.get("stop") or not inputs.get("move"):
            return {"actions": [STOP]}
        return {"actions": [inputs["move"]]}
