"""AFlow: soft-mixed parent selection among the top candidates, per-parent
experience of accepted and rejected modifications, a duplicate check and a
convergence rule. Driven by the Claude Code skill named below, with the
helpers of `rules.py` behind `architect aflow …` (`cli.py`)."""

from harness.variant_api import VariantSpec

VARIANT = VariantSpec(name="aflow", skill=".claude/commands/architect/variants/aflow.md", fitness="mean",
                      max_iterations=20, commands={"aflow": "harness.variants.aflow.cli:aflow_group"})
