"""Helpers of the SHAPER tests: a breakable stand-in server and a small configuration."""

from __future__ import annotations

import os
import signal
import threading

import yaml

from harness.variants.shaper import prompts
from executors.babyai.stand_ins import scripted_planner
from harness.variants.shaper.stand_ins import REPLY_MODEL, answerer
from harness.models.loopback import LoopbackServer

# A small schedule: one skill round and one harness round, beam 2, branching 2.
SMALL = {"rounds": 2, "skill_rounds": 1, "beam_width": 2, "branching": 2, "minibatch": 2,
         "train_episodes": 2, "val_episodes": 2, "smoke_episodes": 1, "test_episodes": 2}
ROLE_PROFILE = {"backend": "openai", "model": "Qwen/Qwen3-8B", "base_url": "http://127.0.0.1:9/v1",
                "temperature": 0, "max_tokens": 256, "price_input_per_mtok": 1.0, "price_output_per_mtok": 2.0,
                "concurrency": 8, "timeout": 10, "max_retries": 1, "backoff_base_s": 0.01, "backoff_max_s": 0.05}


class BreakableStandIns(LoopbackServer):
    """The scripted stand-ins; optimizer calls fail with HTTP 500 from call number `fail_from` on
    (an endpoint outage in the middle of a round) until `fail_from` is None again, and optimizer
    call number `kill_at` first kills process `kill_pid` (a loop killed in the middle of a round)."""

    def __init__(self):
        super().__init__(answerer(scripted_planner), reply_model=REPLY_MODEL)
        self.fail_from: int | None = None
        self.kill_at: int | None = None
        self.kill_pid: int | None = None
        self.optimizer_calls = 0
        self._count_lock = threading.Lock()

    def _reply(self, path, body):
        system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "") or ""
        if isinstance(system, str) and system.startswith(prompts.OPTIMIZER_MARKER):
            with self._count_lock:
                self.optimizer_calls += 1
                failing = self.fail_from is not None and self.optimizer_calls >= self.fail_from
                if self.kill_at is not None and self.optimizer_calls == self.kill_at and self.kill_pid:
                    os.kill(self.kill_pid, signal.SIGKILL)
                    failing = True
            if failing:
                return 500, {}, {"type": "error", "error": {"type": "api_error", "message": "scripted outage"}}
        return super()._reply(path, body)


def write_config(folder, **extra) -> tuple:
    """(config yaml path, role profile path) with the small schedule and priced role profiles."""
    profile = folder / "roles.yaml"
    profile.write_text(yaml.safe_dump(ROLE_PROFILE))
    config = dict(SMALL, profiles={"judge": str(profile), "summariser": str(profile), "optimizer": str(profile)},
                  **extra)
    path = folder / "shaper.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, profile
