"""`architect loop shaper mapgpt --scripted-models` end to end on R2R: the scripted stand-ins
(the executor's MapGPT planner stand-in, judge, summariser, optimizer) answer on a loopback
server. The schedule is one skill round and one harness round with one proposal each, every
split shrunk to two episodes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from executors.mp3d import data_r2r
from harness.cli import main
from harness.rundir.records import read_record

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shaperkit import write_config  # noqa: E402

if not data_r2r.complete(data_r2r.r2r_dir()):
    pytest.skip("needs the full R2R data in the data folder (`architect data fetch r2r`): the SHAPER splits "
                "are drawn from all of R2R", allow_module_level=True)

TINY = {"rounds": 2, "skill_rounds": 1, "beam_width": 1, "branching": 1, "minibatch": 1, "train_episodes": 2,
        "val_episodes": 2, "smoke_episodes": 1, "test_episodes": 2}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shaper-mapgpt")
    config, _ = write_config(folder, **TINY)
    result = CliRunner().invoke(main, ["loop", "shaper", "mapgpt", "--scripted-models", "--config", str(config),
                                       "--run-id", "nav", "--runs-dir", str(folder / "runs"), "--json"])
    assert result.exit_code == 0, result.output
    return {"summary": json.loads(result.stdout.splitlines()[-1]), "root": folder / "runs" / "nav"}


def test_the_loop_commits_a_skill_and_a_harness_iteration_with_the_graph_frozen(run):
    root = run["root"]
    beam = read_record("shaper_beam", root / "memory" / "shaper" / "beam.json")
    assert run["summary"]["stop_reason"] == "schedule_done" and beam["phase"] == "done"
    assert [(p["stage"], p["status"]) for p in beam["proposals"]] == [("skill", "committed"),
                                                                      ("harness", "committed")]
    candidates = [root / "iterations" / str(n) / "candidate" for n in (0, 1, 2)]
    texts = [{name: (c / name).read_text() for name in ("graph.json", "skill.md", "build_context.py")}
             for c in candidates]
    assert texts[0]["graph.json"] == texts[1]["graph.json"] == texts[2]["graph.json"]
    assert texts[1]["skill.md"] != texts[0]["skill.md"] and texts[1]["build_context.py"] == texts[0]["build_context.py"]
    assert texts[2]["build_context.py"] != texts[0]["build_context.py"]
    log = subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert sum(line.startswith("iteration ") for line in log.splitlines()) == 3


def test_the_judge_read_the_route_and_the_final_table_covers_c1_c2(run):
    memory = run["root"] / "memory" / "shaper"
    gradient = read_record("shaper_gradient", next((memory / "gradients").glob("r1-*.json")))
    [episode] = gradient["episodes"]
    assert episode["judgements"] and episode["meta"]["planner_steps"] == len(episode["judgements"])
    rollout = json.loads(next((memory / "rollouts").glob("r1-*.json")).read_text())["episodes"][0]
    assert rollout["mission"] and rollout["steps"]
    assert all("neighbours" in step["observation_before"] for step in rollout["steps"])
    assert "'place': " in rollout["steps"][0]["observation_after"]
    final = read_record("shaper_final", memory / "final.json")
    assert [(s["split"], s["tier"], s["episodes"]) for s in final["splits"]] == [("C1", "shaper_test_c1", 2),
                                                                                 ("C2", "shaper_test_c2", 2)]
    assert [r["configuration"] for r in final["splits"][0]["rows"]] == ["seed", "MG-Select-like", "VOTE-like",
                                                                        "skill only", "harness only", "both"]
    assert set(final["unavailable"]) == {"C3", "C4"}
    table = (memory / "final.md").read_text()
    assert "## C2: shaper_test_c2 (2 episodes)" in table and "## C3: not available" in table
