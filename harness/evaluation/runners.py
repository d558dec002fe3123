"""What a worker thread runs: the candidate's graph, or the executor's oracle.

Each factory here is called once per runner thread inside a worker process and
returns an object with `run(episode, log_path) -> record` and `close()`.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path


class GraphEpisodeRunner:
    """One `GraphRunner` kept alive across episodes (so is its simulator)."""

    def __init__(self, graph: dict, candidate_dir: str | None, model_concurrency: int | None = None,
                 probes: dict | None = None):
        from harness.canvas.registry import for_graph
        from harness.canvas.runtime import GraphRunner

        cdir = Path(candidate_dir) if candidate_dir else None
        registry = for_graph(graph, cdir)  # imports the executor, loads the candidate's nodeset
        self.runner = GraphRunner(graph, candidate_dir=cdir, registry=registry,
                                  model_client=make_model_client(graph, cdir, model_concurrency), probes=probes)
        self.reconcile = bool((probes or {}).get("reconcile_calls"))

    def run(self, episode: dict, log_path: str | None) -> dict:
        log = None
        if log_path or self.reconcile:
            from harness.canvas.episode_log import EpisodeLog

            log = EpisodeLog()
        result = self.runner.run_episode(episode, log)
        if self.reconcile:
            from harness.evaluation.reconcile import log_gaps

            result["log_gap"] = log_gaps(log.records, self.runner.model_calls_by_node)
        if log_path:
            log.write_jsonl(log_path)  # atomic (temp file + replace)
        return result

    def close(self) -> None:
        self.runner.close()


class OracleEpisodeRunner:
    """The executor's ceiling agent (e.g. the BabyAI bot) on the same episodes. Its
    episodes are logged like a graph's: the header (episode and result), then one
    firing of node `oracle` per action when the result lists them (`actions`)."""

    def __init__(self, executor: str):
        from executors import load_executor

        self.ex = load_executor(executor)

    def run(self, episode: dict, log_path: str | None) -> dict:
        result = self.ex.oracle(episode)
        actions = result.pop("actions", None) or []
        if log_path:
            from harness.canvas.episode_log import EpisodeLog

            log = EpisodeLog()
            log.episode, log.result = episode, result
            for tick, action in enumerate(actions):
                log.firing("oracle", f"{self.ex.name}.oracle", tick, {}, {"action": action}, 0.0)
            log.write_jsonl(log_path)
        return result

    def close(self) -> None:
        pass


_clients: dict = {}
_clients_lock = threading.Lock()


def make_model_client(graph: dict, candidate_dir: Path | None, concurrency: int | None = None):
    """The pinned model client, or None for graphs that call no model. One client
    per worker process, shared by its runner threads (it is thread-safe and
    holds the profile's concurrency cap, or `concurrency` when given: a Ray
    actor's share of it). Live, record or replay mode comes from
    the profile and `ARCHITECT_MODEL_MODE` / `ARCHITECT_CASSETTE` (see harness.models)."""
    if not graph.get("model_profile"):
        return None
    from harness.models import client_for_graph

    key = (json.dumps(graph["model_profile"], sort_keys=True), str(candidate_dir), concurrency)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = client_for_graph(graph, candidate_dir, concurrency=concurrency)
        return _clients[key]
