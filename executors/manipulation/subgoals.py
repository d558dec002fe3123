"""Text subgoals between the planner and the low-level policy of the `vla` seeds.

The offline scripted policy understands three forms (a real π0 server takes any
instruction text):
  "move to (x, y, z) with the gripper open|closed"   (metres, world frame)
  "close the gripper"
  "open the gripper"
`next_subgoal` is the scripted planner's rule: from the true scene, the next
subgoal for the instruction (grasp the object, carry it to its goal, release).
"""

from __future__ import annotations

import re

import numpy as np

from executors.manipulation.scene import INSTRUCTIONS

_MOVE = re.compile(r"move to \(\s*(-?[\d.]+),\s*(-?[\d.]+),\s*(-?[\d.]+)\s*\)(?: with the gripper (open|closed))?")
_TASK_OF = {text: task for task, text in INSTRUCTIONS.items()}
# task -> (object to grasp, object whose position anchors the goal, goal offset from it)
_PLANS = {"Lift": ("cube", "cube", (0, 0, 0.15)), "Stack": ("red cube", "green cube", (0, 0, 0.05)),
          "PickPlaceCan": ("can", "bin", (0, 0, 0.15)), "Door": ("handle", "handle", (-0.1, 0, 0))}
OPEN_WIDTH = 0.07  # finger opening (m) below which the gripper counts as closed on something


class SubgoalError(ValueError):
    """A subgoal the scripted policy does not understand."""


def parse(text: str) -> tuple[np.ndarray | None, float]:
    """(target position or None, gripper command -1 open / +1 closed)."""
    text = text.strip().lower()
    if text.startswith("close the gripper"):
        return None, 1.0
    if text.startswith("open the gripper"):
        return None, -1.0
    match = _MOVE.search(text)
    if match is None:
        raise SubgoalError(f"not a subgoal the scripted policy understands: {text[:80]!r} "
                           "(expected 'move to (x, y, z) with the gripper open|closed', "
                           "'close the gripper' or 'open the gripper')")
    target = np.array([float(match.group(i)) for i in (1, 2, 3)])
    return target, (1.0 if match.group(4) == "closed" else -1.0)


def move(target, closed: bool) -> str:
    x, y, z = (float(v) for v in target)
    return f"move to ({x:.3f}, {y:.3f}, {z:.3f}) with the gripper {'closed' if closed else 'open'}"


def next_subgoal(instruction: str, objects: dict, gripper: dict) -> str:
    if instruction not in _TASK_OF:
        raise SubgoalError(f"no scripted plan for the instruction {instruction!r}")
    grasp, anchor, offset = _PLANS[_TASK_OF[instruction]]
    item = np.asarray(objects[grasp]["position"])
    goal = np.asarray(objects[anchor]["position"]) + np.asarray(offset)
    eef = np.asarray(gripper["position"])
    closed = gripper["opening"] < OPEN_WIDTH
    if closed and np.linalg.norm(eef - item) < 0.03:  # holding it
        if np.linalg.norm(eef - goal) < 0.015:
            return "open the gripper"
        return move(goal, closed=True)
    if np.linalg.norm(eef - item) < 0.012:
        return "close the gripper"
    if np.linalg.norm((eef - item)[:2]) < 0.01:
        return move(item, closed=False)
    return move(item + np.array([0, 0, 0.08]), closed=False)
