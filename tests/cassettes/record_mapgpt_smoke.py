"""Record tests/cassettes/mapgpt_smoke.jsonl: the smoke tier of the mapgpt seed.

No real LLM is involved: the planner's calls go through the real openai client
(the seed's pinned profile, profiles/openai-gpt5-mini.yaml, with
OPENAI_BASE_URL pointing at a loopback server) to a deterministic scripted
planner (tests/executors/mapgpt_testkit.py). The smoke tier's scans are in the
test fixture, so recording needs no downloaded data. Also writes
mapgpt_smoke.expected.json (per-episode results) for the replay test.

    python tests/cassettes/record_mapgpt_smoke.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "executors"))

from executors.mapgpt.stand_ins import PLANNER_MODEL as SCRIPTED_MODEL, scripted_mapgpt_planner  # noqa: E402
from harness.models.loopback import LoopbackServer  # noqa: E402
from mapgpt_testkit import CASSETTE, CASSETTE_NOTE, EXPECTED, FIXTURE, SEEDS  # noqa: E402

RESULT_KEYS = ("episode_id", "success", "steps", "termination", "model_calls", "input_tokens", "output_tokens")
METRIC_KEYS = ("decisions", "stopped", "nav_error", "spl", "ndtw")


def record() -> dict:
    from harness.evaluation import evaluate

    server = LoopbackServer(scripted_mapgpt_planner, reply_model=SCRIPTED_MODEL).start()
    saved = {k: os.environ.get(k) for k in ("ARCHITECT_MODEL_MODE", "ARCHITECT_CASSETTE", "OPENAI_BASE_URL",
                                            "OPENAI_API_KEY", "ARCHITECT_DATA_DIR")}
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "cassette.jsonl"
        os.environ.update(ARCHITECT_MODEL_MODE="record", ARCHITECT_CASSETTE=str(fresh),
                          OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY="loopback",
                          ARCHITECT_DATA_DIR=str(FIXTURE))
        try:
            metrics = evaluate(SEEDS / "mapgpt", "smoke", workers=1, use_cache=False, progress=False)
        finally:
            server.stop()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        entries = [json.loads(line) for line in fresh.read_text().splitlines()]
    entries.sort(key=lambda e: e["key"])
    with CASSETTE.open("w", encoding="utf-8") as fh:
        for entry in entries:
            entry["note"] = CASSETTE_NOTE
            entry["response"]["latency_s"] = 0.0
            entry["response"]["request_id"] = None
            entry["recorded_at"] = "recorded by tests/cassettes/record_mapgpt_smoke.py"
            fh.write(json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n")
    summary = {"note": CASSETTE_NOTE, "tier": "smoke",
               "episodes": [dict({k: ep.get(k) for k in RESULT_KEYS},
                                 **{k: ep["metrics"].get(k) for k in METRIC_KEYS}) for ep in metrics["episodes"]]}
    EXPECTED.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    json.dump(record(), sys.stdout, indent=2)
    print()
