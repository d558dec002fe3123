"""The episode viewer: logged values read back, each executor family's state
pictures drawn from real episodes (BabyAI's replayed grid and belief map, an
R2R route on the scan graph, a robot arm's camera frame or 3-D path), the
viewer embedded in the report and written by `architect episode --html`."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread
from reportkit import architect_json

from harness import SEEDS_DIR
from harness.canvas.episode_log import EpisodeLog
from harness.canvas.runtime import GraphRunner
from harness.report.episode_data import leading_entries, load_episode, value
from harness.report.page import episode_page
from harness.evaluation.trace import array_shapes
from harness.report.viewer import Side, replay


def _log(run: Path, iteration: int, index: int = 0) -> tuple[Path, dict]:
    metrics = json.loads((run / "iterations" / str(iteration) / "eval" / "metrics.json").read_text())
    record = metrics["episodes"][index]
    return run / "iterations" / str(iteration) / "eval" / record["log"], record


def _replay_data(html: str) -> list[dict]:
    blocks = re.findall(r'<script type="application/json" class="replay-data">(.*?)</script>', html, re.S)
    return [json.loads(b.replace("<\\/", "</")) for b in blocks]


def test_a_cut_dict_summary_keeps_its_complete_leading_entries():
    """The first log format's summaries (a port's repr, cut at 200 characters with "...")."""
    text = ("{'scan': '17DRP5sb8fy', 'viewpoint': 'd65b6505904448d1940e679c9a098047', 'view_index': 12, "
            "'navigable': ['" + "a" * 32 + "', '" + "a" * 32 + "', 'aaaa...")
    assert leading_entries(text) == {"scan": "17DRP5sb8fy", "viewpoint": "d65b6505904448d1940e679c9a098047",
                                     "view_index": 12}
    assert value(text) == leading_entries(text) and value("{'a': 1, 'b': 'not cut'") == "{'a': 1, 'b': 'not cut'"
    assert value("['left', 'forward']") == ["left", "forward"] and value("not a literal") == "not a literal"


def test_babyai_ticks_carry_arrays_in_full_and_what_the_agent_was_shown(report_run):
    log, _ = _log(report_run, 1)
    data = load_episode(log)
    first, second = data.ticks[0], data.ticks[1]
    maps = [f.values["outputs"]["map"] for f in first.firings if f.values["outputs"] and "map" in f.values["outputs"]]
    assert maps and isinstance(maps[0], np.ndarray) and maps[0].shape == (53, 53, 3)
    last_step = [f for f in first.firings if f.node == "sim"][-1]
    assert second.observation is last_step.values["outputs"]  # tick 1 shows what tick 0's last step output
    assert data.actions_before(1) == first.actions and all(isinstance(a, str) for a in first.actions)


def test_babyai_pictures_follow_the_true_grid_and_the_belief_map(report_run):
    from executors.babyai.render import render_episode, true_grid

    data = load_episode(_log(report_run, 1)[0])
    frames = render_episode(data)
    assert len(frames) == len(data.ticks)
    for k in (0, len(data.ticks) - 1):
        _, (x, y, _), _ = true_grid(data.episode, data.actions_before(k))
        cx, cy = (x + 0.5) * 14, (y + 0.5) * 14  # the agent's triangle is centred on its true cell
        assert f'rotate(' in frames[k]["svg"] and f" {cx} {cy})" in frames[k]["svg"]
    assert frames[0]["svg"] != frames[-1]["svg"] and "belief map of memory" in frames[-1]["svg"]


def test_r2r_pictures_draw_the_walked_path_reference_and_goal(nav_run):
    from executors.mp3d import data_r2r as D
    from executors.mp3d.panorama import view_text
    from executors.mp3d.render import SUCCESS_RADIUS, render_r2r

    data = load_episode(_log(nav_run, 1)[0])
    frames = render_r2r(data)
    assert len(frames) == len(data.ticks) > 1
    item = D.dataset().episode(data.episode["split"], data.episode["instr_id"])
    walked = []
    for tick, frame in zip(data.ticks, frames):
        state = tick.observation["state"]
        if not walked or walked[-1] != state["viewpoint"]:
            walked.append(state["viewpoint"])
        lines = re.findall(r'<polyline points="([^"]*)"[^>]*stroke="#1f77b4"', frame["svg"])
        assert len(lines[0].split()) == len(walked)
        assert frame["caption"].startswith("current view: " + view_text(D.dataset().captions(item["scan"]),
                                                                         walked[-1], state["view_index"])["caption"])
    reference = re.findall(r'<polyline points="([^"]*)"[^>]*stroke="#2ca02c"', frames[0]["svg"])
    assert len(reference[0].split()) == len(item["path"]) and f"{SUCCESS_RADIUS:g} m radius" in frames[0]["svg"]


def _arm_episode(tmp_path: Path, cameras: list[str]) -> Side:
    graph = json.loads((SEEDS_DIR / "voxposer-scripted" / "graph.json").read_text())
    sim = next(k for k, n in graph["nodes"].items() if n["type"] == "manipulation.Simulator")
    graph["nodes"][sim]["config"].update(cameras=cameras, camera_size=64)
    log = EpisodeLog()
    with GraphRunner(graph, candidate_dir=SEEDS_DIR / "voxposer-scripted") as runner:
        result = runner.run_episode({"level": "Lift", "seed": 1, "episode_id": "Lift:1", "max_steps": 4}, log)
    assert result["error"] is None
    path = log.write_jsonl(tmp_path / f"lift-{len(cameras)}.jsonl")
    return Side("voxposer-scripted", path, {"episode_id": "Lift:1", "success": result["success"],
                                            "termination": result["termination"], "steps": result["steps"]})


@pytest.fixture(scope="module")
def arm_episodes(tmp_path_factory):
    pytest.importorskip("robosuite")
    folder = tmp_path_factory.mktemp("arm")
    return {"plot": _arm_episode(folder, []), "camera": _arm_episode(folder, ["agentview"])}


def test_arm_pictures_are_the_camera_frame_else_a_3d_path_plot(arm_episodes):
    from harness.embodied.render import render_episode

    camera = load_episode(arm_episodes["camera"].log)
    frames = render_episode(camera)
    for tick, frame in zip(camera.ticks, frames):
        shown = (imread(io.BytesIO(frame["png"]))[..., :3] * 255).round().astype(np.uint8)
        assert np.array_equal(shown, tick.observation["images"]["agentview"])  # the logged frame, pixel for pixel
    plot = load_episode(arm_episodes["plot"].log)
    frames = render_episode(plot)
    assert len(frames) == len(plot.ticks) and all(f["png"].startswith(b"\x89PNG") for f in frames)
    assert frames[0]["png"] != frames[-1]["png"] and "1 objects" in frames[0]["caption"]


def test_report_replays_gained_and_lost_episodes_beside_the_parent(report_run, tmp_path):
    code, out = architect_json("report", str(report_run), "-o", str(tmp_path / "r.html"))
    assert code == 0
    html = Path(out["report"]).read_text()
    from harness.report.collect import collect_run
    from harness.rundir.layout import RunPaths

    run = collect_run(RunPaths(report_run))
    changed = {it.number: it.versus_parent["episodes"]["gained"] + it.versus_parent["episodes"]["lost"]
               for it in run.iterations if it.versus_parent}
    replays = _replay_data(html)
    assert replays and len(replays) == sum(min(5, len(v)) for v in changed.values())
    for data in replays:
        parent, child = data["sides"]
        assert parent["label"].startswith("iteration") and child["label"].startswith("iteration")
    # on demand: an unchanged episode of iteration 1, and none with --replays 0
    episode = json.loads((report_run / "iterations" / "1" / "eval" / "metrics.json").read_text())["episodes"][0]
    code, out = architect_json("report", str(report_run), "-o", str(tmp_path / "r2.html"), "--replays", "0",
                               "--episode", f"1:{episode['episode_id']}")
    assert code == 0
    asked = _replay_data(Path(out["report"]).read_text())
    assert len(asked) == 1 and [s["label"] for s in asked[0]["sides"]] == ["iteration 0", "iteration 1"]


def test_episode_html_writes_one_viewer_with_every_firing_in_full(report_run, tmp_path):
    log, record = _log(report_run, 1)
    target = tmp_path / "one.html"
    code, out = architect_json("episode", str(report_run), "1", record["episode_id"], "--vs", "0",
                               "--html", str(target), "--max-bytes", "0")
    assert code == 0 and out["html"] == str(target.resolve())
    (data,) = _replay_data(target.read_text())
    child = data["sides"][1]
    from harness.evaluation.trace import read_log

    _, firings = read_log(log)
    shown = [f for t in child["ticks"] for f in t["firings"]]
    assert len(shown) == len(firings)
    for s, f in zip(shown, firings):  # every port in full: a text as logged, data as its JSON (arrays named)
        assert set(s["outputs"] or {}) == set(f["outputs"] or {})
        for port, logged in (f["outputs"] or {}).items():
            text = s["outputs"][port]
            assert (text == logged) if isinstance(logged, str) else (json.loads(text) == array_shapes(logged))
    assert all(data["frames"][t["frame"]].startswith("data:image/svg+xml;base64,") for t in child["ticks"])
    parent = data["sides"][0]
    same_until = (data["divergence"] or {}).get("first_action_tick")
    same_until = len(child["ticks"]) if same_until is None else same_until
    shared = [(p["frame"], c["frame"]) for p, c in zip(parent["ticks"], child["ticks"]) if c["tick"] <= same_until]
    assert shared and all(a == b for a, b in shared)  # a picture both sides show is stored once
    code, out = architect_json("episode", str(report_run), "1", record["episode_id"], "--html",
                               str(tmp_path / "one.txt"))
    assert code != 0 and "*.html" in out["error"] and not (tmp_path / "one.txt").exists()


def _viewer_file(tmp_path: Path, name: str, executor: str, child: Side, parent: Side | None = None) -> Path:
    path = tmp_path / f"{name}.html"
    path.write_text(episode_page(name, replay(executor, child, parent)))
    return path


@pytest.fixture
def viewer_files(report_run, nav_run, arm_episodes, tmp_path):
    def side(run, iteration):
        log, record = _log(run, iteration)
        return Side(f"iteration {iteration}", log, record)

    return {"babyai": _viewer_file(tmp_path, "babyai", "babyai", side(report_run, 1), side(report_run, 0)),
            "r2r": _viewer_file(tmp_path, "r2r", "mapgpt", side(nav_run, 1), side(nav_run, 0)),
            "arm": _viewer_file(tmp_path, "arm", "manipulation", arm_episodes["camera"], arm_episodes["plot"])}


def test_viewers_render_step_and_show_the_state_in_chromium(viewer_files):
    from headless_chromium import Browser, find_chromium

    from test_report_browser import ARTIFACTS, CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    for name, path in viewer_files.items():
        browser = Browser(find_chromium())
        try:
            browser.open(path.as_uri())
            before = browser.evaluate("document.querySelector('.side:last-child img.frame').src")
            steps = browser.evaluate("""(() => { const v = document.querySelector('.episode-viewer');
                const srcs = [];
                for (let i = 0; i < 6; i++) { v.querySelector('.next').click();
                    srcs.push(v.querySelector('.side:last-child img.frame').src); }
                return {srcs: srcs, label: v.querySelector('.tick-label').textContent}; })()""")
            box = browser.evaluate("""(() => { const r = document.querySelector('.side:last-child img.frame')
                .getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()""")
            marked = browser.evaluate("""(() => { const v = document.querySelector('.episode-viewer');
                const jump = v.querySelector('.jump'); if (!jump) return null; jump.click();
                return {label: v.querySelector('.tick-label').textContent,
                        differs: v.querySelectorAll('.side:last-child .firing.differs').length}; })()""")
            # the frame alone: a whole page is up to 65,000 pixels tall, seconds to capture and decode
            shot = browser.screenshot(ARTIFACTS / f"viewer_{name}.png", clip=box)
            errors = browser.errors()
        finally:
            browser.close()
        assert errors == [], (name, errors)
        assert any(src != before for src in steps["srcs"]), f"{name}: stepping does not change the frame"
        assert steps["label"].startswith("tick "), steps["label"]
        if name == "arm":  # the camera's outputs make the sim's firings differ from tick 0 on
            assert marked["label"].startswith("tick 0 ") and "first divergent tick" in marked["label"]
            assert marked["differs"] >= 1
        assert box[2] > 150 and box[3] > 150, (name, box)
        region = imread(shot)[:, :, :3]
        assert (region < 0.9).any(axis=2).mean() > 0.02, f"{name}: the state picture is blank in the screenshot"


@pytest.mark.parametrize("seed", ["smartway-heuristic", "explore-eqa-heuristic"])
def test_waypoint_navigators_pictures_follow_their_route(seed, tmp_path):
    from executors.mp3d import data_r2r

    from harness.executor_api import executor_of, load_executor
    from harness.plugins import load_ref

    if not data_r2r.complete():
        pytest.skip("needs the r2r data set in the data folder (architect data fetch r2r)")
    spec = executor_of(seed)
    episode = load_executor(spec.name).episodes("smoke")[0]
    candidate = SEEDS_DIR / seed
    log = EpisodeLog()
    with GraphRunner(json.loads((candidate / "graph.json").read_text()), candidate_dir=candidate) as runner:
        assert runner.run_episode(episode, log)["error"] is None
    data = load_episode(log.write_jsonl(tmp_path / "episode.jsonl"))
    frames = load_ref(spec.renderer)(data)
    assert len(frames) == len(data.ticks)
    walked = []
    for tick, frame in zip(data.ticks, frames):
        if not walked or walked[-1] != tick.observation["state"]["viewpoint"]:
            walked.append(tick.observation["state"]["viewpoint"])
        (line,) = re.findall(r'<polyline points="([^"]*)"[^>]*stroke="#1f77b4"', frame["svg"])
        assert len(line.split()) == len(walked) and frame["caption"] != "current view: -"
    assert frames[0]["svg"].count('stroke-dasharray="4 3"') >= 1  # a goal's 3 m ring


def test_a_log_of_values_as_data_is_read_as_it_is():
    """The episode log's second format (values as JSON data, arrays tagged `$array`)."""
    from harness.report.episode_data import episode_from
    from harness.report.viewer import _text

    grid = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    record = {"dtype": grid.dtype.str, "shape": list(grid.shape), "base64": base64.b64encode(grid.tobytes()).decode()}
    header = {"kind": "episode", "format": 2, "episode": {"level": "L", "seed": 1}, "result": {"success": False}}
    firings = [
        {"node": "sim", "type": "t.Sim", "tick": 0, "inputs": None,
         "outputs": {"obs": {"image": {"$array": record}, "text": "'quoted' stays quoted"}}},
        {"node": "act", "type": "t.Act", "tick": 0, "inputs": {"obs": {"text": "x"}}, "outputs": {"actions": ["go"]}},
        {"node": "sim", "type": "t.Sim", "tick": 0, "inputs": {"actions": ["go"]}, "outputs": {"obs": {"text": "1"}}},
    ]
    data = episode_from(header, firings)
    (tick,) = data.ticks
    assert np.array_equal(tick.observation["obs"]["image"], grid)
    assert tick.observation["obs"]["text"] == "'quoted' stays quoted" and tick.actions == [["go"]]
    shown = _text(firings[0]["outputs"]["obs"])
    assert '"dtype": "|u1"' in shown and "base64" not in shown and "'quoted' stays quoted" in shown
