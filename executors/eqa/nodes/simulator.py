"""`eqa.Simulator`: one multiple-choice question about a Matterport3D house, asked
at a start viewpoint, answered while moving over the navigation graph."""

from __future__ import annotations

from executors.eqa import accuracy_by_type
from executors.eqa.questions import LETTERS, QUESTION_SET_VERSION, question_set
from executors.mp3d.walker import config_schema
from executors.mp3d.waypoints import ACTIONS_PORT, BODY_OUTPUTS, WaypointSimulator
from harness.canvas.registry import node_type


def formatted(question: dict) -> str:
    """The question with its lettered choices, one per line (as ExploreEQA prompts it)."""
    return question["question"] + "".join(f"\n{letter}. {choice}" for letter, choice in zip(LETTERS, question["choices"]))


@node_type(
    "eqa.Simulator",
    inputs={"actions": ACTIONS_PORT,
            "answer": {"type": "Text", "required": False,
                       "doc": "the agent's current answer, a letter A-D; the latest one given counts"}},
    outputs={
        "question": {"type": "Text", "doc": "the question followed by 'A. ...' to 'D. ...' on their own lines"},
        "choices": {"type": "List[Text]", "doc": "the four choices, A to D"},
        **BODY_OUTPUTS,
        "feedback": {"type": "Feedback",
                     "doc": "{executed: the actions run in the previous tick, moved_to: the viewpoint after them, "
                            "stopped, answer: the latest valid letter received so far, or null}. It reports the "
                            "previous tick: the actions sent at tick t run when tick t ends (its answer is taken "
                            "then too), and nodes read what they did at tick t + 1 (at tick 0: executed empty, "
                            "answer null)"},
        "truth": {"type": "Text", "privileged": True, "doc": "the correct letter (scoring and debugging only)"},
    },
    config_schema=config_schema("truth"),
    doc="An EQA question on a Matterport3D graph (a discrete-graph port of HM-EQA's setting, not HM-EQA): "
        "moves to navigable neighbours, explicit stop, the latest answer A-D is scored.",
)
class Simulator(WaypointSimulator):
    """One question per reset (episode key `question_id`): the agent starts at the
    question's start viewpoint and heading. Each action is executed in order: 'stop'
    ends the episode; a viewpoint id moves there if it is a navigable neighbour of the
    current viewpoint (the walker turns until that neighbour's nearest-centre view is
    current, then moves), and anything else raises (a node error). Every move and the
    stop count as one step, so the runtime's step cap (the question's budget, which the
    tier lists as the episode's `max_steps`, or the graph's smaller one) ends an episode
    that never stops; the simulator has no cap of its own and shows that cap as `budget`.
    The `answer` port may carry a letter every tick; the latest valid letter (A-D)
    counts, anything else is ignored (and counted in `invalid_answers`). Each tick
    it emits the question with its lettered choices, the state (position, heading, moves
    so far and the budget), the 36-view panorama of the current viewpoint (cached per
    viewpoint) with captions and detected objects, and feedback. Image mode needs the
    real MatterSim with rendering and raises otherwise. The result: `accuracy` (1 when
    the latest answer is the correct letter, else 0; no answer is wrong),
    `accuracy_<type>` for the question's type, the answer and the truth, moves, path
    length (metres along the graph), whether it stopped, the start, the trajectory and
    the question set's version."""

    def reset_episode(self, episode: dict, ctx) -> dict:
        self.item = question_set().question(episode["question_id"])
        self.budget = episode.get("max_steps")  # the runtime's step cap on this episode, shown to the agent
        self.answer: str | None = None
        self.invalid_answers = 0
        self.begin(self.item["scan"], self.item["start"]["viewpoint"], self.item["start"]["heading"])
        return self.outputs()

    def on_tick(self, inputs: dict) -> None:
        answer = inputs.get("answer")
        if answer is None:
            return
        letter = str(answer).strip().upper()
        if letter in LETTERS:
            self.answer = letter
        else:
            self.invalid_answers += 1

    def result(self) -> dict:
        item = self.item
        correct = float(self.answer == item["answer"])
        return {"success": bool(correct), "reward": correct, "accuracy": correct, **accuracy_by_type(item["type"], correct),
                "question_id": item["question_id"], "type": item["type"], "scan": item["scan"],
                "answer": self.answer, "truth": item["answer"], "answered": self.answer is not None,
                "invalid_answers": self.invalid_answers, "moves": self.moves, "budget": self.budget,
                "path_length": self.path_length(), "stopped": self.stopped,
                "ended": "stopped" if self.stopped else "not_stopped", "start": item["start"]["viewpoint"],
                "trajectory": self.walker.trajectory, "question_set_version": QUESTION_SET_VERSION,
                **self.walker.provenance()}

    def outputs(self) -> dict:
        body = super().outputs()
        body["state"]["budget"] = self.budget
        body["feedback"]["answer"] = self.answer
        out = {"question": formatted(self.item), "choices": list(self.item["choices"]), **body}
        if self.config.get("privileged_outputs"):
            out["truth"] = self.item["answer"]
        return out
