"""SHAPER's model roles: judge, summariser and optimizer, each on its own pinned
inference profile (default: the planner's, as in the study: the frozen planner
model is reused under other prompts), with cost accounting per round.

A model call that fails for good (after the client's retries) is an
infrastructure failure: it aborts the run with `InfrastructureFailure`, and the
run resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from pathlib import Path

from harness.errors import UserError
from harness.models import ModelCallError, load_profile, make_client, resolve_profile_path
from harness.variants.shaper.config import ROLES, SCRIPTED, ShaperConfig


class InfrastructureFailure(UserError):
    """Model endpoints, workers or the simulator host failed: the run stops and can be resumed."""

    def __init__(self, message: str):
        super().__init__(f"infrastructure failure, run stopped (resumable): {message}", exit_code=3)


FINAL = "final"  # the cost key of the final test evaluation


class CostMeter:
    """Money spent per round (keys: round numbers and FINAL; thread-safe); the run total is the sum."""

    def __init__(self, by_round: dict | None = None):
        self._lock = threading.Lock()
        self.by_round = {str(k): float(v) for k, v in (by_round or {}).items()}

    def add(self, round_number: int | str, usd: float | None) -> None:
        if usd:
            with self._lock:
                key = str(round_number)
                self.by_round[key] = self.by_round.get(key, 0.0) + float(usd)

    def of_round(self, round_number: int | str) -> float:
        return round(self.by_round.get(str(round_number), 0.0), 6)

    @property
    def total(self) -> float:
        return round(sum(self.by_round.values()), 6)


def profile_paths(config: ShaperConfig, planner_profile: dict | None, candidate_dir: Path) -> dict:
    """role -> resolved profile path (a role without its own profile uses the planner's)."""
    out = {}
    for role in ROLES:
        path = config.profiles.get(role)
        if path is None or path == SCRIPTED:
            if not planner_profile:
                raise UserError(f"shaper: no profile for the {role} and the seed pins no model_profile to reuse")
            path = planner_profile["path"]
        out[role] = str(resolve_profile_path(path, candidate_dir))
    return out


def fingerprint(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise UserError(f"inference profile {path}: cannot read it: {exc.strerror}") from None


class Roles:
    """Model clients for the three roles; `ask` returns the reply text and books its cost."""

    def __init__(self, paths: dict, meter: CostMeter, *, base_url: str | None = None):
        self.meter = meter
        self.clients = {}
        for role in ROLES:
            profile = load_profile(paths[role])
            if base_url is not None:
                profile = dataclasses.replace(profile, backend="openai", base_url=base_url, api_key_env=None,
                                              name=f"scripted-{role}")
            self.clients[role] = make_client(profile, mode="live")

    def concurrency(self, role: str) -> int:
        return max(1, int(self.clients[role].profile.concurrency or 1))

    def ask(self, role: str, round_number: int, *, system: str, messages: list, temperature: float) -> str:
        try:
            response = self.clients[role].complete(messages, system=system, temperature=temperature)
        except ModelCallError as exc:
            raise InfrastructureFailure(f"{role} model call failed: {exc}") from None
        self.meter.add(round_number, response.cost_usd)
        return response.text

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
