"""The EQA question set: four-way multiple-choice questions (A–D, as HM-EQA asks
them) about a Matterport3D house, each answer true by the annotations
(`annotations.py`), generated deterministically, scan by scan.

Types (per scan, each only when the annotations allow it):
- existence, twice: "Is there a <category> in this house?" once for a category
  annotated near some viewpoint (Yes) and once for one annotated near none (No:
  absence means "not annotated near any viewpoint", not a search of the house).
  Choices Yes, No and twice "(Do not choose this option)", as HM-EQA pads them.
- count: "How many <category> are there in this house?" for a category with 1–6
  annotated objects; the other three choices are other numbers from 1–7.
- room location: "In which room is the <category>?" for a category with exactly
  one object in the house, every viewpoint it is annotated at labelled with the
  same room class, not one of the uncertain classes 1 and 3; three other rooms
  (of the rooms this house has first). Scans without room labels (R2R
  val_unseen) get none.
- identification: "Which of these is near the <anchor>?" for an anchor category
  with one object in the house: the answer is a category annotated at one of
  the anchor's viewpoints (both within about 3 m of it), the three others
  categories of the house annotated at none of them.

Each question has a start viewpoint (drawn among the included viewpoints of the
graph component its evidence is in, not one of the evidence viewpoints, with a
heading in 30° steps) and a step budget of ceil(3 * sqrt(viewpoints of the scan))
moves: ExploreEQA's budget is int(3 * sqrt(floor area in m^2)) steps; here the
scan's viewpoint count stands in for the area. Every draw comes from sha256 of
the version, the scan and a counter, so the set depends on nothing but the data
and QUESTION_SET_VERSION. `question_set_sha256()` is the checksum of the whole
set (recorded in the provenance); RELEASED_SHA256 is its value on the complete
data, checked by the tests.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import deque

from executors.eqa import annotations as A
from executors.eqa import data_reverie
from executors.eqa.vocabulary import ASKED, CATEGORIES, NUMBER_WORDS
from executors.mp3d import data_r2r
from harness.roots import data_home
from harness.schemas import validate_instance

QUESTION_SET_VERSION = 1
RELEASED_SHA256 = "32b916e2c730b3bd79bb17202f441e76f6c2262044ef8f03c88cf8e2fa196f38"   # on the complete data (tested)
LETTERS = ("A", "B", "C", "D")
PAD = "(Do not choose this option)"
BUDGET_FACTOR = 3
MAX_COUNT = 6
TYPES = ("existence", "count", "room_location", "identification")


class Draw:
    """Deterministic choices from sha256(key, counter): the same on every machine and Python."""

    def __init__(self, key: str):
        self.key = key
        self.counter = 0

    def index(self, n: int) -> int:
        self.counter += 1
        digest = hashlib.sha256(f"{self.key}:{self.counter}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % n

    def pick(self, items):
        items = list(items)
        return items[self.index(len(items))]

    def shuffle(self, items) -> list:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.index(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, items, k: int) -> list:
        return self.shuffle(items)[:k]


def room_choice(room_class: int) -> str:
    name = A.ROOM_NAMES[room_class]
    return f"On the {name}" if name in ("stairs", "porch") else f"In the {name}"


def _components(graph) -> dict[str, int]:
    """viewpoint -> component number over the included viewpoints and unobstructed edges."""
    component: dict[str, int] = {}
    for start in (i for i, inc in enumerate(graph.included) if inc):
        if graph.ids[start] in component:
            continue
        label, queue = len(set(component.values())), deque([start])
        component[graph.ids[start]] = label
        while queue:
            for j in graph.neighbours[queue.popleft()]:
                if graph.ids[j] not in component:
                    component[graph.ids[j]] = label
                    queue.append(j)
    return component


class ScanFacts:
    """What one scan's annotations say, in the terms the questions use."""

    def __init__(self, scan: str, notes: A.Annotations, graph):
        self.scan = scan
        self.graph = graph
        self.component = _components(graph)
        self.viewpoints = sorted(self.component)
        self.rooms = notes.rooms(scan)
        self.instances: dict[str, list[A.SceneObject]] = {}
        for obj in notes.objects(scan).values():
            if obj.category in CATEGORIES and any(vp in self.component for vp in obj.views):
                self.instances.setdefault(obj.category, []).append(obj)

    def views_of(self, category: str) -> set[str]:
        return {vp for obj in self.instances.get(category, []) for vp in obj.views if vp in self.component}

    def unique(self) -> list[str]:
        return [c for c in ASKED if len(self.instances.get(c, [])) == 1]


def _finish(facts: ScanFacts, draw: Draw, kind: str, text: str, choices: list[tuple[str, object]],
            answer_key, target: dict, evidence: set[str]) -> dict | None:
    """Shuffle the four choices, draw the start, and build the record; None when no start exists."""
    order = draw.shuffle(choices)
    if evidence:
        counts: dict[int, int] = {}
        for vp in evidence:
            counts[facts.component[vp]] = counts.get(facts.component[vp], 0) + 1
        home = max(sorted(counts), key=lambda c: counts[c])
    else:
        sizes: dict[int, int] = {}
        for c in facts.component.values():
            sizes[c] = sizes.get(c, 0) + 1
        home = max(sorted(sizes), key=lambda c: sizes[c])
    starts = [vp for vp in facts.viewpoints if facts.component[vp] == home and vp not in evidence]
    if not starts:
        return None
    return {
        "version": QUESTION_SET_VERSION, "scan": facts.scan, "type": kind, "question": text,
        "choices": [c[0] for c in order], "keys": [c[1] for c in order],
        "answer": LETTERS[[c[1] for c in order].index(answer_key)],
        "target": target, "evidence": sorted(evidence),
        "start": {"viewpoint": draw.pick(starts), "heading": draw.index(12) * math.pi / 6},
        "viewpoints": len(facts.viewpoints),
        "max_steps": math.ceil(BUDGET_FACTOR * math.sqrt(len(facts.viewpoints))),
    }


def _existence(facts: ScanFacts, draw: Draw) -> list[dict]:
    out = []
    present = [c for c in ASKED if c in facts.instances]
    absent = [c for c in ASKED if c not in facts.instances]
    for pool, key in ((present, "yes"), (absent, "no")):
        if not pool:
            continue
        category = draw.pick(pool)
        text = f"Is there a {CATEGORIES[category][0]} in this house?"
        choices = [("Yes", "yes"), ("No", "no"), (PAD, None), (PAD, None)]
        out.append(_finish(facts, draw, "existence", text, choices, key, {"category": category},
                           facts.views_of(category) if key == "yes" else set()))
    return out


def _count(facts: ScanFacts, draw: Draw) -> list[dict]:
    pool = [c for c in ASKED if 1 <= len(facts.instances.get(c, [])) <= MAX_COUNT]
    if not pool:
        return []
    category = draw.pick(pool)
    truth = len(facts.instances[category])
    others = draw.sample([n for n in range(1, MAX_COUNT + 2) if n != truth], 3)
    text = f"How many {CATEGORIES[category][1]} are there in this house?"
    choices = [(NUMBER_WORDS[n].capitalize(), n) for n in [truth, *others]]
    return [_finish(facts, draw, "count", text, choices, truth, {"category": category},
                    facts.views_of(category))]


def _room_location(facts: ScanFacts, draw: Draw) -> list[dict]:
    pool = []
    for category in facts.unique():
        views = facts.views_of(category)
        classes = {facts.rooms.get(vp) for vp in views}
        if len(classes) == 1 and next(iter(classes)) in A.ROOM_NAMES:
            pool.append((category, next(iter(classes))))
    if not pool:
        return []
    category, room = draw.pick(pool)
    here = sorted({c for c in facts.rooms.values() if c in A.ROOM_NAMES and c != room})
    elsewhere = [c for c in sorted(A.ROOM_NAMES) if c != room and c not in here]
    others = (draw.shuffle(here) + draw.shuffle(elsewhere))[:3]
    text = f"In which room is the {CATEGORIES[category][0]}?"
    choices = [(room_choice(c), c) for c in [room, *others]]
    return [_finish(facts, draw, "room_location", text, choices, room, {"category": category},
                    facts.views_of(category))]


def _identification(facts: ScanFacts, draw: Draw) -> list[dict]:
    pool = []
    for anchor in facts.unique():
        around = facts.views_of(anchor)
        near = [c for c in ASKED if c != anchor and facts.views_of(c) & around]
        far = [c for c in ASKED if c != anchor and c in facts.instances and not facts.views_of(c) & around]
        if near and len(far) >= 3:
            pool.append((anchor, near, far))
    if not pool:
        return []
    anchor, near, far = draw.pick(pool)
    answer = draw.pick(near)
    choices = [(CATEGORIES[c][0].capitalize() if c != "tv_monitor" else CATEGORIES[c][0], c)
               for c in [answer, *draw.sample(far, 3)]]
    text = f"Which of these is near the {CATEGORIES[anchor][0]}?"
    return [_finish(facts, draw, "identification", text, choices, answer, {"category": answer, "anchor": anchor},
                    facts.views_of(anchor))]


def scan_questions(scan: str, notes: A.Annotations | None = None, r2r: data_r2r.Dataset | None = None) -> list[dict]:
    """Every question of one scan, numbered `<scan>-<nn>` in a drawn order (so the number says
    nothing about the type or the answer)."""
    notes = notes or A.annotations()
    r2r = r2r or data_r2r.dataset()
    facts = ScanFacts(scan, notes, r2r.graph(scan))
    draw = Draw(f"eqa-questions/v{QUESTION_SET_VERSION}/{scan}")
    found = [q for make in (_existence, _count, _room_location, _identification) for q in make(facts, draw)
             if q is not None]
    out = [dict(q, question_id=f"{scan}-{n:02d}") for n, q in enumerate(draw.shuffle(found))]
    for q in out:
        problems = validate_instance("eqa_question", q)
        if problems:
            raise ValueError(f"question {q['question_id']} breaks schemas/eqa_question.schema.json: {problems[0]}")
    return out


def canonical(questions: list[dict]) -> bytes:
    return json.dumps(sorted(questions, key=lambda q: q["question_id"]), sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False).encode()


def checksum(questions: list[dict]) -> str:
    return hashlib.sha256(canonical(questions)).hexdigest()


class QuestionSet:
    """The questions of the installed data, generated per scan on first use."""

    def __init__(self, notes: A.Annotations | None = None, r2r: data_r2r.Dataset | None = None):
        self.notes = notes or A.annotations()
        self.r2r = r2r or data_r2r.dataset()
        self._by_scan: dict[str, list[dict]] = {}

    def scan(self, scan: str) -> list[dict]:
        if scan not in self._by_scan:
            self._by_scan[scan] = scan_questions(scan, self.notes, self.r2r)
        return self._by_scan[scan]

    def question(self, question_id: str) -> dict:
        scan = question_id.rsplit("-", 1)[0]
        found = next((q for q in self.scan(scan) if q["question_id"] == question_id), None)
        if found is None:
            raise KeyError(f"the EQA question set (version {QUESTION_SET_VERSION}) has no question {question_id!r}")
        return found

    def scans(self) -> list[str]:
        """The scans whose objects are installed."""
        return sorted(data_reverie.scan_of(rel) for rel in data_reverie.MANIFEST.files
                      if (self.notes.reverie_root / rel).is_file())

    def all(self) -> list[dict]:
        return [q for scan in self.scans() for q in self.scan(scan)]


_shared: dict[str, QuestionSet] = {}


def question_set() -> QuestionSet:
    """The process's QuestionSet over the user's data folder."""
    key = str(data_home())
    if key not in _shared:
        _shared[key] = QuestionSet()
    return _shared[key]


def question_set_sha256(questions: list[dict] | None = None) -> str:
    return checksum(questions if questions is not None else question_set().all())
