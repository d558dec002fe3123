"""BabyAI mission grammar -> ordered text subgoals, and subgoal text -> structure.

Grammar (minigrid's BabyAI `surface()`): a mission is `S`, `S, then S` or
`S after you S`; `S` is `L` or `L and L`; a leaf `L` is `go to D`, `pick up D`,
`open D` or `put D next to D`; `D` is `(the|a) [colour] (door|key|ball|box|object)`
optionally followed by `in front of you`, `behind you`, `on your left|right`.
"""

from __future__ import annotations

import re

COLORS = ("red", "green", "blue", "purple", "yellow", "grey")
TYPES = ("door", "key", "ball", "box", "object")
LOCS = {"in front of you": "front", "behind you": "behind", "on your left": "left", "on your right": "right"}

_DESC = re.compile(
    r"^(?:the|a|an)\s+(?:(?P<color>" + "|".join(COLORS) + r")\s+)?(?P<type>" + "|".join(TYPES) + r")"
    r"(?:\s+(?P<loc>in front of you|behind you|on your left|on your right))?$")
_LEAF = re.compile(r"^(?P<verb>go to|pick up|open|put)\s+(?P<rest>.+)$")


class MissionParseError(ValueError):
    """Text that is not in the BabyAI grammar."""


def mission_groups(mission: str) -> list[list[str]]:
    """Subgoals grouped into stages: stages run in order, the parts of one
    stage (joined by 'and') in any order."""
    text = " ".join(mission.strip().rstrip(".").split())
    if " after you " in text:
        first, second = text.split(" after you ", 1)
        return mission_groups(second) + mission_groups(first)
    parts = re.split(r",?\s+then\s+", text, maxsplit=1)
    if len(parts) == 2:
        return mission_groups(parts[0]) + mission_groups(parts[1])
    return [[p.strip() for p in text.split(" and ")]]


def split_mission(mission: str) -> list[str]:
    """Ordered leaf subgoals: 'A after you B' puts B first; 'and' keeps the written order."""
    leaves = [leaf for stage in mission_groups(mission) for leaf in stage]
    for leaf in leaves:
        parse_subgoal(leaf)  # raises on anything outside the grammar
    return leaves


def parse_desc(text: str) -> dict:
    match = _DESC.match(text.strip())
    if not match:
        raise MissionParseError(f"not an object description: {text!r}")
    obj_type = match["type"]
    return {"type": None if obj_type == "object" else obj_type, "color": match["color"],
            "loc": LOCS.get(match["loc"]) if match["loc"] else None}


def parse_subgoal(text: str) -> dict:
    """'put the red ball next to a door' -> {'verb': 'put', 'obj': {...}, 'target': {...}}."""
    match = _LEAF.match(" ".join(text.strip().split()))
    if not match:
        raise MissionParseError(f"not a BabyAI subgoal: {text!r}")
    verb, rest = match["verb"], match["rest"]
    if verb == "put":
        if " next to " not in rest:
            raise MissionParseError(f"'put' without 'next to': {text!r}")
        obj, target = rest.split(" next to ", 1)
        return {"verb": "put", "obj": parse_desc(obj), "target": parse_desc(target)}
    key = {"go to": "goto", "pick up": "pickup", "open": "open"}[verb]
    return {"verb": key, "obj": parse_desc(rest)}
