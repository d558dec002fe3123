"""A synthetic latency-bound episode runner for bench_ray.py: each episode
waits on `calls` simulated model calls of `latency` seconds (the shape of an
LLM agent whose simulator step is cheap next to the model)."""

from __future__ import annotations

import os
import time


class LatencyRunner:
    def __init__(self, calls: int = 5, latency: float = 0.1):
        self.calls, self.latency = calls, latency

    def run(self, episode: dict, log_path):
        started = time.time()
        for _ in range(self.calls):
            time.sleep(self.latency)  # the model answering
        return {"success": episode["seed"] % 2 == 0, "reward": 0.0, "steps": self.calls, "ticks": self.calls,
                "termination": "success", "error": None, "metrics": {"pid": os.getpid()},
                "model_calls": self.calls, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                "wall_seconds": time.time() - started}

    def close(self):
        pass
