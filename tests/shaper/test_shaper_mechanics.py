"""SHAPER mechanics without the simulator: configuration, beam bookkeeping, dedupe,
rollout records, gradients, the sandbox gate with repair, role models over the
real SDK clients against loopback servers (429 / 500 / slow replies), costs."""

import base64
import json
import struct
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.errors import UserError  # noqa: E402
from harness.models.loopback import LoopbackServer  # noqa: E402
from harness.schemas import validate_instance  # noqa: E402
from harness.variants.shaper import beam as beams  # noqa: E402
from harness.variants.shaper import prompts  # noqa: E402
from harness.variants.shaper.config import ShaperConfig, build_config  # noqa: E402
from harness.variants.shaper.gradient import assemble, diagnose, sample_minibatch  # noqa: E402
from harness.variants.shaper.models import CostMeter, InfrastructureFailure, Roles  # noqa: E402
from harness.variants.shaper.optimizer import propose, sandbox_problems  # noqa: E402
from harness.variants.shaper.rollout import classify_evaluation, episode_rollout  # noqa: E402
from executors.babyai.stand_ins import scripted_planner  # noqa: E402
from harness.variants.shaper.stand_ins import REPLY_MODEL, answerer, stand_in_server  # noqa: E402

answer = answerer(scripted_planner)
from harness.variants.shaper.search import (Search, final_markdown, frozen_changes, spaced_subset,  # noqa: E402
                                            tts_graph)
from shaperkit import ROLE_PROFILE  # noqa: E402

SEED = Path(__file__).resolve().parents[2] / "seeds" / "babyai-llm"


def test_defaults_are_the_studys_and_the_schedule_sets_the_iteration_cap():
    config = ShaperConfig()
    assert (config.beam_width, config.branching, config.rounds, config.minibatch) == (3, 2, 4, 4)
    assert (config.judge_temperature, config.summariser_temperature, config.optimizer_temperature) == (0, 0, 0.7)
    assert [config.stage_of(r) for r in (1, 2, 3, 4)] == ["skill", "skill", "harness", "harness"]
    assert config.proposals_in_schedule() == 2 * (1 + 3) * 2  # per stage: 1 parent, then a beam of 3
    assert build_config({"skill_rounds": 4}).proposals_in_schedule() == 2 * (1 + 3 * 3)
    with pytest.raises(UserError, match="skill_rounds must be between 0 and rounds"):
        build_config({"skill_rounds": 5})
    with pytest.raises(UserError, match="unknown key"):
        build_config({"beam": 3})


def test_candidate_identity_is_exact_text():
    assert beams.candidate_id("a\n", "b\n") == beams.candidate_id("a\n", "b\n")
    assert beams.candidate_id("a\n", "b\n") != beams.candidate_id("a \n", "b\n")


def test_ranking_uses_paired_wins_and_keeps_incumbents_on_ties():
    episodes = [f"L{i % 2}:{i}" for i in range(12)]
    seed = {e: 0.5 for e in episodes}
    better = {e: 0.9 for e in episodes}
    tie = dict(seed)
    ranked = beams.rank(["seed", "tie", "better"], {"seed": seed, "tie": tie, "better": better}, 0.05)
    assert [r["candidate"] for r in ranked] == ["better", "seed", "tie"]
    assert ranked[0]["paired_net"] == 2
    verdict = beams.paired_verdict(better, seed, 0.05)
    assert verdict["verdict"] == "better" and verdict["wins"] == 12 and verdict["ci_low"] > 0
    assert beams.paired_verdict(tie, seed, 0.05)["verdict"] == "indistinguishable"


def test_a_category_regression_beyond_the_margin_refuses_selection():
    seed = {"A:1": 1.0, "A:2": 1.0, "B:1": 0.0, "B:2": 0.0}
    trade = {"A:1": 0.5, "A:2": 0.5, "B:1": 1.0, "B:2": 1.0}  # higher mean, but category A drops by 0.5
    report = beams.regression_report(trade, seed, margin=0.1)
    assert report["refused"] and report["regressed"] == ["A"]
    assert not beams.regression_report(trade, seed, margin=0.6)["refused"]
    ranked = beams.rank(["seed", "trade"], {"seed": seed, "trade": trade}, 0.05)
    reports = {"trade": report, "seed": beams.regression_report(seed, seed, 0.1)}
    assert ranked[0]["candidate"] == "trade"
    assert beams.select(ranked, reports) == ("seed", ["trade"])


def test_ids_of_one_key_count_as_one_category_of_the_whole_split():
    seed = {"1304_0": 1.0, "1118_0": 0.0}
    swap = {"1304_0": 0.0, "1118_0": 1.0}  # each episode changes by 1, the split's mean not at all
    report = beams.regression_report(swap, seed, margin=0.1)
    assert [c["category"] for c in report["categories"]] == ["all"] and not report["refused"]


def test_the_default_rule_is_the_studys_and_the_paired_rule_is_a_named_option():
    assert ShaperConfig().selection == "study" and build_config({"selection": "paired"}).selection == "paired"
    with pytest.raises(UserError, match="selection must be one of study, paired"):
        build_config({"selection": "best"})


def test_the_studys_ranking_is_mean_reward_with_incumbents_first_on_ties():
    rewards = {"inc": {"A:1": 0.5, "A:2": 0.5}, "tie": {"A:1": 1.0, "A:2": 0.0}, "up": {"A:1": 0.6, "A:2": 0.6}}
    ranked = beams.rank_by_mean(["inc", "tie", "up"], rewards)
    assert [r["candidate"] for r in ranked] == ["up", "inc", "tie"]
    assert all(r["paired_net"] is None for r in ranked)


def _candidate(cid, stage, iteration, mean):
    return {"id": cid, "stage": stage, "iteration": iteration, "mean_reward": mean}


def test_the_studys_output_is_the_best_candidate_seen_in_the_stage():
    search = object.__new__(Search)
    search.state = {"stage_start": "s", "candidates": {
        "s": _candidate("s", "seed", 0, 0.4), "a": _candidate("a", "skill", 1, 0.7),
        "b": _candidate("b", "skill", 2, 0.7), "h": _candidate("h", "harness", 3, 0.9)}}
    assert search.best_seen("skill") == "a"  # the earlier of the tied; never the other stage's
    search.state["candidates"]["s"]["mean_reward"] = 0.8
    assert search.best_seen("skill") == "s"


def test_the_study_shows_the_whole_event_history_and_paired_the_recent_proposals():
    search = object.__new__(Search)
    proposals = [{"id": f"r1-c0-b{b}", "round": 1, "stage": "skill", "parent": "c0", "status": "duplicate",
                  "candidate": "c0"} for b in range(1, 7)]
    search.state = {"proposals": proposals, "candidates": {}, "rounds": [
        {"round": 1, "stage": "skill", "beam_after": [{"candidate": "c0", "mean_reward": 0.25}], "selected": "c0"}]}
    search.config = ShaperConfig()
    events = search.history(2)
    assert len(events) == 7 and events[-1] == "round 1 (skill): beam kept c0 (0.250); the skill stage selected c0"
    search.config = ShaperConfig(selection="paired", history=4)
    assert search.history(2) == events[2:6]


def test_a_test_split_subset_spreads_over_the_tier():
    episodes = [{"episode_id": f"s:{t}:{i}"} for t in range(4) for i in range(5)]
    picked = spaced_subset(episodes, 5)
    assert len(picked) == 5 and {p.split(":")[1] for p in picked} == {"0", "1", "2", "3"}
    assert spaced_subset(episodes, None) == spaced_subset(episodes, 50) == [e["episode_id"] for e in episodes]


def test_a_test_time_scaling_baseline_samples_the_planner_and_pays_for_it():
    graph = {"nodes": {"planner": {"type": "llm.Chat", "config": {"user_template": "u.md"}},
                       "sim": {"type": "x.Simulator", "config": {}}},
             "budgets": {"max_steps": 10, "model_calls": 100, "tokens": 1000}}
    out = tts_graph(graph, "verifier")
    assert out["nodes"]["planner"] == {"type": "llm.SampledChat",
                                       "config": {"user_template": "u.md", "samples": 4, "pick": "verifier"}}
    assert out["budgets"] == {"max_steps": 10, "model_calls": 500, "tokens": 5000}
    assert graph["nodes"]["planner"]["type"] == "llm.Chat"


def _bare_search(config: ShaperConfig, state: dict) -> Search:
    search = object.__new__(Search)
    search.config, search.state, search.lock = config, state, threading.Lock()
    search.run = type("NoRun", (), {"rows": staticmethod(lambda: [])})()
    return search


def _state(seed_skill="s\n", seed_harness="h\n"):
    cid = beams.candidate_id(seed_skill, seed_harness)
    texts = {beams.text_sha(t): t for t in (seed_skill, seed_harness)}
    candidate = {"id": cid, "skill": beams.text_sha(seed_skill), "harness": beams.text_sha(seed_harness),
                 "iteration": 0, "parent": None, "stage": "seed", "round": 0, "status": "evaluated", "reason": None,
                 "rewards": {}, "mean_reward": 0.0}
    return cid, {"candidates": {cid: candidate}, "texts": texts, "proposals": [], "seen": [cid], "beam": [cid]}


def test_freezing_dedupe_and_the_seen_list():
    cid, state = _state()
    search = _bare_search(ShaperConfig(rounds=2, skill_rounds=1), state)
    skill_new = search.record_proposal(1, cid, 1, "s2\n", [], rejected=False)
    same_again = search.record_proposal(1, cid, 2, "s2\n", [], rejected=False)
    back_to_seed = search.record_proposal(2, cid, 1, "h\n", [], rejected=False)
    # the skill stage rewrites only skill.md; the harness stage only build_context.py
    assert skill_new["harness_sha"] == beams.text_sha("h\n") and skill_new["skill_sha"] == beams.text_sha("s2\n")
    assert back_to_seed["skill_sha"] == beams.text_sha("s\n")
    assert [search.admit(p) for p in (skill_new, same_again, back_to_seed)] == [True, False, False]
    assert same_again["status"] == "duplicate" and back_to_seed["status"] == "duplicate"
    assert state["seen"] == [cid, skill_new["candidate"]]
    assert search.admit(skill_new)  # admitted before an interruption: still due, not a duplicate of itself


def test_frozen_changes_names_files_other_than_the_stage_artefact(tmp_path):
    parent, child = tmp_path / "p", tmp_path / "c"
    for folder in (parent, child):
        folder.mkdir()
        (folder / "skill.md").write_text("s\n")
        (folder / "build_context.py").write_text("h\n")
    (child / "build_context.py").write_text("h2\n")
    assert frozen_changes(parent, child, "harness") == []
    assert frozen_changes(parent, child, "skill") == ["build_context.py"]


def _log(tmp_path, firings):
    path = tmp_path / "ep.jsonl"
    path.write_text("".join(json.dumps(dict(kind="firing", **f)) + "\n" for f in firings))
    return path


def test_rollout_records_steps_and_metadata(tmp_path):
    hist = "llm.RoundHistory"
    firings = [
        {"node": "history", "type": hist, "tick": 0, "self": {"observation": "You see: a red ball 2 ahead.",
                                                              "outcome": {"actions": [], "blocked": [], "steps": 0}}},
        {"node": "planner", "type": "llm.Chat", "tick": 0, "self": {"reply": "go to the red ball"}},
        {"node": "stop", "type": "x.Stop", "tick": 0, "outputs": {"actions": "['forward', 'forward']"}},
        {"node": "history", "type": hist, "tick": 1, "self": {"observation": "You see: a red ball here.",
                                                              "outcome": {"actions": ["forward", "forward"]}}},
        {"node": "planner", "type": "llm.Chat", "tick": 1, "self": {"reply": "I think I am done"},
         "error": "node 'planner': reply does not match reply_pattern"},
        {"node": "context", "type": "llm.ContextHarness", "tick": 1, "error": "ContextHarnessError: boom"},
    ]
    record = {"episode_id": "BabyAI-GoToLocal-v0:1", "success": False, "reward": 0.0, "steps": 2,
              "termination": "node_error", "error": "node 'planner' raised", "metrics": {"mission": "go to the red ball"}}
    rollout = episode_rollout(record, _log(tmp_path, firings))
    first, second = rollout["steps"]
    assert first["observation_before"] == "You see: a red ball 2 ahead."
    assert first["observation_after"] == "You see: a red ball here."
    assert first["actions"] == ["forward", "forward"] and first["planner_output"] == "go to the red ball"
    assert second["parse_error"] and second["observation_after"] is None
    meta = rollout["meta"]
    assert meta["commands"] == {"(unparsed)": 1, "go to": 1} and meta["chunk_lengths"] == [2, 0]
    assert meta["parse_errors"] == 1 and any("ContextHarnessError" in e for e in meta["runtime_errors"])
    assert rollout["category"] == "BabyAI-GoToLocal-v0"
    assert validate_instance("shaper_rollout", {"candidate": "c" + "0" * 12, "split": "train", "tier": "t",
                                                "episodes": [rollout], "cost_usd": 0.0}) == []


def _frame_array(value: int) -> dict:
    pixels = np.full((256, 256, 3), value, np.uint8)
    return {"dtype": "|u1", "shape": [256, 256, 3], "base64": base64.b64encode(pixels.tobytes()).decode()}


def test_where_the_planner_sees_images_the_judge_gets_the_frames_before_and_after(tmp_path):
    def sim(tick, value):
        return {"node": "sim", "type": "libero.Simulator", "tick": tick,
                "outputs": {"images": {"agentview": {"$array": _frame_array(value)},
                                       "robot0_eye_in_hand": {"$array": _frame_array(value + 1)}}}}

    firings = [sim(0, 10), {"node": "planner", "type": "llm.Chat", "tick": 0, "inputs": {"image": "{...}"},
                            "self": {"reply": "pick up the bowl"}},
               {"node": "policy", "type": "libero.Pi0Policy", "tick": 0, "outputs": {"actions": [[0.1] * 7] * 5}},
               {"node": "history", "type": "llm.RoundHistory", "tick": 1,
                "self": {"observation": None, "outcome": {"steps": 5, "reward": 0.0, "tick": 1}}},
               sim(1, 50), {"node": "planner", "type": "llm.Chat", "tick": 1, "inputs": {"image": "{...}"},
                            "self": {"reply": "pick up the bowl"}}]
    record = {"episode_id": "libero_spatial:0:5", "success": False, "reward": 0.0, "steps": 10,
              "termination": "max_steps", "metrics": {"instruction": "pick the bowl"}}
    rollout = episode_rollout(record, _log(tmp_path, firings))
    first, last = rollout["steps"]
    assert rollout["mission"] == "pick the bowl" and rollout["meta"]["chunk_lengths"] == [5, 0]
    assert first["actions"][0] == "[" + ", ".join(["0.100"] * 7) + "]"
    assert len(first["images_before"]) == 2 and first["images_after"] and last["images_after"] == []
    png = base64.b64decode(first["images_after"][0])
    assert png.startswith(b"\x89PNG") and struct.unpack(">II", png[16:24]) == (128, 128)
    assert first["images_after"] == last["images_before"] != first["images_before"]
    [message] = prompts.judge_messages("pick the bowl", first, 1, 2)
    images = [part for part in message["content"] if part["type"] == "image"]
    assert len(images) == 4 and "Observation before: (none)" in message["content"][0]["text"]
    text_only = episode_rollout(record, _log(tmp_path, [dict(f, inputs={}) for f in firings]))["steps"][0]
    assert "images_before" not in text_only
    assert isinstance(prompts.judge_messages("m", text_only, 1, 2)[0]["content"], str)


def test_classification_separates_infrastructure_from_simulator_invalid_rollouts():
    ok = {"episodes": [{"episode_id": "a", "error": "node 'planner' (llm.Chat) raised at tick 3: ValueError"}]}
    sim = {"episodes": [{"episode_id": "a", "error": "node 'sim' (babyai.Simulator) raised at tick 0:\nRuntimeError: bad seed"}]}
    infra = {"episodes": [{"episode_id": "a", "infra_error": "worker died twice"}]}
    model = {"episodes": [{"episode_id": "a", "error": "ModelCallError: openai call failed after 5 attempt(s)"}]}
    assert classify_evaluation(ok) == ("ok", None)
    assert classify_evaluation(sim)[0] == "incomparable" and "bad seed" in classify_evaluation(sim)[1]
    assert classify_evaluation(infra)[0] == "infrastructure"
    assert classify_evaluation(model)[0] == "infrastructure"


def test_minibatch_sampling_is_seeded_by_round_and_candidate():
    ids = [f"e{i}" for i in range(15)]
    first = sample_minibatch(ids, 4, 0, "skill:1:c1")
    assert len(first) == 4 and first == sample_minibatch(list(reversed(ids)), 4, 0, "skill:1:c1")
    assert first != sample_minibatch(ids, 4, 0, "skill:2:c1") or first != sample_minibatch(ids, 4, 1, "skill:1:c1")


def _rollout(episode_id, success, actions_per_step):
    steps = [{"tick": i, "observation_before": f"view {i}", "planner_output": "go to the red ball",
              "parse_error": False, "actions": acts, "observation_after": f"view {i + 1}" if acts else f"view {i}",
              "reward": 0.0} for i, acts in enumerate(actions_per_step)]
    return {"episode_id": episode_id, "category": "L", "mission": "go to the red ball", "success": success,
            "reward": 0.9 if success else 0.0, "termination": "success" if success else "max_steps", "steps": steps,
            "meta": {"commands": {"go to": len(steps)}, "subgoals": {"go to the red ball": len(steps)},
                     "chunk_lengths": [len(a) for a in actions_per_step], "parse_errors": 0, "runtime_errors": [],
                     "env_steps": 5, "planner_steps": len(steps)}}


def _profile_file(tmp_path, url, **overrides):
    path = tmp_path / f"role-{len(list(tmp_path.glob('role-*')))}.yaml"
    path.write_text(yaml.safe_dump(dict(ROLE_PROFILE, base_url=url, **overrides)))
    return str(path)


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_gradient_over_real_clients_survives_429_and_500_and_books_its_cost(tmp_path, backend):
    rollouts = [_rollout("L:1", True, [["forward"], ["done"]]), _rollout("L:2", False, [[], [], []])]
    with LoopbackServer(answer, failures=[429, 500], reply_model=REPLY_MODEL) as server:
        url = server.openai_url if backend == "openai" else server.anthropic_url
        path = _profile_file(tmp_path, url, backend=backend, max_retries=2)
        meter = CostMeter()
        roles = Roles({r: path for r in ("judge", "summariser", "optimizer")}, meter)
        gradient = diagnose(rollouts, roles, 1, ShaperConfig())
        roles.close()
        temperatures = {body.get("temperature") for body in server.requests}
    # judge and summariser run at temperature 0 (the installed anthropic SDK sends no temperature)
    assert temperatures == ({0.0} if backend == "openai" else {None})
    by_episode = {e["episode_id"]: e for e in gradient["episodes"]}
    assert [j["verdict"] for j in by_episode["L:2"]["judgements"]] == ["no_progress"] * 3
    assert by_episode["L:1"]["judgements"][-1]["verdict"] == "progress"
    assert "[scripted summariser, not a model]" in by_episode["L:1"]["summary"]
    assert gradient["stats"]["verdicts"] == {"no_progress": 3, "progress": 2}
    assert gradient["stats"]["empty_chunks"] == 3 and gradient["stats"]["success_rate"] == 0.5
    assert "### Aggregate statistics" in gradient["text"]
    assert meter.of_round(1) > 0 and meter.total == meter.of_round(1)  # 5 judge + 2 summariser calls, priced


def test_a_model_endpoint_that_stays_down_or_slow_aborts_with_a_clear_message(tmp_path):
    rollouts = [_rollout("L:1", True, [["done"]])]
    with LoopbackServer(answer, failures=[500] * 10) as down:
        roles = Roles({r: _profile_file(tmp_path, down.openai_url) for r in ("judge", "summariser", "optimizer")},
                      CostMeter())
        with pytest.raises(InfrastructureFailure, match="resumable.*judge model call failed.*500"):
            diagnose(rollouts, roles, 1, ShaperConfig())
    with LoopbackServer(answer, delay_s=0.5) as slow:
        roles = Roles({r: _profile_file(tmp_path, slow.openai_url, timeout=0.1, max_retries=0)
                       for r in ("judge", "summariser", "optimizer")}, CostMeter())
        with pytest.raises(InfrastructureFailure, match="judge model call failed"):
            diagnose(rollouts, roles, 1, ShaperConfig())


def test_a_harness_proposal_importing_os_is_rejected_then_repaired_once(tmp_path):
    texts = {"skill": (SEED / "skill.md").read_text(), "harness": (SEED / "build_context.py").read_text()}
    with stand_in_server(scripted_planner) as server:
        roles = Roles({r: _profile_file(tmp_path, server.openai_url) for r in ("judge", "summariser", "optimizer")},
                      CostMeter())
        made = propose(roles, 3, stage="harness", texts=texts, gradient="g", history=[], branch=1,
                       config=ShaperConfig())
        optimizer_bodies = [b for b in server.requests if prompts.OPTIMIZER_MARKER in json.dumps(b)]
    assert made["status"] == "ok" and len(made["rejections"]) == 1
    assert any("imports are not allowed" in p for p in made["rejections"][0])
    assert "import" not in made["text"] and sandbox_problems(made["text"]) == []
    assert len(optimizer_bodies) == 2 and {b["temperature"] for b in optimizer_bodies} == {0.7}
    assert "REJECTED by the sandbox" in json.dumps(optimizer_bodies[1]["messages"][-1])


def test_a_harness_that_stays_invalid_after_its_repair_is_rejected(tmp_path):
    always_bad = lambda api, system, messages, body: "```python\nimport os\ndef build_context(history):\n    return ''\n```"
    texts = {"skill": "s\n", "harness": "def build_context(history):\n    return ''\n"}
    with LoopbackServer(always_bad) as server:
        roles = Roles({r: _profile_file(tmp_path, server.openai_url) for r in ("judge", "summariser", "optimizer")},
                      CostMeter())
        made = propose(roles, 1, stage="harness", texts=texts, gradient="g", history=[], branch=2,
                       config=ShaperConfig())
    assert made["status"] == "rejected" and len(made["rejections"]) == 2


def test_gradient_assembly_and_final_table_render():
    rollouts = [_rollout("L:1", True, [["done"]])]
    gradient = assemble(rollouts, {"L:1": [{"step": 1, "verdict": "progress", "note": "ok"}]}, {"L:1": "fine"})
    assert gradient["stats"]["verdicts"] == {"progress": 1} and "fine" in gradient["text"]
    rows = [{"configuration": name, "skill": s, "harness": h, "mean_reward": 0.5, "success_rate": 0.5,
             "vs_seed": {"verdict": "indistinguishable", "wins": 0, "losses": 0, "mean_difference": 0.0}}
            for name, s, h in (("seed", "seed", "seed"), ("MG-Select-like", "seed", "seed"),
                               ("VOTE-like", "seed", "seed"), ("skill only", "evolved", "seed"),
                               ("harness only", "seed", "evolved"), ("both", "evolved", "evolved"))]
    record = {"selected": "c" + "1" * 12, "seed": "c" + "0" * 12, "cost_usd": 0.0, "unavailable": {"C4": "no such suite"},
              "splits": [{"split": name, "tier": "t", "episodes": 2, "rows": rows} for name in ("C1", "C2")]}
    assert validate_instance("shaper_final", record) == []
    table = final_markdown(record)
    assert table.count("\n| ") == 2 * 7 and "| harness only | seed | evolved |" in table
    assert "## C2: t (2 episodes)" in table and "## C4: not available\n\nno such suite" in table
    assert "is the seed itself" not in table and "is the seed itself" in final_markdown(dict(record, seed=record["selected"]))
    assert validate_instance("shaper_final", dict(record, splits=[dict(record["splits"][0], rows=rows[:4])])) != []


def test_cost_meter_sums_rounds_and_the_final_evaluation():
    meter = CostMeter({"1": 0.5})
    meter.add(1, 0.25)
    meter.add(2, 1.0)
    meter.add("final", 0.125)
    meter.add(2, None)
    assert meter.of_round(1) == 0.75 and meter.of_round(2) == 1.0 and meter.total == 1.875


def test_an_infrastructure_failure_keeps_the_end_of_a_long_error_where_its_advice_is():
    from harness.variants.shaper.rollout import classify_evaluation

    error = ("harness.models.request.CassetteMiss: cassette x.jsonl has no response for request 90fb (model 'q'); "
             + "request ends with: " + "o" * 800 + ". Record it first (mode 'record') or check the profile")
    kind, why = classify_evaluation({"episodes": [{"episode_id": "e:1", "error": "ModelCallError: " + error}]})
    assert kind == "infrastructure" and why.endswith("Record it first (mode 'record') or check the profile")
    assert why.startswith("episode e:1: model call failed: ") and " … " in why and len(why) < 700
