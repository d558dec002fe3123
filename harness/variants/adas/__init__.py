"""ADAS (Meta Agent Search): an archive of every committed candidate with its
bootstrap fitness, a proposer that reads it, two reflexion rounds per proposal
and up to three debug attempts. Driven by the Claude Code skill named below,
with the helpers of `archive.py` behind `architect adas …` (`cli.py`)."""

from harness.variant_api import VariantSpec

VARIANT = VariantSpec(name="adas", skill=".claude/commands/architect/variants/adas.md", fitness="bootstrap",
                      max_iterations=20, commands={"adas": "harness.variants.adas.cli:adas_group"})
