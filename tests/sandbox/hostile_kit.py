"""What the hostile corpus needs per executor: a seed to add the spy to, the simulator
output the spy reads (and its port type), the executor's own helper module (if it
grants one to candidate code), the simulator's privileged outputs, and short real
episodes (LIBERO's and robosuite's cut to a few steps: their episodes are slow).

Each corpus file is written for BabyAI (`candidate.Spy` reading an `Observation`,
importing `executors.babyai.world as W`); `adapt` rewrites those lines for another
executor, so the same code runs against every simulator."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from harness import PROJECT_ROOT

HOSTILE = Path(__file__).parent / "hostile"
CORPUS = sorted(HOSTILE.glob("*.py"))
DECLARATION = '@node_type("Spy", inputs={"observation": "Observation"}'
HELPER = "from executors.babyai import world as W\n"


@dataclass(frozen=True)
class Case:
    executor: str
    seed: str
    port: str           # the simulator output wired into the spy
    port_type: str
    helper: str         # the import line of the executor's sandbox helper module ("" when it has none)
    privileged: tuple[str, ...]
    steps: int | None   # episode step cap (None: the tier's)
    episodes: int = 1   # how many smoke episodes


CASES = {
    "babyai": Case("babyai", "babyai", "observation", "Observation", HELPER,
                   ("true_pose", "full_grid", "verifier"), None, 2),
    "mapgpt": Case("mapgpt", "mapgpt-heuristic", "panorama", "Panorama", "", ("reference_path",), 4),
    "smartway": Case("smartway", "smartway-heuristic", "panorama", "Panorama",
                     "from executors.mp3d import instructions as W\n", ("reference_path",), 4),
    "eqa": Case("eqa", "explore-eqa-heuristic", "panorama", "Panorama",
                "from executors.eqa import vocabulary as W\n", ("truth",), 4),
    "manipulation": Case("manipulation", "voxposer-scripted", "objects", "Objects", "", ("success",), 4),
    "libero": Case("libero", "voxposer-libero-scripted", "objects", "Objects", "", ("success",), 2),
}


def adapt(source: str, case: Case, type_name: str = "Spy") -> str:
    """The corpus file for `case`'s executor, its type named `type_name`."""
    assert DECLARATION in source and HELPER in source
    out = source.replace(DECLARATION, f'@node_type("{type_name}", inputs={{"observation": "{case.port_type}"}}')
    out = out.replace(HELPER, case.helper)
    if case.executor != "babyai":  # roles are per executor; a type may leave its role out
        out = out.replace('role="perception", ', "")
    return out


def candidate(folder: Path, case: Case, sources: dict[str, str]) -> tuple[Path, dict]:
    """The case's seed with `sources` (file stem -> adapted source) as its nodeset; the graph
    has no spy node yet (`with_spy` adds one)."""
    shutil.copytree(PROJECT_ROOT / "seeds" / case.seed, folder)
    (folder / "nodeset").mkdir(exist_ok=True)
    for stem, source in sources.items():
        (folder / "nodeset" / f"{stem}.py").write_text(source)
    return folder, json.loads((folder / "graph.json").read_text())


def with_spy(graph: dict, case: Case, node: str = "spy", type_name: str = "Spy", port: str | None = None) -> dict:
    graph = json.loads(json.dumps(graph))
    graph["nodes"][node] = {"type": f"candidate.{type_name}", "config": {}}
    graph["edges"].append({"from": f"sim.{port or case.port}", "to": f"{node}.observation"})
    return graph


def episodes(case: Case) -> list[dict]:
    from harness.executor_api import load_executor

    chosen = [dict(e) for e in load_executor(case.executor).episodes("smoke")[:case.episodes]]
    if case.steps is not None:
        for episode in chosen:
            episode["max_steps"] = case.steps
    return chosen
