"""SHAPER: co-evolve a frozen planner's skill (`skill.md`) and context harness
(`build_context.py`) by beam search with textual gradients.

Headless: `architect loop shaper <seed>` (its driver: `runner.loop_headless`);
in Claude Code: `.claude/commands/architect/variants/shaper.md` with the
`architect shaper …` helpers (`cli.py`).
"""

from harness.variant_api import VariantSpec
from harness.variants.shaper.config import ShaperConfig

VARIANT = VariantSpec(name="shaper", skill=".claude/commands/architect/variants/shaper.md", fitness="mean",
                      max_iterations=ShaperConfig().proposals_in_schedule(),
                      headless_driver="harness.variants.shaper.runner:loop_headless",
                      commands={"shaper": "harness.variants.shaper.cli:shaper_group"})
