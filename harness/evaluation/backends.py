"""Where episodes run: local worker processes or Ray actors, chosen in one place.

The choice comes from, first to last: the caller (`--backend`, a run's
manifest), `$ARCHITECT_BACKEND`, the executor profile's `evaluation.backend`,
else "local". Per-actor resources (`num_cpus`, `num_gpus`) come from the
executor profile's `evaluation.ray`; `--ray-address` (or `$ARCHITECT_RAY_ADDRESS`)
attaches to an existing cluster, otherwise a local Ray instance is started.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from harness.errors import UserError
from harness.evaluation.pool import PoolConfig, run_pool

BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class Plan:
    workers: int    # worker processes or actors
    threads: int    # runner threads (replicated simulators) in each
    in_flight: int  # episodes running at once in total


def make_plan(workers: int, in_flight: int | None, model_concurrency: int | None) -> Plan:
    """`in_flight` defaults to the number of workers, or the inference
    profile's concurrency for graphs that call a model (their episodes mostly
    wait on it); the workers share the episodes in flight as runner threads."""
    total = max(1, int(in_flight or max(workers, model_concurrency or 0)))
    n = min(max(1, workers), total)
    return Plan(n, math.ceil(total / n), total)


class LocalBackend:
    name = "local"

    def plan(self, workers: int | None, in_flight: int | None, model_concurrency: int | None) -> Plan:
        """Worker processes: as asked, else one per core."""
        return make_plan(int(workers or os.cpu_count() or 1), in_flight, model_concurrency)

    def client_concurrency(self, total: int | None, plan: Plan) -> int | None:
        return None  # one client per worker process keeps the profile's cap

    def run(self, tasks, factory_ref, factory_args, config: PoolConfig, on_outcome):
        return run_pool(tasks, factory_ref, factory_args, config, on_outcome)


class RayBackend:
    name = "ray"

    def __init__(self, address: str | None, num_cpus: float, num_gpus: float):
        from harness.evaluation.ray_pool import RayOptions, connect

        self.options = RayOptions(address=address, num_cpus=num_cpus, num_gpus=num_gpus)
        connect(address)

    def plan(self, workers: int | None, in_flight: int | None, model_concurrency: int | None) -> Plan:
        """Actors: as asked, else as many as the cluster can place (capped by `in_flight`)."""
        from harness.evaluation.ray_pool import actor_count

        return make_plan(actor_count(self.options, in_flight, workers), in_flight, model_concurrency)

    def client_concurrency(self, total: int | None, plan: Plan) -> int | None:
        """Each actor's model client gets its share of the profile's concurrency."""
        from harness.evaluation.ray_pool import split_concurrency

        return split_concurrency(total, plan.workers)

    def run(self, tasks, factory_ref, factory_args, config: PoolConfig, on_outcome):
        from harness.evaluation.ray_pool import run_ray_pool

        return run_ray_pool(tasks, factory_ref, factory_args, config, self.options, on_outcome)


def choose_backend(name: str | None, ray_address: str | None, executor_profile: dict | None):
    settings = (executor_profile or {}).get("evaluation") or {}
    name = name or os.environ.get("ARCHITECT_BACKEND") or settings.get("backend") or "local"
    if name not in BACKENDS:
        raise UserError(f"unknown evaluation backend {name!r} (choose one of: {', '.join(BACKENDS)})")
    if name == "local":
        if ray_address:
            raise UserError("--ray-address needs --backend ray")
        return LocalBackend()
    resources = settings.get("ray") or {}
    return RayBackend(ray_address or os.environ.get("ARCHITECT_RAY_ADDRESS") or None,
                      float(resources.get("num_cpus", 1)), float(resources.get("num_gpus", 0)))
