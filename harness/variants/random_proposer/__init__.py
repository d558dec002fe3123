"""The `random` variant: legal structured patches sampled from the typed edit
alphabet (`proposer.py`). It needs no model, so `architect loop random` runs it
offline, and `architect random propose` (`cli.py`) stages one edit for a skill."""

from harness.variant_api import VariantSpec

VARIANT = VariantSpec(name="random", skill=".claude/commands/architect/variants/random.md", fitness="mean",
                      max_iterations=10, offline_proposer="harness.variants.random_proposer.proposer:propose_into",
                      commands={"random": "harness.variants.random_proposer.cli:random_group"})
