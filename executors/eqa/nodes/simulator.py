"""`eqa.Simulator`: one multiple-choice question about a Matterport3D house, asked
at a start viewpoint, answered while moving over the navigation graph."""

from __future__ import annotations

from executors.eqa.questions import LETTERS, QUESTION_SET_VERSION, question_set
from executors.mp3d import data_r2r as D
from executors.mp3d.metrics import viewpoint_path
from executors.mp3d.walker import Walker
from harness.canvas.registry import SimulatorNode, node_type

STOP = "stop"


def formatted(question: dict) -> str:
    """The question with its lettered choices, one per line (as ExploreEQA prompts it)."""
    return question["question"] + "".join(f"\n{letter}. {choice}" for letter, choice in zip(LETTERS, question["choices"]))


@node_type(
    "eqa.Simulator",
    inputs={"actions": {"type": "ActionChunk",
                        "doc": "navigable neighbours of the current viewpoint to move to, in order, or 'stop'"},
            "answer": {"type": "Text", "required": False,
                       "doc": "the agent's current answer, a letter A-D; the latest one given counts"}},
    outputs={
        "question": {"type": "Text", "doc": "the question followed by 'A. ...' to 'D. ...' on their own lines"},
        "choices": {"type": "List[Text]", "doc": "the four choices, A to D"},
        "state": {"type": "NavState", "doc": "{scan, viewpoint, position [x, y, z], heading, elevation, view_index, "
                                             "moves, budget}"},
        "panorama": {"type": "Panorama", "doc": "{viewpoint, views: 36 x {view_index, heading, elevation, "
                                                "navigable, caption, objects[, image]}}"},
        "feedback": {"type": "Feedback", "doc": "{executed: actions run this tick, moved_to, stopped, answer}"},
        "truth": {"type": "Text", "privileged": True, "doc": "the correct letter (scoring and debugging only)"},
    },
    config_schema={
        "type": "object",
        "properties": {
            "backend": {"enum": ["auto", "graph", "mattersim"], "default": "auto",
                        "description": "auto: the real MatterSim when importable, else the graph backend"},
            "observation": {"enum": ["text", "image"], "default": "text",
                            "description": "image: keep each view's RGB (real MatterSim with rendering only)"},
            "dataset_path": {"type": ["string", "null"], "default": None,
                             "description": "Matterport3D scans folder for image mode (MatterSim's setDatasetPath)"},
            "privileged_outputs": {"type": "boolean", "default": False,
                                   "description": "emit truth (scoring, debugging)"},
        },
        "additionalProperties": False,
    },
    doc="An EQA question on a Matterport3D graph (a discrete-graph port of HM-EQA's setting, not HM-EQA): "
        "moves to navigable neighbours, explicit stop, the latest answer A-D is scored.",
)
class Simulator(SimulatorNode):
    """One question per reset (episode key `question_id`): the agent starts at the
    question's start viewpoint and heading. Each action is executed in order: 'stop'
    ends the episode; a viewpoint id moves there if it is a navigable neighbour of the
    current viewpoint (the walker turns until that neighbour's nearest-centre view is
    current, then moves), and anything else raises (a node error). Every move counts as
    one step, so the runtime's step cap (the question's budget, `max_steps` of the
    episode) ends an episode that never stops; the simulator has no cap of its own. The
    `answer` port may carry a letter every tick; the latest valid letter (A-D) counts,
    anything else is ignored (and counted in `invalid_answers`). Each tick it emits the
    question with its lettered choices, the state (position of the current viewpoint,
    moves so far and the budget), the 36-view panorama of the current viewpoint (cached
    per viewpoint) with captions and detected objects, and feedback. Image mode needs the
    real MatterSim with rendering and raises otherwise. The result: `accuracy` (1 when
    the latest answer is the correct letter, else 0; no answer is wrong),
    `accuracy_<type>` for the question's type, the answer and the truth, moves, path
    length (metres along the graph), whether it stopped, the start, the trajectory and
    the question set's version."""

    def setup(self) -> None:
        self.data = D.dataset()
        self.walker = Walker(self.data, backend=self.config["backend"],
                             image_mode=self.config["observation"] == "image",
                             dataset_path=self.config.get("dataset_path"))

    def reset_episode(self, episode: dict, ctx) -> dict:
        item = question_set().question(episode["question_id"])
        self.item = item
        self.budget = episode.get("max_steps", item["max_steps"])
        self.walker.start(item["scan"], item["start"]["viewpoint"], item["start"]["heading"])
        self.graph = self.data.graph(item["scan"])
        self.moves = 0
        self.stopped = False
        self.answer: str | None = None
        self.invalid_answers = 0
        self._executed: list = []
        self._tick = None
        return self._outputs()

    def step(self, inputs: dict, ctx) -> dict:
        tick = getattr(ctx, "tick", None)
        if tick != self._tick:
            self._executed, self._tick = [], tick
            self._take_answer(inputs.get("answer"))
        actions = inputs.get("actions")
        if isinstance(actions, str):
            actions = [actions]
        for action in actions or []:
            if self.done():
                break
            if action == STOP:
                self.stopped = True
            else:
                self.walker.move_to(str(action))
                self.moves += 1
            self._executed.append(action)
        return self._outputs()

    def _take_answer(self, answer) -> None:
        if answer is None:
            return
        letter = str(answer).strip().upper()
        if letter in LETTERS:
            self.answer = letter
        else:
            self.invalid_answers += 1

    def done(self) -> bool:
        return self.stopped

    def result(self) -> dict:
        item = self.item
        correct = float(self.answer == item["answer"])
        path = viewpoint_path(self.walker.trajectory)
        length = sum(self.graph.distance(a, b) for a, b in zip(path[:-1], path[1:]))
        return {"success": bool(correct), "reward": correct, "accuracy": correct, f"accuracy_{item['type']}": correct,
                "question_id": item["question_id"], "type": item["type"], "scan": item["scan"],
                "answer": self.answer, "truth": item["answer"], "answered": self.answer is not None,
                "invalid_answers": self.invalid_answers, "moves": self.moves, "budget": self.budget,
                "path_length": float(length), "stopped": self.stopped,
                "ended": "stopped" if self.stopped else "not_stopped", "start": item["start"]["viewpoint"],
                "trajectory": self.walker.trajectory, "question_set_version": QUESTION_SET_VERSION,
                **self.walker.provenance()}

    def close(self) -> None:
        self.walker.close()

    def _outputs(self) -> dict:
        state = self.walker.state
        vp = state.location.viewpointId
        out = {
            "question": formatted(self.item),
            "choices": list(self.item["choices"]),
            "state": {"scan": state.scanId, "viewpoint": vp, "position": list(self.graph.position(vp)),
                      "heading": state.heading, "elevation": state.elevation, "view_index": state.viewIndex,
                      "moves": self.moves, "budget": self.budget},
            "panorama": {"viewpoint": vp, "views": self.walker.panorama(vp)},
            "feedback": {"executed": list(self._executed), "moved_to": vp, "stopped": self.stopped,
                         "answer": self.answer},
        }
        if self.config.get("privileged_outputs"):
            out["truth"] = self.item["answer"]
        return out
