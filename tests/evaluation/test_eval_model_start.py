"""What an evaluation of a model-calling graph does before its first episode: the
workers' forkserver preloads the model backend's SDK, and the parent's check of the
model setup refuses what a client would refuse without importing the SDK."""

from __future__ import annotations

import subprocess
import sys

from eval_candidates import make_candidate, make_model_candidate

from harness.evaluation import backends, evaluate
from harness.models.loopback import LoopbackServer


def _preloads(monkeypatch) -> list[tuple[str, ...]]:
    """The preload list of every pool the evaluations start."""
    seen: list[tuple[str, ...]] = []
    real = backends.run_pool

    def recording(tasks, factory_ref, factory_args, config, on_outcome):
        seen.append(tuple(config.preload))
        return real(tasks, factory_ref, factory_args, config, on_outcome)

    monkeypatch.setattr(backends, "run_pool", recording)
    return seen


def test_a_model_graphs_workers_preload_its_backend(eval_env, tmp_path, monkeypatch):
    seen = _preloads(monkeypatch)
    with LoopbackServer(lambda api, system, messages, body: "left") as server:
        cand = make_model_candidate(tmp_path / "cand", server.openai_url, concurrency=2)
        m = evaluate(cand, "smoke", episodes=2, workers=1, use_cache=False, progress=False)
    assert m["complete"] and all(r["error"] is None for r in m["episodes"])
    assert len(seen) == 1 and "harness.models.openai_backend" in seen[0]


def test_a_graph_without_a_model_preloads_no_backend(eval_env, tmp_path, monkeypatch):
    seen = _preloads(monkeypatch)
    evaluate(make_candidate(tmp_path / "cand", max_steps=2), "smoke", episodes=1, workers=1, use_cache=False,
             progress=False)
    assert len(seen) == 1 and not any(m.startswith("harness.models") for m in seen[0])


def test_the_model_setup_check_refuses_a_missing_key_without_importing_the_sdk(tmp_path):
    """Run in a fresh interpreter: this one may have imported openai already."""
    cand = make_model_candidate(tmp_path / "cand", "http://127.0.0.1:9/v1")
    profile = cand / "profile.yaml"
    profile.write_text(profile.read_text().replace("base_url: http://127.0.0.1:9/v1\n",
                                                   "api_key_env: POOL_TEST_NO_KEY\n"))
    code = ("import json, sys\n"
            "from harness.models import check_graph_setup\n"
            "from harness.errors import UserError\n"
            f"graph = json.load(open({str(cand / 'graph.json')!r}))\n"
            "try:\n"
            f"    check_graph_setup(graph, {str(cand)!r})\n"
            "except UserError as err:\n"
            "    print(err.message)\n"
            "print('openai' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout.splitlines()
    assert "$POOL_TEST_NO_KEY is not set" in out[0]
    assert out[-1] == "False"
