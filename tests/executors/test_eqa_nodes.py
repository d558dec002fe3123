"""The eqa node chain on real fixture data: the simulator's moves, answers and end,
the observation and its prompt points, the heuristic scorers, the value map's
ExploreEQA arithmetic, frontier sampling, and the confidence stop."""

from __future__ import annotations

import math

import pytest
from babyai_testkit import FakeCtx, make_node
from navigation_testkit import FIXTURE

import executors.eqa.node_types  # noqa: F401  (registers the eqa node types)
from executors.eqa.questions import question_set
from executors.mp3d.walker import NotNavigable


@pytest.fixture
def sim(fixture_data):
    node = make_node("eqa.Simulator", {"backend": "graph", "privileged_outputs": True})
    yield node
    node.close()


def test_simulator_moves_takes_the_latest_valid_answer_and_scores_it(sim):
    question = question_set().question("GdvgFV5R1Z5-04")
    out = sim.reset_episode({"question_id": "GdvgFV5R1Z5-04", "max_steps": 11}, FakeCtx())
    assert out["question"].splitlines()[1:] == [f"{l}. {c}" for l, c in zip("ABCD", question["choices"])]
    assert out["state"]["viewpoint"] == question["start"]["viewpoint"] and out["state"]["budget"] == 11
    neighbour = out["panorama"]["views"][0]["navigable"][0]["viewpoint"] if out["panorama"]["views"][0]["navigable"] \
        else next(loc["viewpoint"] for v in out["panorama"]["views"] for loc in v["navigable"])
    ctx = FakeCtx()
    ctx.tick = 1
    after = sim.step({"actions": [neighbour], "answer": "b"}, ctx)
    assert after["state"]["viewpoint"] == neighbour and after["state"]["moves"] == 1
    ctx.tick = 2
    sim.step({"actions": ["stop"], "answer": "Z"}, ctx)                  # an invalid letter is ignored
    result = sim.result()
    assert sim.done() and result["answer"] == "B" and result["invalid_answers"] == 1
    assert result["accuracy"] == float(question["answer"] == "B") == result["accuracy_room_location"]
    assert result["success"] == bool(result["accuracy"]) and result["path_length"] > 0 and result["stopped"]
    assert after["truth"] == question["answer"]


def test_simulator_refuses_a_move_to_a_non_neighbour_and_has_no_cap_of_its_own(sim):
    out = sim.reset_episode({"question_id": "pLe4wQe7qrG-01", "max_steps": 2}, FakeCtx())
    here = out["state"]["viewpoint"]
    with pytest.raises(NotNavigable, match="not a navigable neighbour"):
        sim.step({"actions": [here]}, FakeCtx())
    walker = sim.walker
    for tick in range(1, 6):                                            # past the budget: the runtime's job
        ctx = FakeCtx()
        ctx.tick = tick
        nxt = next(loc["viewpoint"] for v in walker.panorama() for loc in v["navigable"])
        sim.step({"actions": [nxt]}, ctx)
    assert not sim.done() and sim.result()["moves"] == 5 and sim.result()["answer"] is None
    assert sim.result()["accuracy"] == 0.0


def test_observe_keeps_the_views_around_the_heading_and_spreads_the_points(sim):
    out = sim.reset_episode({"question_id": "pLe4wQe7qrG-01"}, FakeCtx())
    observed = make_node("eqa.Observe", {"half_width": 1, "rows": [1]}).step(
        {"panorama": out["panorama"], "state": out["state"]}, FakeCtx())
    view = observed["view"]
    assert len(view["views"]) == 3 and [v["offset_deg"] for v in view["views"]] == [-30, 0, 30]
    assert all(12 <= v["view_index"] < 24 for v in view["views"])
    wide = make_node("eqa.Observe", {"point_fov_deg": 360, "max_points": 2}).step(
        {"panorama": out["panorama"], "state": out["state"]}, FakeCtx())["points"]
    every = make_node("eqa.Observe", {"point_fov_deg": 360, "max_points": 4}).step(
        {"panorama": out["panorama"], "state": out["state"]}, FakeCtx())["points"]
    assert [p["letter"] for p in wide] == ["A", "B"][:len(wide)]
    assert all(abs(p["rel_heading"]) <= math.pi for p in every)
    assert [p["rel_heading"] for p in every] == sorted(p["rel_heading"] for p in every)
    narrow = make_node("eqa.Observe", {"point_fov_deg": 30}).step(
        {"panorama": out["panorama"], "state": out["state"]}, FakeCtx())["points"]
    assert all(abs(p["rel_heading"]) <= math.radians(15) + 1e-9 for p in narrow)


def view_of(text: str, columns=(0,)) -> dict:
    return {"text": text, "views": [{"view_index": 12 + c, "caption": text, "objects": []} for c in columns]}


CHOICES_EXIST = ["(Do not choose this option)", "Yes", "No", "(Do not choose this option)"]


@pytest.mark.parametrize("text, expected, confidence", [
    ("a bathroom with a toilet and a sink", [0, 0.9, 0.1, 0], 0.9),
    ("a bedroom with a bed", [0, 0.3, 0.7, 0], 0.15),
])
def test_heuristic_answer_on_existence(text, expected, confidence):
    scores = make_node("eqa.HeuristicAnswer").step(
        {"question": "Is there a toilet in this house?\nA. ...", "choices": CHOICES_EXIST, "view": view_of(text)},
        FakeCtx())["scores"]
    assert scores["probs"] == pytest.approx(expected) and scores["confidence"] == confidence


def test_heuristic_answer_counts_columns_rooms_and_neighbours():
    node = make_node("eqa.HeuristicAnswer")
    count = node.step({"question": "How many chairs are there in this house?", "choices": ["One", "Two", "Five", "Six"],
                       "view": view_of("a table with chairs", columns=(0, 1))}, FakeCtx())["scores"]
    assert count["probs"].index(max(count["probs"])) == 1 and count["confidence"] == pytest.approx(0.6)
    room = node.step({"question": "In which room is the sink?", "choices": ["In the kitchen", "In the bathroom",
                                                                          "On the porch", "In the hallway"],
                      "view": view_of("a kitchen with a sink and a stove")}, FakeCtx())["scores"]
    assert room["probs"][0] == pytest.approx(0.8) and room["confidence"] == 0.8
    near = node.step({"question": "Which of these is near the bed?", "choices": ["Toilet", "Mirror", "Sofa", "Stool"],
                      "view": view_of("a bedroom with a bed and a mirror")}, FakeCtx())["scores"]
    assert near["probs"][1] == pytest.approx(0.85) and near["confidence"] == 0.8
    unknown = node.step({"question": "What colour is the sky?", "choices": ["Blue", "Red", "Green", "Grey"],
                         "view": view_of("a room")}, FakeCtx())["scores"]
    assert unknown == {"probs": [0.25] * 4, "confidence": 0.0}


POINTS = [{"letter": "A", "viewpoint": "p", "position": [0.0, 2.0, 0.0], "caption": "a hallway", "objects": []},
          {"letter": "B", "viewpoint": "q", "position": [2.0, 0.0, 0.0], "caption": "a bathroom with a toilet",
           "objects": ["toilet"]}]


def test_heuristic_explore_prefers_points_named_by_the_question():
    explore = make_node("eqa.HeuristicExplore").step(
        {"question": "Is there a toilet in this house?", "view": view_of("a hallway"), "points": POINTS},
        FakeCtx())["explore"]
    assert explore["probs"]["B"] > explore["probs"]["A"] and explore["worth"] == 0.8
    assert make_node("eqa.HeuristicExplore").step(
        {"question": "Is there a toilet?", "view": view_of("x"), "points": POINTS[:1]}, FakeCtx()) == {}


def state_at(viewpoint, position, moves=0):
    return {"viewpoint": viewpoint, "position": position, "heading": 0.0, "moves": moves}


def panorama_with(neighbours):
    return {"views": [{"navigable": [{"viewpoint": vp, "position": pos} for vp, pos in neighbours]}]}


def test_value_map_writes_lsv_times_gsv_within_the_radius():
    node = make_node("eqa.ValueMap")
    node.reset(FakeCtx())
    neighbours = [("p", [0.0, 2.0, 0.0]), ("q", [2.0, 0.0, 0.0]), ("r", [2.5, 0.5, 0.0])]
    out = node.step({"state": state_at("s", [0.0, 0.0, 0.0]), "panorama": panorama_with(neighbours), "points": POINTS,
                     "explore": {"probs": {"A": 0.25, "B": 0.75}, "worth": 0.5}}, FakeCtx())["map"]
    gsv = math.exp(0.5 / 0.5) / 3
    assert out["values"]["p"] == pytest.approx(0.25 * 2 / 3 * gsv)
    assert out["values"]["q"] == pytest.approx(0.75 * 2 / 3 * gsv) == out["values"]["r"]   # r is 0.71 m from q
    assert "s" not in out["values"] and out["edges"] == {"s": ["p", "q", "r"]}
    again = node.step({"state": state_at("s", [0.0, 0.0, 0.0]), "panorama": panorama_with(neighbours),
                       "points": POINTS, "explore": {"probs": {"A": 0.75, "B": 0.25}, "worth": 0.5}}, FakeCtx())["map"]
    assert again["values"]["p"] == pytest.approx((0.25 + 0.75) / 2 * 2 / 3 * gsv)     # a running average


def nav_map(values=None, moves=5):
    return {"current": "s", "trajectory": ["s"], "heading": 0.0, "moves": moves,
            "positions": {"s": [0.0, 0.0, 0.0], "p": [0.0, 2.0, 0.0], "q": [2.0, 0.0, 0.0]},
            "edges": {"s": ["p", "q"]}, "values": values or {}}


def test_frontier_planner_samples_by_value_and_commits_to_its_target():
    node = make_node("eqa.FrontierPlanner")
    picks = []
    for seed in range(40):
        node.reset(FakeCtx())
        picks.append(node.step({"map": nav_map({"q": 1.5})}, FakeCtx(seed))["move"])
    assert picks.count("q") > 30                                           # e^3 times the weight of p
    early = []
    for seed in range(40):
        node.reset(FakeCtx())
        early.append(node.step({"map": nav_map({"q": 1.5}, moves=0)}, FakeCtx(seed))["move"])
    assert 8 < early.count("q") < 32                                     # the first steps ignore the values
    node.reset(FakeCtx())
    first = node.step({"map": nav_map({"q": 1.5})}, FakeCtx(1))["move"]
    assert all(node.step({"map": nav_map({"p": 9.0, "q": 0.0})}, FakeCtx(s))["move"] == first for s in range(5))
    done = dict(nav_map(), trajectory=["p", "q", "s"])
    node.reset(FakeCtx())
    assert node.step({"map": done}, FakeCtx()) == {"exhausted": True}


def test_confidence_stop_answers_by_the_weighted_max_and_stops_on_a_singleton_set():
    node = make_node("eqa.ConfidenceStop", {"threshold": 0.5})
    node.reset(FakeCtx())
    first = node.step({"scores": {"probs": [0.1, 0.6, 0.3, 0.0], "confidence": 0.5}, "map": {"moves": 1}}, FakeCtx())
    assert first == {"answer": "B", "stop": False}                       # 0.3 < 0.5: nothing confident yet
    second = node.step({"scores": {"probs": [0.9, 0.1, 0.0, 0.0], "confidence": 0.8}, "map": {"moves": 2}}, FakeCtx())
    assert second == {"answer": "A", "stop": True}
    both = make_node("eqa.ConfidenceStop", {"threshold": 0.2})
    both.reset(FakeCtx())
    assert both.step({"scores": {"probs": [0.5, 0.5, 0, 0], "confidence": 0.9}, "map": {"moves": 3}}, FakeCtx())["stop"] \
        is False                                                          # two answers in the set
    late = make_node("eqa.ConfidenceStop", {"threshold": 0.5, "min_moves": 4})
    late.reset(FakeCtx())
    assert late.step({"scores": {"probs": [1, 0, 0, 0], "confidence": 1.0}, "map": {"moves": 3}}, FakeCtx())["stop"] \
        is False
    assert late.step({"scores": {"probs": [0.25] * 4, "confidence": 0.0}, "map": {"moves": 3},
                      "exhausted": True}, FakeCtx())["stop"] is True


def test_confidence_stop_most_confident_rule():
    node = make_node("eqa.ConfidenceStop", {"final_answer": "most_confident", "stop_when_confident": False})
    node.reset(FakeCtx())
    node.step({"scores": {"probs": [0.0, 1.0, 0.0, 0.0], "confidence": 0.4}, "map": {"moves": 0}}, FakeCtx())
    out = node.step({"scores": {"probs": [0.5, 0.0, 0.5, 0.0], "confidence": 0.7}, "map": {"moves": 1}}, FakeCtx())
    assert out == {"answer": "A", "stop": False}                         # the most confident step; a tie: A
    weighted = make_node("eqa.ConfidenceStop", {"stop_when_confident": False})
    weighted.reset(FakeCtx())
    weighted.step({"scores": {"probs": [0.0, 1.0, 0.0, 0.0], "confidence": 0.4}, "map": {"moves": 0}}, FakeCtx())
    assert weighted.step({"scores": {"probs": [0.5, 0.0, 0.5, 0.0], "confidence": 0.7}, "map": {"moves": 1}},
                         FakeCtx())["answer"] == "B"                     # max over steps: 0.4 beats 0.35


def test_move_or_stop():
    node = make_node("eqa.MoveOrStop")
    assert node.step({"move": "p", "stop": False}, FakeCtx()) == {"actions": ["p"]}
    assert node.step({"move": "p", "stop": True}, FakeCtx()) == {"actions": ["stop"]}
    assert node.step({"stop": False}, FakeCtx()) == {"actions": ["stop"]}


def test_every_eqa_type_documents_its_full_behaviour():
    from harness.canvas.registry import default_registry

    types = {nt.name: nt.to_dict() for nt in default_registry().all() if nt.name.startswith("eqa.")}
    assert len(types) >= 10
    short = [n for n, t in types.items() if len(t["behaviour"]) <= len(t["doc"])]
    assert not short
    assert "gives uniform probabilities and confidence 0" in " ".join(types["eqa.AnswerVLM"]["behaviour"].split())


class RecordingModel:
    """Stands where ctx.model is: records the request, answers with a fixed reply."""

    def __init__(self, reply: str):
        self.reply, self.requests = reply, []

    def complete(self, messages, **kwargs):
        from types import SimpleNamespace

        self.requests.append((messages, kwargs))
        return SimpleNamespace(text=self.reply)


def model_ctx(tmp_path, reply):
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "prompts" / "s.md").write_text("system")
    (tmp_path / "prompts" / "u.md").write_text("Task: answer\n{{question}}\n{{view}}")
    ctx = FakeCtx()
    ctx.candidate_dir, ctx.model = tmp_path, RecordingModel(reply)
    return ctx


def test_answer_vlm_sends_the_views_images_and_reads_its_json(tmp_path):
    import numpy as np

    ctx = model_ctx(tmp_path, 'Sure: {"answer": {"A": 2, "B": 1, "C": 1, "D": 0}, "confident": 0.7}')
    node = make_node("eqa.AnswerVLM", {"system_prompt": "prompts/s.md", "user_template": "prompts/u.md"})
    view = view_of("a kitchen")
    view["views"][0]["image"] = np.zeros((4, 4, 3), dtype=np.uint8)
    scores = node.step({"question": "Q?\nA. x", "choices": ["x", "y", "z", "w"], "view": view}, ctx)["scores"]
    assert scores == {"probs": pytest.approx([1 / 3, 1 / 3, 1 / 3, 0.0]), "confidence": 0.7}  # 2 clipped to 1
    (messages, kwargs), = ctx.model.requests
    content = messages[0]["content"]
    assert kwargs["system"] == "system" and content[0]["text"].startswith("Task: answer\nQ?")
    assert content[1]["type"] == "image" and content[1]["media_type"] == "image/png"
    broken = make_node("eqa.AnswerVLM", {"system_prompt": "prompts/s.md", "user_template": "prompts/u.md"})
    fallback = broken.step({"question": "Q?", "choices": ["x"] * 4, "view": view_of("a kitchen")},
                           model_ctx(tmp_path, "I cannot tell."))["scores"]
    assert fallback == {"probs": [0.25] * 4, "confidence": 0.0}
