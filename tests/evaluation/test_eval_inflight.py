"""Episodes in flight: episodes waiting (here: a node sleeping 0.2 s per tick,
standing in for a model call) must not block each other."""

from __future__ import annotations

import json

from eval_candidates import make_candidate

from harness.evaluation import evaluate


def _spans(out, metrics):
    spans = []
    for rec in metrics["episodes"]:
        lines = [json.loads(x) for x in (out / rec["log"]).read_text().splitlines()]
        marks = [x["self"] for x in lines if x.get("kind") == "firing" and x.get("self")]
        spans.append((min(m["start"] for m in marks), max(m["end"] for m in marks)))
    return spans


def test_episodes_overlap_within_one_worker(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "cand", misbehave="sleep", sleep_s=0.2, endless=True, max_steps=5)
    out = tmp_path / "out"
    m = evaluate(cand, "smoke", episodes=4, workers=1, in_flight=4, out_dir=out, use_cache=False, progress=False)
    assert m["workers"] == 1 and m["in_flight"] == 4 and m["threads_per_worker"] == 4
    spans = _spans(out, m)
    # every episode was running while every other one was: all four overlap
    latest_start = max(s for s, _ in spans)
    earliest_end = min(e for _, e in spans)
    sequential = sum(e - s for s, e in spans)
    critical = max(e - s for s, e in spans)
    print(f"\n4 episodes, 0.2 s per tick, 1 worker x 4 threads: wall {m['wall_seconds']:.2f} s, "
          f"critical path {critical:.2f} s, sequential {sequential:.2f} s")
    assert latest_start < earliest_end
    assert all(r["steps"] == 5 and r["termination"] == "max_steps" for r in m["episodes"])


def test_in_flight_one_runs_episodes_one_at_a_time(eval_env, tmp_path):
    cand = make_candidate(tmp_path / "cand", misbehave="sleep", sleep_s=0.05, endless=True, max_steps=3)
    out = tmp_path / "out"
    m = evaluate(cand, "smoke", episodes=3, workers=2, in_flight=1, out_dir=out, use_cache=False, progress=False)
    assert m["workers"] == 1 and m["in_flight"] == 1
    spans = sorted(_spans(out, m))
    assert all(prev_end <= start for (_, prev_end), (start, _) in zip(spans, spans[1:]))


def test_model_graph_defaults_to_profile_concurrency_and_accounts_calls(eval_env, tmp_path):
    from eval_candidates import make_model_candidate

    from harness.models.loopback import LoopbackServer

    with LoopbackServer(lambda api, system, messages, body: "left", delay_s=0.2) as server:
        cand = make_model_candidate(tmp_path / "cand", server.openai_url, concurrency=4)
        out = tmp_path / "out"
        m = evaluate(cand, "smoke", episodes=4, workers=1, out_dir=out, use_cache=False, progress=False)
    assert m["in_flight"] == 4 and m["threads_per_worker"] == 4
    assert m["complete"] and all(r["error"] is None for r in m["episodes"]), m["episodes"][0]["error"]
    # one model call per tick, accounted per episode and in total
    assert all(r["model_calls"] == r["ticks"] > 0 for r in m["episodes"])
    assert m["model"]["calls"] == sum(r["model_calls"] for r in m["episodes"]) == len(server.requests)
    assert m["model"]["cost_usd"] > 0 and m["model"]["input_tokens"] > 0
    spans = _spans(out, m)
    assert max(s for s, _ in spans) < min(e for _, e in spans)  # all four episodes were in flight together
    assert server.max_concurrent >= 2
