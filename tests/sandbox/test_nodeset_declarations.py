"""Validating a candidate whose nodeset files this process declared before (the same bytes, in
another folder: a staged copy) reuses the declaration instead of starting a sandbox process;
changed bytes are declared afresh, and nodes of a reused declaration run in their own folder."""

from __future__ import annotations

import json
import shutil

from harness import PROJECT_ROOT
from harness.canvas import isolated
from harness.canvas.runtime import GraphRunner
from harness.canvas.validate import validate_graph

SEED = PROJECT_ROOT / "seeds" / "babyai"
NODE = '''from harness.canvas.registry import Node, node_type


@node_type("Echo", inputs={"mission": "Text"}, outputs={"text": "Text"}, config_schema={"type": "object"},
           doc="reads a file of its own candidate folder")
class Echo(Node):
    def step(self, inputs, ctx):
        return {"text": (ctx.candidate_dir / "note.txt").read_text()}
'''


def _candidate(folder, source, note):
    shutil.copytree(SEED, folder)
    (folder / "nodeset").mkdir(exist_ok=True)
    (folder / "nodeset" / "echo.py").write_text(source)
    (folder / "note.txt").write_text(note)
    graph = json.loads((folder / "graph.json").read_text())
    graph["nodes"]["echo"] = {"type": "candidate.Echo", "config": {}}
    graph["edges"].append({"from": "sim.mission", "to": "echo.mission"})
    return graph


def test_the_same_nodeset_bytes_in_another_folder_are_declared_once(tmp_path, monkeypatch):
    started = []

    class Counting(isolated.SandboxProcess):
        def _ensure_started(self):
            if not self.running:
                started.append(self.program)
            super()._ensure_started()

    monkeypatch.setattr(isolated, "SandboxProcess", Counting)
    first = _candidate(tmp_path / "a", NODE, "from a")
    assert [p for p in validate_graph(first, candidate_dir=tmp_path / "a") if p.severity == "error"] == []
    assert len(started) == 1
    second = _candidate(tmp_path / "b", NODE, "from b")
    assert [p for p in validate_graph(second, candidate_dir=tmp_path / "b") if p.severity == "error"] == []
    assert len(started) == 1  # declared before: no sandbox process for validation
    changed = _candidate(tmp_path / "c", NODE.replace('"text": "Text"}', '"text": "Text", "more": "Text"}'), "c")
    validate_graph(changed, candidate_dir=tmp_path / "c")
    assert len(started) == 2  # other bytes: loaded in a sandbox again

    seen = []
    with GraphRunner(second, candidate_dir=tmp_path / "b") as runner:
        step = runner.nodes["echo"].step
        runner.nodes["echo"].step = lambda inputs, ctx: seen.append(step(inputs, ctx)) or seen[-1]
        runner.run_episode({"level": "BabyAI-GoToLocal-v0", "seed": 1, "episode_id": "GoToLocal:1", "max_steps": 2})
    assert seen and all(out == {"text": "from b"} for out in seen)  # the node runs in its own folder


def test_a_candidate_given_by_a_relative_path_loads_its_nodeset(tmp_path, monkeypatch):
    # the sandbox process runs in an empty folder of its own: the files it reads are sent as absolute paths
    from pathlib import Path

    from harness.evaluation.candidate import load_candidate

    source = NODE + "# declared afresh, not reused: " + str(tmp_path) + "\n"
    graph = _candidate(tmp_path / "cand", source, "relative")
    (tmp_path / "cand" / "graph.json").write_text(json.dumps(graph))
    monkeypatch.chdir(tmp_path)
    assert load_candidate(Path("cand")).directory == Path("cand")
