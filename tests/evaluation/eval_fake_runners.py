"""Runner factories for testing the worker pool in isolation (imported by the
worker processes through sys.path, which multiprocessing passes on).

The behaviour of each episode is read from the episode dict itself, so a test
decides which episode crashes, hangs or sleeps."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


class ScriptedRunner:
    def __init__(self, tag: str = ""):
        self.tag = tag
        self.pid = os.getpid()
        self.episodes_run = 0

    def run(self, episode: dict, log_path):
        started = time.time()
        self.episodes_run += 1
        marker = episode.get("crash_once_marker")
        if marker and not Path(marker).exists():
            Path(marker).write_text("crashed once")
            os._exit(3)
        pid_marker = episode.get("await_kill_marker")
        if pid_marker and not Path(pid_marker).exists():
            Path(pid_marker).write_text(str(os.getpid()))  # a test kills this process from outside
            time.sleep(120)
        if episode.get("say"):
            print(episode["say"], file=sys.stderr, flush=True)
        if episode.get("crash"):
            os._exit(7)
        if episode.get("hang"):
            while True:
                time.sleep(1)
        if episode.get("raise"):
            raise RuntimeError("harness-side failure")
        time.sleep(episode.get("sleep", 0.0))
        seed = episode["seed"]
        return {"success": seed % 2 == 0, "reward": seed / 100, "steps": seed % 7 + 1, "ticks": 1,
                "termination": "success" if seed % 2 == 0 else "sim_done", "error": None,
                "metrics": {"pid": self.pid, "ppid": os.getppid(), "runner_episodes": self.episodes_run, "start": started,
                            "end": time.time(), "probe_env": os.environ.get("ARCHITECT_TEST_PROBE")},
                "model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                "wall_seconds": time.time() - started}

    def close(self):
        pass


class BrokenSetupRunner:
    def __init__(self):
        raise ValueError("setup exploded")


class HangingSetupRunner:
    def __init__(self):
        while True:
            time.sleep(1)
