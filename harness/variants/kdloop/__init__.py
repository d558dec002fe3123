"""KDLoop: a knowledge-driven loop with memory files (knowledge, hypotheses,
experience, search space), up to three specs per iteration evaluated as
parallel slots, and REFLECT audits. Driven by the Claude Code skill named
below, with the helpers of `memory.py` behind `architect kdloop …` (`cli.py`)."""

from harness.variant_api import VariantSpec

VARIANT = VariantSpec(name="kdloop", skill=".claude/commands/architect/variants/kdloop.md", fitness="bootstrap",
                      max_iterations=10, commands={"kdloop": "harness.variants.kdloop.cli:kdloop_group"},
                      attempt_ended="harness.variants.kdloop.memory:settle_outcomes")
