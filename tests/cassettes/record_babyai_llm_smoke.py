"""Record tests/cassettes/babyai_llm_smoke.jsonl: the smoke tier of seeds/babyai-llm.

No real LLM is involved: the model calls go to a loopback server whose answers
come from executors.babyai.stand_ins (a deterministic scripted planner).
The recording profile copies profiles/vllm-qwen.yaml (the seed's pinned
profile) with only base_url changed, so the request hashes match the seed.
Also writes babyai_llm_smoke.expected.json (per-episode results of the
recording run) for the replay test to compare against.

With --init it records tests/cassettes/babyai_llm_init.jsonl instead: the
smoke and search tiers, every episode `architect init <variant> babyai-llm`
evaluates, answered by the same scripted planner (labelled so in each entry).

    python tests/cassettes/record_babyai_llm_smoke.py [--init]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

from harness import PROJECT_ROOT
from executors.babyai.stand_ins import planner_server

HERE = Path(__file__).resolve().parent
CASSETTE = HERE / "babyai_llm_smoke.jsonl"
EXPECTED = HERE / "babyai_llm_smoke.expected.json"
INIT_CASSETTE = HERE / "babyai_llm_init.jsonl"
SEED = PROJECT_ROOT / "seeds" / "babyai-llm"
RESULT_KEYS = ("episode_id", "success", "steps", "termination", "model_calls", "input_tokens", "output_tokens")


def record(cassette: Path = CASSETTE, expected: Path | None = EXPECTED, workers: int = 1,
           tiers: tuple[str, ...] = ("smoke",)) -> dict:
    from harness.evaluation import evaluate

    with tempfile.TemporaryDirectory() as tmp, planner_server() as server:
        tmp = Path(tmp)
        candidate = tmp / "candidate"
        shutil.copytree(SEED, candidate)
        graph = json.loads((candidate / "graph.json").read_text())
        profile = yaml.safe_load((PROJECT_ROOT / graph["model_profile"]["path"]).read_text())
        profile["base_url"] = server.openai_url
        (candidate / "recording.yaml").write_text(yaml.safe_dump(profile))
        graph["model_profile"]["path"] = "recording.yaml"  # profile paths stay inside the candidate
        (candidate / "graph.json").write_text(json.dumps(graph, indent=2))
        fresh = tmp / "cassette.jsonl"
        os.environ["ARCHITECT_MODEL_MODE"] = "record"
        os.environ["ARCHITECT_CASSETTE"] = str(fresh)
        try:
            results = [evaluate(candidate, tier, workers=workers, use_cache=False, progress=False) for tier in tiers]
        finally:
            del os.environ["ARCHITECT_MODEL_MODE"], os.environ["ARCHITECT_CASSETTE"]
        entries = [json.loads(line) for line in fresh.read_text().splitlines()]
    note = "scripted deterministic planner (executors.babyai.stand_ins) on a loopback server; no real LLM"
    entries.sort(key=lambda e: e["key"])
    with cassette.open("w", encoding="utf-8") as fh:
        for entry in entries:
            entry["note"] = note
            entry["response"]["latency_s"] = 0.0
            entry["response"]["request_id"] = None
            entry["recorded_at"] = "recorded by tests/cassettes/record_babyai_llm_smoke.py"
            fh.write(json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n")
    summary = {"note": note, "tier": tiers[0],
               "episodes": [{k: ep.get(k) for k in RESULT_KEYS} for ep in results[0]["episodes"]]}
    if expected is not None:
        expected.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    if "--init" in sys.argv[1:]:
        out = record(cassette=INIT_CASSETTE, expected=None, workers=2, tiers=("smoke", "search"))
    else:
        out = record()
    json.dump(out, sys.stdout, indent=2)
    print()
