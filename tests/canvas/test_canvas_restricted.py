"""Candidate node code (nodeset/*.py) runs restricted: the declared ports are the
only way data reaches it. Every route to privileged state a hostile candidate
might take is refused at load time (a nodeset_error of validation) or when it
runs (an error of that node), and SystemExit/KeyboardInterrupt raised by a
candidate node are the candidate's failure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness import PROJECT_ROOT
from harness.canvas.context import Context, EpisodeState
from harness.canvas.registry import for_graph
from harness.canvas.restricted import CandidateCodeError
from harness.canvas.validate import validate_graph

SEED_LLM = PROJECT_ROOT / "seeds" / "babyai-llm"
HEAD = '''from harness.canvas.registry import Node, node_type
from executors.babyai import world as W


@node_type("Spy", inputs={"observation": "Observation"}, outputs={"text": "Text"},
           config_schema={"type": "object"}, role="perception", doc="spy")
class Spy(Node):
    def step(self, inputs, ctx):
'''

# refused when the file is compiled: validation reports nodeset_error at the line
AT_LOAD = {
    "import_gc": "import gc\n" + HEAD + "        return {'text': str(len(gc.get_objects()))}\n",
    "import_sys_in_method": HEAD + "        import sys\n        return {'text': str(sys._getframe(1))}\n",
    "import_inspect": HEAD + "        import inspect\n        return {'text': str(inspect.stack())}\n",
    "import_ctypes": "import ctypes\n" + HEAD + "        return {'text': ''}\n",
    "import_os_from": "from os import path\n" + HEAD + "        return {'text': ''}\n",
    "import_executor_nodes": "from executors.babyai import nodes\n" + HEAD + "        return {'text': ''}\n",
    "import_runtime": "from harness.canvas import runtime\n" + HEAD + "        return {'text': ''}\n",
    "relative_import": "from . import other\n" + HEAD + "        return {'text': ''}\n",
    "dunder_class": HEAD + "        return {'text': str(().__class__.__base__.__subclasses__())}\n",
    "dunder_dict": HEAD + "        return {'text': str(self.__dict__)}\n",
    "dunder_import": HEAD + "        return {'text': str(__import__('os'))}\n",
    "frame_attr": HEAD + "        g = (x for x in [1])\n        return {'text': str(g.gi_frame.f_back)}\n",
    "eval": HEAD + "        return {'text': eval('1')}\n",
    "exec": HEAD + "        exec('x = 1')\n        return {'text': ''}\n",
    "guard_rebind": "_getattr_ = getattr\n" + HEAD + "        return {'text': ''}\n",
    "typing_eval": "import typing\n" + HEAD + "        return {'text': str(typing.get_type_hints(self))}\n",
    "singledispatch_eval": "from functools import singledispatch\n" + HEAD + "        return {'text': ''}\n",
    "str_format_reads_attributes": HEAD + "        return {'text': '{0._shared}'.format(ctx)}\n",
    "top_level_sysexit": "raise SystemExit(0)\n" + HEAD + "        return {'text': ''}\n",
}

# refused when it runs: the node fails with CandidateCodeError
AT_RUN = {
    "private_of_context": HEAD + "        return {'text': str(ctx._shared.state)}\n",
    "getattr_private": HEAD + "        return {'text': str(getattr(ctx, '_shared'))}\n",
    "getattr_dunder": HEAD + "        return {'text': str(getattr(ctx, '__class__'))}\n",
    "getattr_frame": HEAD + "        g = (x for x in [1])\n        return {'text': str(getattr(g, 'gi_frame'))}\n",
    "context_outside_api": HEAD + "        return {'text': str(ctx._shared)}\n",
    "read_outside_candidate": HEAD + "        return {'text': (ctx.candidate_dir / '..' / '..').read_text()}\n",
    "read_absolute": HEAD + "        return {'text': (ctx.candidate_dir / '/etc/hostname').read_text()}\n",
    "write_candidate_file": HEAD + "        (ctx.candidate_dir / 'x.txt').write_text('x')\n        return {'text': ''}\n",
    "path_open": HEAD + "        return {'text': (ctx.candidate_dir / 'skill.md').open().read()}\n",
    "model_internals": HEAD + "        m = ctx.model\n        return {'text': str(m and m.profile)}\n",
    "numpy_file_io": "import numpy as np\n" + HEAD + "        return {'text': str(np.loadtxt('/etc/hostname'))}\n",
    "numpy_via_helper_module": HEAD + "        return {'text': str(W.np.fromfile)}\n",
    "module_traversal": "import executors.babyai.world\n" + HEAD
                        + "        return {'text': str(executors.babyai.nodes)}\n",
    "mutate_helper_module": HEAD + "        W.ACTION_INDEX['forward'] = 0\n        return {'text': ''}\n",
    "mutate_helper_via_method": HEAD + "        W.ACTION_INDEX.update(forward=0)\n        return {'text': ''}\n",
    "write_helper_module": HEAD + "        W.VIEW = 3\n        return {'text': ''}\n",
    "write_context": HEAD + "        ctx.node_id = 'other'\n        return {'text': ''}\n",
    "write_node_base": "from harness.canvas.registry import Node as Base\n" + HEAD
                       + "        Base.step = None\n        return {'text': ''}\n",
    "sys_exit": HEAD + "        raise SystemExit(1)\n",
    "keyboard_interrupt": HEAD + "        raise KeyboardInterrupt\n",
    "generator_exit": HEAD + "        raise GeneratorExit\n",
    "inherited_exit": HEAD.replace("class Spy(Node):", "class Base(Node):\n    def step(self, inputs, ctx):\n"
                                   "        raise SystemExit(2)\n\n\nclass Spy(Base):")
                      + "        return super().step(inputs, ctx)\n",
    "staticmethod_exit": "def _boom(inputs, ctx):\n    raise KeyboardInterrupt\n\n\n" + HEAD.replace(
        "    def step(self, inputs, ctx):\n", "    step = staticmethod(_boom)\n\n    def unused(self, inputs, ctx):\n")
                         + "        return {}\n",
}


def _candidate(tmp_path: Path, source: str) -> tuple[Path, dict]:
    candidate = tmp_path / "candidate"
    shutil.copytree(SEED_LLM, candidate)
    (candidate / "nodeset" / "spy.py").write_text(source)
    graph = json.loads((candidate / "graph.json").read_text())
    graph["nodes"]["spy"] = {"type": "candidate.Spy", "config": {}}
    graph["edges"].append({"from": "sim.observation", "to": "spy.observation"})
    (candidate / "graph.json").write_text(json.dumps(graph))
    return candidate, graph


@pytest.mark.parametrize("case", sorted(AT_LOAD))
def test_refused_when_the_file_is_compiled(case, tmp_path):
    candidate, graph = _candidate(tmp_path, AT_LOAD[case])
    errors = [p for p in validate_graph(graph, candidate_dir=candidate) if p.severity == "error"]
    assert any(p.code == "nodeset_error" and "nodeset/spy.py" in p.message for p in errors), \
        [p.message for p in errors]


@pytest.mark.parametrize("case", sorted(AT_RUN))
def test_refused_when_it_runs(case, tmp_path):
    candidate, graph = _candidate(tmp_path, AT_RUN[case])
    assert not [p for p in validate_graph(graph, candidate_dir=candidate) if p.severity == "error"]
    spy = for_graph(graph, candidate).get("candidate.Spy").cls("spy", {})
    ctx = Context("spy", EpisodeState({}, object(), candidate))  # a model client is wired, too
    with pytest.raises(CandidateCodeError):
        spy.step({"observation": {}}, ctx)


def test_allowed_code_runs_with_private_state_of_its_own(tmp_path):
    source = HEAD.replace("    def step", "    def setup(self):\n        self._seen = []\n\n    def step") + (
        "        self._seen.append(ctx.tick)\n"
        "        ok = hasattr(ctx, '_shared') or hasattr(self, '_seen')\n"
        "        ok = ok and (ctx.candidate_dir / 'skill.md').read_text().startswith('#')\n"
        "        return {'text': f\"{len(self._seen)} {ok} {W.ACTIONS[2]} {sorted({'b': 1, 'a': 2})}\"}\n")
    candidate, graph = _candidate(tmp_path, source)
    spy = for_graph(graph, candidate).get("candidate.Spy").cls("spy", {})
    spy.setup()
    ctx = Context("spy", EpisodeState({}, None, candidate))
    assert spy.step({"observation": {}}, ctx) == {"text": "1 True forward ['a', 'b']"}
    assert spy.step({"observation": {}}, ctx)["text"].startswith("2 ")


def test_the_seed_view_text_loads_restricted_and_reads_its_port():
    import gymnasium as gym
    import minigrid  # noqa: F401

    graph = json.loads((SEED_LLM / "graph.json").read_text())
    registry = for_graph(graph, SEED_LLM)
    assert registry.load_errors == []
    view = registry.get("candidate.ViewText").cls("view", {})
    obs, _ = gym.make("BabyAI-GoToLocal-v0").reset(seed=3)
    text = view.step({"observation": obs}, Context("view", EpisodeState({}, None, SEED_LLM)))["text"]
    assert text.startswith("You see: ") and "You carry: nothing." in text


@pytest.mark.parametrize("body,needle", [("        raise SystemExit(3)\n", "SystemExit"),
                                         ("        raise KeyboardInterrupt\n", "KeyboardInterrupt"),
                                         ("        return {'text': str(ctx._shared)}\n", "private attribute")])
def test_an_escaping_or_prying_node_is_the_candidates_failure_in_an_episode(body, needle, tmp_path):
    from harness.canvas.runtime import GraphRunner

    candidate, graph = _candidate(tmp_path, HEAD + body)
    graph["model_profile"] = None
    for nid in ("history", "context", "planner"):
        graph["nodes"].pop(nid)
    graph["edges"] = [e for e in graph["edges"]
                      if not any(e[k].split(".")[0] in ("history", "context", "planner") for k in ("from", "to"))]
    graph["nodes"]["planner"] = {"type": "core.Constant", "config": {"value": "go to the red ball"}}
    graph["edges"].append({"from": "planner.value", "to": "act.subgoal"})
    graph["budgets"].update(model_calls=0, tokens=0)
    with GraphRunner(graph, candidate_dir=candidate) as runner:
        result = runner.run_episode({"level": "BabyAI-GoToLocal-v0", "seed": 1, "episode_id": "x", "max_steps": 20})
    assert result["termination"] == "node_error" and not result["success"]
    assert "CandidateCodeError" in result["error"] and needle in result["error"]
