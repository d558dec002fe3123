"""Evaluation: roll a candidate out on a tier of fixed episodes, in parallel.

`evaluate(candidate, tier, ...)` -> the content of metrics.json;
`smoke_gate(metrics)` -> {"passed", "reasons"}. See docs/contracts.md.
"""

from harness.evaluation.gate import smoke_gate

__all__ = ["evaluate", "smoke_gate"]


def __getattr__(name: str):
    # Lazy, so that worker processes (which import harness.evaluation.worker)
    # do not pay for the supervisor's imports.
    if name == "evaluate":
        from harness.evaluation.evaluator import evaluate

        return evaluate
    raise AttributeError(f"module 'harness.evaluation' has no attribute {name!r}")
