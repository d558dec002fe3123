"""SHAPER's numbers and choices, with the study's values as defaults.

Every field can be set in a YAML/JSON file (`--config`); the effective
configuration is stored in the run's `memory/shaper/state.json` at creation and
never changes afterwards (a resumed run uses it as stored).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UserError

ROLES = ("judge", "summariser", "optimizer")
SCRIPTED = "scripted"
# "study": beam top-K by mean validation reward, output the best candidate seen, a fresh train
#   minibatch per parent per round, the run's whole event history to the optimizer (the study and
#   its public recipe);
# "paired": paired wins minus losses with a per-category regression guard at selection, train
#   rollouts cached per candidate, the `history` most recent proposals to the optimizer.
SELECTION_RULES = ("study", "paired")


@dataclass(frozen=True)
class ShaperConfig:
    beam_width: int = 3                 # candidates kept after each round
    branching: int = 2                  # proposals per beam candidate per round
    rounds: int = 4                     # rounds in all, over both stages
    skill_rounds: int = 2               # the first `skill_rounds` evolve the skill, the rest the harness
    minibatch: int = 4                  # train episodes diagnosed per gradient
    selection: str = "study"            # one of SELECTION_RULES
    judge_temperature: float = 0.0
    summariser_temperature: float = 0.0
    optimizer_temperature: float = 0.7
    history: int = 4                    # "paired": recent proposals (and their scores) shown to the optimizer
    max_judged_steps: int = 40          # per episode; later steps are counted, not judged
    repair_attempts: int = 1            # sandbox-rejected harness proposals get the error and this many retries
    alpha: float = 0.05                 # paired test level for better / worse / indistinguishable
    regression_margin: float = 0.10     # "paired": a category mean reward drop vs the seed beyond this refuses selection
    seed: int = 0                       # minibatch sampling
    train_episodes: int | None = None   # cap on the train split (None: all of it)
    val_episodes: int | None = None     # cap on the validation split
    test_episodes: int | None = None    # per sealed test split (None: the profile's splits.test_episodes, else all)
    smoke_episodes: int | None = None   # cap on the smoke tier of every iteration
    final_test: bool = True             # evaluate the selected pair and its ablations on the test split
    scripted_models: bool = False       # every model answered by the scripted stand-ins on a loopback server
    model_delay_s: float = 0.0          # scripted stand-ins: seconds before each answer
    profiles: dict = field(default_factory=dict)  # role -> inference profile path (default: the planner's)

    @property
    def harness_rounds(self) -> int:
        return self.rounds - self.skill_rounds

    def stage_of(self, round_number: int) -> str:
        return "skill" if round_number <= self.skill_rounds else "harness"

    def temperature(self, role: str) -> float:
        return {"judge": self.judge_temperature, "summariser": self.summariser_temperature,
                "optimizer": self.optimizer_temperature}[role]

    def proposals_in_schedule(self) -> int:
        """The most proposals the schedule makes (the run's iteration cap): each
        stage starts from one candidate, then the beam holds at most `beam_width`."""
        total = 0
        for rounds in (self.skill_rounds, self.harness_rounds):
            if rounds:
                total += self.branching * (1 + (rounds - 1) * self.beam_width)
        return total

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def config_problems(config: ShaperConfig) -> list[str]:
    out = []
    for name in ("beam_width", "branching", "rounds", "minibatch", "history", "max_judged_steps"):
        if getattr(config, name) < 1:
            out.append(f"{name} must be at least 1")
    if not 0 <= config.skill_rounds <= config.rounds:
        out.append(f"skill_rounds must be between 0 and rounds ({config.rounds})")
    if config.selection not in SELECTION_RULES:
        out.append(f"selection must be one of {', '.join(SELECTION_RULES)}, not {config.selection!r}")
    if config.repair_attempts < 0:
        out.append("repair_attempts must be >= 0")
    if not 0 < config.alpha < 1:
        out.append("alpha must be between 0 and 1")
    if config.regression_margin < 0:
        out.append("regression_margin must be >= 0")
    for name in ("train_episodes", "val_episodes", "test_episodes", "smoke_episodes"):
        value = getattr(config, name)
        if value is not None and value < 1:
            out.append(f"{name} must be at least 1 (or null)")
    unknown = set(config.profiles) - set(ROLES)
    if unknown:
        out.append(f"profiles: unknown role(s) {', '.join(sorted(unknown))} (roles: {', '.join(ROLES)})")
    return out


def build_config(data: dict | None = None, **overrides) -> ShaperConfig:
    """Defaults, then `data` (a parsed config file), then non-None `overrides`."""
    known = {f.name for f in dataclasses.fields(ShaperConfig)}
    values = dict(data or {})
    unknown = sorted(set(values) - known)
    if unknown:
        raise UserError(f"shaper config: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        config = ShaperConfig(**values)
    except TypeError as exc:
        raise UserError(f"shaper config: {exc}") from None
    problems = config_problems(config)
    if problems:
        raise UserError("shaper config: " + "; ".join(problems))
    return config


def read_config_file(path: str | Path) -> dict:
    from harness.fileio import read_yaml

    path = Path(path)
    data = read_yaml(path, "shaper config", UserError) or {}
    if not isinstance(data, dict):
        raise UserError(f"{path}: a shaper config is a mapping of keys to values")
    return data
